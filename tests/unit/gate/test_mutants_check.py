"""A kernel that vanished from the build is a note for `check`, never a
failure (kills the mutant that fails the gate on it), through the installed
command, on code objects made from the committed fuzz seed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "faults"))
from faultkit import code_object_with_kernels, run  # noqa: E402


def test_vanished_kernel_is_a_note(tmp_path):
    before = tmp_path / "before.co"
    before.write_bytes(code_object_with_kernels([{"name": "kept"}, {"name": "gone", "private_segment_fixed_size": 64}]))
    after = tmp_path / "after.co"
    after.write_bytes(code_object_with_kernels([{"name": "kept"}]))
    baseline = tmp_path / "baseline.json"
    written = run("baseline", "write", before, "-o", baseline, "--note", "two kernels", "--gate", "scratch,spills")
    assert written.returncode == 0, written.stderr

    checked = run("check", after, "--baseline", baseline)
    out = checked.stdout.decode()
    assert checked.returncode == 0, (out, checked.stderr)
    assert "no longer built" in out and "gone" in out
    assert out.strip().splitlines()[-1].startswith("OK: 1 kernel within baseline")

    as_json = run("check", after, "--baseline", baseline, "--json")
    assert as_json.returncode == 0
    document = json.loads(as_json.stdout)
    assert document["passed"] is True
    # schema v2: kernels on one side only are "added" / "removed"
    assert [v["name"] for v in document["removed"]] == ["gone"]
    assert document["failures"] == []


def test_new_kernel_with_scratch_still_fails(tmp_path):
    """The other side of the same rule: a kernel the baseline lacks is held to zero."""
    before = tmp_path / "before.co"
    before.write_bytes(code_object_with_kernels([{"name": "kept"}]))
    after = tmp_path / "after.co"
    after.write_bytes(code_object_with_kernels([{"name": "kept"}, {"name": "new", "private_segment_fixed_size": 32}]))
    baseline = tmp_path / "baseline.json"
    assert run("baseline", "write", before, "-o", baseline, "--note", "one").returncode == 0
    checked = run("check", after, "--baseline", baseline)
    assert checked.returncode == 1, checked.stdout
    assert b"new" in checked.stdout
