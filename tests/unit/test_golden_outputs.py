"""Every output byte-identical (issue 24): report, check, compare, baseline
write and code, in every format they have (HTML pages: their bytes and the
model they carry), on the committed fixtures, against the outputs recorded by
scripts/record-golden.py fast (tests/data/golden/fast.json;
tests/support/golden.py lists the steps)."""

from __future__ import annotations

import pytest

from support import golden

FAST = [s for s in golden.SCENARIOS if s.tier == "fast"]


@pytest.mark.parametrize("scenario", FAST, ids=[s.name for s in FAST])
def test_outputs_are_the_recorded_bytes(scenario, tmp_path):
    recorded = golden.load_records("fast")[scenario.name]
    assert len(recorded) > 40
    golden.assert_same_outputs(recorded, golden.run_scenario(scenario, tmp_path))


def test_github_stop_commands_tokens_are_masked():
    """issue 30's random ``::stop-commands::TOKEN`` ... ``::TOKEN::`` pairs
    compare equal from run to run; nothing else that looks like one is masked."""
    first, second = "0f" * 16, "A1b2C3d4-E5f6_0123456789abcdefXYZ"
    log = (f"::stop-commands::{first}\nkernel ::{first}:: inside a line\n::{first}::\n"
           f"  ::stop-commands::{second}\n::error file=x::{second}\n::{second}::\n"
           f"::stop-commands::{'ab' * 15}\n::{'ab' * 15}::\n").encode()
    assert golden.mask_stop_commands(log) == (
        b"::stop-commands::<token-1>\nkernel ::" + first.encode() + b":: inside a line\n::<token-1>::\n"
        b"  ::stop-commands::<token-2>\n::error file=x::" + second.encode() + b"\n::<token-2>::\n"
        b"::stop-commands::" + b"ab" * 15 + b"\n::" + b"ab" * 15 + b"::\n")
    # Two runs with fresh tokens record the same text (a token elsewhere in a line is output: it would differ).
    def run(token: str) -> bytes:
        return f"::stop-commands::{token}\n::error::kernel\n::{token}::\nFAIL: 1 kernel\n".encode()
    nowhere = golden.REPO / "no-such-folder"
    assert golden._entry(run("9" * 40), nowhere) == golden._entry(run(first), nowhere) == {
        "text": "::stop-commands::<token-1>\n::error::kernel\n::<token-1>::\nFAIL: 1 kernel\n"}
