"""The ``spillway`` command.  Each subcommand lives in its own module with
``register(subparsers)`` and ``run(args) -> int``; this module only wires them
and turns SpillwayError into one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys

from spillway import __version__, untrusted
from spillway.errors import SpillwayError, UsageError

# Subcommand modules, in the order `spillway --help` lists them.
SUBCOMMANDS = ("report", "code", "check", "baseline", "compare", "matrix", "schema", "cmake_dir")


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
    try:
        return _main(argv)
    except KeyboardInterrupt:   # while the subcommands are still being imported
        print("spillway: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:    # the promise: one line, never a traceback
        if os.environ.get("SPILLWAY_TRACEBACK"):
            raise
        _internal_error(exc)
        return 2
    finally:
        untrusted.uninstall()


def _error(message: str) -> None:
    """The one line of an error: the message names inputs, so it is shown as a log line."""
    print(f"spillway: error: {untrusted.visible(message)}", file=sys.stderr)


def _internal_error(exc: Exception) -> None:
    _error(f"internal error {type(exc).__name__}: {untrusted.cut(str(exc), 300)} "
           f"(set SPILLWAY_TRACEBACK=1 for details and report it)")


def _main(argv: list[str] | None) -> int:
    from spillway.cli.output import old_style_json

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    try:
        old_style_json(argv)
    except SpillwayError as exc:
        _error(str(exc))
        return exc.exit_status
    _standard_streams()
    args = parser.parse_args(argv)
    # From here standard output and error hold whatever reaches them to the rules of a log line
    # (spillway.untrusted: names come from the binaries read), bracketed under GitHub Actions
    # (--help, --version and usage errors, printed above, say nothing of a binary).
    untrusted.install()
    try:
        status = args.run(args)
        sys.stdout.flush()
        return status
    except SpillwayError as exc:
        _error(str(exc))
        return exc.exit_status
    except KeyboardInterrupt:
        print("spillway: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _discard_stdout()
        return 0
    except OSError as exc:
        # Input files are read behind InputError; what is left is an output
        # that failed (standard output on a full disk, a closed terminal).
        _discard_stdout()
        if exc.filename:
            _error(f"{exc.filename}: {exc.strerror or exc}")
        else:
            _error(f"cannot write standard output: {exc.strerror or exc}")
        return 2
    except Exception as exc:  # the promise: one line, never a traceback
        if os.environ.get("SPILLWAY_TRACEBACK"):
            raise
        _discard_stdout()
        _internal_error(exc)
        return 2


class _ClosedStdout(io.TextIOBase):
    """Standard output when the caller closed it (``>&-``): writing to it is
    a one-line error, not an AttributeError on None."""

    def write(self, text: str) -> int:
        if text:
            raise UsageError("standard output is closed; write to a file with -o FILE")
        return 0

    def isatty(self) -> bool:
        return False

    @property
    def buffer(self):
        return self


def _standard_streams() -> None:
    """Closed descriptors 0-2 would be reused by the next open() (the baseline
    being written would become standard output): hold them with /dev/null.
    Text that cannot be encoded (paths that are not UTF-8) is shown escaped."""
    closed_stdout = sys.stdout is None
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            held = os.open(os.devnull, os.O_RDWR)
            if held != fd:
                os.dup2(held, fd)
                os.close(held)
    if closed_stdout:
        sys.stdout = _ClosedStdout()
    elif hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")
    # rich answers a broken pipe with SystemExit(1); spillway's answer is the
    # one for every writer: quiet, exit 0 (main catches BrokenPipeError).
    from rich.console import Console

    def on_broken_pipe(console) -> None:
        console.quiet = True
        raise BrokenPipeError
    Console.on_broken_pipe = on_broken_pipe  # type: ignore[method-assign,assignment]


def _discard_stdout() -> None:
    """After a failed write, send what is still buffered to /dev/null so the
    interpreter's final flush does not print a second error."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass
