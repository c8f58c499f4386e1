"""``spillway baseline write PATH... -o FILE --note TEXT``: write or update a
baseline.  Updating tightens allowances that went down; an allowance goes up
only for kernels named with ``--allow KEY_PATTERN`` or ``--allow-key KEY`` and
``--reason TEXT``.  When some
would have gone up without --allow the file is still written (with the old
allowances for those kernels and every tightening) and the exit status is 1."""

from __future__ import annotations

import argparse
import dataclasses
import os

from spillway.errors import UsageError
from spillway.constants import DEFAULT_GATE_NAMES, metrics_help
from spillway.cli.common import add_read_options, progress_shown, read_options

def register(subparsers) -> None:
    parser = subparsers.add_parser("baseline", help="write or update a baseline file",
                                   description="Baseline files hold per-kernel allowances for one toolchain.")
    commands = parser.add_subparsers(dest="baseline_command", metavar="ACTION")
    commands.required = True
    write = commands.add_parser(
        "write", help="write a baseline from a build, or update an existing one",
        description="Write a baseline from a build. If FILE exists it is updated: allowances that went down "
                    "are tightened; one that would go up keeps its old value unless --allow or --allow-key names "
                    "the kernel (the file is then still written, and the exit status is 1). Kernels new to the "
                    "baseline start from zero scratch and zero spills.")
    write.add_argument("paths", nargs="+", metavar="PATH",
                       help="binaries, objects, archives, code objects, wheels, directories, or spillway "
                            "report JSON files")
    write.add_argument("-o", "--output", required=True, metavar="FILE",
                       help="the baseline file: updated when it exists (never one of the PATHs)")
    write.add_argument("--force", action="store_true",
                       help="replace an existing FILE that is not a spillway baseline (never an input of the run)")
    write.add_argument("--note", metavar="TEXT",
                       help="what the baseline describes (required for a new file; kept when updating)")
    write.add_argument("--gate", metavar="METRICS",
                       help=f"{metrics_help()} (default: kept when updating, else "
                            f"{','.join(DEFAULT_GATE_NAMES)})")
    write.add_argument("--record-all", action="store_true",
                       help="record every kernel read; by default only kernels whose gated metrics are non-zero "
                            "(with scratch and spills: those that use scratch or spill) are written, the rest "
                            "being held to zero; the occupancy, vgprs and lds gates always record every kernel")
    write.add_argument("--allow", action=_Accept, default=[], metavar="KEY_PATTERN",
                       help="let these kernels' allowances go up (exact name or glob, matched against the "
                            "stable key and the demangled name; repeatable)")
    write.add_argument("--allow-key", action=_Accept, dest="allow", metavar="KEY",
                       help="let this kernel's allowances go up: its stable key, matched character for "
                            "character, never a glob (what check prints; repeatable)")
    write.add_argument("--allow-removed", action=_Accept, default=[], metavar="KEY_PATTERN",
                       help="accept that these baseline kernels are no longer built (as --allow matches them): they "
                            "leave the baseline, the removal and its reason are recorded in it; without it a "
                            "kernel no longer built is kept (check fails on it) and the exit status is 1")
    write.add_argument("--allow-removed-key", action=_Accept, dest="allow_removed", metavar="KEY",
                       help="as --allow-removed, for the kernel whose stable key is KEY, character for character "
                            "(what check prints)")
    write.add_argument("--allow-removed-target", action=_Accept, default=[], metavar="TARGET",
                       help="accept that the build no longer has this target (a target ID, or a processor for its "
                            "variants): its kernels leave the baseline, the removal and its reason are recorded")
    write.add_argument("--reason", action="append", default=[], metavar="TEXT",
                       help="why, stored with what each --allow, --allow-key, --allow-removed, --allow-removed-key "
                            "and --allow-removed-target matched (one for all of them, or one each, in their order)")
    write.add_argument("--flags", metavar="TEXT",
                       help="the build's code-generation flags, as shell words (--flags='-O3 -foffload-lto'; "
                            "recorded in the baseline; check "
                            "warns when a build's differ); default: those of the command lines the compiler "
                            "recorded in the code objects (clang -frecord-command-line), else not recorded")
    add_read_options(write)
    write.set_defaults(run=run_write)


class _Accept(argparse.Action):
    """--allow, --allow-key, --allow-removed, --allow-removed-key, --allow-removed-target: each
    value in its own list, and in ``accepts`` in command-line order, which --reason follows when
    there is one each.  The ``-key`` forms name a stable key exactly (never a glob)."""

    def __call__(self, parser, namespace, values, option_string=None):
        value = (values, bool(option_string and option_string.endswith("-key")), option_string)
        getattr(namespace, self.dest).append(value)
        accepts = getattr(namespace, "accepts", None) or []
        namespace.accepts = [*accepts, (self.dest, value)]


def _allows(args) -> dict[str, list]:
    """{"allow": [Allow], "allow_removed": [Allow], "allow_removed_target": [(target, reason)]}:
    one --reason for every accept, or one each in the order they were given."""
    from spillway.gate.baseline import Allow

    accepts = getattr(args, "accepts", None) or []
    out: dict[str, list] = {"allow": [], "allow_removed": [], "allow_removed_target": []}
    if not accepts:
        if args.reason:
            raise UsageError("--reason goes with --allow KEY_PATTERN or --allow-key KEY (or --allow-removed, "
                             "--allow-removed-key, --allow-removed-target)")
        return out
    first = accepts[0][1][2]
    if not args.reason:
        raise UsageError(f"{first} needs --reason TEXT (it is kept in the baseline)")
    if any(not r.strip() for r in args.reason):
        raise UsageError("--reason must not be empty")
    if len(args.reason) == 1:
        reasons = args.reason * len(accepts)
    elif len(args.reason) != len(accepts):
        options = "--allow/--allow-key" if all(kind == "allow" for kind, _ in accepts) else \
            "--allow, --allow-key, --allow-removed, --allow-removed-key or --allow-removed-target"
        raise UsageError(f"{len(accepts)} {options} but {len(args.reason)} --reason: give one --reason for "
                         f"all, or one each")
    else:
        reasons = args.reason
    for (kind, (value, exact, option)), reason in zip(accepts, reasons):
        if kind == "allow_removed_target":
            out[kind].append((value, reason))
        else:
            out[kind].append(Allow(value, reason, exact, option))
    return out


def run_write(args) -> int:
    from spillway.cli.output import Outputs, schema_of
    from spillway.gate.baseline import SourceHasher, build, load_baseline, recorded_model  # (pydantic)
    from spillway.render.emit import emit
    from spillway.render.models import BaselineWriteModel
    from spillway.gate.flags import build_flags, declared_flags
    from spillway.gate.metrics import DEFAULT_GATE, needs_code, parse_metrics
    from spillway.gate.reading import read_sources

    allows = _allows(args)
    if args.flags is not None:
        declared_flags(args.flags)      # a usage error before anything is read
    gate = parse_metrics(args.gate) if args.gate is not None else None

    Outputs(args.paths, force=args.force).claim(args.output, "-o", routine=True)
    exists = os.path.exists(args.output)
    if exists and schema_of(args.output) != "spillway.baseline" and not args.force:
        raise UsageError(f"-o {args.output}: exists and is not a spillway baseline; choose another file, or pass "
                         f"--force to replace it")
    replace = exists and args.force and schema_of(args.output) != "spillway.baseline"
    previous = load_baseline(args.output) if exists and not replace else None
    if gate is None:
        gate = tuple(previous.gate) if previous else DEFAULT_GATE
    # loop_scratch, agpr_copies: the machine code is read too.  An update keeps the occupancy
    # model the baseline was written with (version 1: llvm22), so its occupancy floors are
    # compared with figures of the same arithmetic.
    options = read_options(args)
    model = recorded_model(previous) if previous is not None and args.occupancy_model is None else None
    options = dataclasses.replace(options, isa=needs_code(gate), occupancy_model=model or options.occupancy_model)
    hasher = SourceHasher(args.paths)
    # The inputs are hashed a piece at a time while the workers read them.
    with progress_shown(args.paths, options, also=hasher.advance) as shown:
        inputs = read_sources(args.paths, shown)
    result = build(inputs, note=args.note, gate=gate, previous=previous, allows=allows["allow"],
                   targets=options.targets, record_all=args.record_all, digests=hasher.digests(),
                   flags=build_flags(args.flags, inputs.files), allow_removed=allows["allow_removed"],
                   allow_removed_targets=allows["allow_removed_target"])
    emit(BaselineWriteModel(result, args.output, tuple(args.paths), args.gate,
                            ",".join(args.target) if args.target else None), "json", args.output)
    return 1 if result.kept else 0
