"""The matrix holds each cell to every kernel and target of its baseline and
to the targets cells.toml declares for it (issue 31: a cell whose gfx1151
device code vanished passed): `matrix check`, `run` (terminal, GitHub, SARIF)
and `matrix baseline`, on the smallest real cell (tests/support/matrix_fixtures.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from support.matrix_fixtures import SMALL_CELL
from support.sarif_schema import sarif_validator

GONE = "_Z9gone_longPf"


def spillway(*argv, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spillway", *map(str, argv)], capture_output=True, text=True,
                          env=env)


def test_a_declared_target_the_library_lacks_fails_the_cell(small_cell, tmp_path):
    baseline = tmp_path / "cell.json"
    assert spillway("baseline", "write", small_cell.library, "-o", baseline, "--note", "n").returncode == 0
    # The cell declares gfx1100 too; its library has no code for it.
    cells = small_cell.cells_file(tmp_path / "cells.toml", baseline=str(baseline),
                                  targets=["gfx1100", "gfx1151", "gfx90a", "gfx942"])
    checked = spillway("matrix", "check", "--no-build", *small_cell.args(cells))
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert re.search(rf"^FAIL +{SMALL_CELL} +FAIL: target gfx1100 no longer built$", checked.stdout, re.M), \
        checked.stdout
    assert ("no longer built: target gfx1100: no kernel built for it (the cell declares it in cells.toml); "
            "accept with: build it, or take it out of the cell's targets in cells.toml") in checked.stdout
    document = json.loads((small_cell.build / SMALL_CELL / "check.json").read_text())
    assert document["removed_targets"] == [{"target": "gfx1100", "kernels_written_from": None, "declared": True,
                                            "in_baseline": False}]


def test_a_baseline_kernel_and_target_gone_fail_until_accepted(small_cell, tmp_path):
    baseline = tmp_path / "cell.json"
    assert spillway("baseline", "write", small_cell.library, "-o", baseline, "--note", "n", "--record-all",
                    "--gate", "scratch,spills").returncode == 0
    # As if the library had been built before with a kernel and a target it no longer has.
    document = json.loads(baseline.read_text())
    document["kernels_written_from"]["gfx1200"] = 9
    document["kernels"].insert(0, {"key": GONE, "targets": [{"target": "gfx90a", "vgprs": 8, "sgprs": 8}]})
    baseline.write_text(json.dumps(document, indent=2))
    cells = small_cell.cells_file(tmp_path / "cells.toml", baseline=str(baseline))
    args = small_cell.args(cells)
    checked = spillway("matrix", "check", "--no-build", *args)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert re.search(rf"^FAIL +{SMALL_CELL} +FAIL: target gfx1200 no longer built; 1 baseline kernel no longer "
                     rf"built$", checked.stdout, re.M), checked.stdout
    accept = re.search(r"Removed on purpose\? Accept the removal with: (spillway baseline write .*) --reason TEXT$",
                       checked.stdout, re.M)
    assert accept and f"--allow-removed-key {GONE} --allow-removed-target gfx1200" in accept.group(1), checked.stdout
    assert "no longer built: gone_long [gfx90a]: in the baseline, not in the build; accept with: " in checked.stdout

    # matrix run: GitHub annotations and SARIF results name them too.
    run = spillway("matrix", "run", "--no-build", *args, "--format", "github",
                   env={**os.environ, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")})
    assert run.returncode == 1
    assert (f"::error file={baseline},title=spillway matrix%3A {SMALL_CELL}%3A target gfx1200 no longer built::"
            in run.stdout), run.stdout
    log = json.loads(spillway("matrix", "run", "--no-build", *args, "--format", "sarif").stdout)
    sarif_validator().validate(log)
    assert sorted(r["ruleId"] for r in log["runs"][0]["results"]) == ["removed", "removed-target"]

    # matrix baseline keeps them (exit 1) and says how to accept each.
    kept = spillway("matrix", "baseline", *args)
    assert kept.returncode == 1, kept.stdout
    assert f"{SMALL_CELL}: kept target gfx1200: no kernel built for it; accept its removal with: spillway baseline " \
           f"write " in kept.stdout
    # The command check printed accepts both, records why, and the cell passes.
    words = accept.group(1).split()
    done = spillway(*words[1:], "--reason", "gfx1200 dropped from the cell")
    assert done.returncode == 0, done.stderr
    assert json.loads(baseline.read_text())["removed"] == [
        {"target": "gfx1200", "reason": "gfx1200 dropped from the cell"},
        {"target": "gfx90a", "key": GONE, "reason": "gfx1200 dropped from the cell"}]
    assert spillway("matrix", "check", "--no-build", *args).returncode == 0
