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
    assert document["schema"] == "spillway.code/2"
    assert [k["target"] for k in document["kernels"]] == ["gfx90a", "gfx942"]
    first = document["kernels"][0]
    kinds = [i["kind"] for i in first["instructions"]]
    assert kinds.count("agpr_write") == first["isa"]["agpr_writes"] > 0
    assert kinds.count("agpr_read") == first["isa"]["agpr_reads"] > 0


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
