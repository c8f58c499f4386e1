"""spillway.isa.evidence on synthetic kernels (bytes as llvm-mc-22 encodes the
quoted assembly for gfx900 unless said otherwise)."""

from __future__ import annotations

import hashlib

from spillway.isa.evidence import COMPLETE, access_bytes, evidence

S_MOV_B64_10_2 = bytes([0x02, 0x01, 0x8a, 0xbe])        # s_mov_b64 s[10:11], s[2:3]
S_MOV_B64_8_0 = bytes([0x00, 0x01, 0x88, 0xbe])         # s_mov_b64 s[8:9], s[0:1]
S_ADD_U32 = bytes([0x08, 0x07, 0x08, 0x80])             # s_add_u32 s8, s8, s7
S_ADDC_U32 = bytes([0x09, 0x80, 0x09, 0x82])            # s_addc_u32 s9, s9, 0
# buffer_store_dword v5, off, s[8:11], 0 offset:224
STORE_8_11 = bytes([0xe0, 0x00, 0x70, 0xe0, 0x00, 0x05, 0x02, 0x80])
LOAD_8_11 = bytes([0x00, 0x10, 0x50, 0xe0, 0x00, 0x01, 0x02, 0x80])    # buffer_load_dword v1, v0, s[8:11], 0 offen
STORE_X4_0_3 = bytes([0x00, 0x00, 0x7c, 0xe0, 0x00, 0x00, 0x00, 0x80])  # buffer_store_dwordx4 v[0:3], off, s[0:3], 0
LOAD_FORMAT_0_3 = bytes([0x00, 0x00, 0x00, 0xe0, 0x00, 0x01, 0x00, 0x80])  # buffer_load_format_x v1, off, s[0:3], 0
S_LOAD_8_11 = bytes([0x02, 0x02, 0x0a, 0xc0, 0, 0, 0, 0])   # s_load_dwordx4 s[8:11], s[4:5], 0x0
FLAT_LOAD = bytes([0x00, 0x00, 0x50, 0xdc, 0x02, 0x00, 0x00, 0x01])    # flat_load_dword v1, v[2:3]
DS_READ = bytes([0x00, 0x00, 0x6c, 0xd8, 0x02, 0x00, 0x00, 0x01])      # ds_read_b32 v1, v2
SWAPPC = bytes([0x04, 0x1e, 0x9e, 0xbe])                 # s_swappc_b64 s[30:31], s[4:5]
S_NOP = bytes([0x00, 0x00, 0x80, 0xbf])                  # s_nop 0
ENDPGM = bytes([0x00, 0x00, 0x81, 0xbf])                 # s_endpgm


def branch(simm16: int, opcode: int = 0x85) -> bytes:
    """s_cbranch_scc1 (0x85) or s_branch (0x82) with a signed word offset."""
    return (simm16 & 0xFFFF).to_bytes(2, "little") + bytes([opcode, 0xbf])


ENTRY = S_MOV_B64_10_2 + S_MOV_B64_8_0 + S_ADD_U32 + S_ADDC_U32


def test_private_segment_buffer_copied_in_the_entry_block():
    code = ENTRY + STORE_8_11 + LOAD_8_11 + ENDPGM
    found = evidence(code, 0, len(code), "gfx906", True)
    assert found.status == COMPLETE
    assert (found.instructions, found.code_bytes) == (7, len(code))
    assert found.code_sha256 == hashlib.sha256(code).hexdigest()
    assert (found.scratch_stores, found.scratch_store_bytes, found.scratch_loads, found.scratch_load_bytes) == \
        (1, 4, 1, 4)


def test_without_the_descriptor_bit_a_buffer_is_not_scratch():
    code = ENTRY + STORE_8_11 + ENDPGM
    found = evidence(code, 0, len(code), "gfx906", False)
    assert (found.scratch_stores, found.scratch_loads) == (0, 0)


def test_a_load_over_the_copy_ends_it():
    code = ENTRY + S_LOAD_8_11 + STORE_8_11 + ENDPGM
    assert evidence(code, 0, len(code), "gfx900", True).scratch_stores == 0


def test_s0_3_widths_and_unsized_forms():
    code = STORE_X4_0_3 + LOAD_FORMAT_0_3 + ENDPGM
    found = evidence(code, 0, len(code), "gfx900", True)
    assert (found.scratch_stores, found.scratch_store_bytes) == (1, 16)
    assert (found.scratch_loads, found.scratch_load_bytes) == (1, 0)
    assert found.scratch_without_width == (("buffer_load_format_x", 1),)


def test_loops_and_scratch_inside_them():
    # entry (16 B), then at 16: store (8), load (8), branch back to 16, then a store after the loop.
    body = STORE_8_11 + LOAD_8_11
    back = branch(-(len(body) + 4) // 4)
    code = ENTRY + body + back + STORE_8_11 + ENDPGM
    found = evidence(code, 0, len(code), "gfx900", True)
    assert found.status == COMPLETE
    assert found.loops == 1 and found.loop_spans == ((16, 32),)
    assert (found.scratch_loads + found.scratch_stores, found.scratch_in_loops) == (3, 2)


def test_forward_branches_are_not_loops():
    code = branch(1, 0x82) + S_NOP + ENDPGM
    found = evidence(code, 0, len(code), "gfx900", False)
    assert (found.loops, found.status) == (0, COMPLETE)


def test_other_classes():
    code = FLAT_LOAD + DS_READ + DS_READ + SWAPPC + ENDPGM
    found = evidence(code, 0, len(code), "gfx900", False)
    assert (found.flat_ops, found.lds_ops, found.calls, found.scratch_loads) == (1, 2, 1, 0)


def test_agpr_copies_and_matrix_ops():
    write = bytes([0x09, 0x40, 0xd9, 0xd3, 0x03, 0x01, 0x00, 0x18])   # v_accvgpr_write_b32 a9, v3 (gfx90a)
    read = bytes([0x00, 0x40, 0xd8, 0xd3, 0x22, 0x01, 0x00, 0x18])    # v_accvgpr_read_b32 v0, a34
    mfma = bytes([0x00, 0x80, 0xc0, 0xd3, 0x00, 0x03, 0x02, 0x04])    # v_mfma_f32_32x32x1f32
    code = write + write + read + mfma + ENDPGM
    found = evidence(code, 0, len(code), "gfx90a", False)
    assert (found.agpr_writes, found.agpr_reads, found.matrix_ops) == (2, 1, 1)


def test_widths_named_by_mnemonics():
    assert access_bytes("scratch_store_dwordx4") == 16
    assert access_bytes("scratch_load_b96") == 12
    assert access_bytes("scratch_load_short_d16_hi") == 2
    assert access_bytes("scratch_load_d16_hi_u8") == 1
    assert access_bytes("scratch_load_ubyte_d16") == 1
    assert access_bytes("buffer_store_format_xyzw") is None
    assert access_bytes("scratch_load_block") is None


# -- bad input: the status says what and where, the counts cover what was decoded -----------

def test_size_zero():
    assert evidence(ENDPGM, 0, 0, "gfx900", False).status == "size 0"


def test_range_outside_the_section():
    found = evidence(ENDPGM, 4, 8, "gfx900", False)
    assert "outside" in found.status and found.instructions == 0
    assert "outside" in evidence(ENDPGM, -4, 4, "gfx900", False).status


def test_truncated_code_keeps_what_was_decoded():
    code = DS_READ + STORE_8_11[:4]
    found = evidence(code, 0, len(code), "gfx900", False)
    assert found.status == "truncated buffer_store_dword (8 bytes, 4 left) at +0x8"
    assert (found.instructions, found.lds_ops) == (1, 1)


def test_invalid_encoding_says_where():
    code = DS_READ + b"\xff\xff\xff\xff" + ENDPGM
    found = evidence(code, 0, len(code), "gfx900", False)
    assert found.status.startswith("invalid encoding 0xffffffff at +0x8")


def test_branch_out_of_the_kernel():
    code = S_NOP + branch(100) + ENDPGM
    found = evidence(code, 0, len(code), "gfx900", False)
    assert found.status.startswith("branch at +0x4") and "outside" in found.status
    assert found.instructions == 3


def test_branch_onto_itself():
    code = S_NOP + branch(-1, 0x82) + ENDPGM
    found = evidence(code, 0, len(code), "gfx900", False)
    assert found.status == "branch at +0x4 onto itself"
    assert found.loops == 1


def test_branch_into_an_instruction():
    code = branch(1, 0x82) + STORE_8_11 + ENDPGM      # to +0x8, inside the store at +0x4
    found = evidence(code, 0, len(code), "gfx900", False)
    assert "middle of an instruction (+0x8)" in found.status


def test_unknown_target():
    found = evidence(ENDPGM, 0, 4, "gfx600", False)
    assert found.status == "no decoder for target gfx600" and found.code_bytes == 4


def test_never_raises_on_noise():
    """Every 4-byte pattern of a small pseudo-random stream and every cut of it
    gives a status, never an exception."""
    import random

    rng = random.Random(23)
    noise = bytes(rng.getrandbits(8) for _ in range(4096))
    for target in ("gfx803", "gfx906", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1201", "gfx1250"):
        for start in range(0, 256, 4):
            found = evidence(noise, start, 4096 - start - rng.randrange(0, 64), target, True)
            assert isinstance(found.status, str)


def test_kernel_ranges_of_a_fixture():
    """Kernels (with a .kd) by default; callees too when asked, without a descriptor."""
    from pathlib import Path

    from spillway.isa import kernel_ranges

    data = (Path(__file__).resolve().parents[2] / "data" / "isa" / "co" / "gfx906.clang22.co").read_bytes()
    code, kernels = kernel_ranges(data)
    _code, everything = kernel_ranges(data, functions=True)
    assert kernels and all(k.private_segment_buffer is not None for k in kernels)
    callees = [f for f in everything if f.private_segment_buffer is None]
    assert callees and {k.name for k in kernels} < {f.name for f in everything}
    for function in everything:
        assert 0 <= function.start and function.start + function.size <= len(code)
    # entries=False (report --isa): the same ranges, no registers at entry worked out
    assert all(k.entry is not None for k in kernels)
    _code, bare = kernel_ranges(data, entries=False)
    assert [(k.name, k.start, k.size, k.private_segment_buffer) for k in bare] == \
        [(k.name, k.start, k.size, k.private_segment_buffer) for k in kernels]
    assert all(k.entry is None for k in bare)


def test_kernel_ranges_refuses_what_is_not_an_amdgpu_elf():
    import pytest

    from spillway.errors import InputError
    from spillway.isa import kernel_ranges

    with pytest.raises(InputError):
        kernel_ranges(b"\x7fELF" + bytes(60))


def test_kernel_code_makes_the_dataclass_record():
    """evidence.kernel_code (evidence_many's quick constructor) makes the
    record KernelCode(...) makes: equal, hashed alike, the same fields, and
    it refuses a wrong number of values."""
    import dataclasses

    import pytest

    from spillway.isa.evidence import KernelCode, kernel_code

    values = tuple(range(7)) + ((("scratch_load_dword", 2),),) + tuple(range(6)) + (((0, 8), (4, 12)),) \
        + (1, 2, "complete") + tuple(range(9)) + ((1, 2, 3),)
    made, reference = kernel_code(*values), KernelCode(*values)
    assert made == reference and hash(made) == hash(reference) and vars(made) == vars(reference)
    assert dataclasses.astuple(made) == values
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.loops = 3            # type: ignore[misc]
    with pytest.raises(TypeError):
        kernel_code(*values[:-1])
