#!/usr/bin/env python3
"""Write checker/spillway/isa/tables/operands/<family>.json: each opcode's
register operands (bit field, register file, width in 32-bit registers,
def/use), learnt from LLVM's disassembler and LLVM's instruction descriptors,
regenerated, not edited.

How each fact is found (the opcode tables, tables/<family>.json, say which
rows exist; scripts/generate-isa-tables.py is reused for its probes):

- The row's instruction: the opcode value with the plain operand fills the
  opcode generator uses, then its seeded random operands, given to
  ``llvm-mc --disassemble -show-inst``; the probes LLVM prints under the
  row's mnemonic with the row's length are the bases (up to BASES, the
  first plain).  ``-show-inst`` prints the MCInst record and every operand,
  registers with their full width (``Reg:VGPR4_VGPR5``), outs first, then
  ins; a tied operand is printed again where its in sits.
- Defs: the first NumDefs operands of the record, NumDefs read from LLVM's
  MCInstrDesc table in the libLLVM the llvm-mc runs on (32-byte entries in
  reverse opcode order: opcode u16, operands u16, defs u8; located by the
  opcode numbers -show-inst prints and checked against every record seen:
  a record with fewer printed operands than NumDefs is a fault).  An in
  that repeats a def's field (tied: v_mac, v_fmac, v_writelane's vdst_in,
  MUBUF and DS d16 loads, s_addk) makes that def "ud" (used and defined);
  so do, by the ISA manuals, destinations kept with no tied in LLVM shows
  (KEPT_UNTIED: s_bitset, s_cmov, FLAT/global/scratch d16 loads) and, where
  op_sel's destination bit is set, a 16-bit VOP3 result (GFX9/GFX10: the
  high half written, "ud_when"; the bit found by the flip that makes LLVM
  print op_sel's destination element).
- Fields: every operand bit of each base flipped alone: a bit whose flip
  changes only the number of one register operand (same file, same width)
  belongs to that operand's field; one that moves it between VGPRs and
  AGPRs is its acc bit; one that moves it between a VGPR and an SGPR or
  constant is the top bit of a 9-bit source; one that changes its width is a
  width bit; one that changes the list of register operands under the same
  mnemonic (an atomic's GLC/SC0/TH return bit) selects another form, probed
  as a row of its own.  The field is the run of bits found; number =
  value x scale + offset, scale and offset from the flips (SMEM's sbase
  holds the SGPR / 2, MUBUF's srsrc / 4), checked on every base.
- Widths that depend on fields (MIMG dmask, tfe/lwe, d16, ...): every
  combination of the width bits probed (at most 2**MAX_WIDTH_BITS), the
  width per combination stored.
- Registers by name: LLVM 19 (gfx940's) prints numbers (``Reg:5761``); they
  are named at generation time from that LLVM's own disassembler
  (register_names: NAME_PROBES' register fields swept, each number read
  beside the name printed), and a number it lacks stops the run.
- Special registers (vcc, exec, m0, flat_scratch, ttmp, null), constants and
  literals are not operands here.  A numbered SGPR is s0..s(limit-1); the
  limit is the family's (gfx8/9: 102 -- s102 and up name flat_scratch and
  xnack_mask --; gfx10 and later: 106).

  python3 scripts/generate-isa-operands.py [--check [--only=ENCODING,...]] [FAMILY ...]

``--check`` re-derives the tables and says which differ from the committed
ones (exit 1), writing nothing; ``--only=`` limits it to some encodings (a
whole family takes minutes, an encoding of a few dozen rows seconds).

Rows LLVM decodes but whose operands this cannot read (no base, a field
that is not one run of bits, flips that disagree) are listed on stderr and
left out; spillway.isa.operands answers None for them (the caller marks the
kernel partial).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import struct
import subprocess
import sys
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "checker"))

from spillway import atomic  # noqa: E402
from spillway.isa.encodings import FAMILIES, LAYOUTS, Encoding  # noqa: E402

_spec = importlib.util.spec_from_file_location("generate_isa_tables", ROOT / "scripts" / "generate-isa-tables.py")
assert _spec and _spec.loader
tables = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tables)

OUT = ROOT / "checker" / "spillway" / "isa" / "tables" / "operands"
BASES = 3                 # probes per row whose bits are flipped
RANDOM_BASES = 8          # random operand fills tried for bases
MAX_WIDTH_BITS = 8
MAX_SHAPES = 4            # operand lists one row's bases may show (saddr or "off", lds, offen/idxen)
# Destinations that keep their old value (in part, or where a condition fails) with no tied in LLVM
# shows: s_bitset's tied in is counted by its descriptor (S_BITSET0_B32 has 3 operands, 2 printed)
# but not printed (the ISA manual: "D.u[S0.u[4:0]] = 0"); LLVM does not tie s_cmov/s_cmovk at all
# (the manual: "if (SCC) D = S0", D kept otherwise); FLAT, global and scratch D16 loads write 16 bits
# and keep the other half (the manuals' D16 loads; LLVM's code generator ties them), but LLVM's
# disassembler builds their MCInst without the tied input it adds to the MUBUF and DS D16 loads.
KEPT_UNTIED = re.compile(r"^(s_bitset[01]_|s_cmov_|s_cmovk_|(flat|global|scratch)_load_\w*d16)")
# GFX10 and later run wave32 or wave64; llvm-mc disassembles wave32 unless told otherwise, so a lane
# mask (a VOP3 compare's sdst, v_cndmask's mask, a carry out or in, v_div_scale's sdst) is one SGPR in
# the rows.  Those encodings' SGPR operands of one register are probed again in wave64 (wave64_widths).
WAVE64_ENCODINGS = frozenset(("VOP1", "VOP2", "VOP3", "VOP3P", "VOPC"))
WAVE64_ATTR = "-mattr=+wavefrontsize64"
WAVE64_PROBE = 4                    # the SGPR probed (s4), and s5 to learn the pair's alignment
SGPR_LIMIT = {"gfx9": 102}          # layout -> numbered SGPRs; others 106
REG = re.compile(r"^(VGPR|AGPR|SGPR)(\d+)$")
HALF = re.compile(r"^(VGPR)(\d+)_(LO16|HI16)$")   # a true16 operand (GFX11 and later): one half of a VGPR
_INST = re.compile(r"<MCInst #(\d+) (\S+)")
_OP_SEL = re.compile(r"\bop_sel:\[([01,]+)\]")
# The ISA manuals name an opcode's result type first (V_MAD_U32_U16 writes 32 bits, V_MAD_U16 16).
_FIRST_TYPE = re.compile(r"_[fiub](16|32|64)(?=_|$)")
_OPERAND = re.compile(r"<MCOperand (Reg|Imm|Expr|FPImm|Inst|SFPImm|DFPImm):?([^>]*)>")


class Printed(NamedTuple):
    text: str
    mnemonic: str
    length: int
    number: int                      # MCInst opcode number
    record: str                      # MCInst record name
    operands: tuple[str, ...]        # "Reg:VGPR0_VGPR1", "Imm:0", ...


# -- LLVM -----------------------------------------------------------------------------------------

def show_inst(command: list[str], cpu: str, probes: list[tuple[int, int]], named: bool = True) -> list[Printed | None]:
    """What LLVM prints for each probe; ``named``: registers by LLVM's name
    (``Reg:VGPR4_VGPR5``) also where its -show-inst prints only their number
    (LLVM 19: ``Reg:5761``), through register_names."""
    out: list[Printed | None] = []
    for first in range(0, len(probes), 20000):
        out.extend(_show_batch(command, cpu, probes[first:first + 20000]))
    if named and any(p is not None and any(_numbered(o) for o in p.operands) for p in out):
        names = register_names(tuple(command), cpu)
        out = [None if p is None else p._replace(operands=tuple(_name(o, names, p) for o in p.operands))
               for p in out]
    return out


def _numbered(operand: str) -> bool:
    return operand.startswith("Reg:") and operand[4:].isdigit()


def _name(operand: str, names: dict[int, str], printed: Printed) -> str:
    if not _numbered(operand):
        return operand
    number = int(operand[4:])
    if number not in names:
        sys.exit(f"llvm-mc: register #{number} of {printed.record} ({printed.text}) is not among the "
                 f"{len(names)} register_names found: add a probe that prints it")
    return "Reg:" + names[number]


# Register names where -show-inst prints numbers (LLVM 19): per probe, an instruction assembled from text,
# then each field swept over all its values (bit shift, width), the name read from the operand the
# disassembler prints at that position and the number from the MCInst operand of that index.  The
# disassembler also names the registers the assembler refuses (gfx90a and later: v[1:2], a[1:3]).
NAME_PROBES: tuple[tuple[str, tuple[tuple[int, int, int, int], ...]], ...] = (
    ("v_mov_b32_e32 v0, v0", ((17, 8, 0, 0), (0, 9, 1, 1))),                 # VOP1 vdst, src0
    ("s_mov_b32 s0, s0", ((16, 7, 0, 0), (0, 8, 1, 1))),                      # SOP1 sdst, ssrc0
    ("s_mov_b64 s[0:1], s[0:1]", ((16, 7, 0, 0), (0, 8, 1, 1))),
    ("v_lshlrev_b64 v[0:1], 0, v[0:1]", ((0, 8, 0, 0), (41, 9, 2, 2))),      # VOP3 vdst, src1
    ("v_accvgpr_write_b32 a0, v0", ((0, 8, 0, 0),)),
    ("v_accvgpr_read_b32 v0, a0", ((32, 9, 1, 1),)),
    *((f"global_load_{width} {file}{regs}, v[0:1], off", ((56, 8, 0, 0), (32, 8, 1, 1)))   # FLAT vdst, vaddr
      for width, regs in (("dword", "0"), ("dwordx2", "[0:1]"), ("dwordx3", "[0:2]"), ("dwordx4", "[0:3]"))
      for file in "va"),
    *((f"s_load_{width} s{regs}, s[0:1], 0x0", ((6, 7, 0, 0), (0, 6, 1, 1)))             # SMEM sdata, sbase
      for width, regs in (("dword", "0"), ("dwordx2", "[0:1]"), ("dwordx4", "[0:3]"), ("dwordx8", "[0:7]"),
                          ("dwordx16", "[0:15]"))),
    ("buffer_load_dword v0, off, s[0:3], 0", ((48, 5, 2, 1),)),                # MUBUF srsrc
    *((f"{mfma} {file}{dst}, {src}, {src}, {file}{dst}", ((0, 8, 0, 0), (50, 9, 3, 3)))   # MFMA vdst, srcC
      for mfma, dst, src in (("v_mfma_f64_16x16x4_f64", "[0:7]", "v[0:1]"),
                             ("v_mfma_f32_16x16x1_4b_f32", "[0:15]", "v0"),
                             ("v_mfma_f32_32x32x1_2b_f32", "[0:31]", "v0"))
      for file in "va"),
)
_TOKEN = re.compile(r"^([vas])(?:(\d+)|\[(\d+):(\d+)\])$")


def _register_name(token: str) -> str:
    """LLVM's record name of a register objdump prints as ``token``: v[4:5]
    is VGPR4_VGPR5; special registers (vcc, ttmp[0:1]) keep their token."""
    match = _TOKEN.match(token)
    if not match:
        return token
    prefix = {"v": "VGPR", "a": "AGPR", "s": "SGPR"}[match.group(1)]
    first = int(match.group(2) or match.group(3))
    last = int(match.group(2) or match.group(4))
    return "_".join(f"{prefix}{n}" for n in range(first, last + 1))


@lru_cache(maxsize=None)
def register_names(command: tuple[str, ...], cpu: str) -> dict[int, str]:
    """Register number -> LLVM's name, learnt from that llvm-mc (its
    numbering is the build's own): NAME_PROBES assembled, each field swept,
    every number seen under one name and every numbered register's name
    under one number (else a fault)."""
    run = tables._run(list(command), ["-show-encoding", f"-mcpu={cpu}"], "\n".join(t for t, _f in NAME_PROBES) + "\n")
    encoded = [bytes(int(x, 16) for x in m.group(2).split(",")) for m in map(tables.LINE.match, run.stdout.splitlines())
               if m]
    if len(encoded) != len(NAME_PROBES):
        sys.exit(f"llvm-mc {cpu}: {len(encoded)} of {len(NAME_PROBES)} register-name probes assembled: "
                 f"{run.stderr[:300]}")
    probes, owners = [], []
    for (_text, fields), data in zip(NAME_PROBES, encoded):
        base = int.from_bytes(data, "little")
        for shift, width, position, index in fields:
            for value in range(1 << width):
                if width == 9 and value in tables._MARKERS9:
                    continue            # a literal, DPP or SDWA: other operands
                probes.append((base & ~(((1 << width) - 1) << shift) | value << shift, len(data) // 4))
                owners.append((position, index))
    names: dict[int, str] = {}
    numbers: dict[str, int] = {}
    for (position, index), printed in zip(owners, show_inst(list(command), cpu, probes, named=False)):
        if printed is None or index >= len(printed.operands) or not _numbered(printed.operands[index]):
            continue                    # an inline constant, or not decoded
        printed_operands = printed.text.partition(" ")[2].split(", ")
        # LLVM 19 notes an operand of another class: "s0/*Invalid register, operand has ... class*/"
        name = _register_name(printed_operands[position].split()[0].partition("/*")[0])
        number = int(printed.operands[index][4:])
        if names.setdefault(number, name) != name:
            sys.exit(f"llvm-mc {cpu}: register #{number} printed as {names[number]} and as {name}")
        if REG.match(name.split("_")[0]) and numbers.setdefault(name, number) != number:
            sys.exit(f"llvm-mc {cpu}: {name} is register #{numbers[name]} and #{number}")
    return names


def _show_batch(command: list[str], cpu: str, batch: list[tuple[int, int]]) -> list[Printed | None]:
    lines = []
    for index, (bits, words) in enumerate(batch):
        data = (tables.MARKER | index).to_bytes(4, "little") + tables.probe_bytes(bits, words)
        lines.append(" ".join(f"0x{b:02x}" for b in data))
    env = dict(os.environ, LLVM_DISABLE_SYMBOLIZATION="1")
    run = subprocess.run(command + ["--disassemble", "-show-encoding", "-show-inst", f"-mcpu={cpu}",
                                    "-triple=amdgcn-amd-amdhsa"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, check=False, env=env)
    if run.returncode != 0 and "Stack dump" in run.stderr:
        if len(batch) == 1:
            return [None]
        half = len(batch) // 2
        return _show_batch(command, cpu, batch[:half]) + _show_batch(command, cpu, batch[half:])
    warned: dict[int, list[int]] = defaultdict(list)
    for match in tables.WARNING.finditer(run.stderr):
        warned[int(match.group(1)) - 1].append(int(match.group(2)))
    groups: dict[int, list[list]] = {}
    current = -1
    entry: list | None = None
    for line in run.stdout.splitlines():
        match = tables.LINE.match(line)
        if match:
            text, raw = match.groups()
            data = bytes(int(x, 16) for x in raw.split(",") if x)
            word = int.from_bytes(data, "little") if len(data) == 4 else -1
            entry = [text, len(data), -1, "", []]
            if word & 0xFFFF0000 == tables.MARKER and (word & 0xFFFF) == current + 1:
                current += 1
                groups[current] = []
                entry = None
            elif current >= 0:
                groups[current].append(entry)
            continue
        if entry is None:
            continue
        inst = _INST.search(line)
        if inst:
            entry[2], entry[3] = int(inst.group(1)), inst.group(2)
        for operand in _OPERAND.finditer(line):
            entry[4].append(f"{operand.group(1)}:{operand.group(2)}")
    if len(groups) != len(batch):
        sys.exit(f"llvm-mc {cpu}: {len(groups)} markers of {len(batch)} came back; {run.stderr[:300]}")
    results: list[Printed | None] = []
    for index, (_bits, words) in enumerate(batch):
        columns = warned.get(index, [])
        if tables.PROBE_COLUMN in columns or not groups[index]:
            results.append(None)
            continue
        after = sum(e[1] for e in groups[index][1:]) + 4 * sum(c > tables.PROBE_COLUMN for c in columns)
        text, _length, number, record, operands = groups[index][0]
        results.append(Printed(text, text.split()[0], 4 * (words + tables.PADDING) - after, number, record,
                               tuple(operands)))
    return results


@lru_cache(maxsize=None)
def descriptors(major: int) -> dict[int, tuple[int, int]]:
    """Opcode number -> (operands, defs) from LLVM's MCInstrDesc table in
    libLLVM-<major>.so: 32-byte entries, the last opcode first.  Found from
    the V_MOV_B32_e32 records the host's llvm-mc prints (opcode, 2 operands,
    1 def, its neighbours one apart); the caller checks every record."""
    root = tables.sid_root() if tables.llvm_mc(major)[0] == "chroot" else ""
    library = Path(f"{root}/usr/lib/x86_64-linux-gnu/libLLVM-{major}.so")
    data = library.read_bytes()
    probe = show_inst(tables.llvm_mc(major), "gfx900", [(0x7E000300, 1)], named=False)[0]   # v_mov_b32_e32 v0, v0
    assert probe is not None and probe.record.startswith("V_MOV_B32_e32"), probe
    # LLVM 19 and 22: opcode u16, operands u16, defs u8; LLVM 24: opcode u32, operands u16, defs u8.
    for layout in ("<HHB", "<IHB"):
        anchor = struct.pack(layout, probe.number, 2, 1)
        at = -1
        for match in re.finditer(re.escape(anchor), data):
            a = match.start()
            if (struct.unpack_from(layout[:2], data, a - 32)[0] == probe.number + 1
                    and struct.unpack_from(layout[:2], data, a + 32)[0] == probe.number - 1):
                at = a
                break
        if at >= 0:
            break
    if at < 0:
        sys.exit(f"{library}: no MCInstrDesc table found")
    start = at + 32 * probe.number          # opcode 0's entry: the table's last
    out = {}
    for number in range(0, 1 << 17):
        a = start - 32 * number
        if a < 0:
            break
        opcode, operands, defs = struct.unpack_from(layout, data, a)
        if opcode != number:
            break
        out[number] = (operands, defs)
    return out


# -- operands of one probe --------------------------------------------------------------------------

def registers(printed: Printed) -> list[tuple[int, str, int, int, str] | None]:
    """Per MCInst operand: (index, file, first, units, half) for numbered
    VGPR/AGPR/SGPR operands, None for others; half is "" or, for a true16
    operand (``VGPR1_HI16``: v1.h), "LO16" or "HI16" (one unit: the VGPR
    it is half of)."""
    out: list[tuple[int, str, int, int, str] | None] = []
    for index, operand in enumerate(printed.operands):
        kind, _, name = operand.partition(":")
        half = HALF.match(name) if kind == "Reg" else None
        if half:
            out.append((index, "v", int(half.group(2)), 1, half.group(3)))
            continue
        parts = name.split("_") if kind == "Reg" else []
        found = [REG.match(p) for p in parts]
        if parts and all(found):
            files = {m.group(1) for m in found if m}
            numbers = [int(m.group(2)) for m in found if m]
            if len(files) == 1 and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
                out.append((index, {"VGPR": "v", "AGPR": "a", "SGPR": "s"}[files.pop()], numbers[0], len(numbers),
                            ""))
                continue
        out.append(None)
    return out


def _registers_named(printed: Printed) -> tuple[str, ...]:
    return tuple(o for o in printed.operands if o.startswith("Reg:"))


def shape(printed: Printed) -> tuple:
    """What must stay for two probes to be the same form: the mnemonic and
    the number of MCInst operands."""
    return printed.mnemonic, len(printed.operands)


class Learnt(NamedTuple):
    fields: dict[int, set[int]]          # operand index -> bits of its number
    top: dict[int, set[int]]             # operand index -> bits moving it between a VGPR and a scalar
    acc: dict[int, set[int]]             # operand index -> bits moving it between VGPR and AGPR
    width: dict[int, set[int]]           # operand index -> bits changing its width
    forms: set[int]                      # bits that change the form (operand list) under the same mnemonic
    steps: dict[int, set[tuple[int, int]]]   # operand index -> (bit, change of its number)
    seen: dict[int, list[tuple[int, str, int]]]   # operand index -> (probe bits, file, number) of every probe
    halves: dict[int, set[int]]          # operand index -> bits moving it between a VGPR's low and high half
    high_dst: dict[int, int]             # bit -> the value under which op_sel's destination element is 1


def flip_bits(encoding: Encoding) -> list[int]:
    """Every operand bit of the encoding's dwords (96 for GFX12's memory
    encodings and VOPD3: their third dword holds address registers)."""
    free = tables._free_bits(encoding)
    return [bit for bit in range(free.bit_length()) if free >> bit & 1]


def _op_sel_dst(printed: Printed) -> int:
    """op_sel's destination element as LLVM prints it (1: high half), -1
    where it prints none (op_sel with one element per source only: VOP3P)."""
    match = _OP_SEL.search(printed.text)
    if not match:
        return 0 if "op_sel" not in printed.text else -1
    elements = match.group(1).split(",")
    operands = printed.text.partition(" ")[2].split(" op_sel")[0].split(",")
    return int(elements[-1]) if len(elements) == len(operands) else -1


def writes_16_bits(mnemonic: str) -> bool:
    """Whether the result is one 16-bit value: the mnemonic's first type
    (the manuals put the result's first) is 16 bits and it is not packed
    (v_cvt_pknorm_i16_f16 writes two)."""
    first = _FIRST_TYPE.search(mnemonic)
    return first is not None and first.group(1) == "16" and "_pk" not in mnemonic


def learn(base: Printed, base_bits: int, flips: list[tuple[int, Printed | None]], learnt: Learnt) -> None:
    regs = registers(base)
    for index, reg in enumerate(regs):
        if reg is not None:
            learnt.seen.setdefault(index, []).append((base_bits, reg[1], reg[2]))
    for bit, printed in flips:
        if printed is None or printed.mnemonic != base.mnemonic or printed.length != base.length:
            continue
        if len(printed.operands) != len(base.operands):
            if _registers_named(printed) != _registers_named(base):
                learnt.forms.add(bit)
            continue        # only an immediate came or went (GFX10 SMEM: *_SGPR with offset 0, *_SGPR_IMM)
        after = registers(printed)
        if after == regs and {_op_sel_dst(printed), _op_sel_dst(base)} == {0, 1}:
            # GFX9/GFX10 VOP3: the bit LLVM prints as op_sel's destination element (a 16-bit result
            # written to the high half)
            learnt.high_dst[bit] = (base_bits >> bit & 1) ^ (_op_sel_dst(printed) == 1)
        for index, (was, now) in enumerate(zip(regs, after)):
            if now is not None:
                learnt.seen.setdefault(index, []).append((base_bits ^ (1 << bit), now[1], now[2]))
            if was == now:
                continue
            if was is None and now is None:
                continue
            if was is None or now is None:
                # a register <-> special/constant: the top of a source field (or an SGPR limit)
                learnt.top.setdefault(index, set()).add(bit)
                continue
            if was[:4] == now[:4]:
                if was[4] and now[4]:
                    learnt.halves.setdefault(index, set()).add(bit)     # v1.l <-> v1.h
                else:
                    # v1.l <-> v1: LLVM reads the row as another record (gfx11 VOP3 with an op_sel bit of
                    # a source the opcode lacks: its fake16 form), a form of its own
                    learnt.forms.add(bit)
            elif was[1] != now[1]:
                if {was[1], now[1]} == {"v", "a"}:
                    learnt.acc.setdefault(index, set()).add(bit)
                else:
                    learnt.top.setdefault(index, set()).add(bit)
            elif was[3] != now[3]:
                learnt.width.setdefault(index, set()).add(bit)
            else:
                learnt.fields.setdefault(index, set()).add(bit)
                learnt.steps.setdefault(index, set()).add((bit, now[2] - was[2]))


# -- the generator ------------------------------------------------------------------------------

def candidates(encoding: Encoding, key: int) -> list[int]:
    bits = tables.opcode_bits(encoding, key)
    fills: list = [encoding.fill, ()]
    for constant in (0xC1, 0x80):
        fills.append(tuple((shift, width, constant) for shift, width in encoding.literal_slots))
    fills += tables.EXTRA_FILLS.get(encoding.name, [])
    out = [tables._filled(bits, fill) for fill in fills]
    out += [bits | fill for fill in tables.random_fills(encoding, RANDOM_BASES, "operands")]
    return out


def fill_fallbacks(encoding: Encoding, key: int) -> list[int]:
    """The plain fill less its last sources, tried only where LLVM refuses
    the plain fill (LLVM 19 refuses gfx940's VOP3 with v0 in a source the
    opcode lacks: v_add_f64 with src2 set), so that a base still reads
    VGPRs in its sources (three empty fills, s[0:1] everywhere, hide the low
    bit of a 64-bit source: LLVM reads s[1:2] as s[0:1])."""
    bits = tables.opcode_bits(encoding, key)
    return [tables._filled(bits, encoding.fill[:n]) for n in range(len(encoding.fill) - 1, 0, -1)]


def field_of(bits: set[int]) -> tuple[int, int] | None:
    low, high = min(bits), max(bits)
    if len(bits) != high - low + 1:
        return None
    return low, high - low + 1


class Context(NamedTuple):
    name: str
    command: list[str]
    cpu: str
    encoding: Encoding
    layout: str
    words: int
    descs: dict[int, tuple[int, int]]
    limit: int


def plain(encoding: Encoding, bits: int) -> bool:
    """Whether no source holds a literal, DPP/SDWA or NSA marker (probes
    keep the length-changing fields plain)."""
    return tables._sanitized(encoding, bits) == bits or (
        encoding.aux is not None and tables._sanitized(encoding, bits) == tables.put(
            bits, encoding.aux[0], encoding.aux[1], 0x100 if encoding.aux[1] == 9 else 0)
        and ((bits >> encoding.aux[0]) & ((1 << encoding.aux[1]) - 1)) not in tables._MARKERS9
        and (encoding.aux[1] == 9 or (bits >> encoding.aux[0]) & ((1 << encoding.aux[1]) - 1) == 0))


def _held(held, ident) -> frozenset[int]:
    return held.get(ident, frozenset()) if isinstance(held, dict) else held


def _longest_run(bits: set[int]) -> set[int]:
    best: set[int] = set()
    for low in bits:
        if low - 1 in bits:
            continue
        run = set()
        while low in bits:
            run.add(low)
            low += 1
        if len(run) > len(best):
            best = run
    return best


def analyse(ctx: Context, bases: dict, held: frozenset[int] | dict = frozenset()) -> tuple[dict, dict]:
    """Each row's (or form's) operands from its bases: every operand bit
    flipped alone, then every combination of the width bits."""
    layout = LAYOUTS[ctx.layout]
    probes, owners = [], []
    for ident, found in bases.items():
        for n, (bits, _p) in enumerate(found):
            for bit in flip_bits(ctx.encoding):
                if bit in _held(held, ident):
                    continue
                flipped = bits ^ (1 << bit)
                if plain(ctx.encoding, flipped) and tables.claims(layout, ctx.encoding, flipped):
                    probes.append((flipped, ctx.words))
                    owners.append((ident, n, bit))
    flipped_of: dict = defaultdict(list)
    for (ident, n, bit), printed in zip(owners, show_inst(ctx.command, ctx.cpu, probes)):
        flipped_of[(ident, n)].append((bit, printed))
    encoded: dict = {}
    faults: dict = {}
    width_jobs = []
    for ident, found in bases.items():
        if not found:
            continue
        learnt = Learnt({}, {}, {}, {}, set(), {}, {}, {}, {})
        for n, (bits, printed) in enumerate(found):
            learn(printed, bits, flipped_of[(ident, n)], learnt)
        # A field's bits that lie apart from its run choose where the field is (gfx9 SMEM's soe moves
        # soffset from bits 32-38 to 57-63): form bits.
        for index, field_bits in learnt.fields.items():
            # Bits whose step breaks the run's scale (VOPD's vdstY: its low bit is not a bit of its field;
            # gfx9 SMEM's soe: its step is whatever bits 57-63 less bits 32-38 hold): the longest run of
            # bits that step as the powers of two of its lowest bit's step.
            steps = dict(learnt.steps.get(index, ()))
            run = set()
            for low in sorted(field_bits):
                unit = abs(steps.get(low, 1)) or 1
                scaled = _longest_run({b for b in field_bits if b >= low and (
                    steps.get(b) is None or abs(steps[b]) == unit << (b - low))})
                if len(scaled) > len(run):
                    run = scaled
            if run != learnt.fields[index]:
                learnt.forms.update(learnt.fields[index] - run)
                learnt.fields[index] = run
                learnt.steps[index] = {(b, d) for b, d in learnt.steps[index] if b in run}
        learnt.forms.difference_update(_held(held, ident))
        operands, why = describe(found, learnt, ctx.descs, ctx.limit)
        if operands is None:
            faults[ident] = why
            continue
        entry: dict = {"record": found[0][1].record, "operands": operands}
        if learnt.forms:
            entry["form_bits"] = sorted(learnt.forms)
        encoded[ident] = entry
        for index, operand in enumerate(operands):
            if operand.get("width_bits"):
                width_jobs.append((ident, index, found[0][0], operand["width_bits"]))
    _widths(ctx, encoded, width_jobs, faults)
    return encoded, faults


def family_operands(name: str, only: frozenset[str] = frozenset()) -> tuple[dict, list[str], dict]:
    """The family's operand table (``only``: just those encodings)."""
    layout, _cpus, major = FAMILIES[name]
    command = tables.llvm_mc(major)
    cpu = tables.processors(name)[0]
    table = json.loads((tables.TABLES / f"{name}.json").read_text())
    descs = descriptors(major)
    limit = SGPR_LIMIT.get(layout, 106)
    faults: list[str] = []
    out: dict = {"family": name, "processor": cpu, "llvm": tables.llvm_version(command), "sgpr_limit": limit,
                 "encodings": {}}
    stats = {"rows": 0, "with_operands": 0}
    for encoding in LAYOUTS[layout]:
        rows = table["encodings"].get(encoding.name, {})
        if not rows or (only and encoding.name not in only):
            continue
        ctx = Context(name, command, cpu, encoding, layout, tables.encoding_words(encoding), descs, limit)
        # 1. bases
        probes, owners, kinds = [], [], []
        for key in rows:
            plain_fill, *others = candidates(encoding, int(key))
            for kind, each in (("fill", [plain_fill]), ("fallback", fill_fallbacks(encoding, int(key))),
                               ("other", others)):
                for bits in each:
                    if tables.claims(LAYOUTS[layout], encoding, bits) and plain(encoding, bits):
                        probes.append((bits, ctx.words))
                        owners.append(key)
                        kinds.append(kind)
        # Bases by shape (operand count): global_* with saddr "off" read a 64-bit vaddr and no saddr.
        shapes: dict[str, list[tuple]] = defaultdict(list)
        bases: dict[tuple[str, int], list[tuple[int, Printed]]] = defaultdict(list)
        spare: dict[tuple[str, int], list[tuple[int, Printed]]] = defaultdict(list)
        fill_taken: set[str] = set()
        for (bits, _w), key, kind, printed in zip(probes, owners, kinds, show_inst(command, cpu, probes)):
            row = rows[key]
            if printed is None or printed.mnemonic != row[0] or printed.length != row[1]:
                continue
            if kind == "fallback" and key in fill_taken:
                continue
            if kind == "fill":
                fill_taken.add(key)
            if shape(printed) not in shapes[key]:
                if any(len(_registers_named(printed)) == len(_registers_named(bases[(key, n)][0][1]))
                       for n in range(len(shapes[key])) if bases[(key, n)]):
                    continue        # the same registers, an immediate more or less: no form of its own
                if len(shapes[key]) >= MAX_SHAPES:
                    continue
                shapes[key].append(shape(printed))
            ident = (key, shapes[key].index(shape(printed)))
            # One record per form: global_load_dword's "off" form and its lds form have as many operands.
            if bases[ident] and printed.record != bases[ident][0][1].record:
                continue
            if len(bases[ident]) < BASES:
                bases[ident].append((bits, printed))
            elif all(bits != taken for taken, _p in bases[ident] + spare[ident]):
                spare[ident].append((bits, printed))
        # Where the fixed fills are all one probe (an encoding with no plain fill, literal slot or extra
        # fill: SMEM, DS, MUBUF, ...), a row's bases may be that probe thrice, which hides a field one
        # bit moves (gfx9 SMEM's soe moves soffset from bits 32-38 to 57-63, both s0 there): the
        # random probes after it are its other bases then.
        if len(set(candidates(encoding, 0)[:-RANDOM_BASES])) == 1:
            for ident, found in bases.items():
                if len({bits for bits, _p in found}) == 1:
                    found[1:] = spare[ident][:BASES - 1]
        # Rows none of those showed: each operand bit set alone (ds_gws_* want gds and nothing else).
        missing = [key for key in rows if (key, 0) not in bases]
        probes, owners = [], []
        for key in missing:
            for fill in tables.single_bit_fills(encoding):
                bits = tables.opcode_bits(encoding, int(key)) | fill
                if tables.claims(LAYOUTS[layout], encoding, bits) and plain(encoding, bits):
                    probes.append((bits, ctx.words))
                    owners.append(key)
        for (bits, _w), key, printed in zip(probes, owners, show_inst(command, cpu, probes) if probes else []):
            if printed is None or printed.mnemonic != rows[key][0] or printed.length != rows[key][1]:
                continue
            if not bases[(key, 0)] or (shape(printed) == shape(bases[(key, 0)][0][1])
                                       and len(bases[(key, 0)]) < BASES):
                bases[(key, 0)].append((bits, printed))
        # 2. operands of each row
        encoded, why = analyse(ctx, bases)
        # The other shape's own form bits exclude the field that selects it (saddr "off": any bit of it
        # flipped brings the saddr operand back).
        selectors: dict[str, list[int]] = {}
        for (key, shape_index), entry in encoded.items():
            if shape_index >= 1 and (key, 0) in encoded:
                selector = _selector(encoded[(key, 0)], bases[(key, 1)], limit)
                if selector is not None:
                    selectors[key] = selector
                    main_operands = encoded[(key, 0)]["operands"]
                    scale = next(o["scale"] for o in main_operands if o["shift"] == selector[0])
                    scale_bits = scale.bit_length() - 1      # SGPR-pair fields: the low bit is the field's too
                    low, high = selector[0] - scale_bits, selector[0] + selector[1]
                    if "form_bits" in entry:
                        entry["form_bits"] = [b for b in entry["form_bits"] if not low <= b < high]
                        if not entry["form_bits"]:
                            del entry["form_bits"]
        # 3. rows with form bits (MUBUF offen/idxen, atomics' return bit): every combination a form
        form_bases: dict = defaultdict(list)
        probes, owners3 = [], []
        for ident, entry in encoded.items():
            form_bits = entry.get("form_bits", [])
            if not form_bits:
                continue
            if len(form_bits) > 4:
                why[ident] = f"{len(form_bits)} form bits {form_bits}"
                continue
            for combo in range(1 << len(form_bits)):
                for bits, _p in bases[ident]:
                    probe = bits
                    for n, bit in enumerate(form_bits):
                        probe = probe & ~(1 << bit) | ((combo >> n & 1) << bit)
                    probes.append((probe, ctx.words))
                    owners3.append((ident, combo))
        for (probe, _w), (ident, combo), printed in zip(probes, owners3, show_inst(command, cpu, probes)):
            key = ident[0]
            if printed is None or printed.mnemonic != rows[key][0] or printed.length != rows[key][1]:
                continue
            found = form_bases[(ident, combo)]
            if found and shape(printed) != shape(found[0][1]):
                continue
            if len(found) < BASES:
                found.append((probe, printed))
        form_encoded, form_why = analyse(ctx, form_bases, {ident: frozenset(encoded[ident[0]]["form_bits"])
                                                           for ident in form_bases})

        def finished(ident: tuple[str, int]) -> dict | None:
            entry = encoded.get(ident)
            if entry is None:
                return None
            if "form_bits" not in entry:
                return entry
            forms = {}
            for combo in range(1 << len(entry["form_bits"])):
                form = form_encoded.get((ident, combo))
                if form is None:
                    if (ident, combo) in form_why:
                        faults.append(f"{name} {encoding.name} {ident[0]} ({rows[ident[0]][0]}) form {combo}: "
                                      f"{form_why[(ident, combo)]}")
                    continue
                form.pop("form_bits", None)
                forms[str(combo)] = form
            return {"form_bits": entry["form_bits"], "forms": forms}

        rows_out: dict = {}
        for key in rows:
            stats["rows"] += 1
            entry = finished((key, 0))
            if entry is None:
                faults.append(f"{name} {encoding.name} {key} ({rows[key][0]}): "
                              f"{why.get((key, 0), 'no base probe LLVM prints as the row')}")
                continue
            alternative = None
            for shape_index in range(1, MAX_SHAPES):
                other = finished((key, shape_index))
                if other is None:
                    continue
                selector = _selector(encoded[(key, 0)], bases[(key, shape_index)], limit)
                form_bits = entry.get("form_bits", [])
                combos = {sum(((b >> bit) & 1) << n for n, bit in enumerate(form_bits))
                          for b, _p in bases[(key, shape_index)]}
                if selector is not None:
                    alternative = alternative or dict(other, field=selector)
                elif form_bits and all(str(c) in entry["forms"] for c in combos):
                    pass                # the other shape is one of the forms (MUBUF offen/idxen)
                elif other.get("forms") and len(other["forms"]) == 1 << len(other["form_bits"]):
                    entry = other       # its forms hold both shapes (gfx9 SMEM: soe and imm)
                else:
                    entry = None
                    break
            if entry is None:
                faults.append(f"{name} {encoding.name} {key} ({rows[key][0]}): more forms than "
                              "its fields tell apart")
                continue
            if alternative is not None:
                entry = dict(entry, alternative=alternative)
            rows_out[key] = entry
            stats["with_operands"] += 1
        if layout != "gfx9" and encoding.name in WAVE64_ENCODINGS:
            wave64_widths(ctx, rows, rows_out, bases)
        out["encodings"][encoding.name] = rows_out
        print(f"{name} {encoding.name}: {len(rows_out)} of {len(rows)} rows", file=sys.stderr)
    return out, faults, stats


def wave64_widths(ctx: Context, rows: dict, rows_out: dict, bases: dict) -> None:
    """GFX10 and later: each SGPR operand of one register of ``rows_out``'s
    rows (of each form: the row's first base with its form bits set to the
    form's combination), its field set to name s4 and s5, given to llvm-mc
    in wave64 (WAVE64_ATTR); where LLVM prints another width there (a lane
    mask: s[4:5]), the operand gets ``"wave64": [units, alignment]`` (the
    alignment from s5: s[4:5] again is 2).  Rows with an alternative keep
    their wave32 widths (none in these encodings: listed on stderr if one
    has such an operand)."""
    probes, owners = [], []
    layout = LAYOUTS[ctx.layout]
    lists: dict[tuple[str, int], list[dict]] = {}

    def one_sgpr(operand: dict) -> bool:
        return "s" in operand["files"] and operand["units"] == 1

    for key, entry in rows_out.items():
        if "alternative" in entry:
            if any(one_sgpr(o) for o in entry.get("operands", ())):
                print(f"{ctx.name} {ctx.encoding.name} {key}: alternative not probed in wave64", file=sys.stderr)
            continue
        first = bases[(key, 0)][0][0]
        if "forms" in entry:
            forms = [(int(combo), form["operands"]) for combo, form in entry["forms"].items()]
        else:
            forms = [(-1, entry["operands"])]
        for combo, operands in forms:
            base = first
            for n, bit in enumerate(entry.get("form_bits", ()) if combo >= 0 else ()):
                base = base & ~(1 << bit) | ((combo >> n & 1) << bit)
            lists[(key, combo)] = operands
            for position, operand in enumerate(operands):
                if not one_sgpr(operand):
                    continue
                for number in (WAVE64_PROBE, WAVE64_PROBE + 1):
                    value, rest = divmod(number - operand["files"]["s"], operand["scale"])
                    if rest or value < 0 or value >= 1 << operand["width"]:
                        break
                    probe = tables.put(base, operand["shift"], operand["width"], value)
                    if plain(ctx.encoding, probe) and tables.claims(layout, ctx.encoding, probe):
                        probes.append((probe, ctx.words))
                        owners.append((key, combo, position, number))
    if not probes:
        return
    seen: dict[tuple[str, int, int], dict[int, tuple[int, int]]] = defaultdict(dict)
    for (key, combo, position, number), printed in zip(owners, show_inst(ctx.command + [WAVE64_ATTR], ctx.cpu,
                                                                         probes)):
        if printed is None or printed.mnemonic != rows[key][0] or printed.length != rows[key][1]:
            continue
        index = lists[(key, combo)][position]["index"]
        regs = registers(printed)
        if index < len(regs) and regs[index] is not None and regs[index][1] == "s":
            seen[(key, combo, position)][number] = (regs[index][2], regs[index][3])
    for (key, combo, position), found in seen.items():
        operand = lists[(key, combo)][position]
        if WAVE64_PROBE not in found or found[WAVE64_PROBE] == (WAVE64_PROBE, operand["units"]):
            continue
        first, units = found[WAVE64_PROBE]
        odd = found.get(WAVE64_PROBE + 1)
        align = 1 if odd is None or odd[0] == WAVE64_PROBE + 1 else units
        if first != WAVE64_PROBE or (odd is not None and odd[1] != units):
            print(f"{ctx.name} {ctx.encoding.name} {key} operand {operand['index']}: wave64 reads s{WAVE64_PROBE} "
                  f"as {found}: left at its wave32 width", file=sys.stderr)
            continue
        operand["wave64"] = [units, align]


def describe(bases: list[tuple[int, Printed]], learnt: Learnt, descs: dict, limit: int) -> tuple[list | None, str]:
    bits0, base = bases[0]
    if base.number not in descs:
        return None, f"record {base.record} #{base.number} not in LLVM's descriptors"
    count, defs = descs[base.number]
    # The disassembler leaves out optional immediates (op_sel, clamp) and, for s_bitset*, the tied in:
    # defs come first either way.
    if len(base.operands) < defs:
        return None, f"{base.record}: {len(base.operands)} operands printed, {defs} defs in its descriptor"
    operands: list[dict] = []
    by_field: dict[tuple[int, int], int] = {}
    for index in range(len(base.operands)):
        seen = [registers(p)[index] for _b, p in bases]
        if all(s is None for s in seen) and index not in learnt.fields:
            continue               # an immediate, or a special register in every base
        bits = learnt.fields.get(index)
        if not bits:
            if any(s is not None and (s[1] != "s" or s[2] < limit) for s in seen):
                return None, f"operand {index} ({base.operands[index]}) is a register without a field"
            continue
        run = field_of(bits)
        if run is None:
            return None, f"operand {index}: field bits {sorted(bits)} not one run"
        low, high = run[0], run[0] + run[1] - 1
        top = learnt.top.get(index, set())
        while high + 1 in top:          # the top of a 9-bit source (VGPR or scalar), an SGPR field's specials
            high += 1
        while low - 1 in top:
            low -= 1
        shift, width = low, high - low + 1
        scale = _scale(index, shift, learnt)
        if scale is None:
            return None, f"operand {index}: steps {sorted(learnt.steps[index])} are no one scale"
        entry: dict = {"index": index, "role": "d" if index < defs else "u", "shift": shift, "width": width,
                       "scale": scale, "units": next(s[3] for s in seen if s is not None)}
        # Other bits that make it no register (SMEM's imm bit: an offset then): a register only as in the base.
        when = sorted(bit for bit in top if not low <= bit <= high)
        if when:
            # the value under which it is a register: the base's if it is one there, else the flipped one
            in_base = registers(base)[index] is not None
            entry["when"] = [[bit, (bits0 >> bit & 1) ^ (not in_base)] for bit in when]
        # A true16 operand: which half of the VGPR is one bit (e32: the field's top VGPR bit, v0-v127 only;
        # VOP3: an op_sel bit); the number leaves that bit out.  A half written keeps the other: used too.
        halves = learnt.halves.get(index, set())
        if len(halves) > 1:
            return None, f"operand {index}: half bits {sorted(halves)}"
        keep = ~0
        if halves:
            entry["half_bit"] = min(halves)
            if low <= entry["half_bit"] <= high:
                keep = ~(1 << (entry["half_bit"] - shift))
            if entry["role"] == "d":
                entry["role"] = "ud"
        files: dict[str, int] = {}
        aligns: dict[str, int] = {}
        by_file: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for probe_bits, file, number in learnt.seen.get(index, []):
            if all(probe_bits >> bit & 1 == value for bit, value in entry.get("when", [])) and all(
                    probe_bits >> bit & 1 == bits0 >> bit & 1 for bit in learnt.forms):
                value = (probe_bits >> shift) & ((1 << width) - 1)
                by_file[file].append(((value & keep if file == "v" else value) * scale, number))
        for file, pairs in by_file.items():
            fit = _fit(pairs)
            if fit is None:
                return None, f"operand {index}: {file} numbers fit no offset and alignment: {sorted(set(pairs))[:6]}"
            files[file], align = fit
            if align > 1:
                aligns[file] = align
        entry["files"] = files
        if aligns:
            entry["align"] = aligns
        if learnt.acc.get(index):
            entry["acc_bit"] = min(learnt.acc[index])
            if len(learnt.acc[index]) != 1:
                return None, f"operand {index}: acc bits {sorted(learnt.acc[index])}"
        if learnt.width.get(index):
            entry["width_bits"] = sorted(learnt.width[index])
        # op_sel's destination bit (GFX9/GFX10 VOP3, a 16-bit result): set, the result goes to the
        # VGPR's high half and the low half is kept, so the VGPR is used too.  Where the result is 32
        # bits (v_mad_u32_u16, v_pack_b32_f16) LLVM prints the bit and the manuals ignore it.
        if (entry["role"] == "d" and learnt.high_dst and not halves and writes_16_bits(base.mnemonic)
                and set(entry["files"]) <= {"v"} and entry["units"] == 1):
            entry["ud_when"] = sorted([bit, value] for bit, value in learnt.high_dst.items())
        key = (shift, width)
        if key in by_field and index >= defs and operands[by_field[key]]["role"] in ("d", "ud"):
            operands[by_field[key]]["role"] = "ud"         # tied: the in repeats the def
            continue
        by_field.setdefault(key, len(operands))
        operands.append(entry)
    if base.mnemonic in ("exp", "export"):          # GFX12 and later: "export"
        # LLVM keeps a disabled source's register in the MCInst and prints "off": the ISA manual's
        # EN field (bits 0-3) enables the sources in order.
        for n, operand in enumerate(sorted(operands, key=lambda o: o["shift"])):
            operand["when"] = operand.get("when", []) + [[n, 1]]
    if KEPT_UNTIED.match(base.mnemonic):
        for operand in operands:
            if operand["role"] == "d":
                operand["role"] = "ud"
    return operands, ""


def _selector(main: dict, other_bases: list[tuple[int, Printed]], limit: int) -> list[int] | None:
    """The field whose value picks the other shape: an SGPR operand of the
    main one whose field holds, in every base of the other, one value that
    names no numbered SGPR (saddr "off")."""
    operands = main.get("operands") or next(iter(main.get("forms", {}).values()), {}).get("operands", [])
    for operand in operands:
        if set(operand["files"]) != {"s"}:
            continue
        mask = (1 << operand["width"]) - 1
        values = {(bits >> operand["shift"]) & mask for bits, _p in other_bases}
        if len(values) == 1:
            value = values.pop()
            if value * operand["scale"] + operand["files"]["s"] >= limit:
                return [operand["shift"], operand["width"], value]
    return None


def _fit(pairs: list[tuple[int, int]]) -> tuple[int, int] | None:
    """(offset, alignment) with number = (scaled value + offset) rounded
    down to the alignment for every (scaled value, number) seen: LLVM reads
    an SGPR tuple's field with its low bits cleared (s[4:5] for 5)."""
    offsets = sorted({number - value for value, number in pairs}, key=abs)
    for align in (1, 2, 4):
        for offset in offsets:
            if all(number == (value + offset) - (value + offset) % align for value, number in pairs):
                return offset, align
    return None


def _scale(index: int, shift: int, learnt: Learnt) -> int | None:
    """Registers per unit of the field's value: each flip's change of the
    number over the change of the value (the same for every flip)."""
    scales = set()
    for bit, step in learnt.steps[index]:
        change = 1 << (bit - shift)
        if abs(step) % change:
            return None
        scales.add(abs(step) // change)
    return scales.pop() if len(scales) == 1 else None


def _widths(ctx: Context, encoded: dict, jobs: list, faults: dict) -> None:
    """Width tables: the operand's width under every combination of its
    width bits (bit n of the combination: the n-th width bit)."""
    probes, owners = [], []
    for ident, index, bits, width_bits in jobs:
        if len(width_bits) > MAX_WIDTH_BITS:
            faults[ident] = f"operand {index}: {len(width_bits)} width bits"
            encoded.pop(ident, None)
            continue
        for combo in range(1 << len(width_bits)):
            probe = bits
            for n, bit in enumerate(width_bits):
                probe = probe & ~(1 << bit) | ((combo >> n & 1) << bit)
            probes.append((probe, ctx.words))
            owners.append((ident, index, combo))
    units_of: dict = defaultdict(list)
    for (ident, index, _combo), printed in zip(owners, show_inst(ctx.command, ctx.cpu, probes) if probes else []):
        units = None
        if printed is not None and ident in encoded:
            operand = encoded[ident]["operands"][index]
            regs = registers(printed)
            if operand["index"] < len(regs) and regs[operand["index"]] is not None:
                units = regs[operand["index"]][3]
        units_of[(ident, index)].append(units)
    for (ident, index), units in units_of.items():
        if ident in encoded:
            encoded[ident]["operands"][index]["width_table"] = units


def compact(data: dict) -> str:
    lines = [json.dumps({k: v for k, v in data.items() if k != "encodings"}, separators=(",", ":"))[:-1]
             + ',"encodings":{', *tables.encoding_lines(data["encodings"]), "}}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    only: frozenset[str] = frozenset()
    families = []
    for arg in argv:
        if arg.startswith("--only="):
            only = frozenset(arg.removeprefix("--only=").split(","))
        elif arg != "--check":
            families.append(arg)
    if not families:
        print("generate-isa-operands: name the families", file=sys.stderr)
        return 2
    if only and not check:
        print("generate-isa-operands: --only=ENCODING,... re-derives part of a table: with --check only",
              file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    status = 0
    for name in families:
        data, faults, stats = family_operands(name, only)
        if only:
            # those encodings' rows against the committed table's (its coverage counts every encoding)
            path = OUT / f"{name}.json"
            committed = json.loads(path.read_text())["encodings"] if path.is_file() else {}
            for encoding in sorted(only):
                if committed.get(encoding) != data["encodings"].get(encoding):
                    print(f"{path.name} {encoding}: not what LLVM {data['llvm']} gives now", file=sys.stderr)
                    status = 1
            continue
        for fault in faults:
            print(f"generate-isa-operands: {fault}", file=sys.stderr)
        print(f"{name}: {stats['with_operands']} of {stats['rows']} rows with operands", file=sys.stderr)
        data["coverage"] = {"rows": stats["rows"], "with_operands": stats["with_operands"],
                            "without": sorted(faults)}
        text = compact(data)
        path = OUT / f"{name}.json"
        if check:
            if not path.is_file() or path.read_text() != text:
                print(f"{path.name} is not what LLVM {data['llvm']} gives now", file=sys.stderr)
                status = 1
            continue
        atomic.write_text(str(path), text)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
