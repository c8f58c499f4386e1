"""Every crash or hang the fuzzer found, kept as a small input under
tests/data/regressions/<family>/ and replayed through that family's target
(fuzz/targets.py: the same outer layers rebuilt, the same spillway call).
Each must end in SpillwayError (one line, exit 2 on the command line) within
the fuzzer's CPU budget (0.5 s + 1 s per MB; four times that here).

Each input is replayed in a process of its own with a timeout, so an input
that loops again (an ar header whose size read -61 once did) fails this test
in seconds instead of hanging CI."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import DATA
from faultkit import REPO

import targets              # fuzz/targets.py (faultkit puts fuzz/ on sys.path)

REGRESSIONS = DATA / "regressions"
INPUTS = sorted(p for p in REGRESSIONS.glob("*/*") if p.is_file())
TIMEOUT = 60      # seconds; every input takes well under one


def test_every_regression_names_a_family():
    assert INPUTS, "no regression inputs"
    assert {p.parent.name for p in INPUTS} <= set(targets.FAMILIES)


@pytest.mark.parametrize("path", INPUTS, ids=[f"{p.parent.name}/{p.name}" for p in INPUTS])
def test_regression_input(path):
    command = [sys.executable, str(REPO / "fuzz" / "fuzz.py"), "--replay", path.parent.name, str(path)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT,
                              env=dict(os.environ, SPILLWAY_REPLAY_SLACK="4"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{path.name} did not end within {TIMEOUT} s: a walk loops again")
    lines = done.stdout.splitlines()
    # (stderr may carry the harness's own warnings: zipfile's duplicate member names)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    # One line for the input (its error is one line: no continuation), one summary.
    assert len(lines) == 2 and lines[1].startswith("replayed 1 inputs, 0 failures"), done.stdout
    outcome = lines[0].removeprefix(f"{path}: ")
    assert outcome == "ok" or outcome.startswith("SpillwayError: "), outcome
