"""``--format html`` of ``matrix compare`` (several cells) and ``matrix run``:
the Summary model (matrix.summary) as the data of report.html's page --
kernels x cells, each cell's figures, next step and occupancy curve, and each
cell's verdict on a run.  (Two cells compared: gate.html's compare page.)"""

from __future__ import annotations

from typing import Optional

from spillway.matrix.summary import Summary, target_group
from spillway.report.html import Curves, page
from spillway.resources.occupancy import next_step_text

METRICS = ("vgprs", "agprs", "sgprs", "spills", "scratch", "lds", "occupancy")


def _figures(usage) -> Optional[list]:
    if usage is None:
        return None
    r = usage.resources
    return [r.vgprs, r.agprs, r.sgprs, r.spills, r.scratch, r.lds, r.occupancy]


def summary_page(summary: Summary, verdicts: Optional[list[dict]] = None, title: str = "spillway matrix") -> bytes:
    """``verdicts``: ``[{"cell", "verdict", "reason"}]`` of a run, in order."""
    curves = Curves(summary.occupancy_model)
    processors = sorted({p for built in summary.targets.values() for p in built})
    group_curves: dict[str, Optional[str]] = {}
    rows = []
    for row in summary.rows:
        group, key, name = row
        if group not in group_curves:
            # The group's curve: its first processor built (gfx11 is one row for gfx1100 and gfx1151).
            target = next((p for p in processors if target_group(p) == group), group)
            group_curves[group] = curves.key(target)
        found = [summary.usage[c.name].get((group, key)) for c in summary.cells]
        steps = [None if u is None else {"text": next_step_text(u.occupancy_next), "next": u.occupancy_next}
                 for u in found]
        isa = [getattr(u, "isa", None) for u in found]
        rows.append([group, key, name, summary.differs(row), [_figures(u) for u in found], steps,
                     isa if any(isa) else None])
    differing = sum(1 for r in rows if r[3])
    data = {
        "occupancy_model": summary.occupancy_model,
        "cells": [{"name": c.name, "toolchain": c.toolchain(), "targets": summary.targets.get(c.name, []),
                   "kernels": len(summary.usage[c.name])} for c in summary.cells],
        "metrics": METRICS,
        "rows": rows,
        "group_curves": group_curves,
        "curves": {key: value for key, value in curves.by_key.items() if value is not None},
        "verdicts": verdicts or [],
        "notes": [f"{len(rows)} kernels (name and target group; gfx11 parts are one row), {differing} where the "
                  f"cells' VGPRs, spills, scratch or waves differ. A cell is coloured against the reference cell: "
                  f"red worse, green better, grey not built there. Click a kernel for its figures per cell and "
                  f"its target's occupancy curves (work-groups of 1024 work-items and HIP's default wave size: "
                  f"the cells' records keep no launch bounds)."],
    }
    return page("matrix", title, data)
