"""Truth of issue 40 (item 4) on the matrix: every kernel of every cell's
libengine.so (the one-machine run: bookworm's and sid's clangs, Debian's ROCm
7.2.4 with its rocPRIM, AMD's LLVM of ROCm 7.2.2 and 10.0) whose family has
an operand table has its live-register peaks within the compiler's own
counts (llvm-readelf --notes: .vgpr_count, .agpr_count, .sgpr_count), and
the pressure of every instruction of every complete kernel equals the
oracle's from llvm-objdump's text (tests/support/liveness_oracle.py), and
so does each loop's own peak (issue 41).  The
code objects are cut out by LLVM's tools (llvm_pipeline), never by
spillway; partial kernels are counted and must say why."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest

from spillway.isa import decoder, operands
from spillway.isa.encodings import FAMILIES
from spillway.isa.evidence import kernel_ranges
from spillway.isa.liveness import LOOP_HOLDERS, innermost_loop, kernel_pressure
from support import isa_oracle, liveness_oracle, llvm_pipeline
from test_isa_matrix_cells import code_objects

pytestmark = pytest.mark.oracle


def check_code_object(path: Path, counted: Counter) -> list[str]:
    """The truth for one code object: its problems (empty: none)."""
    (view,) = llvm_pipeline.readelf([path])
    records = {r["symbol"]: r for r in llvm_pipeline.kernel_records(view, str(path), None)}
    target = view.target()
    family = decoder.family_of(target)
    if not family or not operands.available(family):
        counted[f"no operand table ({target})"] += 1
        return []
    # The newest LLVM here: clang 23 and later write GFX11 code with true16 halves, which LLVM 22 prints
    # without them (v0.h as v0, op_sel dropped).
    objdump = isa_oracle.llvm_tool("llvm-objdump", 24) or isa_oracle.llvm_tool("llvm-objdump", FAMILIES[family][2])
    assert objdump is not None
    ok, text = isa_oracle.run_objdump(objdump, path)
    assert ok, text[:300]
    rodata = subprocess.run([*objdump, "-D", "-j", ".rodata", str(path)], capture_output=True, text=True).stdout
    dump = subprocess.run([*objdump, "-s", "-j", ".rodata", str(path)], capture_output=True, text=True).stdout
    architected = target.startswith(("gfx11", "gfx12", "gfx13", "gfx94", "gfx95"))
    functions, entries = liveness_oracle.functions(text), liveness_oracle.entry_registers(rodata, dump, architected)
    code, ranges = kernel_ranges(path.read_bytes())
    problems = []
    for kernel in ranges:
        spans = liveness_oracle.loop_spans(functions.get(kernel.name, []))     # each loop's own peaks too
        found = kernel_pressure(code, kernel.start, kernel.size, target, kernel.entry, steps=True, holders=True,
                                loops=spans)
        record = records.get(kernel.name)
        assert record is not None, (path, kernel.name)
        problems += [f"{path.name} {kernel.name}: {why}" for why in liveness_oracle.peaks_within_counts(found, record)]
        if not found.complete:
            assert found.status.startswith("partial: "), (kernel.name, found.status)
            counted["partial"] += 1
            continue
        peaks = {"v": found.vgprs.registers, "a": found.agprs.registers, "s": found.sgprs.registers}
        problems += [f"{path.name} {kernel.name}: the groups at the {held.file} peak do not add up"
                     for held in found.holders if sum(g.count for g in held.groups) != peaks[held.file]]
        problems += liveness_oracle.disagreements(functions[kernel.name], entries.get(kernel.name), found,
                                                  f"{path.parent.name}/{path.name} {target} {kernel.name}")
        problems += loop_disagreements(found, functions[kernel.name], entries.get(kernel.name),
                                       f"{path.parent.name}/{path.name} {target} {kernel.name}")
        counted["complete"] += 1
        counted["at .vgpr_count"] += found.vgprs.registers + (
            record["agpr_count"] or 0 if target.split(":")[0] in liveness_oracle.UNIFIED else 0) \
            == record["vgpr_count"]
    return problems


def loop_disagreements(found, steps: list, entry, name: str) -> list[str]:
    """Issue 41's loops: each loop's own peaks (isa.liveness.LoopPeak, for the
    spans objdump's backward branches give) against the oracle's most inside
    the span, the registers held at its VGPR peak adding up to it, and the
    loop holding the kernel's VGPR peak the innermost span holding it."""
    spans = liveness_oracle.loop_spans(steps)
    problems = []
    for loop, want in zip(found.loops, liveness_oracle.loop_peaks(steps, entry, spans)):
        got = {"v": (loop.vgprs.registers, loop.vgprs.offset), "a": (loop.agprs.registers, loop.agprs.offset),
               "s": (loop.sgprs.registers, loop.sgprs.offset)}
        if got != want:
            problems.append(f"{name} loop +0x{loop.start:x}: spillway {got}, objdump {want}")
        if loop.held is None and loop.vgprs.registers and len(spans) <= LOOP_HOLDERS:
            problems.append(f"{name} loop +0x{loop.start:x}: what holds its VGPR peak was not worked out")
        if loop.held is not None and sum(g.count for g in loop.held.groups) != loop.vgprs.registers:
            problems.append(f"{name} loop +0x{loop.start:x}: the groups at its VGPR peak do not add up")
    if found.vgprs.offset is not None and innermost_loop(spans, found.vgprs.offset) != \
            liveness_oracle.innermost_span(spans, found.vgprs.offset):
        problems.append(f"{name}: the loop holding the VGPR peak is not the innermost span")
    return problems


def test_every_cells_kernels_peaks_within_counts_and_equal_the_oracle(one_machine_run, tmp_path):
    cells = sorted(p.parent for p in Path(one_machine_run.outputs).glob("*/libengine.so"))
    assert len(cells) >= 6, cells
    counted: Counter = Counter()
    problems: list[str] = []
    for cell in cells:
        work = tmp_path / cell.name
        work.mkdir()
        for path in code_objects(cell / "libengine.so", work, cell.name):
            problems += check_code_object(path, counted)
    print(f"live registers over {len(cells)} cells: {dict(counted)}")
    assert counted["complete"] >= 100, counted
    assert not problems, f"{len(problems)} problems:\n  " + "\n  ".join(problems[:30])
