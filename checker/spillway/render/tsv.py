"""The rows of the TSV renderings of a check and of a comparison (their
header lines are the CLI's, which registers them as spillway's)."""

from __future__ import annotations

from spillway.gate.check import CheckResult
from spillway.gate.compare import Comparison
from spillway.resources.occupancy import next_step_text


def check_tsv_rows(result: CheckResult):
    """One row per kernel and metric; then a failing row, metric ``built``, per target no
    longer built (name and key empty) and per baseline kernel no longer built."""
    for f in result.findings:
        yield (f.target, f.name, f.key, f.metric, f.allowed, f.actual, f.passed, f.new_kernel, f.dynamic_stack)
    for t in result.removed_targets:
        yield (t.target, "", "", "built", None, None, False, False, False)
    for target, key, name in result.vanished:
        yield (target, name, key, "built", None, None, False, False, False)


def compare_tsv_rows(comparison: Comparison, everything: bool):
    """One row per kernel; ``next_step`` in report's words ("96 or fewer VGPRs for 7"); with
    ``comparison.code`` (--isa) CODE_TSV_FIELDS after it (empty for kernels on one side)."""
    for k in comparison.kernels:
        if not everything and k.status == "same":
            continue
        o, n = k.old, k.new
        row = (k.status, k.target, k.name, k.key, ",".join(k.worse), ",".join(k.better), o.vgprs, n.vgprs,
               o.vgpr_spills, n.vgpr_spills, o.sgpr_spills, n.sgpr_spills, o.scratch, n.scratch, o.dynamic_stack,
               n.dynamic_stack, o.occupancy, n.occupancy, next_step_text(k.occupancy_next))
        yield (*row, *_code_cells(k)) if comparison.code else row
    for status, group in (("added", comparison.only_new), ("removed", comparison.only_old)):
        for u in group:
            r = u.resources
            figures = (r.vgprs, r.vgpr_spills, r.sgpr_spills, r.scratch, r.dynamic_stack, r.occupancy)
            old, new = ((None,) * 6, figures) if status == "added" else (figures, (None,) * 6)
            # The next step is the new side's: a removed kernel has none.
            step = next_step_text(u.occupancy_next) if status == "added" else ""
            one_side: tuple = (status, u.target, u.name, u.key, "", "", *(v for pair in zip(old, new) for v in pair),
                               step)
            yield (*one_side, *("",) * _CODE_CELLS) if comparison.code else one_side


# compare --isa: what each kernel's code did (KernelDiff.code_verdict, code_notes), each side's code hashes
# and figures (the CLI's CODE_TSV_FIELDS).
_CODE_CELLS = 10


def _code_cells(k) -> tuple:
    old, new = k.old_code, k.new_code
    figures = []
    for code in (old, new):
        figures.append(None if code is None else (",".join(code.code_sha256), code.scratch_bytes,
                                                   code.scratch_in_loops, code.agpr_copies))
    pairs = [(None if figures[0] is None else figures[0][i], None if figures[1] is None else figures[1][i])
             for i in range(4)]
    return (k.code_verdict, ",".join(k.code_notes()), *(v for pair in pairs for v in pair))
