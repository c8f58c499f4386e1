"""Source lines in report --isa and spillway code (issue 32): the record's
``source_lines`` (numpy and reference paths equal, the top-N cut, a
malformed table said in the status), records without a line table
unchanged, ``spillway code --lines-from`` a debug twin (lines where the code
is the same, none where it differs).  Every line against LLVM:
tests/oracle/test_lines_outputs_oracle.py."""

from __future__ import annotations

import json
from pathlib import Path

from elftools.elf.elffile import ELFFile

from spillway.cli import main
from spillway.formats.dwarf_lines import has_line_table
from spillway.isa.source_lines import LineTraffic, loop_lines
from spillway.report.code_evidence import code_objects_evidence
from spillway.formats import codeobject

ISA = Path(__file__).resolve().parents[2] / "data" / "isa"
LINES = ISA / "lines" / "co"
WITH_LINES = LINES / "gfx90a.clang22.dwarf5.co"
PLAIN = ISA / "co" / "gfx90a.clang22.co"              # the same compile without -gline-tables-only
OTHER_CODE = ISA / "co" / "gfx90a.clang19.co"         # clang 19: other code for the same kernels


def cli(capsys, *args) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_has_line_table():
    assert has_line_table(WITH_LINES.read_bytes()) and not has_line_table(PLAIN.read_bytes())
    assert not has_line_table(b"not an ELF at all")


def test_numpy_and_reference_paths_give_the_same_source_lines():
    for path in sorted(LINES.glob("*.co")):
        payload = path.read_bytes()
        code = codeobject.parse(payload)
        fast = code_objects_evidence(payload, code.kernels, code.target_id, use_numpy=True)
        plain = code_objects_evidence(payload, code.kernels, code.target_id, use_numpy=False)
        assert fast == plain, path.name
        assert all(found["source_lines"]["status"] == "placed" for found in fast), path.name
        assert any(found["source_lines"]["top"] for found in fast) or path.name.startswith("headers."), path.name


def _row(line: int, loop: int, innermost: int = 0) -> LineTraffic:
    return LineTraffic("k.hip", line, 0, loop + 4, 0, loop, 0, innermost, 1, 0, 0, 0)


def test_loop_lines_keeps_the_lines_with_loop_traffic_up_to_the_limit():
    rows = (_row(1, 16, 16), _row(2, 12), _row(3, 8), _row(4, 0), _row(5, 4))
    top, more = loop_lines(rows, 2)
    assert [r.line for r in top] == [1, 2] and more == 2          # line 4 has no loop traffic: not counted
    top, more = loop_lines(rows, 8)
    assert [r.line for r in top] == [1, 2, 3, 5] and more == 0


def test_records_without_a_line_table_have_no_source_lines(capsys):
    status, out, _ = cli(capsys, "report", PLAIN, "--all", "--isa", "--json")
    assert status == 0
    kernels = json.loads(out)["kernels"]
    assert kernels and all("source_lines" not in k["isa"] and "mix" in k["isa"] for k in kernels)


def test_a_malformed_line_table_is_said_in_the_status(capsys, tmp_path):
    data = bytearray(WITH_LINES.read_bytes())
    with open(WITH_LINES, "rb") as handle:
        section = ELFFile(handle).get_section_by_name(".debug_line")
        at = section["sh_offset"]
    data[at:at + 4] = (0xFFFFFFF5).to_bytes(4, "little")         # a reserved unit length
    broken = tmp_path / "broken.co"
    broken.write_bytes(bytes(data))
    status, out, err = cli(capsys, "report", broken, "--all", "--isa", "--json")
    assert status == 0, err
    kernels = json.loads(out)["kernels"]
    assert all(k["isa"]["source_lines"]["status"].startswith("line table not read: .debug_line: unit length")
               for k in kernels), kernels[0]["isa"]["source_lines"]
    assert all(k["isa"]["status"] == "complete" for k in kernels)      # the rest of the record stands


def test_code_takes_lines_from_a_debug_twin_where_the_code_is_the_same(capsys):
    status, out, err = cli(capsys, "code", PLAIN, "spill_in_loop", "--json")
    assert status == 0, err
    alone = json.loads(out)["kernels"][0]
    assert alone["source_lines"]["status"] == "no line table" and alone["source_lines"]["by_line"] == []
    assert all(i["source"] is None for i in alone["instructions"])
    status, out, err = cli(capsys, "code", PLAIN, "spill_in_loop", "--json", "--lines-from", WITH_LINES)
    assert status == 0, err
    twin = json.loads(out)["kernels"][0]
    status, out, err = cli(capsys, "code", WITH_LINES, "spill_in_loop", "--json")
    own = json.loads(out)["kernels"][0]
    assert twin["source_lines"]["lines_from"] == "debug twin" and own["source_lines"]["lines_from"] == "code object"
    assert twin["instructions"] == own["instructions"]
    # (the loops' peaks take no line from a twin yet, as the kernel's peak: the rest is the same)
    assert [{**loop, "peak": None} for loop in twin["loops"]] == [{**loop, "peak": None} for loop in own["loops"]]
    assert [loop["peak"]["vgprs"] for loop in twin["loops"]] == [loop["peak"]["vgprs"] for loop in own["loops"]]
    assert twin["source_lines"]["by_line"] == own["source_lines"]["by_line"] != []


def test_code_shows_no_line_where_the_twin_differs(capsys):
    status, out, err = cli(capsys, "code", OTHER_CODE, "spill_in_loop", "--json", "--lines-from", WITH_LINES)
    assert status == 0, err
    kernel = json.loads(out)["kernels"][0]
    lines = kernel["source_lines"]
    assert lines["status"] == "code differs from the debug twin"
    assert lines["code_sha256"] != lines["lines_code_sha256"]
    assert all(i["source"] is None for i in kernel["instructions"])
    status, out, err = cli(capsys, "code", OTHER_CODE, "spill_in_loop", "--lines-from", WITH_LINES)
    assert "  source lines: none (code differs from the debug twin)" in out.splitlines()


def test_code_text_without_a_line_table_is_unchanged(capsys):
    """No line table, no twin: the text has no source-line section (the JSON
    says ``no line table``)."""
    status, out, _ = cli(capsys, "code", PLAIN, "spill_in_loop")
    assert status == 0 and "source lines" not in out
    status, out, _ = cli(capsys, "code", WITH_LINES, "spill_in_loop")
    assert "  by source line (bytes per lane):" in out
    assert "    kernels.cpp:90: 8 B/lane loaded in the innermost loop (2 scratch accesses)" in out
