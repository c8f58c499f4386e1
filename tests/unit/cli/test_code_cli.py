"""``spillway code``: choosing the kernel, its text and JSON, the errors (on
the committed ISA fixtures, tests/data/isa/co)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from spillway.cli import main
from spillway.report.code_schema import json_schema

CO = Path(__file__).resolve().parents[2] / "data" / "isa" / "co"
GFX90A = str(CO / "gfx90a.clang22.co")
GFX942 = str(CO / "gfx942.clang22.co")


def cli(capsys, *args) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_text_names_loops_and_each_scratch_access(capsys):
    status, out, err = cli(capsys, "code", GFX90A, "spill_in_loop")
    assert (status, err) == (0, "")
    assert out.startswith("kernel spill_in_loop\n  target gfx90a")
    assert "4 of 8 in loops" in out
    assert "+0x3a0 .. +0x5cc  depth 2, innermost, 4 scratch accesses" in out
    assert "    +0x3a4     2  scratch store       4  slot              buffer_store_dword" in out
    assert "    +0x24      -  scratch store       4  slot              buffer_store_dword" in out
    assert "scratch by address: slot 16 B loaded + 16 B stored, addressed (a VGPR address: private arrays) 0 B " \
           "loaded + 0 B stored per lane; 4 in innermost loops" in out


def test_json_is_versioned_and_valid(capsys, tmp_path):
    out_file = tmp_path / "code.json"
    status, out, _ = cli(capsys, "code", GFX90A, GFX942, "agpr_spill", "--all", "--json", "-o", str(out_file))
    assert (status, out) == (0, "")
    document = json.loads(out_file.read_text())
    jsonschema.validate(document, json_schema())
    assert document["schema"] == "spillway.code/4"
    assert [k["target"] for k in document["kernels"]] == ["gfx90a", "gfx942"]
    first = document["kernels"][0]
    kinds = [i["kind"] for i in first["instructions"]]
    assert kinds.count("agpr_write") == first["isa"]["agpr_writes"] > 0
    assert kinds.count("agpr_read") == first["isa"]["agpr_reads"] > 0


def test_live_registers_peaks_in_text_and_json(capsys):
    status, out, _ = cli(capsys, "code", GFX90A, "agpr_spill")
    assert status == 0
    assert "  live registers at the peak: 40 VGPRs (first at +" in out and ", 37 AGPRs (first at +" in out
    assert "; complete" in out
    status, out, _ = cli(capsys, "code", GFX90A, "calls", "--json")
    pressure = json.loads(out)["kernels"][0]["pressure"]
    assert pressure["status"].startswith("partial: call at +0x")
    assert "all_instructions" not in json.loads(out)["kernels"][0]
    assert [held["file"] for held in pressure["at_peaks"]] == ["v", "s"]


def test_what_holds_the_peak_and_the_curve(capsys):
    status, out, _ = cli(capsys, "code", GFX90A, "mfma_spill")
    assert status == 0
    assert "    at the AGPR peak (+0x664, 58): 26 v_accvgpr_write_b32, 16 v_mfma_f32_32x32x8f16, 16 v_accvgpr_mov_b32" \
        in out
    assert "        16 a[0:15] from v_mfma_f32_32x32x8f16 at +0x618; last needed at " in out
    curve = next(line for line in out.splitlines() if "VGPRs along the code" in line)
    # The highest VGPR count in each of 64 stretches of the code, in eighths of the peak (16).
    assert curve.endswith("highest 16): ▃▅▆▆▆▆▆▆▆▆▆▆▆▆▆▇▇▇▇▇▅▄▇▇▇▅▆▅▅▆▃▃▃▃▅▆▇████████████████▅▆████▂▂▂▂▁"), curve


def test_all_instructions_lists_every_instruction_with_its_operands(capsys, tmp_path):
    status, out, _ = cli(capsys, "code", GFX90A, "spill_in_loop", "--all-instructions")
    assert status == 0
    listed = out.split("  all instructions (")[1]
    assert listed.startswith("365;")
    # An undefined read is marked: the spill of v3 before anything wrote it.
    assert "    +0x30      1     0    10 !buffer_store_dword  - <- v3, s[16:19]" in listed
    out_file = tmp_path / "code.json"
    status, _out, _ = cli(capsys, "code", GFX90A, "spill_in_loop", "--all-instructions", "--json", "-o", str(out_file))
    document = json.loads(out_file.read_text())
    jsonschema.validate(document, json_schema())
    kernel = document["kernels"][0]
    steps = kernel["all_instructions"]
    assert len(steps) == kernel["pressure"]["instructions"] == kernel["isa"]["instructions"] == 365
    assert max(step["vgprs"] for step in steps) == kernel["pressure"]["vgprs"]["peak"]
    first = next(step for step in steps if step["vgprs"] == kernel["pressure"]["vgprs"]["peak"])
    assert first["offset"] == kernel["pressure"]["vgprs"]["offset"]
    assert steps[0] == {"offset": 0, "length": 4, "mnemonic": "s_mov_b64", "defs": ["s[18:19]"], "uses": ["s[2:3]"],
                        "vgprs": 1, "agprs": 0, "sgprs": 9, "undefined_read": False}


def test_a_family_without_operand_tables_says_so(capsys, monkeypatch):
    # Every family the decoder reads has a table (gfx940's last): one without is load_operands answering None.
    path = CO / "gfx940.clang19.co"
    status, out, _ = cli(capsys, "code", str(path), "spill_in_loop")
    assert status == 0 and "  live registers: not read" not in out
    monkeypatch.setattr("spillway.isa.liveness.load_operands", lambda family, wavefront_size=32: None)
    status, out, _ = cli(capsys, "code", str(path), "spill_in_loop")
    assert status == 0 and "  live registers: not read: no operand table for gfx940 yet" in out


def test_target_chooses_among_targets(capsys):
    status, out, _ = cli(capsys, "code", GFX90A, GFX942, "agpr_spill", "--target", "gfx942")
    assert status == 0 and "target gfx942" in out and "gfx90a" not in out


def test_exact_name_wins_over_substring(capsys):
    # "spill_pressure" is also a substring of no other kernel, "spill" of four: the exact one is chosen.
    status, out, _ = cli(capsys, "code", GFX90A, "spill_pressure")
    assert status == 0 and out.count("\nkernel ") == 0 and out.startswith("kernel spill_pressure")


@pytest.mark.parametrize("args, message", [
    ([GFX90A, "no_such_kernel"], "no kernel matches 'no_such_kernel' (of 16 kernels read)"),
    ([GFX90A, "spill"], "4 kernels match 'spill': agpr_spill; mfma_spill; spill_in_loop; spill_pressure "
                        "(give the exact name, or --all)"),
    ([GFX90A, GFX942, "agpr_spill"], "agpr_spill is built for 2 targets (gfx90a, gfx942): choose one with "
                                     "--target, or --all"),
    ([GFX90A, GFX90A, "agpr_spill"], "agpr_spill (gfx90a) is in 2 code objects"),
    ([GFX90A], "name the kernel: spillway code PATH... FILTER"),
])
def test_bad_choice_is_one_line_and_exit_2(capsys, args, message):
    status, out, err = cli(capsys, "code", *args)
    assert status == 2 and out == ""
    assert err.startswith("spillway: error: ") and message in err and err.count("\n") == 1


def test_unreadable_code_object_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.co"
    bad.write_bytes(Path(GFX90A).read_bytes()[:2000])
    status, out, err = cli(capsys, "code", str(bad), "agpr_spill")
    assert status == 2 and out == "" and err.startswith("spillway: error: ") and err.count("\n") == 1


def test_what_holds_the_peak_with_source_lines(capsys):
    """With a line table, the peak, each group's definitions and last uses carry their lines (the
    placement the listing's scratch accesses use: isa.source_lines)."""
    lines_co = str(CO.parent / "lines" / "co" / "gfx90a.clang22.dwarf5.co")
    status, out, _ = cli(capsys, "code", lines_co, "mfma_spill")
    assert status == 0
    assert "    at the AGPR peak (+0x664 kernels.cpp:222:11, 58): " in out
    assert "        16 a[0:15] from v_mfma_f32_32x32x8f16 at +0x618 kernels.cpp:222:11; last needed at +0x594 " \
           "kernels.cpp:222:48, " in out
    status, out, _ = cli(capsys, "code", lines_co, "mfma_spill", "--json")
    document = json.loads(out)
    jsonschema.validate(document, json_schema())
    agprs = next(held for held in document["kernels"][0]["pressure"]["at_peaks"] if held["file"] == "a")
    assert agprs["source"]["line"] == 222
    first = agprs["groups"][0]
    assert first["defined_source"] == [{"file": first["defined_source"][0]["file"], "line": 222, "column": 11,
                                        "inferred": False}]
    assert len(first["last_used_source"]) == len(first["last_used_at"])
