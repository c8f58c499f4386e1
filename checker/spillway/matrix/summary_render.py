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
    from spillway.untrusted import markdown_word
    cells = summary.cells
    out = ["**spillway matrix**: per kernel, in each cell: VGPRs / spilled registers / scratch bytes per lane / "
           f"waves per SIMD (occupancy model {md_code(summary.occupancy_model)}; bold: spills or scratch).", ""]
    groups = ", ".join(f"{md_code(c.name)}: {' '.join(markdown_word(t) for t in summary.targets[c.name])}"
                       for c in cells)
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
        out.append(f"| {md_code(table_name(row[2]))} | {markdown_word(row[0])} | {values} |")
    out.append("")
    out.append(f"{shown} of {len(summary.rows)} kernel rows"
               + (" (only rows where the cells differ)" if differing_only else "") + ".")
    return "\n".join(out) + "\n"


# The terminal table's figures, one sub-row each: (label, the figure's text of a kernel's Resources).
FIGURE_ROWS = (
    ("VGPRs", lambda r: str(r.vgprs)),
    ("spills", lambda r: str(r.spills)),
    ("scratch", lambda r: f"{r.scratch}+dyn" if r.dynamic_stack else str(r.scratch)),
    ("waves", lambda r: "?" if r.occupancy is None else str(r.occupancy)),
)


def summary_table(summary: Summary, differing_only: bool = False, console=None, names: str = "short",
                  everything: bool = False):
    """The side-by-side table, fitting ``console`` (report.table.grid): one
    column per cell, a kernel and target per group of lines, one line per
    figure.  By default only the figures in which the cells differ, of the
    kernels where they differ (``everything``: every figure of every
    kernel): eight cells' four figures side by side are 160 columns, a figure
    a line fits 120 with the cells' names as headers (folded at ``-``), and
    80 with the cells numbered and a legend line.  ``differing_only`` is the
    default here (kept for the other renderings' flag)."""
    from spillway.report.table import Column, KernelName, console as make_console, grid

    console = console or make_console()
    columns = [Column("kernel", name=True), Column("target"), Column("")]
    columns += [Column(cell.name, "right", short=str(number)) for number, cell in enumerate(summary.cells, 1)]
    rows = []
    same = 0
    for row in summary.rows:
        values = [summary.value(cell.name, row) for cell in summary.cells]
        shown = []
        for label, text in FIGURE_ROWS:
            texts = [None if r is None else text(r) for r in values]
            if everything or len(set(texts) - {None}) > 1:
                shown.append((label, text, texts))
        if not shown:
            same += 1
            continue
        for index, (label, text, texts) in enumerate(shown):
            cells = [("-", "") if t is None else (t, "red" if label in ("spills", "scratch") and t != "0" else "")
                     for t in texts]
            rows.append([KernelName(row[2]) if index == 0 else "", row[0] if index == 0 else "", label, *cells])
    what = "every figure" if everything else "the figures in which the cells differ"
    table = grid(console, columns, rows, names=names, header_lines=3,
                 title=f"per kernel and target, {what}: VGPRs, spilled registers, scratch bytes per lane, "
                       f"waves per SIMD (occupancy model {summary.occupancy_model}; - not built)")
    return table, len(summary.rows) - same, same


def print_summary(console, summary: Summary, names: str = "short", everything: bool = False) -> None:
    """The table, then how many kernels it leaves out."""
    if len(summary.cells) < 2 and not everything:
        console.print(f"one cell built ({', '.join(c.name for c in summary.cells)}): nothing to set side by side "
                      f"(--all shows its {len(summary.rows)} kernel rows)", markup=False)
        return
    table, differing, same = summary_table(summary, console=console, names=names, everything=everything)
    if differing:
        console.print(table)
    kernels = len(summary.rows)
    if everything:
        console.print(f"{kernels} kernel rows; the cells differ in {differing}", markup=False)
    else:
        console.print(f"{differing} of {kernels} kernel rows differ between the cells; {same} are the same in "
                      f"every cell that built them (--all shows every kernel and figure)", markup=False)


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
