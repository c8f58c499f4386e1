"""Instruction boundaries with numpy: the length of an instruction starting at
every dword of the code at once, then every kernel's chain of instructions
followed together, one instruction per kernel per step.

Same tables and rules as ``decoder`` (the reference this is tested against);
numpy (a dependency) is imported only here, by callers that decode.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

import spillway.isa.encodings as encodings
from spillway.isa.decoder import DecodeError, Opcode, decode, family_of, load_family
from spillway.isa.evidence import (AGPR_READ, AGPR_WRITE, BRANCH, BUFFER_LOAD, BUFFER_STORE, CALL, FLAT, KINDS, LDS,
                                   MATRIX, SCRATCH_LOAD, SCRATCH_STORE, KernelCode, accumulator_mask, accvgpr_move,
                                   assemble, branch_targets, classify, evidence, psb_quads)

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
    kind: np.ndarray                                   # evidence.classify of each opcode's mnemonic
    first: int                                         # index of key 0 in _names(name)


@lru_cache(maxsize=None)
def _dense(name: str) -> tuple[_Dense, ...]:
    family = load_family(name)
    seen: dict[str, tuple] = {}
    for entries in family.by_top_byte:
        for encoding, table in entries:
            seen.setdefault(encoding.name, (encoding, table))
    layout = encodings.LAYOUTS[family.layout]
    out = []
    first = 0
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
        kind = np.zeros(size, np.int8)
        for key, opcode in table.items():
            kind[key] = classify(opcode.mnemonic, encoding.name)
        out.append(_Dense(encoding.mask, encoding.value, encoding.opcode, encoding.key_words, base,
                          tuple(literals), aux, 8 if top > 32 else 4, kind, first))
        first += size
    return tuple(out)


@lru_cache(maxsize=None)
def _names(name: str) -> tuple[tuple[str, str], ...]:
    """(encoding, mnemonic) of every flat opcode index; after the opcodes of
    every encoding, one index per pair (_pairs): (the second's encoding, the
    pair's mnemonic)."""
    family = load_family(name)
    tables: dict[str, tuple] = {}
    for entries in family.by_top_byte:
        for encoding, table in entries:
            tables.setdefault(encoding.name, (encoding, table))
    out: list[tuple[str, str]] = []
    for encoding in encodings.LAYOUTS[family.layout]:
        if encoding.name not in tables:
            continue
        table = tables[encoding.name][1]
        size = 1 << sum(w for _s, w in encoding.opcode)
        out.extend((encoding.name, table[key].mnemonic if key in table else "") for key in range(size))
    for _prefix, opcode in sorted(_pair_rows(name).items()):
        out.extend((partner[0], form) for partner, form, _mask, _value in opcode.pairs)
    return tuple(out)


@lru_cache(maxsize=None)
def _pair_rows(name: str) -> dict[int, Opcode]:
    """Flat opcode index of each row that pairs with the next instruction -> its Opcode."""
    family = load_family(name)
    seen: dict[str, tuple] = {}
    for entries in family.by_top_byte:
        for encoding, table in entries:
            seen.setdefault(encoding.name, (encoding, table))
    out: dict[int, Opcode] = {}
    first = 0
    for encoding in encodings.LAYOUTS[family.layout]:
        if encoding.name not in seen:
            continue
        table = seen[encoding.name][1]
        for key, opcode in table.items():
            if opcode.pairs:
                out[first + key] = opcode
        first += 1 << sum(w for _s, w in encoding.opcode)
    return out


@lru_cache(maxsize=None)
def _pairs(name: str) -> tuple[dict[int, list[tuple[int, int, int, int]]], dict[int, int]]:
    """The pairs by flat index: prefix -> [(second's flat index, the pair's
    flat index, mask, value)], and each pair's flat index -> its prefix's
    length in bytes (where the second's fields begin)."""
    rows = _pair_rows(name)
    if not rows:
        return {}, {}
    family = load_family(name)
    starts: dict[str, int] = {}
    first = 0
    present = {e.name for entries in family.by_top_byte for e, _t in entries}
    for encoding in encodings.LAYOUTS[family.layout]:
        if encoding.name in present:
            starts[encoding.name] = first
            first += 1 << sum(w for _s, w in encoding.opcode)
    out: dict[int, list[tuple[int, int, int, int]]] = {}
    prefix_of: dict[int, int] = {}
    entry = first
    for prefix, opcode in sorted(rows.items()):
        for (encoding_name, key), _form, mask, value in opcode.pairs:
            out.setdefault(prefix, []).append((starts[encoding_name] + key, entry, mask, value))
            prefix_of[entry] = opcode.length
            entry += 1
    return out, prefix_of


# Where a pair was joined: the first's dword, and its own length, kind and flat opcode index.
_Joined = list[tuple[int, int, int, int]]


def _join_pairs(words: np.ndarray, out: np.ndarray, kinds: np.ndarray, opcodes: np.ndarray, name: str) -> _Joined:
    """Where a prefix row starts and its partner follows with the bits the
    pair needs, the two are one instruction (decoder.decode's rule), in
    place; what each joined first was alone (_unjoin_crossing)."""
    pairs, _prefix_of = _pairs(name)
    joined: _Joined = []
    if not pairs:
        return joined
    count = len(words)
    names = _names(name)
    at = np.nonzero(np.isin(opcodes, np.array(sorted(pairs), np.int32)) & (out > 0))[0]
    for i in at.tolist():
        j = i + int(out[i]) // 4
        if j >= count or out[j] <= 0 or j + int(out[j]) // 4 > count:
            continue
        both = sum(int(words[d]) << (32 * n) if d < count else 0 for n, d in enumerate((i, i + 1, j, j + 1)))
        for partner, entry, mask, value in pairs[int(opcodes[i])]:
            if int(opcodes[j]) == partner and both & mask == value:
                joined.append((i, int(out[i]), int(kinds[i]), int(opcodes[i])))
                out[i] += out[j]
                kinds[i] = classify(names[entry][1], names[entry][0])
                opcodes[i] = entry
                break
    return joined


def _unjoin_crossing(joined: _Joined, size_of: np.ndarray, kinds: np.ndarray | None, opcodes: np.ndarray | None,
                     ranges: list[tuple[int, int]]) -> None:
    """A pair whose second half lies past the end of its range is no pair
    (decode() reads the second only up to the range's end): its first is
    itself again, in place."""
    if not joined:
        return
    ends = sorted((start // 4, start + size) for start, size in ranges if size > 0)
    firsts = [start for start, _end in ends]
    for i, alone, kind, opcode in joined:
        at = bisect_right(firsts, i) - 1
        if at >= 0 and i * 4 < ends[at][1] < i * 4 + int(size_of[i]):
            size_of[i] = alone
            if kinds is not None and opcodes is not None:
                kinds[i], opcodes[i] = kind, opcode


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
    where no instruction starts so, as the reference decodes it (a pair
    joined whatever range it would end in)."""
    return _decode_words(words, name)[0]


def _decode_words(words: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, _Joined]:
    """lengths(), with the evidence kind and the flat opcode index (_names)
    of each dword, and the pairs joined."""
    count = len(words)
    kinds = np.zeros(count, np.int8)
    opcodes = np.zeros(count, np.int32)
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
        kinds[index] = dense.kind[key]
        opcodes[index] = dense.first + key
    joined = _join_pairs(words, out, kinds, opcodes, name)
    return out, kinds, opcodes, joined


def boundaries(code: bytes | memoryview, ranges: list[tuple[int, int]],
               name: str) -> list[tuple[np.ndarray, int | None]]:
    """For each (start, size) range of ``code``: the offsets (from the range's
    start) of its instructions, and the offset where decoding stopped (None:
    it reached the end exactly).  Ranges must start 4-byte aligned and not
    overlap (ValueError otherwise: use the reference decoder)."""
    usable = len(code) - len(code) % 4
    words = np.frombuffer(memoryview(code)[:usable], dtype="<u4").astype(np.uint32)
    order = sorted(range(len(ranges)), key=lambda i: ranges[i][0])
    previous_end = 0
    for number in order:
        start, size = ranges[number]
        if start % 4 or start < previous_end or start < 0:
            raise ValueError("ranges must be 4-byte aligned and disjoint")
        previous_end = start + max(size, 0)
    found, _kinds, _opcodes, joined = _decode_words(words, name)
    size_of = found.astype(np.int64)
    _unjoin_crossing(joined, size_of, None, None, ranges)
    return _chains(words, size_of, ranges)


def _chains(words: np.ndarray, size_of: np.ndarray,
            ranges: list[tuple[int, int]]) -> list[tuple[np.ndarray, int | None]]:
    positions, stops = _marks(words, size_of, ranges)
    usable = 4 * len(words)
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


def _marks(words: np.ndarray, size_of: np.ndarray, ranges: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(the dwords where an instruction of some range starts, the dwords where
    decoding a range stopped), both sorted."""
    count = len(words)
    usable = 4 * count
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
    return positions[~bad[positions]], stops


# The kinds assemble() counts from the whole kernel (the others it takes from the listed accesses and branches).
_COUNTED = (FLAT, AGPR_WRITE, AGPR_READ, MATRIX, LDS, CALL)


def evidence_many(code: bytes | memoryview, kernels: list[tuple[int, int, bool]], target: str) -> list[KernelCode]:
    """evidence() of every (start, size, private segment buffer) kernel of one
    code section at once: boundaries, kinds and counts from the arrays for
    every kernel together (per-kernel Python only for its branches and
    scratch accesses), the entry block walked by the reference decoder only
    where a MUBUF access needs it.  Equal to evidence() kernel by kernel
    (tests/unit/isa/test_vector.py)."""
    view = memoryview(code)
    name = family_of(target)
    simple = [name is None or size <= 0 or start < 0 or start + size > len(view) or start % 4
              for start, size, _psb in kernels]
    ranges = [(start, size) for (start, size, _psb), alone in zip(kernels, simple) if not alone]
    try:
        usable = len(view) - len(view) % 4
        words = np.frombuffer(view[:usable], dtype="<u4").astype(np.uint32)
        if name is None:
            raise ValueError("no decoder")
        size_of, kinds, opcodes, joined = _decode_words(words, name)
        size_of = size_of.astype(np.int64)
        _unjoin_crossing(joined, size_of, kinds, opcodes, ranges)
        positions, stops = _marks(words, size_of, ranges)
    except ValueError:
        return [evidence(view, start, size, target, psb) for start, size, psb in kernels]
    assert name is not None
    family = load_family(name)
    names = _names(name)
    # Every kernel's slice of the instruction starts, and of the stops.
    starts = np.array([start for start, _size in ranges], np.int64)
    ends = np.array([(start + max(size, 0) + 3) // 4 for start, size in ranges], np.int64)
    low = np.searchsorted(positions, starts // 4)
    high = np.searchsorted(positions, ends)
    stop_low = np.searchsorted(stops, starts // 4)
    stop_high = np.searchsorted(stops, ends)
    kind_all = kinds[positions]
    # Counts of each kind assemble() needs, per kernel: differences of running sums.
    counted = []
    for kind in _COUNTED:
        running = np.concatenate(([0], np.cumsum(kind_all == kind)))
        counted.append((running[high] - running[low]).tolist())
    # The instructions each kernel needs one by one: branches, scratch and buffer accesses.
    wanted = np.nonzero((kind_all == BRANCH) | (kind_all == SCRATCH_LOAD) | (kind_all == SCRATCH_STORE)
                        | (kind_all == BUFFER_LOAD) | (kind_all == BUFFER_STORE))[0]
    picked_dword = positions[wanted]
    picked_kind = kind_all[wanted].tolist()
    picked_at = (picked_dword * 4).tolist()
    picked_opcode = opcodes[picked_dword].tolist()
    picked_word = words[picked_dword]
    picked_addressed = _vgpr_addressed(family, _mubuf(name)[opcodes[picked_dword]], picked_word,
                                       words[np.minimum(picked_dword + 1, len(words) - 1)]).tolist()
    simm16 = (picked_word & 0xFFFF).astype(np.int64)
    picked_target = (picked_dword * 4 + 4 + 4 * np.where(simm16 >= 0x8000, simm16 - 0x10000, simm16))
    target_dword = picked_target // 4
    found_at = np.minimum(np.searchsorted(positions, target_dword), max(len(positions) - 1, 0))
    target_starts = ((positions[found_at] == target_dword) if len(positions) else
                     np.zeros(len(wanted), bool)).tolist()
    picked_target_list = picked_target.tolist()
    next_word = words[np.minimum(picked_dword + 1, len(words) - 1)].tolist()
    wanted_low = np.searchsorted(wanted, low).tolist()
    wanted_high = np.searchsorted(wanted, high).tolist()
    lows, highs = low.tolist(), high.tolist()
    stop_at = [int(stops[a]) * 4 if b > a else None for a, b in zip(stop_low.tolist(), stop_high.tolist())]
    counts_of = list(zip(*counted)) if counted[0] else []
    out = []
    number = 0
    for (start, size, psb), alone in zip(kernels, simple):
        if alone:
            out.append(evidence(view, start, size, target, psb))
            continue
        raw = view[start:start + size]
        instructions = highs[number] - lows[number]
        stop = None
        stopped = stop_at[number]
        if stopped is not None:
            stop = _stop_message(raw, stopped - start, family)
        elif size % 4 or start + size > usable:
            # A ragged end or a range past the usable words: where the last instruction ended.
            end_at = int(positions[highs[number] - 1] * 4 - start + size_of[positions[highs[number] - 1]]) \
                if instructions else 0
            if end_at < size:
                stop = _stop_message(raw, end_at, family)
        counts = [0] * KINDS
        for kind, value in zip(_COUNTED, counts_of[number]):
            counts[kind] = value
        branches: list[tuple[int, int]] = []
        is_start: set[int] = set()
        accesses: list[tuple[int, int, str, bool]] = []
        buffers: list[int] = []
        for i in range(wanted_low[number], wanted_high[number]):
            kind, at = picked_kind[i], picked_at[i] - start
            if kind == BRANCH:
                aim = picked_target_list[i] - start
                branches.append((at, aim))
                if target_starts[i]:
                    is_start.add(aim)
            elif kind in (SCRATCH_LOAD, SCRATCH_STORE):
                accesses.append((at, kind, names[picked_opcode[i]][1], picked_addressed[i]))
            else:
                buffers.append(i)
        if buffers:
            listing = ((i, classify(i.mnemonic, i.encoding)) for i in _quiet(decode(raw, 0, size, family)))
            quads = psb_quads(listing, branch_targets(branches, size), psb, family.layout == "gfx9")
            for i in buffers:
                encoding, mnemonic = names[picked_opcode[i]]
                if encoding == "MUBUF" and ((next_word[i] >> 16) & 0x1F) * 4 in quads:
                    accesses.append((picked_at[i] - start, picked_kind[i], mnemonic, picked_addressed[i]))
            accesses.sort()
        copies = counts[AGPR_WRITE] + counts[AGPR_READ]
        split = (copies, 0)
        if copies and counts[MATRIX]:
            split = _agpr_split(words, positions[lows[number]:highs[number]], kind_all[lows[number]:highs[number]],
                                opcodes, names, name)
        # (assemble asks is_start only of branch targets)
        out.append(assemble(raw, instructions, stop, is_start.__contains__, branches, accesses, counts, split))
        number += 1
    return out


def _agpr_split(words: np.ndarray, dwords: np.ndarray, kinds: np.ndarray, opcodes: np.ndarray,
                names: tuple[tuple[str, str], ...], family: str) -> tuple[int, int]:
    """evidence.agpr_split of one kernel (its instructions' dwords and kinds):
    the accumulators from its matrix ops, then every copy's AGPR at once."""
    last = len(words) - 1
    _pairs_of, prefix_of = _pairs(family)
    matrix = []
    for d in dwords[kinds == MATRIX].tolist():
        # a pair's fields are its second instruction's (the MFMA after v_mfma_ld_scale_b32)
        at = d + prefix_of.get(int(opcodes[d]), 0) // 4
        matrix.append((names[int(opcodes[d])][1], int(words[min(at, last)]) | int(words[min(at + 1, last)]) << 32))
    movs: list[tuple[int, int]] = []
    for d in dwords[np.isin(opcodes[dwords], _accvgpr_movs(family))].tolist():
        move = accvgpr_move(names[int(opcodes[d])][0], int(words[d]) | int(words[min(d + 1, last)]) << 32)
        if move is not None:
            movs.append(move)
    held = np.frombuffer(bytes(accumulator_mask(family, matrix, movs)), np.uint8).astype(bool)
    writes = dwords[kinds == AGPR_WRITE]
    reads = dwords[kinds == AGPR_READ]
    read_src0 = (words[np.minimum(reads + 1, last)] & np.uint32(0x1FF)).astype(np.int64) - 256
    agprs = np.concatenate(((words[writes] & np.uint32(0xFF)).astype(np.int64), read_src0[read_src0 >= 0]))
    moves = int(held[agprs].sum())
    return len(writes) + len(reads) - moves, moves


_SVE13 = ("gfx940", "gfx942", "gfx950")


def _vgpr_addressed(family, mubuf: np.ndarray, word0: np.ndarray, word1: np.ndarray) -> np.ndarray:
    """evidence.vgpr_addressed of many scratch accesses at once (``mubuf``:
    whether each is MUBUF; ``word0``/``word1``: its first two dwords)."""
    layout = family.layout
    if layout == "gfx11":
        buffer = (word1 >> np.uint32(22)) & np.uint32(3)
    else:
        buffer = (word0 >> np.uint32(12)) & np.uint32(3)
    if layout == "gfx9" and family.name in _SVE13:
        flat = (word0 >> np.uint32(13)) & np.uint32(1)
    elif layout == "gfx9":
        flat = ((word1 >> np.uint32(16)) & np.uint32(0x7F)) == 0x7F
    elif layout == "gfx10":
        flat = ((word1 >> np.uint32(16)) & np.uint32(0x7F)) == 0x7D
    elif layout == "gfx11":
        flat = (word1 >> np.uint32(23)) & np.uint32(1)
    else:
        flat = (word1 >> np.uint32(17)) & np.uint32(1)
    return np.where(mubuf, buffer != 0, flat != 0)


@lru_cache(maxsize=None)
def _mubuf(name: str) -> np.ndarray:
    """Whether each flat opcode index (_names) is a MUBUF opcode."""
    return np.array([encoding == "MUBUF" for encoding, _m in _names(name)], bool)


@lru_cache(maxsize=None)
def _accvgpr_movs(name: str) -> np.ndarray:
    """Flat opcode indices (_names) of v_accvgpr_mov_b32 in every encoding."""
    return np.array([i for i, (_e, m) in enumerate(_names(name)) if m.startswith("v_accvgpr_mov")], np.int32)


def _quiet(instructions):
    """The reference decoder's instructions up to where it stops."""
    try:
        yield from instructions
    except DecodeError:
        return


def _stop_message(raw: memoryview, stop_at: int, family) -> tuple[int, str]:
    """The reference decoder's words for where it stopped."""
    try:
        for _instruction in decode(raw, stop_at, len(raw), family):
            break
    except DecodeError as error:
        return (error.offset, f"{error.message} at +{error.offset:#x}")
    return (stop_at, f"stopped at +{stop_at:#x}")

