"""Paths that are not UTF-8 (issue 30, point 6): Linux names are bytes, and a
folder may hold ``bad\\xffname.o``.  Every command in every format reads such
inputs and writes such outputs without an internal error: JSON and SARIF keep
the bytes exactly (``\\udcXX`` escapes, ``os.fsencode(json.loads(...))``
gives them back), every other output shows them as ``\\xNN``, and is UTF-8.

Input: a committed fixture (tests/data/command_line/plain.o: two kernels that
use scratch) under a folder and a file name that are not UTF-8; one process
per command (in-process, cheap).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from spillway.untrusted import utf8_shown

from spillway.json_codec import loads as json_loads
from spillway.render.html import DATA_ELEMENT
from support.gate_fixtures import run_cli

from conftest import DATA

FIXTURE = DATA / "command_line" / "plain.o"


def _undecodable(tmp_path: Path) -> dict[str, str]:
    """Folder dir\\xfe holding bad\\xffname.o, another folder, a baseline whose
    name is not UTF-8 either (its scratch allowance lowered so check fails)."""
    root = os.fsencode(tmp_path)
    folder, other = root + b"/dir\xfe", root + b"/other"
    os.makedirs(folder)
    os.makedirs(other)
    shutil.copy(FIXTURE, folder + b"/bad\xffname.o")
    shutil.copy(FIXTURE, other + b"/plain.o")
    return {"folder": os.fsdecode(folder), "file": os.fsdecode(folder + b"/bad\xffname.o"),
            "other": os.fsdecode(other), "baseline": os.fsdecode(root + b"/base\xfc.json"),
            "out": os.fsdecode(root + b"/out\xfb")}


def _no_internal_error(run) -> None:
    assert run.status in (0, 1), (run.status, run.err)
    assert "internal error" not in run.err and "Traceback" not in run.err


def _shown(path: str) -> bytes:
    """What text outputs show for a path: UTF-8, undecodable bytes as \\xNN (spillway.untrusted)."""
    return utf8_shown(path)


@pytest.fixture
def paths(tmp_path, capsys):
    named = _undecodable(tmp_path)
    _no_internal_error(run_cli(capsys, "baseline", "write", named["folder"], "-o", named["baseline"], "--note", "n"))
    baseline = os.fsencode(named["baseline"])
    with open(baseline, "rb") as handle:
        text = handle.read()
    assert b'"scratch":272' in text and b'dir\\udcfe"' in text   # provenance names the folder, exactly
    with open(baseline, "wb") as handle:
        handle.write(text.replace(b'"scratch":272', b'"scratch":16'))
    return named


def _read(path: str) -> bytes:
    with open(os.fsencode(path), "rb") as handle:
        return handle.read()


@pytest.mark.parametrize("fmt", ["table", "json", "tsv", "html"])
def test_report(paths, capsys, fmt):
    for source in (paths["folder"], paths["file"]):
        out = paths["out"] + ".report." + fmt
        _no_internal_error(run_cli(capsys, "report", "--all", "--isa", "--format", fmt, source, "-o", out))
        data = _read(out)
        data.decode("utf-8")                                      # strict: the document is UTF-8
        if fmt == "json":
            files = {r["file"] for r in json_loads(data)["kernels"]}
            assert {os.fsencode(f) for f in files} == {os.fsencode(paths["file"])}
        elif fmt == "html":
            assert data.index(DATA_ELEMENT.encode()) > 0
        elif fmt == "tsv":
            assert _shown(paths["file"]) in data


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "junit", "github", "tsv", "sarif", "html"])
def test_check(paths, capsys, fmt):
    out = paths["out"] + ".check." + fmt
    run = run_cli(capsys, "check", paths["file"], "--baseline", paths["baseline"], "--format", fmt, "-o", out)
    _no_internal_error(run)
    assert run.status == 1
    data = _read(out)
    data.decode("utf-8")
    if fmt == "sarif":
        uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
                for result in json_loads(data)["runs"][0]["results"] for loc in result["locations"]}
        assert {os.fsencode(uri) for uri in uris} == {os.fsencode(paths["baseline"])}
    elif fmt == "junit":
        import xml.etree.ElementTree as ET
        values = {p.get("name"): p.get("value") for p in ET.fromstring(data).iter("property")}
        assert values["baseline"] == utf8_shown(paths["baseline"]).decode()
    elif fmt in ("markdown", "github", "table"):
        # the accept command names both paths; a shell reads the undecodable bytes back from $'...\xff...'
        assert b"$'" in data and b"bad\\xffname.o" in data


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "github", "tsv", "sarif", "html"])
def test_compare(paths, capsys, fmt):
    out = paths["out"] + ".compare." + fmt
    _no_internal_error(run_cli(capsys, "compare", paths["folder"], "--against", paths["other"], "--format", fmt,
                               "-o", out))
    _no_internal_error(run_cli(capsys, "compare", paths["file"], "--against", paths["baseline"], "--format", fmt,
                               "--isa", "-o", out))
    _read(out).decode("utf-8")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_code(paths, capsys, fmt):
    out = paths["out"] + ".code." + fmt
    _no_internal_error(run_cli(capsys, "code", paths["file"], "pick", "--target", "gfx90a", "--format", fmt,
                               "-o", out))
    data = _read(out)
    if fmt == "json":
        assert os.fsencode(json_loads(data)["kernels"][0]["file"]) == os.fsencode(paths["file"])
    else:
        assert _shown(paths["file"]) in data


def test_baseline_write_and_report_json_inputs(paths, capsys):
    report = paths["out"] + ".r.json"
    _no_internal_error(run_cli(capsys, "report", "--all", "--json", "-o", report, paths["folder"]))
    run = run_cli(capsys, "baseline", "write", report, "-o", paths["baseline"])
    _no_internal_error(run)
    assert "accept with: " in run.err and "$'" in run.err
    _no_internal_error(run_cli(capsys, "check", report, "--baseline", paths["baseline"]))
    _no_internal_error(run_cli(capsys, "compare", report, "--against", paths["other"]))
    written = json.loads(_read(paths["baseline"]))
    assert os.fsencode(written["provenance"]["files"][0]["path"]) == os.fsencode(report)


def test_github_step_summary(paths, capsys, monkeypatch):
    summary = paths["out"] + ".summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", summary)
    _no_internal_error(run_cli(capsys, "check", paths["folder"], "--baseline", paths["baseline"]))
    _no_internal_error(run_cli(capsys, "compare", paths["folder"], "--against", paths["other"]))
    text = _read(summary).decode("utf-8")
    assert "\\xfc" in text
