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
OLD_LINES = DATA / "lines" / "co" / "gfx90a.clang19.dwarf5.co"   # clang 19, line table
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
    # the old side has no line table: origins matched by mnemonic alone, said without a line
    assert lines["spill_pressure"].endswith("; +7 from buffer_load_dword")


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
        if held is not None and held["loop"] is not None:
            held["loop"]["head"] = {"file": hostile, "line": 1, "column": 0, "inferred": False}
        for origin in record["isa"]["pressure"]["vgpr_peak_origins"]:
            origin["defined_by"] = hostile + origin["defined_by"]
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


def _origins(pressure: dict) -> dict:
    """A report side's vgpr_peak_origins summed by (mnemonic, line) (the file is the one kernels.cpp)."""
    counts: dict = {}
    for origin in pressure["vgpr_peak_origins"]:
        key = (origin["defined_by"], None if origin["source"] is None else origin["source"]["line"])
        counts[key] = counts.get(key, 0) + origin["count"]
    return counts


def _peak_lines(out: str) -> dict[str, str]:
    return {m.group(1): m.group(0) for m in re.finditer(r"^peak: (\S+) \[gfx90a\]: .*$", out, re.M)}


def test_the_origin_that_grew_most_is_the_difference_of_the_sides_origins(capsys, tmp_path, monkeypatch):
    """Both sides with line tables (clang 19 -> 22, gfx90a): grew_most is the origin (mnemonic and line)
    whose VGPRs at the peak grew most, from each side's report --pressure vgpr_peak_origins; the text says
    it, or the largest group when none grew; and the loop holding the new peak, by its head's line."""
    new_path, new_report = _report(capsys, tmp_path, NEW, "--pressure")
    old_path, old_report = _report(capsys, tmp_path, OLD_LINES, "--pressure")
    document = _compare(capsys, tmp_path, NEW, OLD_LINES, "--pressure")
    jsonschema.validate(document, json_schema())
    assert document["schema"] == "spillway.compare/6"
    monkeypatch.setenv("COLUMNS", "400")
    status, out, err = cli(capsys, "compare", NEW, "--against", OLD_LINES, "--pressure", "--all", "--limit", "0")
    assert (status, err) == (0, "")
    lines = _peak_lines(out)
    new, old = _by_name(new_report), _by_name(old_report)
    grew = looped = 0
    for kernel in document["kernels"]:
        shift = kernel["code"]["pressure"]
        before, after = old[kernel["name"]]["isa"]["pressure"], new[kernel["name"]]["isa"]["pressure"]
        old_counts, new_counts = _origins(before), _origins(after)
        old_whole = sum(old_counts.values()) == before["vgprs"]["peak"]
        changes = {key: count - old_counts.get(key, 0) for key, count in new_counts.items()
                   if key in old_counts or old_whole}
        most = max(changes.values(), default=0)
        found = shift["grew_most"]
        if most <= 0:
            assert found is None, kernel["name"]
        else:
            assert found is not None and found["change"] == most, kernel["name"]
            key = (found["defined_by"], None if found["source"] is None else found["source"]["line"])
            assert changes[key] == most and found["new"] == new_counts[key], kernel["name"]
            grew += 1
        # each side's loop: the report's, its lines' files relative to the compile unit's directory
        for side, seen in (("old", before), ("new", after)):
            loop, held = shift[side]["loop"], seen["at_vgpr_peak"]
            expected = None if held is None else held["loop"]
            assert (loop is None) == (expected is None), (kernel["name"], side)
            if loop is not None:
                assert (loop["start"], loop["end"], loop["head"]["line"]) == \
                    (expected["start"], expected["end"], expected["head"]["line"])
                assert expected["head"]["file"].endswith("/" + loop["head"]["file"])
        if shift["vgpr_change"] == 0:
            assert kernel["name"] not in lines
            continue
        line = lines[kernel["name"]]
        if found is not None:
            assert line.endswith(f"; {found['change']:+d} from {found['defined_by']} at kernels.cpp:"
                                 f"{found['source']['line']}" + (" (inferred)" if found["source"]["inferred"] else ""))
        else:
            assert "; largest group at the new peak: " in line
        loop = shift["new"]["loop"]
        said = f", inside the loop at kernels.cpp:{loop['head']['line']}" if loop is not None else ", inside the loop"
        assert (said in line) == (loop is not None), line
        looped += loop is not None
    assert grew >= 3 and looped >= 1        # spill_pressure, format_loads, ...; spill_in_loop's peak is in a loop
    assert "+15 from buffer_load_dword at kernels.cpp:74" in lines["spill_pressure"]
    # report JSON sides say the same
    from_reports = _compare(capsys, tmp_path, new_path, old_path, "--isa")
    assert [k["code"]["pressure"] for k in from_reports["kernels"]] == \
        [k["code"]["pressure"] for k in document["kernels"]]
    # Markdown and GitHub (the job summary is the Markdown; the log the table) carry the same sentence
    status, markdown, err = cli(capsys, "compare", NEW, "--against", OLD_LINES, "--pressure", "--all", "--format",
                                "markdown")
    assert (status, err) == (0, "")
    assert "`kernels.cpp:77` (was `kernels.cpp:77`); +15 from `buffer_load_dword` at `kernels.cpp:74`" in markdown
    assert "inside the loop at `kernels.cpp:88` (inferred)" in markdown
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    status, out, err = cli(capsys, "compare", NEW, "--against", OLD_LINES, "--pressure", "--all", "--limit", "0",
                           "--format", "github")
    assert status == 0
    assert "+15 from `buffer_load_dword` at `kernels.cpp:74`" in summary.read_text()
    assert _peak_lines(out)["spill_pressure"] == lines["spill_pressure"]


def test_a_report_5_side_has_no_loop_and_compares(capsys, tmp_path, monkeypatch):
    """A spillway.report/5 file (no loop at the peak, no scratch offsets) is still read: its side has none."""
    new_path, _ = _report(capsys, tmp_path, NEW, "--pressure")
    old_path, old_report = _report(capsys, tmp_path, OLD_LINES, "--pressure")
    old_report["schema"] = "spillway.report/5"
    for record in old_report["kernels"]:
        pressure = record["isa"]["pressure"]
        del pressure["scratch_offsets"]
        if pressure["at_vgpr_peak"] is not None:
            del pressure["at_vgpr_peak"]["loop"]
    old_path.write_text(json.dumps(old_report))
    document = _compare(capsys, tmp_path, new_path, old_path, "--pressure")
    jsonschema.validate(document, json_schema())
    sides = [k["code"]["pressure"]["old"] for k in document["kernels"]]
    assert sides and all(side["loop"] is None and side["scratch_offsets"] == [] for side in sides)
    assert any(k["code"]["pressure"]["new"]["scratch_offsets"] for k in document["kernels"])
