"""``--format html`` of compare and check: their models (gate.compare's
Comparison, gate.check's result) as the data of report.html's page.

A comparison of two ROCm libraries has hundreds of thousands of kernels: the
page carries the totals over every kernel, the kernels whose figures changed
and the added and removed kernels that use scratch, at most report.html.ROW_CAP
of them (the JSON output keeps everything), and says so.
"""

from __future__ import annotations

from typing import Optional

from spillway.gate.compare import Comparison, KernelDiff, uses_scratch
from spillway.gate.kernels import KernelUsage, Resources
from spillway.gate.totals import FIGURES as FIGURE_OF
from spillway.report.html import ROW_CAP, Curves, Names, page
from spillway.resources.occupancy import next_step_text

FIGURES = ("vgprs", "agprs", "sgprs", "vgpr_spills", "sgpr_spills", "spills", "scratch", "lds", "occupancy")
# ("name": an index into the page's list of names: a library's kernels share few long names)
ROW_FIELDS = ("status", "target", "name",
              *(f"{side}_{f}" for f in FIGURES for side in ("old", "new")),
              "next_text", "next", "curve", "old_isa", "new_isa")
TOTALLED = (("scratch", "scratch bytes per lane"), ("spills", "spilled registers"), ("vgprs", "VGPRs"))


def _figure(resources: Optional[Resources], name: str):
    if resources is None:
        return None
    return resources.spills if name == "spills" else getattr(resources, name)


def _code(code) -> Optional[dict]:
    """A side's code evidence (compare --isa: gate.kernels.CodeFigures) for the kernel's detail."""
    if code is None:
        return None
    # The names of compare --isa --json's code objects.
    return {"code_sha256": ", ".join(code.code_sha256), "scratch_bytes": code.scratch_bytes,
            "scratch_in_loops": code.scratch_in_loops, "agpr_copies": code.agpr_copies, "complete": code.complete}


def _row(status: str, target: str, name: int, old: Optional[Resources], new: Optional[Resources],
         step: Optional[dict], curve: Optional[str], old_code=None, new_code=None) -> list:
    row: list = [status, target, name]
    for f in FIGURES:
        row += [_figure(old, f), _figure(new, f)]
    return row + [next_step_text(step), step, curve, _code(old_code), _code(new_code)]


def totals_data(comparison: Comparison) -> dict:
    """The comparison's totals (gate.totals, the one definition every format
    shows) as the page draws them: per metric the matched pairs' sums before and
    after and each side's sums; the kernels losing and gaining waves."""
    found = comparison.totals()
    metrics = []
    for name, label in TOTALLED:
        matched = found.metric(name)
        metrics.append({"metric": name, "label": label, "old": matched.old, "new": matched.new,
                        "kernels": matched.kernels, "added": getattr(found.added, name),
                        "removed": getattr(found.removed, name)})
    return {"matched": found.matched, "metrics": metrics, "losing_waves": found.losing_waves,
            "gaining_waves": found.gaining_waves}


def top_data(comparison: Comparison) -> dict:
    """Per metric, the largest regressions and improvements (gate.totals):
    ``[name, target, old, new]``."""
    return {ranked.metric: {side: [[d.name, d.target, FIGURE_OF[ranked.metric](d.old), FIGURE_OF[ranked.metric](d.new)]
                                   for d in pairs]
                            for side, pairs in (("worse", ranked.regressions), ("better", ranked.improvements))}
            for ranked in comparison.totals().top}


def compare_page(comparison: Comparison, *, title: str = "spillway compare", extra: Optional[dict] = None) -> bytes:
    curves = Curves(comparison.occupancy_model)
    changed: list[KernelDiff] = [k for k in comparison.kernels if k.old != k.new]
    added = [u for u in comparison.only_new if uses_scratch(u.resources)]
    removed = [u for u in comparison.only_old if uses_scratch(u.resources)]
    names = Names()
    rows = []
    for k in changed[:ROW_CAP]:
        rows.append(_row(k.status, k.target, names(k.name), k.old, k.new, k.occupancy_next, curves.key(k.target),
                         k.old_code, k.new_code))
    room = max(ROW_CAP - len(rows), 0)
    one_side: list[tuple[str, KernelUsage]] = [("added", u) for u in added] + [("removed", u) for u in removed]
    for status, u in one_side[:room]:
        old, new = (None, u.resources) if status == "added" else (u.resources, None)
        rows.append(_row(status, u.target, names(u.name), old, new, u.occupancy_next if status == "added" else None,
                         curves.key(u.target)))
    unchanged = len(comparison.kernels) - len(changed)
    notes = [f"The table lists the {len(changed)} kernels on both sides whose figures changed (not the {unchanged} "
             f"unchanged ones), and the added and removed kernels that use scratch or spill ({len(added)} of "
             f"{len(comparison.only_new)} added, {len(removed)} of {len(comparison.only_old)} removed); totals and "
             f"counts are over every kernel. The JSON output (--format json) lists every kernel."]
    if len(changed) + len(one_side) > len(rows):
        notes.append(f"This page holds the first {len(rows)} of those {len(changed) + len(one_side)} rows.")
    counts = {{"only_new": "added", "only_old": "removed"}.get(k, k): v for k, v in comparison.count().items()}
    data = {
        "new": comparison.new_sources, "old": comparison.old_sources,
        "occupancy_model": comparison.occupancy_model,
        "summary": counts, "sentence": comparison.sentence(),
        "totals": totals_data(comparison), "top": top_data(comparison),
        "figures": ROW_FIELDS, "rows": rows,
        "names": names.coded(rows, ROW_FIELDS.index("name")), "name_at": ROW_FIELDS.index("name"),
        "curves": {key: value for key, value in curves.by_key.items() if value is not None},
        "notes": notes,
    }
    return page("compare", title, dict(data, **(extra or {})))


# -- check -------------------------------------------------------------------------------

CHECK_FIELDS = ("kind", "name", "target", "metric", "recorded", "now", "message", "failing", "curve")


def check_page(result, sources: list[str], accept: str = "", accept_removed: str = "") -> bytes:
    """``check --format html``: the verdict, the counts, and the findings over
    their allowance, the kernels not in the baseline and the kernels and
    targets no longer built (kernels within their allowance are counted, not
    listed); ``accept``, ``accept_removed``: the commands that accept them."""
    curves = Curves(result.occupancy_model)
    names = Names()
    rows: list[list] = []
    for f in result.failures:
        rows.append(["over" if not f.new_kernel else "new, over", names(f.name), f.target, f.metric, f.allowed,
                     f.actual, f.message(), True, curves.key(f.target)])
    for target, _key, name in result.new_kernels:
        rows.append(["not in baseline", names(name), target, "", None, None, "kernel not in the baseline", False,
                     curves.key(target)])
    for removed in result.removed_targets:
        rows.append(["target no longer built", names(""), removed.target, "", None, None, removed.line(), True,
                     curves.key(removed.target)])
    for target, _key, name in result.vanished:
        rows.append(["no longer built", names(name), target, "", None, None, "baseline kernel no longer built", True,
                     curves.key(target)])
    counts = result.counts()
    flat = {k: v for k, v in counts.items() if not isinstance(v, dict)}
    flat.update({f"over: {metric}": n for metric, n in counts["by_metric"].items()})
    data = {
        "sources": sources, "baseline": result.baseline_path, "gate": list(result.gate),
        "occupancy_model": result.occupancy_model,
        "verdict": "pass" if result.passed else "fail", "sentence": result.summary(), "counts": flat,
        "figures": CHECK_FIELDS, "rows": rows[:ROW_CAP], "names": names.coded(rows, CHECK_FIELDS.index("name")),
        "name_at": CHECK_FIELDS.index("name"),
        "curves": {key: value for key, value in curves.by_key.items() if value is not None},
        "notes": ["Kernels within their allowance are counted, not listed; the JSON output lists every failure."
                  + (f" Accept these figures with: {accept}" if accept else "")
                  + (f" Accept the removals with: {accept_removed}" if accept_removed else "")]
                 + [f"Note: {note.line()}" for note in result.fewer_kernels],
    }
    return page("check", "spillway check", data)
