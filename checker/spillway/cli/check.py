"""``spillway check PATH... --baseline FILE``: exit 0 when every kernel is
within its allowance, 1 when any is over, 2 on usage or input errors.

Every failure ends with the command that accepts it (``spillway baseline
write ... --allow KEY --reason TEXT``); a missing baseline ends with the
command that writes it."""

from __future__ import annotations

import dataclasses
import os
import sys

from spillway.cli.common import add_read_options, progress_shown, read_options
from spillway.cli.output import Outputs, add_output_options, add_table_options, chosen_format
from spillway.constants import metrics_help
from spillway.errors import UsageError
from spillway.untrusted import visible

FORMATS = ("table", "json", "markdown", "junit", "github", "tsv", "sarif", "html")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "check", help="fail when a kernel uses more than its baseline allows",
        description="Hold every kernel to its allowance in a baseline file (spillway baseline write). "
                    "Kernels not in the baseline are held to zero scratch and zero spills; a baseline kernel "
                    "or target no longer built fails too (baseline write --allow-removed KEY or "
                    "--allow-removed-target TARGET accepts it). Each failure ends with the command that "
                    "accepts it. Exit status: 0 within baseline, 1 over or removed, 2 usage or input error.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="binaries, objects, archives, code objects, wheels, directories, or spillway "
                             "report JSON files")
    parser.add_argument("--baseline", required=True, metavar="FILE", help="the baseline file")
    parser.add_argument("--gate", type=str, metavar="METRICS",
                        help=f"override the baseline's gated metrics ({metrics_help()})")
    output = add_output_options(parser, FORMATS, github_auto=True,
                                output_help="write the document to FILE (atomically) instead of stdout; the "
                                            "verdict is still printed")
    output.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE (one test case per kernel "
                                                        "and metric), beside the main format")
    output.add_argument("--suite", metavar="NAME",
                        help="name of the JUnit test suite (default: the baseline's file name without .json)")
    parser.add_argument("--flags", metavar="TEXT",
                        help="the build's code-generation flags, as shell words (--flags='-O3 -foffload-lto'), "
                             "compared with those the baseline "
                             "recorded; default: those of the command lines the compiler recorded in the code "
                             "objects (clang -frecord-command-line)")
    parser.add_argument("--strict-flags", action="store_true",
                        help="fail (exit 1) when the build's code-generation flags differ from the baseline's; "
                             "without it that is a warning")
    parser.add_argument("--source-root", metavar="DIR", default=".",
                        help="the repository's root, for the json and sarif formats: a failing kernel whose "
                             "binary has a DWARF line table (-gline-tables-only) points at its source line, the "
                             "file given relative to DIR (default: the current directory)")
    parser.add_argument("--lines-from", action="append", metavar="TWIN", dest="lines_from",
                        help="take those source lines from TWIN, the binaries built again with "
                             "-gline-tables-only (a debug twin), where a kernel's code is the same; repeatable")
    parser.add_argument("--pressure", action="store_true",
                        help="a failing kernel's VGPR peak too, from its machine code (isa.liveness): how many "
                             "VGPRs are live at once, the source line where the most are (with a line table) "
                             "and what holds them, in every format that shows the failure's code. Opt-in for "
                             "its cost: about 12 us of CPU per instruction of each failing kernel")
    add_table_options(parser)
    add_read_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from spillway.gate.baseline import read_baseline, recorded_model  # pydantic: imported only when used
    from spillway.gate.check import check
    from spillway.gate.commands import CheckCommands
    from spillway.gate.reading import sniff_json
    from spillway.gate.revisit import failure_details
    from spillway.gate.flags import build_flags, compare as compare_flags, declared_flags
    from spillway.gate.metrics import needs_code, parse_metrics
    from spillway.gate.reading import read_sources
    from spillway.render import junit
    from spillway.render.emit import emit
    from spillway.render.models import CheckModel, View

    fmt = chosen_format(args)
    if args.flags is not None:
        declared_flags(args.flags)      # a usage error before anything is read
    gate = parse_metrics(args.gate) if args.gate is not None else None
    options = read_options(args)
    outputs = Outputs(args.paths + [args.baseline], force=args.force)
    outputs.claim(args.output, "-o")
    outputs.claim(args.junit, "--junit")
    if not os.path.exists(args.baseline):
        commands = CheckCommands(tuple(args.paths), args.baseline, (), tuple(options.targets or ()))
        raise UsageError(f"--baseline {args.baseline}: no such file; write it with: {commands.write_missing()}")
    baseline, baseline_bytes = read_baseline(args.baseline)     # read once: SARIF locates kernels in these bytes
    # The figures are compared with the baseline's, so by default they follow its model (a
    # version-1 baseline names none: llvm22).  The machine-code gates (loop_scratch,
    # agpr_copies) read the code as report --isa does.
    options = dataclasses.replace(options, isa=needs_code(gate or baseline.gate),
                                  occupancy_model=recorded_model(baseline) if args.occupancy_model is None
                                  else options.occupancy_model)
    if not os.path.isdir(args.source_root):
        raise UsageError(f"--source-root {args.source_root}: not a directory")
    # Where each kernel is is kept as it is read, so that a failing check reads again only the
    # code objects holding its failures, once (gate.revisit).
    with progress_shown(args.paths, options) as shown:
        inputs = read_sources(args.paths, shown, places=True)
    result = check(inputs.usage, baseline, gate or baseline.gate, targets=options.targets,
                   baseline_path=args.baseline, occupancy_model=options.occupancy_model)
    flags_differ = compare_flags(baseline.provenance.flags, build_flags(args.flags, inputs.files))
    if args.occupancy_model is None and "occupancy" in result.gate:
        # After the read, so that an input error stays one line.
        print(f"spillway: occupancy follows the {options.occupancy_model} model the baseline was written "
              f"with (--occupancy-model to change)", file=sys.stderr)
    commands = CheckCommands(tuple(args.paths), args.baseline, tuple(baseline.gate), tuple(options.targets or ()))
    # A failing check's model: every failure's machine code and source line, read once (the
    # terminal and Markdown show the first --limit failures' code, the documents every one's; the
    # format decides what is shown, never what is read).
    code = None
    binaries = [p for p in args.paths if not sniff_json(p)]
    if result.failures and binaries:
        failing = {(f.target, f.key) for f in result.failures}
        details = failure_details(binaries, options, inputs.usage, inputs.places, failing, failing,
                                  args.source_root, args.lines_from, pressure=args.pressure)
        code = details.code
        result = dataclasses.replace(result, sources=details.sources)
    model = CheckModel(result, commands, baseline_bytes, args.suite or junit.suite_name_for(args.baseline), code)
    if args.junit:
        emit(model, "junit", args.junit, also=True)
    emit(model, fmt, args.output, View(args.names, args.limit))
    if flags_differ is not None:
        # One line on stderr, after the verdict: the documents on stdout and in files stay what they were.
        print(f"spillway: {'error' if args.strict_flags else 'warning'}: {visible(flags_differ.sentence())}"
              + (" [--strict-flags]" if args.strict_flags else ""), file=sys.stderr)
    return 0 if result.passed and not (args.strict_flags and flags_differ is not None) else 1
