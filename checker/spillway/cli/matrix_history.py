"""``spillway matrix history``, ``bisect`` and ``cache``: a kernel over AMD's
releases (matrix/releases.toml), the release that made it worse, and the
store of their wheels and libraries.  docs/history.md.

Exit status: 0 done; 1 a release failed to build (history) or the bisect found
nothing worse; 2 usage error (unknown release, kernel not in the engine, a front
end too new, a target the front end does not know)."""

from __future__ import annotations

import sys
from pathlib import Path

from spillway.constants import MATRIX_DEFAULT_JOBS
from spillway.errors import UsageError

EXIT_OK, EXIT_FAILED = 0, 1


def register(commands, common) -> None:
    from spillway.cli.output import add_output_options

    def series_options(sub) -> None:
        common(sub, cells=False, jobs=False)
        sub.add_argument("--releases-file", metavar="FILE",
                         help="the release series (default: releases.toml beside the cells file)")

    def build_options(sub) -> None:
        sub.add_argument("--frontend", metavar="MAJOR",
                         help="the upstream clang major that writes the bitcode (default: the newest here not "
                              "newer than the oldest back end in the range)")
        sub.add_argument("--occupancy-model", default=None, metavar="MODEL",
                         help="one occupancy model for the whole series (default: llvm23)")
        sub.add_argument("-j", "--jobs", type=int, default=MATRIX_DEFAULT_JOBS, metavar="N",
                         help=f"back-end processes at once (default {MATRIX_DEFAULT_JOBS})")

    history = commands.add_parser(
        "history", help="kernels' registers, spills and code across AMD's ROCm releases",
        description="Build the translation units holding KERNEL (default: the whole engine) with each release's "
                    "AMD LLVM behind one upstream front end, into BUILD/history/<release>/, and print each "
                    "kernel's VGPRs, AGPRs, spilled registers, scratch, waves and code identity per release.")
    history.add_argument("kernels", nargs="*", metavar="KERNEL", help="kernel names or symbols (default: all)")
    history.add_argument("--releases", metavar="A..B", help="a range of releases, both included (A.., ..B, or one)")
    history.add_argument("--target", action="append", default=[], metavar="T",
                         help="offload target (repeatable; default: releases.toml's targets the front end knows)")
    series_options(history)
    build_options(history)
    add_output_options(history, ("table", "json", "html"))
    history.set_defaults(run=run_history)

    bisect = commands.add_parser(
        "bisect", help="the first ROCm release where a kernel's figure got worse",
        description="Binary search between a good and a bad release, building only the kernel's translation unit "
                    "and one target per release; ends with compare --isa of the two neighbouring releases.")
    bisect.add_argument("kernel", metavar="KERNEL")
    bisect.add_argument("--good", required=True, metavar="RELEASE")
    bisect.add_argument("--bad", required=True, metavar="RELEASE")
    bisect.add_argument("--metric", default="spills", choices=("spills", "scratch", "vgpr", "agpr", "waves"),
                        help="the figure (default spills; waves: lower is worse, the others higher)")
    bisect.add_argument("--target", default="gfx90a", metavar="T", help="offload target (default gfx90a)")
    bisect.add_argument("--no-compare", action="store_true", help="do not end with compare --isa")
    series_options(bisect)
    build_options(bisect)
    add_output_options(bisect, ("table", "json"))
    bisect.set_defaults(run=run_bisect)

    cache = commands.add_parser(
        "cache", help="the wheels and libraries of AMD's releases (outside the checkout, shared by clones)",
        description="List what the back-end store holds (wheels, unpacked libraries, the forwarder) with sizes, "
                    "or remove the named releases' wheels and libraries.")
    cache.add_argument("--remove", metavar="RELEASES",
                       help="remove these releases' wheels and libraries (A..B, one release, or 'all')")
    series_options(cache)
    add_output_options(cache, ("table", "json"))
    cache.set_defaults(run=run_cache)


def _series(args):
    from spillway import matrix as mx
    from spillway.matrix import releases
    matrix = mx.load(args.cells, args.root)
    build_dir = Path(args.build_dir).resolve() if args.build_dir else matrix.root / "build"
    if getattr(args, "jobs", 1) < 1:
        raise UsageError("--jobs must be at least 1")
    return matrix, releases.load(matrix, args.releases_file), build_dir


def _model(args) -> str:
    from spillway.resources.occupancy import DEFAULT_MODEL, MODEL_CHOICES
    model = args.occupancy_model or DEFAULT_MODEL
    if model not in MODEL_CHOICES or model == "producer":
        raise UsageError(f"--occupancy-model {model}: one of {', '.join(m for m in MODEL_CHOICES if m != 'producer')}")
    return model


def _emit(args, model) -> None:
    from spillway.cli.output import chosen_format
    from spillway.render.emit import emit

    emit(model, chosen_format(args), args.output)


def _log(line: str) -> None:
    print(f"spillway matrix: {line}", file=sys.stderr, flush=True)


def _compare_model(new: str, old: str, args):
    """``compare --isa NEW --against OLD`` as a model (what spillway compare builds)."""
    from spillway.gate.compare import compare
    from spillway.gate.reading import read_sources
    from spillway.render.models import CompareModel
    from spillway.report.reader import ReadOptions

    options = ReadOptions(isa=True, occupancy_model=_model(args))
    new_inputs = read_sources([new], options, side="NEW")
    old_inputs = read_sources([old], options, side="OLD")
    comparison = compare(new_inputs.usage, old_inputs.usage, [new], [old], occupancy_model=options.occupancy_model,
                         code=True)
    return CompareModel(comparison, (new,), (old,), (), "warning")


def run_history(args) -> int:
    from spillway.matrix.history import HistoryBuilder, choose_frontend, choose_targets, history
    from spillway.render.models import HistoryModel
    matrix, series, build_dir = _series(args)
    span = series.parse_range(args.releases)
    _, frontend = choose_frontend(series, span, args.frontend)
    targets, dropped = choose_targets(series, frontend, args.target)
    for release in span:
        if release.unusable:
            _log(f"ROCm {release.rocm}: not built: {release.unusable}")
    builder = HistoryBuilder(matrix, series, build_dir, frontend, args.jobs, _log)
    document = history(builder, span, args.kernels, targets, dropped, _model(args))
    _emit(args, HistoryModel(document))
    return EXIT_FAILED if any(c.status == "failed" for c in document.releases) else EXIT_OK


def run_bisect(args) -> int:
    from spillway.matrix.bisect import bisect
    from spillway.matrix.history import HistoryBuilder, choose_frontend, choose_targets
    from spillway.render.models import BisectModel
    matrix, series, build_dir = _series(args)
    good, bad = series.release(args.good), series.release(args.bad)
    if good.key() >= bad.key():
        raise UsageError(f"--good {good.rocm} must be an earlier release than --bad {bad.rocm}")
    span = series.span(good.rocm, bad.rocm)
    _, frontend = choose_frontend(series, span, args.frontend)
    targets, _ = choose_targets(series, frontend, [args.target])
    builder = HistoryBuilder(matrix, series, build_dir, frontend, args.jobs, _log)
    document, pair = bisect(builder, span, args.kernel, targets[0], args.metric, _model(args))
    compare, heading = None, ""
    if pair and not args.no_compare:
        # The verdict ends with compare --isa of the two neighbouring releases (in the model, drawn
        # after the builds; the JSON document names the pair).
        from spillway.matrix.bisect import with_line_tables
        pair, how = with_line_tables(builder, document, pair, span)
        heading = f"compare --isa: ROCm {document.last_good} -> ROCm {document.first_bad} ({how})"
        compare = _compare_model(str(pair[1]), str(pair[0]), args)
    _emit(args, BisectModel(document, compare, heading))
    return EXIT_OK if document.first_bad else EXIT_FAILED


def run_cache(args) -> int:

    from spillway.matrix.releases import CacheDocument, CacheEntryRecord, cache_entries, remove_cached
    from spillway.render.models import CacheModel
    _, series, _ = _series(args)
    if args.remove:
        chosen = series.ordered() if args.remove == "all" else series.parse_range(args.remove)
        entries = remove_cached(series, chosen)
        verb = "removed"
    else:
        entries = cache_entries(series)
        verb = "holds"

    document = CacheDocument(store=str(series.store.location()), action=verb,
                             entries=[CacheEntryRecord(kind=e.kind, path=str(e.path), bytes=e.bytes,
                                                       release=e.release) for e in entries])
    _emit(args, CacheModel(document, series.store.where_set()))
    return EXIT_OK
