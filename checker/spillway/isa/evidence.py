"""Per-kernel evidence from the machine code (issue 23's fields).

``evidence()`` is a pure function of the bytes: a reader of ``llvm-objdump -d -z``
output counting mnemonics by the rules below gets the same figures.

- range: the kernel's STT_FUNC symbol, ``[start, start + size)`` of the code given;
  ``instructions``: every instruction in it (a VOPD pair is one); ``code_bytes``:
  the size; ``code_sha256``: SHA-256 of those bytes, ``""`` when the range holds
  none (size 0, a symbol outside the code: the code was not read and has no
  identity - never the hash of nothing; ``status`` says why).
- ``scratch_loads``/``scratch_stores``: mnemonics beginning ``scratch_load``/
  ``scratch_store``, and MUBUF ``buffer_load*``/``buffer_store*`` whose resource
  (srsrc) is the private segment buffer: ``s[0:3]`` when the kernel descriptor
  enables it (``kernel_code_properties`` bit 0), or a copy of it made in the
  entry block (the instructions before the first branch, call or
  ``s_endpgm``), followed through ``s_mov_b32``/``s_mov_b64`` and
  ``s_add_u32``/``s_addc_u32`` (the wave offset); any other SALU write to an
  SGPR in the entry block ends what it held.  Atomics, MTBUF and ``flat_*``
  are not counted (``flat_ops`` counts flat apart).
- ``scratch_load_bytes``/``scratch_store_bytes``: the width each mnemonic
  names; forms naming none (``_format``, ``_block``) add nothing and are
  listed in ``scratch_without_width``.
- ``agpr_writes``/``agpr_reads``: ``v_accvgpr_write*``/``v_accvgpr_read*``;
  ``matrix_ops``: ``v_mfma*``, ``v_smfmac*``, ``v_wmma*``, ``v_swmmac*``;
  ``lds_ops``: ``ds_*``.
- ``loops``: ``s_branch``/``s_cbranch_*`` (not ``_join``, ``_g_fork``,
  ``_i_fork``) whose target, address + 4 + 4 x simm16, lies in the kernel at
  or before the branch; ``loop_spans`` their ranges (target, branch);
  ``scratch_in_loops``: scratch accesses inside at least one span, each once.
- ``calls``: ``s_swappc_b64``/``s_call_b64``.  A callee's code is outside the
  kernel's symbol and is not decoded: its scratch traffic is not in the counts,
  ``calls`` says that there is some.
- ``status``: ``complete``, or what stopped the decoder and where (offsets
  from the kernel's start, as objdump's ``<k+0x..>``); the counts then cover
  what was decoded.  A branch out of the kernel, onto itself or into an
  instruction is reported too, but does not stop the decoder.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
import re
import struct
from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources
from typing import Sequence

from spillway import json_codec
from spillway.errors import InputError
from spillway.formats.codeobject import (CODE_SECTION, CONTAINER, EntryRegisters, code_bytes, code_layout,
                                        descriptor_wavefront_size, entry_registers, is_amdgpu_elf,
                                        kernel_descriptors)
from spillway.formats.elf import ET_REL, SHT_SYMTAB, STT_FUNC, ElfImage
from spillway.isa.decoder import DecodeError, Family, Instruction, decode, family_of, load_family
from spillway.isa.mix import MIX_CLASSES, mix_class, with_scratch
from spillway.resources.targets import processor_name

COMPLETE = "complete"

_WIDTHS = {
    "dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16,
    "b32": 4, "b64": 8, "b96": 12, "b128": 16,
    "short": 2, "ushort": 2, "sshort": 2, "b16": 2, "u16": 2, "i16": 2,
    "byte": 1, "ubyte": 1, "sbyte": 1, "b8": 1, "u8": 1, "i8": 1,
}
_NO_BRANCH = ("_join", "_g_fork", "_i_fork")
_MATRIX = ("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")

# Classes of an opcode, worked out once per mnemonic.
(OTHER, SCRATCH_LOAD, SCRATCH_STORE, BUFFER_LOAD, BUFFER_STORE, FLAT, AGPR_WRITE, AGPR_READ, MATRIX,
 LDS, BRANCH, CALL, END, S_MOV_B32, S_MOV_B64, S_ADD_U32, S_ADDC_U32, SALU_WRITE, SMEM) = range(19)
KINDS = 19


@dataclass(frozen=True)
class KernelCode:
    instructions: int
    code_bytes: int
    code_sha256: str
    scratch_loads: int
    scratch_stores: int
    scratch_load_bytes: int
    scratch_store_bytes: int
    scratch_without_width: tuple[tuple[str, int], ...]   # (mnemonic, count), sorted
    flat_ops: int
    agpr_writes: int
    agpr_reads: int
    matrix_ops: int
    lds_ops: int
    loops: int
    loop_spans: tuple[tuple[int, int], ...]              # (target, branch) offsets from the kernel's start
    scratch_in_loops: int
    calls: int
    status: str
    # Derived figures (appended; docs/isa.md, "What the machine code shows").  Bytes are per lane.
    scratch_slot_load_bytes: int = 0          # scratch loads with no VGPR address: fixed frame slots
    scratch_slot_store_bytes: int = 0
    scratch_addressed_load_bytes: int = 0     # scratch loads through a VGPR address: run-time indexed
    scratch_addressed_store_bytes: int = 0
    agpr_spill_copies: int = 0                # v_accvgpr_write/read of an AGPR no matrix op accumulates in
    agpr_accumulator_moves: int = 0           # v_accvgpr_write/read of a matrix op's accumulator AGPR
    innermost_loops: int = 0                  # loop spans holding no other span
    scratch_in_innermost_loops: int = 0       # scratch accesses inside at least one innermost span
    loop_depth_max: int = 0                   # the most loop spans holding one offset
    # Instruction mix (isa.mix): instructions per class, in MIX_CLASSES order (() when the code was not read).
    mix: tuple[int, ...] = ()


_KERNEL_CODE_FIELDS = tuple(found.name for found in fields(KernelCode))


def kernel_code(*values) -> KernelCode:
    """KernelCode(*values), every field given, in order, made without the
    frozen dataclass's object.__setattr__ per field (11 us a record;
    isa.vector.evidence_many makes one per kernel of a library, a quarter
    of a million): the same object, equal and hashed alike."""
    if len(values) != len(_KERNEL_CODE_FIELDS):
        raise TypeError(f"kernel_code takes {len(_KERNEL_CODE_FIELDS)} values, not {len(values)}")
    made = object.__new__(KernelCode)
    made.__dict__.update(zip(_KERNEL_CODE_FIELDS, values))
    return made


# Families whose FLAT-encoded scratch_* says "VGPR address" by the SVE bit (13); the other GFX9
# families by saddr = 0x7F (off) (llvm-mc-22 -show-encoding).
_SVE13 = ("gfx940", "gfx942", "gfx950")


def vgpr_addressed(family: Family, encoding: str, bits: int) -> bool:
    """Whether a scratch access (one counted in scratch_loads/stores) takes
    its address from a VGPR (objdump prints a register, not ``off``, in the
    vaddr position).  MUBUF: offen or idxen (bits 12, 13; GFX11: 54, 55).
    scratch_*: gfx940/942/950 the SVE bit 13, other GFX9 saddr = 0x7F; GFX10
    saddr = 0x7D (0x7F: neither register, ST mode); GFX11 SVE bit 55; GFX12
    and gfx1250 (VSCRATCH) SVE bit 49."""
    layout = family.layout
    if encoding == "MUBUF":
        return bool((bits >> (54 if layout == "gfx11" else 12)) & 3)
    if layout == "gfx9":
        if family.name in _SVE13:
            return bool((bits >> 13) & 1)
        return (bits >> 48) & 0x7F == 0x7F
    if layout == "gfx10":
        return (bits >> 48) & 0x7F == 0x7D
    if layout == "gfx11":
        return bool((bits >> 55) & 1)
    return bool((bits >> 49) & 1)


@lru_cache(maxsize=None)
def accumulator_widths(family: str) -> dict[str, int]:
    """Matrix op mnemonic -> registers its result (and an MFMA's src2) spans,
    for the families with AGPRs (tables/accumulators.json, written by
    scripts/generate-isa-accumulators.py from llvm-mc's output); empty for
    the others (WMMA/SWMMAC accumulate in VGPRs)."""
    text = resources.files("spillway.isa").joinpath("tables").joinpath("accumulators.json").read_bytes()
    return dict(json_codec.loads(text)["families"].get(family, {}))


def accumulator_agprs(family: str, mnemonic: str, bits: int) -> list[range]:
    """The AGPRs a matrix op (VOP3 on GFX9) reads or writes as its
    accumulator: vdst, and an MFMA's src2 (bits 50-58, 256 + register) when
    it is a register, each as wide as the mnemonic's result; only when acc_cd
    (bit 15) is set (gfx908 has no acc_cd: always AGPRs).  SMFMAC's src2 is
    its index VGPR, not an accumulator."""
    width = accumulator_widths(family).get(mnemonic)
    if width is None or (family != "gfx908" and not (bits >> 15) & 1):
        return []
    vdst = bits & 0xFF
    found = [range(vdst, vdst + width)]
    src2 = (bits >> 50) & 0x1FF
    if src2 >= 256 and not mnemonic.startswith("v_smfmac"):
        found.append(range(src2 - 256, src2 - 256 + width))
    return found


def copied_agpr(kind: int, bits: int) -> int | None:
    """The AGPR a v_accvgpr_write (vdst, bits 0-7) or v_accvgpr_read (src0,
    bits 32-40, 256 + register) copies."""
    if kind == AGPR_WRITE:
        return bits & 0xFF
    src0 = (bits >> 32) & 0x1FF
    return src0 - 256 if src0 >= 256 else None


def accumulator_mask(family: str, matrix: Sequence[tuple[str, int]],
                     movs: Sequence[tuple[int, int]] = ()) -> bytearray:
    """1 at each AGPR (0-511) some matrix op ((mnemonic, bits)) accumulates
    in, and at each AGPR a ``v_accvgpr_mov_b32`` ((destination, source)
    AGPRs) copies into or out of such an AGPR, to a fixed point (the copy of
    the accumulator LLVM carries around a loop on gfx90a and later)."""
    held = bytearray(512)
    for mnemonic, bits in matrix:
        for agprs in accumulator_agprs(family, mnemonic, bits):
            held[agprs.start:agprs.stop] = b"\1" * len(agprs)
    if any(held):
        changed = True
        while changed:
            changed = False
            for destination, source in movs:
                if held[destination] != held[source]:
                    held[destination] = held[source] = 1
                    changed = True
    return held


def accvgpr_move(encoding: str, bits: int) -> tuple[int, int] | None:
    """(destination, source) AGPRs of a v_accvgpr_mov_b32 (VOP1: vdst bits
    17-24, src0 bits 0-8; VOP3: vdst bits 0-7, src0 bits 32-40; a source is
    256 + its register), None when its source is not a register."""
    if encoding == "VOP1":
        destination, source = (bits >> 17) & 0xFF, bits & 0x1FF
    else:
        destination, source = bits & 0xFF, (bits >> 32) & 0x1FF
    return (destination, source - 256) if source >= 256 else None


def agpr_split(family: str, matrix: Sequence[tuple[str, int]], copies: Sequence[tuple[int, int]],
               movs: Sequence[tuple[int, int]] = ()) -> tuple[int, int]:
    """(spill copies, accumulator moves) of a kernel's AGPR copies ((kind,
    bits) of each v_accvgpr_write/read) given its matrix ops ((mnemonic,
    bits)) and v_accvgpr_mov_b32 ((destination, source)): a copy of an
    accumulator AGPR (accumulator_mask) is an accumulator move, any other
    copy a spill copy.  By register number over the whole kernel: an
    accumulator AGPR reused for spills where the accumulator is dead counts
    its copies as accumulator moves."""
    held = accumulator_mask(family, matrix, movs)
    moves = 0
    for kind, bits in copies:
        agpr = copied_agpr(kind, bits)
        if agpr is not None and held[agpr]:
            moves += 1
    return len(copies) - moves, moves


def access_bytes(mnemonic: str) -> int | None:
    """Bytes per lane a memory mnemonic names (None: it names no width)."""
    if "_format" in mnemonic or "_block" in mnemonic:
        return None
    for token in mnemonic.split("_")[2:]:
        if token in _WIDTHS:
            return _WIDTHS[token]
    return None


@lru_cache(maxsize=None)
def classify(mnemonic: str, encoding: str) -> int:
    m = mnemonic
    if m.startswith("scratch_load"):
        return SCRATCH_LOAD
    if m.startswith("scratch_store"):
        return SCRATCH_STORE
    if encoding in ("MUBUF", "VBUFFER"):
        if m.startswith("buffer_load"):
            return BUFFER_LOAD
        if m.startswith("buffer_store"):
            return BUFFER_STORE
        return OTHER
    if m.startswith("flat_"):
        return FLAT
    if m.startswith("v_accvgpr_write"):
        return AGPR_WRITE
    if m.startswith("v_accvgpr_read"):
        return AGPR_READ
    if m.startswith(_MATRIX):
        return MATRIX
    if m.startswith("ds_"):
        return LDS
    if (m == "s_branch" or m.startswith("s_cbranch_")) and not m.endswith(_NO_BRANCH):
        return BRANCH
    if m in ("s_swappc_b64", "s_call_b64", "s_swap_pc_i64", "s_call_i64"):   # the last two: gfx1250's names
        return CALL
    if m.startswith("s_endpgm"):
        return END
    if m == "s_mov_b32":
        return S_MOV_B32
    if m == "s_mov_b64":
        return S_MOV_B64
    if m == "s_add_u32":
        return S_ADD_U32
    if m == "s_addc_u32":
        return S_ADDC_U32
    if encoding in ("SOP1", "SOP2", "SOPK"):
        return SALU_WRITE
    if encoding == "SMEM":
        return SMEM
    return OTHER


_TYPE = re.compile(r"_[biuf](32|64)")
# s_* mnemonics whose first operand is not a written SGPR (tests/support/isa_oracle.py states the same rule):
# compares, stores, branches, waits, messages, and the forms with no SDST at all (s_rfe*, s_add_pc_i64,
# s_alloc_vgpr, s_gl1_inv and the prefetches: their SDST/SDATA field is 0 and means nothing).
_NO_SGPR_DEST = ("s_cmp", "s_bitcmp", "s_store", "s_buffer_store", "s_scratch_store", "s_atc_probe",
                 "s_setpc", "s_set_pc", "s_set_gpr_idx", "s_waitcnt", "s_wait_", "s_sendmsg", "s_setreg",
                 "s_branch", "s_nop", "s_sleep", "s_dcache", "s_icache", "s_endpgm", "s_barrier", "s_trap",
                 "s_setprio", "s_ttracedata", "s_incperflevel", "s_decperflevel", "s_clause", "s_delay_alu",
                 "s_setkill", "s_sethalt", "s_code_end", "s_inst_prefetch", "s_round_mode", "s_denorm_mode",
                 "s_prefetch", "s_singleuse_vdst", "s_set_vgpr_msb", "s_version", "s_wakeup",
                 "s_cbranch", "s_movreld", "s_rfe", "s_add_pc", "s_alloc_vgpr", "s_gl1_inv", "s_buffer_prefetch")
_SGPR_DEST_ANYWAY = ("s_sendmsg_rtn",)          # a message that returns its answer in SDST
_ATOMIC = ("s_atomic", "s_buffer_atomic")     # SMEM atomics return into SDATA only with glc (bit 16)
_CARRY_VALU = ("_co_", "addc", "subb", "div_scale", "mad_u64", "mad_i64")
# GFX8/GFX9 VOP3 opcodes 0x119-0x11E are VOP3b with a carry out: GFX9's v_add_co_u32 ... v_subbrev_co_u32
# and GFX8's v_add_u32 ... v_subbrev_u32 (on GFX9 v_add_u32 is another opcode, with no carry).
_GFX9_CARRY_OPCODES = range(0x119, 0x11F)
_ENTRY_END = ("s_branch", "s_cbranch_", "s_setpc_b64", "s_set_pc_i64", "s_endpgm")
_VOP3 = ("VOP3", "VOP3P")


def _salu_width(mnemonic: str) -> int:
    """SGPRs an SALU destination takes: the first type the mnemonic names
    (s_bcnt1_i32_b64 writes one, s_mov_b64 two)."""
    found = _TYPE.search(mnemonic)
    return 2 if found and found.group(1) == "64" else 1


def _smem_width(mnemonic: str) -> int:
    if mnemonic.startswith(("s_memtime", "s_memrealtime")):
        return 2
    for token, dwords in (("x16", 16), ("x8", 8), ("x4", 4), ("x3", 3), ("x2", 2), ("b512", 16),
                          ("b256", 8), ("b128", 4), ("b96", 3), ("b64", 2)):
        if mnemonic.endswith(token):
            return dwords
    return 1


def _sgprs(first: int, count: int) -> range:
    return range(first, first + count) if first < 106 else range(0)


def written_sgprs(instruction: Instruction, gfx9_layout: bool) -> range:
    """SGPRs an instruction writes, as far as following the private segment
    buffer needs, decided by what the instruction writes on its generation
    (``gfx9_layout``: GFX8/GFX9, wave64 only; later ones: the kernel taken
    as wave32), not by which field holds a value: SALU and SMEM
    destinations, v_readlane/v_readfirstlane, VOP3 compares and carry-outs,
    an SDWA compare's SDST (GFX9/GFX10, when its SD bit 47 is set).  A VOP3
    ``v_cmpx`` writes its SDST on GFX8/GFX9 only: from GFX10 on it writes
    EXEC alone and its vdst field (0 or 0x7E as compilers fill it) means
    nothing; VOPC e32 forms write VCC/EXEC, which never hold the buffer."""
    m = instruction.mnemonic
    bits = instruction.bits
    encoding = instruction.encoding
    if m.startswith("s_"):
        if m.startswith(_NO_SGPR_DEST) and not m.startswith(_SGPR_DEST_ANYWAY):
            return range(0)
        if encoding in ("SOP1", "SOP2", "SOPK"):
            return _sgprs((bits >> 16) & 0x7F, _salu_width(m))
        if encoding == "SMEM":
            if m.startswith(_ATOMIC) and not (bits >> 16) & 1:
                return range(0)
            return _sgprs((bits >> 6) & 0x7F, _smem_width(m))
        return range(0)
    lanes = 2 if gfx9_layout else 1
    if m.startswith("v_readfirstlane") and encoding == "VOP1":
        return _sgprs((bits >> 17) & 0xFF, 1)
    if encoding == "VOPC":
        # The SDWA form (GFX9, GFX10: LLVM names it _sdwa) has an SDST at bits 40-46 when SD (bit 47) is set;
        # GFX10's v_cmpx_*_sdwa has none.
        if m.endswith("_sdwa") and (bits >> 47) & 1 and not (m.startswith("v_cmpx") and not gfx9_layout):
            return _sgprs((bits >> 40) & 0x7F, lanes)
        return range(0)
    if encoding not in _VOP3:
        return range(0)
    if m.startswith("v_readlane") or m.startswith("v_readfirstlane"):
        return _sgprs(bits & 0xFF, 1)
    if m.startswith("v_cmpx") and not gfx9_layout:
        return range(0)
    if m.startswith("v_cmp"):
        return _sgprs(bits & 0xFF, lanes)
    if m.startswith("v_") and (any(part in m for part in _CARRY_VALU)
                               or (gfx9_layout and encoding == "VOP3"
                                   and (bits >> 16) & 0x3FF in _GFX9_CARRY_OPCODES)):
        return _sgprs((bits >> 8) & 0x7F, lanes)
    return range(0)


class _EntryBlock:
    """Which SGPRs hold a dword (0-3) of the private segment buffer."""

    def __init__(self, enabled: bool, gfx9_layout: bool):
        self.words: dict[int, int] = {i: i for i in range(4)} if enabled else {}
        self.gfx9_layout = gfx9_layout

    def step(self, kind: int, instruction: Instruction) -> None:
        bits = instruction.bits
        dst = (bits >> 16) & 0x7F
        src0 = bits & 0xFF
        held = self.words
        if kind == S_MOV_B32:
            self._set(dst, held.get(src0) if src0 < 106 else None)
        elif kind == S_MOV_B64:
            self._set(dst, held.get(src0) if src0 < 106 else None)
            self._set(dst + 1, held.get(src0 + 1) if src0 < 105 else None)
        elif kind in (S_ADD_U32, S_ADDC_U32):
            want = 0 if kind == S_ADD_U32 else 1
            self._set(dst, want if src0 < 106 and held.get(src0) == want else None)
        else:
            for sgpr in written_sgprs(instruction, self.gfx9_layout):
                self._set(sgpr, None)

    def _set(self, sgpr: int, word: int | None) -> None:
        if word is None:
            self.words.pop(sgpr, None)
        else:
            self.words[sgpr] = word

    def quads(self) -> set[int]:
        """First SGPRs of aligned quads holding words 0-3 in order."""
        return {q for q in range(0, 104, 4) if all(self.words.get(q + i) == i for i in range(4))}


def evidence(code: bytes | memoryview, start: int, size: int, target: str,
             private_segment_buffer: bool) -> KernelCode:
    """The kernel at ``code[start:start + size]`` (``code``: its section's
    bytes) for ``target`` (a target ID or processor); ``private_segment_buffer``:
    kernel_code_properties bit 0 of its descriptor."""
    view = memoryview(code)
    name = family_of(target)
    if size <= 0:
        return _empty(b"", f"size {size}")
    if start < 0 or start + size > len(view):
        return _empty(b"", f"symbol range [{start:#x}, {start + size:#x}) outside the code section "
                           f"({len(view)} bytes)")
    raw = view[start:start + size]
    if name is None:
        return _empty(raw, f"no decoder for target {target}")
    return _evidence(raw, load_family(name), private_segment_buffer)


def _empty(raw: bytes | memoryview, status: str) -> KernelCode:
    return KernelCode(0, len(raw), code_identity(raw), 0, 0, 0, 0, (), 0, 0, 0, 0, 0, 0, (), 0, 0,
                      status)   # the derived figures: their defaults, 0


def code_identity(raw: bytes | memoryview) -> str:
    """KernelCode.code_sha256 of a kernel's code bytes: their SHA-256, or ""
    when there are none (code not read: no identity to compare)."""
    return hashlib.sha256(raw).hexdigest() if len(raw) else ""


def _evidence(raw: memoryview, family: Family, psb_enabled: bool) -> KernelCode:
    size = len(raw)
    listing: list[tuple[Instruction, int]] = []
    stop: tuple[int, str] | None = None
    try:
        for instruction in decode(raw, 0, size, family):
            listing.append((instruction, classify(instruction.mnemonic, instruction.encoding)))
    except DecodeError as error:
        stop = (error.offset, f"{error.message} at +{error.offset:#x}")
    starts = {instruction.offset for instruction, _kind in listing}

    branches: list[tuple[int, int]] = []
    for instruction, kind in listing:
        if kind == BRANCH:
            branches.append((instruction.offset, branch_target(instruction.offset, instruction.bits)))
    psb = psb_quads(iter(listing), branch_targets(branches, size), psb_enabled, family.layout == "gfx9")

    counts = [0] * KINDS
    accesses: list[tuple[int, int, str, bool]] = []
    matrix: list[tuple[str, int]] = []
    copies: list[tuple[int, int]] = []
    moves: list[tuple[int, int]] = []
    mix = [0] * len(MIX_CLASSES)
    for instruction, kind in listing:
        mix[mix_class(instruction.mnemonic)] += 1
        if kind in (BUFFER_LOAD, BUFFER_STORE, SCRATCH_LOAD, SCRATCH_STORE):
            if is_scratch_access(instruction, kind, psb):
                accesses.append((instruction.offset, kind, instruction.mnemonic,
                                 vgpr_addressed(family, instruction.encoding, instruction.bits)))
        else:
            counts[kind] += 1
            if kind == MATRIX:
                matrix.append((instruction.mnemonic, instruction.bits))
            elif kind in (AGPR_WRITE, AGPR_READ):
                copies.append((kind, instruction.bits))
            elif instruction.mnemonic.startswith("v_accvgpr_mov"):
                move = accvgpr_move(instruction.encoding, instruction.bits)
                if move is not None:
                    moves.append(move)
    split = agpr_split(family.name, matrix, copies, moves)
    return assemble(raw, len(listing), stop, starts.__contains__, branches, accesses, counts, split, mix)


def branch_target(offset: int, bits: int) -> int:
    """address + 4 + 4 x simm16 (signed)."""
    simm16 = bits & 0xFFFF
    return offset + 4 + 4 * (simm16 - 0x10000 if simm16 & 0x8000 else simm16)


def branch_targets(branches: list[tuple[int, int]], size: int) -> set[int]:
    return {target for _at, target in branches if 0 < target < size}


def psb_quads(listing, targets: set[int], enabled: bool, gfx9_layout: bool) -> set[int]:
    """The quads holding the private segment buffer after the entry block: up
    to the first branch target inside the kernel, or through the first
    branch, s_setpc or s_endpgm.  ``listing``: (instruction, kind) from the
    kernel's start; ``gfx9_layout``: the family's layout is GFX8/GFX9's
    (written_sgprs)."""
    entry = _EntryBlock(enabled, gfx9_layout)
    for instruction, kind in listing:
        if instruction.offset in targets:
            break
        entry.step(kind, instruction)
        if instruction.mnemonic.startswith(_ENTRY_END):
            break
    return entry.quads()


def is_scratch_access(instruction: Instruction, kind: int, psb: set[int]) -> bool:
    """A counted scratch access: ``scratch_load*``/``scratch_store*``, or a
    MUBUF ``buffer_load*``/``buffer_store*`` whose srsrc is one of ``psb``
    (psb_quads())."""
    if kind in (SCRATCH_LOAD, SCRATCH_STORE):
        return True
    return (kind in (BUFFER_LOAD, BUFFER_STORE) and instruction.encoding == "MUBUF"
            and ((instruction.bits >> 48) & 0x1F) * 4 in psb)


def nesting(spans: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], int]:
    """The innermost spans (those holding no other span; a span (lo, hi)
    holds (lo', hi') when lo <= lo' and hi' <= hi) and the most spans holding
    one offset (spans are [lo, hi], inclusive).  ``spans`` in order of their
    ends, all different (branch offsets, as assemble() lists them)."""
    if len(spans) < 2:          # nothing to compare
        return list(spans), len(spans)
    innermost = []
    highest_start = -1
    # Every span a span holds ends before it: it holds one exactly when an earlier span
    # starts at or after its start.
    for lo, hi in spans:
        if lo > highest_start:
            innermost.append((lo, hi))
            highest_start = lo
    # The most spans hold one offset at some span's start: those started by then, less those ended before.
    starts = sorted([lo for lo, _hi in spans])
    ends = [hi for _lo, hi in spans]
    deepest = max([bisect_right(starts, lo) - bisect_left(ends, lo) for lo in starts])
    return innermost, deepest


def assemble(raw: bytes | memoryview, instructions: int, stop: tuple[int, str] | None, is_start,
             branches: list[tuple[int, int]], accesses: list[tuple[int, int, str, bool]], counts: list[int],
             agpr_copies: tuple[int, int], mix: Sequence[int] = ()) -> KernelCode:
    """The record from what decoding found: the instruction count, where it
    stopped, the branches (offset, target), the counted scratch accesses
    (offset, kind, mnemonic, VGPR-addressed), the other kinds' counts, the
    AGPR copies as (spill copies, accumulator moves) and the instructions per
    isa.mix.mix_class (scratch accesses under VMEM)."""
    size = len(raw)
    decoded_end = stop[0] if stop else size
    problems: list[tuple[int, str]] = [stop] if stop else []
    spans: list[tuple[int, int]] = []
    for at, target in branches:
        if target < 0 or target >= size:
            problems.append((at, f"branch at +{at:#x} to {target - at:+#x} bytes, outside the kernel"))
            continue
        if target == at:
            problems.append((at, f"branch at +{at:#x} onto itself"))
        elif target < decoded_end and not is_start(target):
            problems.append((at, f"branch at +{at:#x} into the middle of an instruction (+{target:#x})"))
        if target <= at:
            spans.append((target, at))
    innermost, deepest = nesting(spans)
    all_innermost = len(innermost) == len(spans)      # no nesting: every in-loop access is in an innermost one
    load_bytes = store_bytes = loads = stores = in_loops = in_innermost = 0
    by_address = [0, 0, 0, 0]       # slot load, slot store, addressed load, addressed store bytes
    no_width: dict[str, int] = {}
    for at, kind, mnemonic, addressed in accesses:
        is_load = kind in (SCRATCH_LOAD, BUFFER_LOAD)
        if is_load:
            loads += 1
        else:
            stores += 1
        width = access_bytes(mnemonic)
        if width is None:
            no_width[mnemonic] = no_width.get(mnemonic, 0) + 1
        else:
            if is_load:
                load_bytes += width
            else:
                store_bytes += width
            by_address[2 * addressed + (not is_load)] += width
        if any(lo <= at <= hi for lo, hi in spans):
            in_loops += 1
            if all_innermost or any(lo <= at <= hi for lo, hi in innermost):
                in_innermost += 1
    problems.sort()
    return KernelCode(
        instructions=instructions, code_bytes=size, code_sha256=code_identity(raw),
        scratch_loads=loads, scratch_stores=stores, scratch_load_bytes=load_bytes, scratch_store_bytes=store_bytes,
        scratch_without_width=tuple(sorted(no_width.items())),
        flat_ops=counts[FLAT], agpr_writes=counts[AGPR_WRITE], agpr_reads=counts[AGPR_READ],
        matrix_ops=counts[MATRIX], lds_ops=counts[LDS], loops=len(spans), loop_spans=tuple(spans),
        scratch_in_loops=in_loops, calls=counts[CALL], status=problems[0][1] if problems else COMPLETE,
        scratch_slot_load_bytes=by_address[0], scratch_slot_store_bytes=by_address[1],
        scratch_addressed_load_bytes=by_address[2], scratch_addressed_store_bytes=by_address[3],
        agpr_spill_copies=agpr_copies[0], agpr_accumulator_moves=agpr_copies[1],
        innermost_loops=len(innermost), scratch_in_innermost_loops=in_innermost, loop_depth_max=deepest,
        mix=with_scratch(mix, loads + stores) if mix else (0,) * len(MIX_CLASSES))


# --- code objects -------------------------------------------------------------------------------

@dataclass(frozen=True)
class KernelRange:
    name: str
    section: str          # the code it is in: formats.codeobject.CODE_SECTION (.text, or a relocatable
                          # object's executable sections laid out by code_layout)
    start: int            # offset in that code
    size: int
    private_segment_buffer: bool | None   # kernel_code_properties bit 0; None: no descriptor found
    # The registers set at entry (formats.codeobject.entry_registers); None: no descriptor (a callee: its
    # arguments may be in any register)
    entry: EntryRegisters | None = None
    # The lanes it runs in (formats.codeobject.descriptor_wavefront_size; a callee: its code object's
    # kernels', where they agree, else 32): GFX10 and later lane masks are SGPR pairs in wave64
    wavefront_size: int = 32


def kernel_ranges(elf: bytes | memoryview, functions: bool = False, *, entries: bool = True
                  ) -> tuple[memoryview, list[KernelRange]]:
    """The code of a code object (formats.codeobject.code_layout: a linked
    object's ``.text``; a relocatable object's executable sections, one
    ``.text`` or one per function, laid out) and its kernels' ranges in it:
    every STT_FUNC symbol that has a ``<name>.kd`` descriptor, from its own
    section (st_shndx) at its value; with ``functions``, every other
    STT_FUNC symbol too (callees: no descriptor, ``private_segment_buffer``
    None; the calling convention passes the buffer in s[0:3], so evidence()
    takes True for them).  A symbol in no code section gets a range outside
    the code (evidence() says so).  Raises InputError (with the offset where
    it can) on a malformed ELF.  ``entries=False``: KernelRange.entry is
    left None (report --isa reads no registers at entry: working them out
    for a quarter of a million kernels was 2% of its CPU)."""
    view = memoryview(elf)
    if not is_amdgpu_elf(view) or len(view) < 64:
        raise InputError("not an AMDGPU ELF (64-bit little-endian, e_machine 224)", container=CONTAINER, offset=0)
    try:
        return _kernel_ranges(view, functions, entries)
    except (struct.error, IndexError, ValueError) as exc:
        raise InputError(f"corrupt ELF structure ({exc})", container=CONTAINER) from None


def _kernel_ranges(view: memoryview, functions: bool, entries: bool) -> tuple[memoryview, list[KernelRange]]:
    image = ElfImage(view)
    descriptors = kernel_descriptors(image)
    layout = code_layout(image)
    if not layout:
        return view[0:0], []
    code = code_bytes(image, layout)
    relocatable = image.e_type == ET_REL
    processor = processor_name(image.e_flags & 0xFF)
    waves = {descriptor_wavefront_size(d) for d in descriptors.values()}
    callee_wave = waves.pop() if len(waves) == 1 else 32      # a function runs in its callers' wave size
    out: list[KernelRange] = []
    seen: set[str] = set()
    # .symtab (local callees are only there) before .dynsym.
    for table in sorted(image.symbol_tables(), key=lambda s: s.type != SHT_SYMTAB):
        for symbol in image.symbols(table, type=STT_FUNC):
            name, size, shndx = symbol.name, symbol.size, symbol.shndx
            descriptor = descriptors.get(name + ".kd")
            if (descriptor is None and not functions) or name in seen:
                continue
            seen.add(name)
            place = layout.get(shndx)
            if place is None:
                start = -1 - size if size else -1   # in no code section: evidence() says so
            elif relocatable:
                start = place + symbol.value        # an offset in its own section
            else:
                start = symbol.value - image.sections[shndx].addr
            psb = None if descriptor is None else bool(struct.unpack_from("<H", descriptor, 56)[0] & 1)
            entry = None if descriptor is None or not entries else entry_registers(descriptor, processor)
            wave = callee_wave if descriptor is None else descriptor_wavefront_size(descriptor)
            out.append(KernelRange(name, CODE_SECTION, start, size, psb, entry, wave))
        if out:
            break
    return code, out
