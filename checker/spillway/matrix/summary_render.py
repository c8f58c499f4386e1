"""The renderings of the cells side by side (matrix.summary.Summary): the
terminal table, Markdown for a pull request, the JSON document."""

from __future__ import annotations

from spillway.matrix.summary import Summary


def figures(r, markdown: bool = False) -> str:
    """VGPRs / spilled registers / scratch B per lane / waves per SIMD."""
    if r is None:
        return "-"
    occupancy = "?" if r.occupancy is None else str(r.occupancy)
    scratch = f"{r.scratch}+dyn" if r.dynamic_stack else str(r.scratch)
    text = f"{r.vgprs} / {r.spills} / {scratch} / {occupancy}"
    if markdown and (r.spills or r.scratch or r.dynamic_stack):
        return f"**{text}**"
    return text


def summary_markdown(summary: Summary, differing_only: bool = False) -> str:
    from spillway.resources.names import table_name   # the name every table shows
    from spillway.report.markdown import md_code
    cells = summary.cells
    out = ["**spillway matrix**: per kernel, in each cell: VGPRs / spilled registers / scratch bytes per lane / "
           f"waves per SIMD (occupancy model {md_code(summary.occupancy_model)}; bold: spills or scratch).", ""]
    groups = ", ".join(f"{md_code(c.name)}: {' '.join(summary.targets[c.name])}" for c in cells)
    out.append(f"Targets built: {groups}. Rows `gfx11` hold each cell's gfx11 target.")
    out.append("")
    out.append("| kernel | target | " + " | ".join(md_code(c.name) for c in cells) + " |")
    out.append("|---|---|" + "--:|" * len(cells))
    shown = 0
    for row in summary.rows:
        if differing_only and not summary.differs(row):
            continue
        shown += 1
        values = " | ".join(figures(summary.value(c.name, row), True) for c in cells)
        out.append(f"| {md_code(table_name(row[2]))} | {row[0]} | {values} |")
    out.append("")
    out.append(f"{shown} of {len(summary.rows)} kernel rows"
               + (" (only rows where the cells differ)" if differing_only else "") + ".")
    return "\n".join(out) + "\n"


def summary_table(summary: Summary, differing_only: bool = False, console=None, names: str = "short"):
    """The side-by-side table, fitting ``console`` (report.table.grid; names
    through names.table_name like every other table)."""
    from spillway.report.table import Column, KernelName, console as make_console, grid

    console = console or make_console()
    columns = [Column("kernel", name=True), Column("target")]
    columns += [Column(cell.name, "right") for cell in summary.cells]
    rows = []
    for row in summary.rows:
        if differing_only and not summary.differs(row):
            continue
        values = []
        for cell in summary.cells:
            r = summary.value(cell.name, row)
            values.append((figures(r), "red" if r is not None and (r.spills or r.scratch) else ""))
        rows.append([KernelName(row[2]), row[0], *values])
    return grid(console, columns, rows, names=names,
                title="per kernel: VGPRs / spilled registers / scratch B/lane / waves per SIMD "
                      f"(occupancy model {summary.occupancy_model})")


def summary_json(summary: Summary) -> dict:
    from spillway import __version__
    from spillway.matrix.documents import MATRIX_SUMMARY_SCHEMA
    return {
        "schema": MATRIX_SUMMARY_SCHEMA,
        "spillway_version": __version__,
        "occupancy_model": summary.occupancy_model,
        "cells": [{"name": c.name, "toolchain": c.toolchain(), "targets": summary.targets[c.name]}
                  for c in summary.cells],
        "kernels": [{"name": row[2], "key": row[1], "target": row[0],
                     "cells": {c.name: (None if summary.value(c.name, row) is None
                                        else summary.value(c.name, row).as_dict()) for c in summary.cells}}
                    for row in summary.rows],
    }
