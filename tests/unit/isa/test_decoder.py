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


# Issue 31: instructions the tables of 4221669 lacked (GDS, LDS DMA, BVH), the rarely used ones
# beside them (messages, traps, exports, interpolation), and the families added then (gfx11.7:
# gfx1170, gfx13: gfx1310; LLVM 24's llvm-mc).
RARE = [
    ("gfx900", "ds_gws_barrier v1 offset:1 gds", [0x01, 0x00, 0x3b, 0xd9, 0x01, 0x00, 0x00, 0x00], "ds_gws_barrier"),
    ("gfx900", "ds_gws_init v1 gds", [0x00, 0x00, 0x33, 0xd9, 0x01, 0x00, 0x00, 0x00], "ds_gws_init"),
    ("gfx900", "ds_gws_sema_release_all offset:5 gds", [0x05, 0x00, 0x31, 0xd9, 0, 0, 0, 0],
     "ds_gws_sema_release_all"),
    ("gfx900", "ds_ordered_count v1, v1 gds", [0x00, 0x00, 0x7f, 0xd9, 0x01, 0x00, 0x00, 0x01], "ds_ordered_count"),
    ("gfx900", "buffer_store_lds_dword s[4:7], 0 offset:16 lds", [0x10, 0x00, 0xf5, 0xe0, 0x00, 0x00, 0x01, 0x80],
     "buffer_store_lds_dword"),
    ("gfx900", "exp mrt0 off, off, off, off done vm", [0x00, 0x18, 0x00, 0xc4, 0, 0, 0, 0], "exp"),
    ("gfx900", "s_sendmsg sendmsg(MSG_INTERRUPT)", [0x01, 0x00, 0x90, 0xbf], "s_sendmsg"),
    ("gfx900", "s_trap 2", [0x02, 0x00, 0x92, 0xbf], "s_trap"),
    ("gfx900", "v_interp_p1_f32 v1, v1, attr0.x (VINTRP)", [0x01, 0x00, 0x04, 0xd4], "v_interp_p1_f32_e32"),
    # one opcode, two names: gfx900/902/909/90c print v_mad_mix_f32, gfx904/906 v_fma_mix_f32
    ("gfx900", "v_mad_mix_f32 v0, v1, v2, v3", [0x00, 0x00, 0xa0, 0xd3, 0x01, 0x05, 0x0e, 0x04], "v_mad_mix_f32"),
    ("gfx906", "v_fma_mix_f32 v0, v1, v2, v3", [0x00, 0x00, 0xa0, 0xd3, 0x01, 0x05, 0x0e, 0x04], "v_fma_mix_f32"),
    ("gfx90a", "ds_gws_barrier v2 offset:1 gds", [0x01, 0x00, 0x3b, 0xd9, 0x02, 0x00, 0x00, 0x00], "ds_gws_barrier"),
    ("gfx1034", "ds_gws_barrier v0 offset:1 gds", [0x01, 0x00, 0x76, 0xd8, 0, 0, 0, 0], "ds_gws_barrier"),
    ("gfx1034", "image_bvh_intersect_ray v[0:3], v[0:10], s[0:3]", [0x01, 0x9f, 0x98, 0xf1, 0, 0, 0, 0],
     "image_bvh_intersect_ray"),
    ("gfx1013", "image_bvh64_intersect_ray v[0:3], v[0:11], s[0:3]", [0x01, 0x9f, 0x9c, 0xf1, 0, 0, 0, 0],
     "image_bvh64_intersect_ray"),
    ("gfx1100", "ds_add_gs_reg_rtn v[0:1], v0 offset:16 gds", [0x10, 0x00, 0xea, 0xd9, 0, 0, 0, 0],
     "ds_add_gs_reg_rtn"),
    ("gfx1100", "ds_gws_barrier v0 offset:1 gds", [0x01, 0x00, 0x76, 0xd8, 0, 0, 0, 0], "ds_gws_barrier"),
    ("gfx1100", "image_bvh_intersect_ray v[0:3], v[0:10], s[0:3]", [0x80, 0x8f, 0x64, 0xf0, 0, 0, 0, 0],
     "image_bvh_intersect_ray"),
    ("gfx1100", "lds_param_load v2, attr0.x (LDSDIR)", [0x02, 0x00, 0x00, 0xce], "lds_param_load"),
    ("gfx1100", "exp mrt0 off, off, off, off done", [0x00, 0x08, 0x00, 0xf8, 0, 0, 0, 0], "exp"),
    ("gfx1100", "s_sendmsg_rtn_b32 s3, sendmsg(MSG_RTN_GET_DOORBELL)", [0x80, 0x4c, 0x83, 0xbe],
     "s_sendmsg_rtn_b32"),
    ("gfx1201", "export mrt0 off, off, off, off done", [0x00, 0x08, 0x00, 0xf8, 0, 0, 0, 0], "export"),
    ("gfx1201", "ds_param_load v0, attr0.x", [0x00, 0x00, 0x00, 0xce], "ds_param_load"),
    ("gfx1170", "ds_gws_barrier v0 offset:1 gds", [0x01, 0x00, 0x76, 0xd8, 0, 0, 0, 0], "ds_gws_barrier"),
    ("gfx1170", "s_endpgm", [0x00, 0x00, 0xb0, 0xbf], "s_endpgm"),
    ("gfx1170", "v_interp_p10_f32 v2, v0, v0, v0 (VINTERP)", [0x02, 0x00, 0x00, 0xcd, 0x00, 0x01, 0x02, 0x04],
     "v_interp_p10_f32"),
    ("gfx11-7-generic", "s_endpgm", [0x00, 0x00, 0xb0, 0xbf], "s_endpgm"),
    ("gfx1310", "s_endpgm", [0x00, 0x00, 0x81, 0xbf], "s_endpgm"),
    ("gfx1310", "global_load_b32 v0, v[0:1], off (VGLOBAL)",
     [0x7c, 0x00, 0x03, 0xee, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], "global_load_b32"),
    ("gfx1310", "scratch_store_b32 off, v1, s0 offset:8 (VSCRATCH)",
     [0x00, 0x00, 0x07, 0xed, 0x00, 0x00, 0x80, 0x00, 0x00, 0x08, 0x00, 0x00], "scratch_store_b32"),
    ("gfx1310", "export mrt0 off, off, off, off done", [0x00, 0x08, 0x00, 0xf8, 0, 0, 0, 0], "export"),
    ("gfx1310", "ds_param_load v0, attr0.x", [0x00, 0x00, 0x00, 0xce], "ds_param_load"),
    ("gfx1310", "v_dual_mov_b32 v0, v1 :: v_dual_mov_b32 v3, v2 (VOPD)",
     [0x01, 0x01, 0x10, 0xca, 0x02, 0x01, 0x02, 0x00], "v_dual_mov_b32"),
    ("gfx13-generic", "s_sendmsg_rtn_b32 s0, sendmsg(MSG_RTN_GET_DOORBELL)", [0x80, 0x4c, 0x80, 0xbe],
     "s_sendmsg_rtn_b32"),
    # Two 64-bit instructions llvm-objdump prints as one (the scale operands, then the matrix op):
    ("gfx950", "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[8:15], v[16:23], v[0:3], v5, v6",
     [0x00, 0x00, 0xac, 0xd3, 0x05, 0x0d, 0x02, 0x00, 0x00, 0x08, 0xad, 0xd3, 0x08, 0x21, 0x02, 0x04],
     "v_mfma_scale_f32_16x16x128_f8f6f4"),
    ("gfx1250", "v_wmma_scale_f32_16x16x128_f8f6f4 v[32:39], v[0:15], v[16:31], v[32:39], v40, v41 (LLVM 22)",
     [0x00, 0x00, 0x35, 0xcc, 0x28, 0x53, 0x02, 0x04, 0x20, 0x00, 0x33, 0xcc, 0x00, 0x21, 0x82, 0x04],
     "v_wmma_scale_f32_16x16x128_f8f6f4"),
    ("gfx1250", "v_wmma_scale_f32_16x16x128_f8f6f4 v[32:39], v[0:15], v[16:31], v[32:39], v40, v41 (LLVM 24)",
     [0x00, 0x00, 0x35, 0xcc, 0x28, 0x53, 0x02, 0x02, 0x20, 0x00, 0x33, 0xcc, 0x00, 0x21, 0x82, 0x04],
     "v_wmma_scale_f32_16x16x128_f8f6f4"),
]
CASES += RARE


@pytest.mark.parametrize("target,assembly,encoding,mnemonic", CASES, ids=[c[1].split(" (")[0] for c in CASES])
def test_one_instruction(target, assembly, encoding, mnemonic):
    family = load_family(family_of(target))
    code = bytes(encoding)
    found = list(decode(code, 0, len(code), family))
    assert [(i.offset, i.length, i.mnemonic) for i in found] == [(0, len(code), mnemonic)], assembly


def test_a_scale_prefix_alone_is_its_own_instruction():
    """v_mfma_ld_scale_b32 not followed by an MFMA it pairs with: 8 bytes, as objdump prints it."""
    family = load_family(family_of("gfx950"))
    prefix = bytes(RARE[-3][2][:8])
    code = prefix + bytes([0x00, 0x00, 0x80, 0xbf])           # s_nop 0
    assert [(i.length, i.mnemonic) for i in decode(code, 0, len(code), family)] == \
        [(8, "v_mfma_ld_scale_b32"), (4, "s_nop")]
    pair = bytes(RARE[-3][2])
    found = list(decode(pair + pair, 0, 32, family))
    assert [(i.offset, i.length) for i in found] == [(0, 16), (16, 16)]
    assert found[0].bits == int.from_bytes(pair[8:16], "little")     # the MFMA's fields (its registers)


def test_sequence_boundaries():
    """Lengths 8 (literal), 4, 8 (SDWA), 8 (MUBUF), 4 in one stream."""
    code = _bytes(CASES[2][2], CASES[3][2], CASES[4][2], CASES[6][2], CASES[10][2])
    family = load_family("gfx9")
    assert [(i.offset, i.length) for i in decode(code, 0, len(code), family)] == \
        [(0, 8), (8, 4), (12, 8), (20, 8), (28, 4)]


def test_families_of_targets():
    assert family_of("gfx906:sramecc+:xnack-") == "gfx9"
    assert family_of("gfx900:xnack-") == family_of("gfx90c") == "gfx900"
    assert family_of("gfx9-4-generic") == "gfx942"
    assert family_of("gfx941") == "gfx940"
    assert family_of("gfx10-3-generic") == "gfx10.3"
    assert family_of("gfx1151") == "gfx11.5"
    assert family_of("gfx12-generic") == "gfx12"
    assert family_of("gfx1170") == family_of("gfx11-7-generic") == "gfx11.7"
    assert family_of("gfx1310") == family_of("gfx13-generic") == "gfx13"
    assert family_of("gfx1013") == "gfx10.1"
    assert family_of("gfx600") is None and family_of("gfx705") is None


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


def _code_objects():
    from pathlib import Path

    return sorted((Path(__file__).parents[2] / "data" / "isa" / "co").glob("*.co"))


@pytest.mark.parametrize("path", _code_objects(), ids=lambda p: p.name)
def test_a_memo_decodes_as_without_one(path):
    """decode(memo=...) yields the same instructions as without, kernel after
    kernel with one memo, and where a remembered instruction would run past a
    shorter end it is decoded (and refused) again."""
    from spillway.isa.evidence import kernel_ranges

    target = path.name.split(".")[0]
    family = load_family(family_of(target) or "")
    code, ranges = kernel_ranges(path.read_bytes(), functions=True)
    memo: dict = {}

    def listed(start, end, memo=None):
        out = []
        try:
            for instruction in decode(code, start, end, family, memo):
                out.append(instruction)
        except DecodeError as exc:
            out.append((exc.message, exc.offset))
        return out

    for r in ranges:
        assert listed(r.start, r.start + r.size, memo) == listed(r.start, r.start + r.size)
    assert memo, "nothing remembered"
    for r in ranges[:8]:
        for cut in (r.size - 4, r.size - 2, r.size // 2):   # ends inside a remembered long instruction too
            assert listed(r.start, r.start + cut, memo) == listed(r.start, r.start + cut)
