"""``spillway check PATH... --baseline FILE``: exit 0 when every kernel is
within its allowance, 1 when any is over, 2 on usage or input errors."""

from __future__ import annotations

import sys

from rich.markup import escape
from rich.table import Table

from spillway.gate import junit
from spillway.gate.check import CheckResult, check, metrics_help, parse_metrics, read_sources
from spillway.cli.common import add_read_options, dump_json, read_inputs, read_options, stdout_console, write_output

# Vanished kernels listed by name; beyond this only counted (all of them are in --json).
VANISHED_SHOWN = 20


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "check", help="fail when a kernel uses more than its baseline allows",
        description="Hold every kernel to its allowance in a baseline file (spillway baseline write). "
                    "Kernels not in the baseline are held to zero scratch and zero spills; baseline "
                    "kernels no longer built are noted, not failed. Exit status: 0 within baseline, "
                    "1 over, 2 usage or input error.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="binaries, objects, archives, code objects, wheels, directories, or spillway "
                             "report JSON files")
    parser.add_argument("--baseline", required=True, metavar="FILE", help="the baseline file")
    parser.add_argument("--gate", type=str, metavar="METRICS",
                        help=f"override the baseline's gated metrics ({metrics_help()})")
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE",
                        help="write the versioned result (spillway.check/1) to FILE, or alone to stdout")
    parser.add_argument("--junit", metavar="FILE", help="write JUnit XML: one test case per kernel and metric")
    add_read_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from spillway.gate.baseline import load_baseline  # pydantic: imported only when used
    gate = parse_metrics(args.gate) if args.gate is not None else None
    baseline = load_baseline(args.baseline)
    options = read_options(args)
    inputs = read_sources(args.paths, options, read_inputs)
    result = check(inputs.usage, baseline, gate or baseline.gate, targets=options.targets,
                   baseline_path=args.baseline)
    if args.junit:
        junit.write(args.junit, result)
    if args.json:
        write_output(args.json, dump_json(result.to_json()))
    if args.json != "-":
        print_result(result)
    return 0 if result.passed else 1


def print_result(result: CheckResult) -> None:
    """A table on a terminal, one line per failure when piped; then notes and
    one summary line."""
    tty = sys.stdout.isatty()
    console = stdout_console()
    failures = result.failures
    if failures and tty:
        table = Table(title="over baseline", title_justify="left")
        table.add_column("kernel", overflow="fold", ratio=1)
        table.add_column("target")
        table.add_column("metric")
        table.add_column("allowed", justify="right")
        table.add_column("actual", justify="right")
        table.add_column("note")
        for f in failures:
            floor = "≥ " if f.metric == "occupancy" else ""
            allowed = "-" if f.allowed is None else f"{floor}{f.allowed}"
            actual = "?" if f.actual is None else str(f.actual)
            if f.dynamic_stack:
                actual += "+dyn"
            table.add_row(escape(f.name), escape(f.target), f.metric, allowed, actual,
                          "not in baseline" if f.new_kernel else "")
        console.print(table)
    else:
        for f in failures:
            console.print(escape(f"over baseline: {f.name} [{f.target}]: {f.message()}"), highlight=False)
    if result.vanished:
        count = len(result.vanished)
        console.print(f"note: {count} kernel{'s' if count != 1 else ''} in the baseline {'are' if count != 1 else 'is'}"
                      f" no longer built (not a failure):", highlight=False)
        for target, _key, name in result.vanished[:VANISHED_SHOWN]:
            console.print(escape(f"  {name} [{target}]"), highlight=False)
        if count > VANISHED_SHOWN:
            console.print(f"  ... and {count - VANISHED_SHOWN} more (see --json)", highlight=False)
    console.print(escape(result.summary()), highlight=False, soft_wrap=True)
