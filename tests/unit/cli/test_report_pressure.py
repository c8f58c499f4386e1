"""``spillway report --pressure`` (issue 40 item 3, issue 41 item 4): every
kernel's live registers in its isa object, the table and TSV, on the
committed ISA fixtures (tests/data/isa), held to ``spillway code``'s
reading of the same kernels (a separate path: one kernel at a time, its
lines from kernel_lines) and to the compilers' counts."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from spillway.cli import main
from spillway.report.record import Report, json_schema

DATA = Path(__file__).resolve().parents[2] / "data" / "isa"
LINES = DATA / "lines" / "co" / "gfx1100.clang22.dwarf5.co"      # a line table (-gline-tables-only)
GFX90A = DATA / "co" / "gfx90a.clang22.co"                         # AGPRs
LINES_90A = DATA / "lines" / "co" / "gfx90a.clang22.dwarf5.co"    # a line table, peaks inside loops
PEAKS = ("status", "vgprs", "agprs", "sgprs", "undefined_reads", "first_undefined_read", "instructions", "vgpr_curve",
         "code_bytes")


def cli(capsys, *args) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def _json(capsys, tmp_path, *args) -> dict:
    out = tmp_path / "out.json"
    status, _, err = cli(capsys, *args, "--json", "-o", out, "--force")
    assert (status, err) == (0, "")
    return json.loads(out.read_text())


@pytest.mark.parametrize("path", [LINES, GFX90A], ids=lambda p: p.name)
def test_every_kernel_has_the_peaks_spillway_code_finds(capsys, tmp_path, path):
    report = _json(capsys, tmp_path, "report", path, "--all", "--pressure")
    assert report["schema"] == "spillway.report/6"
    jsonschema.validate(report, json_schema())
    Report.model_validate(report)
    code = _json(capsys, tmp_path, "code", path, "*", "--all")
    by_kernel = {(k["name"], k["target"]): k["pressure"] for k in code["kernels"]}
    placed = 0
    for record in report["kernels"]:
        pressure = record["isa"]["pressure"]
        seen = by_kernel[(record["name"], record["target"])]
        assert {f: pressure[f] for f in PEAKS} == {f: seen[f] for f in PEAKS}, record["name"]
        at_vgpr_peak = next((held for held in seen["at_peaks"] if held["file"] == "v"), None)
        if at_vgpr_peak is None:
            assert pressure["at_vgpr_peak"] is None
            continue
        # the VGPR peak's line and its largest group, as spillway code shows them
        assert {f: v for f, v in pressure["at_vgpr_peak"].items() if f != "loop"} == \
            {**at_vgpr_peak, "groups": at_vgpr_peak["groups"][:1]}
        placed += pressure["at_vgpr_peak"]["source"] is not None
        # what holds the peak, summed by mnemonic and line: all of it when at most 4 sums are listed
        origins = pressure["vgpr_peak_origins"]
        counts = [origin["count"] for origin in origins]
        assert counts == sorted(counts, reverse=True) and 1 <= len(origins) <= 4
        assert sum(counts) <= pressure["vgprs"]["peak"]
        if len(origins) < 4:
            assert sum(counts) == pressure["vgprs"]["peak"]
        largest = pressure["at_vgpr_peak"]["groups"][0]
        assert any(origin["count"] >= largest["count"] for origin in origins)
        # within the compiler's counts (the arch VGPRs: .vgpr_count less the AGPRs where they share the file)
        assert pressure["vgprs"]["peak"] <= record["vgpr_count"] - (record["agpr_count"] or 0) \
            or record["target"].startswith("gfx908")
    if path == LINES:
        assert placed >= 10        # a line table: the peaks have lines


def test_without_pressure_the_isa_object_has_no_pressure_member(capsys, tmp_path):
    report = _json(capsys, tmp_path, "report", LINES, "--all", "--isa")
    assert all("pressure" not in record["isa"] for record in report["kernels"])
    report = _json(capsys, tmp_path, "report", LINES, "--all")
    assert all("isa" not in record for record in report["kernels"])


def test_pressure_implies_isa_and_a_filter_reads_only_its_kernels(capsys, tmp_path):
    report = _json(capsys, tmp_path, "report", GFX90A, "--pressure", "spill_in_loop")
    chosen = [r for r in report["kernels"] if r["isa"] is not None]
    assert [r["name"] for r in chosen] == ["spill_in_loop"]
    assert chosen[0]["isa"]["pressure"]["status"] == "complete"


def test_table_and_tsv_show_the_peaks(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    report = _json(capsys, tmp_path, "report", GFX90A, "--all", "--pressure")
    status, out, _ = cli(capsys, "report", GFX90A, "--all", "--pressure", "--sort", "name")
    assert status == 0 and "live V/A/S" in out
    for record in report["kernels"]:
        pressure = record["isa"]["pressure"]
        cell = f"{pressure['vgprs']['peak']}/{pressure['agprs']['peak']}/{pressure['sgprs']['peak']}" + \
            ("" if pressure["status"] == "complete" else "!")
        row = next(line for line in out.splitlines() if line.startswith(record["name"] + " "))
        assert f" {cell} " in row + " ", (row, cell)
    status, out, _ = cli(capsys, "report", GFX90A, "--all", "--pressure", "--format", "tsv")
    header, *rows = out.splitlines()
    fields = header.split("\t")
    assert fields[-7:] == ["pressure_status", "live_vgprs", "live_agprs", "live_sgprs", "vgpr_peak_offset",
                           "vgpr_peak_line", "undefined_reads"]
    by_name = {row.split("\t")[fields.index("name")]: row.split("\t") for row in rows}
    for record in report["kernels"]:
        cells = by_name[record["name"]]
        pressure = record["isa"]["pressure"]
        assert cells[fields.index("live_vgprs")] == str(pressure["vgprs"]["peak"])
        assert cells[fields.index("pressure_status")] == pressure["status"]


def _source(placed):
    return None if placed is None else (placed["file"], placed["line"], placed["column"], placed["inferred"])


@pytest.mark.parametrize("path", [LINES_90A, LINES, GFX90A], ids=lambda p: p.name)
def test_the_peaks_loop_is_the_innermost_loop_holding_it_with_spillway_codes_lines(capsys, tmp_path, path):
    """at_vgpr_peak.loop (report-6): the innermost of the kernel's loop_spans holding the VGPR peak, by its
    head, as spillway code's loop of that head (its last back branch, its head and back branch lines)."""
    report = _json(capsys, tmp_path, "report", path, "--all", "--pressure")
    code = _json(capsys, tmp_path, "code", path, "*", "--all")
    loops_of = {(k["name"], k["target"]): {loop["start"]: loop for loop in k["loops"]} for k in code["kernels"]}
    inside = placed = 0
    for record in report["kernels"]:
        at_peak = record["isa"]["pressure"]["at_vgpr_peak"]
        if at_peak is None:
            continue
        peak = at_peak["offset"]
        holding = [(lo, hi) for lo, hi in record["isa"]["loop_spans"] if lo <= peak <= hi]
        if not holding:
            assert at_peak["loop"] is None, record["name"]
            continue
        innermost = min(holding, key=lambda span: span[1] - span[0])
        loop = at_peak["loop"]
        assert loop is not None and loop["start"] == innermost[0], record["name"]
        seen = loops_of[(record["name"], record["target"])][loop["start"]]
        assert loop["start"] <= peak <= loop["end"] == seen["end"]
        assert (_source(loop["head"]), _source(loop["back_branch"])) == \
            (_source(seen["head"]), _source(seen["back_branch"])), record["name"]
        inside += 1
        placed += loop["head"] is not None
    if path == LINES_90A:
        assert inside >= 3 and placed == inside      # spill_in_loop, lds_loop, matrix...: lines from the table
    if path == GFX90A:
        assert placed == 0                           # no line table: offsets only


@pytest.mark.parametrize("path", [LINES_90A, GFX90A], ids=lambda p: p.name)
def test_scratch_offsets_are_spillway_codes_scratch_accesses(capsys, tmp_path, path):
    report = _json(capsys, tmp_path, "report", path, "--all", "--pressure")
    code = _json(capsys, tmp_path, "code", path, "*", "--all")
    accesses = {(k["name"], k["target"]): [i["offset"] for i in k["instructions"]
                                           if i["kind"] in ("scratch_load", "scratch_store")]
                for k in code["kernels"]}
    listed = 0
    for record in report["kernels"]:
        offsets = record["isa"]["pressure"]["scratch_offsets"]
        assert offsets == accesses[(record["name"], record["target"])], record["name"]
        assert len(offsets) == record["isa"]["scratch_loads"] + record["isa"]["scratch_stores"]
        listed += len(offsets)
    assert listed >= 100
    # a FILTER decodes only its kernels (a sparse batch): the offsets found again, the same
    alone = _json(capsys, tmp_path, "report", path, "--pressure", "spill_in_loop")
    chosen = next(r for r in alone["kernels"] if r["isa"] is not None)
    assert chosen["isa"]["pressure"]["scratch_offsets"] == accesses[(chosen["name"], chosen["target"])] != []


def test_scratch_offsets_of_a_huge_kernel_are_spread_evenly():
    from spillway.constants import SCRATCH_OFFSETS
    from spillway.report.code_evidence import spread_offsets

    offsets = list(range(0, 8 * 5000, 8))
    spread = spread_offsets(offsets)
    assert len(spread) == SCRATCH_OFFSETS and spread == sorted(set(spread)) and set(spread) <= set(offsets)
    assert spread[0] == 0 and spread[-1] >= offsets[-1] - 8 * (len(offsets) // SCRATCH_OFFSETS)
    assert spread_offsets(offsets[:SCRATCH_OFFSETS]) == offsets[:SCRATCH_OFFSETS]
