"""The ISA-evidence oracle (issue 23): per-kernel figures read from the text
``llvm-objdump -d -z`` prints, never from spillway's decoder.

Which LLVM reads a code object
  LLVM 22 (bookworm's ``llvm-objdump-22``) first; when it refuses the code
  object (gfx940/gfx941: "disassembly not yet supported for subtarget") or
  prints an undecoded word (``<unknown>``, or ``.long 0x...`` as LLVM 22
  spells it) inside any function, the sid root's LLVM 23, then LLVM 24, then
  bookworm's LLVM 19 (which still knows gfx940/gfx941).  The first that
  decodes every function completely decides; the version is recorded with
  the figures.  The sid root's tools run on this machine through the root's
  own dynamic loader and libraries (no chroot).  ``llvm-readelf-N -h`` of
  the same version names the target (the processor in its ``Flags:`` line).
  Measured on the fixtures (tests/oracle/test_isa_oracle.py keeps it so):
  LLVM 22, 23 and 24 print the same instructions (offset, length, mnemonic)
  for every function of every target they know, and LLVM 19 the same
  wherever it decodes (it does not know gfx950/gfx1250 or gfx9-4-generic,
  and prints <unknown> for clang 23/24's gfx1201 code); so the order only
  picks who answers, not the answer.

What is a function, and which are kernels
  Every ``STT_FUNC`` symbol of ``.symtab`` (``.dynsym`` when there is no
  ``.symtab``) with a non-zero size; its code is ``[st_value, st_value +
  st_size)`` in the section it names (bytes read with pyelftools).  A function
  is a kernel when a symbol ``<name>.kd`` (the 64-byte kernel descriptor)
  exists; other functions (callees) are reported as ``kind: function``.

Per function (field: rule)
  instructions     every instruction objdump prints whose address lies in the
                   range (a VOPD pair is one; ``s_nop``/``s_clause`` count;
                   undecoded words count one each)
  code_bytes       st_size
  code_sha256      SHA-256 of the range's raw bytes; "" when it holds none (no code read, no identity)
  words            the instruction lengths in 4-byte words, one digit per
                   instruction, in address order ("1212..."): the boundaries
  status           "complete"; or "undecoded word at +0xOFF" (objdump printed
                   <unknown>/.long there), "instruction crosses the end at
                   +0xOFF", "no instruction at +0xOFF" (a gap), "size 0"
  scratch_loads    mnemonics beginning ``scratch_load``, and MUBUF
                   ``buffer_load*`` whose resource (the first 4-SGPR operand
                   ``s[N:N+3]``) is a private segment buffer (below)
  scratch_stores   the same with ``scratch_store`` / ``buffer_store*``
  scratch_load_bytes, scratch_store_bytes
                   the sum of the widths the mnemonics name: tokens after the
                   prefix, split on "_": dword 4, dwordx2 8, dwordx3 12,
                   dwordx4 16, b8 1, b16 2, b32 4, b64 8, b96 12, b128 16,
                   byte/ubyte/sbyte/u8/i8 1, short/ushort/sshort/u16/i16 2
                   (d16 forms: ``short_d16_hi`` 2, ``ubyte_d16`` 1, ``d16_b16``
                   2, ``d16_hi_u8`` 1, by the same tokens); a mnemonic with
                   ``format`` or ``block`` or no width token adds nothing
  scratch_unsized  {mnemonic: count} of the scratch accesses that name no width
  flat_ops         mnemonics beginning ``flat_`` (loads, stores, atomics: may
                   reach scratch; not in the scratch counts)
  agpr_writes      ``v_accvgpr_write*``;  agpr_reads: ``v_accvgpr_read*``
  matrix_ops       ``v_mfma*``, ``v_smfmac*``, ``v_wmma*``, ``v_swmmac*``
  lds_ops          ``ds_*``
  loops            ``s_branch`` and ``s_cbranch_*`` (not ``s_cbranch_join``,
                   ``_g_fork``, ``_i_fork``) whose target, address + 4 + 4 x
                   simm16 (the printed 16-bit immediate read as signed),
                   lies in the function at or before the branch's address;
                   each such branch spans [target, branch address]
  scratch_in_loops scratch accesses (those counted in scratch_loads/stores)
                   whose address lies in at least one span, each counted once
  calls            ``s_swappc_b64``, ``s_call_b64`` and their gfx1250 names
                   ``s_swap_pc_i64``, ``s_call_i64``
  callees          for each call, the function whose start the callee address
                   reaches ("unknown" when it is not followed): ``s_getpc_b64``
                   / ``s_get_pc_i64 s[N:N+1]`` (its value: the address after
                   it), then ``s_add_u32``/``s_add_co_u32 sN, sN, LO`` and
                   ``s_addc_u32``/``s_add_co_ci_u32 sN+1, sN+1, HI`` (gfx12 puts
                   ``s_sext_i32_i16 sN+1, sN+1`` between: the high half
                   sign-extended from its bit 15), or
                   ``s_add_nc_u64 s[N:N+1], s[N:N+1], LIT64`` (the printed
                   literals), and the call's source pair ``s[N:N+1]``
                   (``s_call_*`` branches by its immediate: address + 4 + 4 x
                   simm16).  A callee's code is outside the kernel and is
                   counted only in its own record.
  private_segment_buffer
                   the 4-SGPR quads that hold the private segment buffer after
                   the entry block, e.g. ["s[0:3]", "s[8:11]"]

Derived figures (bytes per lane, the widths above)
  scratch_slot_load_bytes, scratch_slot_store_bytes
                   bytes of the scratch loads/stores whose vaddr operand is
                   printed ``off``: a fixed frame slot (spill slots,
                   constant-indexed stack objects).  vaddr: for ``buffer_*``
                   the operand before the resource quad; for ``scratch_store*``
                   and ``scratch_load_lds*`` the first operand, for other
                   ``scratch_load*`` the second
  scratch_addressed_load_bytes, scratch_addressed_store_bytes
                   the same where vaddr is a VGPR (a private array indexed at
                   run time); slot + addressed = scratch_load/store_bytes
  agpr_spill_copies, agpr_accumulator_moves
                   ``v_accvgpr_write*`` (its first operand) and
                   ``v_accvgpr_read*`` (its second) by the AGPR they copy: an
                   accumulator move when that AGPR is an accumulator, a spill
                   copy otherwise.  Accumulators: every AGPR printed as the
                   first operand of a ``v_mfma*``/``v_smfmac*`` or the fourth
                   of a ``v_mfma*`` (``a[0:15]``: a0-a15), and every AGPR a
                   ``v_accvgpr_mov_b32 aD, aS`` copies into or out of one, to
                   a fixed point.  No matrix op: every copy is a spill copy
  innermost_loops  loop spans [target, branch] holding no other span
  scratch_in_innermost_loops
                   scratch accesses inside at least one innermost span, once
  loop_depth_max   the most spans holding one address (0 without loops)

Instruction mix (issue 32)
  mix              instructions per class, each in the first that applies:
                   scratch (the accesses counted above), matrix (MATRIX_PREFIXES),
                   agpr_copy (v_accvgpr_*), valu (other v_*), lds (ds_*, lds_*),
                   vmem (buffer_, tbuffer_, global_, flat_, scratch_, image_,
                   cluster_, tensor_), smem (MIX_SMEM), branch (MIX_BRANCH),
                   waitcnt (s_waitcnt*, s_wait_*), other (MIX_OTHER_EXACT,
                   MIX_OTHER and any mnemonic not s_*), salu (every other s_*);
                   the classes add up to ``instructions``

Instruction classes and sequence digests (for libraries too large to commit)
  Each instruction gets one class, the first that applies: scratch_load,
  scratch_store (as counted above), flat, agpr_write, agpr_read, matrix, lds,
  call, loop (a branch counted in ``loops``), other.  ``sequence_digests``
  hashes "OFFSET LENGTH\n" (boundaries) and "OFFSET LENGTH CLASS\n" per
  instruction (decimal offsets from the function's start), SHA-256 cut to 16
  hex digits.

The private segment buffer (PSB) of a kernel
  ``s[0:3]`` at entry when the kernel descriptor enables it: byte 56 of
  ``<kernel>.kd`` (``kernel_code_properties``), bit 0
  (ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER).  A function (not a kernel) gets it in
  ``s[0:3]`` by the calling convention.  Through the entry block (from the
  start up to the first instruction that is a branch target inside the
  function, or up to and including the first ``s_branch``/``s_cbranch_*``/
  ``s_setpc_b64``/``s_endpgm*``) each SGPR holding a dword of the descriptor
  is followed:
    s_mov_b32 sD, sS / s_mov_b64 s[D:D+1], s[S:S+1]: D gets S's dword (or loses it)
    s_add_u32 sD, sS, X with S holding dword 0: D holds dword 0 (the wave offset added)
    s_addc_u32 sD, sS, X with S holding dword 1: D holds dword 1
    any other write of an SGPR drops what it held.  Written SGPRs: the first
    operand of ``s_*`` instructions other than compares, stores, branches,
    waits and messages (the list below; scalar atomics only with ``glc``), of
    ``v_readlane*``, ``v_readfirstlane*``, ``v_cmp*``, and ``v_cmpx*`` printed
    with three operands (GFX8/9; from GFX10 on v_cmpx writes EXEC only and
    objdump prints its two sources, no destination), when it is an SGPR, and
    the second operand of carry-writing VALU ops (``_co_``, ``addc``,
    ``subb``, ``div_scale``, ``mad_u64``, ``mad_i64``; GFX8's
    ``v_add/sub/subrev_u32_e64`` with four operands) when it is an SGPR.
  A quad s[4k:4k+3] whose four registers hold dwords 0, 1, 2, 3 is a PSB.

Compiler comments
  ``spill_comments(asm_text)`` counts, per function of the compiler's
  assembly, the ``; N-byte Folded Spill`` and ``; N-byte Folded Reload``
  comments, their bytes and the mnemonics they sit on (tests/data/isa/
  spill_comments.json).  They never appear in objdump output.  One comment
  is one spill slot access of N bytes, which can be several instructions
  (GFX10+ reload clauses: the comment sits on ``s_clause``), so compare
  bytes, not instruction counts.  Measured on the fixtures (LLVM 19-24):
  the comment bytes equal scratch_store_bytes / scratch_load_bytes for every
  kernel whose scratch traffic is spills only, on every target but gfx1250,
  where some 8-byte spill stores carry no comment.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "scripts" / "install-toolchains.sh"
DEFAULT_ROOT = Path("/var/tmp/spillway-sid-root")
PREFERENCE = (22, 23, 24, 19)      # first that decodes everything decides
ROOT_VERSIONS = (23, 24)

WIDTH_TOKENS = {
    "dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16,
    "b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16,
    "byte": 1, "ubyte": 1, "sbyte": 1, "u8": 1, "i8": 1,
    "short": 2, "ushort": 2, "sshort": 2, "u16": 2, "i16": 2,
}
NO_WIDTH_TOKENS = {"format", "block"}
NOT_LOOP_BRANCHES = {"s_cbranch_join", "s_cbranch_g_fork", "s_cbranch_i_fork"}
CLASSES = ("scratch_load", "scratch_store", "flat", "agpr_write", "agpr_read", "matrix", "lds", "call", "loop",
           "other")
CALLS = {"s_swappc_b64", "s_call_b64", "s_swap_pc_i64", "s_call_i64"}   # the last two: gfx1250's names
GETPC = {"s_getpc_b64", "s_get_pc_i64"}
ADD_LO = {"s_add_u32", "s_add_co_u32"}
ADD_HI = {"s_addc_u32", "s_add_co_ci_u32"}
MATRIX_PREFIXES = ("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")
MIX_CLASSES = ("valu", "salu", "vmem", "smem", "lds", "matrix", "scratch", "agpr_copy", "branch", "waitcnt", "other")
MIX_VMEM = ("buffer_", "tbuffer_", "global_", "flat_", "scratch_", "image_", "cluster_", "tensor_")
MIX_SMEM = ("s_load_", "s_buffer_", "s_store_", "s_scratch_", "s_atomic_", "s_dcache_", "s_memtime", "s_memrealtime",
            "s_atc_probe", "s_prefetch_", "s_gl1_inv", "s_get_waveid_in_workgroup")
MIX_BRANCH = ("s_branch", "s_cbranch_", "s_setpc_", "s_set_pc_", "s_swappc_", "s_swap_pc_", "s_call_", "s_rfe_",
              "s_subvector_loop_")
MIX_OTHER_EXACT = ("exp", "export", "s_nop", "s_trap", "s_clause", "s_delay_alu", "s_code_end", "s_icache_inv",
                   "s_inst_prefetch", "s_set_inst_prefetch_distance", "s_sethalt", "s_setkill", "s_incperflevel",
                   "s_decperflevel", "s_monitor_sleep", "s_singleuse_vdst", "s_version")
MIX_OTHER = ("s_endpgm", "s_barrier", "s_sendmsg", "s_sleep", "s_wakeup", "s_setprio", "s_ttracedata")
# s_* instructions whose first operand is not written.
NO_SGPR_DEST_PREFIXES = ("s_cmp", "s_bitcmp", "s_store", "s_buffer_store", "s_scratch_store", "s_atc_probe",
                         "s_setpc", "s_set_pc", "s_set_gpr_idx", "s_waitcnt", "s_wait_", "s_sendmsg", "s_setreg",
                         "s_branch", "s_nop", "s_sleep", "s_dcache", "s_icache", "s_endpgm", "s_barrier", "s_trap",
                         "s_setprio", "s_ttracedata", "s_incperflevel", "s_decperflevel", "s_clause", "s_delay_alu",
                         "s_setkill", "s_sethalt", "s_code_end", "s_inst_prefetch", "s_round_mode", "s_denorm_mode",
                         "s_prefetch", "s_singleuse_vdst", "s_set_vgpr_msb", "s_version", "s_wakeup",
                         "s_cbranch", "s_movreld", "s_rfe", "s_add_pc", "s_alloc_vgpr", "s_gl1_inv",
                         "s_buffer_prefetch")
SGPR_DEST_ANYWAY = ("s_sendmsg_rtn",)
SMEM_ATOMICS = ("s_atomic", "s_buffer_atomic")   # return into their first operand only with glc
CARRY_VALU = ("_co_", "addc", "subb", "div_scale", "mad_u64", "mad_i64")
# GFX8's carry-writing adds (GFX9 renamed them _co_; its v_add_u32 has no carry): printed with 4 operands.
GFX8_CARRY_VALU = ("v_add_u32_e64", "v_sub_u32_e64", "v_subrev_u32_e64")
ENTRY_END = ("s_branch", "s_cbranch_", "s_setpc_b64", "s_set_pc_i64", "s_endpgm")

_HEADER = re.compile(r"^([0-9a-fA-F]+) <(.+)>:\s*$")
_INSN = re.compile(r"^\t(?P<text>.*?)\s*//\s*(?P<addr>[0-9A-Fa-f]+):\s*(?P<words>(?:[0-9A-Fa-f]{8}(?: |$))+)"
                   r"\s*(?:<(?P<label>[^>]*)>)?\s*$")
_SGPR = re.compile(r"^s(\d+)$")
_SGPR_RANGE = re.compile(r"^s\[(\d+):(\d+)\]$")
_QUAD = re.compile(r"\bs\[(\d+):(\d+)\]")
_FOLDED = re.compile(r";\s*(\d+)-byte Folded (Spill|Reload)")


class OracleUnavailable(Exception):
    """No installed LLVM decodes this code object completely."""


# -- the LLVM tools ----------------------------------------------------------------------

def sid_root() -> Path | None:
    """The Debian sid root with LLVM 23/24 (scripts/install-toolchains.sh), when made."""
    env = os.environ.get("SPILLWAY_SID_ROOT")
    candidates = [Path(env)] if env else []
    if INSTALL.is_file():
        done = subprocess.run(["bash", str(INSTALL), "--root-path"], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip():
            candidates.append(Path(done.stdout.strip()))
    candidates.append(DEFAULT_ROOT)
    for root in candidates:
        if (root / ".spillway-ready").is_file():
            return root
    return None


def llvm_tool(name: str, version: int) -> list[str] | None:
    """argv prefix running LLVM ``version``'s ``name`` (llvm-objdump,
    llvm-readelf), or None when it is not installed here."""
    if version not in ROOT_VERSIONS:
        found = shutil.which(f"{name}-{version}")
        return [found] if found else None
    root = sid_root()
    if root is None:
        return None
    binary = root / f"usr/lib/llvm-{version}/bin/{name}"
    loader = root / "usr/lib64/ld-linux-x86-64.so.2"
    if not binary.is_file() or not loader.is_file():
        return None
    return [str(loader), "--library-path", f"{root}/usr/lib/x86_64-linux-gnu:{root}/usr/lib/llvm-{version}/lib",
            str(binary)]


def tool_version(argv: list[str]) -> str:
    text = subprocess.run([*argv, "--version"], capture_output=True, text=True).stdout
    found = re.search(r"LLVM version (\S+)", text)
    return found.group(1) if found else "unknown"


# -- the ELF side (pyelftools) --------------------------------------------------------------

@dataclass
class Function:
    name: str
    start: int                  # st_value (a virtual address)
    size: int                   # st_size
    kind: str                   # "kernel" or "function"
    code: bytes                 # the raw bytes of [start, start + size) (may be short: truncated)
    private_segment_buffer: bool   # s[0:3] holds the PSB at entry


def read_functions(path: Path) -> list[Function]:
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as handle:
        elf = ELFFile(handle)
        from elftools.elf.sections import SymbolTableSection
        table = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
        if not isinstance(table, SymbolTableSection):
            return []
        symbols = list(table.iter_symbols())
        descriptors = {}
        for sym in symbols:
            if sym.name.endswith(".kd") and sym["st_info"]["type"] == "STT_OBJECT":
                descriptors[sym.name[:-3]] = sym
        seen: dict[tuple[str, int], Function] = {}
        for sym in symbols:
            if sym["st_info"]["type"] != "STT_FUNC" or not isinstance(sym["st_shndx"], int):
                continue
            key = (sym.name, sym["st_value"])
            if key in seen:
                continue
            section = elf.get_section(sym["st_shndx"])
            code = _range_bytes(handle, section, sym["st_value"], sym["st_size"])
            kd = descriptors.get(sym.name)
            if kd is not None:
                kd_section = elf.get_section(kd["st_shndx"])
                descriptor = _range_bytes(handle, kd_section, kd["st_value"], 64)
                psb = len(descriptor) == 64 and bool(descriptor[56] & 1)
            else:
                psb = True          # the calling convention passes it in s[0:3]
            seen[key] = Function(sym.name, sym["st_value"], sym["st_size"], "kernel" if kd is not None else "function",
                                 code, psb)
    return sorted(seen.values(), key=lambda f: (f.start, f.name))


def _range_bytes(handle, section, address: int, size: int) -> bytes:
    if section["sh_type"] == "SHT_NOBITS":
        return b""
    begin = address - section["sh_addr"]
    if begin < 0 or begin > section["sh_size"]:
        return b""
    size = min(size, section["sh_size"] - begin)
    handle.seek(section["sh_offset"] + begin)
    return handle.read(size)


# -- the text side (llvm-objdump -d -z) ------------------------------------------------------

@dataclass(frozen=True)
class Insn:
    address: int
    length: int                 # bytes (4 x the words printed)
    mnemonic: str
    operands: str               # the rest of the text, as printed
    label: str                  # objdump's <sym+0x..> annotation, if any

    @property
    def undecoded(self) -> bool:
        return self.mnemonic in ("<unknown>", ".long", ".short", ".byte")


def parse_objdump(text: str) -> list[Insn]:
    """Every instruction line of ``llvm-objdump -d -z`` output, in order."""
    out = []
    for line in text.splitlines():
        if not line.startswith("\t"):
            continue
        match = _INSN.match(line)
        if not match:
            continue
        body = match.group("text").strip()
        mnemonic, _, operands = body.partition(" ")
        words = match.group("words").split()
        out.append(Insn(int(match.group("addr"), 16), 4 * len(words), mnemonic, operands.strip(),
                        match.group("label") or ""))
    return out


def run_objdump(argv: list[str], path: Path) -> tuple[bool, str]:
    done = subprocess.run([*argv, "-d", "-z", str(path)], capture_output=True, text=True)
    ok = done.returncode == 0 and "disassembly not yet supported" not in done.stderr
    return ok, done.stdout if ok else done.stderr


# -- the rules ------------------------------------------------------------------------------

def access_width(mnemonic: str, prefix: str) -> int | None:
    """Bytes the mnemonic names after ``prefix`` (None: no width named)."""
    tokens = mnemonic[len(prefix):].strip("_").split("_")
    if NO_WIDTH_TOKENS.intersection(tokens):
        return None
    for token in tokens:
        if token in WIDTH_TOKENS:
            return WIDTH_TOKENS[token]
    return None


def _sgprs(operand: str) -> list[int]:
    operand = operand.strip()
    single = _SGPR.match(operand)
    if single:
        return [int(single.group(1))]
    pair = _SGPR_RANGE.match(operand)
    if pair:
        return list(range(int(pair.group(1)), int(pair.group(2)) + 1))
    return []


def _split_operands(operands: str) -> list[str]:
    return [part.strip().split(" ")[0] for part in operands.split(",")] if operands else []


def written_sgprs(insn: Insn) -> list[int]:
    ops = _split_operands(insn.operands)
    m = insn.mnemonic
    if not ops:
        return []
    if m.startswith("s_"):
        if m.startswith(NO_SGPR_DEST_PREFIXES) and not m.startswith(SGPR_DEST_ANYWAY):
            return []
        if m.startswith(SMEM_ATOMICS) and not re.search(r"\bglc\b", insn.operands):
            return []
        return _sgprs(ops[0])
    if m.startswith("v_cmpx") and len(_split_operands(re.sub(r":\[[^\]]*\]", "", insn.operands))) < 3:
        return []      # GFX10+: v_cmpx writes EXEC only, objdump prints no destination (two sources)
    if m.startswith(("v_readlane", "v_readfirstlane", "v_cmp")):
        return _sgprs(ops[0])
    if (m.startswith("v_") and (any(part in m for part in CARRY_VALU) or (m in GFX8_CARRY_VALU and len(ops) == 4))
            and len(ops) > 1):
        return _sgprs(ops[0]) + _sgprs(ops[1])
    return []


def _literal(text: str) -> int | None:
    text = text.strip()
    if text.startswith("lit(") and text.endswith(")"):
        text = text[4:-1]
    try:
        return int(text, 0)
    except ValueError:
        return None


def branch_target(insn: Insn) -> int:
    """address + 4 + 4 x simm16 (the printed immediate read as signed 16 bits)."""
    ops = _split_operands(insn.operands)
    value = _literal(ops[0]) if ops else None
    if value is None:
        raise ValueError(f"branch without an immediate at 0x{insn.address:x}: {insn.mnemonic} {insn.operands}")
    value &= 0xFFFF
    if value & 0x8000:
        value -= 0x10000
    return insn.address + 4 + 4 * value


def is_loop_candidate(mnemonic: str) -> bool:
    return (mnemonic == "s_branch" or mnemonic.startswith("s_cbranch_")) and mnemonic not in NOT_LOOP_BRANCHES


def psb_quads(insns: list[Insn], start: int, end: int, enabled: bool) -> list[int]:
    """First SGPRs of the quads holding the private segment buffer after the
    entry block (see the module docstring)."""
    holds: dict[int, int] = {i: i for i in range(4)} if enabled else {}
    targets = set()
    for insn in insns:
        if is_loop_candidate(insn.mnemonic):
            try:
                target = branch_target(insn)
            except ValueError:
                continue
            if start < target < end:
                targets.add(target)
    for insn in insns:
        if insn.address in targets:
            break
        ops = _split_operands(insn.operands)
        m = insn.mnemonic
        written = written_sgprs(insn)
        if m in ("s_mov_b32", "s_mov_b64") and len(ops) >= 2:
            dest, source = _sgprs(ops[0]), _sgprs(ops[1])
            moved = {d: holds.get(s) for d, s in zip(dest, source)} if len(dest) == len(source) else {}
            for reg in dest:
                holds.pop(reg, None)
            holds.update({d: part for d, part in moved.items() if part is not None})
        elif m in ("s_add_u32", "s_addc_u32") and len(ops) >= 2:
            dest, source = _sgprs(ops[0]), _sgprs(ops[1])
            part = holds.get(source[0]) if len(source) == 1 else None
            for reg in dest:
                holds.pop(reg, None)
            if len(dest) == 1 and part == (0 if m == "s_add_u32" else 1):
                holds[dest[0]] = part
        else:
            for reg in written:
                holds.pop(reg, None)
        if m.startswith(ENTRY_END):
            break
    return sorted(base for base in holds if base % 4 == 0
                  and all(holds.get(base + i) == i for i in range(4)))


@dataclass
class Evidence:
    symbol: str
    kind: str
    address: int
    code_bytes: int
    code_sha256: str
    instructions: int = 0
    words: str = ""
    status: str = "complete"
    scratch_loads: int = 0
    scratch_stores: int = 0
    scratch_load_bytes: int = 0
    scratch_store_bytes: int = 0
    scratch_unsized: dict = field(default_factory=dict)
    flat_ops: int = 0
    agpr_writes: int = 0
    agpr_reads: int = 0
    matrix_ops: int = 0
    lds_ops: int = 0
    loops: int = 0
    scratch_in_loops: int = 0
    calls: int = 0
    callees: list = field(default_factory=list)
    private_segment_buffer: list = field(default_factory=list)
    scratch_slot_load_bytes: int = 0
    scratch_slot_store_bytes: int = 0
    scratch_addressed_load_bytes: int = 0
    scratch_addressed_store_bytes: int = 0
    agpr_spill_copies: int = 0
    agpr_accumulator_moves: int = 0
    innermost_loops: int = 0
    scratch_in_innermost_loops: int = 0
    loop_depth_max: int = 0
    mix: dict = field(default_factory=dict)         # instructions per MIX_CLASSES class
    listing: list = field(default_factory=list)     # [(offset, length, mnemonic)]; not stored in expected.json
    classes: list = field(default_factory=list)     # one class per instruction (CLASSES); not stored either

    def fields(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("listing", "classes", "symbol")}
        out["scratch_unsized"] = dict(sorted(self.scratch_unsized.items()))
        out["mix"] = {name: self.mix.get(name, 0) for name in MIX_CLASSES}
        return out


def scratch_kind(insn: Insn, psb: set[int]) -> tuple[str, int | None] | None:
    """("load"/"store", width or None) when the instruction is a scratch access."""
    m = insn.mnemonic
    for prefix, kind in (("scratch_load", "load"), ("scratch_store", "store")):
        if m.startswith(prefix):
            return kind, access_width(m, prefix)
    for prefix, kind in (("buffer_load", "load"), ("buffer_store", "store")):
        if m.startswith(prefix):
            quad = _QUAD.search(insn.operands)
            if quad and int(quad.group(2)) - int(quad.group(1)) == 3 and int(quad.group(1)) in psb:
                return kind, access_width(m, prefix)
            return None
    return None


_AGPR = re.compile(r"^a(?:(\d+)|\[(\d+):(\d+)\])$")


def agprs(operand: str) -> list[int]:
    """The AGPRs an operand names (``a5``, ``a[0:15]``), else none."""
    found = _AGPR.match(operand.strip())
    if not found:
        return []
    if found.group(1) is not None:
        return [int(found.group(1))]
    return list(range(int(found.group(2)), int(found.group(3)) + 1))


def vaddr_operand(insn: Insn) -> str:
    """The vaddr operand of a scratch access as printed ("off" or a VGPR)."""
    ops = _split_operands(insn.operands)
    m = insn.mnemonic
    if m.startswith("buffer_"):
        for index, op in enumerate(ops):
            if _SGPR_RANGE.match(op) and index > 0:
                return ops[index - 1]
        return "?"
    if m.startswith("scratch_store") or m.startswith("scratch_load_lds"):
        return ops[0] if ops else "?"
    return ops[1] if len(ops) > 1 else "?"


def agpr_split(insns: list[Insn]) -> tuple[int, int]:
    """(spill copies, accumulator moves) by the rule of the module docstring."""
    accumulators: set[int] = set()
    movs = []
    for insn in insns:
        ops = _split_operands(insn.operands)
        m = insn.mnemonic
        if m.startswith(("v_mfma", "v_smfmac")) and ops:
            accumulators.update(agprs(ops[0]))
            if m.startswith("v_mfma") and len(ops) > 3:
                accumulators.update(agprs(ops[3]))
        elif m.startswith("v_accvgpr_mov") and len(ops) >= 2:
            movs.append((agprs(ops[0]), agprs(ops[1])))
    while accumulators:
        grown = set(accumulators)
        for destination, source in movs:
            if grown.intersection(destination) or grown.intersection(source):
                grown.update(destination + source)
        if grown == accumulators:
            break
        accumulators = grown
    spill = moves = 0
    for insn in insns:
        ops = _split_operands(insn.operands)
        if insn.mnemonic.startswith("v_accvgpr_write"):
            copied = agprs(ops[0]) if ops else []
        elif insn.mnemonic.startswith("v_accvgpr_read"):
            copied = agprs(ops[1]) if len(ops) > 1 else []
        else:
            continue
        if copied and copied[0] in accumulators:
            moves += 1
        else:
            spill += 1
    return spill, moves


def evidence(function: Function, all_insns: list[Insn], starts: dict[int, str]) -> Evidence:
    """The figures of one function from objdump's instructions (all of the
    section, in address order) and the function starts (address -> name)."""
    start, end = function.start, function.start + function.size
    found = Evidence(function.name, function.kind, start, function.size,
                     hashlib.sha256(function.code).hexdigest() if function.code else "")
    if function.size == 0:
        found.status = "size 0"
        return found
    first = bisect.bisect_left(all_insns, start, key=lambda i: i.address)
    last = bisect.bisect_left(all_insns, end, lo=first, key=lambda i: i.address)
    insns = all_insns[first:last]
    expected = start
    for insn in insns:
        if found.status == "complete":
            if insn.address != expected:
                found.status = f"no instruction at +0x{expected - start:x}"
            elif insn.undecoded:
                found.status = f"undecoded word at +0x{insn.address - start:x}"
            elif insn.address + insn.length > end:
                found.status = f"instruction crosses the end at +0x{insn.address - start:x}"
        expected = insn.address + insn.length
    if found.status == "complete" and expected < end:
        found.status = f"no instruction at +0x{expected - start:x}"
    if len(function.code) < function.size and found.status == "complete":
        found.status = f"truncated: {len(function.code)} of {function.size} bytes in the file"
    found.instructions = len(insns)
    found.words = "".join(str(i.length // 4) for i in insns)
    found.listing = [(i.address - start, i.length, i.mnemonic) for i in insns]
    psb = set(psb_quads(insns, start, end, function.private_segment_buffer))
    found.private_segment_buffer = [f"s[{b}:{b + 3}]" for b in sorted(psb)]
    spans = []
    for insn in insns:
        if is_loop_candidate(insn.mnemonic):
            back = branch_target(insn)
            if start <= back <= insn.address:
                spans.append((back, insn.address))
    found.loops = len(spans)
    innermost = [a for a in spans if not any(b != a and a[0] <= b[0] and b[1] <= a[1] for b in spans)]
    found.innermost_loops = len(innermost)
    found.loop_depth_max = max((sum(lo <= at <= hi for lo, hi in spans) for at, _ in spans), default=0)
    found.agpr_spill_copies, found.agpr_accumulator_moves = agpr_split(insns)
    unsized: Counter = Counter()
    pc_pairs: dict[int, int] = {}      # SGPR of an s_getpc_b64 pair -> the address it holds
    loop_branches = {hi for _, hi in spans}
    for insn in insns:
        m = insn.mnemonic
        access = scratch_kind(insn, psb)
        found.classes.append(instruction_class(insn, access, insn.address in loop_branches))
        mixed = mix_class(m, bool(access))
        found.mix[mixed] = found.mix.get(mixed, 0) + 1
        if access:
            kind, width = access
            where = "slot" if vaddr_operand(insn) == "off" else "addressed"
            if kind == "load":
                found.scratch_loads += 1
                found.scratch_load_bytes += width or 0
            else:
                found.scratch_stores += 1
                found.scratch_store_bytes += width or 0
            name = f"scratch_{where}_{kind}_bytes"
            setattr(found, name, getattr(found, name) + (width or 0))
            if width is None:
                unsized[m] += 1
            if any(lo <= insn.address <= hi for lo, hi in spans):
                found.scratch_in_loops += 1
            if any(lo <= insn.address <= hi for lo, hi in innermost):
                found.scratch_in_innermost_loops += 1
        if m.startswith("flat_"):
            found.flat_ops += 1
        elif m.startswith("v_accvgpr_write"):
            found.agpr_writes += 1
        elif m.startswith("v_accvgpr_read"):
            found.agpr_reads += 1
        elif m.startswith(MATRIX_PREFIXES):
            found.matrix_ops += 1
        elif m.startswith("ds_"):
            found.lds_ops += 1
        if pc_pairs or m in GETPC:
            _follow_call_address(insn, pc_pairs)
        if m in CALLS:
            found.calls += 1
            ops = _split_operands(insn.operands)
            callee: int | None
            if m.startswith("s_call"):
                callee = branch_target(Insn(insn.address, 4, m, ", ".join(ops[1:]), ""))
            else:
                regs = _sgprs(ops[1]) if len(ops) > 1 else []
                callee = pc_pairs.get(regs[0]) if regs else None
            found.callees.append(starts.get(callee, f"0x{callee:x}") if callee is not None else "unknown")
    found.scratch_unsized = dict(unsized)
    return found


def instruction_class(insn: Insn, access: tuple[str, int | None] | None, closes_loop: bool) -> str:
    """The class of one instruction (CLASSES), by the rules of the fields."""
    m = insn.mnemonic
    if access:
        return "scratch_" + access[0]
    if m.startswith("flat_"):
        return "flat"
    if m.startswith("v_accvgpr_write"):
        return "agpr_write"
    if m.startswith("v_accvgpr_read"):
        return "agpr_read"
    if m.startswith(MATRIX_PREFIXES):
        return "matrix"
    if m.startswith("ds_"):
        return "lds"
    if m in CALLS:
        return "call"
    if closes_loop:
        return "loop"
    return "other"


def mix_class(mnemonic: str, scratch: bool) -> str:
    """The instruction-mix class of one instruction (the module docstring's
    rule); ``scratch``: it is a counted scratch access."""
    m = mnemonic
    if scratch:
        return "scratch"
    if m.startswith(MATRIX_PREFIXES):
        return "matrix"
    if m.startswith("v_accvgpr_"):
        return "agpr_copy"
    if m.startswith("v_"):
        return "valu"
    if m.startswith(("ds_", "lds_")):
        return "lds"
    if m.startswith(MIX_VMEM):
        return "vmem"
    if m in MIX_OTHER_EXACT or not m.startswith("s_"):
        return "other"
    if m.startswith(MIX_SMEM):
        return "smem"
    if m.startswith(MIX_BRANCH):
        return "branch"
    if m.startswith(("s_waitcnt", "s_wait_")):
        return "waitcnt"
    if m.startswith(MIX_OTHER):
        return "other"
    return "salu"


def sequence_digests(found: Evidence) -> tuple[str, str]:
    """SHA-256 (first 16 hex digits) of the function's instruction boundaries,
    "OFFSET LENGTH\n" per instruction (decimal, offset from the function's
    start), and of its classes, "OFFSET LENGTH CLASS\n"."""
    bounds, classes = hashlib.sha256(), hashlib.sha256()
    for (offset, length, _), kind in zip(found.listing, found.classes):
        bounds.update(f"{offset} {length}\n".encode())
        classes.update(f"{offset} {length} {kind}\n".encode())
    return bounds.hexdigest()[:16], classes.hexdigest()[:16]


def _follow_call_address(insn: Insn, pairs: dict[int, int]) -> None:
    """Track s_getpc_b64/s_get_pc_i64 pairs through the adds of a call address."""
    ops = _split_operands(insn.operands)
    m = insn.mnemonic
    if m in GETPC and ops:
        regs = _sgprs(ops[0])
        if len(regs) == 2:
            pairs[regs[0]] = insn.address + insn.length
        return
    if m == "s_sext_i32_i16" and len(ops) == 2:
        dest = _sgprs(ops[0])
        if len(dest) == 1 and dest[0] - 1 in pairs and _sgprs(ops[1]) == dest:
            # gfx12: the high half of the PC pair sign-extended from bit 47
            held = pairs[dest[0] - 1]
            high = (held >> 32) & 0xFFFF
            high = high - 0x10000 if high & 0x8000 else high
            pairs[dest[0] - 1] = (held & 0xFFFFFFFF) | ((high & 0xFFFFFFFF) << 32)
            return
    if (m in ADD_LO or m in ADD_HI or m == "s_add_nc_u64") and len(ops) == 3:
        dest = _sgprs(ops[0])
        literal = _literal(ops[2])
        if dest and literal is not None and _sgprs(ops[1]) == dest:
            if m == "s_add_nc_u64":
                base, addend = dest[0], literal
            elif m in ADD_LO:
                base, addend = dest[0], literal & 0xFFFFFFFF
            else:
                base, addend = dest[0] - 1, (literal & 0xFFFFFFFF) << 32
            if base in pairs and (m == "s_add_nc_u64") == (len(dest) == 2):
                pairs[base] = (pairs[base] + addend) & 0xFFFFFFFFFFFFFFFF
                return
    for reg in written_sgprs(insn):
        pairs.pop(reg, None)
        pairs.pop(reg - 1, None)


# -- one code object ------------------------------------------------------------------------

@dataclass
class CodeObjectEvidence:
    path: Path
    target: str
    llvm: int                   # the LLVM version whose objdump decided
    llvm_version: str
    functions: list[Evidence]

    def document(self) -> dict:
        return {"target": self.target, "llvm": self.llvm, "llvm_version": self.llvm_version,
                "sha256": hashlib.sha256(self.path.read_bytes()).hexdigest(),
                "functions": {e.symbol: e.fields() for e in self.functions}}


# The committed fixture sets: kernels.cpp's (tests/data/isa/build.sh) and rare.cpp's, the rarely used
# instructions of issue 31 (tests/data/isa/rare/build.sh); each folder holds co/*.co and expected.json
# (scripts/generate-isa-expectations.py).
FIXTURE_FOLDERS = {"": REPO / "tests" / "data" / "isa", "rare/": REPO / "tests" / "data" / "isa" / "rare"}


def committed_fixtures(prefixes: tuple[str, ...] = tuple(FIXTURE_FOLDERS)) -> dict[str, tuple[Path, dict]]:
    """Every committed fixture of the sets named (prefix of its id: "" for
    kernels.cpp's, "rare/"): id -> (its path, its recorded oracle figures)."""
    import json

    out = {}
    for prefix in prefixes:
        folder = FIXTURE_FOLDERS[prefix]
        for name, recorded in sorted(json.loads((folder / "expected.json").read_text())["fixtures"].items()):
            out[prefix + name] = (folder / "co" / name, recorded)
    return out


def readelf_target(argv: list[str], path: Path) -> str:
    text = subprocess.run([*argv, "-h", str(path)], capture_output=True, text=True).stdout
    flags = re.search(r"Flags:\s+(.*)", text)
    tokens = [t.strip() for t in flags.group(1).split(",")] if flags else []
    return tokens[1] if len(tokens) > 1 else "unknown"


def read_code_object(path: Path, versions: tuple[int, ...] = PREFERENCE) -> CodeObjectEvidence:
    """Evidence of every function, from the first LLVM (in ``versions``
    order) that decodes all of them."""
    functions = read_functions(path)
    starts = {f.start: f.name for f in functions}
    tried = []
    for version in versions:
        argv = llvm_tool("llvm-objdump", version)
        if argv is None:
            tried.append(f"LLVM {version}: not installed")
            continue
        ok, text = run_objdump(argv, path)
        if not ok:
            tried.append(f"LLVM {version}: {text.strip().splitlines()[-1] if text.strip() else 'failed'}")
            continue
        insns = sorted(parse_objdump(text), key=lambda i: i.address)
        found = [evidence(f, insns, starts) for f in functions]
        undecoded = [e for e in found if e.status.startswith("undecoded")]
        if undecoded:
            tried.append(f"LLVM {version}: {undecoded[0].symbol}: {undecoded[0].status}")
            continue
        readelf = llvm_tool("llvm-readelf", version)
        target = readelf_target(readelf, path) if readelf else "unknown"
        return CodeObjectEvidence(path, target, version, tool_version(argv), found)
    raise OracleUnavailable(f"{path}: no LLVM decodes it completely ({'; '.join(tried)})")


# -- the compiler's own spill comments ----------------------------------------------------------

def spill_comments(asm: str) -> dict[str, dict]:
    """Per function of an assembly file: Folded Spill/Reload comment counts,
    bytes, and the mnemonics they sit on.  One comment stands for one spill
    or reload of N bytes, which may take several instructions: on GFX10+ a
    multi-dword reload is an ``s_clause`` whose line carries the comment,
    counted here on the clause's first instruction."""
    out: dict[str, dict] = {}
    current = None
    lines = asm.splitlines()
    for number, line in enumerate(lines):
        label = re.match(r"^([A-Za-z_.$][\w.$]*):", line)
        if label and not label.group(1).startswith(".L"):
            current = label.group(1)
            continue
        if current is None:
            continue
        if line.strip().startswith(".Lfunc_end"):
            current = None
            continue
        code = line.split(";", 1)[0].split()
        for size, what in _FOLDED.findall(line):
            kind = "spill" if what == "Spill" else "reload"
            entry = out.setdefault(current, {"spill": 0, "spill_bytes": 0, "spill_on": {},
                                             "reload": 0, "reload_bytes": 0, "reload_on": {}})
            mnemonic = code[0] if code else "?"
            if mnemonic == "s_clause":
                following = (other.split(";", 1)[0].split() for other in lines[number + 1:])
                mnemonic = next((words[0] for words in following if words), "?")
            entry[kind] += 1
            entry[kind + "_bytes"] += int(size)
            entry[kind + "_on"][mnemonic] = entry[kind + "_on"].get(mnemonic, 0) + 1
    for entry in out.values():
        entry["spill_on"] = dict(sorted(entry["spill_on"].items()))
        entry["reload_on"] = dict(sorted(entry["reload_on"].items()))
    return out


def _main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "spill-comments":
        folder = Path(argv[1])
        document = {path.name.removesuffix(".s"): spill_comments(path.read_text())
                    for path in sorted(folder.glob("*.s"))}
        json.dump(document, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
        return 0
    if len(argv) >= 2 and argv[0] == "show":
        for name in argv[1:]:
            found = read_code_object(Path(name))
            json.dump({name: found.document()}, sys.stdout, indent=1)
            sys.stdout.write("\n")
        return 0
    sys.stderr.write("usage: python3 -m support.isa_oracle spill-comments ASM_DIR | show CODE_OBJECT...\n")
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
