"""The ``spillway`` command.  Each subcommand lives in its own module with
``register(subparsers)`` and ``run(args) -> int``; this module only wires them
and turns SpillwayError into one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import importlib
import sys

from spillway import __version__
from spillway.errors import SpillwayError

# Subcommand modules, in the order `spillway --help` lists them.
SUBCOMMANDS = ("report", "check", "baseline", "compare", "matrix", "schema")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spillway",
        description="Per-kernel VGPRs, spills, scratch, LDS and occupancy from AMD HIP binaries, "
                    "read statically (no GPU, no LLVM tools), gated against per-compiler baselines.")
    parser.add_argument("--version", action="version", version=f"spillway {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except SpillwayError as exc:
        print(f"spillway: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("spillway: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
