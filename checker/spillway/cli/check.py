"""``spillway check PATH... --baseline FILE``: exit 0 when every kernel is
within its allowance, 1 when any is over, 2 on usage or input errors.

Every failure ends with the command that accepts it (``spillway baseline
write ... --allow KEY --reason TEXT``); a missing baseline ends with the
command that writes it."""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING
import sys

from spillway.cli.common import add_read_options, dump_json, progress_shown, read_options
from spillway.cli.output import (TSV_HEADERS, Outputs, add_output_options, add_table_options, chosen_format,
                                 markdown_marker, text_marker, write)
from spillway.constants import metrics_help
from spillway.errors import UsageError
from spillway.untrusted import visible

if TYPE_CHECKING:  # the gate imports pydantic: only when a check runs
    from spillway.gate.check import CheckResult, Finding, RemovalCommands

# Kernels named with --allow in the one "accept all" command.
ACCEPT_ALL_MAX = 10
FORMATS = ("table", "json", "markdown", "junit", "github", "tsv", "sarif", "html")
# Set (by the CMake module) to another command that writes the baseline.
WRITE_BASELINE_ENV = "SPILLWAY_WRITE_BASELINE"


# --format tsv: one line per kernel and metric.
CHECK_TSV_FIELDS = ("target", "name", "key", "metric", "allowed", "actual", "passed", "new_kernel",
                    "dynamic_stack")
TSV_HEADERS.add("\t".join(CHECK_TSV_FIELDS).encode())


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
    add_table_options(parser)
    add_read_options(parser)
    parser.set_defaults(run=run)


class Remedy:
    """The commands that accept a failure or write a missing baseline."""

    def __init__(self, paths: list[str], baseline: str, baseline_gate: tuple[str, ...], targets: list[str]):
        self.paths, self.baseline, self.baseline_gate, self.targets = paths, baseline, baseline_gate, targets

    def _accept(self, keys: list[str], extra_metrics: set[str]) -> str:
        from spillway.gate.commands import accept_command

        gate = [m for m in self.baseline_gate] + sorted(extra_metrics - set(self.baseline_gate))
        return accept_command(self.paths, self.baseline, keys,
                              gate=",".join(gate) if set(gate) != set(self.baseline_gate) else None,
                              targets=",".join(self.targets) if self.targets else None)

    def accept(self, finding: Finding) -> str:
        return self._accept([finding.key], {finding.metric})

    def accept_all(self, result: CheckResult) -> tuple[str, int]:
        keys = list(dict.fromkeys(f.key for f in result.failures))
        return (self._accept(keys[:ACCEPT_ALL_MAX], {f.metric for f in result.failures}),
                max(0, len(keys) - ACCEPT_ALL_MAX))

    def _removed(self, keys: list[str], targets: list[str]) -> str:
        from spillway.gate.commands import accept_removed_command

        return accept_removed_command(self.paths, self.baseline, keys, targets,
                                      targets=",".join(self.targets) if self.targets else None)

    def removals(self) -> "RemovalCommands":
        """The commands that accept kernels and targets no longer built."""
        from spillway.gate.check import RemovalCommands

        def every(result: CheckResult) -> tuple[str, int]:
            keys = list(dict.fromkeys(key for _target, key, _name in result.vanished))
            return (self._removed(keys[:ACCEPT_ALL_MAX], [t.target for t in result.removed_targets]),
                    max(0, len(keys) - ACCEPT_ALL_MAX))

        return RemovalCommands(lambda key: self._removed([key], []), lambda target: self._removed([], [target.target]),
                               every)

    def write_missing(self) -> str:
        from spillway.gate.commands import write_command

        text = write_command(self.paths, self.baseline)
        other = os.environ.get(WRITE_BASELINE_ENV)
        return f"{text}" + (f" (or: {other})" if other else "")


def run(args) -> int:
    from spillway.render import junit
    from spillway.gate.baseline import load_baseline, recorded_model  # pydantic: imported only when used
    from spillway.gate.check import check
    from spillway.gate.flags import build_flags, compare as compare_flags, declared_flags
    from spillway.gate.metrics import needs_code, parse_metrics
    from spillway.gate.reading import read_sources

    fmt = chosen_format(args)
    if args.flags is not None:
        declared_flags(args.flags)      # a usage error before anything is read
    gate = parse_metrics(args.gate) if args.gate is not None else None
    options = read_options(args)
    outputs = Outputs(args.paths + [args.baseline], force=args.force)
    outputs.claim(args.output, "-o")
    outputs.claim(args.junit, "--junit")
    if not os.path.exists(args.baseline):
        remedy = Remedy(args.paths, args.baseline, (), options.targets)
        raise UsageError(f"--baseline {args.baseline}: no such file; write it with: {remedy.write_missing()}")
    baseline = load_baseline(args.baseline)
    if args.occupancy_model is None:
        # The figures are compared with the baseline's, so by default they follow its model
        # (a version-1 baseline names none: llvm22).
        options.occupancy_model = recorded_model(baseline)
    # The machine-code gates (loop_scratch, agpr_copies) read the code as report --isa does.
    options.isa = needs_code(gate or baseline.gate)
    with progress_shown(args.paths, options):
        inputs = read_sources(args.paths, options)
    result = check(inputs.usage, baseline, gate or baseline.gate, targets=options.targets,
                   baseline_path=args.baseline, occupancy_model=options.occupancy_model)
    flags_differ = compare_flags(baseline.provenance.flags, build_flags(args.flags, inputs.files))
    if args.occupancy_model is None and "occupancy" in result.gate:
        # After the read, so that an input error stays one line.
        print(f"spillway: occupancy follows the {options.occupancy_model} model the baseline was written "
              f"with (--occupancy-model to change)", file=sys.stderr)
    remedy = Remedy(args.paths, args.baseline, tuple(baseline.gate), options.targets)
    # The failures' machine code, where text shows them (the verdict, Markdown).
    args.failure_code = None
    if fmt in ("table", "markdown", "github") or args.output not in (None, "-"):
        args.failure_code = failing_code(result, args, options)
    suite = args.suite or junit.suite_name_for(args.baseline)
    removals = remedy.removals()
    if args.junit:
        junit.write(args.junit, result, suite, remedy.accept, removals)
    to_file = args.output not in (None, "-")
    if fmt == "json":
        write(args.output, dump_json(result.to_json()))
    elif fmt == "junit":
        write(args.output, junit.document_chunks(result, suite, remedy.accept, removals))
    elif fmt == "markdown":
        write(args.output, markdown_marker("check") + _markdown(result, args, remedy))
    elif fmt == "tsv":
        from spillway.render.tsv import check_tsv_rows
        from spillway.render.table import tsv

        write(args.output, tsv(CHECK_TSV_FIELDS, check_tsv_rows(result)))   # (removals: metric "built")
    elif fmt == "github":
        _github(result, args, remedy)
    elif fmt == "sarif":
        write(args.output, _sarif(result, args, remedy))
    elif fmt == "html":
        from spillway.render.html import check_page

        write(args.output, check_page(result, args.paths, remedy.accept_all(result)[0] if result.failures else "",
                                      removals.every(result)[0] if result.vanished or result.removed_targets else ""))
    elif to_file:
        buffer = io.StringIO()
        print_result(result, args, remedy, buffer)
        write(args.output, text_marker("check") + buffer.getvalue())
    # The verdict goes to stdout unless the document itself did.
    if fmt == "table" or (to_file and fmt != "github"):
        print_result(result, args, remedy)
    if flags_differ is not None:
        # One line on stderr, after the verdict: the documents on stdout and in files stay what they were.
        print(f"spillway: {'error' if args.strict_flags else 'warning'}: {visible(flags_differ.sentence())}"
              + (" [--strict-flags]" if args.strict_flags else ""), file=sys.stderr)
    return 0 if result.passed and not (args.strict_flags and flags_differ is not None) else 1


def failing_code(result: CheckResult, args, options):
    """The machine code of the failures the text shows (``--limit``), by (target, key): the binaries
    among the inputs read again for them (report JSON inputs have none to decode). None when the
    check passed."""
    if not result.failures:
        return None
    from spillway.gate.failure_code import failures_code
    from spillway.gate.reading import sniff_json
    from spillway.report.kernel_code import evidence_of_kernels
    from spillway.render.table import limited

    binaries = [p for p in args.paths if not sniff_json(p)]
    if not binaries:
        return None
    shown, _hidden = limited(result.failures, args.limit)
    return failures_code(evidence_of_kernels(binaries, options, {(f.target, f.key) for f in shown}))


def _sarif(result: CheckResult, args, remedy: Remedy) -> bytes:
    from pathlib import Path

    from spillway.render import sarif

    with open(args.baseline, "rb") as handle:   # read again for its lines: load_baseline read it whole too
        lines = handle.read()
    category = sarif.category_for("check", Path(args.baseline).stem)
    return sarif.document([sarif.check_run(result, lines, category, remedy.accept, remedy.removals())])


def _markdown(result: CheckResult, args, remedy: Remedy) -> str:
    from spillway.render.markdown import check_markdown

    accept_all = None
    if result.failures:
        accept_all, _ = remedy.accept_all(result)
    return check_markdown(result, limit=args.limit, names=args.names, accept_all=accept_all,
                          code=getattr(args, "failure_code", None), removals=remedy.removals())


def _github(result: CheckResult, args, remedy: Remedy) -> None:
    from spillway.render.github import append_step_summary, check_annotations, print_annotations

    summary = _markdown(result, args, remedy)
    append_step_summary(summary)
    if args.output not in (None, "-"):
        write(args.output, markdown_marker("check") + summary)
    print_annotations(check_annotations(result, args.baseline, remedy.accept, args.names, remedy.removals()))
    print_result(result, args, remedy)


def print_result(result: CheckResult, args, remedy: Remedy, file=None) -> None:
    from spillway.render.table import print_check
    from spillway.render.table import console as make_console

    print_check(result, make_console(file), limit=args.limit, names=args.names, accept=remedy.accept,
                accept_all=remedy.accept_all, code=getattr(args, "failure_code", None), removals=remedy.removals())
