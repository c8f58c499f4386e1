"""Live registers of one kernel's machine code (issue 40 item 2): its control
flow, which registers hold a value each instruction may still need, and the
peak of VGPRs, AGPRs and numbered SGPRs live at once.

Pure: the kernel's bytes in; the operands from isa.operands (the generated
tables), the instructions from isa.decoder.  Offsets are bytes from the
kernel's start, as objdump's ``<kernel+0x..>``.

Control flow
  Blocks end at ``s_branch`` (its target), ``s_cbranch_*`` (its target and
  the next instruction), ``s_endpgm*`` and ``s_setpc``/``s_set_pc`` (no
  successor: in a kernel an indirect branch, which makes the kernel
  partial; in a callee its return), and start at every branch target.
  ``s_trap`` and calls fall through (a call makes the kernel partial: the
  callee's registers are not seen).

Liveness (as RGA's ``--livereg``: per register, EXEC not modelled, a def
kills)
  Backward to a fixpoint: live-in = uses | (live-out - defs).  A destination
  that keeps part of its old value is a use and a def (the tables' "ud").

May be defined
  Forward to a fixpoint from the registers the hardware sets at entry (the
  descriptor's user and system SGPRs, the work-item ID VGPRs; a callee:
  every register).  Plain backward liveness overstates divergent code badly
  (a value defined on one side of a branch, the first ``v_writelane`` into
  an SGPR-spill VGPR, a 64-bit addend's undefined high half are "live" back
  to the kernel's entry), so a register counts only where some path from the
  entry may already have written it.  A read of a register no path has
  written is an undefined read (counted).

Pressure at an instruction, per file: |(live-in | defs) & may-be-defined
after it|.  The peak is the most over the kernel, with the first offset
where it is reached.

Status: ``complete``, or ``partial: ...`` naming each reason with its first
offset (a call, an indirect branch, a branch out of the kernel, an
undecodable word -- nothing after it is read --, instructions whose
operands are not read, indexed register access, gfx1250/gfx13's VGPR MSB
state), or ``not read: ...`` (no decoder or no operand table for the
target, no code).  A partial kernel's peaks cover what was read.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Callable, Final, Sequence, TypeVar

from spillway.formats.codeobject import EntryRegisters
from spillway.isa.decoder import MEMO_LIMIT, DecodeError, Family, Instruction, decode, family_of, load_family
from spillway.isa.evidence import BRANCH, CALL, COMPLETE, END, SALU_WRITE, KernelRange, branch_target, classify
from spillway.isa.operands import (AGPR, SGPR, VGPR, WAVE_SIZES, OperandTable, Operands, Registers,
                                   instruction_operands, load_operands)

PARTIAL = "partial"
NOT_READ = "not read"
CURVE_POINTS = 64

# One bit per register: VGPRs from bit 0, AGPRs from 512, SGPRs from 768.
_BASE = {VGPR: 0, AGPR: 512, SGPR: 768}
_VGPRS = (1 << 512) - 1
_AGPRS = ((1 << 256) - 1) << 512
_SGPRS = ((1 << 256) - 1) << 768
_EVERY = _VGPRS | _AGPRS | _SGPRS

_INDEXED = ("s_set_gpr_idx_on", "v_movrels", "v_movreld", "v_movrelsd", "s_movrels", "s_movreld")
_INDIRECT = ("s_setpc_b64", "s_set_pc_i64", "s_cbranch_join", "s_cbranch_g_fork", "s_cbranch_i_fork")


@dataclass(frozen=True, slots=True)
class FilePeak:
    registers: int          # the most registers of the file live at once
    offset: int | None      # the first instruction where that many are live (None: none ever live)


@dataclass(frozen=True, slots=True)
class PressureStep:
    """One instruction with its operands and the registers live at it."""
    offset: int
    length: int
    mnemonic: str
    operands: Operands | None     # None: not read (the kernel is partial)
    vgprs: int
    agprs: int
    sgprs: int
    undefined_read: bool          # it reads a register no path from the entry has written


@dataclass(frozen=True, slots=True)
class Holder:
    """Registers live at a peak that the same instructions defined."""
    registers: tuple[Registers, ...]     # v[40:71], v80, ... (of the peak's file)
    count: int                           # 32-bit registers
    defined_at: tuple[int, ...]          # offsets of the instructions whose values may reach the peak there
    defined_by: tuple[str, ...]          # their mnemonics
    from_entry: bool                     # some path from the entry reaches the peak with the entry's value
    last_used_at: tuple[int, ...]        # offsets after which no path from the peak needs them (their last reads;
                                         # a loop's exit branch, where a value read in the loop dies)


# What defined a group of registers held at a peak, when no one instruction did (Holder.origin).
FROM_ENTRY = "set at entry"
SEVERAL_PATHS = "defined on several paths"


def origin(group: Holder) -> str:
    """What defined a group's registers, how the registers at a peak are summed (spillway code's
    "26 v_accvgpr_write_b32, 16 v_mfma..."; report --pressure's vgpr_peak_origins): the mnemonic of the
    one instruction, FROM_ENTRY, or where several paths reach the peak with different definitions (a
    loop-carried accumulator: its initial move and the loop's matrix op) their mnemonics, distinct and
    sorted, joined by " or " (at most ORIGIN_NAMES, then SEVERAL_PATHS for the rest)."""
    if len(group.defined_by) == 1 and not group.from_entry:
        return group.defined_by[0]
    if not group.defined_by:
        return FROM_ENTRY
    names = sorted(set(group.defined_by)) + ([FROM_ENTRY] if group.from_entry else [])
    if len(names) > ORIGIN_NAMES:
        names = names[:ORIGIN_NAMES] + [SEVERAL_PATHS]
    return " or ".join(names)


ORIGIN_NAMES = 3
# The most sums origin_sums gives.
ORIGIN_SUMS = 4
_Line = TypeVar("_Line")


def origin_sums(held: PeakHolders, line_at: Callable[[int], _Line | None], most: int | None = ORIGIN_SUMS
                ) -> list[tuple[int, str, _Line | None]]:
    """The registers held at a peak summed by what defined them (origin)
    and, for a group one instruction defined, that instruction's line
    (``line_at`` of its offset: isa.source_lines' SourceLine, None without);
    (registers, origin, line), most registers first, at most ``most`` (None:
    every sum, adding up to the peak): report --pressure's vgpr_peak_origins
    and check --pressure's held_by, spillway code's loop peaks."""
    sums: dict[tuple[str, _Line | None], int] = {}
    for group in held.groups:
        line = line_at(group.defined_at[0]) if len(group.defined_at) == 1 and not group.from_entry else None
        key = (origin(group), line)
        sums[key] = sums.get(key, 0) + group.count
    ranked = sorted(sums.items(), key=lambda item: -item[1])[:most]
    return [(count, name, line) for (name, line), count in ranked]


@dataclass(frozen=True)
class PeakHolders:
    """What holds one file's peak: its live registers grouped by where they were defined, most first."""
    file: str                            # "v", "a", "s"
    offset: int                          # the peak instruction
    groups: tuple[Holder, ...]


@dataclass(frozen=True)
class LoopPeak:
    """One loop's own peaks (spillway code, issue 41 item 1): the most
    registers of each file counted at an instruction inside the loop's span
    (``start .. end``, the back branch included), the first offset, and what
    holds its VGPR peak."""
    start: int                           # the loop's head, bytes from the kernel's start
    end: int                             # its last back branch
    vgprs: FilePeak
    agprs: FilePeak
    sgprs: FilePeak
    held: PeakHolders | None             # what holds the VGPR peak (None: no VGPR live in the loop, or a
                                         # loop beyond the LOOP_HOLDERS with the most VGPRs: not walked)


def innermost_loop(spans: Sequence[tuple[int, int]], offset: int) -> tuple[int, int] | None:
    """The innermost of the (start, end) loop spans holding ``offset`` (None:
    outside every loop): the one with the latest head (heads differ, so a
    loop nested in another has the later head; of overlapping spans, the
    one entered last)."""
    holding = [span for span in spans if span[0] <= offset <= span[1]]
    return max(holding, key=lambda span: (span[0], -span[1])) if holding else None


@dataclass(frozen=True)
class KernelPressure:
    status: str                          # COMPLETE, "partial: ..." or "not read: ..."
    vgprs: FilePeak
    agprs: FilePeak
    sgprs: FilePeak
    undefined_reads: int                 # instructions reading a register no path from the entry has written
    first_undefined_read: int | None     # the first one's offset
    instructions: int                    # instructions read
    steps: tuple[PressureStep, ...] = ()     # every instruction, when asked for
    holders: tuple[PeakHolders, ...] = ()    # what holds each file's peak, when asked for
    # The VGPR curve (with holders): the most VGPRs live in each of CURVE_POINTS equal stretches of the code
    # (fewer for a short kernel), and the code's size in bytes.
    vgpr_curve: tuple[int, ...] = ()
    code_size: int = 0
    # (with holders) each branch's (offset, target), for the basic blocks source lines are placed in
    # (isa.source_lines.block_starts)
    branches: tuple[tuple[int, int], ...] = ()
    # (with loops) each loop's own peaks, in the order the spans were given
    loops: tuple[LoopPeak, ...] = ()

    @property
    def complete(self) -> bool:
        return self.status == COMPLETE


def _unread(why: str) -> KernelPressure:
    none = FilePeak(0, None)
    return KernelPressure(f"{NOT_READ}: {why}", none, none, none, 0, None, 0)


def _mask(registers) -> int:
    mask = 0
    for r in registers:
        mask |= ((1 << r.count) - 1) << (_BASE[r.file] + r.first)
    return mask


def entry_mask(entry: EntryRegisters | None) -> int:
    """The registers set at entry (KernelRange.entry); None (a callee) every
    register."""
    if entry is None:
        return _EVERY
    mask = (1 << entry.vgprs) - 1
    for number in entry.sgprs():
        mask |= 1 << (_BASE[SGPR] + number)
    return mask


class _Reasons:
    """Why a kernel is partial: each reason once, with its first offset."""

    def __init__(self) -> None:
        self.first: dict[str, int] = {}
        self.count: dict[str, int] = {}

    def add(self, reason: str, offset: int) -> None:
        self.first.setdefault(reason, offset)
        self.count[reason] = self.count.get(reason, 0) + 1

    def status(self) -> str:
        if not self.first:
            return COMPLETE
        said = []
        for reason, offset in sorted(self.first.items(), key=lambda item: item[1]):
            times = self.count[reason]
            said.append(f"{reason} at +0x{offset:x}" + (f" ({times}x)" if times > 1 else ""))
        return f"{PARTIAL}: " + "; ".join(said)


class PressureMemo:
    """What kernel_pressure learnt of instructions by their bytes, kept for
    the next kernels of the same family (a code object's kernels share most
    of their instructions: 80-90% of the reads are found here): the decoder's
    memo (decode()) and each distinct instruction's operands, their masks,
    the reason it makes a kernel partial, and its class (evidence.classify).
    Bounded: emptied when full."""

    def __init__(self) -> None:
        self.family: str | None = None
        self.wavefront_size = 0
        self.decoded: dict = {}
        self.read: dict[bytes, tuple[Operands | None, int, int, tuple[str, ...], int]] = {}

    def of(self, family: str, wavefront_size: int = 32) -> PressureMemo:
        if family != self.family:
            self.decoded.clear()
        if family != self.family or wavefront_size != self.wavefront_size:
            self.read.clear()            # the same bytes read otherwise in wave64 (lane masks: SGPR pairs)
        self.family, self.wavefront_size = family, wavefront_size
        return self


def each_kernel_pressure(code: bytes | memoryview, kernels: Sequence[KernelRange | None], target: str,
                         steps: bool = False, holders: bool | tuple[str, ...] = False,
                         with_curve: bool | None = None,
                         loops: Sequence[Sequence[tuple[int, int]] | None] | None = None
                         ) -> list[KernelPressure | None]:
    """kernel_pressure() of each of a code object's ``kernels`` (None stays
    None) through one PressureMemo, with kernel_pressure's ``steps``,
    ``holders`` and ``with_curve``; ``loops``: each kernel's loop spans."""
    memo = PressureMemo()
    return [None if kernel is None else kernel_pressure(code, kernel.start, kernel.size, target, kernel.entry,
                                                        steps=steps, holders=holders, memo=memo, with_curve=with_curve,
                                                        loops=(loops[number] or ()) if loops else (),
                                                        wavefront_size=kernel.wavefront_size)
            for number, kernel in enumerate(kernels)]


def _read_instruction(table: OperandTable, raw: memoryview, instruction: Instruction
                      ) -> tuple[Operands | None, int, int, tuple[str, ...], int]:
    """(operands, defs mask, uses mask, why it makes the kernel partial (none: ()), class) of one instruction."""
    mnemonic = instruction.mnemonic
    found = instruction_operands(table, raw, instruction)
    kind = classify(mnemonic, instruction.encoding)
    why: tuple[str, ...] = () if found is not None else ("operands not read",)
    if mnemonic.startswith(_INDEXED):
        why += (f"indexed register access ({mnemonic})",)
    elif mnemonic == "s_set_vgpr_msb":
        why += ("VGPR MSB state (s_set_vgpr_msb)",)
    elif kind == CALL:
        why += ("call",)
    if found is None:
        return None, 0, 0, why, kind
    return found, _mask(found.defs), _mask(found.uses), why, kind


def _read_kernel(raw: memoryview, size: int, family: Family, table: OperandTable, memo: PressureMemo, reasons: _Reasons
                 ) -> tuple[list[Instruction], list[Operands | None], list[int], list[int], list[int]]:
    """A kernel's instructions, each one's operands, defs and uses masks and
    class (evidence.classify), each distinct instruction read once (memo);
    why any makes the kernel partial, in ``reasons``."""
    decoded: list[Instruction] = []
    try:
        for instruction in decode(raw, 0, size, family, memo.decoded):
            decoded.append(instruction)
    except DecodeError as exc:
        reasons.add(f"undecodable word ({exc.message})", exc.offset)
    read: list[Operands | None] = []
    defs: list[int] = []
    uses: list[int] = []
    kinds: list[int] = []
    known = memo.read
    if len(known) >= MEMO_LIMIT:
        known.clear()
    for instruction in decoded:
        at = instruction.offset
        key = raw[at:at + instruction.length].tobytes()
        got = known.get(key)
        if got is None:
            got = known[key] = _read_instruction(table, raw, instruction)
        found, defined, used, why, kind = got
        read.append(found)
        defs.append(defined)
        uses.append(used)
        kinds.append(kind)
        for reason in why:
            reasons.add(reason, at)
    return decoded, read, defs, uses, kinds


def kernel_pressure(code: bytes | memoryview, start: int, size: int, target: str,
                    entry: EntryRegisters | None, steps: bool = False, holders: bool | tuple[str, ...] = False,
                    memo: PressureMemo | None = None, with_curve: bool | None = None,
                    loops: Sequence[tuple[int, int]] = (), wavefront_size: int = 32) -> KernelPressure:
    """The kernel at ``code[start:start + size]`` for ``target``: its peaks
    and status; with ``steps`` every instruction's operands and pressure;
    with ``holders`` what holds each file's peak (issue 41: the live
    registers there grouped by the instructions that defined them, and where
    they are used last; a tuple of files, e.g. ``(VGPR,)``: those files'
    only); ``with_curve`` (default: with holders) the VGPR curve; ``loops``:
    (start, end) spans, each loop's own peaks and what holds its VGPR peak
    (LoopPeak; nothing is spent on loops without them).
    ``entry``: KernelRange.entry (None: a callee); ``memo``: one PressureMemo
    kept across the kernels of a code object (the same figures, faster);
    ``wavefront_size``: the kernel's (KernelRange.wavefront_size: GFX10 and
    later lane masks are SGPR pairs in wave64).
    Never raises on bad code: what could not be read is in the status."""
    name = family_of(target)
    if name is None:
        return _unread(f"no decoder for {target}")
    table = load_operands(name, wavefront_size if wavefront_size in WAVE_SIZES else 32)
    if table is None:
        return _unread(f"no operand table for {name} yet")
    view = memoryview(code)
    if size <= 0 or start < 0 or start + size > len(view):
        return _unread("the kernel's code is not in its section")
    family = load_family(name)
    raw = view[start:start + size]
    memo = (memo or PressureMemo()).of(name, table.wavefront_size)
    reasons = _Reasons()
    decoded, read, defs, uses, kinds = _read_kernel(raw, size, family, table, memo, reasons)
    successors = _successors(decoded, kinds, entry is not None, reasons)
    at_entry = entry_mask(entry)
    live_in, before = _dataflow(successors, defs, uses, at_entry)

    def held_at(number: int) -> int:
        """The registers counted at an instruction: live or defined there, and set on some path to it."""
        return (live_in[number] | defs[number]) & (before[number] | defs[number])

    peaks: list[list] = [[0, None], [0, None], [0, None]]
    code_size = decoded[-1].offset + decoded[-1].length if decoded else 0
    points = min(CURVE_POINTS, len(decoded)) if (bool(holders) if with_curve is None else with_curve) else 0
    curve = [0] * points
    _peaks_and_curve(live_in, before, defs, decoded, peaks, curve, code_size)
    undefined = 0
    first_undefined = None
    for number in range(len(decoded)):
        if uses[number] & ~before[number]:
            undefined += 1
            if first_undefined is None:
                first_undefined = decoded[number].offset
    listed: list[PressureStep] = []
    for number, instruction in enumerate(decoded if steps else ()):
        held = held_at(number)
        listed.append(PressureStep(instruction.offset, instruction.length, instruction.mnemonic, read[number],
                                   (held & _VGPRS).bit_count(), (held & _AGPRS).bit_count(),
                                   (held & _SGPRS).bit_count(), bool(uses[number] & ~before[number])))
    held_by: list[PeakHolders] = []
    files = (VGPR, AGPR, SGPR) if holders is True else holders or ()
    if files:
        index = {instruction.offset: number for number, instruction in enumerate(decoded)}
        for file, mask, (_count, offset) in zip((VGPR, AGPR, SGPR), (_VGPRS, _AGPRS, _SGPRS), peaks):
            if offset is None or file not in files:
                continue
            number = index[offset]
            held_by.append(_holders(file, number, held_at(number) & mask, decoded, successors, defs, uses, live_in,
                                    at_entry))
    branches = tuple((decoded[n].offset, branch_target(decoded[n].offset, decoded[n].bits))
                     for n, kind in enumerate(kinds) if kind == BRANCH) if holders else ()

    # loops sharing a peak instruction share its holders; the kernel's VGPR peak's are known
    known = {index_of(decoded, held.offset): held for held in held_by if held.file == VGPR}
    predecessors: list[list[int]] = []

    def vgpr_holders(number: int) -> PeakHolders:
        if number not in known:
            if not predecessors:
                predecessors.extend(_predecessors(successors))
            known[number] = _holders(VGPR, number, held_at(number) & _VGPRS, decoded, successors, defs, uses,
                                     live_in, at_entry, predecessors)
        return known[number]

    in_loops = _loop_peaks(loops, decoded, held_at, vgpr_holders, known.__contains__) if loops else ()
    return KernelPressure(reasons.status(), FilePeak(*peaks[0]), FilePeak(*peaks[1]), FilePeak(*peaks[2]),
                          undefined, first_undefined, len(decoded), tuple(listed), tuple(held_by), tuple(curve),
                          code_size, branches, in_loops)


def index_of(decoded: list[Instruction], offset: int) -> int:
    """The number of the instruction at ``offset`` (one of ``decoded``'s)."""
    return bisect_left([instruction.offset for instruction in decoded], offset)


def _predecessors(successors: list[tuple[int, ...]]) -> list[list[int]]:
    predecessors: list[list[int]] = [[] for _ in successors]
    for number, aims in enumerate(successors):
        for aim in aims:
            predecessors[aim].append(number)
    return predecessors


# The loops whose VGPR peak's holders are walked (spillway code): the LOOP_HOLDERS with the most VGPRs (the
# earlier head first among equals), and any loop whose peak instruction's holders are walked anyway (the
# kernel's VGPR peak's loop).  A walk costs a pass over the kernel: librocsparse1 7.2.4's largest gfx90a
# kernel has 257 loops, whose walks took 3.8 s against 1.5 s for the rest of the command.
LOOP_HOLDERS: Final = 12


def _loop_peaks(spans: Sequence[tuple[int, int]], decoded: list[Instruction], held_at: Callable[[int], int],
                vgpr_holders: Callable[[int], PeakHolders], walked: Callable[[int], bool]
                ) -> tuple[LoopPeak, ...]:
    """Each (start, end) span's peaks: the most registers of each file
    ``held_at`` an instruction inside it (the first offset), and what holds
    its VGPR peak (``vgpr_holders`` of its instruction's number) for the
    LOOP_HOLDERS loops with the most VGPRs and those whose peak instruction
    is ``walked`` already; None for the others.  Each instruction counted
    once, however many loops hold it."""
    offsets = [instruction.offset for instruction in decoded]
    counted: dict[int, tuple[int, int, int]] = {}
    found: list[tuple[int, int, list[tuple[int, int]]]] = []
    for start, end in spans:
        best = [(0, -1), (0, -1), (0, -1)]        # (registers, instruction number) per file
        for number in range(bisect_left(offsets, start), bisect_right(offsets, end)):
            counts = counted.get(number)
            if counts is None:
                live = held_at(number)
                counts = counted[number] = ((live & _VGPRS).bit_count(), (live & _AGPRS).bit_count(),
                                            (live & _SGPRS).bit_count())
            for file, count in enumerate(counts):
                if count > best[file][0]:
                    best[file] = (count, number)
        found.append((start, end, best))
    ranked = sorted(range(len(found)), key=lambda n: (-found[n][2][0][0], found[n][0]))
    held: dict[int, PeakHolders] = {}
    for n in ranked[:LOOP_HOLDERS]:          # the chosen first: a loop sharing their peak instruction is free
        vgprs, number = found[n][2][0]
        if vgprs:
            held[n] = vgpr_holders(number)
    out = []
    for n, (start, end, best) in enumerate(found):
        peaks = [FilePeak(count, offsets[number] if count else None) for count, number in best]
        vgprs, number = best[0]
        if n not in held and vgprs and walked(number):
            held[n] = vgpr_holders(number)
        out.append(LoopPeak(start, end, peaks[0], peaks[1], peaks[2], held.get(n)))
    return tuple(out)


def _peaks_and_curve(live_in: list[int], before: list[int], defs: list[int],
                     decoded: list[Instruction], peaks: list[list], curve: list[int], code_size: int) -> None:
    """kernel_pressure's peaks (the most registers of each file counted at an
    instruction, the first offset) and the VGPR curve (``curve``: its cells,
    none for no curve): one pass, the AGPRs and SGPRs counted only where some
    are held."""
    vgprs = agprs = sgprs = 0
    at_v = at_a = at_s = -1
    points = len(curve)
    for number, defined in enumerate(defs):
        held = (live_in[number] | defined) & (before[number] | defined)
        count = (held & _VGPRS).bit_count()
        if points:
            cell = decoded[number].offset * points // code_size
            if count > curve[cell]:
                curve[cell] = count
        if count > vgprs:
            vgprs, at_v = count, number
        if held >> 512:
            count = (held & _AGPRS).bit_count()
            if count > agprs:
                agprs, at_a = count, number
            count = (held >> 768).bit_count()
            if count > sgprs:
                sgprs, at_s = count, number
    for peak, count, number in zip(peaks, (vgprs, agprs, sgprs), (at_v, at_a, at_s)):
        if count:
            peak[0], peak[1] = count, decoded[number].offset


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _registers_of(file: str, numbers: list[int]) -> tuple[Registers, ...]:
    """Register numbers as runs: v[40:43], v45."""
    out: list[Registers] = []
    for number in sorted(numbers):
        if out and out[-1].first + out[-1].count == number:
            out[-1] = Registers(file, out[-1].first, out[-1].count + 1)
        else:
            out.append(Registers(file, number, 1))
    return tuple(out)


def _holders(file: str, peak: int, held: int, decoded: list[Instruction], successors: list[tuple[int, ...]],
             defs: list[int], uses: list[int], live_in: list[int], entry: int,
             predecessors: list[list[int]] | None = None) -> PeakHolders:
    """The registers ``held`` at instruction ``peak`` grouped by their
    reaching definitions (backward from the peak along every path, each
    register until an instruction defines it; the entry where none does),
    with their last uses (forward from the peak, each register until the
    instruction after which no path needs it).  ``predecessors``: each
    instruction's (_predecessors), when already worked out."""
    if predecessors is None:
        predecessors = _predecessors(successors)
    reaching: dict[int, set[int]] = {}          # register bit -> defining instructions (-1: the entry)
    defined_here = held & defs[peak]
    for bit in _bits(defined_here):
        reaching.setdefault(bit, set()).add(peak)
    seen = [0] * len(decoded)
    work = [(q, held & ~defined_here) for q in predecessors[peak]]
    at_entry = 0
    if peak == 0:
        at_entry |= held & ~defined_here
    while work:
        number, looking = work.pop()
        looking &= ~seen[number]
        if not looking:
            continue
        seen[number] |= looking
        found = looking & defs[number]
        if found:
            for bit in _bits(found):
                reaching.setdefault(bit, set()).add(number)
        rest = looking & ~found
        if number == 0:
            at_entry |= rest & entry
        if rest:
            work.extend((q, rest) for q in predecessors[number])
    for bit in _bits(at_entry):
        reaching.setdefault(bit, set()).add(-1)
    last: dict[int, set[int]] = {}

    def live_out(number: int) -> int:
        out = 0
        for aim in successors[number]:
            out |= live_in[aim]
        return out

    visited = [0] * len(decoded)
    for bit in _bits(held & ~live_out(peak)):           # last read at the peak, or defined there and never read
        last.setdefault(bit, set()).add(peak)
    work = [(aim, held & live_out(peak)) for aim in successors[peak]]
    while work:
        number, tracking = work.pop()
        tracking &= ~visited[number]
        if not tracking:
            continue
        visited[number] |= tracking
        after = live_out(number)
        ends = tracking & ~after                  # read here for the last time, or no longer needed past it
        if ends:
            for bit in _bits(ends):
                last.setdefault(bit, set()).add(number)
        going = tracking & after & ~(defs[number] & ~uses[number])   # a new value ends this one
        if going:
            work.extend((aim, going) for aim in successors[number])
    groups: dict[tuple[int, ...], list[int]] = {}
    base = _BASE[file]
    for bit in _bits(held):
        groups.setdefault(tuple(sorted(reaching.get(bit, ()))), []).append(bit)
    out = []
    for key, bits in groups.items():
        sites = [n for n in key if n >= 0]
        needed = sorted({n for bit in bits for n in last.get(bit, ())})
        out.append(Holder(_registers_of(file, [bit - base for bit in bits]), len(bits),
                          tuple(decoded[n].offset for n in sites), tuple(decoded[n].mnemonic for n in sites),
                          -1 in key, tuple(decoded[n].offset for n in needed)))
    out.sort(key=lambda h: (-h.count, h.defined_at))
    return PeakHolders(file, decoded[peak].offset, tuple(out))


def _successors(decoded: list[Instruction], kinds: list[int], kernel: bool, reasons: _Reasons
                ) -> list[tuple[int, ...]]:
    """Each instruction's successors (indexes into ``decoded``); ``kinds``:
    each one's evidence.classify."""
    at: dict[int, int] | None = None
    last = len(decoded) - 1
    out: list[tuple[int, ...]] = [(number + 1,) for number in range(last)] + [()] * (last >= 0)
    for number, kind in enumerate(kinds):
        if kind != BRANCH and kind != END and kind != SALU_WRITE:
            continue                     # the next one follows (_INDIRECT's are SALU_WRITE: SOP1, SOP2, SOPK)
        instruction = decoded[number]
        mnemonic = instruction.mnemonic
        following = (number + 1,) if number < last else ()
        if mnemonic in _INDIRECT:
            returns = mnemonic in ("s_setpc_b64", "s_set_pc_i64")
            if kernel or not returns:       # a callee's s_setpc is its return
                reasons.add(f"indirect branch ({mnemonic})", instruction.offset)
            out[number] = () if returns else following
        elif kind == BRANCH:
            if at is None:
                at = {instruction.offset: number for number, instruction in enumerate(decoded)}
            target = at.get(branch_target(instruction.offset, instruction.bits))
            if target is None:
                reasons.add("branch out of the kernel", instruction.offset)
            aim = () if target is None else (target,)
            out[number] = aim if mnemonic == "s_branch" else tuple(dict.fromkeys(aim + following))
        elif kind == END:
            out[number] = ()
    return out


def _dataflow(successors: list[tuple[int, ...]], defs: list[int], uses: list[int], entry: int
              ) -> tuple[list[int], list[int]]:
    """(live-in, may be defined before) of each instruction: backward
    liveness and forward "may be defined" over the blocks, each to its
    fixpoint, then spread over the blocks' instructions."""
    count = len(successors)
    if not count:
        return [], []
    leaders = {0}
    for number, aims in enumerate(successors):
        if aims != (number + 1,):
            leaders.update(aims)
            if number + 1 < count:
                leaders.add(number + 1)
    starts = sorted(leaders)
    ends = starts[1:] + [count]
    block_of = {first: block for block, first in enumerate(starts)}
    after = [tuple(block_of[aim] for aim in successors[end - 1]) for end in ends]
    before_blocks: list[list[int]] = [[] for _ in starts]
    for block, aims in enumerate(after):
        for aim in aims:
            before_blocks[aim].append(block)
    gen = []
    kill = []
    for first, end in zip(starts, ends):
        exposed = killed = 0
        for number in range(end - 1, first - 1, -1):
            exposed = uses[number] | (exposed & ~defs[number])
            killed |= defs[number]
        gen.append(exposed)
        kill.append(killed)
    blocks = len(starts)
    live_in = [0] * blocks
    changed = True
    while changed:
        changed = False
        for block in range(blocks - 1, -1, -1):
            out = 0
            for aim in after[block]:
                out |= live_in[aim]
            new = gen[block] | (out & ~kill[block])
            if new != live_in[block]:
                live_in[block] = new
                changed = True
    defined_in = [0] * blocks
    defined_in[0] = entry
    changed = True
    while changed:
        changed = False
        for block in range(blocks):
            new = entry if block == 0 else 0
            for source in before_blocks[block]:
                new |= defined_in[source] | kill[source]
            if new != defined_in[block]:
                defined_in[block] = new
                changed = True
    live = [0] * count
    defined = [0] * count
    for block, (first, end) in enumerate(zip(starts, ends)):
        out = 0
        for aim in after[block]:
            out |= live_in[aim]
        for number in range(end - 1, first - 1, -1):
            out = uses[number] | (out & ~defs[number])
            live[number] = out
        now = defined_in[block]
        for number in range(first, end):
            defined[number] = now
            now |= defs[number]
    return live, defined
