"""spillway.isa.listing on synthetic kernels (bytes as llvm-mc-22 encodes
them for gfx900, as in test_evidence.py) and on the fixture code objects:
what it lists adds up to evidence()'s figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from spillway.isa.evidence import evidence, kernel_ranges
from spillway.isa.listing import Loop, kernel_listing, loop_depth, loops_of

from test_evidence import ENDPGM, ENTRY, LOAD_8_11, S_NOP, STORE_8_11, SWAPPC, branch

CO = Path(__file__).resolve().parents[2] / "data" / "isa" / "co"
V_ACCVGPR_WRITE = bytes([0x00, 0x40, 0xd9, 0xd3, 0x01, 0x01, 0x00, 0x18])   # v_accvgpr_write_b32 a0, v1 (gfx908)


def test_nested_loops_grouped_by_head():
    # Two branches back to 0x10 (a continue), one inner loop 0x20..0x30, one loop apart.
    loops = loops_of(((0x10, 0x40), (0x10, 0x50), (0x20, 0x30), (0x60, 0x70)))
    assert loops == (Loop(0x10, 0x50, 2, 1, False), Loop(0x20, 0x30, 1, 2, True), Loop(0x60, 0x70, 1, 1, True))
    assert [loop_depth(loops, at) for at in (0x0, 0x10, 0x24, 0x30, 0x44, 0x58, 0x70)] == [0, 1, 2, 2, 1, 0, 1]
    assert loops_of(()) == ()


def test_loop_nesting_as_every_pair_defines_it():
    # loops_of finds depth and innermost from sorted ends; the definition compares every pair of loops
    # (one holds another: its head at or before the other's, its end at or after), equal ends and heads
    # included.
    import random

    draw = random.Random(37)
    for _ in range(3000):
        spans = tuple((draw.randint(0, 12) * 4, draw.randint(0, 16) * 4) for _ in range(draw.randint(0, 9)))
        loops = loops_of(spans)
        bounds = [(loop.start, loop.end) for loop in loops]
        assert bounds == sorted({(head, max(b for h, b in spans if h == head)) for head, _ in spans})
        for loop in loops:
            holding = [o for o in bounds if o[0] <= loop.start and loop.end <= o[1]]
            held = [o for o in bounds if o != (loop.start, loop.end) and loop.start <= o[0] and o[1] <= loop.end]
            assert (loop.depth, loop.innermost) == (len(holding), not held), (spans, loop)


def test_scratch_in_a_loop_listed_with_offsets_and_widths():
    # entry (16 bytes), store at 0x10, loop head 0x18: load, nop, branch back, call, end.
    code = ENTRY + STORE_8_11 + LOAD_8_11 + S_NOP + branch(-4) + SWAPPC + ENDPGM
    listing = kernel_listing(code, 0, len(code), "gfx906", True)
    assert listing.code.status == "complete"
    assert listing.loops == (Loop(0x18, 0x24, 1, 1, True),)
    assert [(i.offset, i.length, i.mnemonic, i.kind, i.bytes, i.loop_depth) for i in listing.instructions] == [
        (0x10, 8, "buffer_store_dword", "scratch_store", 4, 0),
        (0x18, 8, "buffer_load_dword", "scratch_load", 4, 1),
        (0x28, 4, "s_swappc_b64", "call", None, 0)]
    assert (listing.code.scratch_in_loops, listing.code.calls) == (1, 1)


def test_buffer_access_off_the_private_segment_buffer_is_not_listed():
    code = STORE_8_11 + ENDPGM            # s[8:11] holds no copy of s[0:3]
    listing = kernel_listing(code, 0, len(code), "gfx906", True)
    assert listing.instructions == () and listing.code.scratch_stores == 0


def test_agpr_copy_listed():
    code = V_ACCVGPR_WRITE + ENDPGM
    listing = kernel_listing(code, 0, len(code), "gfx908", False)
    assert [(i.mnemonic, i.kind) for i in listing.instructions] == [("v_accvgpr_write_b32", "agpr_write")]


@pytest.mark.parametrize("code, start, size, target, status", [
    (ENTRY + bytes([0xff, 0xff]), 0, 18, "gfx906", "truncated"),
    (STORE_8_11, 0, 0, "gfx906", "size 0"),
    (STORE_8_11, 4, 8, "gfx906", "outside the code section"),
    (STORE_8_11, 0, 8, "gfx9999", "no decoder"),
])
def test_bad_code_says_why_and_lists_what_was_decoded(code, start, size, target, status):
    listing = kernel_listing(code, start, size, target, True)
    assert status in listing.code.status
    assert listing.instructions == ()


def test_a_decode_error_keeps_what_came_before():
    code = ENTRY + STORE_8_11 + bytes([0xff, 0xff, 0xff, 0xff])
    listing = kernel_listing(code, 0, len(code), "gfx906", True)
    assert listing.code.status != "complete"
    assert [i.offset for i in listing.instructions] == [0x10]


@pytest.mark.parametrize("path", sorted(CO.glob("*.co")), ids=lambda p: p.name)
def test_listing_adds_up_to_the_evidence(path):
    section, ranges = kernel_ranges(path.read_bytes(), functions=True)
    target = path.name.split(".")[0]
    for found in ranges:
        psb = True if found.private_segment_buffer is None else found.private_segment_buffer
        listing = kernel_listing(section, found.start, found.size, target, psb)
        assert listing.code == evidence(section, found.start, found.size, target, psb)
        kinds = [i.kind for i in listing.instructions]
        code = listing.code
        assert kinds.count("scratch_load") == code.scratch_loads
        assert kinds.count("scratch_store") == code.scratch_stores
        assert sum(i.bytes or 0 for i in listing.instructions if i.kind == "scratch_load") == code.scratch_load_bytes
        assert sum(i.bytes or 0 for i in listing.instructions if i.kind == "scratch_store") == \
            code.scratch_store_bytes
        assert sum(1 for i in listing.instructions if i.kind.startswith("scratch") and i.loop_depth) == \
            code.scratch_in_loops
        assert (kinds.count("agpr_write"), kinds.count("agpr_read")) == (code.agpr_writes, code.agpr_reads)
        assert (kinds.count("matrix"), kinds.count("call")) == (code.matrix_ops, code.calls)
        assert sum(loop.branches for loop in listing.loops) == code.loops
        # each access's and copy's role adds up to the derived figures
        for role, kind, total in (("slot", "scratch_load", code.scratch_slot_load_bytes),
                                  ("slot", "scratch_store", code.scratch_slot_store_bytes),
                                  ("addressed", "scratch_load", code.scratch_addressed_load_bytes),
                                  ("addressed", "scratch_store", code.scratch_addressed_store_bytes)):
            assert sum(i.bytes or 0 for i in listing.instructions if (i.role, i.kind) == (role, kind)) == total
        roles = [i.role for i in listing.instructions]
        assert (roles.count("spill copy"), roles.count("accumulator move")) == \
            (code.agpr_spill_copies, code.agpr_accumulator_moves)
        assert all(bool(i.role) == (i.kind not in ("matrix", "call")) for i in listing.instructions)
