"""Instruction boundaries of AMDGPU machine code: the plain-Python reference.

The encoding is found from dword0's fixed bits (``encodings``), the opcode from
its field, and the length from the probed table row plus the operand fields
that add dwords: a source of 0xFF (32-bit literal) or, on gfx1250, 0xFE
(64-bit literal) -- one literal per instruction however many sources name it
--, a DPP/SDWA marker in src0, the MIMG NSA field.  Nothing here runs LLVM.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Iterator

import spillway.isa.encodings as encodings
from spillway.isa.encodings import Encoding
from spillway import json_codec
from spillway.resources.targets import processor_of

_VOP_MARKERS = (encodings.SDWA, encodings.DPP16, encodings.DPP8, encodings.DPP8_FI)


@dataclass(frozen=True, slots=True)
class Opcode:
    mnemonic: str
    length: int                                       # bytes with plain operands
    literals: tuple[tuple[int, int, int, int], ...]   # (shift, mask, extra for 0xFF, for 0xFE); -1: LLVM rejects
    aux: tuple[tuple[int, int, str | None], ...]      # (field value, extra bytes, mnemonic); -1: LLVM rejects
    # ((encoding, opcode) of a next instruction LLVM reads together with this one, the pair's mnemonic,
    # and the bits of the pair (this one's 64 | the next one's 64 << 64) LLVM's 128-bit decoder fixes:
    # mask, value): gfx950's v_mfma_ld_scale_b32 and the MFMA after it are one v_mfma_scale_*.
    pairs: tuple[tuple[tuple[str, int], str, int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Instruction:
    offset: int          # from the start of the code given to decode()
    length: int          # bytes
    encoding: str
    opcode: Opcode
    bits: int            # dword0 | dword1 << 32 (dword1 zero for 32-bit instructions); of a pair, the second's
    mnemonic: str        # as objdump prints it (the DPP/SDWA forms named apart)


class DecodeError(Exception):
    """Why decoding stopped, and where (offset from the start of the code)."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True)
class Family:
    name: str
    layout: str
    llvm: str
    by_top_byte: tuple[tuple[tuple[Encoding, dict[int, Opcode]], ...], ...]


def family_of(target: str) -> str | None:
    """Table family of a target ID or processor name (None: no decoder for it)."""
    return encodings.PROCESSOR_FAMILY.get(processor_of(target))


@lru_cache(maxsize=None)
def load_family(name: str) -> Family:
    text = resources.files("spillway.isa").joinpath("tables").joinpath(f"{name}.json").read_bytes()
    return family_from_table(name, json_codec.loads(text))


def family_from_table(name: str, data: dict) -> Family:
    """A family from its parsed ``tables/<name>.json`` (the generator checks
    a table it has just probed this way, before writing it)."""
    layout_name = encodings.FAMILIES[name][0]
    layout = encodings.LAYOUTS[layout_name]
    tables: list[tuple[Encoding, dict[int, Opcode]]] = []
    for encoding in layout:
        rows = data["encodings"].get(encoding.name, {})
        table: dict[int, Opcode] = {}
        for key, row in rows.items():
            mnemonic, length = row[0], row[1]
            literals = []
            if len(row) > 2 and row[2]:
                for (shift, width), (ext32, ext64) in zip(encoding.literal_slots, row[2]):
                    if ext32 or ext64:
                        literals.append((shift, (1 << width) - 1, ext32, ext64))
            aux = tuple(sorted((int(v), e[0], e[1]) if isinstance(e, list) else (int(v), e, None)
                               for v, e in row[3].items())) if len(row) > 3 else ()
            pairs = tuple(sorted(((name, int(number)), form, int(mask, 16), int(value, 16))
                                 for (name, number), (form, mask, value) in
                                 ((k.split(":"), v) for k, v in row[4].items()))) if len(row) > 4 else ()
            table[int(key)] = Opcode(mnemonic, length, tuple(literals), aux, pairs)
        tables.append((encoding, table))
    by_top: list[tuple[tuple[Encoding, dict[int, Opcode]], ...]] = []
    for top in range(256):
        word = top << 24
        by_top.append(tuple((e, t) for e, t in tables
                            if (e.mask & 0xFF000000) & word == e.value & 0xFF000000 & e.mask))
    return Family(name, layout_name, data.get("llvm", "?"), tuple(by_top))


@lru_cache(maxsize=None)
def _reach(encoding: Encoding) -> int:
    """Bytes needed before the length is known."""
    top = max([s + w for s, w in encoding.opcode] + [s + w for s, w in encoding.literal_slots] + [32])
    if encoding.aux:
        top = max(top, encoding.aux[0] + encoding.aux[1])
    return 8 if top > 32 else 4


def decode(code: bytes | memoryview, start: int, end: int, family: Family,
           memo: dict | None = None) -> Iterator[Instruction]:
    """Every instruction in ``code[start:end]``; raises DecodeError where an
    encoding is unknown or an instruction runs past ``end``.  ``memo``: a
    dict kept by the caller across calls of one family (isa.liveness reads
    a code object's kernels through one), the decoding of each distinct
    first 8 bytes kept: an instruction's encoding, opcode, length and form
    depend on those bytes alone (its literals follow them), except a pair's
    (not kept) and one running past ``end`` (checked again)."""
    view = memoryview(code)
    at = start
    while at < end:
        head = view[at:at + 8].tobytes() if memo is not None and at + 8 <= end else None
        known = memo.get(head) if head is not None else None      # type: ignore[union-attr]
        if known is not None and at + known[0] <= end:
            yield Instruction(at, known[0], known[1], known[2], known[3], known[4])
            at += known[0]
            continue
        instruction = _one(view, at, end, family)
        if instruction.opcode.pairs:
            instruction = _paired(view, instruction, end, family)
        elif head is not None:
            if len(memo) >= MEMO_LIMIT:         # type: ignore[arg-type]
                memo.clear()                    # type: ignore[union-attr]
            memo[head] = (instruction.length, instruction.encoding, instruction.opcode,   # type: ignore[index]
                          instruction.bits, instruction.mnemonic)
        yield instruction
        at += instruction.length


# The most entries a decode() memo holds before it is emptied (a hostile binary must not grow it without end).
MEMO_LIMIT = 1 << 17


def _paired(view: memoryview, first: Instruction, end: int, family: Family) -> Instruction:
    """``first`` and the instruction after it as one, where LLVM reads them
    so (the second's fields: an MFMA's registers; the pair's name), when
    both lie before ``end`` (llvm-objdump reads a symbol's bytes only)."""
    at = first.offset
    try:
        second = _one(view, at + first.length, end, family)
    except DecodeError:
        return first
    key = (second.encoding, next(e for e, _t in family.by_top_byte[(second.bits >> 24) & 0xFF]
                                 if e.name == second.encoding).key(second.bits))
    both = first.bits | second.bits << 64
    for partner, form, mask, value in first.opcode.pairs:
        if partner == key and both & mask == value:
            return Instruction(at, first.length + second.length, second.encoding, second.opcode, second.bits, form)
    return first


def _one(view: memoryview, at: int, end: int, family: Family) -> Instruction:
    """The instruction at ``at`` by itself."""
    if at + 4 > end:
        raise DecodeError(f"truncated instruction ({end - at} bytes left)", at)
    dword0 = int.from_bytes(view[at:at + 4], "little")
    found = None
    for encoding, table in family.by_top_byte[dword0 >> 24]:
        if dword0 & encoding.mask == encoding.value:
            found = encoding, table
            break
    if found is None:
        raise DecodeError(f"invalid encoding {dword0:#010x}", at)
    encoding, table = found
    bits = dword0
    if at + 8 <= end:
        bits |= int.from_bytes(view[at + 4:at + 8], "little") << 32
    elif _reach(encoding) == 8:
        raise DecodeError(f"truncated {encoding.name} instruction ({end - at} bytes left)", at)
    opcode = table.get(encoding.key(bits))
    if opcode is None:
        raise DecodeError(f"invalid {encoding.name} encoding {bits & 0xFFFFFFFF:#010x}", at)
    extra, mnemonic = _extra(encoding, family, opcode, bits, at)
    length = opcode.length + extra
    if at + length > end:
        raise DecodeError(f"truncated {mnemonic} ({length} bytes, {end - at} left)", at)
    return Instruction(at, length, encoding.name, opcode, bits, mnemonic)


def _extra(encoding: Encoding, family: Family, opcode: Opcode, bits: int, at: int) -> tuple[int, str]:
    """Bytes the operand fields add, and the mnemonic of that form."""
    extra = 0
    mnemonic = opcode.mnemonic
    literal = 0
    for shift, mask, ext32, ext64 in opcode.literals:
        value = (bits >> shift) & mask
        if value == encodings.LITERAL32:
            size = ext32
        elif value == encodings.LITERAL64:
            size = ext64
        else:
            continue
        if size < 0:
            raise DecodeError(f"invalid literal operand in {opcode.mnemonic}", at)
        literal = max(literal, size)
    extra += literal
    if encoding.aux and opcode.aux:
        shift, width, _values = encoding.aux
        value = (bits >> shift) & ((1 << width) - 1)
        for known, size, form in opcode.aux:
            if known != value:
                continue
            mnemonic = form or mnemonic
            if size >= 0:
                extra += size
            elif width == 9 and value in _VOP_MARKERS:
                # The DPP/SDWA dword is there whatever LLVM made of the probe's; LLVM names the form so.
                extra += 4
                base = mnemonic[:-4] if mnemonic.endswith(("_e32", "_e64")) else mnemonic
                mnemonic = base + ("_sdwa" if value == encodings.SDWA else "_dpp")
            elif encoding.name == "MIMG" and family.layout == "gfx10":
                extra += 4 * value    # GFX10 NSA: the field counts the extra address dwords
            else:
                raise DecodeError(f"invalid {encoding.name} operand field in {opcode.mnemonic}", at)
            break
    return extra, mnemonic
