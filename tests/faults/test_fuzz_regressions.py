"""Every crash the fuzzer found, kept as a small input under
tests/data/regressions/<family>/ and replayed through that family's target
(fuzz/targets.py: the same outer layers rebuilt, the same spillway call).
Each must end in SpillwayError (one line, exit 2 on the command line) within
the fuzzer's CPU budget (0.5 s + 1 s per MB)."""

from __future__ import annotations

import time

import pytest

from conftest import DATA
from faultkit import REPO  # noqa: F401  (puts fuzz/ on sys.path)
from spillway.errors import SpillwayError

import fuzz as fuzz_driver  # fuzz/fuzz.py
import targets              # fuzz/targets.py

REGRESSIONS = DATA / "regressions"
INPUTS = sorted(p for p in REGRESSIONS.glob("*/*") if p.is_file())


def test_every_regression_names_a_family():
    assert INPUTS, "no regression inputs"
    assert {p.parent.name for p in INPUTS} <= set(targets.FAMILIES)


@pytest.mark.parametrize("path", INPUTS, ids=[f"{p.parent.name}/{p.name}" for p in INPUTS])
def test_regression_input(path):
    family = targets.FAMILIES[path.parent.name]
    data = path.read_bytes()
    started = time.process_time()
    try:
        size = family.one(data)
    except SpillwayError as exc:
        size = len(data)
        assert "\n" not in str(exc)
    spent = time.process_time() - started
    assert spent < fuzz_driver.budget_seconds(size) * 4, f"{spent:.2f} s of CPU"
