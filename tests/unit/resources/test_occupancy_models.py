"""The LLVM 23 and LLVM 24 occupancy models, the next step, and the choice of model.

Oracle: tests/data/occupancy/, code objects compiled by Debian's clang 23.1.4 and its
LLVM 24 snapshot (October 2026) with -Rpass-analysis=kernel-resource-usage, committed
beside the remarks they printed (README.md there has the commands).  No sid root is
needed to run these tests.  The wider sweep behind the models is
scripts/occupancy-sweep.py (toolchains-next.md section 5).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spillway.report.reader import ReadOptions, read_path
from spillway.resources import occupancy
from spillway.resources.occupancy import apply_model, model_for_compiler, resolve_model
from spillway.resources.targets import MACH_TO_PROCESSOR, known_processors, occupancy_model

CORPUS = Path(__file__).resolve().parents[2] / "data" / "occupancy"
MODEL_OF = {"clang-23": "llvm23", "clang-24": "llvm24"}


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("clang-*/*.ccob"))


def expected(code_object: Path) -> dict:
    """The compiler, command and remarks of one corpus file (a row of ``columns`` per kernel)."""
    doc = json.loads(code_object.with_suffix(".json").read_text())
    doc["remarks"] = {name: {c: v for c, v in zip(doc["columns"], row) if v is not None}
                      for name, row in doc["remarks"].items()}
    return doc


def remark_waves(doc: dict, symbol: str) -> int:
    return int(doc["remarks"][symbol]["Occupancy [waves/SIMD]"])


def read(code_object: Path, model: str) -> list[dict]:
    return read_path(str(code_object), ReadOptions(occupancy_model=model))[1]


def test_corpus_is_there_and_small():
    files = corpus_files()
    assert {f.parent.name for f in files} == {"clang-23", "clang-24"}
    assert len(files) >= 20
    assert all(f.stat().st_size < 16 << 10 for f in files)
    assert (CORPUS / "corpus.hip").is_file() and (CORPUS / "build.sh").is_file()


@pytest.mark.parametrize("code_object", corpus_files(), ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_occupancy_equals_the_producing_clangs_remark(code_object):
    doc = expected(code_object)
    model = MODEL_OF[code_object.parent.name]
    for choice in (model, "producer"):
        records = read(code_object, choice)
        assert len(records) == len(doc["remarks"]) > 80
        mismatches = []
        for record in records:
            remark = doc["remarks"][record["symbol"]]
            # the same kernel: the remark's figures are the metadata's
            assert record["sgpr_count"] == int(remark["TotalSGPRs"])
            assert record["group_segment_fixed_size"] == int(remark["LDS Size [bytes/block]"])
            assert record["occupancy_model"] == model
            assert record["compiler"].startswith(doc["compiler"].split(" (")[0])
            if record["occupancy"] != remark_waves(doc, record["symbol"]):
                mismatches.append((record["symbol"], record["occupancy"], remark_waves(doc, record["symbol"])))
        assert not mismatches, f"{choice}: (kernel, spillway, clang): {mismatches}"


def _departures(compiler: str, model: str) -> dict[str, list[str]]:
    out = {}
    for code_object in sorted((CORPUS / compiler).glob("*.ccob")):
        doc = expected(code_object)
        out[code_object.stem] = sorted(r["symbol"] for r in read(code_object, model)
                                       if r["occupancy"] != remark_waves(doc, r["symbol"]))
    return out


def test_llvm22_model_departs_from_clang23_where_the_issue_says():
    departures = _departures("clang-23", "llvm22")
    assert sum(map(len, departures.values())) >= 40
    # gfx9 SGPR limit: 65-80 SGPRs 10 -> 8 waves on gfx900; 81-96 8 -> 7 on gfx90a-class
    for target, low, high in (("gfx900", 65, 80), ("gfx942", 81, 100)):
        in_window = {r["symbol"] for r in read(CORPUS / "clang-23" / f"{target}.ccob", "llvm22")
                     if r["symbol"].startswith("occ_s") and low <= r["sgpr_count"] <= high}
        assert len(in_window) >= 3 and in_window <= set(departures[target]), target
    # gfx950 LDS granule: 12,288 B under 64 threads 4 -> 3, 32,768 B 2 -> 1
    assert {"occ_l12288_w64", "occ_l32768_w64"} <= set(departures["gfx950"])
    gfx950 = {r["symbol"]: r for r in read(CORPUS / "clang-23" / "gfx950.ccob", "llvm22")}
    assert gfx950["occ_l12288_w64"]["occupancy"] == 4 and gfx950["occ_l32768_w64"]["occupancy"] == 2


def test_llvm24_departs_from_llvm23_in_cu_mode_on_odd_lds():
    doc = expected(CORPUS / "clang-24" / "gfx1151-cumode.ccob")
    assert remark_waves(doc, "occ_l4100_w64") == 12
    figures = {m: {r["symbol"]: r["occupancy"] for r in read(CORPUS / "clang-24" / "gfx1151-cumode.ccob", m)}
               for m in ("llvm22", "llvm23", "llvm24")}
    assert [figures[m]["occ_l4100_w64"] for m in ("llvm22", "llvm23", "llvm24")] == [15, 14, 12]
    assert remark_waves(expected(CORPUS / "clang-23" / "gfx1151-cumode.ccob"), "occ_l4100_w64") == 14
    assert _departures("clang-24", "llvm23")["gfx1151-cumode"]


# -- the next step ----------------------------------------------------------------

_FIELD = {"vgpr": "vgpr_count", "sgpr": "sgpr_count", "lds": "group_segment_fixed_size",
          "workgroup": "max_flat_workgroup_size"}
_SHAPE = ("vgpr_count", "agpr_count", "sgpr_count", "group_segment_fixed_size", "max_flat_workgroup_size")


def test_occupancy_next_against_the_remarks():
    """Where the corpus has the kernel with the limiting resource at ``at_most``, clang
    printed ``waves``; one step above, the kernel's own figure."""
    at_checked = above_checked = 0
    for code_object in corpus_files():
        doc = expected(code_object)
        records = read(code_object, MODEL_OF[code_object.parent.name])
        by_shape: dict[tuple, list[int]] = {}
        for r in records:
            by_shape.setdefault(tuple(r[f] for f in _SHAPE), []).append(remark_waves(doc, r["symbol"]))
        for r in records:
            step = r["occupancy_next"]
            if r["occupancy"] == occupancy_model(r["target"].split(":")[0]).max_waves_per_simd:
                assert step is None and r["occupancy_limit"] == "hardware"
                continue
            assert step is not None and step["waves"] > r["occupancy"], r["symbol"]
            if len(step["needs"]) != 1 or step["needs"][0]["resource"] not in _FIELD:
                continue
            need = step["needs"][0]
            field = _FIELD[need["resource"]]
            assert need["at_most"] < r[field]
            for value, want, counter in ((need["at_most"], step["waves"], "at"),
                                         (need["at_most"] + 1, r["occupancy"], "above")):
                shape = tuple(value if f == field else r[f] for f in _SHAPE)
                for printed in by_shape.get(shape, []):
                    assert printed == want, (code_object.name, r["symbol"], need, counter)
                    if counter == "at":
                        at_checked += 1
                    else:
                        above_checked += 1
    assert at_checked >= 20 and above_checked >= 40


def _occ(target, vgprs=8, *, sgprs=16, lds=0, wave=64, max_wg=256, wgp=True, agprs=None, model="llvm23"):
    return occupancy.compute(target, vgpr_count=vgprs, agpr_count=agprs, sgpr_count=sgprs,
                             group_segment_fixed_size=lds, wavefront_size=wave, max_flat_workgroup_size=max_wg,
                             workgroup_processor_mode=wgp, model=model)


def test_next_step_examples():
    # gfx1151 wave32: 104 VGPRs give 12 waves; 96 or fewer give 16
    step = _occ("gfx1151", 104, wave=32).next
    assert step == {"waves": 16, "needs": [{"resource": "vgpr", "at_most": 96}]}
    # gfx900, LLVM 23: 70 SGPRs cost 80 + 16 of 800: 8 waves; 64 or fewer: 10
    assert _occ("gfx900", sgprs=70).next == {"waves": 10, "needs": [{"resource": "sgpr", "at_most": 64}]}
    # two limits at the same figure: both must come down
    tied = _occ("gfx900", 36, sgprs=90)
    assert tied.waves_per_simd == 7 and tied.limit == "vgpr"
    assert {n["resource"] for n in tied.next["needs"]} == {"vgpr", "sgpr"}
    assert _occ("gfx900", **{k["resource"].replace("vgpr", "vgprs").replace("sgpr", "sgprs"): k["at_most"]
                             for k in tied.next["needs"]}).waves_per_simd == tied.next["waves"]
    # gfx908 keeps AGPRs in a file of their own: the AGPRs are what must come down
    agpr_bound = _occ("gfx908", 20, agprs=100)
    assert agpr_bound.waves_per_simd == 2
    assert agpr_bound.next["needs"] == [{"resource": "agpr", "at_most": 84}]
    # LDS: 40,000 B under 256 threads on gfx1151 (amdgpu-binaries.md 4.5): 6 waves; 32,768 B: 8
    lds = _occ("gfx1151", 8, lds=40000, wave=32, model="llvm22")
    assert (lds.waves_per_simd, lds.limit) == (6, "lds")
    assert lds.next == {"waves": 8, "needs": [{"resource": "lds", "at_most": 32768}]}
    # at the cap, and for an unknown target: nothing
    assert _occ("gfx1151", 8, wave=32).next is None
    unknown = _occ("gfx1250-strict", wave=32, model="llvm23")
    assert unknown.waves_per_simd is None and unknown.limit == "unknown target" and unknown.next is None


# -- the models on small synthetic inputs ---------------------------------------------

@pytest.mark.parametrize("target,sgprs,llvm22,llvm23", [
    ("gfx900", 64, 10, 10), ("gfx900", 65, 10, 8), ("gfx900", 80, 10, 8), ("gfx900", 81, 9, 7),
    ("gfx900", 88, 9, 7), ("gfx900", 96, 8, 7), ("gfx900", 97, 8, 6), ("gfx900", 100, 8, 6),
    ("gfx90a", 80, 8, 8), ("gfx90a", 81, 8, 7), ("gfx90a", 96, 8, 7), ("gfx90a", 97, 8, 6),
    ("gfx90a", 100, 8, 6), ("gfx90a", 104, 7, 6), ("gfx1030", 106, 16, 16)])
def test_sgpr_limit_per_model(target, sgprs, llvm22, llvm23):
    wave = 32 if target.startswith("gfx10") else 64
    assert _occ(target, sgprs=sgprs, wave=wave, model="llvm22").waves_per_simd == llvm22
    assert _occ(target, sgprs=sgprs, wave=wave, model="llvm23").waves_per_simd == llvm23
    assert _occ(target, sgprs=sgprs, wave=wave, model="llvm24").waves_per_simd == llvm23


def test_lds_granules_per_model():
    # gfx950: 12,288 B under 64 threads; 32,768 B; 12,288 B under 128 threads (toolchains-next.md 5)
    for lds, max_wg, figures in ((12288, 64, (4, 3, 3)), (32768, 64, (2, 1, 1)), (12288, 128, (7, 6, 6))):
        got = tuple(_occ("gfx950", lds=lds, max_wg=max_wg, model=m).waves_per_simd
                    for m in ("llvm22", "llvm23", "llvm24"))
        assert got == figures, (lds, max_wg)
    # gfx1151 CU mode, 4,100 B under 64 threads: 15 / 14 / 12
    assert [_occ("gfx1151", lds=4100, max_wg=64, wave=32, wgp=False, model=m).waves_per_simd
            for m in ("llvm22", "llvm23", "llvm24")] == [15, 14, 12]


def test_lds_limit_charges_the_sgpr_minimum_in_llvm23():
    """LDS allowing 9 waves on gfx900 prints 8 in LLVM 23: the kernel is charged
    getMinNumSGPRs(9) = 65 SGPRs, which the reworked inverse turns into 8 waves."""
    assert occupancy.min_sgprs_for_waves(9, occupancy_model("gfx900")) == 65
    assert _occ("gfx900", lds=7168, model="llvm22").waves_per_simd == 9
    assert _occ("gfx900", lds=7168, model="llvm23").waves_per_simd == 8
    assert _occ("gfx900", lds=7168, model="llvm23").limit == "lds"


def test_model_from_the_producer():
    assert model_for_compiler("Debian clang version 23.1.4 (2)") == "llvm23"
    assert model_for_compiler("Debian clang version 24.0.0 (++20261025103442+7e3c57157096-1~exp1)") == "llvm24"
    assert model_for_compiler("AMD clang version 22.0.0git (https://github.com/ROCm/llvm-project "
                              "roc-7.2.3 26014 ...)") == "llvm22"
    assert model_for_compiler("AMD clang version 23.0.0git (roc-10.0.0)") == "llvm23"
    assert model_for_compiler("clang version 15.0.7") == "llvm22"
    assert model_for_compiler("") == occupancy.DEFAULT_MODEL
    assert resolve_model("producer", "Ubuntu clang version 19.1.1") == "llvm22"
    assert resolve_model("llvm24", "clang version 15.0.7") == "llvm24"
    with pytest.raises(ValueError):
        resolve_model("llvm25", None)


def test_every_machine_value_of_llvm24_has_a_name():
    # EF_AMDGPU_MACH values of /usr/lib/llvm-24/include/llvm/BinaryFormat/ELF.h (Debian's snapshot)
    assert len(MACH_TO_PROCESSOR) == 80
    for value, name in ((0x50, "gfx1310"), (0x57, "gfx1154"), (0x5b, "gfx12-5-generic"), (0x5c, "gfx1172"),
                        (0x5d, "gfx1170"), (0x5e, "gfx1171"), (0x62, "gfx11-7-generic"), (0x63, "gfx13-generic"),
                        (0x5a, "gfx1251"), (0xeb, "gfx1250-strict"), (0x01, "r600")):
        assert MACH_TO_PROCESSOR[value] == name
    # models only where clang 23/24 compiled and printed remarks; never for LLVM 22 on targets it lacked
    assert {"gfx1154", "gfx1170", "gfx1171", "gfx1172", "gfx11-7-generic", "gfx12-5-generic",
            "gfx1310"} <= set(known_processors("llvm24"))
    assert "gfx1170" not in known_processors("llvm22")
    # gfx940/941: gone from LLVM 22 on (clang 23/24: "unsupported HIP gpu architecture"), clang 19 wrote them
    assert _occ("gfx940", model="llvm22").waves_per_simd == 8
    assert _occ("gfx940", model="llvm23").limit == "unknown target"
    assert "gfx1250-strict" in known_processors("llvm24") and "gfx1250-strict" not in known_processors("llvm23")
    assert _occ("gfx1170", wave=32, model="llvm22").limit == "unknown target"
    assert _occ("r600").waves_per_simd is None


def test_apply_model_recomputes_a_report_record():
    record = {"target": "gfx950", "compiler": "Debian clang version 22.1.8", "vgpr_count": 8, "agpr_count": 0,
              "sgpr_count": 16, "group_segment_fixed_size": 12288, "wavefront_size": 64,
              "max_flat_workgroup_size": 64, "workgroup_processor_mode": None, "occupancy": 4,
              "occupancy_model": "llvm22"}
    assert apply_model(record, "llvm23")["occupancy"] == 3
    assert apply_model(record, "producer")["occupancy_model"] == "llvm22"
    assert apply_model(record, "producer")["occupancy"] == 4
    assert apply_model({"target": "gfx950", "occupancy": 4}, "llvm23") == {"target": "gfx950", "occupancy": 4}
    unnamed = {k: v for k, v in record.items() if k != "occupancy_model"}
    assert apply_model(unnamed, "llvm23") == unnamed        # no model named: taken as it is


def test_compare_applies_one_model_to_a_report_and_a_binary(capsys, tmp_path):
    from support.gate_fixtures import run_cli

    gfx950 = CORPUS / "clang-23" / "gfx950.ccob"
    old = tmp_path / "old.json"
    assert run_cli(capsys, "report", "--all", "--format", "json", "-o", old, "--occupancy-model", "llvm22",
                   gfx950).status == 0
    same = run_cli(capsys, "compare", gfx950, "--against", old, "--format", "json")
    document = json.loads(same.out)
    assert document["summary"]["occupancy_worse"] == 0, "the report was recomputed under llvm23"


# -- the option on the command line --------------------------------------------------

def test_report_names_and_applies_the_model(capsys, tmp_path, monkeypatch):
    from support.gate_fixtures import run_cli

    monkeypatch.setenv("COLUMNS", "250")                 # room for the next-step column

    gfx950 = CORPUS / "clang-23" / "gfx950.ccob"
    figures = {}
    for model in ("llvm22", "llvm23", "producer"):
        out = tmp_path / f"{model}.json"
        assert run_cli(capsys, "report", "--all", "--format", "json", "-o", out, "--occupancy-model", model,
                       gfx950).status == 0
        document = json.loads(out.read_text())
        assert document["occupancy_model"] == model
        figures[model] = {k["symbol"]: (k["occupancy"], k["occupancy_model"]) for k in document["kernels"]}
    assert figures["llvm22"]["occ_l12288_w64"] == (4, "llvm22")
    assert figures["llvm23"]["occ_l12288_w64"] == (3, "llvm23")
    assert figures["producer"] == figures["llvm23"]          # built by clang 23
    default = run_cli(capsys, "report", "--all", "--format", "json", gfx950)
    assert json.loads(default.out)["occupancy_model"] == "llvm23"
    table = run_cli(capsys, "report", "--all", gfx950, "occ_l12288_w64")
    assert "11520 or fewer B of LDS for 4" in table.out
    bad = run_cli(capsys, "report", "--occupancy-model", "llvm21", gfx950)
    assert bad.status == 2 and "invalid choice" in bad.err


def test_check_follows_the_baselines_model(capsys, tmp_path):
    """A baseline written under llvm22 (or a version-1 one, which names no model)
    gates under llvm22 unless told otherwise, and check says so."""
    from support.gate_fixtures import run_cli

    gfx950 = CORPUS / "clang-23" / "gfx950.ccob"
    baseline = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", gfx950, "-o", baseline, "--note", "clang 23", "--gate",
                   "scratch,occupancy", "--occupancy-model", "llvm22").status == 0
    written = json.loads(baseline.read_text())
    assert written["occupancy_model"] == "llvm22"
    from spillway.gate.baseline import load_baseline        # any version: entries per (target, key)
    floors = {e.key: e.allow.occupancy for e in load_baseline(str(baseline)).kernels}
    assert floors["occ_l12288_w64"] == 4
    # an update without the option keeps the baseline's model (no floor moves)
    assert run_cli(capsys, "baseline", "write", gfx950, "-o", baseline, "--note", "clang 23").status == 0
    assert json.loads(baseline.read_text())["occupancy_model"] == "llvm22"
    same = run_cli(capsys, "check", gfx950, "--baseline", baseline)
    assert same.status == 0 and "llvm22 model the baseline was written with" in same.err
    newer = run_cli(capsys, "check", gfx950, "--baseline", baseline, "--occupancy-model", "llvm23")
    assert newer.status == 1 and "occ_l12288_w64" in newer.out
    del written["occupancy_model"]                      # as a version-1 baseline
    baseline.write_text(json.dumps(written))
    assert run_cli(capsys, "check", gfx950, "--baseline", baseline).status == 0


def test_next_step_is_reached_and_is_the_largest():
    """On random shapes under every model: with every need met the kernel reaches
    ``waves``; with a single need one above ``at_most`` it does not."""
    import random

    rng = random.Random(3)
    field = {"vgpr": "vgpr_count", "agpr": "agpr_count", "sgpr": "sgpr_count", "lds": "group_segment_fixed_size",
             "workgroup": "max_flat_workgroup_size"}
    checked = 0
    for _ in range(1500):
        target = rng.choice(["gfx600", "gfx900", "gfx908", "gfx90a", "gfx950", "gfx1030", "gfx1151", "gfx1250",
                             "gfx1310"])
        wave = 64 if target.startswith("gfx9") or target == "gfx600" else rng.choice([32, 64])
        shape = dict(vgpr_count=rng.randint(1, 256), sgpr_count=rng.randint(1, 104),
                     agpr_count=rng.randint(0, 256) if target in ("gfx908", "gfx90a", "gfx950") else None,
                     group_segment_fixed_size=rng.choice([0, rng.randint(1, 65536)]), wavefront_size=wave,
                     max_flat_workgroup_size=rng.choice([64, 96, 128, 256, 320, 512, 1024]),
                     workgroup_processor_mode=rng.choice([True, False]))
        for model in ("llvm22", "llvm23", "llvm24"):
            result = occupancy.compute(target, model=model, **shape)
            if result.next is None:
                continue
            checked += 1
            met = dict(shape, **{field[n["resource"]]: n["at_most"] for n in result.next["needs"]})
            assert occupancy.compute(target, model=model, **met).waves_per_simd == result.next["waves"]
            if len(result.next["needs"]) == 1:
                need = result.next["needs"][0]
                above = dict(shape, **{field[need["resource"]]: need["at_most"] + 1})
                assert occupancy.compute(target, model=model, **above).waves_per_simd < result.next["waves"]
    assert checked > 1000
