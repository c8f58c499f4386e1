"""``spillway report PATH... [FILTER]``: per-kernel resource usage."""

from __future__ import annotations

import fnmatch
import os
import sys

from rich.console import Console
from rich.table import Table

from spillway.cli.common import add_read_options, dump_json, read_inputs, read_options, write_output

SORT_KEYS = {
    "scratch": lambda k: (-k["private_segment_fixed_size"], -k["vgpr_spill_count"], k["name"]),
    "spills": lambda k: (-(k["vgpr_spill_count"] + k["sgpr_spill_count"]), k["name"]),
    "vgprs": lambda k: (-k["vgpr_count"], k["name"]),
    "sgprs": lambda k: (-k["sgpr_count"], k["name"]),
    "lds": lambda k: (-k["group_segment_fixed_size"], k["name"]),
    "occupancy": lambda k: (k["occupancy"] if k["occupancy"] is not None else 99, k["name"]),
    "name": lambda k: (k["name"], k["target"]),
    "target": lambda k: (k["target"], k["name"]),
    "file": lambda k: (k["file"], k["bundle_index"] or 0, k["target"], k["name"]),
}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="list kernels and their resource usage",
        description="List per-kernel resource usage. By default only kernels that use scratch memory "
                    "are listed; --all lists every kernel.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="executables, shared libraries, objects, archives, bundles, code objects, "
                             "wheels or directories; a last argument that is not an existing path is "
                             "the FILTER")
    parser.add_argument("--all", action="store_true", help="list every kernel, not only those using scratch")
    parser.add_argument("--sort", choices=sorted(SORT_KEYS), default="scratch",
                        help="order of the table (default: scratch, largest first)")
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE",
                        help="write the versioned JSON report to FILE (or stdout) instead of a table")
    parser.add_argument("--limit", type=int, default=0, metavar="N", help="show at most N rows")
    add_read_options(parser)
    parser.set_defaults(run=run)


def split_filter(paths: list[str]) -> tuple[list[str], str | None]:
    """The original script took ``BINARY [FILTER]``: keep that form."""
    if len(paths) > 1 and not os.path.exists(paths[-1]):
        return paths[:-1], paths[-1]
    return paths, None


def matches(name: str, pattern: str) -> bool:
    """Glob when the filter has wildcards, else a case-insensitive substring."""
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name.lower(), pattern.lower())
    return pattern.lower() in name.lower()


def select(kernels: list[dict], pattern: str | None, everything: bool) -> list[dict]:
    chosen = kernels if everything else [k for k in kernels if k["private_segment_fixed_size"] > 0
                                         or k["uses_dynamic_stack"]]
    if pattern:
        chosen = [k for k in chosen if matches(k["name"], pattern)]
    return chosen


def kernel_table(kernels: list[dict], title: str | None = None) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False)
    table.add_column("kernel", overflow="fold", ratio=1)
    table.add_column("target")
    table.add_column("VGPRs", justify="right")
    table.add_column("AGPRs", justify="right")
    table.add_column("SGPRs", justify="right")
    table.add_column("spills V/S", justify="right")
    table.add_column("scratch B/lane", justify="right")
    table.add_column("cause")
    table.add_column("LDS B", justify="right")
    table.add_column("waves/SIMD", justify="right")
    for k in kernels:
        occupancy = "?" if k["occupancy"] is None else f"{k['occupancy']} ({k['occupancy_limit']})"
        scratch = str(k["private_segment_fixed_size"]) + ("+dyn" if k["uses_dynamic_stack"] else "")
        table.add_row(k["name"], k["target"], str(k["vgpr_count"]),
                      "-" if k["agpr_count"] is None else str(k["agpr_count"]),
                      str(k["sgpr_count"]), f"{k['vgpr_spill_count']}/{k['sgpr_spill_count']}",
                      scratch, k["scratch_cause"], str(k["group_segment_fixed_size"]), occupancy)
    return table


def run(args) -> int:
    paths, pattern = split_filter(args.paths)
    document = read_inputs(paths, read_options(args))
    if args.json:
        if pattern or not args.all:
            # JSON keeps every kernel unless the user narrowed it down.
            if pattern:
                document = dict(document, kernels=select(document["kernels"], pattern, True))
        write_output(args.json, dump_json(document))
        return 0
    kernels = sorted(select(document["kernels"], pattern, args.all), key=SORT_KEYS[args.sort])
    console = Console(soft_wrap=False) if sys.stdout.isatty() else Console(width=200, color_system=None)
    total = len(document["kernels"])
    shown = kernels[:args.limit] if args.limit > 0 else kernels
    if shown:
        console.print(kernel_table(shown))
    skipped = sum(f["skipped_without_device_code"] for f in document["files"])
    bitcode = sum(len(f["bitcode_only"]) for f in document["files"])
    what = "kernels" if args.all else "kernels using scratch"
    summary = f"{len(kernels)} {what}" + (f" matching {pattern!r}" if pattern else "") + \
              f" of {total} kernels read"
    if len(shown) < len(kernels):
        summary += f" ({len(shown)} shown)"
    if skipped:
        summary += f"; {skipped} files without device code skipped"
    if bitcode:
        summary += f"; {bitcode} bitcode-only entries (resource usage exists after the device link)"
    console.print(summary)
    return 0
