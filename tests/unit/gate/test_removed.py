"""Every baseline kernel and every target is still built, or the check fails
(issue 31: a build whose gfx1151 device code vanished passed its gate, a
baseline kernel no longer built was a note): in every format, with the
command that accepts the removal (`baseline write --allow-removed KEY
--reason TEXT`, `--allow-removed-target TARGET`), which records it and why in
the baseline; --target checks a subset without reporting the others; report
JSON inputs, baselines of versions 1 to 4, --record-all and default baselines
(which name only the kernels they record, and count the rest per target)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from spillway.gate.baseline import load_baseline
from spillway.render.html import read_page_data
from spillway.schemas import schema_for
from support.gate_fixtures import load_json, record, run_cli, write_report
from support.junit_xsd import junit_schema
from support.sarif_schema import sarif_validator

TOPK = "_Z4topkILi32EEvPKfiPfPi"
SILU = "_Z8silu_mulPKfS0_Pfi"
NORM = "_Z4normPf"
FORMATS = ("table", "json", "markdown", "junit", "github", "tsv", "sarif", "html")


def _build(path, *, silu: bool = True, gfx90a: bool = True, norm_scratch: int = 0):
    """gfx1100: topk (scratch), silu_mul (scratch), norm; gfx90a: topk."""
    kernels = [record(TOPK, scratch=272), record(NORM, scratch=norm_scratch)]
    if silu:
        kernels.append(record(SILU, scratch=16))
    if gfx90a:
        kernels.append(record(TOPK, target="gfx90a", scratch=280))
    return write_report(path, kernels)


@pytest.fixture
def case(tmp_path, capsys, monkeypatch):
    """A default baseline of the full build, and a build without silu_mul and without gfx90a."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    full, cut = _build(tmp_path / "full.json"), _build(tmp_path / "cut.json", silu=False, gfx90a=False)
    assert run_cli(capsys, "baseline", "write", "full.json", "-o", "base.json", "--note", "n").status == 0
    return full, cut


def _accept(what: str) -> str:
    return f"spillway baseline write cut.json -o base.json {what} --reason TEXT"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_removed_kernel_and_target_fail_in_every_format(case, capsys, monkeypatch, tmp_path, fmt):
    summary = tmp_path / "summary.md"
    summary.write_text("")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run = run_cli(capsys, "check", "cut.json", "--baseline", "base.json", "--format", fmt)
    assert run.status == 1, (fmt, run.out, run.err)
    kernel, target = _accept(f"--allow-removed-key {SILU}"), _accept("--allow-removed-target gfx90a")
    both = _accept(f"--allow-removed-key {SILU} --allow-removed-target gfx90a")
    sentence = "FAIL: target gfx90a no longer built; 1 baseline kernel no longer built"
    if fmt == "table":
        lines = run.out.splitlines()
        assert (f"no longer built: target gfx90a: no kernel built for it (the baseline was written from 1 kernel on "
                f"it); accept with: {target}") in lines
        assert (f"no longer built: silu_mul [gfx1100]: in the baseline, not in the build; accept with: {kernel}"
                in lines)
        assert f"Removed on purpose? Accept the removal with: {both}" in lines
        assert lines[-1] == sentence
    elif fmt == "json":
        document = json.loads(run.out)
        jsonschema.validate(document, schema_for("check"))
        assert document["schema"] == "spillway.check/4" and document["passed"] is False
        assert document["failures"] == [] and document["sentence"] == sentence
        assert document["removed"] == [{"target": "gfx1100", "key": SILU, "name": "silu_mul(float const*, float "
                                                                               "const*, float*, int)"}]
        assert document["removed_targets"] == [{"target": "gfx90a", "kernels_written_from": 1, "declared": False,
                                                "in_baseline": True}]
        assert document["summary"]["removed"] == 1 and document["summary"]["removed_targets"] == 1
    elif fmt == "markdown":
        assert f"failed: {sentence}" in run.out
        assert "- `gfx90a`: no kernel built for it (the baseline was written from 1 kernel on it)" in run.out
        assert "- `silu_mul` (`gfx1100`): in the baseline, not in the build" in run.out
        assert f"```sh\n{both}\n```" in run.out
    elif fmt == "junit":
        junit_schema().validate(run.out)
        suite = ET.fromstring(run.out.encode()).find("testsuite")
        failed = {c.get("name"): c.find("failure") for c in suite.findall("testcase") if c.find("failure") is not None}
        assert set(failed) == {"gfx90a [built]", "silu_mul(float const*, float const*, float*, int) [built]"}
        assert failed["gfx90a [built]"].get("message").endswith(f"; accept with: {target}")
        assert suite.get("failures") == "2"
    elif fmt == "github":
        assert "::error file=base.json,title=spillway check%3A target gfx90a no longer built::" in run.out
        assert f"Accept with: {kernel}" in run.out and sentence in summary.read_text()
    elif fmt == "tsv":
        rows = [line.split("\t") for line in run.out.splitlines()[1:]]
        assert ["gfx90a", "", "", "built", "", "", "false", "false", "false"] in rows
        assert ["gfx1100", "silu_mul(float const*, float const*, float*, int)", SILU, "built", "", "", "false",
                "false", "false"] in rows
    elif fmt == "sarif":
        log = json.loads(run.out)
        sarif_validator().validate(log)
        results = {r["ruleId"]: r for r in log["runs"][0]["results"]}
        assert set(results) == {"removed", "removed-target"}
        lines = (tmp_path / "base.json").read_text().splitlines()
        for rule, needle in (("removed", f'"key":"{SILU}"'), ("removed-target", '"gfx90a": 1')):
            line = results[rule]["locations"][0]["physicalLocation"]["region"]["startLine"]
            assert needle in lines[line - 1], (rule, line)
        assert results["removed-target"]["message"]["text"].endswith(f"accept with: {target}")
    else:
        data = read_page_data(run.out)
        assert data["verdict"] == "fail" and data["sentence"] == sentence
        assert sorted(row[0] for row in data["rows"]) == ["no longer built", "target no longer built"]
        assert all(row[7] is True for row in data["rows"])
        assert data["notes"][0].endswith(f"Accept the removals with: {both}")


def test_accepting_a_removal_records_it_and_why(case, capsys):
    assert run_cli(capsys, "check", "cut.json", "--baseline", "base.json").status == 1
    # Without the accept, an update keeps both (exit 1) and says how to accept each.
    kept = run_cli(capsys, "baseline", "write", "cut.json", "-o", "base.json")
    assert kept.status == 1
    assert f"spillway: kept target gfx90a: no kernel is built for it; the baseline was written from 1 kernels on " \
           f"it; accept its removal with: {_accept('--allow-removed-target gfx90a')}" in kept.err
    assert f"accept its removal with: {_accept(f'--allow-removed-key {SILU}')}" in kept.err
    assert run_cli(capsys, "check", "cut.json", "--baseline", "base.json").status == 1
    # An accept that matches nothing gone is a usage error, as an --allow that matches no kernel is.
    wrong = run_cli(capsys, "baseline", "write", "cut.json", "-o", "base.json", "--allow-removed", "topk*",
                    "--reason", "no")
    assert wrong.status == 2 and "--allow-removed 'topk*' matches no baseline kernel" in wrong.err
    wrong = run_cli(capsys, "baseline", "write", "cut.json", "-o", "base.json", "--allow-removed-target", "gfx942",
                    "--reason", "no")
    assert wrong.status == 2 and "gone: gfx90a" in wrong.err
    assert run_cli(capsys, "baseline", "write", "cut.json", "-o", "base.json", "--allow-removed-target",
                   "gfx90a", "--reason", "").status == 2
    # One --reason each, in the order given.
    done = run_cli(capsys, "baseline", "write", "cut.json", "-o", "base.json", "--allow-removed-target", "gfx90a",
                   "--allow-removed", "silu_mul", "--reason", "gfx90a dropped", "--reason", "fused")
    assert done.status == 0, done.err
    document = load_json("base.json")
    jsonschema.validate(document, schema_for("baseline"))
    assert document["removed"] == [{"target": "gfx1100", "key": SILU, "reason": "fused"},
                                   {"target": "gfx90a", "reason": "gfx90a dropped"}]
    assert document["kernels_written_from"] == {"gfx1100": 2}
    assert run_cli(capsys, "check", "cut.json", "--baseline", "base.json").status == 0
    # Built again: the kernel is back in the baseline and its removal record goes.
    assert run_cli(capsys, "baseline", "write", "full.json", "-o", "base.json", "--allow", "*",
                   "--reason", "back").status == 0
    assert "removed" not in load_json("base.json")


def test_target_selection_report_json_and_baseline_kinds(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    full, cut = _build(tmp_path / "full.json"), _build(tmp_path / "cut.json", silu=False, gfx90a=False)
    only_gfx90a = write_report(tmp_path / "gfx90a.json", [record(TOPK, target="gfx90a", scratch=280)])
    for kind, flags in (("default", []), ("all", ["--record-all"])):
        base = f"{kind}.json"
        assert run_cli(capsys, "baseline", "write", full, "-o", base, "--note", kind, *flags).status == 0
        # --target: a subset is checked; the targets left out are not reported as vanished.
        run = run_cli(capsys, "check", only_gfx90a, "--baseline", base, "--target", "gfx90a")
        assert run.status == 0, (kind, run.out)
        run = run_cli(capsys, "check", cut, "--baseline", base, "--target", "gfx1100", "--json")
        document = json.loads(run.out)
        assert document["removed_targets"] == [] and [k["key"] for k in document["removed"]] == [SILU], kind
        run = run_cli(capsys, "check", only_gfx90a, "--baseline", base)
        assert json.loads(run_cli(capsys, "check", only_gfx90a, "--baseline", base, "--json").out)[
            "removed_targets"][0]["target"] == "gfx1100", kind
        assert run.status == 1
    # A default baseline records the kernels its gate finds non-zero: a kernel at zero that went is not named,
    # only counted (a note); a --record-all baseline names it and fails.
    no_norm = write_report(tmp_path / "no-norm.json", [record(TOPK, scratch=272), record(SILU, scratch=16),
                                                       record(TOPK, target="gfx90a", scratch=280)])
    default = run_cli(capsys, "check", no_norm, "--baseline", "default.json")
    assert default.status == 0, default.out
    assert ("note: gfx1100: 2 kernels built, the baseline was written from 3: at least 1 of the kernels it does not "
            "record (its gate found them at zero) is no longer built (a baseline written with --record-all names "
            "and gates each)") in default.out.splitlines()
    document = json.loads(run_cli(capsys, "check", no_norm, "--baseline", "default.json", "--json").out)
    assert document["fewer_kernels"] == [{"target": "gfx1100", "built": 2, "written_from": 3, "unnamed": 1}]
    every = run_cli(capsys, "check", no_norm, "--baseline", "all.json")
    assert every.status == 1 and every.out.splitlines()[-1] == "FAIL: 1 baseline kernel no longer built"


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_every_baseline_version(tmp_path, capsys, monkeypatch, version):
    """Versions 1 and 2 (no kernels_written_from: their provenance's targets), 3 and 4."""
    monkeypatch.chdir(tmp_path)
    full, cut = _build(tmp_path / "full.json"), _build(tmp_path / "cut.json", silu=False, gfx90a=False)
    base = tmp_path / "v3.json"
    assert run_cli(capsys, "baseline", "write", full, "-o", base, "--note", "n", "--record-all").status == 0
    if version in (1, 2):
        # The layout of versions 1 and 2: a line per (target, key); version 1 without record_all and
        # kernels_written_from (the targets are its provenance's).
        document = load_baseline(str(base)).model_dump(by_alias=True)
        document["schema"] = f"spillway.baseline/{version}"
        for entry in document["kernels"]:
            entry["allow"] = {k: v for k, v in entry["allow"].items() if v is not None}
        if version == 1:
            # Only the provenance names gfx90a now.
            del document["record_all"], document["kernels_written_from"]
            document["kernels"] = [e for e in document["kernels"] if e["target"] != "gfx90a"]
        base = tmp_path / "old.json"
        base.write_text(json.dumps(document))
    elif version == 4:
        document = load_json(base)          # version 4: version 3 with the code's figures
        document["schema"] = "spillway.baseline/4"
        base.write_text(json.dumps(document))
    assert load_json(base)["schema"] == f"spillway.baseline/{version}"
    run = run_cli(capsys, "check", cut, "--baseline", base, "--json")
    assert run.status == 1
    document = json.loads(run.out)
    assert [t["target"] for t in document["removed_targets"]] == ["gfx90a"]
    assert [k["key"] for k in document["removed"]] == [SILU]
    assert run_cli(capsys, "check", full, "--baseline", base, "--target", "gfx1100").status == 0
