"""``spillway code PATH... FILTER``: one kernel's loops, its live registers
and the instructions behind its evidence (each scratch access, AGPR copy,
matrix op and call, with its offset; with --all-instructions every
instruction, its operands and the registers live at it), decoded from its
machine code."""

from __future__ import annotations

from spillway.cli.common import add_read_options, read_inputs, read_options
from spillway.cli.output import Outputs, add_output_options, chosen_format
from spillway.cli.report import split_filter
from spillway.errors import UsageError

FORMATS = ("text", "json")


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
    parser.add_argument("--all-instructions", action="store_true", dest="all_instructions",
                        help="list every instruction with the registers it defines and uses and the VGPRs, "
                             "AGPRs and SGPRs live at it (isa.liveness), not only those behind the evidence")
    add_output_options(parser, FORMATS, default="text")
    add_read_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from spillway.render.emit import emit
    from spillway.render.models import CodeModel
    from spillway.report.code_kernels import viewed_kernels

    fmt = chosen_format(args)
    paths, pattern = split_filter(args.paths)
    if pattern is None:
        raise UsageError("name the kernel: spillway code PATH... FILTER (spillway report lists them)")
    outputs = Outputs(paths, force=args.force)
    outputs.claim(args.output, "-o")
    options = read_options(args)
    records = _named_records(paths, options, pattern, args.all)
    emit(CodeModel(viewed_kernels(paths, options, records, args.lines_from, args.all_instructions)), fmt, args.output)
    return 0


def _named_records(paths: list[str], options, pattern: str, everything: bool) -> list[dict]:
    """The records FILTER names (report.code_kernels.choose): read with the
    kernels whose mangled name cannot be named left out (resources.names.
    mangled_prefilter: their names not demangled, most of the read's cost),
    and read again whole if none is left to choose, so that a name the
    prefilter would miss still gets its kernel and "no kernel matches"
    always comes from a whole read."""
    import dataclasses

    from spillway.report.code_kernels import choose, matching
    from spillway.resources.names import mangled_prefilter

    prefilter = mangled_prefilter(pattern)
    if prefilter is not None:
        kernels = list(read_inputs(paths, dataclasses.replace(options, kernel_prefilter=prefilter))["kernels"])
        if matching(kernels, pattern):
            return choose(kernels, pattern, everything)
    return choose(list(read_inputs(paths, options)["kernels"]), pattern, everything)
