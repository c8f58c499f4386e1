"""spillway.isa's decoder on small synthetic byte sequences, one or more per
encoding and family.  The bytes are what ``llvm-mc -show-encoding`` (LLVM 22;
LLVM 24 for gfx1200/gfx1250) prints for the assembly quoted beside them."""

from __future__ import annotations

import pytest

from spillway.isa import decoder
from spillway.isa.decoder import DecodeError, decode, family_of, load_family


def _bytes(*encodings: list[int]) -> bytes:
    return b"".join(bytes(e) for e in encodings)


# (target, assembly, encoding, mnemonic objdump prints)
CASES = [
    ("gfx900", "s_mov_b64 s[10:11], s[2:3]", [0x02, 0x01, 0x8a, 0xbe], "s_mov_b64"),
    ("gfx900", "s_add_u32 s8, s8, s7", [0x08, 0x07, 0x08, 0x80], "s_add_u32"),
    ("gfx900", "s_mov_b32 s0, 0x12345678 (SOP1 + literal)", [0xff, 0x00, 0x80, 0xbe, 0x78, 0x56, 0x34, 0x12],
     "s_mov_b32"),
    ("gfx900", "s_cbranch_scc1 -3", [0xfd, 0xff, 0x85, 0xbf], "s_cbranch_scc1"),
    ("gfx900", "v_mov_b32_sdwa v1, v2 (SDWA)", [0xf9, 0x02, 0x02, 0x7e, 0x02, 0x15, 0x00, 0x00], "v_mov_b32_sdwa"),
    ("gfx900", "v_add_f32_dpp v0, v1, v2 (DPP)", [0xfa, 0x04, 0x00, 0x02, 0x01, 0xb1, 0x00, 0xff], "v_add_f32_dpp"),
    ("gfx900", "buffer_store_dword v5, off, s[8:11], 0 offset:224",
     [0xe0, 0x00, 0x70, 0xe0, 0x00, 0x05, 0x02, 0x80], "buffer_store_dword"),
    ("gfx900", "flat_load_dword v1, v[2:3]", [0x00, 0x00, 0x50, 0xdc, 0x02, 0x00, 0x00, 0x01], "flat_load_dword"),
    ("gfx900", "ds_read_b32 v1, v2", [0x00, 0x00, 0x6c, 0xd8, 0x02, 0x00, 0x00, 0x01], "ds_read_b32"),
    ("gfx900", "s_load_dwordx4 s[8:11], s[4:5], 0x0 (SMEM)", [0x02, 0x02, 0x0a, 0xc0, 0, 0, 0, 0], "s_load_dwordx4"),
    ("gfx803", "s_endpgm", [0x00, 0x00, 0x81, 0xbf], "s_endpgm"),
    ("gfx90a", "v_accvgpr_write_b32 a9, v3", [0x09, 0x40, 0xd9, 0xd3, 0x03, 0x01, 0x00, 0x18],
     "v_accvgpr_write_b32"),
    ("gfx90a", "v_mfma_f32_32x32x1f32 a[0:31], v0, v1, a[0:31]", [0x00, 0x80, 0xc0, 0xd3, 0x00, 0x03, 0x02, 0x04],
     "v_mfma_f32_32x32x1f32"),
    ("gfx942", "scratch_store_dword off, v1, s0 offset:8", [0x08, 0x40, 0x70, 0xdc, 0x00, 0x01, 0x00, 0x00],
     "scratch_store_dword"),
    ("gfx1030", "v_add3_u32 v0, v1, 0x1234, v2 (VOP3 + literal)",
     [0x00, 0x00, 0x6d, 0xd7, 0x01, 0xff, 0x09, 0x04, 0x34, 0x12, 0x00, 0x00], "v_add3_u32"),
    ("gfx1030", "v_mov_b32_dpp v0, v1 dpp8:[7,6,5,4,3,2,1,0]", [0xe9, 0x02, 0x00, 0x7e, 0x01, 0x77, 0x39, 0x05],
     "v_mov_b32_dpp"),
    ("gfx1030", "image_sample v[0:3], [v4, v6], ... (MIMG NSA, one extra dword)",
     [0x0a, 0x0f, 0x80, 0xf0, 0x04, 0x00, 0x40, 0x00, 0x06, 0x00, 0x00, 0x00], "image_sample"),
    ("gfx1100", "v_add3_u32_e64_dpp v0, v1, v2, v3 quad_perm:[1,0,3,2] (VOP3 + DPP)",
     [0x00, 0x00, 0x55, 0xd6, 0xfa, 0x04, 0x0e, 0x04, 0x01, 0xb1, 0x00, 0xff], "v_add3_u32_e64_dpp"),
    ("gfx1100", "v_dual_mov_b32 v0, 0x12345678 :: v_dual_mov_b32 v1, v2 (VOPD + literal)",
     [0xff, 0x00, 0x10, 0xca, 0x02, 0x01, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12], "v_dual_mov_b32"),
    ("gfx1151", "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]",
     [0x00, 0x40, 0x40, 0xcc, 0x08, 0x21, 0x02, 0x1c], "v_wmma_f32_16x16x16_f16"),
    ("gfx1100", "scratch_store_b128 off, v[1:4], off offset:212", [0xd4, 0x00, 0x75, 0xdc, 0x00, 0x01, 0x7c, 0x00],
     "scratch_store_b128"),
    ("gfx1201", "global_load_b32 v1, v[2:3], off (VGLOBAL, 96-bit)",
     [0x7c, 0x00, 0x05, 0xee, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00], "global_load_b32"),
    ("gfx1200", "buffer_load_b32 v1, off, s[8:11], null (VBUFFER)",
     [0x7c, 0x00, 0x05, 0xc4, 0x01, 0x10, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00], "buffer_load_b32"),
    ("gfx12-generic", "scratch_load_b32 v1, off, s0 (VSCRATCH)",
     [0x00, 0x00, 0x05, 0xed, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], "scratch_load_b32"),
    ("gfx1250", "s_mov_b64 s[0:1], 0x123456789abc (64-bit literal)",
     [0xfe, 0x01, 0x80, 0xbe, 0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12, 0x00, 0x00], "s_mov_b64"),
    ("gfx1250", "v_dual_add_nc_u32 v2, 2, v2 :: v_dual_mov_b32 v3, v4 (VOPD3)",
     [0x82, 0x80, 0x40, 0xcf, 0x04, 0x01, 0x02, 0x00, 0x02, 0x00, 0x00, 0x03], "v_dual_add_nc_u32"),
]


@pytest.mark.parametrize("target,assembly,encoding,mnemonic", CASES, ids=[c[1].split(" (")[0] for c in CASES])
def test_one_instruction(target, assembly, encoding, mnemonic):
    family = load_family(family_of(target))
    code = bytes(encoding)
    found = list(decode(code, 0, len(code), family))
    assert [(i.offset, i.length, i.mnemonic) for i in found] == [(0, len(code), mnemonic)], assembly


def test_sequence_boundaries():
    """Lengths 8 (literal), 4, 8 (SDWA), 8 (MUBUF), 4 in one stream."""
    code = _bytes(CASES[2][2], CASES[3][2], CASES[4][2], CASES[6][2], CASES[10][2])
    family = load_family("gfx9")
    assert [(i.offset, i.length) for i in decode(code, 0, len(code), family)] == \
        [(0, 8), (8, 4), (12, 8), (20, 8), (28, 4)]


def test_families_of_targets():
    assert family_of("gfx906:sramecc+:xnack-") == "gfx9"
    assert family_of("gfx9-4-generic") == "gfx942"
    assert family_of("gfx941") == "gfx940"
    assert family_of("gfx10-3-generic") == "gfx10.3"
    assert family_of("gfx1151") == "gfx11.5"
    assert family_of("gfx12-generic") == "gfx12"
    assert family_of("gfx600") is None


def test_every_family_loads():
    for name in decoder.encodings.FAMILIES:
        family = load_family(name)
        assert sum(len(table) for entries in family.by_top_byte for _e, table in entries) > 0, name


def test_truncated_literal():
    code = bytes(CASES[2][2][:4])          # s_mov_b32 s0, <literal> without its literal
    with pytest.raises(DecodeError) as stop:
        list(decode(code, 0, 4, load_family("gfx9")))
    assert stop.value.offset == 0 and "truncated" in stop.value.message


def test_truncated_64_bit_encoding():
    code = bytes(CASES[6][2][:4])          # half a MUBUF instruction
    with pytest.raises(DecodeError) as stop:
        list(decode(code, 0, 4, load_family("gfx9")))
    assert "truncated" in stop.value.message


def test_invalid_encoding_says_where():
    code = _bytes(CASES[10][2], [0xff, 0xff, 0xff, 0xff])
    with pytest.raises(DecodeError) as stop:
        list(decode(code, 0, len(code), load_family("gfx9")))
    assert stop.value.offset == 4 and "invalid" in stop.value.message


def test_stray_bytes_at_the_end():
    code = _bytes(CASES[10][2], [0x00, 0x00])
    with pytest.raises(DecodeError) as stop:
        list(decode(code, 0, len(code), load_family("gfx8")))
    assert stop.value.offset == 4
