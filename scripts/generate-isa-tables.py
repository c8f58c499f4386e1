#!/usr/bin/env python3
"""Write checker/spillway/isa/tables/<family>.json by asking LLVM's disassembler.

For every encoding of a family (spillway.isa.encodings) and every value of its
opcode field, this builds a probe instruction (plain operands), the same with
each literal-capable source set to 0xFF and 0xFE, and with each length-changing
field value (DPP/SDWA markers in src0, MIMG NSA), and feeds them to
``llvm-mc --disassemble -show-encoding``.  The encoding LLVM prints says how
many bytes the instruction took; the first word of its text is the mnemonic.
The tables are facts LLVM states about these bytes, nothing else.

Each probe sits on its own input line (llvm-mc disassembles lines separately),
behind a marker ``s_movk_i32 vcc_lo, N`` and in front of ``s_nop 0`` padding
that a literal or a longer encoding may swallow.

  python3 scripts/generate-isa-tables.py [FAMILY ...]

LLVM 22 (host) for most families, bookworm's LLVM 19 for gfx940, the sid
root's LLVM 24 (scripts/install-toolchains.sh --root-path) for gfx12/gfx1250.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "checker"))

from spillway.isa.encodings import FAMILIES, LAYOUTS, Encoding  # noqa: E402

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
PADDING = 6                            # s_nop dwords after each probe
BATCH = 60000
WARNING = re.compile(r"<stdin>:(\d+):(\d+): warning: invalid instruction encoding")
PROBE_COLUMN = 1 + 4 * 5               # each byte is "0xHH "; the marker takes four
LINE = re.compile(r"^\s*(\S.*?)\s*(?:;|//) encoding: \[([0-9a-fx,]*)\]")


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


def disassemble(command: list[str], cpu: str, probes: list[tuple[int, int]]) -> list[tuple[str, int] | None]:
    """(mnemonic, length in bytes) of each probe ((bits, dwords given)), None
    where LLVM found no instruction."""
    results: list[tuple[str, int] | None] = []
    for first in range(0, len(probes), BATCH):
        results.extend(_disassemble_batch(command, cpu, probes[first:first + BATCH]))
    return results


def _disassemble_batch(command: list[str], cpu: str, batch: list[tuple[int, int]]) -> list[tuple[str, int] | None]:
    """One llvm-mc run; where LLVM crashes on some probe, halves until that
    probe alone is left, and counts it as no instruction.

    The length is what the probe consumed: the bytes of its line after the
    marker less what LLVM printed after it (the s_nop padding it left).  The
    encoding LLVM prints for the probe itself is re-encoded, not the input
    (op_sel_hi bits, for one), so it says nothing about the length.  A probe
    is invalid when llvm-mc warns at its column (line = marker index + 1)."""
    lines = []
    for index, (bits, words) in enumerate(batch):
        dwords = [MARKER | index] + [(bits >> (32 * i)) & 0xFFFFFFFF for i in range(words)]
        dwords += [S_NOP] * PADDING
        lines.append(" ".join(f"0x{b:02x}" for d in dwords for b in d.to_bytes(4, "little")))
    env = dict(os.environ, LLVM_DISABLE_SYMBOLIZATION="1")
    run = subprocess.run(command + ["--disassemble", "-show-encoding", "-triple=amdgcn-amd-amdhsa",
                                    f"-mcpu={cpu}"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, check=False, env=env)
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
    results: list[tuple[str, int] | None] = []
    for index, (_bits, words) in enumerate(batch):
        columns = warned.get(index, [])
        if PROBE_COLUMN in columns or not groups[index]:
            results.append(None)
            continue
        after = sum(length for _t, length in groups[index][1:]) + 4 * sum(c > PROBE_COLUMN for c in columns)
        consumed = 4 * (words + PADDING) - after
        results.append((groups[index][0][0].split()[0], consumed))
    return results


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


def probe_family(family: str) -> dict:
    layout, cpu, major = FAMILIES[family]
    command = llvm_mc(major)
    out: dict = {"family": family, "processor": cpu, "llvm": llvm_version(command), "encodings": {}}
    for encoding in LAYOUTS[layout]:
        words = encoding_words(encoding)
        keys = range(1 << sum(w for _, w in encoding.opcode))
        # Pass 1: the plain instruction, with the operand fill and without.
        bases: dict[int, int] = {}
        plain = []
        fills = [encoding.fill, ()]
        # Some opcodes take only constants (s_barrier_signal -1): sources as -1, then as 0.
        for constant in (0xC1, 0x80):
            fills.append(tuple((shift, width, constant) for shift, width in encoding.literal_slots))
        fills += EXTRA_FILLS.get(encoding.name, [])
        for key in keys:
            bits = opcode_bits(encoding, key)
            for fill in fills:
                filled = bits
                for shift, width, value in fill:
                    filled = put(filled, shift, width, value)
                plain.append((filled, words))
        answers = disassemble(command, cpu, plain)
        rows: dict[int, list] = {}
        for key in keys:
            for choice in range(len(fills)):
                answer = answers[len(fills) * key + choice]
                if answer is not None:
                    bases[key] = plain[len(fills) * key + choice][0]
                    rows[key] = [answer[0], answer[1], [], {}]
                    break
        # Pass 2: literal markers per source, then the length-changing field values.
        variants = []
        where = []
        for key, bits in bases.items():
            for slot, (shift, width) in enumerate(encoding.literal_slots):
                for marker in (0xFF, 0xFE):
                    variants.append((put(bits, shift, width, marker), words))
                    where.append((key, "lit", slot, marker))
            if encoding.aux:
                shift, width, values = encoding.aux
                for value in values:
                    # A DPP/SDWA dword with valid controls goes right after the instruction.
                    extra = MARKER_DWORD.get(value, 0) if width == 9 else 0
                    variant = put(bits, shift, width, value)
                    if extra:
                        variants.append((variant | extra << (32 * words), words + 1))
                    else:
                        variants.append((variant, words))
                    where.append((key, "aux", 0, value))
        for (key, kind, slot, value), answer in zip(where, disassemble(command, cpu, variants)):
            row = rows[key]
            extra = -1 if answer is None else answer[1] - row[1]
            if kind == "lit":
                while len(row[2]) <= slot:
                    row[2].append([0, 0])
                row[2][slot][0 if value == 0xFF else 1] = extra
            elif answer is not None and extra and answer[0] != row[0]:
                row[3][str(value)] = [extra, answer[0]]     # v_mov_b32_sdwa, v_add3_u32_e64_dpp ...
            else:
                row[3][str(value)] = extra
        table = {}
        for key in sorted(rows):
            mnemonic, length, literals, aux = rows[key]
            row = [mnemonic, length]
            if any(x for pair in literals for x in pair) or aux:
                row.append(literals if any(x for pair in literals for x in pair) else 0)
            if aux and any(v != 0 for v in aux.values()):
                row.append(aux)
            table[str(key)] = row
        out["encodings"][encoding.name] = table
        print(f"{family} {encoding.name}: {len(table)} opcodes", file=sys.stderr)
    return out


def _one_opcode_a_line(data: dict) -> str:
    """Compact JSON with one opcode per line, so a regeneration diffs by opcode."""
    head = {k: v for k, v in data.items() if k != "encodings"}
    lines = [json.dumps(head, separators=(",", ":"))[:-1] + ',"encodings":{']
    names = list(data["encodings"])
    for n, name in enumerate(names):
        rows = data["encodings"][name]
        lines.append(f'"{name}":{{')
        keys = list(rows)
        for i, key in enumerate(keys):
            comma = "," if i + 1 < len(keys) else ""
            lines.append(f'"{key}":{json.dumps(rows[key], separators=(",", ":"))}{comma}')
        lines.append("}" + ("," if n + 1 < len(names) else ""))
    lines.append("}}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    families = argv or list(FAMILIES)
    TABLES.mkdir(parents=True, exist_ok=True)
    for family in families:
        data = probe_family(family)
        path = TABLES / f"{family}.json"
        text = _one_opcode_a_line(data)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(text + "\n")
        os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
