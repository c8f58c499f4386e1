"""isa.liveness on small synthetic inputs: the dataflow over hand-made control
flow, the entry registers from hand-made descriptors, and one assembled
kernel end to end (the real-binary oracle is tests/oracle/test_isa_liveness.py)."""

from __future__ import annotations

import struct

from spillway.formats.codeobject import EntryRegisters, entry_registers
from spillway.isa.liveness import LOOP_HOLDERS, _BASE, _dataflow, entry_mask, kernel_pressure
from spillway.isa.operands import SGPR, VGPR


def v(*numbers: int) -> int:
    return sum(1 << (_BASE[VGPR] + n) for n in numbers)


def s(*numbers: int) -> int:
    return sum(1 << (_BASE[SGPR] + n) for n in numbers)


def entry(sgprs: int, vgprs: int) -> EntryRegisters:
    return EntryRegisters(sgprs, sgprs, 0, vgprs)


def test_straight_line_liveness_and_definition():
    # 0: v1 = v0; 1: v2 = v1; 2: use v2 (store)
    successors = [(1,), (2,), ()]
    defs = [v(1), v(2), 0]
    uses = [v(0), v(1), v(2)]
    live, defined = _dataflow(successors, defs, uses, entry_mask(entry(0, 1)))
    assert live == [v(0), v(1), v(2)]
    assert defined == [v(0), v(0, 1), v(0, 1, 2)]


def test_a_value_defined_on_one_side_of_a_branch_is_not_live_before_it():
    # 0: branch to 2 or fall to 1; 1: v5 = ...; 2: use v5.  Plain liveness has v5 live at 0;
    # may-be-defined keeps it out there (no path has written it yet) and flags 2's read as maybe undefined only
    # where no path wrote it: here one path did, so it is no undefined read.
    successors = [(2, 1), (2,), ()]
    defs = [0, v(5), 0]
    uses = [0, 0, v(5)]
    live, defined = _dataflow(successors, defs, uses, entry_mask(entry(0, 1)))
    assert live[0] == v(5)                      # backward liveness alone
    assert not live[0] & defined[0]             # not counted: not defined at 0
    assert defined[2] & v(5)                    # defined on some path into 2


def test_a_loop_keeps_its_carried_value_live_around_the_back_branch():
    # 0: s4 = 0; 1: s4 = s4 + 1 (loop head); 2: branch back to 1 or fall; 3: end
    successors = [(1,), (2,), (1, 3), ()]
    defs = [s(4), s(4), 0, 0]
    uses = [0, s(4), 0, 0]
    live, defined = _dataflow(successors, defs, uses, entry_mask(entry(2, 1)))
    assert live[2] & s(4) and live[1] & s(4)
    assert not live[3] & s(4)


def test_unreachable_code_counts_only_what_it_defines():
    successors = [(), (2,), ()]          # 0 ends; 1-2 unreachable
    defs = [0, v(3), 0]
    uses = [0, 0, v(3)]
    _live, defined = _dataflow(successors, defs, uses, entry_mask(entry(0, 1)))
    assert defined[1] == 0 and defined[2] == v(3)


def descriptor(properties: int, rsrc2: int, preload: int = 0) -> bytes:
    data = bytearray(64)
    struct.pack_into("<I", data, 52, rsrc2)
    struct.pack_into("<HH", data, 56, properties, preload)
    return bytes(data)


def test_entry_registers_from_the_descriptor():
    # private segment buffer (4) + kernarg ptr (2); wave offset (bit 0) and work-group ID X (bit 7); v0..v1
    kd = descriptor(0b1001, 1 | 6 << 1 | 1 << 7 | 1 << 11)
    assert entry_registers(kd, "gfx90a") == EntryRegisters(6, 6, 2, 2)
    assert entry_registers(kd, "gfx90a").sgprs() == tuple(range(8))
    # Architected flat scratch: no wave-offset SGPR.  GFX11's USER_SGPR_COUNT of 15 puts the work-group ID in
    # s15, after the two kernarg SGPRs the kernel enables.
    gfx11 = entry_registers(descriptor(0b1000, 1 | 15 << 1 | 1 << 7), "gfx1100")
    assert gfx11 == EntryRegisters(2, 15, 1, 1) and gfx11.sgprs() == (0, 1, 15)
    # Kernel arguments preloaded into SGPRs count as user SGPRs.
    assert entry_registers(descriptor(0b1000, 0, preload=4), "gfx942").sgprs() == tuple(range(6))


def test_a_kernel_with_no_operand_table_is_not_read(monkeypatch):
    # Every family the decoder reads has a table now: a family without one is what load_operands answers None.
    assert kernel_pressure(b"\x00\x00\x81\xbf", 0, 4, "gfx940", entry(2, 1)).status == "complete"
    monkeypatch.setattr("spillway.isa.liveness.load_operands", lambda family, wavefront_size=32: None)
    found = kernel_pressure(b"\x00\x00\x81\xbf", 0, 4, "gfx940", entry(2, 1))
    assert found.status.startswith("not read: ") and found.vgprs.registers == 0


def test_a_tiny_gfx90a_kernel_end_to_end():
    # v_mov_b32 v1, v0 (7E020300); v_add_u32 v2, v1, v0 (68040101); global_store_dword v[1:2]... kept simple:
    # s_endpgm (BF810000).  v0 set at entry, v1 from it, v2 from both: at most 3 VGPRs live.
    code = bytes.fromhex("0003027e" "01010468" "000081bf")
    found = kernel_pressure(code, 0, len(code), "gfx90a", entry(6, 1), steps=True)
    assert found.status == "complete", found.status
    assert [step.mnemonic for step in found.steps] == ["v_mov_b32_e32", "v_add_u32_e32", "s_endpgm"]
    assert found.vgprs.registers == 3 and found.vgprs.offset == 4
    assert found.undefined_reads == 0
    branch_out = bytes.fromhex("0400" "82bf")        # s_branch +4 dwords: out of the kernel
    assert kernel_pressure(branch_out, 0, 4, "gfx90a", entry(6, 1)).status.startswith("partial: branch out")


def test_what_holds_the_peak_of_a_tiny_kernel():
    code = bytes.fromhex("0003027e" "01010468" "000081bf")     # v_mov v1, v0; v_add v2, v1, v0; s_endpgm
    found = kernel_pressure(code, 0, len(code), "gfx90a", entry(6, 1), holders=True)
    (vgprs,) = [held for held in found.holders if held.file == "v"]
    assert vgprs.offset == 4
    groups = {str(group.registers[0]): group for group in vgprs.groups}
    assert set(groups) == {"v0", "v1", "v2"}
    assert groups["v0"].from_entry and groups["v0"].defined_at == ()
    assert groups["v1"].defined_at == (0,) and groups["v1"].defined_by == ("v_mov_b32_e32",)
    assert groups["v2"].defined_at == (4,) and groups["v2"].last_used_at == (4,)    # never read: ends there
    assert all(group.last_used_at == (4,) for group in vgprs.groups)


def test_a_memo_shared_by_a_code_objects_kernels_changes_no_figure():
    """kernel_pressure with one PressureMemo across every kernel (and callee)
    of the committed code objects of families with operand tables, two
    families through the same memo, equals it without: peaks, status,
    undefined reads, what holds the peaks and the curve."""
    from pathlib import Path

    from spillway.isa.evidence import kernel_ranges
    from spillway.isa.liveness import PressureMemo
    from spillway.isa.operands import available
    from spillway.isa.decoder import family_of

    folder = Path(__file__).parents[2] / "data" / "isa" / "co"
    memo = PressureMemo()
    checked = 0
    for path in sorted(folder.glob("*.co")):
        target = path.name.split(".")[0]
        if not available(family_of(target) or ""):
            continue
        code, ranges = kernel_ranges(path.read_bytes(), functions=True)
        for r in ranges:
            alone = kernel_pressure(code, r.start, r.size, target, r.entry, holders=True)
            shared = kernel_pressure(code, r.start, r.size, target, r.entry, holders=True, memo=memo)
            peaks = kernel_pressure(code, r.start, r.size, target, r.entry, memo=memo)
            assert shared == alone
            assert (peaks.status, peaks.vgprs, peaks.agprs, peaks.sgprs, peaks.undefined_reads,
                    peaks.first_undefined_read) == (alone.status, alone.vgprs, alone.agprs, alone.sgprs,
                                                    alone.undefined_reads, alone.first_undefined_read)
            checked += alone.instructions
    assert checked > 50_000


def test_what_defined_a_group_held_at_a_peak():
    from spillway.isa.liveness import FROM_ENTRY, SEVERAL_PATHS, Holder, origin
    from spillway.isa.operands import Registers

    def group(by, entry=False):
        return Holder((Registers(VGPR, 0, 4),), 4, tuple(range(len(by))), tuple(by), entry, ())

    assert origin(group(["v_mfma_f32_32x32x8f16"])) == "v_mfma_f32_32x32x8f16"
    assert origin(group([], entry=True)) == FROM_ENTRY
    # a loop-carried accumulator: its initial move and the loop's matrix op
    assert origin(group(["v_mov_b32_e32", "v_mfma_i32_16x16x16i8", "v_mfma_i32_16x16x16i8"])) == \
        "v_mfma_i32_16x16x16i8 or v_mov_b32_e32"
    assert origin(group(["v_add_u32_e32"], entry=True)) == f"v_add_u32_e32 or {FROM_ENTRY}"
    assert origin(group(["d", "c", "b", "a"])) == f"a or b or c or {SEVERAL_PATHS}"


def test_the_peaks_of_any_spans_are_the_most_counted_inside_them():
    """kernel_pressure's loops: for spans of every shape over a real kernel (one instruction, each loop, the
    whole code, a span ending at its last instruction), each file's peak is the most its steps count inside
    the span, both ends included, at the first such offset; the registers held at the VGPR peak add up to it,
    and a span whose VGPR peak is the kernel's peak instruction reuses the kernel's holders."""
    from pathlib import Path

    from spillway.isa.evidence import kernel_ranges
    from spillway.isa.listing import kernel_listing

    path = Path(__file__).resolve().parents[2] / "data" / "isa" / "co" / "gfx90a.clang22.co"
    code, ranges = kernel_ranges(path.read_bytes())
    checked = 0
    for r in ranges:
        steps = kernel_pressure(code, r.start, r.size, "gfx90a", r.entry, steps=True).steps
        listing = kernel_listing(code, r.start, r.size, "gfx90a", bool(r.private_segment_buffer))
        spans = [(loop.start, loop.end) for loop in listing.loops] + [(0, steps[-1].offset)]
        spans += [(step.offset, step.offset) for step in steps[::7]]
        spans += [(steps[len(steps) // 2].offset, steps[-1].offset), (steps[1].offset, steps[-2].offset)]
        found = kernel_pressure(code, r.start, r.size, "gfx90a", r.entry, holders=True, loops=spans)
        assert [(loop.start, loop.end) for loop in found.loops] == spans
        # what holds a span's VGPR peak: walked for the LOOP_HOLDERS spans with the most VGPRs, and for any
        # whose peak instruction one of those (or the kernel's) shares
        ranked = sorted(range(len(spans)), key=lambda n: (-found.loops[n].vgprs.registers, spans[n][0]))
        chosen = {n for n in ranked[:LOOP_HOLDERS] if found.loops[n].vgprs.registers}
        walked = {found.loops[n].vgprs.offset for n in chosen} | {found.vgprs.offset}
        for number, loop in enumerate(found.loops):
            inside = [step for step in steps if loop.start <= step.offset <= loop.end]
            for name, peak in (("vgprs", loop.vgprs), ("agprs", loop.agprs), ("sgprs", loop.sgprs)):
                most = max(getattr(step, name) for step in inside)
                first = next(step.offset for step in inside if getattr(step, name) == most) if most else None
                assert (peak.registers, peak.offset) == (most, first), (r.name, loop, name)
            if loop.vgprs.registers:
                assert (loop.held is not None) == (number in chosen or loop.vgprs.offset in walked), (r.name, loop)
            if loop.held is not None:
                assert loop.held.offset == loop.vgprs.offset
                assert sum(group.count for group in loop.held.groups) == loop.vgprs.registers
                if loop.vgprs.offset == found.vgprs.offset:
                    assert loop.held is found.holders[0]
            checked += 1
    assert checked > 100
    assert kernel_pressure(code, ranges[0].start, ranges[0].size, "gfx90a", ranges[0].entry).loops == ()
