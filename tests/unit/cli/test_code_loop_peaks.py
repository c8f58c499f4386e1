"""``spillway code``'s loop peaks (issue 41 item 1): each loop's own VGPR,
AGPR and SGPR peak and what holds its VGPR peak, and where the kernel's VGPR
peak is, held to the command's own ``--all-instructions`` counts on the
committed fixtures of several generations, with and without line tables."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from spillway.cli import main
from spillway.report.code_schema import json_schema

ISA = Path(__file__).resolve().parents[2] / "data" / "isa"
# gfx803, gfx906 (DWARF 4 lines), gfx90a (AGPRs; with and without lines), gfx942, gfx1030, gfx1100 (lines),
# gfx1201, gfx950 (AGPRs)
FIXTURES = ("co/gfx803.clang22.co", "lines/co/gfx906.clang22.dwarf4.co", "co/gfx90a.clang22.co",
            "lines/co/gfx90a.clang22.dwarf5.co", "co/gfx942.clang22.co", "co/gfx1030.clang22.co",
            "lines/co/gfx1100.clang22.dwarf5.co", "co/gfx1201.clang22.co", "co/gfx950.clang22.co")
FILES = ("vgprs", "agprs", "sgprs")


def cli(capsys, *args) -> tuple[int, str]:
    status = main(list(args))
    out, _err = capsys.readouterr()
    return status, out


def _innermost(spans: list[tuple[int, int]], offset: int) -> dict | None:
    """Of the spans holding ``offset``, the one holding no other that holds it."""
    holding = [span for span in spans if span[0] <= offset <= span[1]]
    inner = [span for span in holding
             if not any(other != span and span[0] <= other[0] and other[1] <= span[1] for other in holding)]
    assert len(inner) <= 1, inner
    return {"start": inner[0][0], "end": inner[0][1]} if inner else None


@pytest.mark.parametrize("fixture", FIXTURES)
def test_each_loops_peak_is_the_most_counted_inside_it(capsys, fixture):
    status, out = cli(capsys, "code", str(ISA / fixture), "*", "--all", "--all-instructions", "--json")
    assert status == 0
    document = json.loads(out)
    jsonschema.validate(document, json_schema())
    looped = agprs = 0
    for kernel in document["kernels"]:
        pressure, steps = kernel["pressure"], kernel.get("all_instructions") or []
        if pressure is None or pressure["status"].startswith("not read"):
            assert all(loop["peak"] is None for loop in kernel["loops"])
            continue
        for loop in kernel["loops"]:
            inside = [step for step in steps if loop["start"] <= step["offset"] <= loop["end"]]
            peak = loop["peak"]
            for file in FILES:
                most = max(step[file] for step in inside)
                first = next(step["offset"] for step in inside if step[file] == most) if most else None
                assert peak[file] == {"peak": most, "offset": first}, (kernel["name"], loop["start"], file)
            # what holds the loop's VGPR peak, every sum: they add up to it
            assert sum(held["count"] for held in peak["held_by"]) == peak["vgprs"]["peak"], kernel["name"]
            if kernel["source_lines"]["status"] == "placed" and peak["vgprs"]["offset"] is not None:
                assert peak["source"] is not None, (kernel["name"], loop["start"])
            looped += 1
            agprs += peak["agprs"]["peak"] > 0
        offset = pressure["vgprs"]["offset"]
        spans = [(loop["start"], loop["end"]) for loop in kernel["loops"]]
        assert pressure["loop"] == (None if offset is None else _innermost(spans, offset)), kernel["name"]
    assert looped > 0
    if "gfx90a" in fixture or "gfx950" in fixture:
        assert agprs > 0                   # a loop holding AGPRs (mfma_spill's accumulators)


def test_the_text_names_the_loop_holding_the_peak_by_its_lines(capsys):
    lines_co = str(ISA / "lines" / "co" / "gfx90a.clang22.dwarf5.co")
    status, out = cli(capsys, "code", lines_co, "spill_in_loop")
    assert status == 0
    assert "    the VGPR peak (+0x54c) is inside the loop at kernels.cpp:88:17 (inferred) (+0x3a0 .. +0x5cc, " \
           "back branch kernels.cpp:90:52)\n" in out
    loops = out.split("  loops (3;")[1].split("  instructions (")[0].splitlines()
    assert loops[1:] == [
        "    +0x368 .. +0x5d0  depth 1, 4 scratch accesses",
        "      peak 60 VGPRs at +0x54c kernels.cpp:90:52: 24 v_pk_fma_f32 at kernels.cpp:90:52, 14 v_pk_mov_b32 at "
        "kernels.cpp:90:52, 12 global_load_dword or v_pk_fma_f32, 4 global_load_dword or v_mov_b32_e32 or "
        "v_pk_mov_b32, 6 more; 19 SGPRs at +0x3b8",
        "      +0x380 .. +0x394  depth 2, innermost, 0 scratch accesses",
        "        peak 49 VGPRs at +0x380 kernels.cpp:85:27: 41 global_load_dword or v_pk_fma_f32, 6 global_load_dword "
        "or v_mov_b32_e32, 1 v_mov_b32_e32, 1 v_mov_b32_e32 or v_pk_fma_f32; 15 SGPRs at +0x380",
        "      +0x3a0 .. +0x5cc  depth 2, innermost, 4 scratch accesses",
        "        peak 60 VGPRs at +0x54c kernels.cpp:90:52: 24 v_pk_fma_f32 at kernels.cpp:90:52, 14 v_pk_mov_b32 at "
        "kernels.cpp:90:52, 12 global_load_dword or v_pk_fma_f32, 4 global_load_dword or v_mov_b32_e32 or "
        "v_pk_mov_b32, 6 more; 19 SGPRs at +0x3b8"]
    # without a line table: offsets
    status, out = cli(capsys, "code", str(ISA / "co" / "gfx90a.clang22.co"), "spill_in_loop")
    assert "    the VGPR peak (+0x54c) is inside the loop +0x3a0 .. +0x5cc\n" in out
    # a peak outside the loops; a loop's AGPR peak
    status, out = cli(capsys, "code", lines_co, "mfma_spill")
    assert "    the VGPR peak (+0x94c) is outside any loop\n" in out
    assert "; 58 AGPRs at +0x664; 13 SGPRs at +0x594\n" in out


def test_many_loops_show_the_peaks_of_those_with_the_most_vgprs(capsys, monkeypatch):
    from spillway.render import code

    monkeypatch.setattr(code, "LOOP_PEAKS_SHOWN", 1)
    status, out = cli(capsys, "code", str(ISA / "co" / "gfx90a.clang22.co"), "spill_in_loop")
    assert status == 0
    # the first loop with the most VGPRs, and the one holding the kernel's peak (as many); not the 49-VGPR loop
    assert out.count("\n      peak 60 VGPRs at +0x54c") == 1 and out.count("\n        peak 60 VGPRs at +0x54c") == 1
    assert "peak 49 VGPRs" not in out
    assert "    ... the peaks of 1 more loop (fewer VGPRs) in --json\n" in out
