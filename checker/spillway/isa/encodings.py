"""Where each AMDGPU instruction encoding sits in the first dwords, per family.

Facts from the ISA manuals' encoding chapters, checked with ``llvm-mc-22
-show-encoding``: the bits that select an encoding, the bits that select the
opcode inside it, and the operand fields whose value changes the length
(literal markers, DPP/SDWA markers in src0, the MIMG NSA field).  What each
opcode is and how long it is comes from ``tables/<family>.json``, written by
``scripts/generate-isa-tables.py`` from LLVM's own disassembler.

Bit positions count in the 64-bit little-endian value ``dword0 | dword1 << 32``.
"""

from __future__ import annotations

from dataclasses import dataclass

# Values of a 9-bit VOP source (or an 8-bit SALU source) that add dwords.
LITERAL32 = 0xFF
LITERAL64 = 0xFE          # gfx1250: a 64-bit literal follows
SDWA = 0xF9
DPP16 = 0xFA
DPP8 = 0xE9
DPP8_FI = 0xEA


@dataclass(frozen=True)
class Encoding:
    name: str
    mask: int                             # on dword0
    value: int
    opcode: tuple[tuple[int, int], ...]   # (shift, width) fields concatenated, first lowest
    key_words: int = 1                    # dwords read to find the opcode
    literal_slots: tuple[tuple[int, int], ...] = ()   # (shift, width) of sources that may hold 0xFF/0xFE
    aux: tuple[int, int, tuple[int, ...]] | None = None   # (shift, width, probed values)
    fill: tuple[tuple[int, int, int], ...] = ()       # generator: (shift, width, value) of a plain operand

    def matches(self, dword0: int) -> bool:
        return dword0 & self.mask == self.value

    def key(self, bits: int) -> int:
        key = 0
        at = 0
        for shift, width in self.opcode:
            key |= ((bits >> shift) & ((1 << width) - 1)) << at
            at += width
        return key


_V0 = 0x100                     # v0 as a 9-bit source
_SALU = (
    Encoding("SOP1", 0xFF800000, 0xBE800000, ((8, 8),), literal_slots=((0, 8),)),
    Encoding("SOPC", 0xFF800000, 0xBF000000, ((16, 7),), literal_slots=((0, 8), (8, 8))),
    Encoding("SOPP", 0xFF800000, 0xBF800000, ((16, 7),)),
    Encoding("SOPK", 0xF0000000, 0xB0000000, ((23, 5),)),
    Encoding("SOP2", 0xC0000000, 0x80000000, ((23, 7),), literal_slots=((0, 8), (8, 8))),
)


def _vop(markers: tuple[int, ...]) -> tuple[Encoding, ...]:
    src0 = ((0, 9),)
    aux = (0, 9, markers) if markers else None
    fill = ((0, 9, _V0),)
    return (
        Encoding("VOPC", 0xFE000000, 0x7C000000, ((17, 8),), literal_slots=src0, aux=aux, fill=fill),
        Encoding("VOP1", 0xFE000000, 0x7E000000, ((9, 8),), literal_slots=src0, aux=aux, fill=fill),
        Encoding("VOP2", 0x80000000, 0x00000000, ((25, 6),), literal_slots=src0, aux=aux, fill=fill),
    )


_VOP3_SRCS = ((32, 9), (41, 9), (50, 9))
_VOP3_FILL = ((32, 9, _V0), (41, 9, _V0), (50, 9, _V0))

# GFX8 and GFX9 (VOP3P is VOP3's opcode range 0x380-0x3FF there).
GFX9 = _SALU + _vop((SDWA, DPP16)) + (
    Encoding("SMEM", 0xFC000000, 0xC0000000, ((18, 8),)),
    Encoding("EXP", 0xFC000000, 0xC4000000, ()),
    # No literals in GFX8/9 VOP3 (LLVM 22 crashes on a 0xFF source there: not probed).
    Encoding("VOP3", 0xFC000000, 0xD0000000, ((16, 10),), 2, fill=_VOP3_FILL),
    Encoding("VINTRP", 0xFC000000, 0xD4000000, ((16, 2),)),
    Encoding("DS", 0xFC000000, 0xD8000000, ((17, 8),)),
    Encoding("FLAT", 0xFC000000, 0xDC000000, ((18, 7), (14, 2))),
    Encoding("MUBUF", 0xFC000000, 0xE0000000, ((18, 7),)),
    Encoding("MTBUF", 0xFC000000, 0xE8000000, ((15, 4),)),
    Encoding("MIMG", 0xFC000000, 0xF0000000, ((18, 7),), fill=((8, 4, 1),)),
)

GFX10 = _SALU + _vop((SDWA, DPP16, DPP8, DPP8_FI)) + (
    Encoding("VINTRP", 0xFC000000, 0xC8000000, ((16, 2),)),
    Encoding("VOP3P", 0xFF800000, 0xCC000000, ((16, 7),), 2, _VOP3_SRCS, fill=_VOP3_FILL),
    Encoding("VOP3", 0xFC000000, 0xD4000000, ((16, 10),), 2, _VOP3_SRCS, fill=_VOP3_FILL),
    Encoding("DS", 0xFC000000, 0xD8000000, ((18, 8),)),
    Encoding("FLAT", 0xFC000000, 0xDC000000, ((18, 7), (14, 2))),
    Encoding("MUBUF", 0xFC000000, 0xE0000000, ((18, 8),)),
    Encoding("MTBUF", 0xFC000000, 0xE8000000, ((16, 3), (53, 1)), 2),
    Encoding("MIMG", 0xFC000000, 0xF0000000, ((18, 7), (0, 1)), aux=(1, 2, (0, 1, 2, 3)), fill=((8, 4, 1),)),
    Encoding("SMEM", 0xFC000000, 0xF4000000, ((18, 8),)),
    Encoding("EXP", 0xFC000000, 0xF8000000, ()),
)

_VOP3_DPP = (32, 9, (DPP16, DPP8, DPP8_FI))
_VOPD = Encoding("VOPD", 0xFC000000, 0xC8000000, ((22, 4), (17, 5)), 1, ((0, 9), (32, 9)),
                 fill=((0, 9, _V0), (32, 9, _V0)))
_GFX11_VALU = _vop((DPP16, DPP8, DPP8_FI)) + (
    _VOPD,
    Encoding("VOP3P", 0xFF000000, 0xCC000000, ((16, 7),), 2, _VOP3_SRCS, _VOP3_DPP, _VOP3_FILL),
    Encoding("VINTERP", 0xFF000000, 0xCD000000, ((16, 7),), fill=((32, 9, _V0), (41, 9, _V0), (50, 9, _V0))),
    Encoding("LDSDIR", 0xFF000000, 0xCE000000, ((20, 2),)),
    Encoding("VOP3", 0xFC000000, 0xD4000000, ((16, 10),), 2, _VOP3_SRCS, _VOP3_DPP, _VOP3_FILL),
)

GFX11 = _SALU + _GFX11_VALU + (
    Encoding("DS", 0xFC000000, 0xD8000000, ((18, 8),)),
    Encoding("FLAT", 0xFC000000, 0xDC000000, ((18, 7), (16, 2))),
    Encoding("MUBUF", 0xFC000000, 0xE0000000, ((18, 8),)),
    Encoding("MTBUF", 0xFC000000, 0xE8000000, ((15, 4),)),
    Encoding("MIMG", 0xFC000000, 0xF0000000, ((18, 8),), aux=(0, 1, (0, 1)), fill=((8, 4, 1),)),
    Encoding("SMEM", 0xFC000000, 0xF4000000, ((18, 8),)),
    Encoding("EXP", 0xFC000000, 0xF8000000, ()),
)

# GFX12 and gfx1250: memory instructions are 96-bit (VBUFFER, VIMAGE, VSAMPLE, VFLAT/VSCRATCH/VGLOBAL).
GFX12 = _SALU + _GFX11_VALU + (
    Encoding("VBUFFER", 0xFC000000, 0xC4000000, ((14, 8),)),
    # (the generator probes images with dmask 1, bits 22-25: the assembler refuses an atomic with none)
    Encoding("VIMAGE", 0xFC000000, 0xD0000000, ((14, 8),), fill=((22, 4, 1),)),
    Encoding("DS", 0xFC000000, 0xD8000000, ((18, 8),)),
    Encoding("VSAMPLE", 0xFC000000, 0xE4000000, ((14, 8),), fill=((22, 4, 1),)),
    Encoding("VFLAT", 0xFF000000, 0xEC000000, ((14, 8),)),
    Encoding("VSCRATCH", 0xFF000000, 0xED000000, ((14, 8),)),
    Encoding("VGLOBAL", 0xFF000000, 0xEE000000, ((14, 8),)),
    Encoding("SMEM", 0xFC000000, 0xF4000000, ((13, 6),)),
    Encoding("EXP", 0xFC000000, 0xF8000000, ()),
)

# gfx1250 adds VOPD3 (96-bit dual issue, prefix 0xCF): opX bits [23:18], opY [17:12].
GFX1250 = GFX12 + (
    Encoding("VOPD3", 0xFF000000, 0xCF000000, ((18, 6), (12, 6)), 1, ((0, 9), (32, 9)),
             fill=((0, 9, _V0), (32, 9, _V0 + 1))),
)

LAYOUTS = {"gfx9": GFX9, "gfx10": GFX10, "gfx11": GFX11, "gfx12": GFX12, "gfx1250": GFX1250}

# Table family -> (layout, processors probed ("+": the union of their opcodes), LLVM major that knows them).
FAMILIES = {
    "gfx8": ("gfx9", "gfx803", 22),
    # gfx900/902/909/90c: gfx906's opcodes less dot and fmac, and v_mad_mix* where gfx904/906 have v_fma_mix*
    "gfx900": ("gfx9", "gfx900", 22),
    "gfx9": ("gfx9", "gfx906", 22),      # gfx906 (dot, fmac) holds gfx904's opcodes
    "gfx908": ("gfx9", "gfx908", 22),
    "gfx90a": ("gfx9", "gfx90a", 22),
    "gfx940": ("gfx9", "gfx940", 19),
    "gfx942": ("gfx9", "gfx942", 22),
    "gfx950": ("gfx9", "gfx950", 22),
    "gfx10.1": ("gfx10", "gfx1012+gfx1013", 22),  # gfx1011/1012's dot opcodes, gfx1013's BVH and MSAA loads
    "gfx10.3": ("gfx10", "gfx1030", 22),
    "gfx11": ("gfx11", "gfx1100", 22),
    "gfx11.5": ("gfx11", "gfx1150", 22),
    "gfx1154": ("gfx11", "gfx1154", 24),   # not gfx11.5's opcodes (v_med3_f32 elsewhere), unknown to LLVM 22
    "gfx11.7": ("gfx11", "gfx1170", 24),
    "gfx12": ("gfx12", "gfx1200", 24),
    "gfx1250": ("gfx1250", "gfx1250+gfx1251", 24),   # gfx1251 adds packed 64-bit math and v_wmma_f64
    "gfx13": ("gfx1250", "gfx1310", 24),
}

# Processor (or generic target) -> table family.
PROCESSOR_FAMILY = {
    "gfx801": "gfx8", "gfx802": "gfx8", "gfx803": "gfx8", "gfx805": "gfx8", "gfx810": "gfx8",
    "gfx900": "gfx900", "gfx902": "gfx900", "gfx909": "gfx900", "gfx90c": "gfx900",
    "gfx904": "gfx9", "gfx906": "gfx9", "gfx9-generic": "gfx9",
    "gfx908": "gfx908", "gfx90a": "gfx90a",
    "gfx940": "gfx940", "gfx941": "gfx940", "gfx942": "gfx942", "gfx9-4-generic": "gfx942",
    "gfx950": "gfx950",
    "gfx1010": "gfx10.1", "gfx1011": "gfx10.1", "gfx1012": "gfx10.1", "gfx1013": "gfx10.1",
    "gfx10-1-generic": "gfx10.1",
    "gfx1030": "gfx10.3", "gfx1031": "gfx10.3", "gfx1032": "gfx10.3", "gfx1033": "gfx10.3",
    "gfx1034": "gfx10.3", "gfx1035": "gfx10.3", "gfx1036": "gfx10.3", "gfx10-3-generic": "gfx10.3",
    "gfx1100": "gfx11", "gfx1101": "gfx11", "gfx1102": "gfx11", "gfx1103": "gfx11",
    "gfx11-generic": "gfx11",
    "gfx1150": "gfx11.5", "gfx1151": "gfx11.5", "gfx1152": "gfx11.5", "gfx1153": "gfx11.5",
    "gfx1154": "gfx1154", "gfx1170": "gfx11.7", "gfx1171": "gfx11.7", "gfx1172": "gfx11.7",
    "gfx11-7-generic": "gfx11.7",
    "gfx1200": "gfx12", "gfx1201": "gfx12", "gfx12-generic": "gfx12",
    "gfx1250": "gfx1250", "gfx1251": "gfx1250", "gfx12-5-generic": "gfx1250", "gfx1250-strict": "gfx1250",
    "gfx1310": "gfx13", "gfx13-generic": "gfx13",
}
