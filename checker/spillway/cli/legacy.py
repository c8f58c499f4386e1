"""``check-kernel-resources``: the command line of the original in-house
script, mapped onto spillway so switching is a one-line change in CMake.

    check-kernel-resources BINARY --baseline FILE                 -> spillway check BINARY --baseline FILE
    check-kernel-resources NEW --compare OLD                      -> spillway compare NEW --against OLD
    check-kernel-resources BINARY --report [FILTER]               -> spillway report BINARY [FILTER]
    check-kernel-resources BINARY --write-baseline FILE --note T  -> spillway baseline write BINARY -o FILE --note T

Exit statuses are spillway's: 0 fine, 1 over the baseline, 2 usage or input
error.  Baseline files are spillway's (the script's own files must be
written again once with --write-baseline).
"""

from __future__ import annotations

import argparse
import os
import sys

PROG = "check-kernel-resources"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        usage=f"{PROG} BINARY (--baseline FILE | --compare OLD | --report [FILTER] | "
              f"--write-baseline FILE --note TEXT)",
        description="Compatibility front end of spillway for the original check-kernel-resources script.")
    parser.add_argument("binary", metavar="BINARY", help="the binary (NEW with --compare)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--baseline", metavar="FILE", help="fail (exit 1) when a kernel exceeds the baseline")
    mode.add_argument("--compare", metavar="OLD", help="compare BINARY against the OLD binary")
    mode.add_argument("--report", nargs="?", const="", metavar="FILTER",
                      help="list kernels that use scratch, optionally only names matching FILTER")
    mode.add_argument("--write-baseline", metavar="FILE", help="write (or update) a baseline")
    parser.add_argument("--note", metavar="TEXT", help="with --write-baseline: what the baseline describes")
    return parser


def translate(argv: list[str]) -> list[str]:
    """The spillway command line for a check-kernel-resources one (exits 2 on misuse)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.note is not None and args.write_baseline is None:
        parser.error("--note goes with --write-baseline FILE")
    if args.baseline is not None:
        _require_spillway_baseline(parser, args.baseline, args.binary)
        return ["check", args.binary, "--baseline", args.baseline]
    if args.compare is not None:
        return ["compare", args.binary, "--against", args.compare]
    if args.report is not None:
        return ["report", args.binary] + ([args.report] if args.report else [])
    if args.note is None:
        parser.error("--write-baseline FILE needs --note TEXT")
    return ["baseline", "write", args.binary, "-o", args.write_baseline, "--note", args.note]


def _require_spillway_baseline(parser: argparse.ArgumentParser, path: str, binary: str) -> None:
    """The original script's baseline files are not JSON: say how to replace them."""
    from spillway.gate.reading import sniff_json

    if os.path.isfile(path) and not sniff_json(path):
        parser.exit(2, f"{PROG}: error: {path} is not a spillway baseline; write one once with: "
                       f"{PROG} {binary} --write-baseline {path} --note TEXT\n")


def main(argv: list[str] | None = None) -> int:
    from spillway.cli import main as spillway_main

    return spillway_main(translate(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
