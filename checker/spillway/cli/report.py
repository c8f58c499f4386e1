"""``spillway report PATH... [FILTER]``: per-kernel resource usage."""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Sequence

from spillway.cli.common import add_read_options, read_inputs, read_options, report_json_writers
from spillway.cli.output import Outputs, add_output_options, add_table_options, chosen_format, looks_like_path
from spillway.errors import UsageError
from spillway.resources.names import NameFilter

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

FORMATS = ("table", "json", "tsv", "html")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="list kernels and their resource usage",
        description="List per-kernel resource usage. By default only kernels that use scratch memory "
                    "are listed; --all lists every kernel. JSON keeps every kernel unless a FILTER is given.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="executables, shared libraries, objects, archives, bundles, code objects, "
                             "wheels or directories; a last argument that is not an existing path (and has "
                             "no / or file suffix) is the FILTER: a case-insensitive substring of the kernel "
                             "name, or a glob with * ? [ on the full or short name")
    parser.add_argument("--all", action="store_true", help="list every kernel, not only those using scratch")
    parser.add_argument("--sort", choices=sorted(SORT_KEYS), default="scratch",
                        help="order of the table (default: scratch, largest first)")
    parser.add_argument("--isa", action="store_true",
                        help="also decode each kernel's machine code: scratch traffic, loops, AGPR copies, "
                             "code SHA-256 (an isa object per JSON record, more TSV and table columns)")
    parser.add_argument("--pressure", action="store_true",
                        help="with --isa (implied): each kernel's live registers too (peak VGPRs, AGPRs and "
                             "SGPRs, status, the source line of the VGPR peak and the largest group of "
                             "registers held there; a pressure member in each isa object, a column in the table). "
                             "Opt-in: about 12x the CPU of --isa on a whole library")
    add_output_options(parser, FORMATS)
    add_table_options(parser)
    add_read_options(parser)
    parser.set_defaults(run=run)


def split_filter(paths: list[str]) -> tuple[list[str], str | None]:
    """The original script took ``BINARY [FILTER]``: keep that form.  A
    missing last argument that looks like a path is a missing file, not a
    filter."""
    if len(paths) > 1 and paths[-1] != "-" and not os.path.exists(paths[-1]):
        if looks_like_path(paths[-1]):
            raise UsageError(f"{paths[-1]}: no such file (a FILTER has no / and no file suffix)")
        return paths[:-1], paths[-1]
    return paths, None


def select(kernels: Sequence[dict], pattern: str | None, everything: bool) -> list[dict]:
    """The records the table lists: those using scratch (``everything``: all),
    matching ``pattern``.  From a KernelTable, only the chosen rows become
    dicts, and the pattern is tested once per distinct name (NameFilter)."""
    from spillway.report.fields import ROW_FIELDS
    from spillway.report.reader import KernelTable

    if isinstance(kernels, KernelTable):
        at = ROW_FIELDS.index
        name_at, scratch_at, dynamic_at = at("name"), at("private_segment_fixed_size"), at("uses_dynamic_stack")
        rows = kernels.rows if everything else [r for r in kernels.rows if r[scratch_at] > 0 or r[dynamic_at]]
        if pattern:
            matches = NameFilter(pattern)
            rows = [r for r in rows if matches(r[name_at])]
        return [dict(zip(ROW_FIELDS, r)) for r in rows]
    chosen = list(kernels) if everything else [k for k in kernels if k["private_segment_fixed_size"] > 0
                                               or k["uses_dynamic_stack"]]
    if pattern:
        matches = NameFilter(pattern)
        chosen = [k for k in chosen if matches(k["name"])]
    return chosen


def run(args) -> int:
    from spillway.render.emit import emit
    from spillway.render.models import ReportModel, View
    from spillway.report.kernel_code import printed_rows_evidence

    fmt = chosen_format(args)
    paths, pattern = split_filter(args.paths)
    outputs = Outputs(paths, force=args.force)
    outputs.claim(args.output, "-o")
    options = read_options(args)
    if pattern and options.isa:
        # Only the matching kernels' code is decoded (and only code objects holding one).
        options = dataclasses.replace(options, code_filter=NameFilter(pattern))

    def read() -> tuple[dict, list, list | None]:
        document = read_inputs(paths, options)
        matching = None
        if pattern:
            matching = select(document["kernels"], pattern, True)
            if not matching:
                raise UsageError(f"no kernel matches {pattern!r} (of {len(document['kernels'])} kernels read "
                                 f"from {', '.join(paths)})")
        rows = select(matching if matching is not None else document["kernels"], None, args.all)
        return document, sorted(rows, key=SORT_KEYS[args.sort]), matching

    # The records as a stream the renderers ask for: with no FILTER the JSON document is written
    # while it is read, by the reader's workers (a ROCm library's report is half a gigabyte).
    code_of = functools.partial(printed_rows_evidence, list(paths), options)
    emit(ReportModel(read, pattern, options.isa, options.occupancy_model, code_of,
                     None if pattern else report_json_writers(list(paths), options), options.pressure),
         fmt, args.output, View(args.names, args.limit, args.all))
    return 0
