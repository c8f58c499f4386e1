"""SARIF 2.1.0 (``--format sarif``) on check, compare and matrix run:
validated against the OASIS schema (tests/support/sarif_schema.py), one run
per gated build with its own automationDetails.id, one result per failing
kernel and metric located at the kernel's line of the baseline file (its
first line for a kernel the baseline lacks), within GitHub's limits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from spillway.errors import UsageError
from spillway.render import sarif
from spillway.gate.check import CheckResult, Finding
from support import golden
from support.gate_fixtures import assert_one_line_error, run_cli
from support.sarif_schema import sarif_validator

V3 = b"""{
  "schema": "spillway.baseline/3",
  "kernels": [
    {"key":"_Z1av","targets":[{"target":"gfx1100","vgprs":3},{"target":"gfx90a","vgprs":4}]},
    {"key":"_Z1bv","targets":[{"target":"gfx90a","vgprs":5}]}
  ]
}
"""
V1 = b"""{
  "schema": "spillway.baseline/1",
  "kernels": [
    {"target":"gfx90a","key":"_Z1av","name":"a()","allow":{"scratch":0},"recorded":{}},
    {"target":"gfx1100","key":"_Z1bv","name":"b()","allow":{"scratch":0},"recorded":{}}
  ]
}
"""


def test_kernel_lines_of_every_baseline_version():
    assert sarif.kernel_lines(V3) == {("gfx1100", "_Z1av"): 4, ("gfx90a", "_Z1av"): 4, ("gfx90a", "_Z1bv"): 5}
    assert sarif.kernel_lines(V1) == {("gfx90a", "_Z1av"): 4, ("gfx1100", "_Z1bv"): 5}
    assert sarif.kernel_lines(b'{"key": 3}\n{"key":"x","targets":[7, {"target": 1}]}\n{not json "key"}\n') == {}


def _result(failing: int) -> CheckResult:
    findings = [Finding("gfx90a", f"_Z1{chr(97 + i % 26)}{i}v", f"k{i}()", "scratch", 0, 16, passed=False,
                        new_kernel=True) for i in range(failing)]
    return CheckResult("checks/b.json", ("scratch",), failing, findings, [], [])


def test_a_run_keeps_githubs_result_limit_and_says_what_it_left_out():
    run = sarif.check_run(_result(sarif.MAX_RESULTS_PER_RUN + 3), V3, "spillway/check/b", lambda f: "accept")
    assert len(run["results"]) == sarif.MAX_RESULTS_PER_RUN
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["message"]["text"].startswith("3 more results left out")
    sarif_validator().validate(json.loads(sarif.document([run])))


def test_too_many_runs_or_one_category_twice_is_refused():
    runs = [sarif.check_run(_result(1), V3, f"spillway/matrix/c{i}", lambda f: "") for i in range(21)]
    with pytest.raises(UsageError, match="21 runs, GitHub takes at most 20"):
        sarif.document(runs)
    with pytest.raises(UsageError, match="share the category 'spillway/matrix/c0/'"):
        sarif.document([runs[0], runs[0]])


@pytest.fixture
def work(tmp_path, monkeypatch) -> Path:
    golden.copy_fixtures(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_check_sarif_has_a_result_per_failure_at_the_kernels_baseline_line(work, capsys):
    validator = sarif_validator()
    assert run_cli(capsys, "baseline", "write", *golden.C23, "-o", "out/all.json", "--note", "t", "--gate",
                   golden.ALL_GATES).status == 0
    golden.tighten("out/all.json", "out/tight.json")(work)
    shutil.copyfile(work / "out/tight.json", work / "out/tight-before.json")
    check = run_cli(capsys, "check", *golden.C23, "--baseline", "out/tight.json", "--format", "json")
    assert check.status == 1
    failures = json.loads(check.out)["failures"]
    assert failures
    done = run_cli(capsys, "check", *golden.C23, "--baseline", "out/tight.json", "--format", "sarif",
                   "-o", "out/check.sarif")
    assert done.status == 1 and "FAIL" in done.out          # the verdict still goes to the terminal
    log = json.loads((work / "out/check.sarif").read_bytes())
    validator.validate(log)
    (run,) = log["runs"]
    assert run["automationDetails"]["id"] == "spillway/check/tight/"
    assert run["tool"]["driver"]["name"] == "spillway"
    assert [r["properties"]["key"] for r in run["results"]] == [f["key"] for f in failures]
    assert [r["ruleId"] for r in run["results"]] == [f["metric"] for f in failures]
    baseline_lines = (work / "out/tight.json").read_text().splitlines()
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "out/tight.json"
        line = baseline_lines[location["region"]["startLine"] - 1]
        assert json.dumps(result["properties"]["key"]) in line and result["properties"]["target"] in line
        assert "accept with: spillway baseline write" in result["message"]["text"]
        assert result["message"]["text"].split(": ", 1)[1].startswith(result["ruleId"])
    rules = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in run["results"]} <= rules
    assert (work / "out/tight.json").read_bytes() == (work / "out/tight-before.json").read_bytes()
    # spillway's own SARIF file is replaced; someone else's is not.
    assert run_cli(capsys, "check", *golden.C23, "--baseline", "out/tight.json", "--format", "sarif",
                   "-o", "out/check.sarif").status == 1
    foreign = work / "out/other.sarif"
    foreign.write_text('{"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", '
                       '"runs": [{"tool": {"driver": {"name": "codeql"}}}]}')
    refused = run_cli(capsys, "check", *golden.C23, "--baseline", "out/tight.json", "--format", "sarif",
                      "-o", str(foreign))
    assert_one_line_error(refused, "other.sarif")


def test_a_kernel_the_baseline_lacks_points_at_the_baseline_file(work, capsys):
    assert run_cli(capsys, "baseline", "write", golden.C23[0], "-o", "out/one.json", "--note", "t").status == 0
    done = run_cli(capsys, "check", *golden.TENSILE, "--baseline", "out/one.json", "--format", "sarif")
    log = json.loads(done.out)
    sarif_validator().validate(log)
    new = [r for r in log["runs"][0]["results"] if r["properties"]["new_kernel"]]
    assert new and done.status == 1
    assert {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in new} == {1}
    assert all("(kernel not in the baseline)" in r["message"]["text"] for r in new)


def test_a_passing_check_writes_an_empty_run(work, capsys):
    assert run_cli(capsys, "baseline", "write", *golden.C23, "-o", "out/base.json", "--note", "t").status == 0
    done = run_cli(capsys, "check", *golden.C23, "--baseline", "out/base.json", "--format", "sarif")
    assert done.status == 0
    log = json.loads(done.out)
    sarif_validator().validate(log)
    assert log["runs"][0]["results"] == []


def test_compare_sarif_has_a_result_per_worse_criterion_at_the_baselines_line(work, capsys):
    validator = sarif_validator()
    assert run_cli(capsys, "baseline", "write", *golden.C23, "-o", "out/all.json", "--note", "t", "--gate",
                   golden.ALL_GATES).status == 0
    golden.tighten("out/all.json", "out/tight.json")(work)
    expected = json.loads(run_cli(capsys, "compare", *golden.C23, "--against", "out/tight.json", "--json").out)
    worse = [(k["target"], k["key"], c) for k in expected["kernels"] for c in k["worse"]]
    assert worse, "a tightened baseline makes kernels worse"
    done = run_cli(capsys, "compare", *golden.C23, "--against", "out/tight.json", "--format", "sarif")
    assert done.status == 0                   # without --fail-on-worse, as every format
    log = json.loads(done.out)
    validator.validate(log)
    (run,) = log["runs"]
    assert run["automationDetails"]["id"] == "spillway/compare/"
    got = [(r["properties"]["target"], r["properties"]["key"], r["ruleId"]) for r in run["results"]]
    assert sorted(got) == sorted(worse)
    lines = (work / "out/tight.json").read_text().splitlines()
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "out/tight.json"
        assert json.dumps(result["properties"]["key"]) in lines[location["region"]["startLine"] - 1]


def test_compare_sarif_flags_added_kernels_with_scratch_at_the_new_build(work, capsys):
    expected = json.loads(run_cli(capsys, "compare", *golden.TENSILE, "--against", *golden.C23, "--json").out)
    added = sorted((k["target"], k["key"]) for k in expected["added"]
                   if k["resources"]["scratch"] or k["resources"]["vgpr_spills"] or k["resources"]["sgpr_spills"]
                   or k["resources"]["dynamic_stack"])
    assert len(added) == expected["summary"]["added_using_scratch"] > 0
    done = run_cli(capsys, "compare", *golden.TENSILE, "--against", *golden.C23, "--format", "sarif",
                   "--fail-on-worse")
    assert done.status == 1
    log = json.loads(done.out)
    sarif_validator().validate(log)
    results = log["runs"][0]["results"]
    assert sorted((r["properties"]["target"], r["properties"]["key"]) for r in results) == added
    assert {r["ruleId"] for r in results} == {"added-with-scratch"}
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == \
        {golden.TENSILE[0]}


def test_matrix_run_sarif_has_one_run_per_checked_cell(one_machine_run, tmp_path):
    """On the tests' one build of the local matrix: a run per cell (its own
    category), the failures of a cell whose baseline was tightened located in
    that baseline, passing cells with empty runs."""
    import subprocess
    import sys

    build = tmp_path / "build"
    shutil.copytree(one_machine_run.outputs, build)
    cells = golden.built_cells(build)
    if not cells:
        pytest.skip("the local matrix built no cell")
    work = build / "sarif"
    golden.matrix_setup(work)
    tightened = f"checks/baselines/{cells[0]}.json"
    golden.tighten(tightened, tightened, every=2)(work)
    (work / "out").mkdir()
    before = (work / tightened).read_bytes()
    done = subprocess.run([sys.executable, "-m", "spillway", "matrix", "run", "--no-build", "--build-dir", "..",
                           "--root", ".", "--format", "sarif", "-o", "out/matrix.sarif", *cells],
                          cwd=work, capture_output=True, text=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "wrote out/matrix.sarif" in done.stdout and "FAIL" in done.stdout
    log = json.loads((work / "out/matrix.sarif").read_bytes())
    sarif_validator().validate(log)
    assert [r["automationDetails"]["id"] for r in log["runs"]] == [f"spillway/matrix/{c}/" for c in cells]
    failing = log["runs"][0]
    checked = json.loads((build / cells[0] / "check.json").read_bytes())
    assert [(r["properties"]["target"], r["properties"]["key"], r["ruleId"]) for r in failing["results"]] == \
        [(f["target"], f["key"], f["metric"]) for f in checked["failures"]]
    assert failing["results"]
    lines = (work / tightened).read_text().splitlines()
    for result in failing["results"]:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == tightened
        if not result["properties"]["new_kernel"]:
            assert json.dumps(result["properties"]["key"]) in lines[location["region"]["startLine"] - 1]
        assert f"--allow-key {result['properties']['key']}" in result["message"]["text"] or \
            "--allow-key '" in result["message"]["text"]
    assert all(run["results"] == [] for run in log["runs"][1:])
    assert (work / tightened).read_bytes() == before
