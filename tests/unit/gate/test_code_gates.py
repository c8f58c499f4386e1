"""The machine-code gates (loop_scratch, agpr_copies): baseline write records
them (a version-4 baseline), check holds each kernel to them; figures and
verdicts checked against llvm-objdump's (tests/data/isa/expected.json: gfx90a
kernels.cpp by clang 19 as the baseline, by clang 22 as the new build)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.gate_fixtures import assert_one_line_error, run_cli

DATA = Path(__file__).resolve().parents[2] / "data" / "isa"
EXPECTED = json.loads((DATA / "expected.json").read_text())["fixtures"]
NEW, OLD = "gfx90a.clang22.co", "gfx90a.clang19.co"
GATE = "scratch,loop_scratch,agpr_copies"


def figures(fixture: str) -> dict[str, tuple[int, int]]:
    """(scratch accesses in loops, AGPR copies) per kernel, from objdump."""
    return {name: (k["scratch_in_loops"], k["agpr_writes"] + k["agpr_reads"])
            for name, k in EXPECTED[fixture]["functions"].items() if k["kind"] == "kernel"}


@pytest.fixture(scope="module")
def sides(tmp_path_factory) -> tuple[Path, Path]:
    work = tmp_path_factory.mktemp("builds")
    for side, fixture in (("new", NEW), ("old", OLD)):
        (work / side).mkdir()
        shutil.copy(DATA / "co" / fixture, work / side / "kernels.co")
    return work / "new" / "kernels.co", work / "old" / "kernels.co"


@pytest.fixture()
def baseline(capsys, sides, tmp_path) -> Path:
    out = tmp_path / "base.json"
    run = run_cli(capsys, "baseline", "write", sides[1], "-o", out, "--note", "clang 19", "--gate", GATE)
    assert run.status == 0, run.err
    return out


def test_baseline_records_the_code_figures(baseline):
    document = json.loads(baseline.read_text())
    assert document["schema"] == "spillway.baseline/4"
    assert document["gate"] == ["scratch", "loop_scratch", "agpr_copies"]
    old = figures(OLD)
    recorded = {line["key"]: line["targets"][0] for line in document["kernels"]}
    # recorded: exactly the kernels a gated metric finds non-zero (the others are held to zero)
    scratch = {line["key"] for line in document["kernels"] if line["targets"][0].get("scratch", 0)
               or line["targets"][0].get("dynamic_stack")}
    assert set(recorded) == scratch | {name for name, (loops, copies) in old.items() if loops or copies}
    for name, target in recorded.items():
        assert (target["loop_scratch"], target["agpr_copies"]) == old[name], name
    assert any(target["agpr_copies"] for target in recorded.values())
    assert any(target["loop_scratch"] for target in recorded.values())


def test_check_fails_exactly_where_objdump_says_the_code_got_worse(capsys, sides, baseline):
    run = run_cli(capsys, "check", sides[0], "--baseline", baseline, "--json")
    assert run.status == 1, run.err
    failures = json.loads(run.out)["failures"]
    new, old = figures(NEW), figures(OLD)
    for at, metric in ((0, "loop_scratch"), (1, "agpr_copies")):
        expected = {name for name, values in new.items() if values[at] > old.get(name, (0, 0))[at]}
        assert {f["name"] for f in failures if f["metric"] == metric} == expected, metric
        assert expected, metric           # both metrics fail somewhere on these builds
        for f in failures:
            if f["metric"] == metric:
                assert f["actual"] == new[f["name"]][at]
                assert f["allowed"] == old.get(f["name"], (0, 0))[at]
    same = run_cli(capsys, "check", sides[1], "--baseline", baseline)
    assert same.status == 0, same.out


def test_check_of_report_json_without_the_code_is_refused(capsys, sides, baseline, tmp_path):
    report = tmp_path / "new.json"
    assert run_cli(capsys, "report", "--json", "-o", report, sides[0]).status == 0
    assert_one_line_error(run_cli(capsys, "check", report, "--baseline", baseline),
                          "loop_scratch,agpr_copies needs each kernel's machine code", "report --isa")
    with_code = tmp_path / "new-isa.json"
    assert run_cli(capsys, "report", "--isa", "--json", "-o", with_code, sides[0]).status == 0
    from_json = run_cli(capsys, "check", with_code, "--baseline", baseline, "--json")
    from_binary = run_cli(capsys, "check", sides[0], "--baseline", baseline, "--json")
    # The same failures; a binary's also carry their machine code (a report's JSON has none to read again).
    from_binary_failures = json.loads(from_binary.out)["failures"]
    assert all("code" in f for f in from_binary_failures)
    assert json.loads(from_json.out)["failures"] == [{k: v for k, v in f.items() if k != "code"}
                                                     for f in from_binary_failures]


def test_a_baseline_without_the_code_cannot_check_it(capsys, sides, tmp_path):
    everything = tmp_path / "all.json"
    assert run_cli(capsys, "baseline", "write", sides[1], "-o", everything, "--note", "n", "--record-all").status == 0
    assert json.loads(everything.read_text())["schema"] == "spillway.baseline/3"
    assert_one_line_error(run_cli(capsys, "check", sides[0], "--baseline", everything, "--gate", "loop_scratch"),
                          "records no loop_scratch", "--gate scratch,loop_scratch")


def test_updating_keeps_the_code_gates(capsys, sides, baseline):
    # Written again from the new build without --gate: the baseline's gate, so the code is read again;
    # allowances that would go up are kept (exit 1), the others tightened.
    run = run_cli(capsys, "baseline", "write", sides[0], "-o", baseline)
    assert run.status == 1
    assert "kept agpr_copies allowance of agpr_spill" in run.err
    document = json.loads(baseline.read_text())
    assert document["schema"] == "spillway.baseline/4" and "agpr_copies" in document["gate"]
