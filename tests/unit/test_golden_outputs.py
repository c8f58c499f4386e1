"""Every output byte-identical (issue 24): report, check, compare and
baseline write, in every format they have, on the committed fixtures,
against the outputs recorded by scripts/record-golden.py fast
(tests/data/golden/fast.json; tests/support/golden.py lists the steps)."""

from __future__ import annotations

import pytest

from support import golden

FAST = [s for s in golden.SCENARIOS if s.tier == "fast"]


@pytest.mark.parametrize("scenario", FAST, ids=[s.name for s in FAST])
def test_outputs_are_the_recorded_bytes(scenario, tmp_path):
    recorded = golden.load_records("fast")[scenario.name]
    assert len(recorded) > 100
    golden.assert_same_outputs(recorded, golden.run_scenario(scenario, tmp_path))
