"""``spillway report PATH... [FILTER]``: per-kernel resource usage."""

from __future__ import annotations

import io
import os

from spillway.cli.common import add_read_options, dump_json, read_inputs, read_options, write_report_json
from spillway.cli.output import (TSV_HEADERS, Outputs, add_output_options, add_table_options, chosen_format,
                                 looks_like_path, text_marker, write)
from spillway.errors import InputError, UsageError
from spillway.resources.names import name_matches

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
# The file column, shortened only when the kernel names would get less than NAME_ROOM.
FILE_MIN = 16
# --isa: hex digits of a kernel's code SHA-256 the table shows.
CODE_PREFIX = 8
# --format tsv: every field of the kernel records, in this order.
TSV_FIELDS = ("file", "bundle_index", "target", "name", "key", "vgpr_count", "agpr_count", "sgpr_count",
              "vgpr_spill_count", "sgpr_spill_count", "private_segment_fixed_size", "uses_dynamic_stack",
              "scratch_cause", "group_segment_fixed_size", "occupancy", "occupancy_limit", "wavefront_size",
              "max_flat_workgroup_size", "code_object_version", "compiler", "symbol")
TSV_HEADERS.add("\t".join(TSV_FIELDS).encode())
# --isa: the isa object's members after them (lists as text: "mnemonic:count,...", "0xTARGET-0xBRANCH,...").
ISA_TSV_FIELDS = ("instructions", "code_bytes", "code_sha256", "scratch_loads", "scratch_stores",
                  "scratch_load_bytes", "scratch_store_bytes", "scratch_without_width", "flat_ops", "agpr_writes",
                  "agpr_reads", "matrix_ops", "lds_ops", "loops", "loop_spans", "scratch_in_loops", "calls", "status",
                  "scratch_slot_load_bytes", "scratch_slot_store_bytes", "scratch_addressed_load_bytes",
                  "scratch_addressed_store_bytes", "agpr_spill_copies", "agpr_accumulator_moves", "innermost_loops",
                  "scratch_in_innermost_loops", "loop_depth_max")
TSV_HEADERS.add("\t".join(TSV_FIELDS + ISA_TSV_FIELDS).encode())
TSV_HEADERS.add("\t".join(TSV_FIELDS + ISA_TSV_FIELDS[:18]).encode())    # (before the derived figures: still ours)


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


def select(kernels: list[dict], pattern: str | None, everything: bool) -> list[dict]:
    chosen = kernels if everything else [k for k in kernels if k["private_segment_fixed_size"] > 0
                                         or k["uses_dynamic_stack"]]
    if pattern:
        chosen = [k for k in chosen if name_matches(pattern, k["name"])]
    return chosen


def isa_tsv_cells(isa: dict) -> list:
    """An isa object's values in ISA_TSV_FIELDS order, its lists as text."""
    cells = [isa[f] for f in ISA_TSV_FIELDS]
    cells[ISA_TSV_FIELDS.index("scratch_without_width")] = ",".join(
        f"{mnemonic}:{count}" for mnemonic, count in isa["scratch_without_width"].items())
    cells[ISA_TSV_FIELDS.index("loop_spans")] = ",".join(f"{lo:#x}-{hi:#x}" for lo, hi in isa["loop_spans"])
    return cells


def evidence_cells(isa: dict) -> list[str]:
    """A printed row's code without --isa: scratch accesses in loops of all of them, AGPR copies
    ("!": the decoder stopped early, the figures cover what it read)."""
    complete = "" if isa["status"] == "complete" else "!"
    accesses = isa["scratch_loads"] + isa["scratch_stores"]
    return [f"{isa['scratch_in_loops']}/{accesses}{complete}", f"{isa['agpr_writes'] + isa['agpr_reads']}{complete}"]


def evidence_line(kernels: list[dict], width: int) -> str:
    """The code of the printed rows in a line, or in lines of at most ``width`` (kept when narrow
    outputs drop the columns; never cut)."""
    read = [k["isa"] for k in kernels if k.get("isa") is not None]
    accesses = sum(i["scratch_loads"] + i["scratch_stores"] for i in read)
    in_loops = sum(i["scratch_in_loops"] for i in read)
    looping = sum(1 for i in read if i["scratch_in_loops"])
    copies = sum(i["agpr_writes"] + i["agpr_reads"] for i in read)
    copying = sum(1 for i in read if i["agpr_writes"] + i["agpr_reads"])
    stopped = sum(1 for i in read if i["status"] != "complete") + len(kernels) - len(read)
    parts = ["code of the row:" if len(kernels) == 1 else f"code of the {len(kernels)} rows:",
             f"{in_loops} of {accesses} scratch accesses in loops ({looping} {_kernels(looping)}),",
             f"{copies} AGPR copies ({copying} {_kernels(copying)})"]
    if stopped:
        parts[-1] += ";"
        parts.append(f"{stopped} not read to the end (!)")
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 1 + len(part) <= width:
            lines[-1] += " " + part
        else:
            lines.append("  " + part)
    return "\n".join(lines)


def _kernels(count: int) -> str:
    return "kernel" if count == 1 else "kernels"


# The count column of rows that stand for several identical records (the same kernel in several bundles).
COPIES = "×"


def kernel_rows(kernels: list[dict], files: dict[str, str] | None = None, isa: bool = False) -> tuple[list, list]:
    """(columns, rows) of the report table, one row per record, in order."""
    from spillway.render.table import Column, KernelName
    from spillway.resources.occupancy import next_step_text

    columns = [Column("kernel", name=True), Column("target"), Column("VGPRs", "right"),
               Column("AGPRs", "right", drop=2), Column("SGPRs", "right", drop=4), Column("spills V/S", "right"),
               Column("scratch B/lane", "right"), Column("cause", drop=2), Column("LDS B", "right", drop=3),
               Column("waves/SIMD", "right"), Column("bound", drop=1), Column("next step", drop=1)]
    if files:
        # A path: labelled as names are (never two files alike) when the figures need the room.
        columns.insert(0, Column("file", elide=True, min_width=FILE_MIN))
    if isa:
        # From the machine code: scratch bytes per lane moved (loads+stores), scratch accesses in
        # loops, AGPR copies (v_accvgpr_write + read), the code's SHA-256 prefix; "!" marks a
        # kernel whose code was not read to the end (its status in --json or --format tsv).
        columns[-2:-2] = [Column("code scratch B", "right", drop=3), Column("in loops", "right", drop=3),
                          Column("AGPR copies", "right", drop=3), Column("code", drop=2)]
    rows = []
    for k in kernels:
        occupancy = "?" if k["occupancy"] is None else str(k["occupancy"])
        scratch = str(k["private_segment_fixed_size"]) + ("+dyn" if k["uses_dynamic_stack"] else "")
        row = [KernelName(k["name"]), k["target"], str(k["vgpr_count"]),
               "-" if k["agpr_count"] is None else str(k["agpr_count"]),
               str(k["sgpr_count"]), f"{k['vgpr_spill_count']}/{k['sgpr_spill_count']}",
               scratch, k["scratch_cause"], str(k["group_segment_fixed_size"]), occupancy,
               k["occupancy_limit"] if k["occupancy"] is not None else "",
               next_step_text(k.get("occupancy_next"))]
        if isa:
            found = k["isa"]
            complete = "" if found["status"] == "complete" else "!"
            row[-2:-2] = [f"{found['scratch_load_bytes'] + found['scratch_store_bytes']}{complete}",
                          str(found["scratch_in_loops"]), str(found["agpr_writes"] + found["agpr_reads"]),
                          found["code_sha256"][:CODE_PREFIX]]
        if files:
            row.insert(0, files.get(k["file"], k["file"]))
        rows.append(row)
    return columns, rows


def row_key(row: list) -> tuple:
    """What must be equal for two rows to be one (merge_copies)."""
    from spillway.render.table import KernelName

    return tuple(cell.full if isinstance(cell, KernelName) else cell for cell in row)


def merge_copies(columns: list, rows: list, keys: list[tuple] | None = None) -> tuple[list, list, int]:
    """One row per distinct row: rows whose every cell is equal (the kernel's
    full demangled name, its target, its file when the table shows files, and
    every figure the table has, those a narrow output leaves out included)
    are one row, counted in a ``×`` column after the target (shown only when
    some row stands for several records).  The same kernel in several bundles
    of one library is then one row.  ``keys``: each row's row_key, when the
    caller has them.  (columns, rows, rows merged away)."""
    from spillway.render.table import Column

    counts: dict[tuple, int] = {}
    first: dict[tuple, list] = {}
    for row, k in zip(rows, keys if keys is not None else map(row_key, rows)):
        counts[k] = counts.get(k, 0) + 1
        first.setdefault(k, row)
    if len(first) == len(rows):
        return columns, rows, 0
    at = next(i for i, c in enumerate(columns) if c.header == "target") + 1
    merged = []
    for k, row in first.items():
        merged.append(row[:at] + [f"×{counts[k]}" if counts[k] > 1 else ""] + row[at:])
    return columns[:at] + [Column(COPIES, "right")] + columns[at:], merged, len(rows) - len(first)


def kernel_table(console, columns: list, rows: list, keys: list[tuple], names: str = "short", limit: int = 0):
    """(the report table, rows shown, rows hidden by ``limit``, records merged
    into other rows) of kernel_rows' ``columns`` and ``rows`` (``keys``: their
    row_key): identical records are one row (merge_copies)."""
    from spillway.render.table import grid, limited

    columns, rows, merged = merge_copies(columns, rows, keys)
    shown, hidden = limited(rows, limit)
    return grid(console, columns, shown, names=names), len(shown), hidden, merged


def run(args) -> int:
    fmt = chosen_format(args)
    paths, pattern = split_filter(args.paths)
    outputs = Outputs(paths, force=args.force)
    outputs.claim(args.output, "-o")
    if fmt == "json" and not pattern:
        # Written while it is read: a ROCm library's report is half a gigabyte.
        write_report_json(paths, read_options(args), args.output)
        return 0
    document = read_inputs(paths, read_options(args))
    if pattern:
        matching = select(document["kernels"], pattern, True)
        if not matching:
            raise UsageError(f"no kernel matches {pattern!r} (of {len(document['kernels'])} kernels read "
                             f"from {', '.join(paths)})")
    if fmt == "json":
        if pattern:
            document = dict(document, kernels=matching)
        write(args.output, dump_json(document))
        return 0
    kernels = sorted(select(document["kernels"], pattern, args.all), key=SORT_KEYS[args.sort])
    if fmt == "html":
        from spillway.render.html import report_page

        write(args.output, report_page(document, kernels, everything=args.all, pattern=pattern,
                                       model=read_options(args).occupancy_model))
        return 0
    if fmt == "tsv":
        from spillway.render.table import tsv

        if args.isa:
            rows = ([*(k.get(f) for f in TSV_FIELDS), *isa_tsv_cells(k["isa"])] for k in kernels)
            write(args.output, tsv(TSV_FIELDS + ISA_TSV_FIELDS, rows))
            return 0
        write(args.output, tsv(TSV_FIELDS, ([k.get(f) for f in TSV_FIELDS] for k in kernels)))
        return 0
    write_table(args, document, kernels, pattern, paths)
    return 0


def printed_rows_evidence(paths: list[str], options, kernels: list[dict]) -> list[dict]:
    """The printed rows, each with its ``isa`` object: only their code objects are read again and
    only these kernels decoded (report --isa decodes every kernel as it reads)."""
    from spillway.report.code_evidence import isa_object
    from spillway.report.kernel_code import decoded_evidence, each_kernel_code

    try:
        found = each_kernel_code(paths, options, kernels, decoded_evidence)
    except InputError:      # read once already: the inputs changed since; the table stands without them
        found = [None] * len(kernels)
    return [dict(k, isa=None if code is None else isa_object(code)) for k, code in zip(kernels, found)]


def with_printed_evidence(paths: list[str], options, kernels: list[dict], columns: list, rows: list,
                          keys: list[tuple], limit: int, cells: bool) -> list[dict]:
    """Decode the code of the records the table prints, and (``cells``) add
    its two columns to kernel_rows' ``columns`` and ``rows`` and their
    values to the rows' ``keys``, in place ("?" for records not decoded).
    The printed rows are the first ``limit`` distinct rows (merge_copies' rule
    on the figures alone); every record of each is decoded.  Returns the first
    record of each printed row, with its ``isa`` (for evidence_line)."""
    from spillway.render.table import Column

    printed: dict[tuple, None] = {}
    for key in keys:
        if key not in printed and not (limit and 0 < limit <= len(printed)):
            printed[key] = None
    chosen = [i for i, key in enumerate(keys) if key in printed]
    decoded = printed_rows_evidence(paths, options, [kernels[i] for i in chosen])
    firsts: dict[tuple, dict] = {}
    for i, record in zip(chosen, decoded):
        firsts.setdefault(keys[i], record)
    if cells:
        # Scratch accesses in loops of all of them, AGPR copies; left out on narrow outputs and with
        # full names (which take the room), where the line under the table keeps their totals.
        columns[-2:-2] = [Column("in loops", "right", drop=3), Column("AGPR copies", "right", drop=2)]
        found = dict(zip(chosen, decoded))
        for i, row in enumerate(rows):
            isa = found[i]["isa"] if i in found else None
            added = ["?", "?"] if isa is None else evidence_cells(isa)
            row[-2:-2] = added
            keys[i] = keys[i][:-2] + tuple(added) + keys[i][-2:]
    return list(firsts.values())


def write_table(args, document: dict, kernels: list[dict], pattern: str | None, paths: list[str]) -> None:
    from spillway.render.table import console as make_console, short_files

    buffer = io.StringIO() if args.output not in (None, "-") else None
    console = make_console(buffer)
    total = len(document["kernels"])
    inputs = sorted({k["file"] for k in document["kernels"]})
    files = short_files(inputs) if len(inputs) > 1 else None
    columns, rows = kernel_rows(kernels, files, args.isa)
    keys = [row_key(row) for row in rows]
    evidence = bool(kernels) and not args.isa
    printed: list[dict] = []
    if evidence:
        printed = with_printed_evidence(paths, read_options(args), kernels, columns, rows, keys, args.limit,
                                        cells=args.names != "full")
    table, shown, hidden, merged = kernel_table(console, columns, rows, keys, args.names, args.limit)
    if shown:
        console.print(table)
    skipped = sum(f["skipped_without_device_code"] for f in document["files"])
    bitcode = sum(len(f["bitcode_only"]) for f in document["files"])
    what = "kernels" if args.all else "kernels using scratch"
    summary = f"{len(kernels)} {what}" + (f" matching {pattern!r}" if pattern else "") + \
              f" of {total} kernels read"
    if hidden:
        summary += f" ({shown} shown; --limit 0 shows all)"
    if skipped:
        summary += f"; {skipped} files without device code skipped"
    if bitcode:
        summary += f"; {bitcode} bitcode-only entries (resource usage exists after the device link)"
    console.print(summary, markup=False, soft_wrap=True)
    if merged:
        console.print(f"{COPIES}N: N identical records (the same kernel, target and figures in several code "
                      f"objects) in one row; {merged:,} records merged (--format json lists each)", markup=False)
    if evidence and printed:
        console.print(evidence_line(printed, console.width), markup=False, soft_wrap=True)
    if buffer is not None:
        write(args.output, text_marker("report") + buffer.getvalue())
