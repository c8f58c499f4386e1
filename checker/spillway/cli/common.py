"""Pieces shared by subcommands: reading inputs with a progress bar, output
files, size arguments."""

from __future__ import annotations

import argparse
import os
import sys

import orjson
from rich.console import Console

from spillway import atomic
from spillway.formats.bundles import DEFAULT_MAX_DECOMPRESSED
from spillway.errors import UsageError
from spillway.report.reader import ReadOptions, read_report

# Show a progress bar only for reads this large, and only on a terminal.
PROGRESS_THRESHOLD_BYTES = 64 << 20


def parse_size(text: str) -> int:
    units = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    value = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = value[-1:] if value[-1:] in units else ""
    try:
        number = float(value[:-1] if unit else value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (use e.g. 512M, 4G)") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return int(number * units[unit])


def add_read_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", action="append", default=[], metavar="TARGETS",
                        help="only these targets (processor like gfx90a or full target ID; "
                             "comma-separated or repeated)")
    parser.add_argument("--max-decompressed", type=parse_size, default=DEFAULT_MAX_DECOMPRESSED,
                        metavar="SIZE", help="refuse compressed bundles or wheel members that inflate "
                                             "past SIZE (default 4G)")


def read_options(args) -> ReadOptions:
    targets = [t.strip() for value in args.target for t in value.split(",") if t.strip()]
    return ReadOptions(max_decompressed=args.max_decompressed, targets=targets)


def stderr_console() -> Console:
    return Console(stderr=True)


def stdout_console() -> Console:
    """Rich output on a terminal; piped, plain lines that never wrap or colour."""
    if sys.stdout.isatty():
        return Console(soft_wrap=False)
    return Console(width=200, color_system=None, soft_wrap=True)


def read_inputs(paths: list[str], options: ReadOptions) -> dict:
    """Read paths into a report document, with a progress bar on long reads."""
    total = 0
    for path in paths:
        try:
            if os.path.isfile(path):
                total += os.path.getsize(path)
        except OSError:
            pass
    if not (sys.stderr.isatty() and total >= PROGRESS_THRESHOLD_BYTES):
        document = read_report(paths, options)
    else:
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
        with Progress(TextColumn("reading code objects"), BarColumn(), DownloadColumn(),
                      TimeRemainingColumn(), console=stderr_console(), transient=True) as progress:
            task = progress.add_task("read", total=None)

            def advance(done: int, total_bytes: int) -> None:
                progress.update(task, total=total_bytes, advance=done)

            document = read_report(paths, options, progress=advance)
    if not document["kernels"]:
        from spillway.errors import InputError
        described = ", ".join(paths)
        raise InputError(f"no kernels found in {described}"
                         + (" for the selected targets" if options.targets else ""))
    return document


def dump_json(document) -> bytes:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


def write_output(path: str, data: bytes) -> None:
    """Write to a file atomically, or to stdout for '-'."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        atomic.write_bytes(path, data)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
