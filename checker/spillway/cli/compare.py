"""``spillway compare NEW... --against OLD...``: what changed, kernel by kernel."""

from __future__ import annotations

from spillway.cli.common import add_read_options, progress_shown, read_options
from spillway.cli.output import Outputs, add_output_options, add_table_options, chosen_format

FORMATS = ("table", "json", "markdown", "github", "tsv", "sarif", "html")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare two builds kernel by kernel",
        description="Classify every kernel present in both builds (same target and stable key) as worse "
                    "(more scratch, more spilled registers, or lower occupancy), better, mixed or unchanged, "
                    "list kernels only in one build (added, removed), and end with a summary sentence. Each "
                    "side may be binaries, spillway report JSON files (report --json) or a baseline file (its "
                    "recorded values).")
    parser.add_argument("new", nargs="+", metavar="NEW", help="the new build")
    parser.add_argument("--against", nargs="+", required=True, metavar="OLD", help="the old build")
    parser.add_argument("--all", action="store_true",
                        help="also list unchanged kernels (JSON always lists every compared kernel)")
    parser.add_argument("--isa", action="store_true",
                        help="also compare the kernels' machine code (binaries decoded; report JSON written with "
                             "report --isa): identical code, same figures but changed code, and the scratch bytes, "
                             "scratch in loops and AGPR copies before and after")
    parser.add_argument("--pressure", action="store_true",
                        help="implies --isa; also compare the kernels' live registers (binaries decoded; report "
                             "JSON written with report --pressure): where each kernel's VGPR peak moved and by how "
                             "much, and the largest group of registers held at the new peak")
    parser.add_argument("--fail-on-worse", action="store_true",
                        help="exit 1 when a kernel got worse (or mixed), or a kernel only in NEW uses scratch")
    add_output_options(parser, FORMATS, github_auto=True,
                       output_help="write the document to FILE (atomically) instead of stdout; the verdict "
                                   "is still printed")
    add_table_options(parser)
    add_read_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from spillway.gate.compare import compare
    from spillway.gate.reading import read_sources
    from spillway.render.emit import emit
    from spillway.render.models import CompareModel, View

    fmt = chosen_format(args)
    options = read_options(args)
    outputs = Outputs(args.new + args.against, force=args.force)
    outputs.claim(args.output, "-o")
    with progress_shown(args.new, options) as shown:
        new = read_sources(args.new, shown, allow_baseline=True, side="NEW")
    with progress_shown(args.against, options) as shown:
        old = read_sources(args.against, shown, allow_baseline=True, side="OLD")
    comparison = compare(new.usage, old.usage, args.new, args.against, occupancy_model=options.occupancy_model,
                         code=args.isa or args.pressure, unrecorded=old.unrecorded_held)
    model = CompareModel(comparison, tuple(args.new), tuple(args.against), tuple(old.baselines + new.baselines),
                         "error" if args.fail_on_worse else "warning")
    emit(model, fmt, args.output, View(args.names, args.limit, args.all))
    return 1 if args.fail_on_worse and comparison.has_worse else 0
