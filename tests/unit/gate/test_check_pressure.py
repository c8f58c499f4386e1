"""``spillway check --pressure`` (issue 41 item 5): each failing kernel's
VGPR peak, with its source line where the code object has a line table, in
every format that shows the failure's code; held to ``report --pressure``'s
reading of the same kernels (the committed ISA fixtures, tests/data/isa)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from spillway.cli import main
from spillway.gate.check_schema import json_schema

LINES = Path(__file__).resolve().parents[2] / "data" / "isa" / "lines" / "co" / "gfx1100.clang22.dwarf5.co"


def cli(capsys, *args) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture()
def tight(tmp_path, capsys) -> Path:
    """A baseline of the fixture with every kernel's scratch allowance lowered: all of those with scratch
    fail."""
    baseline = tmp_path / "baseline.json"
    status, _, _ = cli(capsys, "baseline", "write", LINES, "-o", baseline, "--note", "test", "--record-all")
    assert status == 0
    document = json.loads(baseline.read_text())
    for kernel in document["kernels"]:
        for target in kernel["targets"]:
            if target.get("scratch"):
                target["scratch"] -= 8
    baseline.write_text(json.dumps(document))
    return baseline


def test_a_failing_kernels_peak_and_its_line_in_json_and_text(tmp_path, capsys, tight):
    report = tmp_path / "report.json"
    assert cli(capsys, "report", LINES, "--all", "--pressure", "--json", "-o", report)[0] == 0
    peaks = {record["key"]: record["isa"]["pressure"] for record in json.loads(report.read_text())["kernels"]}
    status, out, _ = cli(capsys, "check", LINES, "--baseline", tight, "--pressure", "--json",
                         "--source-root", tmp_path)
    assert status == 1
    document = json.loads(out)
    assert document["schema"] == "spillway.check/4"
    jsonschema.validate(document, json_schema())
    failures = document["failures"]
    assert len(failures) >= 5
    placed = 0
    for failure in failures:
        peak = failure["code"]["vgpr_peak"]
        seen = peaks[failure["key"]]
        assert (peak["vgprs"], peak["offset"], peak["status"]) == \
            (seen["vgprs"]["peak"], seen["vgprs"]["offset"], seen["status"])
        assert peak["source"] == seen["at_vgpr_peak"]["source"]
        assert peak["held_by"] == seen["vgpr_peak_origins"]       # registers, what defined them, their line
        placed += peak["source"] is not None
    assert placed == len(failures)          # a line table: every peak has its line
    # the text every line-oriented format shows
    status, out, _ = cli(capsys, "check", LINES, "--baseline", tight, "--pressure")
    first = failures[0]["code"]["vgpr_peak"]
    assert f"; VGPR peak {first['vgprs']} at {first['source']['file']}:{first['source']['line']} " \
           f"(+{first['offset']:#x}): " in out
    status, markdown, _ = cli(capsys, "check", LINES, "--baseline", tight, "--pressure", "--format", "markdown")
    assert "VGPR peak " in markdown


def test_without_pressure_no_peak_is_read(tmp_path, capsys, tight):
    status, out, _ = cli(capsys, "check", LINES, "--baseline", tight, "--json")
    assert status == 1
    document = json.loads(out)
    assert document["failures"] and all("vgpr_peak" not in f["code"] for f in document["failures"])
    status, out, _ = cli(capsys, "check", LINES, "--baseline", tight)
    assert "VGPR peak" not in out
