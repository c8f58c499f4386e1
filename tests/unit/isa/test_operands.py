"""spillway.isa.operands on small words (issue 40 item 1): what each
instruction defines and uses, from the gfx90a operand table.

Each word below is what ``llvm-mc-22 -arch=amdgcn -mcpu=gfx90a
-show-encoding`` assembled from the line next to it (the expectation is the
instruction's meaning as the ISA manual states it); the oracle test
(tests/oracle/test_isa_operands.py) checks whole fixtures against
llvm-objdump."""

from __future__ import annotations

import pytest

from spillway.isa import decoder, operands as isa_operands
from spillway.isa.encodings import LAYOUTS

FAMILY = "gfx90a"

# (assembly, its bytes, defs, uses): registers as "v5", "v[4:5]", "a[0:15]", "s[4:7]"
CASES = [
    ("v_mac_f32_e32 v2, v1, v2", "01 05 04 2c", ["v2"], ["v1", "v2"]),
    ("v_mov_b32_e32 v5, s3", "03 02 0a 7e", ["v5"], ["s3"]),
    ("s_load_dwordx4 s[4:7], s[0:1], 0x10", "00 01 0a c0 10 00 00 00", ["s[4:7]"], ["s[0:1]"]),
    ("global_load_dwordx2 v[4:5], v[0:1], off", "00 80 54 dc 00 00 7f 04", ["v[4:5]"], ["v[0:1]"]),
    ("global_load_dword v4, v0, s[2:3]", "00 80 50 dc 00 00 02 04", ["v4"], ["v0", "s[2:3]"]),
    ("global_atomic_add v3, v[0:1], v2, off glc", "00 80 09 dd 00 02 7f 03", ["v3"], ["v[0:1]", "v2"]),
    ("global_atomic_add v[0:1], v2, off", "00 80 08 dd 00 02 7f 00", [], ["v[0:1]", "v2"]),
    ("global_store_dword v[0:1], a2, off", "00 80 70 dc 00 02 ff 00", [], ["v[0:1]", "a2"]),
    ("v_add_co_u32_e64 v1, s[4:5], v2, v3", "01 04 19 d1 02 07 02 00", ["v1", "s[4:5]"], ["v2", "v3"]),
    ("v_cmp_eq_u32_e64 s[6:7], v1, v2", "06 00 ca d0 01 05 02 00", ["s[6:7]"], ["v1", "v2"]),
    ("v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], a[0:15]", "00 80 cc d3 00 05 02 04",
     ["a[0:15]"], ["v[0:1]", "v[2:3]", "a[0:15]"]),
    ("v_writelane_b32 v7, s1, 3", "07 00 8a d2 01 06 01 00", ["v7"], ["s1", "v7"]),
    ("s_addk_i32 s9, 0x10", "10 00 09 b7", ["s9"], ["s9"]),
    ("v_add_f64 v[0:1], s[2:3], v[4:5]", "00 00 80 d2 02 08 02 00", ["v[0:1]"], ["s[2:3]", "v[4:5]"]),
    ("image_load v[0:2], v4, s[8:15] dmask:0x7", "00 07 00 f0 04 00 02 00", ["v[0:2]"], ["v4", "s[8:15]"]),
    ("buffer_load_dword v1, v2, s[4:7], 0 offen", "00 10 50 e0 02 01 01 80", ["v1"], ["v2", "s[4:7]"]),
]


def _answer(hexbytes: str, family_name: str = FAMILY) -> isa_operands.Operands | None:
    family = decoder.load_family(family_name)
    table = isa_operands.load_operands(family_name)
    assert table is not None
    code = bytes.fromhex(hexbytes)
    instruction = next(decoder.decode(code, 0, len(code), family))
    encoding = next(e for e in LAYOUTS[family.layout] if e.name == instruction.encoding)
    return isa_operands.operands(table, instruction.encoding, encoding.key(instruction.bits), instruction.bits,
                                 instruction.mnemonic)


@pytest.mark.parametrize("line, hexbytes, defs, uses", CASES, ids=[c[0] for c in CASES])
def test_defs_and_uses(line, hexbytes, defs, uses):
    got = _answer(hexbytes)
    assert got is not None, line
    assert sorted(set(map(str, got.defs))) == sorted(defs)
    assert sorted(set(map(str, got.uses))) == sorted(uses)


def test_units_per_file():
    got = _answer("00 80 cc d3 00 05 02 04")     # v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], a[0:15]
    assert got is not None
    assert got.defined("a") == frozenset(range(16))
    assert got.used("v") == frozenset(range(4))
    assert got.used("a") == frozenset(range(16))
    assert got.defined("v") == frozenset() and got.used("s") == frozenset()


def test_special_registers_are_no_operands():
    # v_add_co_u32_e64 v1, vcc, v2, v3: the carry-out in vcc is no numbered SGPR
    got = _answer("01 6a 19 d1 02 07 02 00")
    assert got is not None
    assert [str(r) for r in got.defs] == ["v1"]


def test_dpp_destination_is_used_where_lanes_keep_their_value():
    table = isa_operands.load_operands(FAMILY)
    assert table is not None
    # v_mov_b32_dpp v5, v0 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf: every lane written
    full = isa_operands.operands(table, "VOP1", 1, 0x7E0A02FA | 0xFF00E400 << 32, "v_mov_b32_dpp")
    assert full is not None
    assert [str(r) for r in full.defs] == ["v5"] and [str(r) for r in full.uses] == ["v0"]
    # row_mask:0x0 bank_mask:0x0: the lanes masked off keep v5's old value
    masked = isa_operands.operands(table, "VOP1", 1, 0x7E0A02FA | 0x0000E400 << 32, "v_mov_b32_dpp")
    assert masked is not None
    assert sorted(str(r) for r in masked.uses) == ["v0", "v5"]
    # row_shr:1 without bound_ctrl: the lanes shifted in from outside the row keep theirs
    shifted = isa_operands.operands(table, "VOP1", 1, 0x7E0A02FA | 0xFF011100 << 32, "v_mov_b32_dpp")
    assert shifted is not None and sorted(str(r) for r in shifted.uses) == ["v0", "v5"]


# true16 (GFX11 and later): llvm-mc-22 -mcpu=gfx1151 -show-encoding.  A half is its VGPR; a half
# written keeps the other half, so the destination is used as well.
TRUE16 = [
    ("v_mov_b16_e32 v1.h, v1.h", "81 39 02 7f", ["v1"], ["v1"]),
    ("v_mov_b16_e32 v1.l, s5", "05 38 02 7e", ["v1"], ["s5", "v1"]),
    ("v_mov_b16_e32 v127.h, v126.l", "7e 39 fe 7f", ["v127"], ["v126", "v127"]),
    ("v_mul_lo_u16 v1.h, v5.l, v1.h op_sel:[0,1,1]", "01 50 05 d7 05 03 02 00", ["v1"], ["v1", "v5"]),
    ("v_cmp_f_f16_e32 vcc_lo, v1.l, v1.h", "01 03 01 7c", [], ["v1"]),
    ("v_mov_b16_dpp v1.h, v2.h quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
     "fa 38 02 7f 82 e4 00 ff", ["v1"], ["v1", "v2"]),
]


@pytest.mark.parametrize("line, hexbytes, defs, uses", TRUE16, ids=[c[0] for c in TRUE16])
def test_true16_halves(line, hexbytes, defs, uses):
    got = _answer(hexbytes, "gfx11.5")
    assert got is not None, line
    assert sorted(set(map(str, got.defs))) == sorted(defs)
    assert sorted(set(map(str, got.uses))) == sorted(uses)


def test_scaled_mfma_pair_reads_both_halves():
    """gfx950's v_mfma_ld_scale_b32 and the MFMA after it are one
    instruction to LLVM (v_mfma_scale_*): the scales (v5, v6) are the
    first's sources, the matrices the second's (bytes from
    tests/data/isa/rare: llvm-objdump-22 prints
    ``v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[8:15], v[16:23], v[0:3], v5, v6``)."""
    code = bytes.fromhex("0000acd3050d0200 0008add308210204".replace(" ", ""))
    family = decoder.load_family("gfx950")
    table = isa_operands.load_operands("gfx950")
    assert table is not None
    instruction = next(decoder.decode(code, 0, len(code), family))
    assert instruction.length == 16
    got = isa_operands.instruction_operands(table, code, instruction)
    assert got is not None
    assert got.defined("v") == frozenset(range(4))
    assert got.used("v") == frozenset(range(4)) | {5, 6} | frozenset(range(8, 24))


def test_no_answer_for_the_vgpr_msb_state():
    """gfx1250's s_set_vgpr_msb 1 (llvm-mc-24 -mcpu=gfx1250: 01 00 86 bf)
    makes the VGPR fields after it name v256 and up; not modelled, so it
    gets no answer (the caller counts the code as partial)."""
    code = bytes.fromhex("010086bf")
    family = decoder.load_family("gfx1250")
    table = isa_operands.load_operands("gfx1250")
    assert table is not None
    instruction = next(decoder.decode(code, 0, len(code), family))
    assert instruction.mnemonic == "s_set_vgpr_msb"
    assert isa_operands.instruction_operands(table, code, instruction) is None


def test_no_answer_for_unknown_rows():
    table = isa_operands.load_operands(FAMILY)
    assert table is not None
    assert isa_operands.operands(table, "VOP1", 255, 0, "") is None
    assert isa_operands.load_operands("no-such-family") is None


def _operand_families() -> list[str]:
    from pathlib import Path
    folder = Path(isa_operands.__file__).parent / "tables" / "operands"
    return sorted(p.stem for p in folder.glob("*.json"))


@pytest.mark.parametrize("family", _operand_families())
def test_operand_rows_are_rows_of_the_opcode_table(family):
    """An operand table belongs to its family's opcode table: every row it
    describes exists there, and the rows it counts are that table's (a
    regenerated opcode table wants its operand table regenerated)."""
    import json
    from pathlib import Path
    folder = Path(isa_operands.__file__).parent / "tables"
    opcodes = json.loads((folder / f"{family}.json").read_text())["encodings"]
    data = json.loads((folder / "operands" / f"{family}.json").read_text())
    for encoding, rows in data["encodings"].items():
        assert set(rows) <= set(opcodes[encoding]), encoding
    assert data["coverage"]["rows"] == sum(len(rows) for rows in opcodes.values())
    assert data["coverage"]["with_operands"] == sum(len(rows) for rows in data["encodings"].values())
    assert isa_operands.load_operands(family) is not None


def test_flat_family_d16_loads_keep_the_other_half():
    """LLVM's disassembler gives FLAT/global/scratch D16 loads no tied input (it does MUBUF's): the rule in
    operands() makes their destination used as well; a plain load's is not."""
    from spillway.isa.decoder import decode, load_family
    from spillway.isa.operands import instruction_operands, load_operands
    # global_load_short_d16 v1, v[2:3], off; global_load_dword v5, v[2:3], off (gfx90a, llvm-mc-22)
    code = bytes([0x00, 0x80, 0x90, 0xdc, 0x02, 0x00, 0x7f, 0x01, 0x00, 0x80, 0x50, 0xdc, 0x02, 0x00, 0x7f, 0x05])
    table = load_operands("gfx90a")
    assert table is not None
    short, dword = (instruction_operands(table, code, i) for i in decode(code, 0, len(code), load_family("gfx90a")))
    assert short is not None and dword is not None
    assert short.defined("v") == {1} and short.used("v") == {1, 2, 3}
    assert dword.defined("v") == {5} and dword.used("v") == {2, 3}


def _read(hexbytes: str, family_name: str) -> isa_operands.Operands | None:
    """instruction_operands() of the first instruction in ``hexbytes`` (its
    extra dwords read from the code, as isa.liveness reads them)."""
    family = decoder.load_family(family_name)
    table = isa_operands.load_operands(family_name)
    assert table is not None
    code = bytes.fromhex(hexbytes)
    instruction = next(decoder.decode(code, 0, len(code), family))
    assert instruction.length == len(code)
    return isa_operands.instruction_operands(table, code, instruction)


# Forms whose registers sit in extra dwords (issue 40 item 1): (family, assembly, its bytes from
# llvm-mc-22 -show-encoding -mcpu=<the family's processor: gfx1151, gfx906, gfx1030, gfx1100>, defs, uses).
EXTRA_DWORDS = [
    # VOP3 with a DPP16 dword: src0 is the dword's low byte; the VGPR destination is used too where a
    # row/bank mask or a shift without bound_ctrl leaves lanes unwritten; DPP8 writes every lane
    ("gfx11.5", "v_add_f32_e64_dpp v0, v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
     "000003d5fa04020001b100ff", ["v0"], ["v1", "v2"]),
    ("gfx11.5", "v_add_f32_e64_dpp v3, v1, v2 row_shl:1 row_mask:0x5 bank_mask:0xf",
     "030003d5fa0402000101015f", ["v3"], ["v1", "v2", "v3"]),
    ("gfx11.5", "v_add_f32_e64_dpp v3, v1, v2 row_shl:1 row_mask:0xf bank_mask:0xf",
     "030003d5fa040200010101ff", ["v3"], ["v1", "v2", "v3"]),
    ("gfx11.5", "v_add_f32_e64_dpp v3, v1, v2 row_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:1",
     "030003d5fa040200010109ff", ["v3"], ["v1", "v2"]),
    ("gfx11.5", "v_add_f32_e64_dpp v4, v5, v6 dpp8:[7,6,5,4,3,2,1,0]", "040003d5e90c020005773905",
     ["v4"], ["v5", "v6"]),
    ("gfx11.5", "v_add_f32_e64_dpp v0, v1, s2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
     "000003d5fa04000001b100ff", ["v0"], ["s2", "v1"]),
    # a compare's SGPR result and a carry-out are written whole, whatever the masks
    ("gfx11.5", "v_cmp_lt_f32_e64_dpp s4, v1, v2 quad_perm:[1,0,3,2] row_mask:0x3 bank_mask:0xf",
     "040011d4fa04020001b1003f", ["s4"], ["v1", "v2"]),
    ("gfx11.5", "v_add_co_u32_e64_dpp v1, s6, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
     "010600d7fa06020002b100ff", ["s6", "v1"], ["v2", "v3"]),
    ("gfx11.5", "v_fma_mix_f32_e64_dpp v0, v1, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf (VOP3P)",
     "000020ccfa040e0401b100ff", ["v0"], ["v1", "v2", "v3"]),
    ("gfx11.5", "v_add_f16_e64_dpp v1.h, v2.h, v3.l op_sel:[1,0,1] quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
     "014832d5fa06020002b100ff", ["v1"], ["v1", "v2", "v3"]),
    # SDWA compares with SD set: the SGPR in the sdst field, as wide as the VOP3 compare's; vcc, ttmp: none
    ("gfx9", "v_cmp_eq_u32_sdwa s[4:5], v1, v2 src0_sel:WORD_1 src1_sel:DWORD", "f904947d01840506",
     ["s[4:5]"], ["v1", "v2"]),
    ("gfx9", "v_cmp_eq_u32_sdwa vcc, v1, v2 src0_sel:WORD_1 src1_sel:DWORD", "f904947d01000506", [], ["v1", "v2"]),
    ("gfx9", "v_cmp_lt_f32_sdwa s[10:11], s1, v2 src0_sel:DWORD src1_sel:BYTE_0", "f904827c018a8600",
     ["s[10:11]"], ["s1", "v2"]),
    ("gfx9", "v_cmpx_eq_u32_sdwa s[6:7], v1, v2 src0_sel:WORD_1 src1_sel:DWORD", "f904b47d01860506",
     ["s[6:7]"], ["v1", "v2"]),
    ("gfx9", "v_cmp_eq_u32_sdwa ttmp[0:1], v1, v2 src0_sel:WORD_1 src1_sel:DWORD", "f904947d01ec0506",
     [], ["v1", "v2"]),
    ("gfx10.3", "v_cmp_eq_u32_sdwa s4, v1, v2 src0_sel:WORD_1 src1_sel:DWORD", "f904847d01840506",
     ["s4"], ["v1", "v2"]),
    ("gfx10.3", "v_cmp_class_f32_sdwa s8, v3, v4 src0_sel:WORD_1 src1_sel:DWORD", "f908107d03880506",
     ["s8"], ["v3", "v4"]),
    ("gfx10.3", "v_cmpx_eq_u32_sdwa v1, v2 src0_sel:WORD_1 src1_sel:DWORD (exec only)", "f904a47d01000506",
     [], ["v1", "v2"]),
    # MIMG NSA: the first address in vaddr, one byte each after the 64 bits; GFX11's fifth a tuple of the rest
    ("gfx10.3", "image_sample_d v[0:3], [v4, v5, v6, v7, v9, v8], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_2D",
     "0c0f88f0040040000506070908000000", ["v[0:3]"], ["v4", "v5", "v6", "v7", "v8", "v9", "s[0:7]", "s[8:11]"]),
    ("gfx11", "image_sample_d v[0:3], [v4, v9, v6, v1, v[10:14]], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_3D",
     "090f70f004000008090601 0a", ["v[0:3]"], ["v1", "v4", "v6", "v9", "v[10:14]", "s[0:7]", "s[8:11]"]),
]


@pytest.mark.parametrize("family, line, hexbytes, defs, uses", EXTRA_DWORDS, ids=[c[1] for c in EXTRA_DWORDS])
def test_forms_with_extra_dwords(family, line, hexbytes, defs, uses):
    got = _read(hexbytes.replace(" ", ""), family)
    assert got is not None, line
    assert sorted(set(map(str, got.defs))) == sorted(defs)
    assert sorted(set(map(str, got.uses))) == sorted(uses)


def test_no_answer_for_an_a16_nsa_address_list_the_table_cannot_count():
    """image_load v[0:3], [v4, v6], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_3D a16 (gfx1100): two addresses for
    three 16-bit coordinates; the row's address width was probed without A16 changing it (1D), so
    how many bytes name addresses is not known: no answer, the kernel counted partial."""
    assert _read("090f01f0040000000600 0000".replace(" ", ""), "gfx11") is None
