"""check's failures with their kernel's machine code (gate.failure_code):
the fold over instances, the words, the renderings (table, Markdown, JSON,
JUnit, SARIF, HTML), and end to end on the committed ISA fixtures
(tests/data/isa/co): every format carries it, read once per command and only
when the check fails."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from rich.console import Console

from spillway.cli import main
from spillway.render import junit, sarif
from spillway.render.html import check_page, read_page_data
from spillway.schemas import schema_for
from spillway.gate.check import CheckResult, Finding
from spillway.gate.failure_code import FailureCode, failures_code
from spillway.render.markdown import check_markdown
from spillway.render.table import print_check
from spillway.isa.evidence import evidence, kernel_ranges

CO = Path(__file__).resolve().parents[2] / "data" / "isa" / "co"
GFX906, GFX90A = str(CO / "gfx906.clang22.co"), str(CO / "gfx90a.clang22.co")


def figures(path: str, target: str, name: str):
    section, ranges = kernel_ranges(Path(path).read_bytes())
    found = next(r for r in ranges if r.name == name)
    return evidence(section, found.start, found.size, target, bool(found.private_segment_buffer))


def test_fold_takes_each_figure_at_its_worst():
    one = figures(GFX90A, "gfx90a", "spill_in_loop")
    other = replace(one, scratch_load_bytes=one.scratch_load_bytes + 8, agpr_writes=3,
                    status="invalid encoding at +0x10")
    folded = FailureCode.fold([one, other])
    assert folded.scratch_load_bytes == one.scratch_load_bytes + 8
    assert folded.scratch_store_bytes == one.scratch_store_bytes
    assert folded.scratch_in_loops == one.scratch_in_loops
    assert folded.agpr_copies == 3 + one.agpr_reads
    assert (folded.status, folded.instances) == ("invalid encoding at +0x10", 2)
    assert folded.text().endswith(", decoding stopped: invalid encoding at +0x10 (worst of 2 instances)")
    assert failures_code({("gfx90a", "k"): []}) == {}


def test_words():
    code = FailureCode(64, 32, 24, 12, 0, 0, "complete", 1)
    assert code.text() == ("code: scratch 64 B loaded + 32 B stored per lane, 12 of 24 accesses in loops, "
                           "0 AGPR copies, complete")
    assert FailureCode(0, 0, 0, 0, 5, 2, "complete", 1).text(prefix="") == (
        "scratch 0 B loaded + 0 B stored per lane, 0 of 0 accesses in loops, 5 AGPR copies, 2 calls (callees not "
        "counted), complete")


def _result() -> CheckResult:
    findings = [Finding("gfx90a", "k1", "void k1()", "scratch", 0, 80, False, True),
                Finding("gfx90a", "k2", "void k2()", "scratch", 0, 16, False, True)]
    return CheckResult("base.json", ("scratch",), 2, findings, [], [])


def test_renderings_show_each_failing_kernels_code():
    code = {("gfx90a", "k1"): FailureCode(76, 76, 38, 0, 75, 0, "complete", 1)}
    terminal = io.StringIO()
    print_check(_result(), Console(file=terminal, force_terminal=True, width=120, color_system=None), limit=0,
                names="short", accept=lambda f: "ACCEPT", accept_all=lambda r: ("ALL", 0), code=code)
    assert "k1 [gfx90a]: code: scratch 76 B loaded + 76 B stored per lane, 0 of 38 accesses in loops, 75 AGPR " \
           "copies, complete" in terminal.getvalue()
    piped = io.StringIO()
    print_check(_result(), Console(file=piped, width=120, color_system=None), limit=0, names="short",
                accept=lambda f: "ACCEPT", accept_all=lambda r: ("ALL", 0), code=code)
    lines = piped.getvalue().splitlines()
    assert lines[0] == ("over baseline: k1 [gfx90a]: scratch 80 B/lane, allowed at most 0 B/lane (kernel not in the "
                        "baseline); code: scratch 76 B loaded + 76 B stored per lane, 0 of 38 accesses in loops, "
                        "75 AGPR copies, complete; accept with: ACCEPT")
    assert "code:" not in lines[1]          # k2: no code found, the line as before
    text = check_markdown(_result(), code=code)
    assert "- `k1` (`gfx90a`): scratch 76 B loaded + 76 B stored per lane, 0 of 38 accesses in loops, " \
           "75 AGPR copies, complete" in text
    assert check_markdown(_result()) == check_markdown(_result(), code={})


def test_check_of_fixtures_shows_the_code_of_every_failure(capsys, tmp_path):
    baseline = str(tmp_path / "base.json")
    assert main(["baseline", "write", GFX906, "-o", baseline, "--note", "test"]) == 0
    capsys.readouterr()
    assert main(["check", GFX90A, "--baseline", baseline, "--limit", "0"]) == 1
    out = capsys.readouterr().out
    failures = [line for line in out.splitlines() if line.startswith("over baseline: ")]
    assert main(["check", GFX90A, "--baseline", baseline, "--json"]) == 1
    assert len(failures) == len(json.loads(capsys.readouterr().out)["failures"]) >= 10
    assert all("; code: scratch " in line for line in failures)
    spill = figures(GFX90A, "gfx90a", "spill_in_loop")
    line = next(line for line in failures if line.startswith("over baseline: spill_in_loop "))
    assert (f"code: scratch {spill.scratch_load_bytes} B loaded + {spill.scratch_store_bytes} B stored per lane, "
            f"{spill.scratch_in_loops} of {spill.scratch_loads + spill.scratch_stores} accesses in loops") in line


CODE = {("gfx90a", "k1"): FailureCode(76, 76, 38, 0, 75, 0, "complete", 1)}
K1_FIGURES = {"scratch_load_bytes": 76, "scratch_store_bytes": 76, "scratch_accesses": 38, "scratch_in_loops": 0,
              "agpr_copies": 75, "calls": 0, "status": "complete", "instances": 1}


def test_json_carries_each_failures_code():
    failures = _result().to_json(CODE)["failures"]
    assert failures[0]["code"] == K1_FIGURES
    assert "code" not in failures[1]                        # k2: none read
    assert "code" not in _result().to_json()["failures"][0]
    jsonschema.validate(_result().to_json(CODE), schema_for("check"))
    wrong = _result().to_json(CODE)
    wrong["failures"][0]["code"]["extra"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong, schema_for("check"))


def test_junit_failure_text_carries_the_code_line():
    root = ET.fromstring(junit.document(_result(), "s", code=CODE))
    failures = [case.find("failure") for case in root.iter("testcase")]
    assert failures[0].text.splitlines()[-1] == CODE[("gfx90a", "k1")].text()
    assert not failures[0].get("message").count("code:")           # the message stays the finding's
    assert "code:" not in failures[1].text
    assert junit.document(_result(), "s") == junit.document(_result(), "s", code={})


def test_sarif_message_and_properties_carry_the_code():
    run = sarif.check_run(_result(), b"", "spillway/check/base", lambda f: "ACCEPT", code=CODE)
    first, second = run["results"]
    assert first["message"]["text"] == ("k1 [gfx90a]: scratch 80 B/lane, allowed at most 0 B/lane (kernel not in the "
                                        "baseline). Machine code: scratch 76 B loaded + 76 B stored per lane, 0 of 38 "
                                        "accesses in loops, 75 AGPR copies, complete. Intended? accept with: ACCEPT")
    assert first["properties"]["code"] == K1_FIGURES
    assert "code" not in second["properties"] and "Machine code" not in second["message"]["text"]


def test_html_page_rows_carry_the_code():
    data = read_page_data(check_page(_result(), ["b.o"], code=CODE).decode())
    at = {name: i for i, name in enumerate(data["figures"])}
    first, second = data["rows"][:2]
    assert first[at["code"]] == CODE[("gfx90a", "k1")].text(prefix="")
    assert first[at["code_figures"]] == K1_FIGURES
    assert second[at["code"]] is None and second[at["code_figures"]] is None


@pytest.fixture()
def fixture_baseline(tmp_path, capsys) -> str:
    baseline = str(tmp_path / "base.json")
    assert main(["baseline", "write", GFX906, "-o", baseline, "--note", "test"]) == 0
    capsys.readouterr()
    return baseline


@pytest.fixture()
def reads(monkeypatch) -> list:
    """The times check reads the build's code again for its failures."""
    from spillway.report import kernel_code

    calls: list = []
    original = kernel_code.each_code_object

    def counted(*args, **kwargs):
        calls.append({(record["target"], record["key"]) for record in args[2]})
        return original(*args, **kwargs)

    monkeypatch.setattr(kernel_code, "each_code_object", counted)
    return calls


def test_every_document_of_a_failing_check_carries_every_failures_code(fixture_baseline, capsys, tmp_path, reads):
    check = ["check", GFX90A, "--baseline", fixture_baseline]
    side = tmp_path / "side.xml"
    # --limit does not apply to the documents that list every failure: the code of each is read, once.
    assert main([*check, "--json", "--junit", str(side), "--limit", "1"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert len(reads) == 1
    jsonschema.validate(document, schema_for("check"))
    failures = document["failures"]
    assert len(failures) >= 10 and all("code" in f for f in failures)
    assert len(reads[0]) == len({(f["target"], f["key"]) for f in failures})
    spill = figures(GFX90A, "gfx90a", "spill_in_loop")
    found = next(f["code"] for f in failures if f["name"] == "spill_in_loop")
    assert found == {"scratch_load_bytes": spill.scratch_load_bytes, "scratch_store_bytes": spill.scratch_store_bytes,
                     "scratch_accesses": spill.scratch_loads + spill.scratch_stores,
                     "scratch_in_loops": spill.scratch_in_loops, "agpr_copies": spill.agpr_writes + spill.agpr_reads,
                     "calls": spill.calls, "status": spill.status, "instances": 1}
    texts = [c.find("failure").text for c in ET.parse(side).getroot().iter("testcase") if c.find("failure") is not None
             and c.find("failure").get("type") not in ("removed", "removed-target")]
    assert len(texts) == len(failures) and all("\ncode: scratch " in t for t in texts)

    assert main([*check, "--format", "sarif"]) == 1
    results = [r for r in json.loads(capsys.readouterr().out)["runs"][0]["results"] if r["ruleId"] != "removed-target"]
    assert len(results) == len(failures)
    assert all("Machine code: scratch " in r["message"]["text"] and "code" in r["properties"] for r in results)

    page = tmp_path / "check.html"
    assert main([*check, "--format", "html", "-o", str(page)]) == 1
    capsys.readouterr()
    data = read_page_data(page.read_text())
    at = data["figures"].index("code_figures")
    over = [row for row in data["rows"] if row[0] in ("over", "new, over")]
    assert len(over) == len(failures) and all(row[at] for row in over)
    assert len(reads) == 3


def test_a_green_check_or_report_inputs_read_no_code(capsys, tmp_path, reads):
    baseline = str(tmp_path / "base.json")
    assert main(["baseline", "write", GFX90A, "-o", baseline, "--note", "test"]) == 0
    assert main(["check", GFX90A, "--baseline", baseline, "--json", "--junit", str(tmp_path / "j.xml")]) == 0
    assert reads == []
    report = str(tmp_path / "report.json")
    assert main(["report", GFX90A, "--json", "-o", report]) == 0
    strict = str(tmp_path / "strict.json")
    assert main(["baseline", "write", GFX906, "-o", strict, "--note", "test"]) == 0
    capsys.readouterr()
    assert main(["check", report, "--baseline", strict, "--json"]) == 1
    assert not any("code" in f for f in json.loads(capsys.readouterr().out)["failures"])
    assert reads == []
