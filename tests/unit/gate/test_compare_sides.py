"""compare reads each side once, through gate.reading, for every format: a
folder side, standard input (a report JSON, or a baseline) and a baseline
file give the same comparison in table, json, markdown, github, tsv, sarif
and html (issue 31: sarif opened the side paths itself, and failed with "Is a
directory" on a folder and on ``-``)."""

from __future__ import annotations

import io
import json
import shutil
import sys

import orjson
import pytest

from spillway import paths
from spillway.render.html import read_page_data
from support.gate_fixtures import DATA, run_cli
from support.sarif_schema import sarif_validator

FORMATS = ("table", "json", "markdown", "github", "tsv", "sarif", "html")
# Occupancy fixtures (small, committed): NEW adds clang-24's wave64 build of gfx1310, whose kernels
# have fewer waves (the worst instance counts), so some got worse.
OBJECTS = {"new": ("clang-24", ("gfx90a.ccob", "gfx1310.ccob", "gfx1310-wave64.ccob")),
           "old": ("clang-23", ("gfx90a.ccob", "gfx1310.ccob"))}
SIDES = ("folder", "stdin-report", "baseline", "stdin-baseline")


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    """NEW: a folder of clang-24 code objects; OLD as a folder of the clang-23
    ones, their report JSON and their record-all baseline (files and bytes)."""
    from spillway.cli import main

    root = tmp_path_factory.mktemp("compare-sides")
    for side, (compiler, names) in OBJECTS.items():
        (root / side).mkdir()
        for name in names:
            shutil.copyfile(DATA / "occupancy" / compiler / name, root / side / name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", "1700000000")
        assert main(["report", "--json", "-o", str(root / "old.report.json"), str(root / "old")]) == 0
        assert main(["baseline", "write", str(root / "old"), "-o", str(root / "old.baseline.json"), "--note", "old",
                     "--gate", "scratch,spills,occupancy", "--record-all"]) == 0
    return root


def _compare(capsys, monkeypatch, sides, side: str, fmt: str):
    """compare NEW --against OLD (given as ``side``) in ``fmt``; standard input holds what ``-`` names."""
    stdin = {"stdin-report": "old.report.json", "stdin-baseline": "old.baseline.json"}.get(side)
    against = {"folder": "old", "baseline": "old.baseline.json"}.get(side, "-")     # (run in ``sides``)
    monkeypatch.setattr(paths, "_STDIN_FILE", None)          # spooled once per run
    data = (sides / stdin).read_bytes() if stdin else b""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    summary = sides / "summary.md"
    summary.write_text("")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("COLUMNS", "120")
    return run_cli(capsys, "compare", "new", "--against", against, "--format", fmt)


@pytest.mark.parametrize("side", SIDES)
def test_every_format_reads_folder_stdin_and_baseline_sides(sides, side, capsys, monkeypatch):
    monkeypatch.chdir(sides)
    reference = _compare(capsys, monkeypatch, sides, "folder", "json")
    assert reference.status == 0, reference.err
    expected = orjson.loads(reference.out)
    sentence = expected["sentence"]
    worse = [(k["target"], k["key"]) for k in expected["kernels"] if k["worse"]]
    assert worse, "the fixtures must have kernels that got worse (else SARIF proves nothing)"
    for fmt in FORMATS:
        run = _compare(capsys, monkeypatch, sides, side, fmt)
        assert run.status == 0 and run.err == "", (side, fmt, run.err)
        if fmt == "json":
            document = orjson.loads(run.out)
            assert document["sentence"] == sentence
            assert [(k["target"], k["key"], k["status"]) for k in document["kernels"]] == \
                   [(k["target"], k["key"], k["status"]) for k in expected["kernels"]]
        elif fmt == "html":
            assert read_page_data(run.out)["sentence"] == sentence
        elif fmt == "tsv":
            rows = run.out.splitlines()[1:]
            changed = [k for k in expected["kernels"] if k["status"] != "same"]
            assert len(rows) == len(changed) + len(expected["added"]) + len(expected["removed"]), side
        elif fmt == "sarif":
            log = json.loads(run.out)
            sarif_validator().validate(log)
            results = log["runs"][0]["results"]
            assert sorted((r["properties"]["target"], r["properties"]["key"]) for r in results
                          if r["ruleId"] != "added-with-scratch") == sorted(
                w for k in expected["kernels"] for w in [(k["target"], k["key"])] * len(k["worse"]))
            uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
            if side == "baseline":
                # At each kernel's line of the baseline file.
                lines = (sides / "old.baseline.json").read_text().splitlines()
                assert uris == {"old.baseline.json"}
                for r in results:
                    line = lines[r["locations"][0]["physicalLocation"]["region"]["startLine"] - 1]
                    assert f'"key":"{r["properties"]["key"]}"' in line
            else:
                # No file to point at on standard input or in a folder: the NEW path.
                assert uris == {"new"}, uris
        else:
            assert sentence in run.out, (side, fmt)
            if fmt == "github":
                assert "::warning file=new," in run.out
