"""A failing ``check --format json|sarif`` reads its inputs once, plus one
revisit of the code objects holding failing kernels, which gives both their
machine code and their source lines (issue 37: it read the binaries four
times: the check's read, a second read to find the failing kernels' places,
a third to decode them, a fourth for their source lines).

Two code objects in a folder (the ISA line-table fixtures' gfx1100 and
gfx906 builds), held to a default baseline of the gfx1100 one: its kernels
pass, gfx906's with scratch fail as kernels not in the baseline.  Every code
object is parsed once to read it, and once more only when it holds a failing
kernel."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from spillway.cli import main

REPO = Path(__file__).resolve().parents[3]
LINES = REPO / "tests" / "data" / "isa" / "lines" / "co"
NAMES = ("gfx1100.clang22.dwarf5.co", "gfx906.clang22.dwarf4.co")


@pytest.fixture
def parsed(monkeypatch):
    """How many times each code object (by its bytes) is parsed."""
    from spillway.formats import codeobject

    seen: Counter = Counter()
    parse = codeobject.parse

    def counted(payload, *args, **kwargs):
        seen[bytes(payload[:4096])] += 1
        return parse(payload, *args, **kwargs)

    monkeypatch.setattr(codeobject, "parse", counted)
    return seen


@pytest.fixture
def build(tmp_path, capsys):
    folder = tmp_path / "build"
    folder.mkdir()
    for name in NAMES:
        shutil.copyfile(LINES / name, folder / name)
    baseline = tmp_path / "base.json"
    assert main(["baseline", "write", str(folder / NAMES[0]), "-o", str(baseline), "--note", "gfx1100 only"]) == 0
    capsys.readouterr()
    return folder, baseline


@pytest.mark.parametrize("fmt", ["json", "sarif", "table"])
def test_a_failing_check_reads_once_and_revisits_the_failing_code_objects_once(build, parsed, capsys, fmt,
                                                                               monkeypatch):
    folder, baseline = build
    monkeypatch.chdir(folder)
    # (the line tables name /spillway/tests/data/isa/...: found under the repository's root)
    status = main(["check", str(folder), "--baseline", str(baseline), "--format", fmt, "--limit", "0",
                   *(["--source-root", str(REPO)] if fmt != "table" else [])])
    out = capsys.readouterr().out
    assert status == 1
    if fmt == "json":
        failures = json.loads(out)["failures"]
        assert failures and all("code" in f for f in failures)
        assert any("source" in f for f in failures), "the line tables point failures at their lines"
        failing_targets = {f["target"] for f in failures}
    elif fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        failing_targets = {r["properties"]["target"] for r in results if "target" in r.get("properties", {})}
        assert failing_targets
    else:
        failing_targets = {target for target in ("gfx1100", "gfx906") if f"[{target}]" in out}
        assert failing_targets
    objects = {(LINES / name).read_bytes()[:4096]: name.split(".")[0] for name in NAMES}
    counts = {objects[head]: count for head, count in parsed.items() if head in objects}
    assert failing_targets == {"gfx906"}
    # Read once each; again once, only the code objects holding a failing kernel.
    assert counts == {target: 1 + (target in failing_targets) for target in ("gfx1100", "gfx906")}, counts


@pytest.mark.parametrize("sources_under_root", [True, False])
def test_line_programs_are_run_only_when_a_failure_can_point_at_a_file_under_the_root(tmp_path, capsys, monkeypatch,
                                                                                      sources_under_root):
    # A failure's source location is a file under --source-root; when no file the failing code object's
    # (DWARF 5) line tables name is there, only their headers are read (gate.revisit.may_locate): no
    # sequence is run, and the failures' code is the same.
    from spillway.formats import dwarf_lines

    folder = tmp_path / "build"
    folder.mkdir()
    for name in ("gfx1100.clang22.dwarf5.co", "gfx906.clang22.dwarf5.co"):
        shutil.copyfile(LINES / name, folder / name)
    baseline = tmp_path / "base.json"
    assert main(["baseline", "write", str(folder / "gfx1100.clang22.dwarf5.co"), "-o", str(baseline),
                 "--note", "gfx1100 only"]) == 0
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    monkeypatch.chdir(empty)
    capsys.readouterr()
    sequences_run = []
    run = dwarf_lines._run

    def counted(data, spans, *args):
        sequences_run.append(len(spans))
        return run(data, spans, *args)

    monkeypatch.setattr(dwarf_lines, "_run", counted)
    root = REPO if sources_under_root else empty
    assert main(["check", str(folder), "--baseline", str(baseline), "--format", "json", "--limit", "0",
                 "--source-root", str(root)]) == 1
    failures = json.loads(capsys.readouterr().out)["failures"]
    assert failures and {f["target"] for f in failures} == {"gfx906"}
    assert all("code" in f for f in failures)
    if sources_under_root:
        assert any("source" in f for f in failures)
        assert sum(sequences_run) > 0
    else:
        assert not any("source" in f for f in failures)
        assert sum(sequences_run) == 0, sequences_run
