"""check's failures with their kernel's machine code (gate.failure_code):
the fold over instances, the words, the renderings, and end to end on the
committed ISA fixtures (tests/data/isa/co)."""

from __future__ import annotations

import json

import io
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from spillway.cli import main
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
    # JSON stays as it was: no code read for it.
    assert main(["check", GFX90A, "--baseline", baseline, "--json"]) == 1
    assert "scratch_in_loops" not in capsys.readouterr().out
