"""The machine-code gates (loop_scratch, agpr_copies) in the matrix: `matrix
check --gate loop_scratch` decodes each cell's code as `spillway check` does
(issue 31: matrix/gating.py never asked for it, so every cell was an error),
and a cell may gate them in cells.toml (`matrix baseline` then records them),
on the smallest real cell (tests/support/matrix_fixtures.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from support.matrix_fixtures import SMALL_CELL


def spillway(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spillway", *map(str, argv)], capture_output=True, text=True)


def _lowered(baseline, key_part: str, metric: str) -> None:
    """The baseline with ``metric`` at 0 for every target of the kernels whose key holds ``key_part``."""
    lines = baseline.read_text().splitlines()
    for index, line in enumerate(lines):
        if line.startswith('    {"key":') and key_part in line:
            kernel = json.loads(line.strip().rstrip(","))
            for target in kernel["targets"]:
                target[metric] = 0
            lines[index] = "    " + json.dumps(kernel, separators=(",", ":")) + ("," if line.endswith(",") else "")
    baseline.write_text("\n".join(lines) + "\n")


def test_check_gate_loop_scratch_reads_each_cells_machine_code(small_cell, tmp_path):
    # A baseline that records the code's figures, written by `spillway baseline write`.
    baseline = tmp_path / "cell.json"
    written = spillway("baseline", "write", small_cell.library, "-o", baseline, "--note", "code",
                       "--gate", "scratch,spills,loop_scratch,agpr_copies", "--record-all")
    assert written.returncode == 0, written.stderr
    cells = small_cell.cells_file(tmp_path / "cells.toml", baseline=str(baseline))
    for gate in ("loop_scratch", "agpr_copies", "scratch,loop_scratch"):
        checked = spillway("matrix", "check", "--no-build", "--gate", gate, *small_cell.args(cells))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert re.search(rf"^PASS +{SMALL_CELL} +OK: 9 kernels within baseline$", checked.stdout, re.M), \
            checked.stdout
    # The figures are the code's: topk_sample<32, 256> reads its private list in loops.
    _lowered(baseline, "topk_sample", "loop_scratch")
    failed = spillway("matrix", "check", "--no-build", "--gate", "loop_scratch", *small_cell.args(cells))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    lines = [line.strip() for line in failed.stdout.splitlines() if "over baseline:" in line]
    assert {re.sub(r" \[gfx[0-9a-f]+\]", "", line) for line in lines} == {
        "over baseline: topk_sample<32, 256>: loop_scratch " + found for found in
        {re.search(r"loop_scratch (.*)$", line).group(1) for line in lines}}
    assert len(lines) == 3 and all("allowed at most 0" in line for line in lines), failed.stdout
    check = json.loads((small_cell.build / SMALL_CELL / "check.json").read_text())
    assert {(f["metric"], f["allowed"]) for f in check["failures"]} == {("loop_scratch", 0)}
    assert all(f["actual"] > 100 for f in check["failures"])


def test_a_cell_gates_the_machine_code_metrics_from_cells_toml(small_cell, tmp_path):
    baseline = tmp_path / "cell.json"
    cells = small_cell.cells_file(tmp_path / "cells.toml", baseline=str(baseline),
                                  gate=["scratch", "spills", "loop_scratch", "agpr_copies"])
    written = spillway("matrix", "baseline", *small_cell.args(cells))
    assert written.returncode == 0, written.stdout + written.stderr
    document = json.loads(baseline.read_text())
    assert document["schema"] == "spillway.baseline/4"
    assert document["gate"] == ["scratch", "spills", "loop_scratch", "agpr_copies"]
    topk = next(k for k in document["kernels"] if "topk_sample" in k["key"] and "Li32E" in k["key"])
    assert all(t["loop_scratch"] > 100 and t["agpr_copies"] == 0 for t in topk["targets"])
    assert spillway("matrix", "check", "--no-build", *small_cell.args(cells)).returncode == 0
    _lowered(baseline, "token_histogram", "loop_scratch")
    failed = spillway("matrix", "check", "--no-build", *small_cell.args(cells))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert re.search(r"over baseline: token_histogram \[gfx90a\]: loop_scratch \d+", failed.stdout), failed.stdout

    # A baseline that does not record them: an error naming the command that rewrites it (not "no code").
    plain = tmp_path / "plain.json"
    assert spillway("baseline", "write", small_cell.library, "-o", plain, "--note", "plain").returncode == 0
    cells = small_cell.cells_file(tmp_path / "plain.toml", baseline=str(plain))
    error = spillway("matrix", "check", "--no-build", "--gate", "agpr_copies", *small_cell.args(cells))
    assert error.returncode == 1
    assert re.search(rf"^ERROR +{SMALL_CELL} +.*cannot check agpr_copies; rewrite it with: spillway baseline "
                     r"write .* --gate scratch,agpr_copies$", error.stdout, re.M), error.stdout
