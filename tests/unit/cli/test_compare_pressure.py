"""``spillway compare --pressure`` (issue 41 item 5): where each kernel's
VGPR peak moved between two builds, on the committed ISA fixtures
(tests/data/isa): gfx90a built by clang 22 with a line table against the
same source built by clang 19 (no line table), held to each side's own
``report --pressure``; two builds of one compiler (DWARF 4 and 5 line
tables) whose peaks are equal get no line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from spillway.cli import main
from spillway.gate.compare_schema import json_schema

DATA = Path(__file__).resolve().parents[2] / "data" / "isa"
NEW = DATA / "lines" / "co" / "gfx90a.clang22.dwarf5.co"     # clang 22, line table
OLD = DATA / "co" / "gfx90a.clang19.co"                      # clang 19, no line table
DWARF4 = DATA / "lines" / "co" / "gfx1100.clang22.dwarf4.co"
DWARF5 = DATA / "lines" / "co" / "gfx1100.clang22.dwarf5.co"


def cli(capsys, *args) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def _written(capsys, tmp_path, name: str, *args) -> dict:
    out = tmp_path / name
    status, _, err = cli(capsys, *args, "-o", out, "--force")
    assert (status, err) == (0, "")
    return json.loads(out.read_text())


def _report(capsys, tmp_path, path: Path, *flags: str) -> tuple[Path, dict]:
    out = tmp_path / f"{path.stem}{''.join(flags)}.json"
    status, _, err = cli(capsys, "report", path, "--all", *flags, "--json", "-o", out, "--force")
    assert (status, err) == (0, "")
    return out, json.loads(out.read_text())


def _compare(capsys, tmp_path, new, old, *flags: str) -> dict:
    return _written(capsys, tmp_path, "compare.json", "compare", new, "--against", old, *flags, "--format", "json")


def _by_name(document: dict) -> dict:
    return {k["name"]: k for k in document["kernels"]}


def test_json_holds_each_sides_report_pressure_peaks(capsys, tmp_path):
    _, new_report = _report(capsys, tmp_path, NEW, "--pressure")
    _, old_report = _report(capsys, tmp_path, OLD, "--pressure")
    document = _compare(capsys, tmp_path, NEW, OLD, "--pressure")
    assert document["schema"] == "spillway.compare/6"
    jsonschema.validate(document, json_schema())
    new, old = _by_name(new_report), _by_name(old_report)
    changed = 0
    for kernel in document["kernels"]:
        pressure = kernel["code"]["pressure"]
        for side, records in (("new", new), ("old", old)):
            seen = records[kernel["name"]]["isa"]["pressure"]
            got = pressure[side]
            assert (got["status"], got["vgprs"], got["agprs"], got["sgprs"], got["vgpr_peak_offset"]) == (
                seen["status"], seen["vgprs"]["peak"], seen["agprs"]["peak"], seen["sgprs"]["peak"],
                seen["vgprs"]["offset"]), (kernel["name"], side)
            held = seen["at_vgpr_peak"]
            group = got["largest_group"]
            if held is None or not held["groups"]:
                assert group is None
                continue
            first = held["groups"][0]
            assert (group["count"], group["defined_by"], group["defined_at"], group["from_entry"]) == (
                first["count"], first["defined_by"], first["defined_at"], first["from_entry"])
            # the line of the peak: the report's, its file relative to the compile unit's directory
            source = got["vgpr_peak_source"]
            if held["source"] is None:
                assert source is None
            else:
                assert held["source"]["file"].endswith("/" + source["file"])
                assert (source["line"], source["column"]) == (held["source"]["line"], held["source"]["column"])
        assert pressure["vgpr_change"] == pressure["new"]["vgprs"] - pressure["old"]["vgprs"]
        changed += pressure["vgpr_change"] != 0
    # clang 22 raised spill_pressure's peak from 59 to 67 VGPRs (llvm-objdump-read truth: test_report_pressure)
    assert _by_name(document)["spill_pressure"]["code"]["pressure"]["vgpr_change"] == 8
    assert changed >= 1
    assert f"{changed} kernel" in document["sentence"] and "with another VGPR peak" in document["sentence"]


def test_report_json_sides_compare_as_the_binaries(capsys, tmp_path):
    new_path, _ = _report(capsys, tmp_path, NEW, "--pressure")
    old_path, _ = _report(capsys, tmp_path, OLD, "--pressure")
    from_reports = _compare(capsys, tmp_path, new_path, old_path, "--isa")
    from_binaries = _compare(capsys, tmp_path, NEW, OLD, "--pressure")
    assert [k["code"]["pressure"] for k in from_reports["kernels"]] == \
        [k["code"]["pressure"] for k in from_binaries["kernels"]]
    assert any(k["code"]["pressure"] is not None for k in from_reports["kernels"])


def _peak_changes(capsys, tmp_path) -> dict[str, tuple[int, int]]:
    document = _compare(capsys, tmp_path, NEW, OLD, "--pressure")
    return {k["name"]: (k["code"]["pressure"]["old"]["vgprs"], k["code"]["pressure"]["new"]["vgprs"])
            for k in document["kernels"]}


def test_table_has_a_peak_line_for_each_kernel_whose_peak_changed(capsys, tmp_path, monkeypatch):
    peaks = _peak_changes(capsys, tmp_path)
    monkeypatch.setenv("COLUMNS", "400")
    status, out, err = cli(capsys, "compare", NEW, "--against", OLD, "--pressure", "--all", "--limit", "0")
    assert (status, err) == (0, "")
    lines = {m.group(1): m.group(0) for m in re.finditer(r"^peak: (\S+) \[gfx90a\]: .*$", out, re.M)}
    assert set(lines) == {name for name, (old, new) in peaks.items() if old != new}
    for name, line in lines.items():
        old, new = peaks[name]
        assert f"peak {old} -> {new} VGPRs ({new - old:+d}) at " in line
        assert "(was +0x" in line          # the old side has no line table: its peak by its offset
    assert "at kernels.cpp:77 (was +0x" in lines["spill_pressure"]
    assert "largest group at the new peak: 2 VGPRs defined by v_pk_mul_f32 at kernels.cpp:77" \
        in lines["spill_pressure"]


def test_markdown_carries_the_peak_sentence(capsys, tmp_path):
    peaks = _peak_changes(capsys, tmp_path)
    status, out, err = cli(capsys, "compare", NEW, "--against", OLD, "--pressure", "--all", "--format", "markdown")
    assert (status, err) == (0, "")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| \w+ \| `(\w+)` \| `gfx90a` \|.*$", out, re.M)}
    for name, (old, new) in peaks.items():
        said = f"peak {old} -> {new} VGPRs ({new - old:+d}) at " in rows[name]
        assert said == (old != new), name
    assert "at `kernels.cpp:77` (was +0x" in rows["spill_pressure"]


def test_equal_peaks_get_no_line(capsys, tmp_path, monkeypatch):
    document = _compare(capsys, tmp_path, DWARF5, DWARF4, "--pressure")
    pressures = [k["code"]["pressure"] for k in document["kernels"]]
    assert pressures and all(p is not None and p["vgpr_change"] == 0 for p in pressures)
    assert "VGPR peak" not in document["sentence"] or "0 kernels with another VGPR peak" in document["sentence"]
    monkeypatch.setenv("COLUMNS", "400")
    status, out, err = cli(capsys, "compare", DWARF5, "--against", DWARF4, "--pressure", "--all", "--limit", "0")
    assert (status, err) == (0, "")
    assert "peak:" not in out


def test_a_report_without_pressure_gives_null(capsys, tmp_path, monkeypatch):
    new_path, _ = _report(capsys, tmp_path, NEW, "--pressure")
    old_path, _ = _report(capsys, tmp_path, OLD, "--isa")
    document = _compare(capsys, tmp_path, new_path, old_path, "--pressure")
    jsonschema.validate(document, json_schema())
    assert document["kernels"] and all(k["code"]["pressure"] is None for k in document["kernels"])
    assert all(k["code"]["verdict"] != "code not read" for k in document["kernels"])
    assert "VGPR peak" not in document["sentence"]
    monkeypatch.setenv("COLUMNS", "400")
    status, out, err = cli(capsys, "compare", new_path, "--against", old_path, "--pressure", "--all")
    assert (status, err) == (0, "") and "peak:" not in out


@pytest.mark.parametrize("pressure", [{"status": "complete"}, 7,
                                      {"status": "complete", "vgprs": {"peak": -1, "offset": 0},
                                       "agprs": {"peak": 0, "offset": 0}, "sgprs": {"peak": 0, "offset": 0},
                                       "at_vgpr_peak": None}])
def test_a_malformed_pressure_object_is_a_one_line_error(capsys, tmp_path, pressure):
    path, report = _report(capsys, tmp_path, NEW, "--pressure")
    report["kernels"][0]["isa"]["pressure"] = pressure
    path.write_text(json.dumps(report))
    status, out, err = cli(capsys, "compare", path, "--against", path, "--pressure")
    assert status != 0 and out == ""
    assert err.count("\n") == 1 and "kernel 0: isa.pressure is" in err, err


def test_the_binarys_strings_are_never_printed_raw(capsys, tmp_path, monkeypatch):
    """A file name and a mnemonic from a (hostile) report go through each sink's quoting."""
    new_path, report = _report(capsys, tmp_path, NEW, "--pressure")
    old_path, _ = _report(capsys, tmp_path, OLD, "--pressure")
    hostile = "evil\x1b[31m|`x\nline"
    for record in report["kernels"]:
        held = record["isa"]["pressure"]["at_vgpr_peak"]
        if held is not None and held["source"] is not None and held["groups"] and held["groups"][0]["defined_by"]:
            held["source"]["file"] = hostile
            held["groups"][0]["defined_by"][0] = hostile
    new_path.write_text(json.dumps(report))
    monkeypatch.setenv("COLUMNS", "400")
    status, out, err = cli(capsys, "compare", new_path, "--against", old_path, "--pressure", "--all")
    assert (status, err) == (0, "")
    peaks = [line for line in out.splitlines() if line.startswith("peak: ")]
    assert any("evil" in line for line in peaks) and not any("\x1b" in line for line in peaks)
    status, out, err = cli(capsys, "compare", new_path, "--against", old_path, "--pressure", "--all", "--format",
                           "markdown")
    assert (status, err) == (0, "")
    rows = [line for line in out.splitlines() if "peak " in line and "VGPRs (" in line]
    assert any("evil" in row for row in rows) and all("\x1b" not in row and row.endswith("|") for row in rows)
    assert not any(line.startswith("line") for line in out.splitlines())
