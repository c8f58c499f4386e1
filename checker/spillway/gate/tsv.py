"""The rows of the TSV renderings of a check and of a comparison (their
header lines are the CLI's, which registers them as spillway's)."""

from __future__ import annotations

from spillway.gate.check import CheckResult
from spillway.gate.compare import Comparison
from spillway.resources.occupancy import next_step_text


def check_tsv_rows(result: CheckResult):
    for f in result.findings:
        yield (f.target, f.name, f.key, f.metric, f.allowed, f.actual, f.passed, f.new_kernel, f.dynamic_stack)


def compare_tsv_rows(comparison: Comparison, everything: bool):
    """One row per kernel; ``next_step`` in report's words ("96 or fewer VGPRs for 7")."""
    for k in comparison.kernels:
        if not everything and k.status == "same":
            continue
        o, n = k.old, k.new
        yield (k.status, k.target, k.name, k.key, ",".join(k.worse), ",".join(k.better), o.vgprs, n.vgprs,
               o.vgpr_spills, n.vgpr_spills, o.sgpr_spills, n.sgpr_spills, o.scratch, n.scratch, o.dynamic_stack,
               n.dynamic_stack, o.occupancy, n.occupancy, next_step_text(k.occupancy_next))
    for status, group in (("added", comparison.only_new), ("removed", comparison.only_old)):
        for u in group:
            r = u.resources
            figures = (r.vgprs, r.vgpr_spills, r.sgpr_spills, r.scratch, r.dynamic_stack, r.occupancy)
            old, new = ((None,) * 6, figures) if status == "added" else (figures, (None,) * 6)
            # The next step is the new side's: a removed kernel has none.
            step = next_step_text(u.occupancy_next) if status == "added" else ""
            yield (status, u.target, u.name, u.key, "", "", *(v for pair in zip(old, new) for v in pair), step)
