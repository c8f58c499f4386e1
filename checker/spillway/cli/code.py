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

    def listing_of(record, section, found, target):
        if found is None:
            return None
        return kernel_listing(section, found.start, found.size, target, bool(found.private_segment_buffer))

    listings = each_kernel_code(paths, options, records, listing_of)
    viewed: list[ViewedKernel] = []
    for record, listing in zip(records, listings):
        if listing is None:
            raise InputError(f"{record['name']} ({record['target']}): its code was not found (no STT_FUNC "
                             f"symbol {record['symbol'].removesuffix('.kd')}, or the input changed while read)",
                             file=record["file"])
        viewed.append(ViewedKernel(record, listing))
    emit(CodeModel(tuple(viewed)), fmt, args.output)
    return 0
