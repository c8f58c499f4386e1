"""AMDGPU processors: ``e_flags`` machine values, target IDs and the
per-processor parameters of LLVM's occupancy model.

Values from amdgpu-binaries.md sections 3.2, 4.2 and 4.5 (LLVM 22's ELF.h and
a sweep of llc-22 remarks over every VGPR count).
"""

from __future__ import annotations

from dataclasses import dataclass

# EF_AMDGPU_MACH (e_flags & 0xff) -> processor name.
MACH_TO_PROCESSOR = {
    0x020: "gfx600", 0x021: "gfx601", 0x022: "gfx700", 0x023: "gfx701", 0x024: "gfx702",
    0x025: "gfx703", 0x026: "gfx704", 0x028: "gfx801", 0x029: "gfx802", 0x02a: "gfx803",
    0x02b: "gfx810", 0x02c: "gfx900", 0x02d: "gfx902", 0x02e: "gfx904", 0x02f: "gfx906",
    0x030: "gfx908", 0x031: "gfx909", 0x032: "gfx90c", 0x033: "gfx1010", 0x034: "gfx1011",
    0x035: "gfx1012", 0x036: "gfx1030", 0x037: "gfx1031", 0x038: "gfx1032", 0x039: "gfx1033",
    0x03a: "gfx602", 0x03b: "gfx705", 0x03c: "gfx805", 0x03d: "gfx1035", 0x03e: "gfx1034",
    0x03f: "gfx90a", 0x040: "gfx940", 0x041: "gfx1100", 0x042: "gfx1013", 0x043: "gfx1150",
    0x044: "gfx1103", 0x045: "gfx1036", 0x046: "gfx1101", 0x047: "gfx1102", 0x048: "gfx1200",
    0x049: "gfx1250", 0x04a: "gfx1151", 0x04b: "gfx941", 0x04c: "gfx942", 0x04e: "gfx1201",
    0x04f: "gfx950", 0x051: "gfx9-generic", 0x052: "gfx10-1-generic", 0x053: "gfx10-3-generic",
    0x054: "gfx11-generic", 0x055: "gfx1152", 0x058: "gfx1153", 0x059: "gfx12-generic",
    0x05a: "gfx1251", 0x05f: "gfx9-4-generic",
}

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64

# EI_ABIVERSION (HSA) -> code object version.
ABI_VERSION_TO_COV = {0: 2, 1: 3, 2: 4, 3: 5, 4: 6}


def processor_name(mach: int) -> str:
    """Name of a machine value; unknown values get a name, never an error."""
    return MACH_TO_PROCESSOR.get(mach, f"unknown-mach-{mach:#x}")


def target_id_from_flags(e_flags: int, code_object_version: int) -> str:
    """Canonical target ID (features sorted: sramecc before xnack)."""
    target = processor_name(e_flags & 0xFF)
    if code_object_version >= 4:
        sramecc = {0x400: None, 0x800: "-", 0xC00: "+"}.get(e_flags & 0xC00)
        xnack = {0x100: None, 0x200: "-", 0x300: "+"}.get(e_flags & 0x300)
    elif code_object_version == 3:
        sramecc = "+" if e_flags & 0x200 else None
        xnack = "+" if e_flags & 0x100 else None
    else:
        sramecc, xnack = None, ("+" if e_flags & 0x01 else None)
    if sramecc:
        target += f":sramecc{sramecc}"
    if xnack:
        target += f":xnack{xnack}"
    return target


def processor_of(target_id: str) -> str:
    return target_id.split(":", 1)[0]


@dataclass(frozen=True)
class OccupancyModel:
    """What LLVM's occupancy computation needs to know about a processor.

    ``vgpr_granule``/``vgpr_total`` are per wave size.  LDS parameters are for
    the default mode (WGP on GFX10+) and for CU mode.
    """

    family: str                      # "gfx6" ... "gfx12", "gfx90a", "gfx1250"
    gfx_major: int
    max_waves_per_simd: int
    vgpr_granule: dict[int, int]     # wave size -> allocation granule
    vgpr_total: dict[int, int]       # wave size -> VGPRs per SIMD
    lds_per_cu: int                  # L as modelled (WGP for GFX10+)
    simds_per_cu: int                # U
    barrier_limit: int               # B
    lds_per_cu_cumode: int | None = None
    simds_per_cu_cumode: int | None = None
    barrier_limit_cumode: int | None = None
    sgpr_table: tuple[tuple[int, int], ...] = ()   # (max sgprs, waves) before GFX10


_GFX8_9_SGPR = ((80, 10), (88, 9), (100, 8), (10**9, 7))
_GFX6_7_SGPR = ((48, 10), (56, 9), (64, 8), (72, 7), (80, 6), (10**9, 5))

_W64_4_256 = ({64: 4}, {64: 256})


def _gfx10plus(major, granule32, total32, max_waves, lds=131072, b=32):
    return OccupancyModel(
        family=f"gfx{major}", gfx_major=major, max_waves_per_simd=max_waves,
        vgpr_granule={32: granule32, 64: granule32 // 2},
        vgpr_total={32: total32, 64: total32 // 2},
        lds_per_cu=lds, simds_per_cu=4, barrier_limit=b,
        lds_per_cu_cumode=65536, simds_per_cu_cumode=2, barrier_limit_cumode=16)


_GFX6 = OccupancyModel("gfx6", 6, 10, *_W64_4_256, lds_per_cu=32768, simds_per_cu=4,
                       barrier_limit=16, sgpr_table=_GFX6_7_SGPR)
_GFX7 = OccupancyModel("gfx7", 7, 10, *_W64_4_256, lds_per_cu=65536, simds_per_cu=4,
                       barrier_limit=16, sgpr_table=_GFX6_7_SGPR)
_GFX8 = OccupancyModel("gfx8", 8, 10, *_W64_4_256, lds_per_cu=65536, simds_per_cu=4,
                       barrier_limit=16, sgpr_table=_GFX8_9_SGPR)
_GFX9 = OccupancyModel("gfx9", 9, 10, *_W64_4_256, lds_per_cu=65536, simds_per_cu=4,
                       barrier_limit=16, sgpr_table=_GFX8_9_SGPR)
_GFX90A = OccupancyModel("gfx90a", 9, 8, {64: 8}, {64: 512}, lds_per_cu=65536, simds_per_cu=4,
                         barrier_limit=16, sgpr_table=_GFX8_9_SGPR)
_GFX950 = OccupancyModel("gfx90a", 9, 8, {64: 8}, {64: 512}, lds_per_cu=163840, simds_per_cu=4,
                         barrier_limit=16, sgpr_table=_GFX8_9_SGPR)
_GFX10_1 = _gfx10plus(10, 8, 1024, 20)
_GFX10_3 = _gfx10plus(10, 16, 1024, 16)
_GFX11 = _gfx10plus(11, 16, 1024, 16)
_GFX11_FULL = _gfx10plus(11, 24, 1536, 16)        # 1.5x VGPR file
_GFX12 = _gfx10plus(12, 24, 1536, 16)
_GFX1250 = OccupancyModel("gfx1250", 12, 16, {32: 16, 64: 8}, {32: 1024, 64: 512},
                          lds_per_cu=327680, simds_per_cu=4, barrier_limit=16,
                          lds_per_cu_cumode=327680, simds_per_cu_cumode=4, barrier_limit_cumode=16)

_MODELS: dict[str, OccupancyModel] = {}
for _names, _model in (
    ("gfx600 gfx601 gfx602", _GFX6),
    ("gfx700 gfx701 gfx702 gfx703 gfx704 gfx705", _GFX7),
    ("gfx801 gfx802 gfx803 gfx805 gfx810", _GFX8),
    ("gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90c gfx9-generic", _GFX9),
    ("gfx90a gfx940 gfx941 gfx942 gfx9-4-generic", _GFX90A),
    ("gfx950", _GFX950),
    ("gfx1010 gfx1011 gfx1012 gfx1013 gfx10-1-generic", _GFX10_1),
    ("gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036 gfx10-3-generic", _GFX10_3),
    ("gfx1102 gfx1103 gfx1150 gfx1152 gfx1153 gfx11-generic", _GFX11),
    ("gfx1100 gfx1101 gfx1151", _GFX11_FULL),
    ("gfx1200 gfx1201 gfx12-generic", _GFX12),
    ("gfx1250 gfx1251", _GFX1250),
):
    for _name in _names.split():
        _MODELS[_name] = _model


def occupancy_model(processor: str) -> OccupancyModel | None:
    """The model for a processor, or None when spillway does not know it."""
    return _MODELS.get(processor)


def known_processors() -> list[str]:
    return sorted(_MODELS)
