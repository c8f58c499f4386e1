"""Source lines of a kernel's machine code (issue 32): each decoded
instruction's file:line:column from the code object's DWARF line tables
(formats.dwarf_lines), and per kernel its scratch accesses, AGPR copies and
loops with their lines and a per-line summary of scratch traffic.

Which row: the last row of the sequence holding the instruction's address
whose address is at or before it (LLVM's lookup, as ``llvm-objdump -l`` and
``llvm-symbolizer`` print it).  A row of line 0 (code LLVM gives no line:
often spill code) makes the instruction take the line of the nearest
preceding instruction of the same basic block that has one; with none (a
line-0 stretch at the start of a block: loop heads often), the line of the
first row after it in the same block that has a line (and a length), both
flagged ``inferred``; with neither, the instruction has no line.  Basic
blocks start at the kernel's start, at each branch's target inside the
kernel and after each branch (``s_branch``/``s_cbranch_*``, the evidence's
rule; SOPP, 4 bytes), and end where the next one starts or the kernel ends.

A debug twin: the same kernels built again with ``-gline-tables-only``
(which leaves the code byte-identical: docs/source-lines.md).  Its lines
are used for a kernel only when the twin's code of that kernel has the same
SHA-256; otherwise ``KernelLines.status`` says the code differs and no line
is given.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from array import array
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from spillway.errors import InputError
from spillway.formats.dwarf_lines import LineTable, read_lines
from spillway.formats.elf import ElfImage
from spillway.isa.decoder import DecodeError, Instruction, decode, family_of, load_family
from spillway.isa.evidence import BRANCH, branch_target, classify, kernel_ranges, nesting
from spillway.isa.listing import (ACCUMULATOR_ROLE, AGPR_READ_KIND, AGPR_WRITE_KIND, SCRATCH_LOAD_KIND,
                                  SCRATCH_STORE_KIND, KernelListing, ListedInstruction, Loop)

# KernelLines.status
PLACED = "placed"                                   # lines read for the kernel
NO_LINE_TABLE = "no line table"                     # the code object has no .debug_line
LINE_TABLE_NOT_READ = "line table not read"         # a malformed table: then ": " and why
NO_ROWS = "no line-table row covers the kernel"
CODE_DIFFERS = "code differs from the debug twin"   # the twin's code of the kernel has another SHA-256
NOT_IN_TWIN = "no such kernel in the debug twin"
CODE_NOT_READ = "code not read"                     # the kernel's code was not read (KernelCode.code_sha256 "")
# KernelLines.lines_from
CODE_OBJECT = "code object"                         # the kernel's own code object
DEBUG_TWIN = "debug twin"
_SOPP_BYTES = 4
_PLACED = (SCRATCH_LOAD_KIND, SCRATCH_STORE_KIND, AGPR_WRITE_KIND, AGPR_READ_KIND)


@dataclass(frozen=True)
class SourceLine:
    file: str          # the path as the line table joins it (LineTable.file_path: absolute when the build was)
    line: int          # from 1
    column: int        # 0: the row names no column
    inferred: bool     # the row said line 0: the line of the nearest preceding instruction of the same basic
    #                    block, or with none the first row with a line after it in the block (constants.INFERRED_LINE)


@dataclass(frozen=True)
class PlacedInstruction:
    instruction: ListedInstruction     # a scratch access or AGPR copy of the kernel's listing
    source: SourceLine | None          # None: no row covers it, or line 0 with no other line in its block


@dataclass(frozen=True)
class PlacedLoop:
    loop: Loop
    head: SourceLine | None            # the line of the loop's first instruction
    back_branch: SourceLine | None     # the line of its last backward branch


@dataclass(frozen=True)
class LineTraffic:
    """What a kernel's scratch accesses and AGPR copies placed on one line do
    (bytes per lane, the widths the mnemonics name)."""
    file: str                          # "" and line 0: the accesses no line was found for
    line: int
    load_bytes: int
    store_bytes: int
    loop_load_bytes: int               # of which inside at least one loop (KernelCode.loop_spans)
    loop_store_bytes: int
    innermost_load_bytes: int          # of which inside an innermost one (scratch_in_innermost_loops' rule)
    innermost_store_bytes: int
    accesses: int                      # scratch accesses
    inferred: int                      # of which placed by inference (line 0 in the table)
    agpr_copies: int                   # v_accvgpr_write/read
    agpr_spill_copies: int             # of which spill copies (not accumulator moves)


@dataclass(frozen=True)
class KernelLines:
    status: str                        # PLACED, or why there are no lines (NO_LINE_TABLE, CODE_DIFFERS, ...)
    lines_from: str                    # CODE_OBJECT, DEBUG_TWIN, "" when none were used
    code_sha256: str                   # the kernel's code (KernelCode.code_sha256)
    lines_code_sha256: str             # the code the lines describe (its twin's when from a twin)
    comp_dir: str                      # DW_AT_comp_dir of the compile unit holding the kernel's rows ("" none)
    scratch: tuple[PlacedInstruction, ...]
    agpr_copies: tuple[PlacedInstruction, ...]
    loops: tuple[PlacedLoop, ...]
    by_line: tuple[LineTraffic, ...]   # by innermost-loop bytes, loop bytes, bytes, accesses (most first)
    entry: SourceLine | None = None    # the line of the kernel's first instruction
    # Other instructions' lines, placed on request (kernel_lines' ``more``: spillway code's register peaks,
    # their definitions and last uses): offset -> line.
    more: Mapping[int, SourceLine | None] = field(default_factory=dict)

    def line_at(self, offset: int) -> SourceLine | None:
        """The line of an instruction placed in ``more`` (None: not placed, or no line)."""
        return self.more.get(offset)


class ObjectLines:
    """A code object's line tables, indexed by section: the sequences sorted
    by their first address, as offsets in their section."""

    def __init__(self, tables: tuple[LineTable, ...]):
        self.tables = tables
        spans: dict[str, list[tuple[int, int, int, int]]] = {}
        for number, table in enumerate(tables):
            rows = table.rows
            for index, sequence in enumerate(table.sequences):
                if sequence.stop - sequence.first < 2 or not sequence.section:
                    continue
                low = rows.address[sequence.first] - sequence.base
                high = rows.address[sequence.stop - 1] - sequence.base
                if high > low:
                    spans.setdefault(sequence.section, []).append((low, high, number, index))
        self.spans = {section: sorted(found) for section, found in spans.items()}
        self.lows = {section: [span[0] for span in found] for section, found in self.spans.items()}
        # One SourceLine per (table, row, inferred): a kernel's accesses share few rows.
        self._placed: dict[tuple[int, int, bool], SourceLine] = {}
        self._paths: dict[tuple[int, int], str] = {}

    def covers(self, section: str, start: int, size: int) -> bool:
        """Whether some sequence's addresses meet [start, start + size)."""
        lows = self.lows.get(section)
        if not lows:
            return False
        at = bisect_right(lows, start + size - 1) - 1      # the last sequence starting in or before the range
        # Sequences do not overlap: the one before it ends before the range if that one does.
        return any(self.spans[section][k][1] > start for k in range(max(at - 1, 0), at + 1)) if at >= 0 else False

    def comp_dir(self, section: str, offset: int) -> str:
        found = self._sequence(section, offset)
        return self.tables[found[2]].comp_dir if found else ""

    def _sequence(self, section: str, offset: int) -> tuple[int, int, int, int] | None:
        lows = self.lows.get(section)
        if not lows:
            return None
        at = bisect_right(lows, offset) - 1
        if at < 0:
            return None
        span = self.spans[section][at]
        return span if offset < span[1] else None

    def place(self, section: str, offset: int, block_start: int, block_end: int | None = None
              ) -> SourceLine | None:
        """The line of the instruction at ``offset`` (in ``section``) whose
        basic block is [block_start, block_end) (None: to its sequence's end)."""
        return self.place_many(section, 0, [offset], [block_start], block_end)[0]

    def place_many(self, section: str, start: int, offsets: Sequence[int], blocks: Sequence[int],
                   end: int | None = None) -> list[SourceLine | None]:
        """place() of the instructions at ``start + offset`` for each of
        ``offsets``, whose basic blocks start at ``start + block`` for the last
        of the (sorted) ``blocks`` at or before each offset and end at the next
        one's start, the last one at ``start + end`` (the kernel's size;
        None: at its sequence's end)."""
        out: list[SourceLine | None] = []
        span: tuple[int, int, int, int] | None = None
        first = stop = base = number = 0
        addresses = lines = array("Q")
        for offset in offsets:
            where = start + offset
            if span is None or not span[0] <= where < span[1]:
                span = self._sequence(section, where)
                if span is None:
                    out.append(None)
                    continue
                number = span[2]
                table = self.tables[number]
                sequence = table.sequences[span[3]]
                first, stop, base = sequence.first, sequence.stop - 1, sequence.base
                addresses, lines = table.rows.address, table.rows.line
            address = where + base
            # The last row at or before the address (the end_sequence row is past every instruction).
            row = bisect_right(addresses, address, first, stop) - 1
            if row < first:
                out.append(None)
            elif lines[row]:
                out.append(self._line(number, row, False))
            else:
                # Line 0: the nearest earlier row that covers an instruction of the same block ...
                block = bisect_right(blocks, offset)
                floor = start + blocks[block - 1] + base
                found = None
                for earlier in range(row - 1, first - 1, -1):
                    upper = addresses[earlier + 1]
                    if upper <= floor:
                        break
                    if lines[earlier] and addresses[earlier] < upper:
                        found = self._line(number, earlier, True)
                        break
                if found is None:
                    # ... else the first later row of the block with a line and a length (rows of no length
                    # describe no instruction: LLVM's lookup never returns them).
                    ceiling = (start + blocks[block] + base if block < len(blocks)
                               else start + end + base if end is not None else addresses[stop])
                    for later in range(row + 1, stop):
                        if addresses[later] >= ceiling:
                            break
                        if lines[later] and addresses[later] < addresses[later + 1]:
                            found = self._line(number, later, True)
                            break
                out.append(found)
        return out

    def _line(self, number: int, row: int, inferred: bool) -> SourceLine:
        key = (number, row, inferred)
        found = self._placed.get(key)
        if found is None:
            rows = self.tables[number].rows
            found = self._placed[key] = SourceLine(self.path(number, rows.file[row]), rows.line[row],
                                                   rows.column[row], inferred)
        return found

    def path(self, number: int, file: int) -> str:
        """tables[number].file_path(file), worked out once."""
        path = self._paths.get((number, file))
        if path is None:
            path = self._paths[(number, file)] = self.tables[number].file_path(file)
        return path


def object_lines(elf: bytes | memoryview, wanted: Iterable[tuple[str, int, int]] | None = None, *,
                 image: ElfImage | None = None) -> ObjectLines | None:
    """The line tables of a code object (None: it has no .debug_line);
    ``wanted``: (section, start, end) ranges whose lines are needed (the
    other sequences are skimmed, formats.dwarf_lines.read_lines).  Raises
    InputError on a malformed table."""
    tables = read_lines(elf, wanted, image=image)
    return ObjectLines(tables) if tables else None


def block_starts(branches: Iterable[tuple[int, int]], size: int) -> list[int]:
    """Offsets where a kernel's basic blocks start: 0, each branch target
    inside it, and the instruction after each branch."""
    starts = {0}
    for at, target in branches:
        if 0 <= target < size:
            starts.add(target)
        if at + _SOPP_BYTES < size:
            starts.add(at + _SOPP_BYTES)
    return sorted(starts)


def decoded_kernel(code: bytes | memoryview, start: int, size: int, target: str) -> list[Instruction]:
    """The kernel's instructions by the reference decoder, up to where it
    stops (KernelCode.status says why)."""
    name = family_of(target)
    view = memoryview(code)
    if name is None or size <= 0 or start < 0 or start + size > len(view):
        return []
    found: list[Instruction] = []
    try:
        for instruction in decode(view[start:start + size], 0, size, load_family(name)):
            found.append(instruction)
    except DecodeError:
        pass
    return found


def branches_of(instructions: Iterable[Instruction]) -> list[tuple[int, int]]:
    """(offset, target) of each branch, by the evidence's rule."""
    return [(i.offset, branch_target(i.offset, i.bits)) for i in instructions
            if classify(i.mnemonic, i.encoding) == BRANCH]


def instruction_lines(lines: ObjectLines, section: str, start: int, size: int,
                      instructions: Sequence[Instruction]) -> list[SourceLine | None]:
    """The line of each of a kernel's decoded ``instructions`` (offsets from
    its start ``start`` in ``section``, ``size`` bytes)."""
    blocks = block_starts(branches_of(instructions), size)
    return lines.place_many(section, start, [instruction.offset for instruction in instructions], blocks, size)


def kernel_lines(listing: KernelListing, branches: Iterable[tuple[int, int]], lines: ObjectLines | None,
                 section: str, start: int, lines_from: str = CODE_OBJECT,
                 lines_code_sha256: str | None = None, more: Sequence[int] = ()) -> KernelLines:
    """The kernel's lines model from its ``listing`` (isa.listing) and
    ``branches`` ((offset, target) of every branch), with ``lines`` of the
    code object holding the code they describe, where the kernel starts at
    ``start`` in ``section``.  ``lines_code_sha256``: the SHA-256 of that
    code when it is not the listing's own (a debug twin's): when it differs,
    no line is given.  ``more``: other offsets to place (KernelLines.more)."""
    code = listing.code
    described = code.code_sha256 if lines_code_sha256 is None else lines_code_sha256
    if not code.code_sha256:
        return _without(CODE_NOT_READ, "", described)
    if described != code.code_sha256:
        return _without(CODE_DIFFERS, code.code_sha256, described)
    if lines is None:
        return _without(NO_LINE_TABLE, code.code_sha256, described)
    if not lines.covers(section, start, code.code_bytes):
        return _without(NO_ROWS, code.code_sha256, described)
    blocks = block_starts(branches, code.code_bytes)
    chosen = [i for i in listing.instructions if i.kind in _PLACED]
    placed = [PlacedInstruction(i, source)
              for i, source in zip(chosen, lines.place_many(section, start, [i.offset for i in chosen], blocks,
                                                             code.code_bytes))]
    scratch = [p for p in placed if p.instruction.kind in (SCRATCH_LOAD_KIND, SCRATCH_STORE_KIND)]
    copies = [p for p in placed if p.instruction.kind in (AGPR_WRITE_KIND, AGPR_READ_KIND)]
    ends = lines.place_many(section, start, [offset for loop in listing.loops for offset in (loop.start, loop.end)]
                            + [0], blocks, code.code_bytes)
    loops = tuple(PlacedLoop(loop, ends[2 * n], ends[2 * n + 1]) for n, loop in enumerate(listing.loops))
    wanted = sorted(set(more))
    extra = dict(zip(wanted, lines.place_many(section, start, wanted, blocks, code.code_bytes))) if wanted else {}
    return KernelLines(PLACED, lines_from, code.code_sha256, described, lines.comp_dir(section, start),
                       tuple(scratch), tuple(copies), loops, by_line(scratch, copies, code.loop_spans), ends[-1],
                       extra)


def _without(status: str, code_sha256: str, described: str) -> KernelLines:
    return KernelLines(status, "", code_sha256, described, "", (), (), (), ())


def without_lines(code_sha256: str, status: str = NO_LINE_TABLE) -> KernelLines:
    """The model of a kernel with no lines (its code object has no line table)."""
    return _without(status, code_sha256, code_sha256)


def by_line(scratch: Sequence[PlacedInstruction], copies: Sequence[PlacedInstruction],
            loop_spans: Sequence[tuple[int, int]]) -> tuple[LineTraffic, ...]:
    """The per-line summary of placed scratch accesses and AGPR copies;
    ``loop_spans``: KernelCode.loop_spans, whose innermost spans (evidence.
    nesting) say which accesses are in an innermost loop, as
    scratch_in_innermost_loops counts them."""
    innermost, _deepest = nesting(sorted(loop_spans, key=lambda span: span[1]))
    totals: dict[tuple[str, int], list[int]] = {}
    for placed in scratch:
        instruction = placed.instruction
        key = (placed.source.file, placed.source.line) if placed.source else ("", 0)
        found = totals.setdefault(key, [0] * 10)
        width = instruction.bytes or 0
        store = instruction.kind == SCRATCH_STORE_KIND
        found[store] += width
        if instruction.loop_depth:
            found[2 + store] += width
            if any(low <= instruction.offset <= high for low, high in innermost):
                found[4 + store] += width
        found[6] += 1
        found[7] += bool(placed.source and placed.source.inferred)
    for placed in copies:
        key = (placed.source.file, placed.source.line) if placed.source else ("", 0)
        found = totals.setdefault(key, [0] * 10)
        found[8] += 1
        found[9] += placed.instruction.role != ACCUMULATOR_ROLE
    return traffic_rows(totals)


def traffic_rows(totals: dict[tuple[str, int], list[int]]) -> tuple[LineTraffic, ...]:
    """LineTraffic of each (file, line): [its ten figures in field order], most traffic first."""
    rows = [LineTraffic(file, line, *figures) for (file, line), figures in totals.items()]
    rows.sort(key=lambda r: (-(r.innermost_load_bytes + r.innermost_store_bytes),
                             -(r.loop_load_bytes + r.loop_store_bytes), -(r.load_bytes + r.store_bytes),
                             -r.accesses, -r.agpr_copies, r.file, r.line))
    return tuple(rows)


def loop_lines(rows: Sequence[LineTraffic], limit: int) -> tuple[tuple[LineTraffic, ...], int]:
    """The rows of by_line() with scratch bytes in loops, at most ``limit``
    of them (by_line's order: innermost-loop bytes, then loop bytes first),
    and how many more there are."""
    looping = [row for row in rows if row.loop_load_bytes + row.loop_store_bytes]
    return tuple(looping[:limit]), max(len(looping) - limit, 0)


def source_object(source: SourceLine | None) -> dict | None:
    """A placed instruction's line as JSON (None: it has none)."""
    if source is None:
        return None
    return {"file": source.file, "line": source.line, "column": source.column, "inferred": source.inferred}


def line_object(row: LineTraffic) -> dict:
    """A LineTraffic as JSON (its fields, in order)."""
    return {name: getattr(row, name) for name in LineTraffic.__dataclass_fields__}


# --- debug twins ------------------------------------------------------------------------------

@dataclass(frozen=True)
class TwinKernel:
    section: str                 # where the twin's kernel is
    start: int
    size: int
    code_sha256: str             # of the twin's code of the kernel


def twin_kernels(twin: bytes | memoryview) -> dict[str, TwinKernel]:
    """The twin code object's functions by symbol name, with their code's
    SHA-256.  Raises InputError on a malformed ELF."""
    code, ranges = kernel_ranges(twin, functions=True)
    out = {}
    for found in ranges:
        if found.start < 0 or found.start + found.size > len(code):
            continue
        digest = hashlib.sha256(code[found.start:found.start + found.size]).hexdigest()
        out[found.name] = TwinKernel(found.section, found.start, found.size, digest)
    return out


def twin_lines(listing: KernelListing, branches: Iterable[tuple[int, int]], name: str,
               kernels: dict[str, TwinKernel], lines: ObjectLines | None) -> KernelLines:
    """The kernel ``name``'s lines taken from its debug twin (``kernels``:
    twin_kernels() of the twin, ``lines``: object_lines() of it): only when
    the twin's code of the kernel is the same (SHA-256)."""
    found = kernels.get(name)
    if found is None:
        return _without(NOT_IN_TWIN, listing.code.code_sha256, "")
    return kernel_lines(listing, branches, lines, found.section, found.start, DEBUG_TWIN, found.code_sha256)


def read_twin(twin: bytes | memoryview, names: Iterable[str] | None = None
              ) -> tuple[dict[str, TwinKernel], ObjectLines | None]:
    """twin_kernels() and object_lines() of a debug twin, the lines read
    only for the kernels ``names`` (all when None)."""
    kernels = twin_kernels(twin)
    wanted = None
    if names is not None:
        wanted = [(k.section, k.start, k.start + k.size) for name in names if (k := kernels.get(name))]
    try:
        return kernels, object_lines(twin, wanted)
    except InputError as exc:
        raise exc.within("debug twin") from None

