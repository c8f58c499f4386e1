"""Python 3.10, the oldest Python pyproject.toml declares: every spillway
command runs under it, and the documents it writes are byte for byte this
interpreter's (issue 31: every `spillway matrix` command failed on 3.10 with
`import tomllib`, which only 3.11 has).

The interpreter and spillway's dependencies are the virtual environment
scripts/install-python310.sh makes (the machines' pyenv CPython 3.10, pinned
wheels from PyPI); missing, this test skips locally and fails under CI.
mypy checks the package as Python 3.10 too (pyproject.toml), which finds a
3.11-only module or name before anything runs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from spillway.render.html import read_page_data
from support.toolchains import REPO

VENV = Path(os.environ.get("SPILLWAY_PYTHON310_VENV", "/var/cache/spillway-python3.10"))
DATA = REPO / "tests" / "data"
OBJECTS = ("gfx90a.ccob", "gfx1310.ccob")


@pytest.fixture(scope="module")
def python310() -> Path:
    python = VENV / "bin" / "python"
    if not python.is_file():
        message = f"{python} missing: run scripts/install-python310.sh (scripts/install-test-deps.sh does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    version = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                             text=True).stdout.split()
    assert version == ["3", "10"], version
    return python


def test_the_pins_cover_every_dependency():
    """scripts/python310-requirements.txt pins every dependency pyproject.toml declares for 3.10."""
    pinned = {line.split("==")[0] for line in (REPO / "scripts" / "python310-requirements.txt").read_text().splitlines()
              if line and not line.startswith("#")}
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower().replace("_", "-") for d in declared}
    assert "tomli" in names and names <= pinned, sorted(names - pinned)


def test_every_command_runs_under_python_3_10(python310, small_cell, tmp_path):
    work = tmp_path / "work"
    (work / "c23").mkdir(parents=True)
    (work / "c24").mkdir()
    for compiler in ("c23", "c24"):
        for name in OBJECTS:
            shutil.copyfile(DATA / "occupancy" / f"clang-{compiler[1:]}" / name, work / compiler / name)
    cells = small_cell.cells_file(tmp_path / "cells.toml", baseline=str(tmp_path / "cell.json"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(PYTHONPATH=str(REPO / "checker"), SOURCE_DATE_EPOCH="1700000000", COLUMNS="120")

    def run(python, *argv, out: str | None = None):
        result = subprocess.run([str(python), "-m", "spillway", *map(str, argv)], cwd=work, env=env,
                                capture_output=True)
        assert "Traceback" not in result.stderr.decode() and b"internal error" not in result.stderr, \
            (argv, result.stderr)
        return result.returncode, (work / out).read_bytes() if out else result.stdout

    # (command, exit status, its document: compared with this interpreter's when given)
    steps = [
        (["report", "c23", "--all"], 0, None),
        (["report", "c23", "--json", "-o", "r.json"], 0, "r.json"),
        (["report", "c23/gfx90a.ccob", "--isa", "--json", "-o", "isa.json"], 0, "isa.json"),
        (["code", "c23/gfx90a.ccob", "occ_l4096*", "--all", "--json", "-o", "code.json"], 0, "code.json"),
        (["baseline", "write", "c23", "-o", "b.json", "--note", "c23", "--gate", "scratch,occupancy",
          "--record-all"], 0, "b.json"),
        (["check", "c24", "--baseline", "b.json", "--json", "-o", "check.json"], 0, "check.json"),
        (["check", "c24", "--baseline", "b.json", "--format", "sarif", "-o", "check.sarif"], 0, "check.sarif"),
        (["compare", "c24", "--against", "c23", "--json", "-o", "compare.json"], 0, "compare.json"),
        (["compare", "c24", "--against", "b.json", "--format", "html", "-o", "compare.html"], 0, "compare.html"),
        (["schema"], 0, None),
        (["schema", "check"], 0, "-"),
        (["cmake-dir"], 0, None),
        (["matrix", "list", "--cells", cells, "--format", "json"], 0, None),
        (["matrix", "baseline", *small_cell.args(cells)], 0, None),
        (["matrix", "check", "--no-build", *small_cell.args(cells)], 0, None),
        (["matrix", "compare", *small_cell.args(cells), "--format", "json", "-o", "summary.json"], 0,
         "summary.json"),
        (["matrix", "run", "--no-build", *small_cell.args(cells), "--format", "markdown", "-o", "run.md"], 0,
         "run.md"),
        (["matrix", "collect", small_cell.build, *small_cell.args(cells)], 0, None),
    ]
    for argv, status, document in steps:
        found = run(python310, *argv, out=None if document in (None, "-") else document)
        assert found[0] == status, (argv, found)
        if document is None:
            continue
        ours = run(sys.executable, *argv, out=None if document == "-" else document)
        if document.endswith(".html"):
            # The page's model is the same; its gzip stream is each interpreter's zlib's.
            ours, found = [(status, read_page_data(page.decode())) for status, page in (ours, found)]
        assert ours == found, argv
    legacy = subprocess.run([str(python310), "-m", "spillway.cli.legacy", "c24", "--compare", "c23"], cwd=work,
                            env=env, capture_output=True, text=True)
    assert legacy.returncode == 0 and "kernels" in legacy.stdout, legacy.stderr
