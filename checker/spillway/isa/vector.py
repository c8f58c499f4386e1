"""Instruction boundaries with numpy: the length of an instruction starting at
every dword of the code at once, then every kernel's chain of instructions
followed together, one instruction per kernel per step.

Same tables and rules as ``decoder`` (the reference this is tested against);
numpy (a dependency) is imported only here, by callers that decode.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np

import spillway.isa.encodings as encodings
from spillway.isa.listing import (ACCUMULATOR_ROLE, ADDRESSED_ROLE, AGPR_READ_KIND, AGPR_WRITE_KIND, CALL_KIND,
                                  MATRIX_KIND, SCRATCH_LOAD_KIND, SCRATCH_STORE_KIND, SLOT_ROLE, SPILL_COPY_ROLE,
                                  KernelListing, ListedInstruction, kernel_listing, loops_of)
from spillway.isa.source_lines import (LineTraffic, ObjectLines, branches_of, decoded_kernel, kernel_lines,
                                       traffic_rows)
from spillway.isa.decoder import DecodeError, Instruction, Opcode, decode, family_of, load_family
from spillway.isa.mix import MIX_CLASSES, mix_class, with_scratch
from spillway.isa.evidence import COMPLETE, access_bytes, branch_target, code_identity, copied_agpr, kernel_code
from spillway.isa.evidence import (AGPR_READ, AGPR_WRITE, BRANCH, BUFFER_LOAD, BUFFER_STORE, CALL, FLAT, KINDS, LDS,
                                   MATRIX, SCRATCH_LOAD, SCRATCH_STORE, KernelCode, accumulator_mask, accvgpr_move,
                                   assemble, branch_targets, classify, evidence, nesting, psb_quads)

_VOP_MARKERS = (encodings.SDWA, encodings.DPP16, encodings.DPP8, encodings.DPP8_FI)
INVALID = -1


class SectionArrays(NamedTuple):
    """One code section decoded at every instruction start of its kernels (evidence_many)."""

    words: np.ndarray        # the section's little-endian dwords (uint32)
    size_of: np.ndarray      # per dword: the length in dwords of an instruction starting there (int64)
    kinds: np.ndarray        # per dword: the evidence kind of an instruction starting there
    opcodes: np.ndarray      # per dword: the opcode row of an instruction starting there
    positions: np.ndarray    # the dword index of every instruction start in the kernels, ascending


@dataclass
class DecodedSection:
    """What evidence_many decoded of a section (its ``keep``), for listings_many and line_traffic_many of
    the same kernels, so that the section is decoded once: the arrays (None: it decoded none - a sparse
    batch, no decoder for the target, bad code) and each kernel's private segment buffer quads by
    (start, size, private segment buffer)."""

    arrays: SectionArrays | None = None
    quads: dict[tuple[int, int, bool], set[int]] = field(default_factory=dict)
    # The offsets (from the kernel's start, ascending) of the counted scratch accesses of each kernel that has
    # some, by (start, size, private segment buffer): what report --pressure's scratch_offsets lists.
    scratch: dict[tuple[int, int, bool], tuple[int, ...]] = field(default_factory=dict)


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


@lru_cache(maxsize=None)
def _fields_shift(name: str) -> np.ndarray:
    """Per flat opcode index: dwords from an instruction's start to the
    words that hold its fields (a pair's: its second's; else 0)."""
    _pairs_of, prefix_of = _pairs(name)
    shift = np.zeros(len(_names(name)), np.int64)
    for entry, length in prefix_of.items():
        shift[entry] = length // 4
    return shift


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


# Every encoding is chosen by bits of a dword's top 9 (encodings.Encoding.mask): _decoder's selector.
_SELECTOR_SHIFT = 23
_NO_ENCODING = 255


@dataclass(frozen=True)
class _Decoder:
    """A family's _dense tables arranged to decode a section in a few passes."""

    selector: np.ndarray          # per value of a dword's top 9 bits: its encoding's number, or _NO_ENCODING
    base: np.ndarray              # per flat opcode index (_names, before the pairs): its length in bytes, 0: none
    kind: np.ndarray              # per flat opcode index: its evidence kind
    # per encoding: for each literal slot (shift, width, extra per [marker is 0xFE, key]); the aux field's
    # (shift, width, column per value (-1: none), extra per [column, key]) or None
    literals: tuple[tuple[tuple[int, int, np.ndarray], ...], ...]
    aux: tuple[tuple[int, int, np.ndarray, np.ndarray] | None, ...]


@lru_cache(maxsize=None)
def _decoder(name: str) -> _Decoder:
    """The family's _Decoder.  Every family's encodings are told apart by a dword's top 9 bits; a table
    that breaks this is refused (ValueError) rather than decoded wrongly: tests/unit/isa/test_vector.py
    decodes every family."""
    dense = _dense(name)
    mask = ((1 << (32 - _SELECTOR_SHIFT)) - 1) << _SELECTOR_SHIFT
    if any(d.mask & ~mask for d in dense) or len(dense) >= _NO_ENCODING or any(
            len({known for known, _extra in d.aux[2]}) < len(d.aux[2]) for d in dense if d.aux is not None):
        raise ValueError(f"{name}: its encodings are not told apart by a dword's top 9 bits")
    selector = np.full(1 << (32 - _SELECTOR_SHIFT), _NO_ENCODING, np.uint8)
    for number in reversed(range(len(dense))):          # the first encoding that matches is the one
        for top in range(len(selector)):
            if (top << _SELECTOR_SHIFT) & dense[number].mask == dense[number].value:
                selector[top] = number
    base = np.concatenate([d.base for d in dense]) if dense else np.zeros(0, np.int16)
    kind = np.concatenate([d.kind for d in dense]) if dense else np.zeros(0, np.int8)
    literals = tuple(tuple((shift, mask_of.bit_length(), np.stack((ext32, ext64)))
                           for shift, mask_of, ext32, ext64 in d.literals) for d in dense)
    aux: list[tuple[int, int, np.ndarray, np.ndarray] | None] = []
    for d in dense:
        if d.aux is None:
            aux.append(None)
            continue
        shift, field_mask, columns = d.aux
        column_of = np.full(field_mask + 1, -1, np.int64)
        for number, (known, _extra) in reversed(list(enumerate(columns))):
            if 0 <= known <= field_mask:
                column_of[known] = number
        extra = np.stack([extra_of for _known, extra_of in columns]) if columns else np.zeros((0, len(d.base)),
                                                                                             np.int16)
        aux.append((shift, field_mask.bit_length(), column_of, extra))
    return _Decoder(selector, base, kind, literals, tuple(aux))


def _decode_words(words: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, _Joined]:
    """lengths(), with the evidence kind and the flat opcode index (_names)
    of each dword, and the pairs joined.  Each dword's encoding from its top
    bits at once (_Decoder.selector), the dwords of an encoding taken
    together; the opcode's length and kind from the flat tables for every
    dword at once; literal and aux extras only where a field holds a marker."""
    decoder = _decoder(name)
    count = len(words)
    encoding = decoder.selector[words >> np.uint32(_SELECTOR_SHIFT)]
    order = np.argsort(encoding, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(encoding, minlength=_NO_ENCODING + 1))))
    opcodes = np.zeros(count, np.int32)
    extra = np.zeros(count, np.int16)        # bytes past the opcode's own length; negative: no such instruction
    last = count - 1
    for number, dense in enumerate(_dense(name)):
        index = order[bounds[number]:bounds[number + 1]]
        if not len(index):
            continue
        w0 = words[index]
        w1 = words[np.minimum(index + 1, last)] if dense.reach > 4 else w0
        if dense.reach > 4 and index[-1] == last:
            w1 = np.where(index == last, np.uint32(0), w1)      # the dword after the last reads as 0
        key = np.zeros(len(index), np.intp)
        at = 0
        for shift, width in dense.fields:
            key |= _field(w0, w1, shift, width).astype(np.intp) << at
            at += width
        opcodes[index] = dense.first + key
        for shift, width, by_marker in decoder.literals[number]:
            value = _field(w0, w1, shift, width)
            marked = np.nonzero((value | np.uint32(1)) == 0xFF)[0]      # 0xFE or 0xFF
            if not len(marked):
                continue
            # 0xFF: a 32-bit literal (row 0), 0xFE: a 64-bit one (row 1); the largest extra of the slots
            found = by_marker[(value[marked] == 0xFE).astype(np.intp), key[marked]]
            held = extra[index[marked]]
            extra[index[marked]] = np.where((held < 0) | (found < 0), INVALID, np.maximum(held, found))
        aux = decoder.aux[number]
        if aux is not None:
            shift, width, column_of, by_column = aux
            column = column_of[_field(w0, w1, shift, width)]
            marked = np.nonzero(column >= 0)[0]
            if len(marked):
                found = by_column[column[marked], key[marked]]
                held = extra[index[marked]]
                extra[index[marked]] = np.where((held < 0) | (found < 0), INVALID, held + found)
    known = encoding != _NO_ENCODING
    length = decoder.base[opcodes]
    out = np.where(known & (length > 0) & (extra >= 0), length + extra, INVALID).astype(np.int16)
    kinds = np.where(known, decoder.kind[opcodes], 0).astype(np.int8)
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
    first = np.zeros(count + 1, bool)
    for start, size in ranges:
        if size > 0 and start + 4 <= usable + 4:
            first[min(start // 4, count)] = True
    first[count] = False
    reached = _reached(chain, first)
    positions = np.nonzero(reached)[0]
    stops = positions[bad[positions]]
    return positions[~bad[positions]], stops


# Rounds of _reached's peeling before it leaves the rest to pointer doubling (a long chain of dwords that no
# start reaches: data read as code; in real code a chain off the instruction boundaries rejoins them within a
# few instructions).
_PEELING_ROUNDS = 48


def _reached(chain: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Which dwords the chains from the ``first`` dwords reach (``chain``: the
    next dword of each, ``len(chain)`` where it ends; every step goes
    forward).  The dwords nothing reaches are peeled off: those no other
    dword leads to (and not a first one), then those only peeled ones led
    to, and so on; what is left is what the firsts reach.  Each dword is
    peeled once, where pointer doubling passed over every dword once per
    doubling of the longest chain."""
    count = len(chain)
    leads = chain[chain < count]
    incoming = np.bincount(leads, minlength=count)
    alive = np.ones(count, bool)
    peeled = np.nonzero((incoming == 0) & ~first[:count])[0]
    marked = np.zeros(count, bool)
    rounds = 0
    while len(peeled):
        if rounds == _PEELING_ROUNDS:
            return _reached_by_doubling(chain, first)
        alive[peeled] = False
        following = chain[peeled]
        following = following[following < count]
        if not len(following):
            break
        np.subtract.at(incoming, following, 1)
        peeled = following[(incoming[following] == 0) & ~first[following]]
        if len(peeled) > 1:          # a dword two peeled ones led to: peeled once
            marked[peeled] = True
            peeled = np.nonzero(marked)[0]
            marked[peeled] = False
        rounds += 1
    return alive


def _reached_by_doubling(chain: np.ndarray, first: np.ndarray) -> np.ndarray:
    """_reached by pointer doubling: after round k the marks hold every dword
    within 2**k - 1 steps of a first one."""
    count = len(chain)
    jump = np.append(chain, count)
    reached = first.copy()
    reached[count] = False
    while True:
        target = jump[np.nonzero(reached)[0]]
        reached[target] = True
        reached[count] = False
        if (target == count).all():
            break          # every chain from a start is shorter than the current jump: all marked
        jump = jump[jump]
    return reached[:count]


# The kinds assemble() counts from the whole kernel (the others it takes from the listed accesses and branches).
_COUNTED = (FLAT, AGPR_WRITE, AGPR_READ, MATRIX, LDS, CALL)


def evidence_many(code: bytes | memoryview, kernels: list[tuple[int, int, bool]], target: str,
                  keep: DecodedSection | None = None, sparse: bool = False) -> list[KernelCode]:
    """evidence() of every (start, size, private segment buffer) kernel of one
    code section at once: boundaries, kinds and counts from the arrays for
    every kernel together (per-kernel Python only for its branches and
    scratch accesses), the entry block walked by the reference decoder only
    where a MUBUF access needs it.  Equal to evidence() kernel by kernel
    (tests/unit/isa/test_vector.py).  ``keep``: a DecodedSection that receives the
    decoded arrays and the private segment buffer quads it worked out
    (listings_many() and line_traffic_many() take them).  ``sparse``: the
    kernels are a few of the section's (report FILTER --isa's matches): only
    their words are decoded, side by side (_evidence_sparse), and ``keep`` is
    left empty (callers decode again what they need)."""
    view = memoryview(code)
    name = family_of(target)
    simple = [name is None or size <= 0 or start < 0 or start + size > len(view) or start % 4
              for start, size, _psb in kernels]
    ranges = [(start, size) for (start, size, _psb), alone in zip(kernels, simple) if not alone]
    if sparse and ranges and not any(size % 4 for _start, size in ranges):
        return _evidence_sparse(view, kernels, simple, target)
    try:
        usable = len(view) - len(view) % 4
        words = np.frombuffer(view[:usable], dtype="<u4").astype(np.uint32)
        if name is None:
            raise ValueError("no decoder")
        size_of, kinds, opcodes, joined = _decode_words(words, name)
        size_of = size_of.astype(np.int64)
        _unjoin_crossing(joined, size_of, kinds, opcodes, ranges)
        positions, stops = _marks(words, size_of, ranges)
        if keep is not None:      # for listings_many() of some of these kernels: decoded once
            keep.arrays = SectionArrays(words, size_of, kinds, opcodes, positions)
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
    # The kernels' slices of the instruction starts side by side (None: they overlap, each kernel alone).
    spread = _spread(low, high, len(positions))
    counts_of, mixes = _kernel_counts(kind_all, _mix_classes(name)[opcodes[positions]], low, high, spread)
    # The instructions each kernel needs one by one: branches, scratch and buffer accesses.
    wanted = np.nonzero((kind_all == BRANCH) | (kind_all == SCRATCH_LOAD) | (kind_all == SCRATCH_STORE)
                        | (kind_all == BUFFER_LOAD) | (kind_all == BUFFER_STORE))[0]
    picked_dword = positions[wanted]
    picked_word = words[picked_dword]
    simm16 = (picked_word & 0xFFFF).astype(np.int64)
    picked_target = (picked_dword * 4 + 4 + 4 * np.where(simm16 >= 0x8000, simm16 - 0x10000, simm16))
    target_dword = picked_target // 4
    found_at = np.minimum(np.searchsorted(positions, target_dword), max(len(positions) - 1, 0))
    target_starts = ((positions[found_at] == target_dword) if len(positions) else np.zeros(len(wanted), bool))
    wanted_low = np.searchsorted(wanted, low)
    wanted_high = np.searchsorted(wanted, high)
    loops = _branch_figures(kind_all[wanted], picked_dword * 4, picked_target, target_starts, starts,
                            np.array([size for _start, size in ranges], np.int64),
                            _spread(wanted_low, wanted_high, len(wanted)) if spread is not None else None)
    picked = _Picked(kind_all[wanted].tolist(), (picked_dword * 4).tolist(), opcodes[picked_dword].tolist(),
                     _vgpr_addressed(family, _mubuf(name)[opcodes[picked_dword]], picked_word,
                                     words[np.minimum(picked_dword + 1, len(words) - 1)]).tolist(),
                     picked_target.tolist(), target_starts.tolist(),
                     words[np.minimum(picked_dword + 1, len(words) - 1)].tolist())
    wanted_low_list, wanted_high_list = wanted_low.tolist(), wanted_high.tolist()
    lows, highs = low.tolist(), high.tolist()
    stop_at = [int(stops[a]) * 4 if b > a else None for a, b in zip(stop_low.tolist(), stop_high.tolist())]
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
        copies = counts[AGPR_WRITE] + counts[AGPR_READ]
        split = (copies, 0)
        if copies and counts[MATRIX]:
            split = _agpr_split(words, positions[lows[number]:highs[number]], kind_all[lows[number]:highs[number]],
                                opcodes, names, name)
        plain = loops.plain(number) if loops is not None and stop is None else None
        if plain is not None:
            # No scratch access, no stop and no branch to report: the figures from the arrays' (assemble()'s
            # for such a kernel).
            spans, innermost, deepest = plain
            out.append(kernel_code(
                instructions, size, code_identity(raw), 0, 0, 0, 0, (), counts[FLAT], counts[AGPR_WRITE],
                counts[AGPR_READ], counts[MATRIX], counts[LDS], len(spans), spans, 0, counts[CALL], COMPLETE,
                0, 0, 0, 0, split[0], split[1], innermost, 0, deepest, with_scratch(mixes[number], 0)))
        else:
            out.append(_kernel_one_by_one(raw, start, size, psb, instructions, stop, counts, split, mixes[number],
                                          picked, range(wanted_low_list[number], wanted_high_list[number]),
                                          family, names, keep))
        number += 1
    return out


class _Picked(NamedTuple):
    """evidence_many's instructions that a kernel needs one by one (branches, scratch and buffer accesses),
    as lists: kind, byte offset in the section, flat opcode index, VGPR-addressed, branch target (byte offset
    in the section), whether that target is an instruction start, the dword after."""

    kind: list[int]
    at: list[int]
    opcode: list[int]
    addressed: list[bool]
    target: list[int]
    target_starts: list[bool]
    next_word: list[int]


def _kernel_one_by_one(raw: memoryview, start: int, size: int, psb: bool, instructions: int,
                       stop: tuple[int, str] | None, counts: list[int], split: tuple[int, int], mix: list[int],
                       picked: _Picked, mine: range, family, names: tuple[tuple[str, str], ...],
                       keep: DecodedSection | None) -> KernelCode:
    """evidence_many's figures of a kernel with scratch accesses, a stop or a branch to report: its branches
    and accesses in Python, then assemble()."""
    branches: list[tuple[int, int]] = []
    is_start: set[int] = set()
    accesses: list[tuple[int, int, str, bool]] = []
    buffers: list[int] = []
    for i in mine:
        kind, at = picked.kind[i], picked.at[i] - start
        if kind == BRANCH:
            aim = picked.target[i] - start
            branches.append((at, aim))
            if picked.target_starts[i]:
                is_start.add(aim)
        elif kind in (SCRATCH_LOAD, SCRATCH_STORE):
            accesses.append((at, kind, names[picked.opcode[i]][1], picked.addressed[i]))
        else:
            buffers.append(i)
    if buffers:
        listing = ((i, classify(i.mnemonic, i.encoding)) for i in _quiet(decode(raw, 0, size, family)))
        quads = psb_quads(listing, branch_targets(branches, size), psb, family.layout == "gfx9")
        if keep is not None:
            keep.quads[(start, size, psb)] = quads
        for i in buffers:
            encoding, mnemonic = names[picked.opcode[i]]
            if encoding == "MUBUF" and ((picked.next_word[i] >> 16) & 0x1F) * 4 in quads:
                accesses.append((picked.at[i] - start, picked.kind[i], mnemonic, picked.addressed[i]))
        accesses.sort()
    if keep is not None and accesses:
        keep.scratch[(start, size, psb)] = tuple(at for at, _kind, _mnemonic, _addressed in accesses)
    # (assemble asks is_start only of branch targets)
    return assemble(raw, instructions, stop, is_start.__contains__, branches, accesses, counts, split, mix)


def _spread(low: np.ndarray, high: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The slices [low[k], high[k]) of an array of ``total`` entries side by
    side: (the kernel number of each entry, its index), when no two slices
    overlap (a code object's kernels); None when some do."""
    order = np.argsort(low, kind="stable")
    if len(order) > 1 and (high[order[:-1]] > low[order[1:]]).any():
        return None
    sizes = np.maximum(high - low, 0)
    owner = np.repeat(np.arange(len(low), dtype=np.int64), sizes)
    index = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes - low, sizes)
    return owner, index


def _kernel_counts(kind_all: np.ndarray, classes: np.ndarray, low: np.ndarray, high: np.ndarray,
                   spread: tuple[np.ndarray, np.ndarray] | None) -> tuple[list[list[int]], list[list[int]]]:
    """Per kernel (instructions ``[low[k], high[k])``): the count of each of _COUNTED's kinds, and of each
    mix class.  One bincount over (kernel, kind) pairs when the slices are side by side, else one per kernel."""
    width = len(MIX_CLASSES)
    if spread is None:
        counted = [[int((kind_all[first:stop] == kind).sum()) for kind in _COUNTED]
                   for first, stop in zip(low.tolist(), high.tolist())]
        return counted, [np.bincount(classes[first:stop], minlength=width).tolist()
                         for first, stop in zip(low.tolist(), high.tolist())]
    owner, index = spread
    kernels = len(low)
    by_kind = np.bincount(owner * KINDS + kind_all[index], minlength=kernels * KINDS).reshape(kernels, KINDS)
    mixes = np.bincount(owner * width + classes[index], minlength=kernels * width).reshape(kernels, width)
    return by_kind[:, list(_COUNTED)].tolist(), mixes.tolist()


class _Loops:
    """The loop figures evidence_many works out for every kernel at once from its branches: each kernel's
    loop spans, innermost loops and deepest nesting (evidence.nesting), and whether a branch of it is one
    assemble() reports (outside the kernel, onto itself, into the middle of an instruction)."""

    def __init__(self, spans_low: list[int], spans_high: list[int], bounds: list[int], innermost: list[int],
                 deepest: list[int], reported: list[bool], accesses: list[bool]):
        self.spans_low, self.spans_high, self.bounds = spans_low, spans_high, bounds
        self.innermost, self.deepest, self.reported, self.accesses = innermost, deepest, reported, accesses

    def plain(self, number: int) -> tuple[tuple[tuple[int, int], ...], int, int] | None:
        """(loop spans, innermost loops, deepest nesting) of a kernel with no scratch or buffer access and no
        branch to report; None for another."""
        if self.reported[number] or self.accesses[number]:
            return None
        first, last = self.bounds[number], self.bounds[number + 1]
        return (tuple(zip(self.spans_low[first:last], self.spans_high[first:last])), self.innermost[number],
                self.deepest[number])


def _branch_figures(kind: np.ndarray, at: np.ndarray, aim: np.ndarray, aim_starts: np.ndarray, starts: np.ndarray,
                    sizes: np.ndarray, spread: tuple[np.ndarray, np.ndarray] | None) -> _Loops | None:
    """_Loops of every kernel (starting at byte ``starts[k]``, ``sizes[k]`` bytes) from the picked
    instructions (``kind``, byte offset ``at`` and branch target ``aim`` in the section, whether the target
    is an instruction start); ``spread``: _spread of the kernels' slices of them (None: each kernel alone)."""
    if spread is None:
        return None
    kernels = len(starts)
    owner, index = spread
    branch = kind[index] == BRANCH
    accesses = (np.bincount(owner[~branch], minlength=kernels) > 0).tolist()
    owner, index = owner[branch], index[branch]
    base, size = starts[owner], sizes[owner]
    offset, target = at[index] - base, aim[index] - base
    outside = (target < 0) | (target >= size)
    # With no stop, a target inside the kernel is reported when it is the branch itself or not an instruction
    # start (assemble()'s rule, is_start of a branch target being aim_starts).
    reported = outside | (target == offset) | ~aim_starts[index]
    reported_of = (np.bincount(owner[reported], minlength=kernels) > 0).tolist()
    span = ~outside & (target <= offset)
    owner, low, high = owner[span], target[span], offset[span]
    per_kernel = np.bincount(owner, minlength=kernels)
    bounds = np.concatenate(([0], np.cumsum(per_kernel)))
    # nesting(): a span is innermost when it starts after every earlier span of its kernel (in order of ends)
    # started; the deepest nesting is the most spans started at or before a span's start less those ended
    # before it.  Keys order the spans by kernel, then offset.
    key_low = (owner << 40) + low
    earlier = np.concatenate(([-1], np.maximum.accumulate(key_low)[:-1])) if len(key_low) else key_low
    innermost = np.bincount(owner[key_low > earlier], minlength=kernels)
    first = bounds[owner]
    depth = (np.searchsorted(np.sort(key_low), key_low, "right") - first
             - (np.searchsorted((owner << 40) + high, key_low, "left") - first))
    deepest = np.zeros(kernels, np.int64)
    np.maximum.at(deepest, owner, depth)
    return _Loops(low.tolist(), high.tolist(), bounds.tolist(), innermost.tolist(), deepest.tolist(), reported_of,
                  accesses)


def _evidence_sparse(view: memoryview, kernels: list[tuple[int, int, bool]], simple: list,
                     target: str) -> list[KernelCode]:
    """evidence_many of a few kernels of a large section: their words side by
    side (each kernel a range of its own, as listings_many decodes them), the
    others by the reference decoder as always."""
    chosen = [number for number, alone in enumerate(simple) if not alone]
    compact = memoryview(b"".join(view[kernels[n][0]:kernels[n][0] + kernels[n][1]] for n in chosen))
    moved = []
    at = 0
    for n in chosen:
        moved.append((at, kernels[n][1], kernels[n][2]))
        at += kernels[n][1]
    found = iter(evidence_many(compact, moved, target))
    return [evidence(view, start, size, target, psb) if alone else next(found)
            for (start, size, psb), alone in zip(kernels, simple)]


@lru_cache(maxsize=None)
def _mix_classes(name: str) -> np.ndarray:
    """isa.mix.mix_class of each flat opcode index (_names)."""
    return np.array([mix_class(mnemonic) for _e, mnemonic in _names(name)], np.int64)


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



# --- listings (isa.listing) of chosen kernels, for their source lines (isa.source_lines) ----------

_LISTED_KINDS = (SCRATCH_LOAD, SCRATCH_STORE, BUFFER_LOAD, BUFFER_STORE, AGPR_WRITE, AGPR_READ, MATRIX, CALL, BRANCH)
_PLACED_KINDS = frozenset(_LISTED_KINDS) - {BRANCH}
_ACCESSES = (SCRATCH_LOAD, SCRATCH_STORE, BUFFER_LOAD, BUFFER_STORE)
_LISTED_AS = {SCRATCH_LOAD: SCRATCH_LOAD_KIND, BUFFER_LOAD: SCRATCH_LOAD_KIND, SCRATCH_STORE: SCRATCH_STORE_KIND,
              BUFFER_STORE: SCRATCH_STORE_KIND, AGPR_WRITE: AGPR_WRITE_KIND, AGPR_READ: AGPR_READ_KIND,
              MATRIX: MATRIX_KIND, CALL: CALL_KIND}


def _is_mubuf(names: tuple[tuple[str, str], ...], opcode: int) -> bool:
    return names[opcode][0] == "MUBUF"
# psb_quads() reads an instruction's offset, mnemonic, encoding and bits: the entry block's are made from the
# arrays with this stand-in for the table row they came from.
_FROM_ARRAYS = Opcode("", 0, (), ())


def _entry(words: np.ndarray, positions: np.ndarray, kinds: np.ndarray, opcodes: np.ndarray, size_of: np.ndarray,
           names: tuple[tuple[str, str], ...], base: int):
    """(Instruction, kind) of a kernel's instructions from its first (``base``: its byte offset in ``words``),
    made as psb_quads() takes them, up to where it stops asking."""
    last = len(words) - 1
    for chunk in range(0, len(positions), 64):
        dwords = positions[chunk:chunk + 64]
        bits = (words[dwords].astype(np.uint64)
                | (words[np.minimum(dwords + 1, last)].astype(np.uint64) << np.uint64(32))).tolist()
        for dword, word, kind, opcode, length in zip(dwords.tolist(), bits, kinds[dwords].tolist(),
                                                     opcodes[dwords].tolist(), size_of[dwords].tolist()):
            encoding, mnemonic = names[opcode]
            yield Instruction(dword * 4 - base, length, encoding, _FROM_ARRAYS, word, mnemonic), kind


def listings_many(code: bytes | memoryview, kernels: list[tuple[int, int, bool]], target: str,
                  figures: list[KernelCode], decoded: DecodedSection | None = None
                  ) -> list[tuple[KernelListing, list[tuple[int, int]]]]:
    """isa.listing.kernel_listing() of each (start, size, private segment
    buffer) kernel of one code section, and its branches ((offset, target),
    for isa.source_lines' basic blocks), given its figures (evidence_many's:
    the listing carries them, they are not worked out again).  Only these
    kernels' words are decoded (a library's kernels with scratch or AGPR
    copies are a fifth of its code); equal to kernel_listing() kernel by
    kernel (tests/unit/isa/test_source_lines.py)."""
    view = memoryview(code)
    name = family_of(target)
    alone = [name is None or size <= 0 or start < 0 or start + size > len(view) or start % 4 or size % 4
             for start, size, _psb in kernels]
    out: list[tuple[KernelListing, list[tuple[int, int]]] | None] = [None] * len(kernels)
    for number, ((start, size, psb), single) in enumerate(zip(kernels, alone)):
        if single:
            out[number] = (kernel_listing(view, start, size, target, psb),
                           branches_of(decoded_kernel(view, start, size, target)))
    chosen = [number for number, single in enumerate(alone) if not single]
    if chosen:
        assert name is not None
        if decoded is not None and decoded.arrays is not None:
            # evidence_many's arrays of the whole section: each kernel where it is.
            words, size_of, kinds, opcodes, positions = decoded.arrays
            compact = view
            ranges = [(kernels[n][0], kernels[n][1]) for n in chosen]
        else:
            # The chosen kernels' words side by side, each kernel a range of its own.
            compact = memoryview(b"".join(view[kernels[n][0]:kernels[n][0] + kernels[n][1]] for n in chosen))
            words = np.frombuffer(compact, dtype="<u4").astype(np.uint32)
            ranges = []
            at = 0
            for n in chosen:
                ranges.append((at, kernels[n][1]))
                at += kernels[n][1]
            size_of, kinds, opcodes, joined = _decode_words(words, name)
            size_of = size_of.astype(np.int64)
            _unjoin_crossing(joined, size_of, kinds, opcodes, ranges)
            positions, _stops = _marks(words, size_of, ranges)
        family = load_family(name)
        names = _names(name)
        starts = np.array([r[0] for r in ranges], np.int64) // 4
        ends = np.array([r[0] + r[1] for r in ranges], np.int64) // 4
        low = np.searchsorted(positions, starts).tolist()
        high = np.searchsorted(positions, ends).tolist()
        kind_all = kinds[positions]
        wanted = np.nonzero(np.isin(kind_all, _LISTED_KINDS) | np.isin(opcodes[positions], _accvgpr_movs(name)))[0]
        picked = positions[wanted]
        picked_kind = kind_all[wanted].tolist()
        picked_opcode = opcodes[picked].tolist()
        last = len(words) - 1
        fields_at = np.minimum(picked + _fields_shift(name)[opcodes[picked]], last)   # a pair's: its second's
        picked_bits = (words[fields_at].astype(np.uint64)
                       | (words[np.minimum(fields_at + 1, last)].astype(np.uint64) << np.uint64(32))).tolist()
        picked_length = size_of[picked].tolist()
        picked_at = (picked * 4).tolist()
        picked_addressed = _vgpr_addressed(family, _mubuf(name)[opcodes[picked]], words[picked],
                                           words[np.minimum(picked + 1, last)]).tolist()
        bounds_low = np.searchsorted(wanted, low).tolist()
        bounds_high = np.searchsorted(wanted, high).tolist()
        movs_of = set(_accvgpr_movs(name).tolist())
        # Per opcode: (what it is listed as, its width) -- worked out once.
        listed_as: dict[tuple[int, int], tuple[str, int | None]] = {}
        for index, n in enumerate(chosen):
            start, size, psb = kernels[n]
            base = ranges[index][0]
            span = range(bounds_low[index], bounds_high[index])
            branches = [(picked_at[i] - base, branch_target(picked_at[i] - base, picked_bits[i]))
                        for i in span if picked_kind[i] == BRANCH]
            quads: set[int] = set()
            if any(picked_kind[i] in (BUFFER_LOAD, BUFFER_STORE) for i in span):
                quads = psb_quads(_entry(words, positions[low[index]:high[index]], kinds, opcodes, size_of, names,
                                         base),
                                  branch_targets(branches, size), psb, family.layout == "gfx9")
            held = bytearray(512)
            if any(picked_kind[i] == MATRIX for i in span):
                matrix = [(names[picked_opcode[i]][1], picked_bits[i]) for i in span if picked_kind[i] == MATRIX]
                movs = [m for i in span if picked_opcode[i] in movs_of
                        for m in [accvgpr_move(names[picked_opcode[i]][0], picked_bits[i])] if m is not None]
                held = accumulator_mask(family.name, matrix, movs)
            loops = loops_of(figures[n].loop_spans)
            heads = sorted(loop.start for loop in loops)
            tails = sorted(loop.end for loop in loops)
            listed = []
            for i in span:
                kind = picked_kind[i]
                if kind not in _PLACED_KINDS:
                    continue
                opcode, bits = picked_opcode[i], picked_bits[i]
                if kind in (BUFFER_LOAD, BUFFER_STORE) and (not _is_mubuf(names, opcode)
                                                            or ((bits >> 48) & 0x1F) * 4 not in quads):
                    continue
                what, width = listed_as.get((kind, opcode)) or listed_as.setdefault(
                    (kind, opcode), (_LISTED_AS[kind], access_bytes(names[opcode][1]) if kind in _ACCESSES else None))
                role = ""
                if kind in _ACCESSES:
                    role = ADDRESSED_ROLE if picked_addressed[i] else SLOT_ROLE
                elif kind == AGPR_WRITE or kind == AGPR_READ:
                    agpr = copied_agpr(kind, bits)
                    role = ACCUMULATOR_ROLE if agpr is not None and held[agpr] else SPILL_COPY_ROLE
                at = picked_at[i] - base
                # loops holding the offset: heads at or before it, less ends before it
                depth = bisect_right(heads, at) - bisect_left(tails, at) if heads else 0
                listed.append(ListedInstruction(at, picked_length[i], names[opcode][1], what, width, depth, role))
            out[n] = (KernelListing(figures[n], loops, tuple(listed)), branches)
    return [found for found in out if found is not None]



# --- per-line scratch traffic (isa.source_lines.by_line) of many kernels, from the arrays ---------

_TRAFFIC_KINDS = (SCRATCH_LOAD, SCRATCH_STORE, BUFFER_LOAD, BUFFER_STORE, AGPR_WRITE, AGPR_READ, MATRIX, BRANCH)


def line_traffic_many(code: bytes | memoryview, kernels: list[tuple[int, int, bool]], target: str,
                      figures: list[KernelCode], decoded: DecodedSection, lines: ObjectLines | None,
                      sections: list[str]) -> list[tuple[LineTraffic, ...]]:
    """isa.source_lines.kernel_lines(...).by_line of each (start, size,
    private segment buffer) kernel of one code section, in ``sections[n]``,
    given its figures and evidence_many's ``keep`` of the section: the
    accesses, copies, loops, blocks and rows found with arrays, no object
    per instruction (what report --isa needs at library scale).  Equal to
    by_line kernel by kernel (tests/unit/isa/test_source_lines.py)."""
    view = memoryview(code)
    name = family_of(target)
    if lines is None:
        return [() for _ in kernels]
    usable = decoded.arrays is not None and name is not None
    simple = [not usable or size <= 0 or start < 0 or start + size > len(view) or start % 4 or size % 4
              for start, size, _psb in kernels]
    out: list[tuple[LineTraffic, ...]] = []
    if all(simple):
        for (start, size, psb), section, code_figures in zip(kernels, sections, figures):
            (listing, branches), = listings_many(view, [(start, size, psb)], target, [code_figures])
            out.append(kernel_lines(listing, branches, lines, section, start).by_line)
        return out
    assert name is not None and decoded.arrays is not None
    words, size_of, kinds, opcodes, positions = decoded.arrays
    family = load_family(name)
    names = _names(name)
    last = len(words) - 1
    low = np.searchsorted(positions, np.array([k[0] for k in kernels], np.int64) // 4).tolist()
    high = np.searchsorted(positions, np.array([(k[0] + max(k[1], 0)) // 4 for k in kernels], np.int64)).tolist()
    kind_all = kinds[positions]
    wanted = np.nonzero(np.isin(kind_all, _TRAFFIC_KINDS) | np.isin(opcodes[positions], _accvgpr_movs(name)))[0]
    picked = positions[wanted]
    picked_kind = kind_all[wanted].astype(np.int64)
    picked_opcode = opcodes[picked]
    fields_at = np.minimum(picked + _fields_shift(name)[picked_opcode], last)   # a pair's: its second's
    word0 = words[fields_at].astype(np.int64)
    word1 = words[np.minimum(fields_at + 1, last)].astype(np.int64)
    picked_at = picked * 4
    bounds_low = np.searchsorted(wanted, low).tolist()
    bounds_high = np.searchsorted(wanted, high).tolist()
    widths = _widths(name)
    mubuf = _mubuf(name)
    movs_of = _accvgpr_movs(name)
    rows = _RowIndex(lines)
    known_quads = decoded.quads
    for n, (start, size, psb) in enumerate(kernels):
        if simple[n]:
            (listing, branches), = listings_many(view, [(start, size, psb)], target, [figures[n]])
            out.append(kernel_lines(listing, branches, lines, sections[n], start).by_line)
            continue
        if not lines.covers(sections[n], start, size):
            out.append(())
            continue
        mine = slice(bounds_low[n], bounds_high[n])
        kind, opcode, bits0, bits1 = picked_kind[mine], picked_opcode[mine], word0[mine], word1[mine]
        at = picked_at[mine] - start
        branch = kind == BRANCH
        branch_at = at[branch]
        simm16 = bits0[branch] & 0xFFFF
        aims = branch_at + 4 + 4 * np.where(simm16 >= 0x8000, simm16 - 0x10000, simm16)
        after = branch_at + 4
        blocks = np.unique(np.concatenate(([0], aims[(aims >= 0) & (aims < size)], after[after < size])))
        access = (kind == SCRATCH_LOAD) | (kind == SCRATCH_STORE)
        buffer = (kind == BUFFER_LOAD) | (kind == BUFFER_STORE)
        if buffer.any():
            quads = known_quads.get((start, size, psb))
            if quads is None:
                quads = psb_quads(_entry(words, positions[low[n]:high[n]], kinds, opcodes, size_of, names, start),
                                  branch_targets(list(zip(branch_at.tolist(), aims.tolist())), size), psb,
                                  family.layout == "gfx9")
            resource = ((bits1 >> 16) & 0x1F) * 4
            access |= buffer & mubuf[opcode] & np.isin(resource, sorted(quads))
        copies = (kind == AGPR_WRITE) | (kind == AGPR_READ)
        if not access.any() and not copies.any():
            out.append(())
            continue
        # Scratch accesses: bytes, stores, inside a loop span / an innermost one.
        access_at = at[access]
        width = np.maximum(widths[opcode[access]], 0)
        store = (kind[access] == SCRATCH_STORE) | (kind[access] == BUFFER_STORE)
        spans = list(figures[n].loop_spans)
        in_loop = _inside(access_at, spans)
        in_innermost = _inside(access_at, nesting(sorted(spans, key=lambda span: span[1]))[0]) if spans else in_loop
        # AGPR copies: a spill copy unless the AGPR is a matrix op's accumulator.
        copy_at = at[copies]
        spill = np.ones(len(copy_at), bool)
        if len(copy_at) and (kind == MATRIX).any():
            matrix_rows = np.nonzero(kind == MATRIX)[0].tolist()
            matrix = [(names[int(opcode[i])][1], int(bits0[i]) | int(bits1[i]) << 32) for i in matrix_rows]
            movs = [m for i in np.nonzero(np.isin(opcode, movs_of))[0].tolist()
                    for m in [accvgpr_move(names[int(opcode[i])][0], int(bits0[i]) | int(bits1[i]) << 32)]
                    if m is not None]
            held = np.frombuffer(bytes(accumulator_mask(family.name, matrix, movs)), np.uint8).astype(bool)
            agpr = np.where(kind[copies] == AGPR_WRITE, bits0[copies] & 0xFF, (bits1[copies] & 0x1FF) - 256)
            spill = ~((agpr >= 0) & held[np.maximum(agpr, 0)])
        found, inferred = rows.place(sections[n], start, np.concatenate((access_at, copy_at)), blocks, size)
        count = len(access_at)
        keys, inverse = np.unique(rows.line_keys(found), return_inverse=True)
        inverse = inverse.reshape(-1)
        load = ~store
        columns = [
            np.bincount(inverse[:count], weights=width * load, minlength=len(keys)),
            np.bincount(inverse[:count], weights=width * store, minlength=len(keys)),
            np.bincount(inverse[:count], weights=width * load * in_loop, minlength=len(keys)),
            np.bincount(inverse[:count], weights=width * store * in_loop, minlength=len(keys)),
            np.bincount(inverse[:count], weights=width * load * in_innermost, minlength=len(keys)),
            np.bincount(inverse[:count], weights=width * store * in_innermost, minlength=len(keys)),
            np.bincount(inverse[:count], minlength=len(keys)),
            np.bincount(inverse[:count], weights=inferred[:count], minlength=len(keys)),
            np.bincount(inverse[count:], minlength=len(keys)),
            np.bincount(inverse[count:], weights=spill, minlength=len(keys))]
        sums = np.rint(np.stack(columns, axis=1)).astype(np.int64).tolist()
        totals: dict[tuple[str, int], list[int]] = {}
        for key, figures_of in zip(keys.tolist(), sums):
            line = rows.line_of_key(key)
            merged = totals.get(line)
            totals[line] = figures_of if merged is None else [a + b for a, b in zip(merged, figures_of)]
        out.append(traffic_rows(totals))
    return out


def _inside(offsets: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """Whether each offset lies in at least one [low, high] span: spans started at or before it, less those
    ended before it."""
    if not spans:
        return np.zeros(len(offsets), bool)
    starts = np.sort(np.array([low for low, _high in spans], np.int64))
    ends = np.sort(np.array([high for _low, high in spans], np.int64))
    return (np.searchsorted(starts, offsets, "right") - np.searchsorted(ends, offsets, "left")) > 0


@lru_cache(maxsize=None)
def _widths(name: str) -> np.ndarray:
    """Bytes per lane each flat opcode index (_names) names as a memory access (-1: none)."""
    return np.array([-1 if (found := access_bytes(mnemonic)) is None else found for _e, mnemonic in _names(name)],
                    np.int64)


class _RowIndex:
    """ObjectLines' sequences as arrays: each table's rows, and for each row
    the nearest earlier and the nearest later row of its table that has a
    line and a length (the line-0 inference of ObjectLines.place_many, for
    sorted sequences)."""

    def __init__(self, lines: ObjectLines):
        self.lines = lines
        self.tables = []
        for table in lines.tables:
            address = np.frombuffer(table.rows.address, np.uint64).astype(np.int64)
            line = np.frombuffer(table.rows.line, np.uint32)
            index = np.arange(len(address), dtype=np.int64)
            valid = (line != 0) & (address < np.append(address[1:], np.iinfo(np.int64).min))
            earlier = np.concatenate(([-1], np.maximum.accumulate(np.where(valid, index, -1))[:-1]))
            past = len(address)
            later = np.concatenate((np.minimum.accumulate(np.where(valid, index, past)[::-1])[::-1][1:], [past]))
            self.tables.append((address, line, earlier, later))
        self.offsets = np.cumsum([0] + [len(table.rows) for table in lines.tables])
        # (table, file, line) of every row as one number: table << 48 | file << 32 | line; rows that cannot
        # (2**15 tables, 2**16 files) are numbered as they are, with 1 << 62 (line_of_key looks them up).
        files = [np.frombuffer(table.rows.file, np.uint32).astype(np.int64) for table in lines.tables]
        self.by_row = len(lines.tables) >= 1 << 15 or any(len(f) and f.max() >= 1 << 16 for f in files)
        if self.by_row:
            self.keys = (np.int64(1) << 62) | np.arange(int(self.offsets[-1]), dtype=np.int64)
        else:
            self.keys = np.concatenate([(np.int64(number) << 48) | found << 32
                                        | np.frombuffer(table.rows.line, np.uint32).astype(np.int64)
                                        for number, (table, found) in enumerate(zip(lines.tables, files))]) \
                if lines.tables else np.zeros(0, np.int64)
        self.seen: dict[int, tuple[str, int]] = {}

    def place(self, section: str, start: int, offsets: np.ndarray, blocks: np.ndarray, size: int
              ) -> tuple[np.ndarray, np.ndarray]:
        """(the row each instruction at ``start + offset`` takes, numbered
        across the tables, -1 for none; whether by inference) in the kernel
        of ``size`` bytes whose basic blocks start at the sorted ``blocks``."""
        found = np.full(len(offsets), -1, np.int64)
        inferred = np.zeros(len(offsets), bool)
        spans = self.lines.spans.get(section, [])
        if not spans or not len(offsets):
            return found, inferred
        where = offsets + start
        lows = np.array(self.lines.lows[section], np.int64)
        which = np.searchsorted(lows, where, "right") - 1
        block = np.searchsorted(blocks, offsets, "right")
        floors = start + blocks[block - 1]
        ceilings = start + np.append(blocks, size)[block]
        for span_number in np.unique(which[which >= 0]).tolist():
            low, high, number, sequence_number = spans[span_number]
            sequence = self.lines.tables[number].sequences[sequence_number]
            mine = np.nonzero((which == span_number) & (where < high))[0]
            address, line, earlier, later = self.tables[number]
            base = sequence.base
            row = np.searchsorted(address[sequence.first:sequence.stop - 1], where[mine] + base, "right") - 1 \
                + sequence.first
            ok = row >= sequence.first
            mine, row = mine[ok], row[ok]
            direct = line[row] != 0
            found[mine[direct]] = row[direct] + self.offsets[number]
            zero, zero_row = mine[~direct], row[~direct]
            source = earlier[zero_row]
            usable = (source >= sequence.first) & (address[np.maximum(source, 0) + 1] > floors[zero] + base)
            found[zero[usable]] = source[usable] + self.offsets[number]
            inferred[zero[usable]] = True
            # None earlier in the block: the first later row of the block with a line.
            zero, zero_row = zero[~usable], zero_row[~usable]
            source = later[zero_row]
            usable = (source < sequence.stop - 1) & (address[np.minimum(source, len(address) - 1)]
                                                    < ceilings[zero] + base)
            found[zero[usable]] = source[usable] + self.offsets[number]
            inferred[zero[usable]] = True
        return found, inferred

    def line_keys(self, rows: np.ndarray) -> np.ndarray:
        """A number per (table, file, line) of each row numbered across the tables (-1 for -1)."""
        keys = np.full(len(rows), -1, np.int64)
        valid = rows >= 0
        keys[valid] = self.keys[rows[valid]]
        return keys

    def line_of_key(self, key: int) -> tuple[str, int]:
        """(file path, line) of a line_keys() number (("", 0) for -1)."""
        if key < 0:
            return "", 0
        known = self.seen.get(key)
        if known is None:
            if self.by_row:
                row = key & ((1 << 62) - 1)
                number = int(np.searchsorted(self.offsets, row, "right")) - 1
                rows = self.lines.tables[number].rows
                local = row - int(self.offsets[number])
                known = (self.lines.path(number, rows.file[local]), rows.line[local])
            else:
                known = (self.lines.path(key >> 48, (key >> 32) & 0xFFFF), key & 0xFFFFFFFF)
            self.seen[key] = known
        return known
