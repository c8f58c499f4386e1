"""The derived figures of spillway.isa.evidence on synthetic kernels: scratch
slot against addressed bytes, AGPR spill copies against accumulator moves,
innermost loops.  Bytes as ``llvm-mc-22 -show-encoding -mcpu=TARGET``
encodes the quoted assembly; the same rules read from llvm-objdump text are
tests/support/isa_oracle.py's (tests/oracle/test_isa_oracle.py)."""

from __future__ import annotations

import pytest

from spillway.isa.evidence import accumulator_widths, evidence, nesting

ENDPGM_GFX9 = bytes([0x00, 0x00, 0x81, 0xbf])
ENDPGM_GFX11 = bytes([0x00, 0x00, 0xb0, 0xbf])     # gfx11, gfx12 and gfx1250
S_NOP = bytes([0x00, 0x00, 0x80, 0xbf])

# (target, bytes, VGPR-addressed?, is a load): one scratch access each.
ACCESSES = [
    ("gfx906", [0x00, 0x00, 0x50, 0xe0, 0x00, 0x01, 0x00, 0x80], False, True),    # buffer_load_dword v1, off, s[0:3], 0
    ("gfx906", [0x00, 0x10, 0x50, 0xe0, 0x02, 0x01, 0x00, 0x80], True, True),     # ... v1, v2, s[0:3], 0 offen
    ("gfx906", [0x00, 0x20, 0x50, 0xe0, 0x02, 0x01, 0x00, 0x80], True, True),     # ... v1, v2, s[0:3], 0 idxen
    ("gfx906", [0x00, 0x40, 0x50, 0xdc, 0x00, 0x00, 0x02, 0x01], False, True),    # scratch_load_dword v1, off, s2
    ("gfx906", [0x00, 0x40, 0x50, 0xdc, 0x02, 0x00, 0x7f, 0x01], True, True),     # scratch_load_dword v1, v2, off
    ("gfx906", [0x00, 0x40, 0x70, 0xdc, 0x02, 0x01, 0x7f, 0x00], True, False),    # scratch_store_dword v2, v1, off
    ("gfx942", [0x00, 0x40, 0x50, 0xdc, 0x00, 0x00, 0x7f, 0x01], False, True),    # scratch_load_dword v1, off, off
    ("gfx942", [0x00, 0x60, 0x50, 0xdc, 0x02, 0x00, 0x7f, 0x01], True, True),     # scratch_load_dword v1, v2, off
    ("gfx942", [0x00, 0x60, 0x50, 0xdc, 0x02, 0x00, 0x02, 0x01], True, True),     # scratch_load_dword v1, v2, s2
    ("gfx942", [0x00, 0x40, 0x70, 0xdc, 0x00, 0x01, 0x03, 0x00], False, False),   # scratch_store_dword off, v1, s3
    ("gfx1030", [0x00, 0x40, 0x30, 0xdc, 0x00, 0x00, 0x7f, 0x01], False, True),   # scratch_load_dword v1, off, off
    ("gfx1030", [0x00, 0x40, 0x30, 0xdc, 0x02, 0x00, 0x7d, 0x01], True, True),    # scratch_load_dword v1, v2, off
    ("gfx1030", [0x00, 0x40, 0x30, 0xdc, 0x00, 0x00, 0x02, 0x01], False, True),   # scratch_load_dword v1, off, s2
    ("gfx1100", [0x00, 0x00, 0x50, 0xe0, 0x00, 0x01, 0x00, 0x80], False, True),   # buffer_load_b32 v1, off, s[0:3], 0
    ("gfx1100", [0x00, 0x00, 0x50, 0xe0, 0x02, 0x01, 0x40, 0x80], True, True),    # ... v1, v2, s[0:3], 0 offen
    ("gfx1100", [0x00, 0x00, 0x51, 0xdc, 0x00, 0x00, 0x7c, 0x01], False, True),   # scratch_load_b32 v1, off, off
    ("gfx1100", [0x00, 0x00, 0x51, 0xdc, 0x02, 0x00, 0xfc, 0x01], True, True),    # scratch_load_b32 v1, v2, off
    ("gfx1100", [0x00, 0x00, 0x69, 0xdc, 0x00, 0x01, 0x03, 0x00], False, False),  # scratch_store_b32 off, v1, s3
    ("gfx1201", [0x7c, 0x80, 0x06, 0xed, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00], False, False),
    ("gfx1201", [0x7c, 0x80, 0x06, 0xed, 0x00, 0x00, 0x82, 0x00, 0x02, 0x00, 0x00, 0x00], True, False),
    ("gfx1250", [0x02, 0x00, 0x05, 0xed, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00], True, True),
    ("gfx1250", [0x02, 0x00, 0x05, 0xed, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], False, True),
]   # gfx1201: scratch_store_b32 off, v1, off / v2, v1, off; gfx1250: scratch_load_b32 v1, v2, s2 / v1, off, s2


@pytest.mark.parametrize("target, raw, addressed, load", ACCESSES)
def test_slot_or_addressed_by_the_vaddr_field(target, raw, addressed, load):
    end = ENDPGM_GFX9 if target.startswith("gfx9") else ENDPGM_GFX11
    code = bytes(raw) + end
    found = evidence(code, 0, len(code), target, True)
    assert found.scratch_loads + found.scratch_stores == 1, target
    figures = (found.scratch_slot_load_bytes, found.scratch_slot_store_bytes,
               found.scratch_addressed_load_bytes, found.scratch_addressed_store_bytes)
    want = [0, 0, 0, 0]
    want[2 * addressed + (not load)] = 4
    assert figures == tuple(want)


def test_slot_and_addressed_bytes_add_up_to_the_scratch_bytes():
    code = b"".join(bytes(raw) for target, raw, _a, _l in ACCESSES if target == "gfx906") + ENDPGM_GFX9
    found = evidence(code, 0, len(code), "gfx906", True)
    assert found.scratch_slot_load_bytes + found.scratch_addressed_load_bytes == found.scratch_load_bytes == 20
    assert found.scratch_slot_store_bytes + found.scratch_addressed_store_bytes == found.scratch_store_bytes == 4
    assert found.scratch_addressed_load_bytes == 12


# gfx90a
ACC_WRITE_A0_0 = bytes([0x00, 0x40, 0xd9, 0xd3, 0x80, 0x00, 0x00, 0x18])      # v_accvgpr_write_b32 a0, 0
# v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], a[0:15] and the same on v[0:15] (acc_cd 0)
MFMA_ACC = bytes([0x00, 0x80, 0xcc, 0xd3, 0x00, 0x05, 0x02, 0x04])
MFMA_VGPR = bytes([0x00, 0x00, 0xcc, 0xd3, 0x00, 0x05, 0x02, 0x04])
ACC_READ_V1_A7 = bytes([0x01, 0x40, 0xd8, 0xd3, 0x07, 0x01, 0x00, 0x18])      # v_accvgpr_read_b32 v1, a7
ACC_WRITE_A20_V1 = bytes([0x14, 0x40, 0xd9, 0xd3, 0x01, 0x01, 0x00, 0x18])    # v_accvgpr_write_b32 a20, v1
ACC_MOV_A16_A0 = bytes([0x00, 0xa5, 0x20, 0x7e])                               # v_accvgpr_mov_b32 a16, a0
ACC_READ_V2_A16 = bytes([0x02, 0x40, 0xd8, 0xd3, 0x10, 0x01, 0x00, 0x18])     # v_accvgpr_read_b32 v2, a16


def split(code: bytes, target: str) -> tuple[int, int]:
    found = evidence(code, 0, len(code), target, False)
    assert found.agpr_spill_copies + found.agpr_accumulator_moves == found.agpr_writes + found.agpr_reads
    return found.agpr_spill_copies, found.agpr_accumulator_moves


def test_no_matrix_op_every_copy_is_a_spill_copy():
    assert split(ACC_WRITE_A0_0 + ACC_READ_V1_A7 + ACC_WRITE_A20_V1 + ENDPGM_GFX9, "gfx90a") == (3, 0)


def test_copies_of_the_accumulator_and_of_its_moved_copy():
    # a0 and a7 lie in a[0:15]; a16 is a copy v_accvgpr_mov makes of a0; a20 is nothing of the MFMA's
    code = (ACC_WRITE_A0_0 + MFMA_ACC + ACC_READ_V1_A7 + ACC_WRITE_A20_V1 + ACC_MOV_A16_A0 + ACC_READ_V2_A16
            + ENDPGM_GFX9)
    assert split(code, "gfx90a") == (1, 3)
    assert split(code.replace(ACC_MOV_A16_A0, S_NOP), "gfx90a") == (2, 2)


def test_an_mfma_on_vgprs_has_no_accumulator_agprs():
    assert split(ACC_WRITE_A0_0 + MFMA_VGPR + ACC_READ_V1_A7 + ENDPGM_GFX9, "gfx90a") == (2, 0)


def test_gfx908_matrix_ops_always_accumulate_in_agprs():
    # v_mfma_f32_4x4x1f32 a[0:3], v0, v1, a[4:7] (no acc_cd bit on gfx908): a0-a7 accumulate
    mfma = bytes([0x00, 0x00, 0xc2, 0xd3, 0x00, 0x03, 0x12, 0x04])
    read_a6 = bytes([0x01, 0x40, 0xd8, 0xd3, 0x06, 0x01, 0x00, 0x18])   # v_accvgpr_read_b32 v1, a6
    read_a8 = bytes([0x01, 0x40, 0xd8, 0xd3, 0x08, 0x01, 0x00, 0x18])   # v_accvgpr_read_b32 v1, a8
    assert split(mfma + read_a6 + read_a8 + ENDPGM_GFX9, "gfx908") == (1, 1)


def test_smfmac_src2_is_an_index_not_an_accumulator():
    # v_smfmac_f32_16x16x32_f16 a[0:3], v[0:1], v[2:5], v6 (gfx942): a0-a3 accumulate, a6 does not
    smfmac = bytes([0x00, 0x80, 0xe2, 0xd3, 0x00, 0x05, 0x1a, 0x04])
    write_a6 = bytes([0x06, 0x40, 0xd9, 0xd3, 0x01, 0x01, 0x00, 0x18])  # v_accvgpr_write_b32 a6, v1
    write_a3 = bytes([0x03, 0x40, 0xd9, 0xd3, 0x01, 0x01, 0x00, 0x18])  # v_accvgpr_write_b32 a3, v1
    assert split(smfmac + write_a6 + write_a3 + ENDPGM_GFX9, "gfx942") == (1, 1)


def test_accumulator_widths_are_llvms():
    widths = accumulator_widths("gfx90a")
    assert widths["v_mfma_f32_32x32x8f16"] == 16 and widths["v_mfma_f32_32x32x1f32"] == 32
    assert widths["v_mfma_f64_4x4x4f64"] == 2 and widths["v_mfma_f32_4x4x1f32"] == 4
    assert accumulator_widths("gfx942")["v_smfmac_f32_16x16x32_f16"] == 4
    assert "v_mfma_ld_scale_b32" not in accumulator_widths("gfx950")
    assert accumulator_widths("gfx11") == {}


def branch(simm16: int) -> bytes:
    return (simm16 & 0xFFFF).to_bytes(2, "little") + bytes([0x85, 0xbf])      # s_cbranch_scc1


def test_innermost_loops_and_depth():
    slot_store = bytes([0x00, 0x40, 0x70, 0xdc, 0x00, 0x01, 0x03, 0x00])     # scratch_store_dword off, v1, s3
    addressed_load = bytes([0x00, 0x60, 0x50, 0xdc, 0x02, 0x00, 0x7f, 0x01])  # scratch_load_dword v1, v2, off
    code = S_NOP + slot_store + addressed_load + S_NOP + branch(-4) + branch(-7) + S_NOP + branch(-2) + ENDPGM_GFX9
    found = evidence(code, 0, len(code), "gfx942", False)
    assert found.loop_spans == ((12, 24), (4, 28), (32, 36))
    assert (found.loops, found.innermost_loops, found.loop_depth_max) == (3, 2, 2)
    assert (found.scratch_in_loops, found.scratch_in_innermost_loops) == (2, 1)
    assert (found.scratch_slot_store_bytes, found.scratch_addressed_load_bytes) == (4, 4)


def test_nesting_rules():
    def sorted_nesting(spans):
        innermost, depth = nesting(sorted(spans, key=lambda span: span[1]))    # by end, as assemble() lists them
        return sorted(innermost), depth

    assert sorted_nesting([]) == ([], 0)
    assert sorted_nesting([(4, 8)]) == ([(4, 8)], 1)
    # two loops sharing a head: the shorter is inside the longer
    assert sorted_nesting([(8, 16), (8, 24)]) == ([(8, 16)], 2)
    # overlapping, neither inside the other: both innermost; three spans hold offset 10
    assert sorted_nesting([(0, 12), (8, 20), (4, 40)]) == ([(0, 12), (8, 20)], 3)
    # touching end to start: [0, 8] and [8, 16] share the offset 8
    assert sorted_nesting([(0, 8), (8, 16)]) == ([(0, 8), (8, 16)], 2)
    assert sorted_nesting([(0, 4), (8, 16)]) == ([(0, 4), (8, 16)], 1)
    # three deep, and a sibling loop inside the outer one
    assert sorted_nesting([(16, 20), (12, 24), (4, 40), (28, 36)]) == ([(16, 20), (28, 36)], 3)


def test_nesting_equals_its_definition_on_random_spans():
    import random

    rng = random.Random(23)
    for _trial in range(500):
        ends = rng.sample(range(4, 200, 4), rng.randint(2, 9))
        spans = [(4 * rng.randint(0, hi // 4), hi) for hi in sorted(ends)]
        innermost, depth = nesting(spans)
        assert sorted(innermost) == sorted(a for a in spans
                                           if not any(b != a and a[0] <= b[0] and b[1] <= a[1] for b in spans))
        assert depth == max(sum(lo <= at <= hi for lo, hi in spans) for at in range(0, 200, 4))
