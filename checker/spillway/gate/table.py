"""The terminal table of a comparison (the check's is printed by cli.check)."""

from __future__ import annotations

from spillway.gate.compare import Comparison, selected
from spillway.gate.wording import cells, diff_next_step


NEXT_STEP = "next step"


def compare_table(comparison: Comparison, everything: bool = False, limit: int = 0, console=None, names: str = "short"):
    """(rich table fitting ``console``, rows shown, rows hidden by ``limit``)."""
    from spillway.report.table import Column, console as make_console, grid
    from spillway.resources.names import table_name

    console = console or make_console()
    rows, hidden = selected(comparison, everything, limit)
    columns = [Column(""), Column("kernel", name=True), Column("target")]
    columns += [Column(h, "right") for h in ("VGPRs", "spilled VGPRs", "scratch B/lane", "waves/SIMD")]
    style = {"worse": "red", "mixed": "yellow", "better": "green", "same": ""}
    cells_ = [[(diff.status, style[diff.status]), table_name(diff.name, names), diff.target, *cells(diff, " → ")]
              for diff in rows]
    steps = [diff_next_step(diff, " → ") for diff in rows]
    if any(steps):
        # Left out first on a narrow output (the CLI then lists the steps of the rows whose occupancy changed).
        columns.append(Column(NEXT_STEP, drop=1))
        for row, step in zip(cells_, steps):
            row.append(step)
    return grid(console, columns, cells_, names=names), len(rows), hidden
