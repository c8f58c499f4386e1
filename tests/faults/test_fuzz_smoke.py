"""CI smoke of the coverage-guided fuzzing (fuzz/run.sh --smoke): every
parser family for a fixed number of inputs with a fixed seed, from the seeds
built out of the committed fixtures.  A crash fails the test and leaves the
input in fuzz/artifacts/<family>/ (make it a regression input).  Long runs are
`fuzz/run.sh --minutes N`, not part of the suite."""

from __future__ import annotations

import os
import subprocess

import pytest

from faultkit import REPO

RUNS = int(os.environ.get("SPILLWAY_FUZZ_SMOKE_RUNS", "400"))


def test_fuzz_smoke_every_family():
    pytest.importorskip("atheris", reason="pip install atheris (the [test] extra installs it)")
    result = subprocess.run(["bash", str(REPO / "fuzz" / "run.sh"), "--smoke", "--runs", str(RUNS)],
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    lines = [line.split("\t") for line in result.stdout.splitlines() if line.count("\t") == 7]
    families = {fields[1] for fields in lines}
    import sys
    sys.path.insert(0, str(REPO / "fuzz"))
    import targets
    assert families == set(targets.FAMILIES)
    for fields in lines:
        assert int(fields[3]) > 0, fields       # inputs run (RUNS, or what 2 minutes allowed)
        assert fields[7] == "0", fields         # crashes
