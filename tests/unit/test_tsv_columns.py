"""render.grid.tsv makes its cells a column at a time (untrusted.each_visible
over a column of text, numbers and booleans without a call per cell): the
document is, byte for byte, a tsv_cell per cell, whatever the rows hold (the
hostile names of tests/data/hostile, None, numbers, rows of other lengths) and
wherever a piece of rows ends."""

from __future__ import annotations

import importlib.util

import pytest

from spillway.render import grid
from spillway.render.grid import tsv_cell
from spillway.untrusted import utf8_shown

from conftest import DATA

_spec = importlib.util.spec_from_file_location("make_hostile", DATA / "hostile" / "make_hostile.py")
hostile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile)
HOSTILE = [*hostile.NAMES.values(), hostile.HOSTILE_TARGET, "tree/hostile\udcff.co", "a##", "[b", " ::x"]


def cell_by_cell(header, rows, order=None) -> bytes:
    """The document as it was made before: a tsv_cell call per cell, one string, encoded."""
    lines = ["\t".join(header)]
    for row in rows:
        shown = row if order is None else [row[i] for i in order]
        lines.append("\t".join([tsv_cell(v) for v in shown]))
    return utf8_shown("\n".join(lines) + "\n")


def rows_of(names: list[str]) -> list[tuple]:
    return [("gfx90a", f"_Z{i}v", name, "scratch", None if i % 7 == 3 else 16 * (i % 3), i, i % 2 == 0, True, False)
            for i, name in enumerate(names)]


@pytest.mark.parametrize("at_once", [1, 2, 3, 1024])
def test_the_columns_are_each_cells_tsv_cell(monkeypatch, at_once):
    monkeypatch.setattr(grid, "_TSV_ROWS_AT_ONCE", at_once)
    ordinary = ["void k<int>(float*)", "ns::k()", "é 𝔘"]
    names = [*ordinary, *HOSTILE, *ordinary, *HOSTILE[::-1], *ordinary]     # (each twice: the second time known)
    header = ("target", "key", "name", "metric", "allowed", "actual", "passed", "new", "dynamic")
    rows = rows_of(names)
    made = b"".join(grid.tsv(header, rows))
    assert made == cell_by_cell(header, rows)
    order = (0, 2, 1, 3, 4, 5, 6, 7, 8)
    assert b"".join(grid.tsv([header[i] for i in order], rows, order)) == cell_by_cell(
        [header[i] for i in order], rows, order)
    # Rows of other lengths (a piece of them is made cell by cell), and a row of none.
    ragged = [*rows[:4], ("x", "\x1b[31m"), (), *rows[4:]]
    assert b"".join(grid.tsv(header, ragged)) == cell_by_cell(header, ragged)
    assert b"\x1b" not in made and b"##[" not in made


def test_a_column_of_ordinary_text_is_taken_as_it_is():
    column = ("void k<int>(float*)", "gfx90a:sramecc+:xnack-", "ns::error::kernel")
    assert grid.tsv_column(column, set()) is column
    assert grid.tsv_column((1, 22, 1), set()) == ["1", "22", "1"]
    assert grid.tsv_column((True, False), set()) == ["true", "false"]
    assert grid.tsv_column((None, 3, True, "a\tb"), set()) == ["", "3", "true", "a\\tb"]
