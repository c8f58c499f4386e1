"""``spillway baseline write PATH... -o FILE --note TEXT``: write or update a
baseline.  Updating tightens allowances that went down; an allowance goes up
only for kernels named with ``--allow KEY_PATTERN --reason TEXT``.  When some
would have gone up without --allow the file is still written (with the old
allowances for those kernels and every tightening) and the exit status is 1."""

from __future__ import annotations

import os
import sys

from spillway.errors import UsageError
from spillway.gate.check import DEFAULT_GATE, METRICS, metrics_help, parse_metrics, read_sources
from spillway.cli.common import add_read_options, read_inputs, read_options

SHOWN = 20


def register(subparsers) -> None:
    parser = subparsers.add_parser("baseline", help="write or update a baseline file",
                                   description="Baseline files hold per-kernel allowances for one toolchain.")
    commands = parser.add_subparsers(dest="baseline_command", metavar="ACTION")
    commands.required = True
    write = commands.add_parser(
        "write", help="write a baseline from a build, or update an existing one",
        description="Write a baseline from a build. If FILE exists it is updated: allowances that went down "
                    "are tightened; one that would go up keeps its old value unless --allow names the kernel "
                    "(the file is then still written, and the exit status is 1). Kernels new to the "
                    "baseline start from zero scratch and zero spills.")
    write.add_argument("paths", nargs="+", metavar="PATH",
                       help="binaries, objects, archives, code objects, wheels, directories, or spillway "
                            "report JSON files")
    write.add_argument("-o", "--output", required=True, metavar="FILE", help="the baseline file")
    write.add_argument("--note", metavar="TEXT",
                       help="what the baseline describes (required for a new file; kept when updating)")
    write.add_argument("--gate", metavar="METRICS",
                       help=f"{metrics_help()} (default: kept when updating, else "
                            f"{','.join(DEFAULT_GATE)})")
    write.add_argument("--allow", action="append", default=[], metavar="KEY_PATTERN",
                       help="let these kernels' allowances go up (exact name or glob, matched against the "
                            "stable key and the demangled name; repeatable)")
    write.add_argument("--reason", action="append", default=[], metavar="TEXT",
                       help="why, stored with each kernel --allow matched (one for all --allow, or one each)")
    add_read_options(write)
    write.set_defaults(run=run_write)


def _allows(args) -> list[tuple[str, str]]:
    if not args.allow:
        if args.reason:
            raise UsageError("--reason goes with --allow KEY_PATTERN")
        return []
    if not args.reason:
        raise UsageError("--allow needs --reason TEXT (it is kept in the baseline)")
    if any(not r.strip() for r in args.reason):
        raise UsageError("--reason must not be empty")
    if len(args.reason) == 1:
        return [(pattern, args.reason[0]) for pattern in args.allow]
    if len(args.reason) != len(args.allow):
        raise UsageError(f"{len(args.allow)} --allow but {len(args.reason)} --reason: give one --reason for "
                         f"all, or one per --allow")
    return list(zip(args.allow, args.reason))


def run_write(args) -> int:
    from spillway.gate.baseline import build, load_baseline, write_baseline  # pydantic: imported only when used

    allows = _allows(args)
    gate = parse_metrics(args.gate) if args.gate is not None else None
    previous = load_baseline(args.output) if os.path.exists(args.output) else None
    if gate is None:
        gate = tuple(previous.gate) if previous else DEFAULT_GATE
    options = read_options(args)
    inputs = read_sources(args.paths, options, read_inputs)
    result = build(inputs, note=args.note, gate=gate, previous=previous, allows=allows,
                   targets=options.targets)
    write_baseline(args.output, result.baseline)

    out = sys.stderr
    for change in result.refused:
        metric = METRICS.get(change.metric)
        what = "floor" if metric and metric.floor else "allowance"
        print(f"spillway: kept {change.metric} {what} of {change.name} [{change.target}] at {change.old} "
              f"(now {change.new}); accept with --allow {_quote(change.key)} --reason TEXT", file=out)
    for change in result.raised[:SHOWN]:
        print(f"spillway: loosened {change.metric} of {change.name} [{change.target}]: {change.old} -> "
              f"{change.new}", file=out)
    if len(result.raised) > SHOWN:
        print(f"spillway: ... {len(result.raised) - SHOWN} more loosened", file=out)
    for target, _key, name in result.removed[:SHOWN]:
        print(f"spillway: removed {name} [{target}] (no longer built)", file=out)
    if len(result.removed) > SHOWN:
        print(f"spillway: ... {len(result.removed) - SHOWN} more removed", file=out)

    count = len(result.baseline.kernels)
    summary = f"{'updated' if result.updated else 'wrote'} {args.output}: {count} kernel{'s' if count != 1 else ''}, " \
              f"gate {','.join(result.baseline.gate)}"
    if result.updated:
        details = [f"{len(result.tightened)} allowances tightened", f"{len(result.raised)} loosened with --allow",
                   f"{len(result.added)} kernels added", f"{len(result.removed)} removed"]
        if result.refused:
            details.append(f"{len(result.refused)} kept because they would go up without --allow")
        if result.kept_other_targets:
            details.append(f"{result.kept_other_targets} kept for targets not read")
        summary += " (" + ", ".join(details) + ")"
    print(summary)
    return 1 if result.refused else 0


def _quote(text: str) -> str:
    return text if all(c.isalnum() or c in "_.-" for c in text) else "'" + text.replace("'", "'\\''") + "'"
