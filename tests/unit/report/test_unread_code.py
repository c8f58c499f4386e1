"""A kernel whose code could not be read has no code identity (issue 42): no
SHA-256 (least of all e3b0c442..., the hash of no bytes) in any format of
report --isa, spillway code or compare --isa; compare never calls two such
kernels "identical code"; the status says why.  The kernel: spill_in_loop of
tests/data/isa/co/gfx90a.clang22.co with its symbol's size set to 0."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spillway.gate.kernels import CodeFigures
from spillway.render.html import read_page_data

DATA = Path(__file__).resolve().parents[2] / "data" / "isa"
NO_BYTES = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def _unread_copy(path: Path) -> Path:
    from unit.report.test_report_isa import _with_symbol

    path.write_bytes(_with_symbol((DATA / "co" / "gfx90a.clang22.co").read_bytes(), "spill_in_loop", 0))
    return path


def spillway(*argv) -> str:
    run = subprocess.run([sys.executable, "-m", "spillway", *map(str, argv)], capture_output=True, text=True,
                         check=False, env={**__import__("os").environ, "COLUMNS": "240"})
    assert run.returncode == 0, run.stderr
    assert NO_BYTES[:8] not in run.stdout
    return run.stdout


@pytest.fixture()
def unread(tmp_path) -> Path:
    return _unread_copy(tmp_path / "bad.co")


def test_report_formats(unread):
    kernel = next(k for k in json.loads(spillway("report", "--isa", "--json", unread))["kernels"]
                  if k["symbol"] == "spill_in_loop")
    assert (kernel["isa"]["code_sha256"], kernel["isa"]["status"], kernel["isa"]["code_bytes"]) == ("", "size 0", 0)
    row = next(line for line in spillway("report", "--isa", "--format", "tsv", "--all", unread).splitlines()
               if "\tspill_in_loop\t" in line or line.startswith("spill_in_loop\t"))
    assert "size 0" in row.split("\t")
    table = spillway("report", "--isa", "--all", unread)
    assert "not read" in next(line for line in table.splitlines() if line.startswith("spill_in_loop"))
    assert "code not read (1 kernel, first spill_in_loop (gfx90a)): size 0" in table
    page = read_page_data(spillway("report", "--isa", "--all", "--format", "html", unread))
    shown = [row[-1] for row in page["rows"] if row[-1] and row[-1]["status"] == "size 0"]
    assert len(shown) == 1 and shown[0]["code_sha256"] == "" and NO_BYTES not in json.dumps(page)


def test_spillway_code(unread):
    text = spillway("code", unread, "spill_in_loop")
    assert "code: 0 instructions, 0 bytes, not read: size 0" in text and "sha256" not in text
    found, = json.loads(spillway("code", "--json", unread, "spill_in_loop"))["kernels"]
    assert (found["isa"]["code_sha256"], found["isa"]["status"]) == ("", "size 0")


def test_compare_never_calls_two_unread_codes_identical(unread, tmp_path):
    other = _unread_copy(tmp_path / "bad2.co")
    document = json.loads(spillway("compare", other, "--isa", "--json", "--against", unread))
    code = next(k["code"] for k in document["kernels"] if k["name"] == "spill_in_loop")
    assert code["verdict"] == "code not read" and code["old"]["code_sha256"] == code["new"]["code_sha256"] == []
    assert code["mix"] is None and code["lines"] is None
    others = [k["code"]["verdict"] for k in document["kernels"] if k["name"] != "spill_in_loop"]
    assert others and set(others) == {"identical code"}
    assert "1 not read on both sides" in document["sentence"]
    for fmt in ("table", "tsv", "markdown", "html"):
        out = spillway("compare", other, "--isa", "--all", "--format", fmt, "--against", unread)
        assert "not read" in out, fmt
    # unread on one side only: not read either
    good = DATA / "co" / "gfx90a.clang22.co"
    document = json.loads(spillway("compare", good, "--isa", "--json", "--against", unread))
    assert next(k["code"]["verdict"] for k in document["kernels"] if k["name"] == "spill_in_loop") == "code not read"


def test_a_report_from_before_gave_unread_code_the_hash_of_no_bytes():
    """Such a report's records are read as unread code, not as two identical codes."""
    isa = {"code_sha256": NO_BYTES, "scratch_load_bytes": 0, "scratch_store_bytes": 0, "scratch_in_loops": 0,
           "agpr_writes": 0, "agpr_reads": 0, "status": "size 0"}
    old = CodeFigures.from_isa(isa)
    assert (old.code_sha256, old.read) == ((), False)
    assert not old.worst(CodeFigures.from_isa({**isa, "code_sha256": "a" * 64, "status": "complete"})).read
