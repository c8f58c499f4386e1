"""``spillway code PATH... FILTER``: one kernel's loops and the instructions
behind its evidence (each scratch access, AGPR copy, matrix op and call,
with its offset), decoded from its machine code."""

from __future__ import annotations

from spillway.cli.common import add_read_options, read_inputs, read_options
from spillway.cli.output import Outputs, add_output_options, chosen_format
from spillway.cli.report import split_filter
from spillway.errors import InputError, UsageError
from spillway.resources.names import name_matches

FORMATS = ("text", "json")
# Names an ambiguous filter's error lists.
SHOWN_NAMES = 5


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "code", help="one kernel's loops and each scratch access and AGPR copy, with offsets",
        description="Decode the machine code of the kernel FILTER names: its evidence figures (as report --isa), "
                    "its loops (offset ranges from the kernel's start, as llvm-objdump's <kernel+0x..>, with "
                    "their nesting) and each scratch access, AGPR copy (v_accvgpr_write/read), matrix op and "
                    "call with its offset, mnemonic, bytes per lane and loop depth. FILTER must name one kernel "
                    "in one code object: a name that matches several kernels, or a kernel built for several "
                    "targets, is an error unless --target or --all chooses.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="binaries as for report, then FILTER: a case-insensitive substring of the kernel "
                             "name, a glob with * ? [, or the exact (demangled or mangled) name")
    parser.add_argument("--all", action="store_true", help="show every kernel FILTER matches, not only one")
    parser.add_argument("--lines-from", action="append", metavar="TWIN", dest="lines_from",
                        help="take the source lines from TWIN, the same binaries built again with "
                             "-gline-tables-only (a debug twin), for each kernel whose code there has the same "
                             "SHA-256; repeat for several files (default: the code object's own line table)")
    add_output_options(parser, FORMATS, default="text")
    add_read_options(parser)
    parser.set_defaults(run=run)


def choose(kernels: list[dict], pattern: str, everything: bool) -> list[dict]:
    """The records ``pattern`` names: exact names (demangled, or the symbol)
    first, else the report's filter; more than one kernel in one code object
    is an error unless ``everything``."""
    exact = [k for k in kernels if pattern in (k["name"], k["symbol"], k["symbol"].removesuffix(".kd"))]
    chosen = exact or [k for k in kernels if name_matches(pattern, k["name"])]
    if not chosen:
        raise UsageError(f"no kernel matches {pattern!r} (of {len(kernels)} kernels read)")
    if everything or len(chosen) == 1:
        return chosen
    names = sorted({k["name"] for k in chosen})
    if len(names) > 1:
        listed = "; ".join(names[:SHOWN_NAMES]) + ("; ..." if len(names) > SHOWN_NAMES else "")
        raise UsageError(f"{len(names)} kernels match {pattern!r}: {listed} (give the exact name, or --all)")
    targets = sorted({k["target"] for k in chosen})
    if len(targets) > 1:
        raise UsageError(f"{names[0]} is built for {len(targets)} targets ({', '.join(targets)}): choose one "
                         f"with --target, or --all")
    places = sorted({f"{k['file']}" + ("" if k["bundle_index"] is None else f" bundle {k['bundle_index']}")
                     for k in chosen})
    raise UsageError(f"{names[0]} ({targets[0]}) is in {len(chosen)} code objects ({'; '.join(places[:SHOWN_NAMES])})"
                     f": narrow the PATHs, or --all")


def run(args) -> int:
    from spillway.isa.listing import kernel_listing
    from spillway.render.emit import emit
    from spillway.render.models import CodeModel
    from spillway.report.code_view import ViewedKernel
    from spillway.report.kernel_code import each_kernel_code

    fmt = chosen_format(args)
    paths, pattern = split_filter(args.paths)
    if pattern is None:
        raise UsageError("name the kernel: spillway code PATH... FILTER (spillway report lists them)")
    outputs = Outputs(paths, force=args.force)
    outputs.claim(args.output, "-o")
    options = read_options(args)
    document = read_inputs(paths, options)
    records = choose(list(document["kernels"]), pattern, args.all)

    def listing_of(record, section, found, target, payload):
        if found is None:
            return None
        listing = kernel_listing(section, found.start, found.size, target, bool(found.private_segment_buffer))
        if args.lines_from:
            return listing, None
        return listing, own_lines(payload, section, found, target, listing)

    listings = each_kernel_code(paths, options, records, listing_of, with_payload=True)
    twin = twin_lines_of(paths, options, records, args.lines_from) if args.lines_from else None
    viewed: list[ViewedKernel] = []
    for number, (record, found) in enumerate(zip(records, listings)):
        if found is None:
            raise InputError(f"{record['name']} ({record['target']}): its code was not found (no STT_FUNC "
                             f"symbol {record['symbol'].removesuffix('.kd')}, or the input changed while read)",
                             file=record["file"])
        listing, lines = found
        viewed.append(ViewedKernel(record, listing, twin[number] if twin is not None else lines))
    emit(CodeModel(tuple(viewed)), fmt, args.output)
    return 0


def own_lines(payload, section, found, target: str, listing):
    """The kernel's source lines from its own code object's line table (a
    malformed table: said in the status, the listing stands)."""
    from spillway.isa.source_lines import (LINE_TABLE_NOT_READ, branches_of, decoded_kernel, kernel_lines, object_lines,
                                           without_lines)

    try:
        lines = object_lines(payload, [(found.section, found.start, found.start + found.size)])
    except InputError as exc:
        return without_lines(listing.code.code_sha256, f"{LINE_TABLE_NOT_READ}: {exc.message}")
    branches = branches_of(decoded_kernel(section, found.start, found.size, target))
    return kernel_lines(listing, branches, lines, found.section, found.start)


def twin_lines_of(paths: list[str], options, records: list[dict], twin: list[str]):
    """Each record's source lines from the debug twin ``twin`` (report.
    library_lines: the twin's kernel of the same target and symbol in the
    same place, used where its code is the same)."""
    from spillway.report.library_lines import library_lines

    wanted = {(record["target"], record["key"]) for record in records}
    found = library_lines(paths, options, wanted, twin)
    by_place: dict[tuple, list] = {}
    for kernel in found:
        by_place.setdefault((kernel.file, kernel.bundle_index, kernel.target, kernel.symbol), []).append(kernel.lines)
    out = []
    for record in records:
        place = (record["file"], record["bundle_index"], record["target"], record["symbol"].removesuffix(".kd"))
        candidates = by_place.get(place)
        if not candidates:
            raise InputError(f"{record['name']} ({record['target']}): not found again when reading the debug twin's "
                             f"pairs (the input changed while read)", file=record["file"])
        out.append(candidates.pop(0))
    return out
