"""compare against a default baseline (written without --record-all: it records
only the kernels its gate finds non-zero) calls the kernels it does not record
"not in the baseline" and holds them to zero in what it gates, as check does;
never "added" (issue 37: librocsparse1 7.2.4 against its own default baseline
said "234262 only in the new build", and a kernel going from no scratch to 80 B
was counted added, not worse).

Real builds (support.gate_fixtures: gate_kernels.hip by clang-15, which spills
on gfx1100, and by clang-22); llvm-readelf-22's figures say which kernels a
default baseline leaves out and which of them are over zero."""

from __future__ import annotations

import json

import jsonschema
import orjson
import pytest

from spillway.gate.compare import COMPARE_SCHEMA
from spillway.resources.names import stable_key
from spillway.schemas import schema_for
from support.gate_fixtures import TARGET, builds, oracle, run_cli  # noqa: F401
from support.sarif_schema import sarif_validator

FORMATS = ("table", "json", "markdown", "github", "tsv", "sarif", "html")


def _default_baseline(capsys, build, path, gate: str = "scratch"):
    assert run_cli(capsys, "baseline", "write", build, "-o", path, "--note", "default", "--gate",
                   gate).status == 0
    document = orjson.loads(path.read_bytes())
    assert document["record_all"] is False
    return document


def _compare(capsys, monkeypatch, tmp_path, new, old, fmt, *more):
    summary = tmp_path / "summary.md"
    summary.write_text("")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("COLUMNS", "200")
    return run_cli(capsys, "compare", new, "--against", old, "--format", fmt, *more)


def test_a_build_against_its_own_default_baseline_adds_nothing(builds, capsys, monkeypatch, tmp_path):
    baseline = tmp_path / "own.baseline.json"
    _default_baseline(capsys, builds.new, baseline)
    figures = oracle(builds.new, builds.work)
    recorded = {stable_key(n) for n, k in figures.items() if k.scratch or k.dynamic_stack}
    unrecorded = {stable_key(n) for n in figures} - recorded
    assert recorded and unrecorded, "the fixture must have kernels with and without scratch"
    for fmt in FORMATS:
        run = _compare(capsys, monkeypatch, tmp_path, builds.new, baseline, fmt, "--fail-on-worse")
        assert run.status == 0 and run.err == "", (fmt, run.err)
        if fmt == "json":
            document = orjson.loads(run.out)
            assert document["schema"] == COMPARE_SCHEMA == "spillway.compare/6"
            jsonschema.validate(document, schema_for("compare"))
            summary = document["summary"]
            assert (summary["added"], summary["removed"], summary["not_in_baseline_worse"]) == (0, 0, 0)
            assert summary["not_in_baseline"] == len(unrecorded)
            assert summary["same"] == summary["compared"] == len(recorded)
            assert document["added"] == []
            # (JSON lists every kernel: those not in the baseline as held to zero, within it)
            assert {k["key"] for k in document["not_in_baseline"]} == unrecorded
            assert {(k["status"], tuple(k["held_to_zero"]), tuple(k["worse"]))
                    for k in document["not_in_baseline"]} == {("same", ("scratch",), ())}
            assert document["totals"]["added"]["kernels"] == 0
            assert document["totals"]["not_in_baseline"]["kernels"] == len(unrecorded)
            assert f"{len(unrecorded)} not in the baseline (held to zero scratch: all within)" in \
                document["sentence"]
            assert "only in the new build" not in document["sentence"]
        elif fmt == "tsv":
            assert run.out.splitlines()[1:] == []
        elif fmt == "sarif":
            assert json.loads(run.out)["runs"][0]["results"] == []
        elif fmt == "github":
            assert "::warning" not in run.out
        elif fmt == "html":
            from spillway.render.html import read_page_data
            data = read_page_data(run.out)
            assert data["summary"]["added"] == 0 and data["summary"]["not_in_baseline"] == len(unrecorded)
            assert not [r for r in data["rows"] if r[0] == "added"]
        else:
            assert "only in the new build" not in run.out and "added (only" not in run.out, fmt
            assert "not in the baseline" in run.out, fmt
    every = _compare(capsys, monkeypatch, tmp_path, builds.new, baseline, "tsv", "--all").out.splitlines()[1:]
    assert sorted(row.split("\t")[3] for row in every if row.startswith("not in baseline\t")) == sorted(unrecorded)


@pytest.mark.parametrize("gate", ["scratch", "scratch,spills"])
def test_a_kernel_the_baseline_left_out_is_worse_when_over_zero(builds, capsys, monkeypatch, tmp_path, gate):
    """clang-15 (which spills) against clang-22's default baseline: the kernels
    clang-22 built without scratch are not in it; clang-15's scratch there is
    worse, in every format, and --fail-on-worse fails."""
    baseline = tmp_path / "new.baseline.json"
    _default_baseline(capsys, builds.new, baseline, gate)
    held = gate.split(",")
    old_figures, new_figures = oracle(builds.old, builds.work), oracle(builds.new, builds.work)

    def recorded(k) -> bool:
        return bool(k.scratch or k.dynamic_stack) or ("spills" in held and k.spills > 0)

    def over(k) -> list[str]:
        return ([c for c, bad in (("scratch", k.scratch > 0 or k.dynamic_stack), ("spills", k.spills > 0))
                 if bad and c in held])

    unrecorded = {stable_key(n): over(k) for n, k in old_figures.items()
                  if n in new_figures and not recorded(new_figures[n])}
    worse = {key: criteria for key, criteria in unrecorded.items() if criteria}
    assert worse, "clang-15 must spill where clang-22 did not (else this proves nothing)"
    for fmt in FORMATS:
        run = _compare(capsys, monkeypatch, tmp_path, builds.old, baseline, fmt, "--fail-on-worse")
        assert run.status == 1 and run.err == "", (fmt, run.err)
        if fmt == "json":
            document = orjson.loads(run.out)
            jsonschema.validate(document, schema_for("compare"))
            assert document["summary"]["added"] == 0 and document["added"] == []
            assert document["summary"]["not_in_baseline"] == len(unrecorded)
            assert document["summary"]["not_in_baseline_worse"] == len(worse)
            assert {k["key"]: k["worse"] for k in document["not_in_baseline"]} == unrecorded
            assert all(k["status"] == ("worse" if k["worse"] else "same") and k["held_to_zero"] == held
                       and k["target"] == TARGET for k in document["not_in_baseline"])
            assert [k["status"] for k in document["not_in_baseline"]][:len(worse)] == ["worse"] * len(worse)
            assert f"{len(worse)} over it)" in document["sentence"]
        elif fmt == "tsv":
            rows = [line.split("\t") for line in run.out.splitlines()[1:]]
            assert {r[3]: r[4].split(",") for r in rows if r[0] == "not in baseline"} == worse
            assert not [r for r in rows if r[0] == "added"]
        elif fmt == "sarif":
            log = json.loads(run.out)
            sarif_validator().validate(log)
            found = [(r["properties"]["key"], r["ruleId"]) for r in log["runs"][0]["results"]
                     if r["properties"].get("status") == "not in the baseline"]
            assert sorted(found) == sorted((key, c) for key, criteria in worse.items() for c in criteria)
        elif fmt == "github":
            notes = [line for line in run.out.splitlines() if line.startswith("::error ")]
            assert sum(1 for line in notes if "not in the baseline (" in line) == len(worse)
        elif fmt == "html":
            from spillway.render.html import read_page_data
            data = read_page_data(run.out)
            assert data["summary"]["not_in_baseline_worse"] == len(worse)
            assert sum(1 for r in data["rows"] if r[0] == "not in the baseline") == len(worse)
        else:
            assert "not in the baseline, over its zero scratch or spills" in run.out, fmt
            assert "only in the new build" not in run.out, fmt


def test_a_record_all_baseline_still_names_added_kernels(builds, capsys, monkeypatch, tmp_path):
    """A baseline of every kernel names each: a kernel it lacks is added, as before."""
    baseline = tmp_path / "old.all.json"
    assert run_cli(capsys, "baseline", "write", builds.old, "-o", baseline, "--note", "all",
                   "--record-all").status == 0
    document = orjson.loads(_compare(capsys, monkeypatch, tmp_path, builds.new, baseline, "json").out)
    extra = set(oracle(builds.new, builds.work)) - set(oracle(builds.old, builds.work))
    assert extra and {k["key"] for k in document["added"]} == {stable_key(n) for n in extra}
    assert document["summary"]["not_in_baseline"] == 0 and document["not_in_baseline"] == []
