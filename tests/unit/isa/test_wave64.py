"""Wave64 lane masks on GFX10 and later (spillway.isa.operands with the
wave size, isa.liveness passing each kernel's): the same bytes name one
SGPR in wave32 and an SGPR pair in wave64.

Each word below is what ``llvm-mc-22 -triple=amdgcn-amd-amdhsa -mcpu=CPU
-mattr=+wavefrontsize64 -show-encoding`` assembled from the line next to
it; without the attribute llvm-mc disassembles the same word with s4 for
s[4:5] (``echo 0x04,0x00,0xc2,0xd4,0x00,0x03,0x02,0x00 | llvm-mc-22
--disassemble -mcpu=gfx1030``: ``v_cmp_eq_u32_e64 s4, v0, v1``)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from spillway.formats.codeobject import descriptor_wavefront_size
from spillway.isa import decoder, operands as isa_operands
from spillway.isa.evidence import kernel_ranges
from spillway.isa.liveness import PressureMemo, each_kernel_pressure, kernel_pressure

WAVE64 = Path(__file__).resolve().parents[2] / "data" / "isa" / "wave64" / "co"

# (cpu, wave64 assembly, its bytes, wave64 defs, wave64 uses, wave32 defs, wave32 uses)
CASES = [
    ("gfx1030", "v_cmp_eq_u32_e64 s[4:5], v0, v1", "04 00 c2 d4 00 03 02 00",
     ["s[4:5]"], ["v0", "v1"], ["s4"], ["v0", "v1"]),
    ("gfx1030", "v_cndmask_b32_e64 v0, v1, v2, s[6:7]", "00 00 01 d5 01 05 1a 00",
     ["v0"], ["v1", "v2", "s[6:7]"], ["v0"], ["v1", "v2", "s6"]),
    ("gfx1030", "v_add_co_u32 v0, s[8:9], v1, v2", "00 08 0f d7 01 05 02 00",
     ["v0", "s[8:9]"], ["v1", "v2"], ["v0", "s8"], ["v1", "v2"]),
    ("gfx1030", "v_add_co_ci_u32_e64 v3, s[10:11], v4, v5, s[8:9]", "03 0a 28 d5 04 0b 22 00",
     ["v3", "s[10:11]"], ["v4", "v5", "s[8:9]"], ["v3", "s10"], ["v4", "v5", "s8"]),
    # the field holding 5: LLVM reads the pair s[4:5] in wave64 (its low bit cleared), s5 in wave32
    ("gfx1030", "v_cmp_eq_u32_e64 s[4:5], v0, v1 (field 5)", "05 00 c2 d4 00 03 02 00",
     ["s[4:5]"], ["v0", "v1"], ["s5"], ["v0", "v1"]),
    ("gfx1100", "v_cmp_eq_u32_e64 s[4:5], v0, v1", "04 00 4a d4 00 03 02 00",
     ["s[4:5]"], ["v0", "v1"], ["s4"], ["v0", "v1"]),
    ("gfx1100", "v_add_co_ci_u32_e64 v3, s[10:11], v4, v5, s[8:9]", "03 0a 20 d5 04 0b 22 00",
     ["v3", "s[10:11]"], ["v4", "v5", "s[8:9]"], ["v3", "s10"], ["v4", "v5", "s8"]),
    ("gfx1200", "v_cndmask_b32_e64 v0, v1, v2, s[6:7]", "00 00 01 d5 01 05 1a 00",
     ["v0"], ["v1", "v2", "s[6:7]"], ["v0"], ["v1", "v2", "s6"]),
    ("gfx1200", "v_add_co_u32 v0, s[8:9], v1, v2", "00 08 00 d7 01 05 02 00",
     ["v0", "s[8:9]"], ["v1", "v2"], ["v0", "s8"], ["v1", "v2"]),
]


def _read(hexbytes: str, cpu: str, wavefront_size: int) -> isa_operands.Operands:
    name = decoder.family_of(cpu)
    assert name
    table = isa_operands.load_operands(name, wavefront_size)
    assert table is not None and table.wavefront_size == wavefront_size
    code = bytes.fromhex(hexbytes)
    instruction = next(decoder.decode(code, 0, len(code), decoder.load_family(name)))
    got = isa_operands.instruction_operands(table, code, instruction)
    assert got is not None
    return got


@pytest.mark.parametrize("cpu, line, hexbytes, defs64, uses64, defs32, uses32", CASES,
                         ids=[f"{c[0]} {c[1]}" for c in CASES])
def test_lane_masks_are_pairs_in_wave64_only(cpu, line, hexbytes, defs64, uses64, defs32, uses32):
    wave64 = _read(hexbytes, cpu, 64)
    assert sorted(map(str, wave64.defs)) == sorted(defs64), line
    assert sorted(map(str, wave64.uses)) == sorted(uses64), line
    wave32 = _read(hexbytes, cpu, 32)
    assert sorted(map(str, wave32.defs)) == sorted(defs32), line
    assert sorted(map(str, wave32.uses)) == sorted(uses32), line


def test_the_default_is_wave32_and_other_sizes_are_refused():
    assert isa_operands.load_operands("gfx10.3") is isa_operands.load_operands("gfx10.3", 32)
    assert isa_operands.load_operands("gfx10.3", 64) is not isa_operands.load_operands("gfx10.3", 32)
    with pytest.raises(ValueError, match="neither 32 nor 64"):
        isa_operands.load_operands("gfx10.3", 16)


def test_gfx9_reads_pairs_in_either_size():
    # gfx9 is wave64 only: its rows hold the pair already, no wave64 width
    hexbytes = "06 00 ca d0 01 05 02 00"               # v_cmp_eq_u32_e64 s[6:7], v1, v2 (gfx90a)
    for size in (32, 64):
        assert [str(r) for r in _read(hexbytes, "gfx90a", size).defs] == ["s[6:7]"]


def test_descriptor_says_the_wave_size():
    descriptor = bytearray(64)
    assert descriptor_wavefront_size(descriptor) == 64
    struct.pack_into("<H", descriptor, 56, 1 << 10 | 1)     # ENABLE_WAVEFRONT_SIZE32, private segment buffer
    assert descriptor_wavefront_size(descriptor) == 32


LANE_MASKS = ("v_cmp_", "v_cndmask_b32_e64", "v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_add_co_ci_u32",
              "v_sub_co_ci_u32", "v_subrev_co_ci_u32")


def _lane_mask_widths(steps) -> set[int]:
    """The widths of the numbered SGPRs the lane-mask instructions write
    (a compare's result, a carry out; their sources may be 32-bit SGPR values)."""
    return {r.count for step in steps if step.mnemonic.startswith(LANE_MASKS) and step.operands is not None
            for r in step.operands.defs if r.file == "s"}


@pytest.mark.parametrize("target", ["gfx1030", "gfx1100", "gfx1200"])
def test_kernels_carry_their_wave_size_and_liveness_reads_it(target):
    for wave in (64, 32):
        code, ranges = kernel_ranges((WAVE64 / f"{target}.clang22.wave{wave}.co").read_bytes())
        assert ranges and {r.wavefront_size for r in ranges} == {wave}
        read = each_kernel_pressure(code, ranges, target, steps=True)
        assert all(p is not None and p.complete for p in read)
        # each_kernel_pressure reads each kernel in its own wave size: pairs in wave64, one SGPR in wave32
        assert _lane_mask_widths(s for p in read if p for s in p.steps) == {2 if wave == 64 else 1}
        if wave == 64:
            # the same wave64 code read as wave32 gets other live SGPRs (a pair's high register missed)
            as_wave32 = [kernel_pressure(code, r.start, r.size, target, r.entry, steps=True) for r in ranges]
            assert [[s.sgprs for s in p.steps] for p in as_wave32] != [[s.sgprs for s in p.steps]
                                                                       for p in read if p]


def test_one_memo_across_wave_sizes_reads_each_anew():
    code, ranges = kernel_ranges((WAVE64 / "gfx1030.clang22.wave64.co").read_bytes())
    kernel = ranges[0]
    memo = PressureMemo()
    first = kernel_pressure(code, kernel.start, kernel.size, "gfx1030", kernel.entry, memo=memo, steps=True,
                           wavefront_size=32)
    second = kernel_pressure(code, kernel.start, kernel.size, "gfx1030", kernel.entry, memo=memo, steps=True,
                            wavefront_size=64)
    alone = kernel_pressure(code, kernel.start, kernel.size, "gfx1030", kernel.entry, steps=True, wavefront_size=64)
    assert second == alone and first != second
