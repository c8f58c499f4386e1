"""spillway baseline write: the file format, determinism, updates with
--allow/--reason, and errors."""

from __future__ import annotations

import hashlib
import os

import jsonschema
import orjson
import pytest

from support.gate_fixtures import (TARGET, assert_one_line_error, builds, load_json, oracle, record,  # noqa: F401
                           run_cli, write_report)
from spillway import atomic
from spillway.constants import REPORT_SCHEMA
from spillway.gate.commands import quote_every_path
from spillway.gate.baseline import SCHEMA, SourceHasher, load_baseline, render, sha256_path, short_name
from spillway.report.record import Report
from spillway.schemas import schema_for

TOPK = "_Z4topkILi32EEvPKfiPfPi"            # void topk<32>(float const*, int, float*, int*)
NORM = "_Z7rmsnormILi16384ELi128ELi128EEvPKDhS1_PDhf"
SILU = "_Z8silu_mulPKfS0_Pfi"
ROCPRIM_OLD = "_ZN7rocprim17ROCPRIM_300400_NS6detail11sort_kernelILj256EEEvPi"
ROCPRIM_NEW = "_ZN7rocprim17ROCPRIM_300500_NS6detail11sort_kernelILj256EEEvPi"


def kernel_lines(path) -> list[dict]:
    """The kernel lines, read line by line: one JSON object (one key) per line."""
    lines = path.read_bytes().decode().splitlines()
    start = lines.index('  "kernels": [')
    out = []
    for line in lines[start + 1:]:
        if line == "  ]":
            break
        out.append(orjson.loads(line.strip().rstrip(",")))
    return out


def entries(path) -> list[dict]:
    """Every (target, key) entry of a baseline file, as spillway reads it
    (any version): the allowances without absent fields, the recorded figures."""
    out = []
    for entry in load_baseline(str(path)).kernels:
        item = {"target": entry.target, "key": entry.key, "name": entry.name,
                "allow": entry.allow.model_dump(exclude_none=True), "recorded": entry.recorded.as_dict()}
        if entry.reason is not None:
            item["reason"] = entry.reason
        out.append(item)
    return out


def test_synthetic_records_are_valid_reports():
    Report.model_validate({"schema": REPORT_SCHEMA, "spillway_version": "0", "files": [],
                           "kernels": [record(TOPK, scratch=272)]})


def test_format_sorted_one_kernel_per_line_schema_valid(tmp_path, capsys, epoch):
    report = write_report(tmp_path / "r.json", [
        record(SILU, target="gfx90a:xnack-", vgprs=10),
        record(TOPK, scratch=272, vgprs=61),
        record(NORM, scratch=360, vgpr_spills=115, vgprs=128, occupancy=10, lds=128),
    ])
    out = tmp_path / "base.json"
    run = run_cli(capsys, "baseline", "write", report, "-o", out, "--note", "clang-15 release",
                  "--gate", "spills,scratch", "--record-all")
    assert run.status == 0, run.err
    assert "wrote" in run.out and "3 kernels" in run.out
    document = load_json(out)
    jsonschema.validate(document, schema_for("baseline"))
    assert document["schema"] == SCHEMA
    assert document["note"] == "clang-15 release"
    assert document["gate"] == ["scratch", "spills"]          # canonical metric order
    provenance = document["provenance"]
    assert provenance["created"] == "2023-11-14T22:13:20Z"     # SOURCE_DATE_EPOCH
    assert provenance["compilers"] == ["clang version 22"]
    assert provenance["code_object_versions"] == [6]
    assert provenance["targets"] == ["gfx1100", "gfx90a:xnack-"]
    assert provenance["files"][0]["path"] == str(report)
    assert provenance["files"][0]["sha256"] == hashlib.sha256(report.read_bytes()).hexdigest()
    lines = kernel_lines(out)
    assert lines == document["kernels"]
    # One line per key, sorted by key; targets sorted within it; figures at their default left out;
    # no allow object where the allowances are the recorded figures; no name (it is the key demangled).
    assert [line["key"] for line in lines] == sorted({TOPK, NORM, SILU})
    silu = next(line for line in lines if line["key"] == SILU)
    assert silu == {"key": SILU, "targets": [{"target": "gfx90a:xnack-", "vgprs": 10, "sgprs": 16,
                                              "occupancy": 16}]}
    norm = next(line for line in lines if line["key"] == NORM)
    assert norm["targets"] == [{"target": "gfx1100", "scratch": 360, "vgpr_spills": 115, "vgprs": 128,
                                "sgprs": 16, "lds": 128, "occupancy": 10}]
    kernels = entries(out)
    assert [(e["target"], e["key"]) for e in kernels] == sorted((e["target"], e["key"]) for e in kernels)
    topk = next(e for e in kernels if e["key"] == TOPK)
    assert topk["name"] == "void topk<32>(float const*, int, float*, int*)"
    assert topk["allow"] == {"scratch": 272, "spills": 0}
    assert topk["recorded"]["vgprs"] == 61 and topk["recorded"]["occupancy"] == 16
    norm = next(e for e in kernels if e["key"] == NORM)
    assert norm["allow"] == {"scratch": 360, "spills": 115}


def test_same_input_same_bytes(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    records = [record(TOPK, scratch=272), record(SILU)]
    report = write_report(tmp_path / "r.json", records)
    out = tmp_path / "base.json"
    assert run_cli(capsys, "baseline", "write", report, "-o", out, "--note", "n").status == 0
    first = out.read_bytes()
    # Rewriting from the same input keeps the creation time: identical bytes.
    assert run_cli(capsys, "baseline", "write", report, "-o", out).status == 0
    assert out.read_bytes() == first
    # The order kernels are read in does not matter (the input file's SHA-256 does).
    reversed_report = write_report(tmp_path / "reversed.json", list(reversed(records)))
    other = tmp_path / "other.json"
    assert run_cli(capsys, "baseline", "write", reversed_report, "-o", other, "--note", "n").status == 0
    assert kernel_lines(other) == kernel_lines(out)
    # Two fresh files from the same input under SOURCE_DATE_EPOCH are identical.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path in (a, b):
        assert run_cli(capsys, "baseline", "write", report, "-o", path, "--note", "n").status == 0
    assert a.read_bytes() == b.read_bytes()
    # A content change gets a new creation time.
    write_report(report, [record(TOPK, scratch=200), record(SILU)])
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert run_cli(capsys, "baseline", "write", report, "-o", out).status == 0
    assert load_json(out)["provenance"]["created"] != "2023-11-14T22:13:20Z"
    # render() is a fixed point of load_baseline().
    assert render(load_baseline(str(out))) == out.read_bytes()


def test_duplicates_take_the_worst_value(tmp_path, capsys, epoch):
    report = write_report(tmp_path / "r.json", [
        record(TOPK, scratch=100, vgprs=70, occupancy=16, file="a.o"),
        record(TOPK, scratch=272, vgprs=61, occupancy=12, lds=64, file="b.o"),
        record(TOPK, scratch=0, vgpr_spills=3, sgpr_spills=2, vgprs=50, occupancy=14, file="c.o"),
    ])
    out = tmp_path / "base.json"
    assert run_cli(capsys, "baseline", "write", report, "-o", out, "--note", "n",
                   "--gate", "scratch,spills,occupancy,vgprs,lds").status == 0
    (entry,) = entries(out)
    assert entry["allow"] == {"scratch": 272, "spills": 5, "occupancy": 12, "vgprs": 70, "lds": 64}
    assert entry["recorded"]["vgpr_spills"] == 3 and entry["recorded"]["sgpr_spills"] == 2


def test_versioned_namespaces_share_a_key(tmp_path, capsys, epoch):
    """A rocPRIM update renames its inline namespace; the baseline key stays."""
    old = write_report(tmp_path / "old.json", [record(ROCPRIM_OLD, scratch=64)])
    new = write_report(tmp_path / "new.json", [record(ROCPRIM_NEW, scratch=64)])
    out = tmp_path / "base.json"
    assert run_cli(capsys, "baseline", "write", old, "-o", out, "--note", "n").status == 0
    run = run_cli(capsys, "check", new, "--baseline", out)
    assert run.status == 0, run.out
    assert "OK: 1 kernel within baseline" in run.out
    assert "no longer built" not in run.out


def test_update_tightens_and_refuses_to_loosen(tmp_path, capsys, epoch):
    report = tmp_path / "r.json"
    out = tmp_path / "base.json"
    write_report(report, [record(TOPK, scratch=272), record(NORM, scratch=360, vgpr_spills=115),
                          record(SILU)])
    assert run_cli(capsys, "baseline", "write", report, "-o", out, "--note", "first",
                   "--gate", "scratch,spills").status == 0
    # topk went down (tightened), rmsnorm went up (refused), a new kernel arrives spilling.
    write_report(report, [record(TOPK, scratch=128), record(NORM, scratch=400, vgpr_spills=120),
                          record(SILU), record("_Z3newPi", scratch=16)])
    run = run_cli(capsys, "baseline", "write", report, "-o", out)
    assert run.status == 1, run.err
    assert "kept scratch allowance of void rmsnorm<16384, 128, 128>" in run.err
    assert "--allow-key _Z7rmsnormILi16384ELi128ELi128EEvPKDhS1_PDhf --reason TEXT" in run.err
    assert "kept scratch allowance of new(int*)" in run.err
    by_key = {e["key"]: e for e in entries(out)}
    assert load_json(out)["note"] == "first"                            # kept
    assert by_key[TOPK]["allow"] == {"scratch": 128, "spills": 0}      # tightened
    assert by_key[NORM]["allow"] == {"scratch": 360, "spills": 115}    # not loosened
    assert by_key[NORM]["recorded"]["scratch"] == 400                  # but recorded
    assert by_key["_Z3newPi"]["allow"] == {"scratch": 0, "spills": 0}  # new kernels start at zero
    assert "reason" not in by_key[NORM]
    # In the file, only the kernels whose allowances are not their recorded figures have an allow object.
    allow_objects = {line["key"]: target["allow"] for line in kernel_lines(out) for target in line["targets"]
                     if "allow" in target}
    assert allow_objects == {NORM: {"scratch": 360, "spills": 115}, "_Z3newPi": {"scratch": 0, "spills": 0}}
    # The gate still fails on what was refused.
    assert run_cli(capsys, "check", report, "--baseline", out).status == 1

    # Accept it for rmsnorm (glob on the short name) and the new kernel (exact short name).
    run = run_cli(capsys, "baseline", "write", report, "-o", out, "--allow", "rmsnorm<*", "--allow", "new",
                  "--reason", "clang-15 caps gfx11 at 128 VGPRs")
    assert run.status == 0, run.err
    assert "3 loosened with --allow" in run.out
    by_key = {e["key"]: e for e in entries(out)}
    assert by_key[NORM]["allow"] == {"scratch": 400, "spills": 120}
    assert by_key[NORM]["reason"] == "clang-15 caps gfx11 at 128 VGPRs"
    assert by_key["_Z3newPi"]["allow"] == {"scratch": 16, "spills": 0}
    assert by_key["_Z3newPi"]["reason"] == "clang-15 caps gfx11 at 128 VGPRs"
    assert "reason" not in by_key[TOPK]
    norm_line = next(line for line in kernel_lines(out) if line["key"] == NORM)
    assert norm_line["targets"][0]["reason"] == "clang-15 caps gfx11 at 128 VGPRs"
    assert "allow" not in norm_line["targets"][0]
    assert run_cli(capsys, "check", report, "--baseline", out).status == 0

    # The reason stays through later updates that do not loosen anything.
    write_report(report, [record(TOPK, scratch=128), record(NORM, scratch=300, vgpr_spills=100),
                          record(SILU), record("_Z3newPi", scratch=16)])
    assert run_cli(capsys, "baseline", "write", report, "-o", out).status == 0
    by_key = {e["key"]: e for e in entries(out)}
    assert by_key[NORM]["allow"] == {"scratch": 300, "spills": 100}
    assert by_key[NORM]["reason"] == "clang-15 caps gfx11 at 128 VGPRs"


def test_update_occupancy_floor_and_dynamic_stack(tmp_path, capsys, epoch):
    report = tmp_path / "r.json"
    out = tmp_path / "base.json"
    write_report(report, [record(TOPK, occupancy=16), record(SILU)])
    assert run_cli(capsys, "baseline", "write", report, "-o", out, "--note", "n",
                   "--gate", "scratch,occupancy").status == 0
    write_report(report, [record(TOPK, occupancy=10), record(SILU, dynamic_stack=True)])
    run = run_cli(capsys, "baseline", "write", report, "-o", out)
    assert run.status == 1
    assert "kept occupancy floor of void topk<32>" in run.err
    assert "kept dynamic_stack allowance of silu_mul" in run.err
    by_key = {e["key"]: e for e in entries(out)}
    assert by_key[TOPK]["allow"]["occupancy"] == 16
    assert "dynamic_stack" not in by_key[SILU]["allow"]
    run = run_cli(capsys, "check", report, "--baseline", out)
    assert run.status == 1
    assert "occupancy 10 waves/SIMD, allowed at least 16 waves/SIMD" in run.out
    assert "scratch 0 B/lane + dynamic stack, allowed at most 0 B/lane" in run.out
    run = run_cli(capsys, "baseline", "write", report, "-o", out, "--allow", "*", "--reason", "accepted")
    assert run.status == 0, run.err
    by_key = {e["key"]: e for e in entries(out)}
    assert by_key[TOPK]["allow"]["occupancy"] == 10
    assert by_key[SILU]["allow"] == {"scratch": 0, "dynamic_stack": True, "occupancy": 16}
    silu_line = next(line for line in kernel_lines(out) if line["key"] == SILU)
    assert silu_line["targets"][0]["dynamic_stack"] is True and "allow" not in silu_line["targets"][0]
    assert run_cli(capsys, "check", report, "--baseline", out).status == 0


def test_update_keeps_vanished_kernels_until_their_removal_is_accepted(tmp_path, capsys, epoch):
    """A kernel gone from the build stays in the baseline (check keeps failing on it) and the
    update exits 1 with the command that accepts it; --allow-removed drops it and records why;
    targets the run did not read are carried over either way."""
    report = tmp_path / "r.json"
    out = tmp_path / "base.json"
    write_report(report, [record(TOPK), record(SILU), record(TOPK, target="gfx90a")])
    assert run_cli(capsys, "baseline", "write", report, "-o", out, "--note", "n", "--record-all").status == 0
    write_report(report, [record(TOPK), record(TOPK, target="gfx90a")])
    run = run_cli(capsys, "baseline", "write", report, "-o", out, "--target", "gfx1100")
    assert run.status == 1, run.err
    assert (f"spillway: kept silu_mul(float const*, float const*, float*, int) [gfx1100]: no longer built; accept "
            f"its removal with: spillway baseline write {quote_every_path(str(report))} -o "
            f"{quote_every_path(str(out))} --target gfx1100 --allow-removed-key {SILU} --reason TEXT") in run.err
    assert sorted((e["target"], e["key"]) for e in entries(out)) == sorted([("gfx1100", SILU), ("gfx1100", TOPK),
                                                                           ("gfx90a", TOPK)])
    assert run_cli(capsys, "check", report, "--baseline", out).status == 1

    run = run_cli(capsys, "baseline", "write", report, "-o", out, "--target", "gfx1100", "--allow-removed",
                  "silu_mul", "--reason", "fused into topk")
    assert run.status == 0, run.err
    assert "removed silu_mul(float const*, float const*, float*, int) [gfx1100]" in run.err
    assert [(e["target"], e["key"]) for e in entries(out)] == [("gfx1100", TOPK), ("gfx90a", TOPK)]
    assert [[t["target"] for t in line["targets"]] for line in kernel_lines(out)] == [["gfx1100", "gfx90a"]]
    assert load_json(out)["removed"] == [{"target": "gfx1100", "key": SILU, "reason": "fused into topk"}]
    jsonschema.validate(load_json(out), schema_for("baseline"))
    assert run_cli(capsys, "check", report, "--baseline", out).status == 0


def test_gate_change_on_update(tmp_path, capsys, epoch):
    report = write_report(tmp_path / "r.json", [record(TOPK, scratch=272, vgprs=61)])
    out = tmp_path / "base.json"
    assert run_cli(capsys, "baseline", "write", report, "-o", out, "--note", "n").status == 0
    assert load_json(out)["gate"] == ["scratch"]
    assert run_cli(capsys, "baseline", "write", report, "-o", out, "--gate", "vgprs").status == 0
    document = load_json(out)
    assert document["gate"] == ["vgprs"]
    assert entries(out)[0]["allow"] == {"vgprs": 61}


def test_real_build_baseline_records_readelf_values(builds, capsys, epoch):
    out = builds.work / "baseline-old.json"
    run = run_cli(capsys, "baseline", "write", builds.old, "-o", out, "--note", "clang-15 gfx1100",
                  "--gate", "scratch,spills,occupancy,vgprs,lds")
    assert run.status == 0, run.err
    document = load_json(out)
    jsonschema.validate(document, schema_for("baseline"))
    assert document["provenance"]["compilers"][0].startswith("Debian clang version 15")
    assert document["provenance"]["code_object_versions"] == [4]
    assert document["provenance"]["targets"] == [TARGET]
    expected = oracle(builds.old, builds.work)
    kernels = entries(out)
    assert sorted(e["key"] for e in kernels) == sorted(expected)
    for entry in kernels:
        kernel = expected[entry["key"]]
        assert entry["allow"] == {"scratch": kernel.scratch, "spills": kernel.spills,
                                  "occupancy": kernel.occupancy, "vgprs": kernel.vgprs, "lds": kernel.lds}
    # The known clang-15 spill on gfx11: the 4-wave 128x128 WMMA GEMM at the 128-VGPR cap.
    gemm = next(e for e in kernels if e["name"].startswith("void gemm_i8<128, 128,"))
    assert gemm["recorded"]["vgprs"] == 128 and gemm["recorded"]["vgpr_spills"] > 0


def test_errors_are_one_line(tmp_path, capsys):
    report = write_report(tmp_path / "r.json", [record(TOPK)])
    assert_one_line_error(run_cli(capsys, "baseline", "write", report, "-o", tmp_path / "b.json"),
                          "--note")
    assert_one_line_error(run_cli(capsys, "baseline", "write", report, "-o", tmp_path / "b.json",
                                  "--note", "n", "--gate", "scratch,bogus"),
                          "unknown metric 'bogus'", "scratch, spills, occupancy, vgprs, lds")
    assert_one_line_error(run_cli(capsys, "baseline", "write", report, "-o", tmp_path / "b.json",
                                  "--note", "n", "--allow", "topk*"), "--reason")
    assert_one_line_error(run_cli(capsys, "baseline", "write", report, "-o", tmp_path / "b.json",
                                  "--note", "n", "--allow", "nothing*", "--reason", "r"),
                          "--allow 'nothing*' matches no kernel")
    assert not (tmp_path / "b.json").exists()
    # An existing -o that is not a baseline is not overwritten.
    other = tmp_path / "notes.txt"
    other.write_text("keep me\n")
    assert_one_line_error(run_cli(capsys, "baseline", "write", report, "-o", other, "--note", "n"),
                          "not a spillway baseline")
    assert other.read_text() == "keep me\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_one_line_error(run_cli(capsys, "baseline", "write", empty, "-o", tmp_path / "b.json",
                                  "--note", "n"), "no kernels found")


@pytest.mark.parametrize("content, fragment", [
    (b"{not json", "not valid JSON"),
    (b'{"schema": "spillway.baseline/6", "kernels": []}', "newer than"),
    (b'{"schema": "spillway.baseline/3", "note": "n", "gate": ["scratch"]}', "invalid baseline"),
    (b'{"schema": "spillway.report/2", "kernels": []}', "not a spillway baseline"),
    (b'{"schema": "spillway.baseline/1", "note": "n", "gate": ["scratch"]}', "invalid baseline"),
])
def test_bad_baselines_exit_2(tmp_path, capsys, content, fragment):
    report = write_report(tmp_path / "r.json", [record(TOPK)])
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert_one_line_error(run_cli(capsys, "check", report, "--baseline", path), fragment, str(path))


def test_invalid_entry_and_duplicates(tmp_path, capsys, epoch):
    report = write_report(tmp_path / "r.json", [record(TOPK)])
    good = tmp_path / "good.json"
    assert run_cli(capsys, "baseline", "write", report, "-o", good, "--note", "n", "--record-all").status == 0
    document = load_json(good)
    document["kernels"][0]["targets"][0]["scratch"] = -1
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(document))
    assert_one_line_error(run_cli(capsys, "check", report, "--baseline", bad), "kernels.0.targets.0.scratch")
    document = load_json(good)
    document["kernels"][0]["targets"][0]["allow"] = {"scratch": -1}
    bad.write_bytes(orjson.dumps(document))
    assert_one_line_error(run_cli(capsys, "check", report, "--baseline", bad),
                          "kernels.0.targets.0.allow.scratch")
    document = load_json(good)
    document["kernels"][0]["targets"][0]["vgprz"] = 1                     # a misspelt figure is not ignored
    bad.write_bytes(orjson.dumps(document))
    assert_one_line_error(run_cli(capsys, "check", report, "--baseline", bad), "kernels.0.targets.0.vgprz")
    document = load_json(good)
    document["kernels"].append(document["kernels"][0])                    # a key on two lines
    bad.write_bytes(orjson.dumps(document))
    assert_one_line_error(run_cli(capsys, "check", report, "--baseline", bad), "listed twice")
    document = load_json(good)
    document["kernels"][0]["targets"].append(document["kernels"][0]["targets"][0])   # a target twice
    bad.write_bytes(orjson.dumps(document))
    assert_one_line_error(run_cli(capsys, "check", report, "--baseline", bad), "listed twice", TOPK)
    document = load_json(good)
    document["kernels"][0]["targets"] = []
    bad.write_bytes(orjson.dumps(document))
    assert_one_line_error(run_cli(capsys, "check", report, "--baseline", bad), "kernels.0.targets")
    assert_one_line_error(run_cli(capsys, "check", report, "--baseline", tmp_path / "missing.json"),
                          "missing.json: no such file; write it with: spillway baseline write")


def test_write_is_atomic(tmp_path, capsys, monkeypatch, epoch):
    report = write_report(tmp_path / "r.json", [record(TOPK, scratch=272)])
    out = tmp_path / "base.json"
    assert run_cli(capsys, "baseline", "write", report, "-o", out, "--note", "n").status == 0
    before = out.read_bytes()
    write_report(report, [record(TOPK, scratch=100)])

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", crash)
    assert_one_line_error(run_cli(capsys, "baseline", "write", report, "-o", out), "cannot write")
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["base.json", "r.json"]


def test_short_name():
    assert short_name("void topk<32>(float const*, int, float*, int*)") == "topk<32>"
    assert short_name("void ns::f<(anonymous namespace)::X, 2>(int)") == "ns::f<(anonymous namespace)::X, 2>"
    assert short_name("silu_mul(float const*, float const*, float*, int)") == "silu_mul"
    assert short_name("plain_c_kernel") == "plain_c_kernel"
    assert short_name("void (anonymous namespace)::k<1>(int)") == "(anonymous namespace)::k<1>"


def test_schema_command(capsys):
    for name in ("baseline", "check", "compare"):
        run = run_cli(capsys, "schema", name)
        assert run.status == 0
        jsonschema.Draft202012Validator.check_schema(orjson.loads(run.out))


def test_inputs_hashed_beside_the_read_are_the_files_digests(tmp_path):
    one, folder = tmp_path / "one.bin", tmp_path / "folder"
    one.write_bytes(b"\x7fELF" + bytes(range(256)) * 5000)
    folder.mkdir()
    (folder / "a.co").write_bytes(b"a" * 10)
    (folder / "sub").mkdir()
    (folder / "sub" / "b.co").write_bytes(b"b" * 20)
    missing = str(tmp_path / "missing")
    hasher = SourceHasher([str(one), str(folder), missing, "-", str(one)])
    hasher.advance(1000)                  # a piece at a time, then the rest
    hasher.advance(1000)
    digests = hasher.digests()
    assert digests == {str(one): hashlib.sha256(one.read_bytes()).hexdigest(),
                       str(folder): sha256_path(str(folder))}       # no missing file, no standard input
    assert digests[str(folder)] == hashlib.sha256(
        "".join(sorted(f"{n}\0{hashlib.sha256(c).hexdigest()}\n" for n, c in
                       (("a.co", b"a" * 10), (os.path.join("sub", "b.co"), b"b" * 20)))).encode()).hexdigest()
