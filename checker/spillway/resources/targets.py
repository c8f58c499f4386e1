"""AMDGPU processors: ``e_flags`` machine values, target IDs and the
per-processor parameters of LLVM's occupancy model.

Machine values: every ``EF_AMDGPU_MACH`` of LLVM 24's ``ELF.h`` (Debian's clang-24
snapshot of October 2026, ``/usr/lib/llvm-24/include/llvm/BinaryFormat/ELF.h``).
Parameters: amdgpu-binaries.md sections 4.2-4.5 (sweeps of llc-22 remarks) and
``scripts/occupancy-sweep.py`` over clang 23 and 24 (toolchains-next.md section 5).
A processor without parameters here has a name but no occupancy figure.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# EF_AMDGPU_MACH (e_flags & 0xff) -> processor name: every value LLVM 24's ELF.h names.  0x040
# (gfx940) and 0x04b (gfx941) are reserved there since LLVM 22 removed them; older compilers wrote them.
MACH_TO_PROCESSOR = {
    0x001: "r600", 0x002: "r630", 0x003: "rs880", 0x004: "rv670", 0x005: "rv710", 0x006: "rv730",
    0x007: "rv770", 0x008: "cedar", 0x009: "cypress", 0x00a: "juniper", 0x00b: "redwood", 0x00c: "sumo",
    0x00d: "barts", 0x00e: "caicos", 0x00f: "cayman", 0x010: "turks",
    0x020: "gfx600", 0x021: "gfx601", 0x022: "gfx700", 0x023: "gfx701", 0x024: "gfx702",
    0x025: "gfx703", 0x026: "gfx704", 0x028: "gfx801", 0x029: "gfx802", 0x02a: "gfx803",
    0x02b: "gfx810", 0x02c: "gfx900", 0x02d: "gfx902", 0x02e: "gfx904", 0x02f: "gfx906",
    0x030: "gfx908", 0x031: "gfx909", 0x032: "gfx90c", 0x033: "gfx1010", 0x034: "gfx1011",
    0x035: "gfx1012", 0x036: "gfx1030", 0x037: "gfx1031", 0x038: "gfx1032", 0x039: "gfx1033",
    0x03a: "gfx602", 0x03b: "gfx705", 0x03c: "gfx805", 0x03d: "gfx1035", 0x03e: "gfx1034",
    0x03f: "gfx90a", 0x040: "gfx940", 0x041: "gfx1100", 0x042: "gfx1013", 0x043: "gfx1150",
    0x044: "gfx1103", 0x045: "gfx1036", 0x046: "gfx1101", 0x047: "gfx1102", 0x048: "gfx1200",
    0x049: "gfx1250", 0x04a: "gfx1151", 0x04b: "gfx941", 0x04c: "gfx942", 0x04e: "gfx1201",
    0x04f: "gfx950", 0x050: "gfx1310", 0x051: "gfx9-generic", 0x052: "gfx10-1-generic",
    0x053: "gfx10-3-generic", 0x054: "gfx11-generic", 0x055: "gfx1152", 0x057: "gfx1154",
    0x058: "gfx1153", 0x059: "gfx12-generic", 0x05a: "gfx1251", 0x05b: "gfx12-5-generic",
    0x05c: "gfx1172", 0x05d: "gfx1170", 0x05e: "gfx1171", 0x05f: "gfx9-4-generic",
    0x062: "gfx11-7-generic", 0x063: "gfx13-generic", 0x0eb: "gfx1250-strict",
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


def architected_flat_scratch(processor: str) -> bool:
    """The hardware sets up scratch itself (gfx940 family and gfx950, GFX11 and
    later): a kernel's private segment takes no wave-offset SGPR at entry
    (llvm-objdump prints ``.amdhsa_enable_private_segment`` for its
    descriptor rather than ``.amdhsa_system_sgpr_private_segment_wavefront_offset``)."""
    if processor in ("gfx940", "gfx941", "gfx942", "gfx950", "gfx9-4-generic"):
        return True
    name = processor.removeprefix("gfx")          # "1100", "90a", "11-generic"
    major = name.split("-")[0] if "-" in name else name[:-2]
    return major.isdigit() and int(major) >= 11


def target_selected(target_id: str, wanted: list[str]) -> bool:
    """Does ``--target`` keep this target?  Each wanted entry is a processor (all
    its feature variants) or a full target ID; none wanted keeps every target."""
    if not wanted:
        return True
    processor = processor_of(target_id)
    return any(w == target_id or w == processor for w in wanted)


MODEL_NAMES = ("llvm22", "llvm23", "llvm24")


@dataclass(frozen=True)
class OccupancyModel:
    """What LLVM's occupancy computation needs to know about a processor.

    ``vgpr_granule``/``vgpr_total`` are per wave size.  LDS parameters are for
    the default mode (WGP on GFX10+) and for CU mode.  ``models`` names the LLVM
    versions whose figures these parameters reproduce (checked against that
    clang's remarks); ``lds_granule`` is, per LLVM version, the LDS allocation
    granule its occupancy rounds a work-group's LDS up to ((WGP, CU) mode; 1 =
    no rounding, LLVM 22).
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
    sgpr_table: tuple[tuple[int, int], ...] = ()   # LLVM 22: (max sgprs, waves) before GFX10
    sgpr_total: int = 0              # LLVM 23+: SGPRs per SIMD before GFX10 (0: SGPRs never limit)
    sgpr_granule: int = 0
    sgpr_addressable: int = 102      # getAddressableNumSGPRs before GFX10 (104 on GFX6/7)
    agprs: str = "none"              # "none", "separate" (gfx908: max(V, A)), "unified" (gfx90a class)
    models: frozenset[str] = frozenset(MODEL_NAMES)
    lds_granule: tuple[tuple[str, int, int], ...] = ()   # (model, WGP-mode granule, CU-mode granule)

    def lds_granule_for(self, model: str, cu_mode: bool) -> int:
        for name, wgp, cu in self.lds_granule:
            if name == model:
                return cu if cu_mode else wgp
        return 1


# SGPR trap-handler reserve LLVM 23+ charges every wave before GFX10 (amdhsa, llvm-project#201342).
SGPR_TRAP_RESERVE = 16

_GFX8_9_SGPR = ((80, 10), (88, 9), (100, 8), (10**9, 7))
_GFX6_7_SGPR = ((48, 10), (56, 9), (64, 8), (72, 7), (80, 6), (10**9, 5))

_W64_4_256 = ({64: 4}, {64: 256})
_GRANULE_512 = (("llvm23", 512, 512), ("llvm24", 512, 512))
# LLVM 24: RDNA 2 and later allocate LDS in 1 KiB blocks (llvm-project#219495, #224852)
_GRANULE_1024_IN_24 = (("llvm23", 512, 512), ("llvm24", 1024, 1024))


def _gfx10plus(major, granule32, total32, max_waves, lds=131072, b=32, lds_granule=_GRANULE_512,
               models=frozenset(MODEL_NAMES)):
    return OccupancyModel(
        family=f"gfx{major}", gfx_major=major, max_waves_per_simd=max_waves,
        vgpr_granule={32: granule32, 64: granule32 // 2},
        vgpr_total={32: total32, 64: total32 // 2},
        lds_per_cu=lds, simds_per_cu=4, barrier_limit=b,
        lds_per_cu_cumode=65536, simds_per_cu_cumode=2, barrier_limit_cumode=16,
        lds_granule=lds_granule, models=models)


_GFX6 = OccupancyModel("gfx6", 6, 10, *_W64_4_256, lds_per_cu=32768, simds_per_cu=4,
                       barrier_limit=16, sgpr_table=_GFX6_7_SGPR, sgpr_total=512, sgpr_granule=8, sgpr_addressable=104,
                       lds_granule=(("llvm23", 256, 256), ("llvm24", 256, 256)))
_GFX7 = OccupancyModel("gfx7", 7, 10, *_W64_4_256, lds_per_cu=65536, simds_per_cu=4,
                       barrier_limit=16, sgpr_table=_GFX6_7_SGPR, sgpr_total=512, sgpr_granule=8, sgpr_addressable=104,
                       lds_granule=_GRANULE_512)
_GFX8 = OccupancyModel("gfx8", 8, 10, *_W64_4_256, lds_per_cu=65536, simds_per_cu=4,
                       barrier_limit=16, sgpr_table=_GFX8_9_SGPR, sgpr_total=800, sgpr_granule=16,
                       lds_granule=_GRANULE_512)
_GFX9 = OccupancyModel("gfx9", 9, 10, *_W64_4_256, lds_per_cu=65536, simds_per_cu=4,
                       barrier_limit=16, sgpr_table=_GFX8_9_SGPR, sgpr_total=800, sgpr_granule=16,
                       lds_granule=_GRANULE_512)
_GFX908 = OccupancyModel("gfx9", 9, 10, *_W64_4_256, lds_per_cu=65536, simds_per_cu=4,
                         barrier_limit=16, sgpr_table=_GFX8_9_SGPR, sgpr_total=800, sgpr_granule=16,
                         agprs="separate", lds_granule=_GRANULE_512)
_GFX90A = OccupancyModel("gfx90a", 9, 8, {64: 8}, {64: 512}, lds_per_cu=65536, simds_per_cu=4,
                         barrier_limit=16, sgpr_table=_GFX8_9_SGPR, sgpr_total=800, sgpr_granule=16,
                         agprs="unified", lds_granule=_GRANULE_512)
_GFX950 = OccupancyModel("gfx90a", 9, 8, {64: 8}, {64: 512}, lds_per_cu=163840, simds_per_cu=4,
                         barrier_limit=16, sgpr_table=_GFX8_9_SGPR, sgpr_total=800, sgpr_granule=16,
                         agprs="unified", lds_granule=(("llvm23", 1280, 1280), ("llvm24", 1280, 1280)))
_GFX10_1 = _gfx10plus(10, 8, 1024, 20)
_GFX10_3 = _gfx10plus(10, 16, 1024, 16, lds_granule=_GRANULE_1024_IN_24)
_GFX11 = _gfx10plus(11, 16, 1024, 16, lds_granule=_GRANULE_1024_IN_24)
_GFX11_FULL = _gfx10plus(11, 24, 1536, 16, lds_granule=_GRANULE_1024_IN_24)        # 1.5x VGPR file
_GFX12 = _gfx10plus(12, 24, 1536, 16, lds_granule=_GRANULE_1024_IN_24)
_GFX1250 = OccupancyModel("gfx1250", 12, 16, {32: 16, 64: 8}, {32: 1024, 64: 512},
                          lds_per_cu=327680, simds_per_cu=4, barrier_limit=16,
                          lds_per_cu_cumode=327680, simds_per_cu_cumode=4, barrier_limit_cumode=16,
                          lds_granule=(("llvm23", 2048, 2048), ("llvm24", 2048, 2048)))

_LLVM23_ON = frozenset({"llvm23", "llvm24"})     # processors LLVM 22 did not know
_GFX11_7 = _gfx10plus(11, 16, 1024, 16, models=_LLVM23_ON, lds_granule=_GRANULE_1024_IN_24)
_GFX1250_NEXT = dataclasses.replace(_GFX1250, models=_LLVM23_ON)
# gfx13 as LLVM 23 models it: a 1.5x VGPR file as gfx12. clang 23's gfx13 code objects name no
# WGP/CU mode (no .workgroup_processor_mode, descriptor bit 29 clear): read as WGP mode, the default.
_GFX13 = dataclasses.replace(_gfx10plus(13, 24, 1536, 16, models=_LLVM23_ON), lds_per_cu_cumode=None,
                             simds_per_cu_cumode=None, barrier_limit_cumode=None)

_MODELS: dict[str, OccupancyModel] = {}
for _names, _model in (
    ("gfx600 gfx601 gfx602", _GFX6),
    ("gfx700 gfx701 gfx702 gfx703 gfx704 gfx705", _GFX7),
    ("gfx801 gfx802 gfx803 gfx805 gfx810", _GFX8),
    ("gfx900 gfx902 gfx904 gfx906 gfx909 gfx90c gfx9-generic", _GFX9),
    ("gfx908", _GFX908),
    ("gfx90a gfx942 gfx9-4-generic", _GFX90A),
    # removed in LLVM 22 (clang 23 and 24: "unsupported HIP gpu architecture"); written by clang 19
    ("gfx940 gfx941", dataclasses.replace(_GFX90A, models=frozenset({"llvm22"}))),
    ("gfx950", _GFX950),
    ("gfx1010 gfx1011 gfx1012 gfx1013 gfx10-1-generic", _GFX10_1),
    ("gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036 gfx10-3-generic", _GFX10_3),
    ("gfx1102 gfx1103 gfx1150 gfx1152 gfx1153 gfx11-generic", _GFX11),
    ("gfx1100 gfx1101 gfx1151", _GFX11_FULL),
    ("gfx1200 gfx1201 gfx12-generic", _GFX12),
    ("gfx1250 gfx1251", _GFX1250),
    ("gfx1154 gfx1170 gfx1171 gfx1172 gfx11-7-generic", _GFX11_7),
    ("gfx1310 gfx13-generic", _GFX13),
    ("gfx12-5-generic", _GFX1250_NEXT),
    ("gfx1250-strict", dataclasses.replace(_GFX1250, models=frozenset({"llvm24"}))),   # clang 23 lacks it
):
    for _name in _names.split():
        _MODELS[_name] = _model


# Where one LLVM version models a processor differently from the others: (model, processor).
# LLVM 24 gives gfx1310 its own parameters (LLVM 23 treated it as gfx12): 1024 VGPRs in
# granules of 16, 192 KiB of LDS per WGP in 1 KiB blocks (160 KiB per work-group), half of
# it in CU mode (which its code objects then name in .workgroup_processor_mode).
_GFX1310_LLVM24 = OccupancyModel("gfx13", 13, 16, {32: 16, 64: 8}, {32: 1024, 64: 512},
                                 lds_per_cu=196608, simds_per_cu=4, barrier_limit=32,
                                 lds_per_cu_cumode=98304, simds_per_cu_cumode=2, barrier_limit_cumode=16,
                                 models=frozenset({"llvm24"}), lds_granule=(("llvm24", 1024, 1024),))
_BY_LLVM: dict[tuple[str, str], OccupancyModel] = {("llvm24", "gfx1310"): _GFX1310_LLVM24,
                                                   ("llvm24", "gfx13-generic"): _GFX1310_LLVM24}
# LLVM 24 counts 64 KiB of LDS per CU on GFX6 too (32 KiB per work-group, as before).
for _name in ("gfx600", "gfx601", "gfx602"):
    _BY_LLVM[("llvm24", _name)] = dataclasses.replace(_GFX6, lds_per_cu=65536)


def occupancy_model(processor: str, llvm: str | None = None) -> OccupancyModel | None:
    """The parameters for a processor (as LLVM version ``llvm`` models it, when named),
    or None when spillway has none."""
    if llvm is not None and (llvm, processor) in _BY_LLVM:
        return _BY_LLVM[(llvm, processor)]
    return _MODELS.get(processor)


def known_processors(model: str | None = None) -> list[str]:
    """Processors with parameters (for one LLVM model when named)."""
    names = set(_MODELS) | {p for _, p in _BY_LLVM}
    return sorted(n for n in names if (m := occupancy_model(n, model)) is not None
                  and (model is None or model in m.models))
