"""The default report table (no --isa): the machine code of the printed rows
only, as two columns and a line under the table (on the committed ISA
fixtures, tests/data/isa/co)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from spillway.cli import main
from spillway.render.table import evidence_cells, evidence_line
from spillway.isa.evidence import kernel_ranges, evidence

CO = Path(__file__).resolve().parents[2] / "data" / "isa" / "co"
GFX90A = str(CO / "gfx90a.clang22.co")


def isa(loads=0, stores=0, in_loops=0, writes=0, reads=0, status="complete") -> dict:
    return {"scratch_loads": loads, "scratch_stores": stores, "scratch_in_loops": in_loops, "agpr_writes": writes,
            "agpr_reads": reads, "status": status}


def test_cells_and_line():
    assert evidence_cells(isa(3, 5, 4, 1, 2)) == ["4/8", "3"]
    assert evidence_cells(isa(3, 5, 4, 1, 2, status="invalid encoding at +0x10")) == ["4/8!", "3!"]
    rows = [{"isa": isa(3, 5, 4, 1, 2)}, {"isa": isa(10, 0, 0)}, {"isa": None}]
    assert evidence_line(rows, 200) == ("code of the 3 rows: 4 of 18 scratch accesses in loops (1 kernel), "
                                        "3 AGPR copies (1 kernel); 1 not read to the end (!)")
    narrow = evidence_line(rows, 40).splitlines()
    assert narrow == ["code of the 3 rows:", "  4 of 18 scratch accesses in loops (1 kernel),",
                      "  3 AGPR copies (1 kernel);", "  1 not read to the end (!)"]


def _figures(name: str):
    section, ranges = kernel_ranges(Path(GFX90A).read_bytes())
    found = next(r for r in ranges if r.name == name)
    return evidence(section, found.start, found.size, "gfx90a", bool(found.private_segment_buffer))


def test_table_shows_the_printed_rows_code(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["report", GFX90A]) == 0
    out = capsys.readouterr().out
    top, header, *rows = out.splitlines()           # the headers fold onto two lines
    at = header.index("loops copies")
    assert top[at:at + len("loops copies")].split() == ["in", "AGPR"]
    spill_in_loop = _figures("spill_in_loop")
    agpr_spill = _figures("agpr_spill")

    def code_cells(row: str) -> list[str]:          # right-aligned: each cell ends where its header ends
        loops_end = at + len("loops")
        return [row[:loops_end].split()[-1], row[loops_end:at + len("loops copies")].strip()]

    line = next(r for r in rows if r.startswith("spill_in_loop "))
    assert code_cells(line) == [f"{spill_in_loop.scratch_in_loops}/"
                                f"{spill_in_loop.scratch_loads + spill_in_loop.scratch_stores}", "0"]
    line = next(r for r in rows if r.startswith("agpr_spill "))
    assert code_cells(line)[-1] == str(agpr_spill.agpr_writes + agpr_spill.agpr_reads) != "0"
    listed = int(re.search(r"^(\d+) kernels using scratch of", out, re.M).group(1))
    assert rows[-1].startswith(f"code of the {listed} rows: ")


def test_narrow_table_keeps_the_figures_in_the_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["report", GFX90A]) == 0
    out = capsys.readouterr().out
    names = [line.split()[0] for line in out.splitlines()[2:] if line.split()[1:2] == ["gfx90a"]]
    copies = [_figures(name) for name in names]
    total = sum(c.agpr_writes + c.agpr_reads for c in copies)
    with_copies = sum(1 for c in copies if c.agpr_writes + c.agpr_reads)
    # the line under the table, whichever columns fit (it may wrap, never cut)
    assert f"{total} AGPR copies ({with_copies} kernel{'s' if with_copies != 1 else ''})" in out
    assert total >= 75 and with_copies >= 1
    assert all(len(line) <= 80 for line in out.splitlines())


def test_json_and_tsv_are_unchanged(capsys):
    assert main(["report", GFX90A, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert all("isa" not in k for k in document["kernels"])
    assert main(["report", GFX90A, "--format", "tsv"]) == 0
    assert "scratch_in_loops" not in capsys.readouterr().out
