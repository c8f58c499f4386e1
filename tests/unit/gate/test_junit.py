"""JUnit files validate against the Jenkins xunit plugin's junit-10.xsd (the
schema Jenkins and GitLab readers follow), name their suite after the cell or
baseline, and exist for cells that were not checked."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from spillway.gate import junit
from spillway.gate.check import CheckResult, Finding
from support.gate_fixtures import run_cli
from support.junit_xsd import junit_schema


def result(failing: int = 2, vanished: int = 1) -> CheckResult:
    findings = [Finding("gfx1100", f"_Z1{chr(97 + i)}v", f"{chr(97 + i)}() <&\x01>", "scratch", 0, 16 * i,
                        passed=i >= failing, new_kernel=i == 0) for i in range(4)]
    gone = [("gfx90a", f"_Z2g{i}v", f"g{i}()") for i in range(vanished)]
    return CheckResult("checks/baselines/clang-22.json", ("scratch",), 4, findings, gone, [])


def test_check_document_validates_and_is_named_after_the_baseline():
    schema = junit_schema()
    data = junit.document(result(), accept=lambda f: f"spillway baseline write x -o y --allow {f.key} --reason TEXT")
    schema.validate(data.decode())
    root = ET.fromstring(data)
    assert root.tag == "testsuites" and root.get("skipped") is None      # junit-10.xsd has no skipped there
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "clang-22"
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "2", "1")
    failure = suite.find("testcase/failure")
    assert failure.get("message").endswith("--allow _Z1av --reason TEXT")
    assert b"\x01" not in data
    assert data.startswith(b'<?xml version="1.0" encoding="utf-8"?>\n<!-- spillway junit')


def test_unchecked_cells_get_a_valid_file():
    schema = junit_schema()
    for verdict, child in (("skipped", "skipped"), ("error", "error")):
        data = junit.unchecked_document("rocm-10.0-clang23", verdict, "toolchain not found: amdclang++")
        schema.validate(data.decode())
        suite = ET.fromstring(data).find("testsuite")
        assert suite.get("name") == "rocm-10.0-clang23"
        assert suite.find(f"testcase/{child}").get("message") == "toolchain not found: amdclang++"


def test_cli_junit_side_output_and_format(tmp_path, capsys):
    from support.cli_fixtures import kernel, report

    schema = junit_schema()
    base = report(tmp_path / "old.json", [kernel("_Z4topkILi32EEvPKfiPfPi")])
    new = report(tmp_path / "new.json", [kernel("_Z4topkILi32EEvPKfiPfPi", scratch=272)])
    baseline = tmp_path / "cell-a.json"
    assert run_cli(capsys, "baseline", "write", base, "-o", baseline, "--note", "n").status == 0
    side = tmp_path / "side.xml"
    run = run_cli(capsys, "check", new, "--baseline", baseline, "--junit", side)
    assert run.status == 1 and "over baseline: topk<32>" in run.out         # the table still printed
    schema.validate(side.read_text())
    assert ET.parse(side).getroot().find("testsuite").get("name") == "cell-a"
    run = run_cli(capsys, "check", new, "--baseline", baseline, "--format", "junit", "--suite", "mine")
    schema.validate(run.out)
    assert ET.fromstring(run.out.encode()).find("testsuite").get("name") == "mine"


def test_a_baseline_path_that_is_not_utf8_still_gives_a_valid_document():
    # A file name of raw bytes reaches Python with lone surrogates (surrogateescape):
    # XML cannot carry them, so they are dropped, as control characters are.
    path = "checks/b\udce9se\x7f\ufffe.json"
    data = junit.document(CheckResult(path, ("scratch",), 4, result().findings, [], []))
    junit_schema().validate(data.decode())
    (suite,) = ET.fromstring(data).findall("testsuite")
    assert suite.find("properties/property[@name='baseline']").get("value") == "checks/bse\x7f.json"
