"""Reading spillway's text tables back, for the width tests (issue 25: no
figure and no header cut, never two kernels alike).

A table is found by its last header line, the one holding the ``kernel`` and
``target`` headers (single-line headers sit on the last line of a folded
header); its rows are the lines after it whose target column holds a target
(``gfx...``) or that continue the row above (blank up to the target column).
Everything left of the target column is name-like (file, status, kernel
name) and may elide with ``…``; nothing right of it may, nor any header line,
and no row may fold onto a second line (but the matrix table's figure lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ELLIPSIS = "…"
# The matrix table's lines under a kernel's first (render.table.FIGURE_ROWS); any other
# line continuing a row is a row folded by rich: a table that did not fit.
FIGURE_LINES = {"VGPRs", "spills", "scratch", "waves"}
_RULE = re.compile(r"^[\s─━╶╴-]+$")


@dataclass
class Table:
    header: list[str]                         # the header's lines, the last one holding kernel and target
    target_at: int                            # where the target column starts
    kernel_at: int
    rows: list[str] = field(default_factory=list)
    folded: list[str] = field(default_factory=list)   # continuation lines that are not a figure's line

    def cells(self, row: str) -> tuple[str, str]:
        """(the kernel label, the target) of a row (blank on a continuation line)."""
        label = row[self.kernel_at:self.target_at].strip()
        target = row[self.target_at:].split(" ", 1)[0] if len(row) > self.target_at else ""
        return label, target


def tables(text: str) -> list[Table]:
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        words = line.split()
        if line.startswith("|") or "kernel" not in words or "target" not in words:
            continue
        if ":" in line or words.index("kernel") > words.index("target"):
            continue            # a sentence naming a kernel and a target ("no longer built: target ..."), no header
        kernel_at = re.search(r"(^|\s)kernel(\s|$)", line)
        target_at = re.search(r"(^|\s)target(\s|$)", line)
        assert kernel_at and target_at
        k = kernel_at.start() + (1 if kernel_at.group(1) else 0)
        t = target_at.start() + (1 if target_at.group(1) else 0)
        header = [line]
        above = index - 1
        # A folded header's lines above: text right of the name column only.
        while above >= 0 and lines[above].strip() and not lines[above][:k].strip() and len(header) < 3:
            header.insert(0, lines[above])
            above -= 1
        table = Table(header, t, k)
        for row in lines[index + 1:]:
            if _RULE.match(row) and row.strip():
                continue                          # a terminal's header rule
            if len(row) > t and (row[t:].startswith("gfx") or (not row[:t].strip() and row[t:].strip())):
                table.rows.append(row)
            else:
                break
            if not row[t:].startswith("gfx") and row[t:].split()[0] not in FIGURE_LINES:
                table.folded.append(row)
        found.append(table)
    return found


def problems(text: str, width: int) -> list[str]:
    """What is wrong with the tables of ``text`` at ``width`` columns: a table
    line longer than the width, an ellipsis in a header or right of the name
    column (a cut figure or target), a table with no rows."""
    out = []
    found = tables(text)
    if not found:
        out.append("no table found")
    for table in found:
        for line in table.header + table.rows:
            if len(line) > width:
                out.append(f"longer than {width}: {line!r}")
        for line in table.header:
            if ELLIPSIS in line:
                out.append(f"a header cut: {line!r}")
        for row in table.rows:
            if ELLIPSIS in row[table.target_at:]:
                out.append(f"a figure or target cut: {row!r}")
        for row in table.folded:
            out.append(f"a row folded onto another line: {row!r}")
        if not table.rows:
            out.append(f"a table without rows under {table.header[-1]!r}")
    return out


def labels(table: Table) -> list[tuple[str, str]]:
    """(label, target) of each row that starts a kernel (not a continuation line)."""
    out = []
    for row in table.rows:
        label, target = table.cells(row)
        if label:
            out.append((label, target))
    return out
