"""``spillway matrix``: build the repository's kernels and engine with every
toolchain cell of ``matrix/cells.toml``, gate each build against its own
baseline, and compare cells.

Exit status of build, check, baseline and run: 0 when every cell worked on
passed; 1 when a cell failed to build, is over its baseline or could not be
checked; 2 on usage errors (bad cells file, unknown cell); 3 when nothing
failed but a required cell was skipped because its toolchain is missing.  A
cell is required when it is named on the command line; with no cell named (or
--local), the Debian cells of this machine are required, and the others (built
through Nix, or in a system root that is not made here) are reported as
skipped with the reason without failing the run.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spillway.constants import MATRIX_DEFAULT_JOBS
from spillway.errors import UsageError
from spillway.cli.common import stdout_console
from spillway.cli.output import Outputs, add_output_options, add_table_options, chosen_format

if TYPE_CHECKING:  # bound at run time by _imports()
    from rich.console import Console
    from rich.markup import escape

    from spillway import matrix as mx
    from spillway.render import table as render_table
    from spillway.render.emit import emit
    from spillway.render.models import MatrixListModel, MatrixPairModel, MatrixRunModel, MatrixSummaryModel, View


def _imports() -> None:
    """Bind the heavy modules (pydantic through spillway.matrix, rich) only
    when a matrix command runs: building the parser must stay cheap, as
    every `spillway report` builds it."""
    global mx, Console, escape, render_table, emit
    global MatrixListModel, MatrixPairModel, MatrixRunModel, MatrixSummaryModel, View
    from rich.console import Console
    from rich.markup import escape

    from spillway import matrix as mx
    from spillway.render import table as render_table
    from spillway.render.emit import emit
    from spillway.render.models import MatrixListModel, MatrixPairModel, MatrixRunModel, MatrixSummaryModel, View


def _heavy(run):
    @functools.wraps(run)
    def wrapper(args) -> int:
        _imports()
        return run(args)
    return wrapper


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "matrix", help="build, gate and compare the toolchain matrix (matrix/cells.toml)",
        description=__doc__.split("\n\n", 1)[0].replace("``", ""),
        epilog="Exit status (build, check, baseline, run): 0 pass; 1 a cell failed to build or is over its "
               "baseline; 2 usage error; 3 a required cell was skipped (its toolchain is missing). Named cells "
               "are required; with no names (or --local) only this machine's Debian cells are.")
    commands = parser.add_subparsers(dest="matrix_command", metavar="ACTION")
    commands.required = True

    common = _common_options

    listing = commands.add_parser(
        "list", help="cells, and whether each toolchain is available here",
        epilog="--format github-matrix: GitHub Actions' strategy.matrix, one line of JSON "
               "{\"include\": [{...}, ...]} with one entry per cell (docs/ci.md, \"The job matrix\", "
               "lists its fields).")
    common(listing, jobs=False)
    add_output_options(listing, ("table", "json", "github-matrix"))
    listing.set_defaults(run=_heavy(run_list))

    build = commands.add_parser("build", help="build cells into BUILD/<cell>/ (parallel, incremental)")
    common(build)
    _lines_option(build)
    build.set_defaults(run=_heavy(run_build))

    check = commands.add_parser("check", help="build if needed, then gate each cell against its baseline")
    common(check)
    _check_options(check)
    check.set_defaults(run=_heavy(run_check))

    compare = commands.add_parser(
        "compare", help="compare two cells, or summarize cells side by side",
        description="With two cells A B: spillway's comparison of B against A, kernels matched by stable key "
                    "and target (gfx11 targets are one row). With no cell, one, or more than two (or "
                    "--summary): every built cell side by side, per kernel.")
    common(compare, jobs=False)
    compare.add_argument("--summary", action="store_true", help="side-by-side view even for two cells")
    add_output_options(compare, ("table", "json", "markdown", "html"))
    add_table_options(compare, limit=False)
    compare.add_argument("--all", action="store_true", help="A B: also list unchanged kernels; side by side: the "
                                                            "table shows every kernel and figure, not only where "
                                                            "the cells differ")
    compare.add_argument("--differing", action="store_true", help="summary, Markdown: only rows where cells differ "
                                                                  "(the table shows only them unless --all)")
    compare.add_argument("--fail-on-worse", action="store_true", help="A B: exit 1 when B is worse somewhere")
    _occupancy_option(compare, "occupancy model every cell is read with (default llvm23)")
    compare.set_defaults(run=_heavy(run_compare))

    baseline = commands.add_parser("baseline", help="build, then write each cell's baseline "
                                                    "(spillway baseline write)")
    common(baseline)
    baseline.add_argument("--fresh", action="store_true",
                          help="start the baseline over instead of updating it (updates only tighten)")
    baseline.set_defaults(run=_heavy(run_baseline))

    run = commands.add_parser("run", help="the main job: build, check every cell, print the comparison")
    common(run)
    _check_options(run)
    add_output_options(run, ("table", "json", "markdown", "github", "sarif", "html"), github_auto=True,
                       output_help="write the comparison of the cells (sarif: the cells' failures) to FILE "
                                   "(atomically) in the chosen format; the verdicts are still printed")
    add_table_options(run, limit=False)
    run.add_argument("--differing", action="store_true",
                     help="Markdown, GitHub: only rows where cells differ (the table shows only them unless --all)")
    run.add_argument("--all", action="store_true", help="the table: every kernel and figure, not only where the "
                                                          "cells differ")
    run.set_defaults(run=_heavy(run_run))

    # The fan-in of a CI job matrix: `run` on builds made elsewhere (spillway.matrix.ci).
    collect = commands.add_parser(
        "collect", help="the main job's outputs from cells built by other jobs (their downloaded artifacts)",
        description="Gate, compare and report cells built elsewhere, as `matrix run` does: ARTIFACTS holds "
                    "<artifact>/<cell>/ or <cell>/ folders (each a cell's build folder: build.json, the library); "
                    "each is copied into BUILD/<cell>/ and checked against its baseline here.")
    collect.add_argument("artifacts", metavar="ARTIFACTS", help="the folder the artifacts were downloaded into")
    common(collect, jobs=False)
    _check_options(collect, no_build=False)
    add_output_options(collect, ("table", "json", "markdown", "github", "sarif", "html"), github_auto=True,
                       output_help="write the comparison of the cells (sarif: the cells' failures) to FILE "
                                   "(atomically) in the chosen format; the verdicts are still printed")
    add_table_options(collect, limit=False)
    collect.add_argument("--differing", action="store_true",
                     help="Markdown, GitHub: only rows where cells differ (the table shows only them unless --all)")
    collect.add_argument("--all", action="store_true", help="the table: every kernel and figure, not only where the "
                                                          "cells differ")
    collect.set_defaults(run=_heavy(run_run), no_build=False, lines=False)

    # A kernel over AMD's releases (matrix/releases.toml): history, bisect, cache.
    from spillway.cli import matrix_history
    matrix_history.register(commands, common)


def _common_options(sub, cells: bool = True, jobs: bool = True) -> None:
    """The options every matrix action shares: the cells file, the root, the build folder
    (and the cells named, -j)."""
    sub.add_argument("--cells", metavar="FILE", help="the cells file (default: matrix/cells.toml in this "
                                                     "folder or a parent)")
    sub.add_argument("--root", metavar="DIR", help="where sources, recipe and baselines are (default: the "
                                                   "folder holding matrix/)")
    sub.add_argument("--build-dir", metavar="DIR", help="where builds go (default: ROOT/build)")
    if cells:
        sub.add_argument("cells_named", nargs="*", metavar="CELL", help="cells (default: all)")
        sub.add_argument("--local", action="store_true",
                         help="all local (Debian) cells; this machine's are required, a system root's "
                              "only when it is made here")
    if jobs:
        sub.add_argument("-j", "--jobs", type=int, default=MATRIX_DEFAULT_JOBS, metavar="N",
                         help=f"compiler processes at once (default {MATRIX_DEFAULT_JOBS})")


def _lines_option(sub) -> None:
    sub.add_argument("--lines", action="store_true",
                     help="also build each cell's debug twin (its kernels again with -gline-tables-only, into "
                          "BUILD/<cell>/lines/), where source lines come from; cells whose own flags give line "
                          "tables have none (cells.toml lines = \"twin\" asks for it on every build)")


def _check_options(sub, no_build: bool = True) -> None:
    if no_build:
        sub.add_argument("--no-build", action="store_true", help="check what is built; do not build first")
        _lines_option(sub)
    sub.add_argument("--gate", metavar="METRICS", help="override the baselines' gated metrics")
    _occupancy_option(sub, "occupancy model to gate with, and of the side-by-side view (default: each "
                           "baseline's own, llvm22 for a version-1 baseline; the view: llvm23)")
    sub.add_argument("--junit-dir", metavar="DIR", help="write DIR/<cell>.xml (JUnit) per checked cell")
    sub.add_argument("--strict-flags", action="store_true",
                     help="a cell whose flags differ from those its baseline recorded fails (default: a warning)")


def _occupancy_option(sub, help_text: str) -> None:
    from spillway.resources.occupancy import MODEL_CHOICES
    sub.add_argument("--occupancy-model", choices=MODEL_CHOICES, default=None, help=help_text)


def _view_model(args) -> str:
    """The one occupancy model of the side-by-side view and of a two-cell comparison."""
    from spillway.resources.occupancy import DEFAULT_MODEL
    return getattr(args, "occupancy_model", None) or DEFAULT_MODEL


# -- shared pieces ---------------------------------------------------------------------

def _err() -> Console:
    from spillway.render.grid import lines_console

    return lines_console(stderr=True)


def _load(args) -> tuple[mx.Matrix, Path]:
    matrix = mx.load(args.cells, args.root)
    build_dir = Path(args.build_dir).resolve() if args.build_dir else matrix.root / "build"
    if getattr(args, "jobs", 1) < 1:
        raise UsageError("--jobs must be at least 1")
    return matrix, build_dir


class Progress:
    """Build progress on stderr: bars on a terminal, one line per step otherwise."""

    def __init__(self, matrix: mx.Matrix, wants_twin=lambda cell: False):
        self.total = len(matrix.engine.sources) + 1
        self.twin_steps = sum(source.endswith(".hip") for source in matrix.engine.sources) + 1
        self.wants_twin = wants_twin
        self.console = _err()
        self.live = self.console.is_terminal
        if self.live:       # bars: cursor controls of spillway's own, beneath the guarded stream
            from spillway.cli.common import progress_console
            self.console = progress_console()
        self.tasks: dict[str, Any] = {}              # rich TaskIDs
        self.totals: dict[str, int] = {}             # steps per cell
        self.bar: Any = None
        if self.live:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bars, TextColumn, TimeElapsedColumn
            self.bar = Bars(TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("{task.fields[status]}"), console=self.console)

    def __enter__(self):
        if self.bar:
            self.bar.start()
        return self

    def __exit__(self, *exc):
        if self.bar:
            self.bar.stop()

    def __call__(self, cell: mx.Cell, event: str, step) -> None:
        if self.bar:
            self._bars(cell, event, step)
        elif event in ("done", "failed") and step is not None:
            verb = {"compile": "compiled", "link": "linked"}[step.kind]
            if event == "failed":
                verb = f"FAILED to {step.kind}"
            self.console.print(escape(f"[{cell.name}] {verb} {step.label} ({step.seconds:.1f} s)"),
                               highlight=False)

    def _bars(self, cell, event, step) -> None:
        assert self.bar is not None
        if event == "planned":
            self.totals[cell.name] = self.total + (self.twin_steps if self.wants_twin(cell) else 0)
            self.tasks[cell.name] = self.bar.add_task(cell.name, total=self.totals[cell.name], status="")
            return
        task = self.tasks.get(cell.name)
        if task is None:
            return
        if event == "start":
            self.bar.update(task, status=f"{'compiling' if step.kind == 'compile' else 'linking'} {step.label}")
        elif event in ("fresh", "done", "failed"):
            self.bar.advance(task)
            if event == "failed":
                self.bar.update(task, status=f"[red]failed: {escape(step.label)}[/]")
        elif event == "finished":
            self.bar.update(task, completed=self.totals[cell.name])


def _build(matrix: mx.Matrix, build_dir: Path, cells: list[mx.Cell], jobs: int, lines: bool = False
           ) -> list[mx.CellBuild]:
    builder = mx.Builder(matrix, build_dir, jobs, lines=lines)
    with Progress(matrix, builder.wants_twin) as progress:
        builder.progress = progress
        return builder.build(cells)


def _selected(args, matrix: mx.Matrix) -> tuple[list[mx.Cell], set[str]]:
    cells, explicit = matrix.select(args.cells_named, args.local)
    return cells, mx.required_cells(cells, explicit, named=bool(args.cells_named))


def _print_builds(console: Console, builds: list[mx.CellBuild], matrix: mx.Matrix) -> None:
    for b in builds:
        name = b.cell.name
        if b.status == "skipped":
            console.print(escape(f"SKIPPED  {name}: {b.reason}"), highlight=False)
        elif b.status == "failed":
            log = f" (log: {_rel(b.log, matrix)})" if b.log else ""
            console.print(escape(f"FAILED   {name}: {b.reason}{log}"), highlight=False)
        else:
            what = f"{b.compiled} of {b.objects} objects compiled" if b.status == "built" else "up to date"
            twin = f"; debug twin {_rel(b.twin, matrix)}" if b.twin else ""
            console.print(escape(f"{b.status.upper():<8} {name}: {_rel(b.library, matrix)} ({what}, "
                                 f"{b.seconds:.1f} s{twin})"), highlight=False)


def _rel(path: Path | None, matrix: mx.Matrix) -> str:
    if path is None:
        return "-"
    try:
        return str(path.relative_to(matrix.root))
    except ValueError:
        return str(path)


# -- list ----------------------------------------------------------------------------------

def run_list(args) -> int:
    matrix, _ = _load(args)
    fmt = chosen_format(args)
    selected, _ = matrix.select(args.cells_named, args.local)
    rows = []
    for cell in selected:
        availability = mx.probe(cell)
        rows.append((cell, availability, matrix.resolve(cell.baseline).is_file()))
    Outputs([str(matrix.path)], force=args.force).claim(args.output, "-o")
    emit(MatrixListModel(str(matrix.path), _rel(matrix.path, matrix), tuple(rows)), fmt, args.output)
    return 0


# -- build ---------------------------------------------------------------------------------

def run_build(args) -> int:
    matrix, build_dir = _load(args)
    cells, required = _selected(args, matrix)
    start = time.monotonic()
    builds = _build(matrix, build_dir, cells, args.jobs, args.lines)
    console = stdout_console()
    _print_builds(console, builds, matrix)
    counts = {s: sum(1 for b in builds if b.status == s) for s in ("built", "up to date", "failed", "skipped")}
    console.print(f"matrix build: {counts['built']} built, {counts['up to date']} up to date, "
                  f"{counts['failed']} failed, {counts['skipped']} skipped in {time.monotonic() - start:.1f} s",
                  highlight=False)
    return mx.build_exit_status(builds, required)


# -- check ---------------------------------------------------------------------------------

def _checks(args, matrix: mx.Matrix, build_dir: Path) -> tuple[list[mx.CellCheck], list[mx.CellBuild]]:
    cells, required = _selected(args, matrix)
    if getattr(args, "artifacts", None) is not None:
        from spillway.matrix.ci import collect_builds
        builds = collect_builds(matrix, Path(args.artifacts), build_dir, cells)
    elif args.no_build:
        builds = []
        for cell in cells:
            availability = mx.probe(cell)
            library = mx.library_path(matrix, build_dir, cell)
            if library.is_file():
                builds.append(mx.CellBuild(cell, "up to date", library=library, version=availability.version))
            elif not availability.available:
                builds.append(mx.CellBuild(cell, "skipped", availability.reason))
            else:
                builds.append(mx.CellBuild(cell, "failed", f"not built (no {_rel(library, matrix)}; "
                                                            f"run spillway matrix build {cell.name})"))
    else:
        builds = _build(matrix, build_dir, cells, args.jobs, args.lines)
    checks = []
    junit_dir = Path(args.junit_dir) if args.junit_dir else None
    if junit_dir:
        junit_dir.mkdir(parents=True, exist_ok=True)
    for build in builds:
        checked = build.status not in ("skipped", "failed")
        junit = junit_dir / f"{build.cell.name}.xml" if junit_dir and checked else None
        result = mx.check_cell(matrix, build_dir, build, args.gate, getattr(args, "occupancy_model", None),
                               strict_flags=args.strict_flags)
        if junit and result.result is not None:
            from spillway.errors import SpillwayError
            from spillway.render.emit import write as write_document
            from spillway.render.junit import document_chunks
            try:
                write_document(str(junit), document_chunks(result.result, build.cell.name))
            except SpillwayError as exc:
                result = mx.CellCheck(build.cell, "error", str(exc))
        result = dataclasses.replace(result, required=build.cell.name in required)
        if junit_dir and result.verdict in ("skipped", "error"):
            # Every cell has its file, so a collector sees skipped and broken cells too.
            from spillway.render.emit import write as write_document
            from spillway.render.junit import unchecked_document
            write_document(str(junit_dir / f"{build.cell.name}.xml"),
                           unchecked_document(build.cell.name, result.verdict, result.reason))
        checks.append(result)
    return checks, builds


def run_check(args) -> int:
    matrix, build_dir = _load(args)
    checks, _ = _checks(args, matrix, build_dir)
    render_table.print_checks(stdout_console(), checks)
    return mx.exit_status(checks)


# -- compare -------------------------------------------------------------------------------

def _claim(args, matrix: mx.Matrix, build_dir: Path) -> None:
    """-o must not name the cells file, a cell's baseline or a built library
    (inputs of the run)."""
    inputs = [str(matrix.path)]
    if getattr(args, "artifacts", None) is not None:
        inputs.append(args.artifacts)
    for cell in matrix.cells.values():
        inputs += [str(matrix.resolve(cell.baseline)), str(mx.library_path(matrix, build_dir, cell))]
    Outputs(inputs, force=args.force).claim(args.output, "-o")


def run_compare(args) -> int:
    matrix, build_dir = _load(args)
    fmt = chosen_format(args)
    _claim(args, matrix, build_dir)
    named = [matrix.cell(n) for n in args.cells_named]
    if len(named) == 2 and not args.summary:
        return _compare_two(args, fmt, matrix, build_dir, named[0], named[1])
    cells = named or (list(matrix.cells.values()) if not args.local
                      else [c for c in matrix.cells.values() if c.local])
    summary = mx.summarize(matrix, build_dir, cells, _view_model(args))
    missing = [c.name for c in cells if c not in summary.cells]
    if named and missing:
        raise UsageError(f"not built: {', '.join(missing)} (run spillway matrix build {' '.join(missing)})")
    if not summary.cells:
        raise UsageError("no cell is built (run spillway matrix build)")
    _emit_summary(fmt, args.output, summary, args.differing, args.names, everything=args.all)
    return 0


def _emit_summary(fmt: str, output: str | None, summary: mx.Summary, differing: bool, names: str = "short",
                  verdicts: list[dict] | None = None, everything: bool = False) -> None:
    """The cells side by side in ``fmt``; the table shows only what differs
    unless ``everything`` (Markdown: every row unless ``differing``)."""
    emit(MatrixSummaryModel(summary, tuple(verdicts) if verdicts is not None else None), fmt, output,
         View(names, 0, everything, differing))


def _compare_two(args, fmt: str, matrix: mx.Matrix, build_dir: Path, old: mx.Cell, new: mx.Cell) -> int:
    comparison = mx.compare_cells(matrix, build_dir, old, new, _view_model(args))
    emit(MatrixPairModel(comparison, old, new), fmt, args.output, View(args.names, 0, args.all))
    return 1 if args.fail_on_worse and comparison.has_worse else 0


# -- baseline ------------------------------------------------------------------------------

def run_baseline(args) -> int:
    matrix, build_dir = _load(args)
    cells, required = _selected(args, matrix)
    builds = _build(matrix, build_dir, cells, args.jobs)
    console = stdout_console()
    failed = required_skipped = False
    wrote = 0
    for build in builds:
        if build.status == "skipped":
            console.print(escape(f"SKIPPED  {build.cell.name}: {build.reason}"), highlight=False)
            required_skipped = required_skipped or build.cell.name in required
            continue
        if build.status == "failed":
            console.print(escape(f"FAILED   {build.cell.name}: {build.reason}"), highlight=False)
            failed = True
            continue
        code, text = mx.write_baseline(matrix, build_dir, build, fresh=args.fresh)
        wrote += 1
        for line in text.splitlines():
            console.print(escape(f"{build.cell.name}: {line}"), highlight=False)
        failed = failed or code != 0
    return mx.run_exit_status(failed=failed, required_skipped=required_skipped, any_done=bool(wrote))


# -- run: the main job -------------------------------------------------------------------------

def run_run(args) -> int:
    """``matrix run`` and ``matrix collect``: options -> the cells' checks and the
    cells side by side -> emit (render.emit: every format's outputs of a run)."""
    matrix, build_dir = _load(args)
    fmt = chosen_format(args)
    _claim(args, matrix, build_dir)
    start = time.monotonic()
    checks, builds = _checks(args, matrix, build_dir)
    built = [b.cell for b in builds if b.status in ("built", "up to date")]
    summary = mx.summarize(matrix, build_dir, built, _view_model(args)) if built else None
    # Each checked cell's baseline as read once (SARIF locates each kernel at its line).
    baselines = {c.cell.name: matrix.resolve(c.cell.baseline).read_bytes() for c in checks
                 if c.verdict in ("pass", "fail")}
    emit(MatrixRunModel(tuple(checks), summary, baselines, args.matrix_command, start), fmt, args.output,
         View(args.names, 0, args.all, args.differing))
    return mx.exit_status(checks)
