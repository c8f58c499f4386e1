"""One kernel's code, instruction by instruction (``spillway code``): its
loops and each instruction behind its evidence figures.

``kernel_listing()`` decodes the kernel with the same decoder and the same
rules as ``evidence()`` (classify, psb_quads, is_scratch_access, the loop
spans of KernelCode), so what it lists adds up to the kernel's figures:
its scratch accesses are scratch_loads + scratch_stores, in loops
scratch_in_loops, its AGPR copies agpr_writes + agpr_reads (a unit test
keeps them equal).  Offsets are from the kernel's start, as objdump's
``<kernel+0x..>``.

Loops: the spans of KernelCode.loop_spans (a backward ``s_branch``/
``s_cbranch_*`` to its target), grouped by their target (the loop's head):
a loop is [head, last branch back to it].  ``depth``: how many loops hold
the loop (1: outermost) or the instruction (0: in none); a loop holding no
other loop is innermost.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass

from spillway.isa.decoder import DecodeError, decode, family_of, load_family
from spillway.isa.evidence import (AGPR_READ, AGPR_WRITE, BRANCH, BUFFER_LOAD, CALL, MATRIX, SCRATCH_LOAD,
                                   SCRATCH_STORE, BUFFER_STORE, KernelCode, access_bytes, accumulator_mask,
                                   accvgpr_move, branch_target, branch_targets, classify, copied_agpr, evidence,
                                   is_scratch_access, psb_quads, vgpr_addressed)

# What a listed instruction is, by the evidence's classes (the oracle's class names).
SCRATCH_LOAD_KIND = "scratch_load"
SCRATCH_STORE_KIND = "scratch_store"
AGPR_WRITE_KIND = "agpr_write"
AGPR_READ_KIND = "agpr_read"
MATRIX_KIND = "matrix"
CALL_KIND = "call"
KINDS = (SCRATCH_LOAD_KIND, SCRATCH_STORE_KIND, AGPR_WRITE_KIND, AGPR_READ_KIND, MATRIX_KIND, CALL_KIND)
_LISTED = {AGPR_WRITE: AGPR_WRITE_KIND, AGPR_READ: AGPR_READ_KIND, MATRIX: MATRIX_KIND, CALL: CALL_KIND}
# What a scratch access or AGPR copy stands for, by the derived figures' rules (isa.evidence):
# its share of scratch_slot_*/scratch_addressed_* bytes, of agpr_spill_copies/agpr_accumulator_moves.
SLOT_ROLE = "slot"                      # no VGPR address: a fixed frame slot (spill slots, constant-indexed objects)
ADDRESSED_ROLE = "addressed"            # a VGPR address: a private array indexed at run time
SPILL_COPY_ROLE = "spill copy"          # the AGPR is no matrix op's accumulator
ACCUMULATOR_ROLE = "accumulator move"   # the AGPR is one
ROLES = (SLOT_ROLE, ADDRESSED_ROLE, SPILL_COPY_ROLE, ACCUMULATOR_ROLE)


@dataclass(frozen=True)
class Loop:
    start: int        # the head: the backward branches' target, bytes from the kernel's start
    end: int          # the last backward branch to it (its offset)
    branches: int     # backward branches to this head
    depth: int        # loops holding it, itself included (1: outermost)
    innermost: bool   # holds no other loop


@dataclass(frozen=True)
class ListedInstruction:
    offset: int             # bytes from the kernel's start (objdump's <kernel+0x..>)
    length: int             # bytes
    mnemonic: str           # as llvm-objdump prints it
    kind: str               # one of KINDS
    bytes: int | None       # scratch accesses: bytes per lane the mnemonic names (None: it names none)
    loop_depth: int         # loops holding it (0: outside every loop)
    role: str = ""          # scratch accesses and AGPR copies: one of ROLES; "" for matrix ops and calls


@dataclass(frozen=True)
class KernelListing:
    code: KernelCode                             # the kernel's evidence figures
    loops: tuple[Loop, ...]                      # by head offset
    instructions: tuple[ListedInstruction, ...]  # scratch accesses, AGPR copies, matrix ops, calls, by offset


def loops_of(spans: tuple[tuple[int, int], ...]) -> tuple[Loop, ...]:
    """KernelCode.loop_spans grouped by head, with their nesting."""
    heads: dict[int, list[int]] = {}
    for head, branch in spans:
        heads.setdefault(head, []).append(branch)
    ranges = sorted((head, max(branches), len(branches)) for head, branches in heads.items())
    # The heads differ, so the loops holding one (head at or before its head, end at or after its end) are
    # itself and some before it, those it holds some after it: a sorted list of the ends so far gives the
    # depth, the least end after it whether it is innermost (comparing each pair cost 0.3 CPU-s of a
    # failing check's revisit on librocsparse1 6.4.3).
    ends: list[int] = []
    depths = []
    for _head, end, _count in ranges:
        insort(ends, end)
        depths.append(len(ends) - bisect_left(ends, end))
    innermost = [True] * len(ranges)
    least_after = None
    for number in range(len(ranges) - 1, -1, -1):
        end = ranges[number][1]
        innermost[number] = least_after is None or least_after > end
        least_after = end if least_after is None else min(least_after, end)
    return tuple(Loop(lo, hi, count, depth, inner)
                 for (lo, hi, count), depth, inner in zip(ranges, depths, innermost))


def loop_depth(loops: tuple[Loop, ...], offset: int) -> int:
    return sum(loop.start <= offset <= loop.end for loop in loops)


def kernel_listing(code: bytes | memoryview, start: int, size: int, target: str,
                   private_segment_buffer: bool) -> KernelListing:
    """The kernel at ``code[start:start + size]`` (arguments as evidence()'s):
    its figures, loops and listed instructions.  Never raises on bad code:
    what could not be decoded is in ``code.status`` and nothing past it is
    listed."""
    figures = evidence(code, start, size, target, private_segment_buffer)
    loops = loops_of(figures.loop_spans)
    name = family_of(target)
    view = memoryview(code)
    if name is None or size <= 0 or start < 0 or start + size > len(view):
        return KernelListing(figures, loops, ())
    family = load_family(name)
    raw = view[start:start + size]
    decoded = []
    try:
        for instruction in decode(raw, 0, size, family):
            decoded.append((instruction, classify(instruction.mnemonic, instruction.encoding)))
    except DecodeError:
        pass     # figures.status says where and why
    branches = [(instruction.offset, branch_target(instruction.offset, instruction.bits))
                for instruction, kind in decoded if kind == BRANCH]
    psb = psb_quads(iter(decoded), branch_targets(branches, size), private_segment_buffer, family.layout == "gfx9")
    movs = [accvgpr_move(i.encoding, i.bits) for i, _kind in decoded if i.mnemonic.startswith("v_accvgpr_mov")]
    accumulators = accumulator_mask(family.name, [(i.mnemonic, i.bits) for i, kind in decoded if kind == MATRIX],
                                    [m for m in movs if m is not None])
    listed = []
    for instruction, kind in decoded:
        width = None
        role = ""
        if kind in (SCRATCH_LOAD, SCRATCH_STORE, BUFFER_LOAD, BUFFER_STORE):
            if not is_scratch_access(instruction, kind, psb):
                continue
            what = SCRATCH_LOAD_KIND if kind in (SCRATCH_LOAD, BUFFER_LOAD) else SCRATCH_STORE_KIND
            width = access_bytes(instruction.mnemonic)
            role = ADDRESSED_ROLE if vgpr_addressed(family, instruction.encoding, instruction.bits) else SLOT_ROLE
        elif kind in _LISTED:
            what = _LISTED[kind]
            if kind in (AGPR_WRITE, AGPR_READ):
                agpr = copied_agpr(kind, instruction.bits)
                role = ACCUMULATOR_ROLE if agpr is not None and accumulators[agpr] else SPILL_COPY_ROLE
        else:
            continue
        listed.append(ListedInstruction(instruction.offset, instruction.length, instruction.mnemonic, what, width,
                                        loop_depth(loops, instruction.offset), role))
    return KernelListing(figures, loops, tuple(listed))
