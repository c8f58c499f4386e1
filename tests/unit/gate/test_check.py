"""spillway check: exit statuses, which kernels fail, notes, --json, --junit,
on real clang-15 / clang-22 builds and on synthetic reports."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import jsonschema
import orjson
import pytest

from support.gate_fixtures import (TARGET, assert_one_line_error, builds, load_json, oracle, record,  # noqa: F401
                           run_cli, write_report)
from spillway.resources.names import demangle, table_name
from spillway.schemas import schema_for

TOPK = "_Z4topkILi32EEvPKfiPfPi"
SILU = "_Z8silu_mulPKfS0_Pfi"
EXTRA_SCRATCH = "_Z19extra_private_tablePKiPi"
EXTRA_CLEAN = "_Z11extra_scalePff"


@pytest.fixture(scope="module")
def baselines(builds, tmp_path_factory):
    """Baselines written from each real build, gating every metric."""
    from spillway.cli import main

    root = tmp_path_factory.mktemp("gate-baselines")
    out = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", "1700000000")
        for side, binary in (("old", builds.old), ("new", builds.new)):
            path = root / f"{side}.json"
            assert main(["baseline", "write", str(binary), "-o", str(path), "--note", side, "--gate",
                         "scratch,spills,occupancy,vgprs,lds"]) == 0
            out[side] = path
    return out


def failing_lines(output: str) -> list[str]:
    """Failure lines without the command that accepts them (checked once, below)."""
    lines = [line for line in output.splitlines() if line.startswith("over baseline: ")]
    for line in lines:
        assert "; accept with: spillway baseline write " in line and line.endswith(" --reason TEXT"), line
    return [line.split("; accept with: ")[0] for line in lines]


def test_baseline_passes_on_its_own_build(builds, baselines, capsys):
    for side, binary in (("old", builds.old), ("new", builds.new)):
        run = run_cli(capsys, "check", binary, "--baseline", baselines[side], "--gate",
                      "scratch,spills,occupancy,vgprs,lds")
        assert run.status == 0, run.out
        count = len(oracle(binary, builds.work))
        assert run.out.strip().splitlines()[-1] == f"OK: {count} kernels within baseline"
    # The object and the shared library linked from it hold the same kernels (worst of both).
    run = run_cli(capsys, "check", builds.new, builds.new_library, "--baseline", baselines["new"])
    assert run.status == 0, run.out


def test_new_baseline_fails_on_old_build_naming_exactly_the_kernels_that_grew(builds, baselines, capsys):
    """Baseline from clang-22, build from clang-15 (128-VGPR cap on gfx11)."""
    old, new = oracle(builds.old, builds.work), oracle(builds.new, builds.work)
    grew = {name for name, k in old.items() if name in new and k.scratch > new[name].scratch}
    assert len(grew) >= 4
    assert "_Z7gemm_i8ILi128ELi128ELi32ELi2ELi2ELi128EEvPKaS1_Piii" in grew     # WMMA GEMM spills
    assert TOPK in grew                                                        # 272 B vs 136 VGPRs
    vanished = set(new) - set(old)
    assert vanished == {EXTRA_SCRATCH, EXTRA_CLEAN}

    run = run_cli(capsys, "check", builds.old, "--baseline", baselines["new"], "--gate", "scratch")
    assert run.status == 1, run.out
    lines = failing_lines(run.out)
    assert len(lines) == len(grew)
    for name in grew:
        (line,) = [l for l in lines if l.startswith(f"over baseline: {table_name(demangle(name))} [{TARGET}]:")]
        assert f"scratch {old[name].scratch} B/lane, allowed at most {new[name].scratch} B/lane" in line
    # Kernels that disappeared fail too, each with the command that accepts its removal.
    for name in vanished:
        assert (f"no longer built: {table_name(demangle(name))} [{TARGET}]: in the baseline, not in the build; "
                f"accept with: spillway baseline write {builds.old} -o {baselines['new']} --allow-removed-key {name} "
                f"--reason TEXT") in run.out.splitlines()
    assert (f"Removed on purpose? Accept the removal with: spillway baseline write {builds.old} -o "
            f"{baselines['new']} --allow-removed-key {EXTRA_SCRATCH} --allow-removed-key {EXTRA_CLEAN} --reason TEXT"
            in run.out.splitlines())
    last = run.out.strip().splitlines()[-1]
    assert last == (f"FAIL: {len(grew)} of {len(old)} kernels over their baseline (scratch: {len(grew)}); "
                    f"2 baseline kernels no longer built")


def test_metric_override_and_json(builds, baselines, capsys, tmp_path):
    old, new = oracle(builds.old, builds.work), oracle(builds.new, builds.work)
    common = set(old) & set(new)
    expected = {
        "scratch": {n for n in common if new[n].scratch > old[n].scratch},
        "spills": {n for n in common if new[n].spills > old[n].spills},
        "occupancy": {n for n in common if new[n].occupancy < old[n].occupancy},
        "vgprs": {n for n in common if new[n].vgprs > old[n].vgprs},
    }
    # A kernel not in the baseline is held to zero scratch and zero spills.
    new_only = {n for n in set(new) - set(old) if new[n].scratch > 0 or new[n].spills > 0}
    assert new_only == {EXTRA_SCRATCH}
    assert expected["occupancy"] and expected["vgprs"]
    out = tmp_path / "check.json"
    run = run_cli(capsys, "check", builds.new, "--baseline", baselines["old"], "--gate",
                  "scratch,spills,occupancy,vgprs", "--json", "-o", out)
    assert run.status == 1
    document = load_json(out)
    jsonschema.validate(document, schema_for("check"))
    assert document["passed"] is False
    assert document["summary"]["kernels"] == len(new)
    by_metric = {}
    for failure in document["failures"]:
        by_metric.setdefault(failure["metric"], set()).add(failure["key"])
        assert failure["target"] == TARGET
        assert failure["name"] == demangle(failure["key"])
        assert failure["new_kernel"] == (failure["key"] in new_only)
    assert by_metric.get("scratch", set()) == expected["scratch"] | new_only
    assert by_metric.get("spills", set()) == expected["spills"]
    assert by_metric["occupancy"] == expected["occupancy"]
    assert by_metric["vgprs"] == expected["vgprs"]
    assert {k["key"] for k in document["added"]} == {EXTRA_SCRATCH, EXTRA_CLEAN}
    assert document["removed"] == []
    assert document["summary"]["added"] == 2 and document["summary"]["removed"] == 0
    assert document["summary"]["by_metric"] == {m: len(k) for m, k in by_metric.items()}
    assert document["sentence"] == run.out.strip().splitlines()[-1]
    assert document["removed_targets"] == [] and document["fewer_kernels"] == []
    # --json alone on stdout: only the document.
    run = run_cli(capsys, "check", builds.new, "--baseline", baselines["old"], "--json")
    assert run.status == 1
    assert orjson.loads(run.out)["schema"] == "spillway.check/4"


def test_junit_one_case_per_kernel_and_metric(builds, baselines, capsys, tmp_path):
    out = tmp_path / "junit.xml"
    run = run_cli(capsys, "check", builds.old, "--baseline", baselines["new"], "--gate", "scratch,spills",
                  "--junit", out)
    assert run.status == 1
    old, new = oracle(builds.old, builds.work), oracle(builds.new, builds.work)
    root = ET.parse(out).getroot()
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    vanished = set(new) - set(old)
    assert len(cases) == 2 * len(old) + len(vanished)
    assert int(suite.get("tests")) == len(cases)
    names = {c.get("name") for c in cases}
    assert len(names) == len(cases)
    failed = {c.get("name") for c in cases if c.find("failure") is not None}
    expected = {f"{demangle(n)} [scratch]" for n in old if n in new and old[n].scratch > new[n].scratch}
    expected |= {f"{demangle(n)} [spills]" for n in old if n in new and old[n].spills > new[n].spills}
    # A kernel no longer built: one failing case, "built".
    expected |= {f"{demangle(n)} [built]" for n in vanished}
    assert failed == expected
    assert int(suite.get("failures")) == len(expected)
    assert not [c for c in cases if c.find("skipped") is not None]
    gone = next(c for c in cases if c.get("name") == f"{demangle(EXTRA_CLEAN)} [built]").find("failure")
    assert gone.get("type") == "removed"
    assert gone.get("message") == (f"in the baseline, no longer built; accept with: spillway baseline write "
                                   f"{builds.old} -o {baselines['new']} --allow-removed-key {EXTRA_CLEAN} "
                                   f"--reason TEXT")
    topk = next(c for c in cases if c.get("name") == f"{demangle(TOPK)} [scratch]")
    assert suite.get("name") == "new"                         # the baseline's name (a cell's, in the matrix)
    assert topk.get("classname") == f"new.{TARGET}"
    message = topk.find("failure").get("message")
    assert message.startswith("scratch 272 B/lane, allowed at most 0 B/lane; accept with: spillway baseline "
                              f"write {builds.old} -o {baselines['new']} --allow-key ")
    assert message.endswith(f"--allow-key {TOPK} --reason TEXT")


def test_new_kernels_and_dynamic_stack(tmp_path, capsys):
    base = write_report(tmp_path / "base.json", [record(TOPK, scratch=272)])
    baseline = tmp_path / "b.json"
    # Every kernel recorded: --gate spills below checks a metric the baseline does not gate.
    assert run_cli(capsys, "baseline", "write", base, "-o", baseline, "--note", "n", "--record-all").status == 0
    build = write_report(tmp_path / "build.json", [
        record(TOPK, scratch=272),                               # within
        record(SILU, vgprs=200, occupancy=6),                    # new, clean: passes
        record("_Z3newPi", vgpr_spills=4, sgpr_spills=1),       # new, spills: spills gate only
        record("_Z4dynsPi", dynamic_stack=True),                 # new, dynamic stack
    ])
    run = run_cli(capsys, "check", build, "--baseline", baseline)
    assert run.status == 1
    assert failing_lines(run.out) == [
        "over baseline: dyns [gfx1100]: scratch 0 B/lane + dynamic stack, allowed at most 0 B/lane "
        "(kernel not in the baseline)"]
    run = run_cli(capsys, "check", build, "--baseline", baseline, "--gate", "spills")
    assert failing_lines(run.out) == [
        "over baseline: new [gfx1100]: spills 5 spilled registers, allowed at most 0 spilled registers "
        "(kernel not in the baseline)"]
    assert run.out.strip().splitlines()[-1] == \
        "FAIL: 1 of 4 kernels over their baseline (spills: 1); 3 not in the baseline"


def test_target_filter_limits_vanished(tmp_path, capsys):
    base = write_report(tmp_path / "base.json", [record(TOPK), record(TOPK, target="gfx90a")])
    baseline = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", base, "-o", baseline, "--note", "n").status == 0
    run = run_cli(capsys, "check", base, "--baseline", baseline, "--target", "gfx1100")
    assert run.status == 0
    assert run.out.strip() == "OK: 1 kernel within baseline"
    # Checking one target says nothing of the others; the whole build without gfx90a fails.
    only = write_report(tmp_path / "only.json", [record(TOPK)])
    assert run_cli(capsys, "check", only, "--baseline", baseline, "--target", "gfx1100").status == 0
    run = run_cli(capsys, "check", only, "--baseline", baseline)
    assert run.status == 1
    assert run.out.strip().splitlines()[-1] == "FAIL: target gfx90a no longer built"


def test_usage_and_input_errors_exit_2(builds, baselines, capsys, tmp_path):
    assert_one_line_error(run_cli(capsys, "check", builds.old, "--baseline", baselines["new"], "--gate", "spils"),
                          "unknown metric 'spils'", "valid metrics: scratch, spills, occupancy, vgprs, lds")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_one_line_error(run_cli(capsys, "check", empty, "--baseline", baselines["new"]), "no kernels found")
    assert_one_line_error(run_cli(capsys, "check", builds.old, "--baseline", builds.old),
                          "not a spillway baseline")
    assert_one_line_error(run_cli(capsys, "check", baselines["old"], "--baseline", baselines["new"]),
                          "is a baseline file")
    assert_one_line_error(run_cli(capsys, "check", builds.old, "--baseline", baselines["new"], "--target",
                                  "gfx90a"), "no kernels found")
    run = run_cli(capsys, "check", builds.old)
    assert run.status == 2 and "--baseline" in run.err
