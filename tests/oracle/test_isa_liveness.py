"""Live registers (checker/spillway/isa/liveness.py, issue 40 items 2 and 4)
against an independent reading of llvm-objdump, instruction by instruction,
on every function of every committed fixture whose family has an operand
table, and the peaks against the compiler's own counts.

The oracle (tests/support/liveness_oracle.py) takes the operands from the
printed text (operand_oracle), the branch targets from objdump's
``<fn+0x..>``, the entry registers from the ``.amdhsa_*`` directives objdump
prints for each descriptor, and does its own dataflow on sets.  Every
instruction of every kernel spillway calls complete must have the same
VGPR, AGPR and SGPR pressure and the same undefined-read verdict; partial
kernels are counted and must say why.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from spillway.isa.evidence import kernel_ranges
from spillway.isa.liveness import LOOP_HOLDERS, KernelPressure, kernel_pressure
from support import isa_oracle, liveness_oracle, operand_oracle

COMMITTED = operand_oracle.fixtures()
FIXTURES = operand_oracle.covered(COMMITTED)


@lru_cache(maxsize=None)
def _spillway(name: str) -> dict[str, KernelPressure]:
    path, recorded = COMMITTED[name]
    code, ranges = kernel_ranges(path.read_bytes(), functions=True)
    return {r.name: kernel_pressure(code, r.start, r.size, recorded["target"], r.entry, steps=True, holders=True,
                                    wavefront_size=r.wavefront_size)
            for r in ranges}


def _objdump(name: str) -> tuple[dict, dict]:
    path, recorded = COMMITTED[name]
    argv = operand_oracle.table_objdump(recorded["target"]) + operand_oracle.wave_args(path)
    ok, text = isa_oracle.run_objdump(argv, path)
    assert ok, text[:300]
    rodata = subprocess.run([*argv, "-D", "-j", ".rodata", str(path)], capture_output=True, text=True).stdout
    dump = subprocess.run([*argv, "-s", "-j", ".rodata", str(path)], capture_output=True, text=True).stdout
    return liveness_oracle.functions(text), liveness_oracle.entry_registers(rodata, dump)


@pytest.mark.parametrize("name", FIXTURES)
def test_pressure_equals_objdump_oracle(name):
    functions, entries = _objdump(name)
    compared = Counter()
    wrong = []
    for symbol, found in _spillway(name).items():
        steps = functions.get(symbol)
        if not steps or not found.complete:
            compared["partial" if steps else "not in objdump"] += 1
            continue
        wrong += liveness_oracle.disagreements(steps, entries.get(symbol), found, symbol)
        compared["kernel" if symbol in entries else "callee"] += 1
    assert compared["kernel"] > 0, compared
    assert not wrong, f"{name}: {len(wrong)} instructions disagree:\n  " + "\n  ".join(wrong[:20])


FORMS = [name for name in FIXTURES if name.startswith("forms/")]


@pytest.mark.parametrize("name", FORMS)
def test_kernels_using_forms_with_extra_dwords_are_complete(name):
    """The forms/ kernels (VOP3/VOP3P DPP, SDWA compares writing an SGPR,
    MIMG NSA address lists: "partial: operands not read" until those dwords
    were read) are complete, so test_pressure_equals_objdump_oracle holds
    each of their instructions to the oracle's."""
    found = _spillway(name)
    assert found
    assert all(k.complete for k in found.values()), {symbol: k.status for symbol, k in found.items()}


@pytest.mark.parametrize("name", FIXTURES)
def test_partial_kernels_say_why(name):
    for symbol, found in _spillway(name).items():
        assert found.status == "complete" or found.status.startswith("partial: "), (symbol, found.status)
        if not found.complete:
            assert " at +0x" in found.status, (symbol, found.status)


def _metadata(path: Path) -> dict[str, dict]:
    done = subprocess.run([sys.executable, "-m", "spillway", "report", "--all", "--json", str(path)],
                          capture_output=True, text=True, check=True)
    return {k["symbol"].removesuffix(".kd"): k for k in json.loads(done.stdout)["kernels"]}


@pytest.mark.parametrize("name", FIXTURES)
def test_peaks_within_the_compilers_counts(name):
    path, _recorded = COMMITTED[name]
    records = _metadata(path)
    over = []
    checked = 0
    for symbol, found in _spillway(name).items():
        record = records.get(symbol)
        if record is None:           # a callee: no metadata of its own
            continue
        checked += 1
        over += [f"{symbol}: {why}" for why in liveness_oracle.peaks_within_counts(found, record)]
    assert checked > 0
    assert not over, over


@pytest.mark.parametrize("name", FIXTURES)
def test_what_holds_each_peak_adds_up_and_is_defined_there_in_objdump(name):
    """Issue 41's truth: the groups at a peak add up to the peak, and each
    group's defining instructions define those registers in objdump's text."""
    functions, _entries = _objdump(name)
    checked = 0
    wrong = []
    for symbol, found in _spillway(name).items():
        steps = functions.get(symbol)
        if not steps:
            continue
        by_offset = {step.address - steps[0].address: step for step in steps}
        peaks = {"v": found.vgprs, "a": found.agprs, "s": found.sgprs}
        for held in found.holders:
            assert held.offset == peaks[held.file].offset, (symbol, held.file)
            assert sum(group.count for group in held.groups) == peaks[held.file].registers, (symbol, held.file)
            for group in held.groups:
                registers = {(r.file, n) for r in group.registers for n in r.units()}
                assert len(registers) == group.count
                assert group.defined_at or group.from_entry, (symbol, group)
                for offset in group.defined_at:
                    if not registers <= by_offset[offset].defs:
                        wrong.append(f"{symbol}+0x{offset:x} {by_offset[offset].mnemonic}: defines "
                                     f"{sorted(by_offset[offset].defs)}, not all of {sorted(registers)}")
                checked += 1
    assert checked > 0
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("name", FIXTURES)
def test_each_loops_peak_equals_the_oracles_inside_its_span(name):
    """Issue 41 item 1's loops: for the loops objdump's branch targets give
    (each backward branch grouped by its target), spillway's listing has the
    same spans, each loop's own VGPR, AGPR and SGPR peaks (isa.liveness
    LoopPeak) are the oracle's most inside the span at the same first offset,
    the registers held at its VGPR peak add up to it, and the loop holding
    the kernel's VGPR peak is the innermost span holding it."""
    from spillway.isa.listing import kernel_listing
    from spillway.isa.liveness import innermost_loop

    path, recorded = COMMITTED[name]
    functions, entries = _objdump(name)
    code, ranges = kernel_ranges(path.read_bytes(), functions=True)
    looped = 0
    wrong = []
    for r in ranges:
        steps = functions.get(r.name)
        whole = _spillway(name)[r.name]
        if not steps or not whole.complete:
            continue
        spans = liveness_oracle.loop_spans(steps)
        listed = kernel_listing(code, r.start, r.size, recorded["target"], bool(r.private_segment_buffer))
        assert [(loop.start, loop.end) for loop in listed.loops] == spans, r.name
        if not spans:
            continue
        found = kernel_pressure(code, r.start, r.size, recorded["target"], r.entry, holders=True, loops=spans,
                                wavefront_size=r.wavefront_size)
        for loop, want in zip(found.loops, liveness_oracle.loop_peaks(steps, entries.get(r.name), spans)):
            got = {file: (peak.registers, peak.offset) for file, peak in (("v", loop.vgprs), ("a", loop.agprs),
                                                                          ("s", loop.sgprs))}
            if got != want:
                wrong.append(f"{r.name} loop +0x{loop.start:x}..+0x{loop.end:x}: spillway {got}, objdump {want}")
            # (what holds a loop's peak is worked out for the LOOP_HOLDERS loops with the most VGPRs)
            if loop.held is not None:
                assert sum(group.count for group in loop.held.groups) == loop.vgprs.registers, (r.name, loop.start)
                assert loop.held.offset == loop.vgprs.offset, (r.name, loop.start)
            else:
                assert loop.vgprs.registers == 0 or len(spans) > LOOP_HOLDERS, (r.name, loop.start)
            looped += 1
        if whole.vgprs.offset is not None:
            assert innermost_loop(spans, whole.vgprs.offset) == liveness_oracle.innermost_span(
                spans, whole.vgprs.offset), r.name
    assert not wrong, f"{name}: {len(wrong)} loops disagree:\n  " + "\n  ".join(wrong[:20])
    if name.startswith(("gfx90a", "lines/gfx90a", "gfx1100", "gfx906", "lines/gfx906")):
        assert looped > 0
