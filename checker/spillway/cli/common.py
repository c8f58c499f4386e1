"""Pieces shared by subcommands: reading inputs with a progress bar, output
files, size arguments."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import sys
from typing import TYPE_CHECKING, Callable


from spillway.formats.bundles import DEFAULT_MAX_DECOMPRESSED
from spillway.formats.containers import (DEFAULT_MAX_DECOMPRESSED_TOTAL, DEFAULT_MAX_INFLATION, DEFAULT_MAX_KERNELS,
                                         MIN_INPUT_ALLOWANCE)
from spillway.report.reader import ReadOptions, read_report, report_json
from spillway.report.reader import write_report_json as write_report_json_to
from spillway.resources.occupancy import DEFAULT_MODEL, MODEL_CHOICES
from spillway.render.json import dump_json  # noqa: F401  (the one way a document is written; cli modules import it here)

if TYPE_CHECKING:
    from rich.console import Console

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
    if not math.isfinite(number) or number * units[unit] >= 1 << 62:
        raise argparse.ArgumentTypeError(f"size out of range: {text!r} (use e.g. 512M, 4G, at most 4E)")
    if number <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return int(number * units[unit])


def parse_ratio(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a ratio: {text!r} (use e.g. 64)") from None
    if not math.isfinite(number) or not 1 <= number <= 1e9:
        raise argparse.ArgumentTypeError(f"ratio out of range: {text!r} (from 1 to 1e9)")
    return number


def parse_count(text: str) -> int:
    try:
        number = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a count: {text!r} (use e.g. 1000000)") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"count must be positive: {text!r}")
    return number


def add_read_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", action="append", default=[], metavar="TARGETS",
                        help="only these targets (processor like gfx90a or full target ID; "
                             "comma-separated or repeated)")
    parser.add_argument("--max-decompressed", type=parse_size, default=DEFAULT_MAX_DECOMPRESSED,
                        metavar="SIZE", help="refuse compressed bundles or wheel members that inflate "
                                             "past SIZE (default 4G)")
    parser.add_argument("--max-decompressed-total", type=parse_size, default=DEFAULT_MAX_DECOMPRESSED_TOTAL,
                        metavar="SIZE", help="refuse a run whose compressed inputs declare more than SIZE "
                                             "decompressed in total (default 64G)")
    parser.add_argument("--max-inflation", type=parse_ratio, default=DEFAULT_MAX_INFLATION, metavar="RATIO",
                        help=f"refuse an input file whose compressed contents declare more than RATIO times "
                             f"its size decompressed in total (default {DEFAULT_MAX_INFLATION}; at least "
                             f"{MIN_INPUT_ALLOWANCE >> 20} MiB is always allowed)")
    parser.add_argument("--max-kernels", type=parse_count, default=DEFAULT_MAX_KERNELS, metavar="N",
                        help=f"refuse a run that reads more than N kernels (default {DEFAULT_MAX_KERNELS:,}: "
                             f"twice the largest ROCm library measured; each kernel costs about 1.5 KB of memory)")
    parser.add_argument("--occupancy-model", choices=MODEL_CHOICES, default=None,
                        help=f"whose occupancy figures: llvm22, llvm23 or llvm24 (the LLVM version whose "
                             f"Occupancy remark they reproduce), or producer (per code object, the model of the "
                             f"LLVM named in its .comment); default {DEFAULT_MODEL}, and for check the model "
                             f"the baseline was written with")
    parser.add_argument("--verify-hashes", action="store_true",
                        help="check the MD5 hash each compressed (CCOB) bundle stores against its inflated "
                             "bytes; off by default, as in LLVM's own tools (the decompressed size is "
                             "always checked)")
    parser.add_argument("--scan-embedded", action="store_true",
                        help="also read AMDGPU code objects embedded as data in host sections (.rodata or "
                             "a section of their own, as hipModuleLoadData programs keep them); reads "
                             "whole sections")
    parser.add_argument("--kpack", action="append", default=[], metavar="PATH",
                        help="a .kpack archive, a .kpm manifest or a folder of archives holding the device "
                             "code of split host binaries (besides the archives their .rocm_kpack_ref search "
                             "paths lead to)")


def read_options(args) -> ReadOptions:
    targets = [t.strip() for value in args.target for t in value.split(",") if t.strip()]
    return ReadOptions(max_decompressed=args.max_decompressed, targets=targets,
                       max_decompressed_total=args.max_decompressed_total, max_inflation=args.max_inflation,
                       max_kernels=args.max_kernels,
                       scan_embedded=args.scan_embedded, kpack_archives=args.kpack,
                       occupancy_model=getattr(args, "occupancy_model", None) or DEFAULT_MODEL,
                       verify_hashes=getattr(args, "verify_hashes", False), require_kernels=True,
                       isa=getattr(args, "isa", False) or getattr(args, "pressure", False),
                       pressure=getattr(args, "pressure", False))


# (rich is imported where a console is made: a JSON report needs none, and importing
# rich.console is 0.05 s of each run's start)
def progress_console() -> Console:
    """A progress bar's console on a terminal's standard error: its cursor
    controls are spillway's own, written beneath the stream that holds text to
    a log line's rules (spillway.untrusted); what it shows is spillway's own text."""
    from rich.console import Console

    from spillway.untrusted import unguarded
    return Console(file=unguarded(sys.stderr), emoji=False, highlight=False)


def stdout_console() -> Console:
    """render.grid.lines_console on standard output."""
    from spillway.render.grid import lines_console
    return lines_console()


@contextlib.contextmanager
def reading_progress(paths: list[str]):
    """A progress callback for long reads on a terminal (a bar on stderr), else None."""
    total = 0
    for path in paths:
        try:
            if os.path.isfile(path):
                total += os.path.getsize(path)
        except OSError:
            pass
    if not (sys.stderr.isatty() and total >= PROGRESS_THRESHOLD_BYTES):
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
    with Progress(TextColumn("reading code objects"), BarColumn(), DownloadColumn(),
                  TimeRemainingColumn(), console=progress_console(), transient=True) as progress:
        task = progress.add_task("read", total=None)

        def advance(done: int, total_bytes: int) -> None:
            progress.update(task, total=total_bytes, advance=done)

        yield advance


@contextlib.contextmanager
def progress_shown(paths: list[str], options: ReadOptions, also: Callable[[], None] | None = None):
    """``options`` with a ``progress`` that, while a read of ``paths`` runs, shows
    a bar on long reads (reading_progress) and calls ``also`` (work done meanwhile)."""
    with reading_progress(paths) as advance:
        if advance is None and also is None:
            yield options
            return

        def progress(done: int, total: int) -> None:
            if advance is not None:
                advance(done, total)
            if also is not None:
                also()

        yield dataclasses.replace(options, progress=progress)


def read_inputs(paths: list[str], options: ReadOptions) -> dict:
    """Read paths into a report document (its kernels a KernelTable), with a
    progress bar on long reads."""
    with progress_shown(paths, options) as shown:
        return read_report(paths, shown, compact=True)


def report_json_writers(paths: list[str], options: ReadOptions):
    """How the report of ``paths`` is written as JSON while it is read: to a file
    descriptor by the workers themselves (report.reader.write_report_json), or
    the same bytes in pieces; with a progress bar on long reads (render.emit.write_to
    takes the pair)."""
    def produce(fd: int) -> None:
        with progress_shown(paths, options) as shown:
            write_report_json_to(fd, paths, shown)

    def chunks():
        with progress_shown(paths, options) as shown:
            yield from report_json(paths, shown)

    return produce, chunks
