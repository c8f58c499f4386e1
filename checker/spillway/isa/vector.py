"""Instruction boundaries with numpy: the length of an instruction starting at
every dword of the code at once, then every kernel's chain of instructions
followed together, one instruction per kernel per step.

Same tables and rules as ``decoder`` (the reference this is tested against);
numpy is imported only here, by callers that ask for it (it is not one of
spillway's dependencies yet).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from spillway.isa import encodings
from spillway.isa.decoder import load_family

_VOP_MARKERS = (encodings.SDWA, encodings.DPP16, encodings.DPP8, encodings.DPP8_FI)
INVALID = -1


@dataclass(frozen=True)
class _Dense:
    """One encoding's table as arrays indexed by the opcode key."""

    mask: int
    value: int
    fields: tuple[tuple[int, int], ...]
    key_words: int
    base: np.ndarray                                   # bytes; 0: no such opcode
    literals: tuple[tuple[int, int, np.ndarray, np.ndarray], ...]   # (shift, mask, extra 0xFF, extra 0xFE)
    aux: tuple[int, int, tuple[tuple[int, np.ndarray], ...]] | None  # (shift, mask, ((value, extra), ...))
    reach: int


@lru_cache(maxsize=None)
def _dense(name: str) -> tuple[_Dense, ...]:
    family = load_family(name)
    seen: dict[str, tuple] = {}
    for entries in family.by_top_byte:
        for encoding, table in entries:
            seen.setdefault(encoding.name, (encoding, table))
    layout = encodings.LAYOUTS[family.layout]
    out = []
    for encoding in layout:
        if encoding.name not in seen:
            continue
        _e, table = seen[encoding.name]
        size = 1 << sum(w for _s, w in encoding.opcode)
        base = np.zeros(size, np.int16)
        literals = []
        for slot, (shift, width) in enumerate(encoding.literal_slots):
            ext32 = np.zeros(size, np.int16)
            ext64 = np.zeros(size, np.int16)
            for key, opcode in table.items():
                for lit_shift, _mask, e32, e64 in opcode.literals:
                    if lit_shift == shift:
                        ext32[key], ext64[key] = e32, e64
            literals.append((shift, (1 << width) - 1, ext32, ext64))
        for key, opcode in table.items():
            base[key] = opcode.length
        aux = None
        if encoding.aux:
            shift, width, values = encoding.aux
            columns = []
            for value in values:
                extra = np.zeros(size, np.int16)
                for key, opcode in table.items():
                    for known, ext, _form in opcode.aux:
                        if known != value:
                            continue
                        if ext >= 0:
                            extra[key] = ext
                        elif width == 9 and value in _VOP_MARKERS:
                            extra[key] = 4
                        elif encoding.name == "MIMG" and family.layout == "gfx10":
                            extra[key] = 4 * value
                        else:
                            extra[key] = INVALID
                columns.append((value, extra))
            aux = (shift, (1 << width) - 1, tuple(columns))
        top = max([s + w for s, w in encoding.opcode] + [s + w for s, w in encoding.literal_slots] + [32])
        if encoding.aux:
            top = max(top, encoding.aux[0] + encoding.aux[1])
        out.append(_Dense(encoding.mask, encoding.value, encoding.opcode, encoding.key_words, base,
                          tuple(literals), aux, 8 if top > 32 else 4))
    return tuple(out)


def _field(word0: np.ndarray, word1: np.ndarray, shift: int, width: int) -> np.ndarray:
    mask = (1 << width) - 1
    if shift >= 32:
        return (word1 >> np.uint32(shift - 32)) & np.uint32(mask)
    if shift + width <= 32:
        return (word0 >> np.uint32(shift)) & np.uint32(mask)
    low = 32 - shift
    return ((word0 >> np.uint32(shift)) | (word1 << np.uint32(low))) & np.uint32(mask)


def lengths(words: np.ndarray, name: str) -> np.ndarray:
    """Bytes of the instruction that would start at each dword of ``words``
    (little-endian uint32; the dword after the last reads as 0), INVALID
    where no instruction starts so, as the reference decodes it."""
    count = len(words)
    word1 = np.zeros(count, np.uint32)
    word1[:-1] = words[1:]
    out = np.full(count, INVALID, np.int16)
    todo = np.ones(count, bool)
    for dense in _dense(name):
        hit = todo & ((words & np.uint32(dense.mask)) == np.uint32(dense.value))
        if not hit.any():
            continue
        todo &= ~hit
        index = np.nonzero(hit)[0]
        w0, w1 = words[index], word1[index]
        key = np.zeros(len(index), np.int64)
        at = 0
        for shift, width in dense.fields:
            key |= _field(w0, w1, shift, width).astype(np.int64) << at
            at += width
        length = dense.base[key].astype(np.int16)
        valid = length > 0
        literal = np.zeros(len(index), np.int16)
        for shift, mask, ext32, ext64 in dense.literals:
            value = _field(w0, w1, shift, mask.bit_length())
            extra = np.where(value == 0xFF, ext32[key], np.where(value == 0xFE, ext64[key], 0))
            valid &= extra >= 0
            literal = np.maximum(literal, extra)
        length += literal
        if dense.aux is not None:
            shift, mask, columns = dense.aux
            value = _field(w0, w1, shift, mask.bit_length())
            for known, extra_of in columns:
                extra = np.where(value == known, extra_of[key], 0)
                valid &= extra >= 0
                length += np.maximum(extra, 0).astype(np.int16)
        out[index] = np.where(valid, length, INVALID)
    return out


def boundaries(code: bytes | memoryview, ranges: list[tuple[int, int]],
               name: str) -> list[tuple[np.ndarray, int | None]]:
    """For each (start, size) range of ``code``: the offsets (from the range's
    start) of its instructions, and the offset where decoding stopped (None:
    it reached the end exactly).  Ranges must start 4-byte aligned and not
    overlap (ValueError otherwise: use the reference decoder)."""
    usable = len(code) - len(code) % 4
    words = np.frombuffer(memoryview(code)[:usable], dtype="<u4").astype(np.uint32)
    count = len(words)
    order = sorted(range(len(ranges)), key=lambda i: ranges[i][0])
    previous_end = 0
    for number in order:
        start, size = ranges[number]
        if start % 4 or start < previous_end or start < 0:
            raise ValueError("ranges must be 4-byte aligned and disjoint")
        previous_end = start + max(size, 0)
    size_of = lengths(words, name).astype(np.int64)
    # The dword each instruction leads to; the sentinel ``count`` where the
    # chain ends (range end, invalid, or running past the range).
    owner_end = np.zeros(count + 1, np.int64)        # byte end of the range holding each dword (0: none)
    for start, size in ranges:
        if size > 0:
            owner_end[start // 4:min((start + size + 3) // 4, count)] = start + size
    here = np.arange(count, dtype=np.int64) * 4
    after = here + size_of
    inside = owner_end[:count] > 0
    bad = inside & ((size_of <= 0) | (after > owner_end[:count]) | (here + 4 > owner_end[:count]))
    chain = np.where(inside & ~bad & (after < owner_end[:count]), after // 4, count)
    chain = np.append(chain, count)
    reached = np.zeros(count + 1, bool)
    for start, size in ranges:
        if size > 0 and start + 4 <= usable + 4:
            reached[min(start // 4, count)] = True
    reached[count] = False
    # Doubling: after round k the marks hold every dword within 2**k - 1 steps of a start.
    jump = chain
    while True:
        target = jump[np.nonzero(reached)[0]]
        reached[target] = True
        reached[count] = False
        if (target == count).all():
            break          # every chain from a start is shorter than the current jump: all marked
        jump = jump[jump]
    positions = np.nonzero(reached[:count])[0]
    stops = positions[bad[positions]]
    positions = positions[~bad[positions]]
    out = []
    for start, size in ranges:
        low, high = np.searchsorted(positions, [start // 4, (start + max(size, 0) + 3) // 4])
        mine = positions[low:high] * 4 - start
        cut = np.searchsorted(stops, [start // 4, (start + max(size, 0) + 3) // 4])
        stop = int(stops[cut[0]] * 4 - start) if cut[1] > cut[0] else None
        if stop is None and size > 0 and (start + size > usable or size % 4):
            # A range past the usable words, or a ragged end: where the last instruction ended.
            end_at = int(mine[-1] + size_of[(start + int(mine[-1])) // 4]) if len(mine) else 0
            if end_at < size:
                stop = end_at
        out.append((mine, stop))
    return out
