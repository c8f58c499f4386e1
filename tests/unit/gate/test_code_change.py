"""What compare --isa says changed in a kernel's code beyond its figures
(gate.code_change): the instruction mix's verdict, and the source lines that
gained or lost scratch bytes in loops."""

from __future__ import annotations

from spillway.constants import MIX_CLASSES
from spillway.gate.code_change import (ARITHMETIC_CHANGED, IDENTICAL_MIX, ONLY_CONTROL, ONLY_SPILL_AND_ALU,
                                       ONLY_SPILL_TRAFFIC, LineChange, lines_change, mix_change)


def test_mix_change_verdicts():
    base = dict.fromkeys(MIX_CLASSES, 10)
    assert mix_change(base, dict(base)).verdict == IDENTICAL_MIX
    spilled = dict(base, scratch=30, waitcnt=14)
    change = mix_change(base, spilled)
    assert change.verdict == ONLY_SPILL_TRAFFIC
    assert change.changed == (("scratch", 10, 30), ("waitcnt", 10, 14))
    assert change.phrase() == ("arithmetic identical, only spill traffic changed (scratch 10 -> 30, "
                               "waitcnt 10 -> 14)")
    assert mix_change(base, dict(base, agpr_copy=4)).verdict == ONLY_SPILL_TRAFFIC
    assert mix_change(base, dict(base, other=11)).verdict == ONLY_CONTROL
    assert mix_change(base, dict(base, scratch=0, valu=11)).verdict == ONLY_SPILL_AND_ALU
    assert mix_change(base, dict(base, scratch=0, valu=11, matrix=9)).verdict == ARITHMETIC_CHANGED
    assert mix_change(base, dict(base, valu=11)).verdict == ARITHMETIC_CHANGED      # no spill traffic changed
    assert mix_change(base, dict(base, smem=9)).verdict == ARITHMETIC_CHANGED


def test_mix_change_takes_counts_in_class_order():
    base = tuple(range(len(MIX_CLASSES)))
    more = tuple(n + (name == "agpr_copy") for n, name in zip(base, MIX_CLASSES))
    assert mix_change(base, more).changed == (("agpr_copy", 7, 8),)


def test_lines_that_gained_or_lost_loop_scratch():
    old = (("k.hip", 142, 36), ("k.hip", 90, 8), ("", 0, 4))
    new = (("k.hip", 142, 36), ("k.hip", 90, 16), ("k.hip", 77, 12))
    found = lines_change(old, True, new, True)
    assert found is not None
    assert found.gained == (LineChange("k.hip", 77, 0, 12), LineChange("k.hip", 90, 8, 16))
    assert found.lost == (LineChange("", 0, 4, 0),)
    assert found.as_dict()["gained"][0] == {"file": "k.hip", "line": 77, "old_loop_bytes": 0, "new_loop_bytes": 12}


def test_a_line_not_listed_by_a_side_that_left_some_out_is_not_known():
    """OLD listed only its top lines (``more`` > 0): a line NEW has that OLD
    did not list may have been just below OLD's cut, so it is not called
    gained; a line OLD listed and NEW (complete) lacks is lost."""
    old = (("k.hip", 142, 36),)
    new = (("k.hip", 77, 12),)
    found = lines_change(old, False, new, True)
    assert found is not None and found.gained == () and found.lost == (LineChange("k.hip", 142, 36, 0),)


def test_no_lines_on_a_side():
    assert lines_change(None, True, (("k.hip", 1, 4),), True) is None
    assert lines_change((("k.hip", 1, 4),), True, None, True) is None


def test_at_most_five_lines_each_way():
    old = tuple(("k.hip", n, 0) for n in range(1, 9))
    new = tuple(("k.hip", n, 4 * n) for n in range(1, 9))
    found = lines_change(old, True, new, True)
    assert found is not None and [c.line for c in found.gained] == [8, 7, 6, 5, 4] and found.more_gained == 3
