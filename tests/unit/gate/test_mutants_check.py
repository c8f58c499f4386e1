"""A kernel that vanished from the build fails `check` (issue 31: it was a
note, so a build whose device code silently went away passed), until `baseline
write --allow-removed` accepts its removal; through the installed command, on
code objects made from the committed fuzz seed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "faults"))
from faultkit import code_object_with_kernels, run  # noqa: E402


def test_vanished_kernel_fails_until_its_removal_is_accepted(tmp_path):
    before = tmp_path / "before.co"
    before.write_bytes(code_object_with_kernels([{"name": "kept"}, {"name": "gone", "private_segment_fixed_size": 64}]))
    after = tmp_path / "after.co"
    after.write_bytes(code_object_with_kernels([{"name": "kept"}]))
    baseline = tmp_path / "baseline.json"
    written = run("baseline", "write", before, "-o", baseline, "--note", "two kernels", "--gate", "scratch,spills")
    assert written.returncode == 0, written.stderr

    checked = run("check", after, "--baseline", baseline)
    out = checked.stdout.decode()
    assert checked.returncode == 1, (out, checked.stderr)
    assert f"no longer built: gone [gfx1100]: in the baseline, not in the build; accept with: spillway baseline " \
           f"write {after} -o {baseline} --allow-removed-key gone --reason TEXT" in out.splitlines()
    assert out.strip().splitlines()[-1] == "FAIL: 1 baseline kernel no longer built"
    # The baseline records only what its gate found non-zero: the gone kernel is named, so no count note.
    assert "note:" not in out

    as_json = run("check", after, "--baseline", baseline, "--json")
    assert as_json.returncode == 1
    document = json.loads(as_json.stdout)
    assert document["schema"] == "spillway.check/4" and document["passed"] is False
    assert [v["name"] for v in document["removed"]] == ["gone"]
    assert document["failures"] == [] and document["summary"]["removed"] == 1

    accepted = run("baseline", "write", after, "-o", baseline, "--allow-removed", "gone", "--reason", "inlined")
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads(baseline.read_bytes())["removed"] == [{"target": "gfx1100", "key": "gone", "reason": "inlined"}]
    assert run("check", after, "--baseline", baseline).returncode == 0


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
