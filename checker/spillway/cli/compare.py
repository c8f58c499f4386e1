"""``spillway compare NEW... --against OLD...``: what changed, kernel by kernel."""

from __future__ import annotations

import io
import sys

from rich.console import Console
from rich.markup import escape

from spillway.gate.compare import compare, markdown, table
from spillway.gate.check import read_sources
from spillway.cli.common import add_read_options, dump_json, read_inputs, read_options, write_output


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare two builds kernel by kernel",
        description="Classify every kernel present in both builds (same target and stable key) as worse "
                    "(more scratch, more spilled registers, or lower occupancy), better, mixed or unchanged, "
                    "list kernels only in one build, and end with a summary sentence. Each side may be "
                    "binaries, spillway report JSON files (report --json) or a baseline file (its "
                    "recorded values).")
    parser.add_argument("new", nargs="+", metavar="NEW", help="the new build")
    parser.add_argument("--against", nargs="+", required=True, metavar="OLD", help="the old build")
    parser.add_argument("--format", choices=("table", "markdown", "json"), default="table",
                        help="table for a terminal (default), markdown for a pull request, or versioned JSON")
    parser.add_argument("-o", "--output", default="-", metavar="FILE", help="write to FILE instead of stdout")
    parser.add_argument("--all", action="store_true",
                        help="also list unchanged kernels (JSON always lists every compared kernel)")
    parser.add_argument("--limit", type=int, default=0, metavar="N", help="list at most N kernels in tables")
    parser.add_argument("--fail-on-worse", action="store_true",
                        help="exit 1 when a kernel got worse (or mixed), or a kernel only in NEW uses scratch")
    add_read_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    options = read_options(args)
    new = read_sources(args.new, options, read_inputs, allow_baseline=True, side="NEW")
    old = read_sources(args.against, options, read_inputs, allow_baseline=True, side="OLD")
    comparison = compare(new.usage, old.usage, args.new, args.against)
    status = 1 if args.fail_on_worse and comparison.has_worse else 0
    if args.format == "json":
        write_output(args.output, dump_json(comparison.to_json()))
    elif args.format == "markdown":
        write_output(args.output, markdown(comparison, args.all, args.limit).encode())
    elif args.output != "-":
        buffer = io.StringIO()
        _print_table(Console(width=200, color_system=None, file=buffer), comparison, args)
        write_output(args.output, buffer.getvalue().encode())
    else:
        tty = sys.stdout.isatty()
        console = Console(soft_wrap=False) if tty else Console(width=200, color_system=None)
        _print_table(console, comparison, args)
    return status


def _print_table(console: Console, comparison, args) -> None:
    grid, shown, hidden = table(comparison, args.all, args.limit)
    if shown:
        console.print(grid)
    if hidden:
        console.print(f"... and {hidden} more (--limit).")
    for title, group in (("only in the new build", comparison.only_new),
                         ("only in the old build", comparison.only_old)):
        if group:
            console.print(f"{len(group)} kernel{'s' if len(group) != 1 else ''} {title}:", highlight=False)
            for usage in group:
                r = usage.resources
                console.print(escape(f"  {usage.name} [{usage.target}]: {r.vgprs} VGPRs, {r.spills} spilled, "
                                     f"{r.scratch}{'+dyn' if r.dynamic_stack else ''} B/lane scratch"),
                              highlight=False)
    console.print(escape(comparison.sentence()), highlight=False, soft_wrap=True)

