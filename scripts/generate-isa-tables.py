#!/usr/bin/env python3
"""Write checker/spillway/isa/tables/<family>.json by asking LLVM's disassembler,
and refuse to write one that misses an instruction LLVM knows.

The table.  For every encoding of a family (spillway.isa.encodings) and every
value of its opcode field, this builds probe instructions and feeds them to
``llvm-mc --disassemble -show-encoding`` on the family's processors (more
than one: the union of their opcodes): first with plain operands (the
encoding's fill, none, every source -1 or 0, the operand values some opcodes
insist on: EXTRA_FILLS), then with each operand bit set alone (ds_gws_* want
gds set and their address fields clear), then with seeded random operands
(the same every run).  The fields that change the length -- literal,
DPP/SDWA and NSA markers -- stay plain throughout.  The first probe LLVM
decodes is the opcode's row: the mnemonic (the first word LLVM prints) and
the bytes it took.  Then each literal-capable source of that probe is set to
0xFF and 0xFE, and each length-changing field value tried (DPP/SDWA markers
in src0, MIMG NSA), for the bytes those add.  The tables are facts LLVM
states about these bytes, nothing else.

The assembler teaches the probes what they missed.  Every mnemonic of LLVM's
own assembler (the AsmMatcher's mnemonic table, read from the libLLVM that
llvm-mc runs on) is given to ``llvm-mc`` alone for every processor of the
family that LLVM knows; those it does not refuse as "not supported on this
GPU" / "invalid instruction" exist there.  Each that is no mnemonic of the
table (less LLVM's _e32/_e64/_sdwa/_dpp suffixes) is assembled: with no
operands, OPERAND_HINTS, the operands LLVM printed for the mnemonics sharing
most of its name (its first or last ``_`` tokens), then operands found one
position at a time from llvm-mc's own "too few operands" answers
(discover_operands).  An encoding whose opcode value has no row becomes that
value's first probe, and the family is probed again; an encoding the table
reads as two rows but LLVM as one instruction (gfx950's v_mfma_ld_scale_b32
+ an MFMA, gfx1250's v_wmma scale prefixes + a WMMA) makes its first row a
prefix: every 64-bit row is tried after it, and for each pair LLVM reads as
one, every operand bit of the pair is flipped alone to find the bits LLVM's
128-bit decoder fixes (mask, value: the decoder joins a pair only then).

The audit (the generator exits 1 and writes nothing when it finds a fault;
``--check`` writes nothing either, and fails also where a committed table is
not the one it gets now):

1. Disassembler sweep: every opcode value of every encoding again, with other
   seeded random operands, on every processor probed, and every pair with
   random operands in both halves.  Every probe LLVM decodes must decode with
   the table to the same length; an opcode value LLVM decodes that has no row
   is a fault ("ENCODING opcode N (mnemonic) ... has no row").
2. Assembler: each mnemonic above must decode, as llvm-mc assembled it, with
   the table to the length llvm-mc encoded (an alias of a row, or a pair).
   One the table does not decode is a fault naming the processors, the LLVM,
   the assembled line, the encoding and its opcode value; one no operands
   could be found for is a fault too, unless UNASSEMBLABLE says why LLVM
   takes none (gfx1310's image_atomic_fmax/fmin under LLVM 24).  The aliases are written into the
   table with their encodings (tests/oracle/test_isa_tables.py asks llvm-mc
   again in one run per processor, and decodes them without LLVM).

Each probe sits on its own input line (llvm-mc disassembles lines separately),
behind a marker ``s_movk_i32 vcc_lo, N`` and in front of ``s_nop 0`` padding
that a literal or a longer encoding may swallow; assembled lines follow the
same marker.

  python3 scripts/generate-isa-tables.py [--check] [FAMILY ...]

The LLVM of each family is encodings.FAMILIES's: LLVM 22 (host) for most,
bookworm's LLVM 19 for gfx940, the sid root's LLVM 24
(scripts/install-toolchains.sh --root-path) for gfx1154, gfx11.7, gfx12,
gfx1250 and gfx13.  Run time on the shared 2-core host: docs/isa.md ("The
decoder's opcode tables").
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "checker"))

from spillway.isa import decoder  # noqa: E402
from spillway.isa.encodings import FAMILIES, LAYOUTS, PROCESSOR_FAMILY, Encoding  # noqa: E402

TABLES = ROOT / "checker" / "spillway" / "isa" / "tables"
S_NOP = 0xBF800000
MARKER = 0xB0000000 | (0x6A << 16)     # s_movk_i32 vcc_lo, N
# The dword after a DPP/SDWA instruction: v0, every select/mask valid (SDWA:
# DWORD selects, src1 BYTE_0; DPP16: quad_perm:[0,1,2,3], all rows and banks; DPP8: identity).
MARKER_DWORD = {0xF9: 0x00060600, 0xFA: 0xFF00E400, 0xE9: 0x00FAC688, 0xEA: 0x00FAC688}
# Operand values some opcodes insist on, tried after the plain ones: flat_*
# wants saddr "off" (0x7F GFX9, 0x7D GFX10, 0x7C GFX11; GFX12 0x7C in bits
# [6:0], VBUFFER's soffset too); WMMA wants op_sel_hi set.
_NULL12 = [((0, 7, 0x7C),)]
EXTRA_FILLS = {
    "FLAT": [((48, 7, off),) for off in (0x7F, 0x7D, 0x7C)],
    "VFLAT": _NULL12, "VGLOBAL": _NULL12, "VSCRATCH": _NULL12, "VBUFFER": _NULL12,
    "VOP3P": [((32, 9, 0x100), (41, 9, 0x100), (50, 9, 0x100), (14, 1, 1), (59, 2, 3))],
}
RANDOM_FILLS = 12                      # seeded random operand probes per opcode value, for the table
AUDIT_FILLS = 12                       # and others, for the audit
PADDING = 6                            # s_nop dwords after each probe
BATCH = 60000
WARNING = re.compile(r"<stdin>:(\d+):(\d+): warning: invalid instruction encoding")
PROBE_COLUMN = 1 + 4 * 5               # each byte is "0xHH "; the marker takes four
LINE = re.compile(r"^\s*(\S.*?)\s*(?:;|//) encoding: \[([0-9a-fx,]*)\]")
# Source-field values that add dwords (literals, DPP/SDWA): random probes keep them plain.
_MARKERS9 = {0xFF, 0xFE, 0xF9, 0xFA, 0xE9, 0xEA}
_SUFFIX = re.compile(r"_(e32|e64|sdwa|dpp|e64_dpp)$")
# What llvm-mc says of a mnemonic the processor lacks (any other error: it exists, operands missing).
_ABSENT = ("not supported on this GPU", "invalid instruction")


class Answer(NamedTuple):
    mnemonic: str
    length: int            # bytes the probe took
    text: str              # the instruction as LLVM printed it


# -- LLVM -----------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def sid_root() -> str:
    out = subprocess.run([str(ROOT / "scripts" / "install-toolchains.sh"), "--root-path"],
                         capture_output=True, text=True, check=False).stdout.strip()
    return out or "/var/tmp/spillway-sid-root"


def llvm_mc(major: int) -> list[str]:
    if major in (19, 22):
        return [f"llvm-mc-{major}"]
    return ["chroot", sid_root(), f"llvm-mc-{major}"]


def llvm_version(command: list[str]) -> str:
    out = subprocess.run(command + ["--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"LLVM version (\S+)", out)
    return match.group(1) if match else "?"


def _run(command: list[str], argv: list[str], text: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, LLVM_DISABLE_SYMBOLIZATION="1")
    return subprocess.run(command + argv + ["-triple=amdgcn-amd-amdhsa"], input=text, capture_output=True,
                          text=True, check=False, env=env)


@lru_cache(maxsize=None)
def matcher_mnemonics(major: int) -> tuple[str, ...]:
    """Every mnemonic of LLVM's AMDGPU assembler (all processors), from its
    AsmMatcher's mnemonic table in the libLLVM llvm-mc runs on: one run of
    length-prefixed names, sorted, from ``buffer_*`` to ``v_*``."""
    # Debian's llvm-mc-N links libLLVM-N.so (the host's 19 and 22, the sid root's 23 and 24).
    root = sid_root() if llvm_mc(major)[0] == "chroot" else ""
    library = Path(f"{root}/usr/lib/x86_64-linux-gnu/libLLVM-{major}.so")
    if not library.exists():
        sys.exit(f"{library}: not installed (scripts/install-test-deps.sh)")
    data = library.read_bytes()
    anchor = data.find(b"\x0eds_gws_barrier")
    if anchor < 0:
        sys.exit(f"{library}: no AMDGPU mnemonic table found")
    name = re.compile(rb"[a-z][a-z0-9_.]*")

    def run_from(at: int) -> tuple[list[str], int]:
        out = []
        while at < len(data) and 0 < data[at] < 128 and name.fullmatch(data[at + 1:at + 1 + data[at]]):
            out.append(data[at + 1:at + 1 + data[at]].decode())
            at += 1 + data[at]
        return out, at

    # The run's start: the earliest offset whose run of names reaches past the anchor.
    start = anchor
    for back in range(1, 1 << 17):
        names, end = run_from(anchor - back)
        if end > anchor and names and names[0].startswith("buffer_"):
            start = anchor - back
    names, _end = run_from(start)
    if names != sorted(names) or not {"s_endpgm", "v_mov_b32", "ds_gws_barrier"} <= set(names):
        sys.exit(f"{library}: the AMDGPU mnemonic table read is not one ({len(names)} names)")
    return tuple(names)


def disassemble(command: list[str], cpu: str, probes: list[tuple[int, int]]) -> list[Answer | None]:
    """What LLVM makes of each probe ((bits, dwords given)); None where it
    found no instruction."""
    results: list[Answer | None] = []
    for first in range(0, len(probes), BATCH):
        results.extend(_disassemble_batch(command, cpu, probes[first:first + BATCH]))
    return results


def probe_bytes(bits: int, words: int) -> bytes:
    dwords = [(bits >> (32 * i)) & 0xFFFFFFFF for i in range(words)] + [S_NOP] * PADDING
    return b"".join(d.to_bytes(4, "little") for d in dwords)


def _disassemble_batch(command: list[str], cpu: str, batch: list[tuple[int, int]]) -> list[Answer | None]:
    """One llvm-mc run; where LLVM crashes on some probe, halves until that
    probe alone is left, and counts it as no instruction.

    The length is what the probe consumed: the bytes of its line after the
    marker less what LLVM printed after it (the s_nop padding it left).  The
    encoding LLVM prints for the probe itself is re-encoded, not the input
    (op_sel_hi bits, for one), so it says nothing about the length.  A probe
    is invalid when llvm-mc warns at its column (line = marker index + 1)."""
    lines = []
    for index, (bits, words) in enumerate(batch):
        data = (MARKER | index).to_bytes(4, "little") + probe_bytes(bits, words)
        lines.append(" ".join(f"0x{b:02x}" for b in data))
    run = _run(command, ["--disassemble", "-show-encoding", f"-mcpu={cpu}"], "\n".join(lines) + "\n")
    if run.returncode != 0 and "Stack dump" in run.stderr:
        if len(batch) == 1:
            return [None]
        half = len(batch) // 2
        return (_disassemble_batch(command, cpu, batch[:half])
                + _disassemble_batch(command, cpu, batch[half:]))
    warned: dict[int, list[int]] = {}
    for match in WARNING.finditer(run.stderr):
        warned.setdefault(int(match.group(1)) - 1, []).append(int(match.group(2)))
    groups: dict[int, list[tuple[str, int]]] = {}
    current = -1
    for line in run.stdout.splitlines():
        match = LINE.match(line)
        if not match:
            continue
        text, raw = match.groups()
        data = bytes(int(x, 16) for x in raw.split(",") if x)
        word = int.from_bytes(data, "little") if len(data) == 4 else -1
        if word & 0xFFFF0000 == MARKER and (word & 0xFFFF) == current + 1:
            current += 1
            groups[current] = []
            continue
        if current >= 0:
            groups[current].append((text, len(data)))
    if len(groups) != len(batch):
        sys.exit(f"llvm-mc {cpu}: {len(groups)} markers of {len(batch)} came back; stderr: {run.stderr[:500]}")
    results: list[Answer | None] = []
    for index, (_bits, words) in enumerate(batch):
        columns = warned.get(index, [])
        if PROBE_COLUMN in columns or not groups[index]:
            results.append(None)
            continue
        after = sum(length for _t, length in groups[index][1:]) + 4 * sum(c > PROBE_COLUMN for c in columns)
        consumed = 4 * (words + PADDING) - after
        text = groups[index][0][0]
        results.append(Answer(text.split()[0], consumed, text))
    return results


def assemble(command: list[str], cpu: str, lines: list[str]) -> list[bytes | str]:
    """The encoding llvm-mc gives each line, or its error message.  Each line
    follows a marker ``s_movk_i32 vcc_lo, N`` (as the disassembler's probes):
    what is printed between two markers is that line's."""
    out: list[bytes | str] = []
    for first in range(0, len(lines), 0x8000):
        batch = lines[first:first + 0x8000]
        text = "".join(f"s_movk_i32 vcc_lo, {index}\n{line}\n" for index, line in enumerate(batch))
        run = _run(command, ["-show-encoding", f"-mcpu={cpu}"], text)
        failed: dict[int, str] = {}
        for match in re.finditer(r"<stdin>:(\d+):(\d+): error: (.*)", run.stderr):
            failed.setdefault((int(match.group(1)) - 2) // 2, f"{match.group(3)} (column {match.group(2)})")
        groups: dict[int, bytes] = {}
        current = -1
        for line in run.stdout.splitlines():
            match = LINE.match(line)
            if not match:
                continue
            data = bytes(int(x, 16) for x in match.group(2).split(",") if x)
            word = int.from_bytes(data, "little") if len(data) == 4 else -1
            if word & 0xFFFF0000 == MARKER and (word & 0xFFFF) == current + 1:
                current += 1
                groups[current] = b""
            elif current >= 0:
                groups[current] += data
        if len(groups) != len(batch):
            sys.exit(f"llvm-mc {cpu}: {len(groups)} markers of {len(batch)} came back; stderr: {run.stderr[:500]}")
        out.extend(failed[i] if i in failed else groups[i] or "no output" for i in range(len(batch)))
    return out


# Operands tried one position at a time when no printed operands fit a mnemonic.
_VGPRS = ["v0"] + [f"v[0:{n - 1}]" for n in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 32)]
_VOCABULARY = (_VGPRS + [f"a{r[1:]}" for r in _VGPRS[:8]] + ["s0", "s[0:1]", "s[0:3]", "s[0:7]", "s[0:15]"]
               + ["0", "off", "vcc", "exec", "m0", "null", "mrt0", "attr0.x", "p10"])
_MODIFIERS = ["gds", "lds", "offen", "idxen", "a16", "r128", "dmask:0xf", "dim:SQ_RSRC_IMG_1D",
              "dim:SQ_RSRC_IMG_2D_MSAA"]
# Mnemonics llvm-mc takes alone but refuses with every operand list, and why: no code can hold them.
UNASSEMBLABLE = {
    ("gfx13", "image_atomic_fmax"): "LLVM 24 wants a dim on gfx1310 and refuses dim and dmask alike "
                                    "('not a valid operand'); LLVM 23 assembled it as image_atomic_max_flt",
    ("gfx13", "image_atomic_fmin"): "LLVM 24 wants a dim on gfx1310 and refuses dim and dmask alike "
                                    "('not a valid operand'); LLVM 23 assembled it as image_atomic_min_flt",
}
# Operands no probe prints and the search above does not build (lists of address VGPRs), written
# from the assembler's syntax: tried before the search.  Only operands: llvm-mc gives the encoding.
OPERAND_HINTS = {
    "image_bvh_intersect_ray": ["v[0:3], [v4, v5, v[6:8], v[9:11], v[12:14]], s[0:3]"],
    "image_bvh64_intersect_ray": ["v[0:3], [v[4:5], v6, v[7:9], v[10:12], v[13:15]], s[0:3]"],
    "image_bvh_dual_intersect_ray": ["v[0:9], [v[10:11], v[12:13], v[14:16], v[17:19], v[20:21]], s[0:3]"],
    "image_bvh8_intersect_ray": ["v[0:9], [v[10:11], v[12:13], v[14:16], v[17:19], v20], s[0:3]"],
}
_GROWS = ("too few operands", "missing dim operand")   # right so far, more wanted


def discover_operands(command: list[str], cpu: str, mnemonics: list[str], beam: int = 64,
                      depth: int = 9) -> dict[str, tuple[str, bytes]]:
    """An assembled line for each mnemonic it can find operands for, by
    llvm-mc's own diagnostics: operand lists it answers "too few operands"
    for are right so far and grow by one operand (or a trailing modifier) a
    round, up to ``beam`` of them per mnemonic, until one assembles."""
    found: dict[str, tuple[str, bytes]] = {}
    states = {m: [""] for m in mnemonics}
    for _round in range(depth):
        lines, owner, grown = [], [], []
        for mnemonic, prefixes in states.items():
            for prefix in prefixes:
                tries = [f"{prefix}, {v}" if prefix else v for v in _VOCABULARY]
                tries += [f"{prefix} {m}" for m in _MODIFIERS] if prefix else []
                for operands in tries:
                    lines.append(f"{mnemonic} {operands}")
                    owner.append(mnemonic)
                    grown.append(operands)
        if not lines:
            break
        following: dict[str, list[str]] = defaultdict(list)
        for line, mnemonic, operands, answer in zip(lines, owner, grown, assemble(command, cpu, lines)):
            if mnemonic in found:
                continue
            if isinstance(answer, bytes):
                found[mnemonic] = (line, answer)
            elif answer.startswith(_GROWS) and len(following[mnemonic]) < beam:
                following[mnemonic].append(operands)
        states = {m: p for m, p in following.items() if m not in found}
    return found


def absent_mnemonics(command: list[str], cpu: str, mnemonics: tuple[str, ...]) -> set[str] | None:
    """The mnemonics llvm-mc refuses on ``cpu`` as unknown there (None: it
    does not know the processor)."""
    run = _run(command, [f"-mcpu={cpu}"], "\n".join(mnemonics) + "\n")
    if "is not a recognized processor" in run.stderr:
        return None
    absent = set()
    for match in re.finditer(r"<stdin>:(\d+):\d+: error: (.*)", run.stderr):
        if any(reason in match.group(2) for reason in _ABSENT):
            absent.add(mnemonics[int(match.group(1)) - 1])
    return absent


# -- probes ---------------------------------------------------------------------------------------

def put(bits: int, shift: int, width: int, value: int) -> int:
    mask = ((1 << width) - 1) << shift
    return (bits & ~mask) | ((value << shift) & mask)


def encoding_words(encoding: Encoding) -> int:
    """Dwords a probe gives before the s_nop padding: one for 32-bit
    encodings, two for 64-bit ones, three for 96-bit ones (a literal takes
    its dword from the padding)."""
    if encoding.name in ("VBUFFER", "VIMAGE", "VSAMPLE", "VFLAT", "VSCRATCH", "VGLOBAL", "VOPD3"):
        return 3          # GFX12 memory and gfx1250 VOPD3 are 96-bit: their third dword zero
    return 2 if encoding.value >= 0xC0000000 and encoding.name not in ("VINTRP", "LDSDIR") else 1


def opcode_bits(encoding: Encoding, key: int) -> int:
    bits = encoding.value
    for shift, width in encoding.opcode:
        bits = put(bits, shift, width, key & ((1 << width) - 1))
        key >>= width
    return bits


def claims(layout: tuple[Encoding, ...], encoding: Encoding, bits: int) -> bool:
    """Whether the decoder reads ``bits`` as ``encoding``: the first of the
    layout whose fixed bits match (VOP2's opcodes 62 and 63 are VOPC and VOP1)."""
    dword0 = bits & 0xFFFFFFFF
    return next(e for e in layout if e.matches(dword0)) is encoding


def _sanitized(encoding: Encoding, bits: int) -> int:
    """``bits`` with the sources that could hold a literal or a DPP/SDWA
    marker held below those values, and the length-changing field at 0."""
    sources = set(encoding.literal_slots) | {(s, w) for s, w, _v in encoding.fill if w in (8, 9)}
    for shift, width in sources:
        value = (bits >> shift) & ((1 << width) - 1)
        if (width == 9 and value in _MARKERS9) or (width == 8 and value >= 0xF8):
            bits = put(bits, shift, width, 0x100 if width == 9 else 0)
    if encoding.aux:
        bits = put(bits, encoding.aux[0], encoding.aux[1], 0x100 if encoding.aux[1] == 9 else 0)
    return bits


def _free_bits(encoding: Encoding) -> int:
    """The operand bits of a probe: all but the encoding's and the opcode's."""
    fixed = encoding.mask
    for shift, width in encoding.opcode:
        fixed |= ((1 << width) - 1) << shift
    return ((1 << (32 * encoding_words(encoding))) - 1) & ~fixed


def single_bit_fills(encoding: Encoding) -> list[int]:
    """Every operand bit alone (an opcode that wants one bit set and the
    rest clear, as ds_gws_* want gds and no address)."""
    free = _free_bits(encoding)
    return [_sanitized(encoding, 1 << bit) for bit in range(free.bit_length()) if free >> bit & 1]


def random_fills(encoding: Encoding, count: int, salt: str) -> list[int]:
    """``count`` operand bit patterns, the same every run for the same salt:
    half of them random in every operand bit, half with each byte either
    random or zero (fields that must be clear together); sanitized."""
    free = _free_bits(encoding)
    words = encoding_words(encoding)
    rng = random.Random(f"{salt}:{encoding.name}:{encoding.value:#x}")
    fills = []
    for index in range(count):
        bits = rng.getrandbits(32 * words) & free
        if index % 2:
            keep = rng.getrandbits(4 * words)
            bits &= sum(0xFF << (8 * byte) for byte in range(4 * words) if keep >> byte & 1)
        fills.append(_sanitized(encoding, bits))
    return fills


def processors(family: str) -> tuple[str, ...]:
    """The processors a family's table is probed on (the union of their opcodes)."""
    return tuple(FAMILIES[family][1].split("+"))


def _filled(bits: int, fill: tuple[tuple[int, int, int], ...] | int) -> int:
    if isinstance(fill, int):
        return bits | fill
    for shift, width, value in fill:
        bits = put(bits, shift, width, value)
    return bits


def probe_family(family: str, seeds: dict[str, dict[int, int]] | None = None,
                 prefixes: dict[tuple[str, int], list[int]] | None = None) -> tuple[dict, dict[str, list[str]]]:
    """The family's table, and the text LLVM printed for each row's probe
    (by mnemonic: operands the assembler audit reuses).

    ``seeds``: per encoding and opcode value, bits to try first (what the
    assembler made of a mnemonic the probes missed).  ``prefixes``: rows that
    LLVM reads together with the next instruction as one (gfx950's
    v_mfma_ld_scale_b32 + an MFMA: v_mfma_scale_*), each with the assembler's
    example pairs (128 bits); every 64-bit row is tried after each, and those
    LLVM takes as one instruction recorded with the bits that must hold."""
    layout, _cpus, major = FAMILIES[family]
    command = llvm_mc(major)
    cpus = processors(family)
    out: dict = {"family": family, "processor": " ".join(cpus), "llvm": llvm_version(command), "encodings": {}}
    texts: dict[str, list[str]] = defaultdict(list)
    all_rows: dict[str, dict[int, list]] = {}
    all_bases: dict[str, dict[int, tuple[int, str]]] = {}
    for encoding in LAYOUTS[layout]:
        words = encoding_words(encoding)
        keys = range(1 << sum(w for _, w in encoding.opcode))
        fills: list[tuple[tuple[int, int, int], ...] | int] = [encoding.fill, ()]
        # Some opcodes take only constants (s_barrier_signal -1): sources as -1, then as 0.
        for constant in (0xC1, 0x80):
            fills.append(tuple((shift, width, constant) for shift, width in encoding.literal_slots))
        fills += EXTRA_FILLS.get(encoding.name, [])
        fills += single_bit_fills(encoding) + random_fills(encoding, RANDOM_FILLS, "table")
        seeded = (seeds or {}).get(encoding.name, {})
        # Pass 1: the plain instruction, with the operand fills, then random operands; on
        # each processor in turn, for the opcode values the ones before did not decode.
        bases: dict[int, tuple[int, str]] = {}
        rows: dict[int, list] = {}
        for cpu in cpus:
            plain, owner = [], []
            for key in keys:
                if key in rows:
                    continue
                bits = opcode_bits(encoding, key)
                # A seed as assembled may use a length-changing field (NSA): plain first, as the row's base.
                tries = ([_sanitized(encoding, seeded[key]), seeded[key]] if key in seeded else []) + \
                    [_filled(bits, fill) for fill in fills]
                for filled in tries:
                    if claims(LAYOUTS[layout], encoding, filled):
                        plain.append((filled, words))
                        owner.append(key)
            for (filled, _w), key, answer in zip(plain, owner, disassemble(command, cpu, plain)):
                if answer is not None and key not in rows:
                    bases[key] = (filled, cpu)
                    rows[key] = [answer.mnemonic, answer.length, [], {}, {}]
                    texts[answer.mnemonic].append(answer.text)
        # Pass 2: literal markers per source, then the length-changing field values.
        variants: dict[str, list[tuple[int, int]]] = defaultdict(list)
        where: dict[str, list[tuple[int, str, int, int]]] = defaultdict(list)
        for key, (bits, cpu) in bases.items():
            for slot, (shift, width) in enumerate(encoding.literal_slots):
                for marker in (0xFF, 0xFE):
                    variants[cpu].append((put(bits, shift, width, marker), words))
                    where[cpu].append((key, "lit", slot, marker))
            if encoding.aux:
                shift, width, values = encoding.aux
                for value in values:
                    # A DPP/SDWA dword with valid controls goes right after the instruction.
                    extra = MARKER_DWORD.get(value, 0) if width == 9 else 0
                    variant = put(bits, shift, width, value)
                    if extra:
                        variants[cpu].append((variant | extra << (32 * words), words + 1))
                    else:
                        variants[cpu].append((variant, words))
                    where[cpu].append((key, "aux", 0, value))
        for cpu in variants:
            for (key, kind, slot, value), answer in zip(where[cpu], disassemble(command, cpu, variants[cpu])):
                row = rows[key]
                extra = -1 if answer is None else answer.length - row[1]
                if kind == "lit":
                    while len(row[2]) <= slot:
                        row[2].append([0, 0])
                    row[2][slot][0 if value == 0xFF else 1] = extra
                elif answer is not None and extra and answer.mnemonic != row[0]:
                    row[3][str(value)] = [extra, answer.mnemonic]     # v_mov_b32_sdwa, v_add3_u32_e64_dpp ...
                else:
                    row[3][str(value)] = extra
        all_rows[encoding.name] = rows
        all_bases[encoding.name] = bases
    # Pass 3: what each prefix row makes of every 64-bit row after it: first the assembler's
    # example pair with the second's opcode replaced, then the two rows' own probes.  For each
    # pair LLVM reads as one, every operand bit of the example flipped alone: the bits whose
    # flip parts the pair are the ones LLVM's 128-bit decoder fixes (mask, value).
    layout_of = {e.name: e for e in LAYOUTS[layout]}
    low = (1 << 64) - 1
    for (prefix_encoding, prefix_key), examples in sorted((prefixes or {}).items()):
        prefix_bits, cpu = all_bases[prefix_encoding][prefix_key]
        prefix_row = all_rows[prefix_encoding][prefix_key]
        tries, owner = [], []
        for encoding in LAYOUTS[layout]:
            if encoding_words(encoding) != 2:
                continue
            for key, (bits, _cpu) in all_bases[encoding.name].items():
                pairs = [e for e in examples if encoding.matches((e >> 64) & 0xFFFFFFFF)
                         and encoding.key(e >> 64) == key]                       # the assembler's own
                pairs += [e & low | (opcode_bits(encoding, key) | (e >> 64) & _free_bits(encoding)) << 64
                          for e in examples]                                      # another's, this opcode
                pairs += [e & low | bits << 64 for e in examples] + [prefix_bits | bits << 64]
                for pair in pairs:
                    tries.append((pair, 4))
                    owner.append((encoding.name, key))
        found: dict[tuple[str, int], tuple[int, str]] = {}
        for (bits, _words), (name, key), answer in zip(tries, owner, disassemble(command, cpu, tries)):
            length = prefix_row[1] + all_rows[name][key][1]
            if (name, key) not in found and answer is not None and answer.length == length \
                    and answer.mnemonic != prefix_row[0]:
                found[(name, key)] = (bits, answer.mnemonic)
                texts[answer.mnemonic].append(answer.text)
        for (name, key), (bits, mnemonic) in sorted(found.items()):
            free = _free_bits(layout_of[prefix_encoding]) | _free_bits(layout_of[name]) << 64
            flips = [bit for bit in range(128) if free >> bit & 1]
            answers = disassemble(command, cpu, [(bits ^ (1 << bit), 4) for bit in flips])
            mask = 0
            for bit, answer in zip(flips, answers):
                if answer is None or answer.length != 16 or answer.mnemonic != mnemonic:
                    mask |= 1 << bit
            prefix_row[4][f"{name}:{key}"] = [mnemonic, f"{mask:#034x}", f"{bits & mask:#034x}"]
    for encoding in LAYOUTS[layout]:
        table = {}
        rows = all_rows[encoding.name]
        for key in sorted(rows):
            mnemonic, length, literals, aux, pairs = rows[key]
            row: list = [mnemonic, length]
            has_literals = any(x for pair in literals for x in pair)
            has_aux = bool(aux) and any(v != 0 for v in aux.values())
            if has_literals or aux or pairs:
                row.append(literals if has_literals else 0)
            if has_aux or pairs:
                row.append(aux if has_aux else {})
            if pairs:
                row.append(dict(sorted(pairs.items())))
            table[str(key)] = row
        out["encodings"][encoding.name] = table
        print(f"{family} {encoding.name}: {len(table)} opcodes", file=sys.stderr)
    return out, texts


# -- the audit ------------------------------------------------------------------------------------

def _first(family: decoder.Family, data: bytes) -> tuple[decoder.Instruction | None, str]:
    try:
        return next(decoder.decode(data, 0, len(data), family)), ""
    except decoder.DecodeError as error:
        return None, error.message


def _opcode_named(family: decoder.Family, data: bytes) -> str:
    """'ENCODING opcode N' of the instruction at the start of ``data``."""
    dword0 = int.from_bytes(data[:4], "little")
    bits = int.from_bytes(data[:8].ljust(8, b"\0"), "little")
    for encoding, _table in family.by_top_byte[dword0 >> 24]:
        if encoding.matches(dword0):
            return f"{encoding.name} opcode {encoding.key(bits)}"
    return f"an encoding the layout lacks ({dword0:#010x})"


def sweep(name: str, family: decoder.Family, command: list[str], cpu: str,
          only: tuple[str, ...] = ()) -> tuple[list[str], dict[str, list[str]]]:
    """Audit 1: every opcode value under AUDIT_FILLS other random operands
    (of the encodings named in ``only``; all by default).  The faults, and
    the text LLVM printed for each probe it decoded."""
    problems = []
    texts: dict[str, list[str]] = defaultdict(list)
    renamed: dict[tuple[str, int, str], set[str]] = defaultdict(set)
    for encoding in LAYOUTS[family.layout]:
        if only and encoding.name not in only:
            continue
        words = encoding_words(encoding)
        keys = range(1 << sum(w for _, w in encoding.opcode))
        fills = random_fills(encoding, AUDIT_FILLS, "audit")
        probes = [(opcode_bits(encoding, key) | fill, words) for key in keys for fill in fills
                  if claims(LAYOUTS[family.layout], encoding, opcode_bits(encoding, key) | fill)]
        table = next((t for entries in family.by_top_byte for e, t in entries if e.name == encoding.name), {})
        reported: set[int] = set()
        for (bits, _words), answer in zip(probes, disassemble(command, cpu, probes)):
            if answer is None:
                continue
            texts[answer.mnemonic].append(answer.text)
            key = encoding.key(bits)
            if key in reported:
                continue
            data = probe_bytes(bits, words)
            hex_words = " ".join(f"{int.from_bytes(data[i:i + 4], 'little'):08X}"
                                 for i in range(0, answer.length, 4))
            where = f"{name} ({cpu}, LLVM {family.llvm}): {encoding.name} opcode {key} ({answer.mnemonic})"
            if key not in table:
                problems.append(f"{where}: llvm-mc decodes {hex_words} as `{answer.text}`; the table has no row")
                reported.add(key)
                continue
            found, why = _first(family, data)
            if found is None or found.length != answer.length:
                got = why if found is None else f"{found.length} bytes"
                problems.append(f"{where}: llvm-mc decodes {hex_words} as `{answer.text}` ({answer.length} bytes), "
                                f"the table {got}")
                reported.add(key)
            elif found.mnemonic != answer.mnemonic:
                renamed[(encoding.name, key, found.mnemonic)].add(answer.mnemonic)
    for (encoding_name, key, mnemonic), others in sorted(renamed.items()):
        print(f"{name}: note: {encoding_name} opcode {key} ({mnemonic}) also prints as {', '.join(sorted(others))}",
              file=sys.stderr)
    return problems, texts


def table_mnemonics(data: dict) -> set[str]:
    names = set()
    for rows in data["encodings"].values():
        for row in rows.values():
            forms = [row[0]] + [e[1] for e in (row[3].values() if len(row) > 3 else []) if isinstance(e, list)]
            for form in forms:
                names.update((form, _SUFFIX.sub("", form)))
    return names


def _candidates(mnemonic: str, texts: dict[str, list[str]]) -> list[str]:
    """Operand strings to try ``mnemonic`` with: none, then those LLVM
    printed for the mnemonics sharing the most leading ``_`` tokens with it,
    then those sharing one fewer, down to one."""
    tokens = mnemonic.split("_")
    by_shared: dict[int, list[str]] = defaultdict(list)
    for other, printed in texts.items():
        other_tokens = other.split("_")
        shared = 0
        while shared < min(len(tokens), len(other_tokens)) and tokens[shared] == other_tokens[shared]:
            shared += 1
        ending = 0           # lds_param_load and ds_param_load share their end
        while ending < min(len(tokens), len(other_tokens)) and tokens[-1 - ending] == other_tokens[-1 - ending]:
            ending += 1
        shared = max(shared, ending)
        if shared:
            by_shared[shared].extend(text[len(text.split()[0]):].strip() for text in printed)
    out = {"": None}
    out.update(dict.fromkeys(OPERAND_HINTS.get(mnemonic, [])))
    for shared in sorted(by_shared, reverse=True):
        for operands in by_shared[shared]:
            out.setdefault(operands, None)
            if len(out) >= 64:
                return list(out)
    return list(out)


class Finding(NamedTuple):
    """A mnemonic llvm-mc knows on some processors of a family that is not a
    mnemonic of the table, and how llvm-mc assembled it (code None: no
    operands were found)."""
    mnemonic: str
    cpus: tuple[str, ...]
    line: str
    code: bytes | None


def assembler_findings(name: str, data: dict, texts: dict[str, list[str]]) -> tuple[list[Finding], list[str]]:
    """Audit 2's half that asks llvm-mc: every mnemonic of its assembler
    that each processor of the family has and the table lacks by name,
    assembled (operands: those printed for the table's nearest mnemonics,
    then discover_operands); and what was checked (one line per processor)."""
    _layout, _cpus, major = FAMILIES[name]
    command = llvm_mc(major)
    version = data["llvm"]
    mnemonics = matcher_mnemonics(major)
    names = table_mnemonics(data)
    found: dict[tuple[str, bytes | None], tuple[list[str], str]] = {}
    checked = []
    for cpu in [p for p, f in PROCESSOR_FAMILY.items() if f == name]:
        absent = absent_mnemonics(command, cpu, mnemonics)
        if absent is None:
            checked.append(f"{name}: {cpu}: LLVM {version} does not know it, not checked")
            continue
        present = [m for m in mnemonics if m not in absent]
        missing = [m for m in present if m not in names]
        lines, owner = [], []
        for mnemonic in missing:
            for operands in _candidates(mnemonic, texts):
                lines.append(f"{mnemonic} {operands}".strip())
                owner.append(mnemonic)
        first: dict[str, tuple[str, bytes]] = {}
        for line, mnemonic, code in zip(lines, owner, assemble(command, cpu, lines) if lines else []):
            if isinstance(code, bytes) and mnemonic not in first:
                first[mnemonic] = (line, code)
        first.update(discover_operands(command, cpu, [m for m in missing if m not in first]))
        # A wider search for the few left (matrix ops whose register tuples must agree with each other).
        first.update(discover_operands(command, cpu, [m for m in missing if m not in first], beam=1024))
        for mnemonic in missing:
            # Per encoding: processors of one family may encode a mnemonic differently (gfx1154's v_med3_f32).
            line, code = first.get(mnemonic, ("", None))
            found.setdefault((mnemonic, code), ([], line))[0].append(cpu)
        checked.append(f"{name}: {cpu}: {len(present)} mnemonics of LLVM {version}'s assembler, "
                       f"{len(present) - len(missing)} in the table")
    return [Finding(m, tuple(cpus), line, code) for (m, code), (cpus, line) in found.items()], checked


def _encoding_at(family: decoder.Family, data: bytes) -> tuple[Encoding, int] | None:
    dword0 = int.from_bytes(data[:4], "little")
    bits = int.from_bytes(data[:8].ljust(8, b"\0"), "little")
    for encoding, _table in family.by_top_byte[dword0 >> 24]:
        if encoding.matches(dword0):
            return encoding, encoding.key(bits)
    return None


def seeds_and_prefixes(family: decoder.Family, findings: list[Finding]) -> tuple[dict[str, dict[int, int]],
                                                                               dict[tuple[str, int], list[int]]]:
    """What the assembler's encodings teach the probes: opcode values the
    table lacks (with the assembled bits to probe them with), and rows LLVM
    reads with the next instruction as one (the assembled bytes decode as
    two rows)."""
    seeds: dict[str, dict[int, int]] = defaultdict(dict)
    prefixes: dict[tuple[str, int], list[int]] = defaultdict(list)
    for finding in findings:
        if finding.code is None:
            continue
        first, _why = _first(family, finding.code)
        at = _encoding_at(family, finding.code)
        if first is None and at is not None:
            encoding, key = at
            size = 4 * encoding_words(encoding)
            seeds[encoding.name].setdefault(key, int.from_bytes(finding.code[:size].ljust(size, b"\0"), "little"))
        elif first is not None and first.length < len(finding.code) and at is not None:
            rest, _why = _first(family, finding.code[first.length:])
            if rest is not None and first.length + rest.length == len(finding.code) == 16:
                prefixes[(at[0].name, at[1])].append(int.from_bytes(finding.code, "little"))
    return dict(seeds), dict(prefixes)


def assembler_check(name: str, family: decoder.Family, findings: list[Finding]) -> tuple[list[str], int]:
    """Audit 2's verdict: each finding must decode with the table to the
    length llvm-mc encoded (an alias of a row, or a pair), and under the
    row's own name where only processors the table was not probed on know
    the finding's name (those print their name for it: gfx900's v_mad_mix_f32
    is gfx906's v_fma_mix_f32); the faults, and the number of aliases."""
    problems = []
    aliases = 0
    probed = set(processors(name))
    for finding in findings:
        where = f"{name} ({', '.join(finding.cpus)}; LLVM {family.llvm})"
        if finding.code is None:
            if (name, finding.mnemonic) in UNASSEMBLABLE:
                print(f"{name}: note: {finding.mnemonic} is not assembled: {UNASSEMBLABLE[(name, finding.mnemonic)]}",
                      file=sys.stderr)
                continue
            problems.append(f"{where}: llvm-mc knows `{finding.mnemonic}`, not a mnemonic of the table, and none "
                            f"of the operands tried assembles it to check its encoding")
            continue
        found = None
        try:
            found = next(decoder.decode(finding.code, 0, len(finding.code), family))
            why = ""
        except decoder.DecodeError as error:
            why = error.message
        if found is not None and found.length == len(finding.code):
            if not probed & set(finding.cpus) and _SUFFIX.sub("", found.mnemonic) != finding.mnemonic:
                problems.append(f"{where}: llvm-mc assembles `{finding.line}` as the table's {found.mnemonic}, "
                                f"a name the processors probed ({', '.join(sorted(probed))}) refuse: those print "
                                f"their own name for it and want a table of their own")
                continue
            aliases += 1
            continue
        got = why if found is None else f"{found.mnemonic}, {found.length} bytes"
        problems.append(f"{where}: llvm-mc assembles `{finding.line}` as [{finding.code.hex(' ')}] "
                        f"({len(finding.code)} bytes, {_opcode_named(family, finding.code)}); the table: {got}")
    return problems, aliases


def pair_sweep(name: str, family: decoder.Family, command: list[str], cpu: str) -> list[str]:
    """Audit 1 for pairs: each prefix row followed by each of its partners,
    both with AUDIT_FILLS random operands: LLVM's length must be the table's."""
    problems = []
    layout = LAYOUTS[family.layout]
    for prefix_encoding in layout:
        table = next((t for entries in family.by_top_byte for e, t in entries if e is prefix_encoding), {})
        for prefix_key, opcode in sorted(table.items()):
            probes = []
            for (partner_name, partner_key), _form, mask, value in opcode.pairs:
                partner = next(e for e in layout if e.name == partner_name)
                fills = zip(random_fills(prefix_encoding, 2 * AUDIT_FILLS, f"pair:{prefix_key}"),
                            random_fills(partner, 2 * AUDIT_FILLS, f"pair:{partner_key}"))
                for number, (first, second) in enumerate(fills):
                    bits = (opcode_bits(prefix_encoding, prefix_key) | first
                            | (opcode_bits(partner, partner_key) | second) << 64)
                    if number % 2:      # half of them with the bits the pair needs, half as they come
                        bits = bits & ~mask | value
                    probes.append((bits, 4))
            alone = disassemble(command, cpu, [(bits >> 64, 2) for bits, _words in probes])
            for (bits, words), answer, second in zip(probes, disassemble(command, cpu, probes), alone):
                if answer is None or second is None:
                    continue            # operands LLVM refuses in either half: the table decodes more, as elsewhere
                data = probe_bytes(bits, words)
                found, why = _first(family, data)
                if found is None or found.length != answer.length:
                    problems.append(f"{name} ({cpu}, LLVM {family.llvm}): {prefix_encoding.name} opcode {prefix_key} "
                                    f"({opcode.mnemonic}) then [{data[8:16].hex(' ')}]: llvm-mc reads "
                                    f"{answer.length} bytes as `{answer.text}`, the table "
                                    f"{why or f'{found.length} bytes'}")
                    break
    return problems


def audit(name: str, data: dict, texts: dict[str, list[str]],
          findings: list[Finding] | None = None) -> tuple[list[str], list[str]]:
    """The faults of a table (probed now or committed), and what was checked."""
    _layout, _cpus, major = FAMILIES[name]
    family = decoder.family_from_table(name, data)
    problems: list[str] = []
    for encoding_name, rows in data["encodings"].items():
        for key, row in rows.items():
            for value, extra in (row[3].items() if len(row) > 3 else ()):
                size = extra[0] if isinstance(extra, list) else extra
                if size < -1:       # -1: LLVM refuses the value; the decoder only adds bytes
                    problems.append(f"{name}: {encoding_name} opcode {key} ({row[0]}): field value {value} "
                                    f"takes {-size} bytes off the row's probe, which used a longer form")
    for cpu in processors(name):
        found, swept = sweep(name, family, llvm_mc(major), cpu)
        problems += found + pair_sweep(name, family, llvm_mc(major), cpu)
        for mnemonic, printed in swept.items():
            texts.setdefault(mnemonic, []).extend(printed)
    checked: list[str] = []
    if findings is None:
        findings, checked = assembler_findings(name, data, texts)
    more, aliases = assembler_check(name, family, findings)
    checked.append(f"{name}: {aliases} of the mnemonics not in the table are aliases of its rows")
    return problems + more, checked


# -- output ---------------------------------------------------------------------------------------

def encoding_lines(encodings: dict) -> list[str]:
    """The encodings' rows, one opcode a line (also the operand tables', scripts/generate-isa-operands.py)."""
    lines = []
    names = list(encodings)
    for n, name in enumerate(names):
        rows = encodings[name]
        lines.append(f'"{name}":{{')
        keys = list(rows)
        for i, key in enumerate(keys):
            comma = "," if i + 1 < len(keys) else ""
            lines.append(f'"{key}":{json.dumps(rows[key], separators=(",", ":"))}{comma}')
        lines.append("}" + ("," if n + 1 < len(names) else ""))
    return lines


def _one_opcode_a_line(data: dict) -> str:
    """Compact JSON with one opcode (and one alias) per line, so a
    regeneration diffs by opcode."""
    head = {k: v for k, v in data.items() if k not in ("encodings", "aliases")}
    lines = [json.dumps(head, separators=(",", ":"))[:-1] + ',"encodings":{', *encoding_lines(data["encodings"])]
    aliases = data.get("aliases", {})
    lines.append('},"aliases":{')
    for i, (mnemonic, example) in enumerate(sorted(aliases.items())):
        comma = "," if i + 1 < len(aliases) else ""
        lines.append(f'{json.dumps(mnemonic)}:{json.dumps(example, separators=(",", ":"))}{comma}')
    lines.append("}}")
    return "\n".join(lines)


def build(name: str) -> tuple[dict, list[str], list[str]]:
    """A family's table, its faults and what was checked: probe, learn
    from the assembler what the probes missed (then probe again with it),
    audit."""
    data, texts = probe_family(name)
    findings, checked = assembler_findings(name, data, texts)
    seeds, prefixes = seeds_and_prefixes(decoder.family_from_table(name, data), findings)
    if seeds or prefixes:
        taught = ", ".join([f"{e} opcode {k}" for e in sorted(seeds) for k in sorted(seeds[e])]
                           + [f"{e} opcode {k} pairs" for e, k in sorted(prefixes)])
        print(f"{name}: probing again with the assembler's encodings: {taught}", file=sys.stderr)
        data, more_texts = probe_family(name, seeds, prefixes)
        for mnemonic, printed in more_texts.items():
            texts.setdefault(mnemonic, []).extend(printed)
    problems, more_checked = audit(name, data, texts, findings)
    # The mnemonics llvm-mc knows that are none of the rows', as it assembled them (each decodes with
    # the table: the audit says so): tests/oracle/test_isa_tables.py asks llvm-mc again, cheaply.
    aliases: dict[str, list[list[str]]] = defaultdict(list)
    rows = table_mnemonics(data)          # those the probes found again (the seeds') are rows now
    for finding in sorted(findings, key=lambda f: (f.mnemonic, f.cpus)):
        if finding.code is not None and finding.mnemonic not in rows:
            aliases[finding.mnemonic].append([finding.line, finding.code.hex(), " ".join(finding.cpus)])
    data["aliases"] = dict(aliases)
    return data, problems, checked + more_checked


def main(argv: list[str]) -> int:
    check = "--check" in argv
    families = [a for a in argv if a != "--check"] or list(FAMILIES)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        print(f"generate-isa-tables: no family {', '.join(unknown)} (known: {', '.join(FAMILIES)})",
              file=sys.stderr)
        return 2
    TABLES.mkdir(parents=True, exist_ok=True)
    failed = []
    began_all = time.monotonic()
    for name in families:
        began = time.monotonic()
        path = TABLES / f"{name}.json"
        data, problems, checked = build(name)
        text = _one_opcode_a_line(data) + "\n"
        if check and not problems and (not path.is_file() or path.read_text() != text):
            problems.append(f"{path.name} is not the table LLVM {data['llvm']} gives now (run without --check)")
        for line in checked:
            print(line, file=sys.stderr)
        print(f"{name}: {time.monotonic() - began:.1f} s", file=sys.stderr)
        if problems:
            failed.append(name)
            for problem in problems:
                print(f"generate-isa-tables: {problem}", file=sys.stderr)
            continue
        if not check:
            tmp = path.with_suffix(".json.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
    print(f"generate-isa-tables: {len(families)} families in {time.monotonic() - began_all:.0f} s", file=sys.stderr)
    if failed:
        print(f"generate-isa-tables: {'checked' if check else 'not written'}, incomplete: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
