"""JUnit files validate against the Jenkins xunit plugin's junit-10.xsd (the
schema Jenkins and GitLab readers follow), name their suite after the cell or
baseline, and exist for cells that were not checked."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from spillway.render import emit, junit
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
    # The baseline kernel no longer built is a failing case of its own (issue 31; it was skipped).
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "3", "0")
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
    # XML cannot carry them, so they are shown as escapes (the byte's \xNN), as control
    # characters XML cannot carry are (spillway.untrusted); DEL is a character reference.
    path = "checks/b\udce9se\x7f\ufffe.json"
    data = junit.document(CheckResult(path, ("scratch",), 4, result().findings, [], []))
    junit_schema().validate(data.decode())
    assert b"&#x7f;" in data and b"\x7f" not in data
    (suite,) = ET.fromstring(data).findall("testsuite")
    assert suite.find("properties/property[@name='baseline']").get("value") == "checks/b\\xe9se\x7f\\ufffe.json"


def test_every_value_reads_back_exactly_as_given():
    """Attribute values keep quotes, markup characters, tabs, newlines and
    carriage returns (written as character references, which a parser does not
    fold into spaces); failure text keeps its lines, a name's line breaks as
    references; only what XML cannot carry is shown as escapes instead."""
    names = ['q"uote\ttab\nnl\rcr', "a<b>&c", "]]> end", "é 𝔘 ok", "ctrl\x01\x1f"]
    findings = [Finding("gfx90a", f"_Z{i}v", name, "scratch", 0, 16, passed=i % 2 == 1, new_kernel=True)
                for i, name in enumerate(names)]
    gone = [("gfx1100", "_Zg", 'gone"<&\n')]
    r = CheckResult('b"<&>.json', ("scratch", "spills"), 4, findings, gone, [])
    data = junit.document(r, suite='s"<&>', accept=lambda f: f"accept '{f.key}' \"<&>\"")
    junit_schema().validate(data.decode())
    suite = ET.fromstring(data).find("testsuite")
    assert suite.get("name") == 's"<&>'
    cases = suite.findall("testcase")
    shown = [n.replace(chr(1), "\\x01").replace(chr(0x1f), "\\x1f") for n in names]
    assert [c.get("name") for c in cases] == [f"{n} [scratch]" for n in shown] + ['gone"<&\n [built]']
    assert {c.get("classname") for c in cases} == {'s"<&>.gfx90a', 's"<&>.gfx1100'}
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == [f"{names[i]} [scratch]" for i in (0, 2)] + ["ctrl\\x01\\x1f [scratch]",
                                                                                          'gone"<&\n [built]']
    failure = failed[0].find("failure")
    assert failure.get("message").endswith("; accept with: accept '_Z0v' \"<&>\"")
    # (The name's carriage return and newline are references: exact, and no line of the file starts with them.)
    assert failure.text.startswith('kernel: q"uote\ttab\nnl\rcr\nkey: _Z0v\ntarget: gfx90a\n')
    gone = cases[-1].find("failure")
    assert (gone.get("type"), gone.get("message")) == ("removed", "in the baseline, no longer built")
    assert gone.text == 'kernel: gone"<&\n\nkey: _Zg\ntarget: gfx1100\nin the baseline, no longer built\n'


def test_a_large_check_is_written_as_a_stream(tmp_path, monkeypatch):
    """480,000 test cases on a ROCm library: the document is written in pieces
    of a few thousand cases, and quoted names are kept up to a bound, so what
    it allocates does not grow with it (as one ElementTree the file took
    1.3 GB for a 267 MB document).  The bound is lowered here so that a test
    of a few megabytes goes past it."""
    import tracemalloc

    monkeypatch.setattr(junit, "_QUOTED_CHARACTERS", 2 << 20)
    monkeypatch.setattr(junit, "_CASES_PER_PIECE", 1024)

    def big(count: int) -> CheckResult:
        name = "void rocprim::detail::kernel<" + "int, " * 200 + "float>(int*, float const*)"
        findings = [Finding(f"gfx{900 + i % 7}", f"_Z{i}v", f"{name}{i}", "scratch", 0, 0, passed=True)
                    for i in range(count)]
        return CheckResult("base.json", ("scratch",), 1, findings, [], [])

    peaks = {}
    for count in (5_000, 40_000):
        result = big(count)
        len(result.findings)
        path = tmp_path / f"{count}.xml"
        tracemalloc.start()
        emit.write(str(path), junit.document_chunks(result))
        peaks[count] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        size = path.stat().st_size
        assert size > count * 1000
        root = ET.parse(path).getroot()
        assert len(root.find("testsuite").findall("testcase")) == count
        assert b"".join(junit.document_chunks(result)) == junit.document(result) == path.read_bytes()
    assert peaks[40_000] < 3 * peaks[5_000] and peaks[40_000] < size / 4, (peaks, size)
