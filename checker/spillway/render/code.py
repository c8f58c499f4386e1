"""``spillway code``'s text: each viewed kernel (report.code_view's
ViewedKernel: a report record and its isa.listing KernelListing) as lines
for people -- its evidence figures, its loops and each instruction behind
them.  Offsets are bytes from the kernel's start, as objdump's
``<kernel+0x..>``.  Names, target and file come from the binary: each is
shown as one log line (spillway.untrusted)."""

from __future__ import annotations

from typing import Final

from spillway.formats.codeobject import function_symbol
from spillway.isa.source_lines import KernelLines
from spillway.render.code_lines import source_lines_text, where
from spillway.render.models import CodeModel, View
from spillway.isa.liveness import LOOP_HOLDERS, NOT_READ, LoopPeak, PeakHolders, origin, origin_sums
from spillway.report.code_view import ViewedKernel, loop_peaks, peak_loop
from spillway.untrusted import visible

# Loops are indented by depth up to this many steps (overlapping spans can hold a loop 20 deep).
INDENTED_DEPTH: Final = 4
# The most loops whose own peak gets a line under the loop's (those with the most VGPRs, the loop holding the
# kernel's VGPR peak always among them): the loops whose holders isa.liveness walks; the rest are counted in
# one line ("--json" has every loop's peaks).
LOOP_PEAKS_SHOWN: Final = LOOP_HOLDERS


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def kernel_text(viewed: ViewedKernel) -> list[str]:
    record, listing, code = viewed.record, viewed.listing, viewed.listing.code
    bundle = "" if record.get("bundle_index") is None else f", bundle {record['bundle_index']}"
    # Names, target and file come from the binary: each shown as one log line (spillway.untrusted).
    lines = [f"kernel {visible(record['name'])}", f"  target {visible(record['target'])}, "
             f"{visible(record['file'])}{bundle}", f"  symbol {visible(function_symbol(record['symbol']))}",
             f"  code: {_plural(code.instructions, 'instruction')}, {code.code_bytes} bytes, "
             + (f"sha256 {code.code_sha256}, {code.status}" if code.code_sha256 else f"not read: {code.status}")]
    accesses = code.scratch_loads + code.scratch_stores
    lines.append(f"  scratch: {_plural(code.scratch_loads, 'load')} {code.scratch_load_bytes} B, "
                 f"{_plural(code.scratch_stores, 'store')} {code.scratch_store_bytes} B per lane; "
                 f"{code.scratch_in_loops} of {accesses} in loops")
    lines.append(f"  scratch by address: slot {code.scratch_slot_load_bytes} B loaded + {code.scratch_slot_store_bytes}"
                 f" B stored, addressed (a VGPR address: private arrays) {code.scratch_addressed_load_bytes} B "
                 f"loaded + {code.scratch_addressed_store_bytes} B stored per lane; "
                 f"{code.scratch_in_innermost_loops} in innermost loops")
    if code.scratch_without_width:
        lines.append("  scratch naming no width: " + ", ".join(f"{m} x{n}" for m, n in code.scratch_without_width))
    lines.append(f"  AGPR copies: {code.agpr_writes} writes, {code.agpr_reads} reads; "
                 f"matrix ops {code.matrix_ops}; calls {code.calls} (callees' code not included); "
                 f"flat {code.flat_ops}; LDS {code.lds_ops}")
    if code.agpr_writes + code.agpr_reads:
        lines.append(f"  AGPR copies by AGPR: {code.agpr_spill_copies} spill copies, "
                     f"{code.agpr_accumulator_moves} accumulator moves (matrix ops' accumulators)")
    lines.extend(loops_text(viewed))
    if listing.instructions:
        width = max(len(f"+{i.offset:#x}") for i in listing.instructions)
        lines.append(f"  instructions ({len(listing.instructions)}: scratch accesses, AGPR copies, matrix ops, "
                     f"calls):")
        lines.append(f"    {'offset':<{width}}  {'loop':>4}  {'kind':<13}  {'B/lane':>6}  {'role':<16}  mnemonic")
        for i in listing.instructions:
            depth = str(i.loop_depth) if i.loop_depth else "-"
            size = "" if i.bytes is None else str(i.bytes)
            if i.kind.startswith("scratch") and i.bytes is None:
                size = "?"
            kind = i.kind.replace("_", " ")
            lines.append(f"    {f'+{i.offset:#x}':<{width}}  {depth:>4}  {kind:<13}  {size:>6}  {i.role or '-':<16}  "
                         f"{i.mnemonic}")
    else:
        lines.append("  instructions: no scratch access, AGPR copy, matrix op or call")
    lines.extend(pressure_text(viewed))
    lines.extend(all_instructions_text(viewed))
    described = {i.offset: f"{i.kind.replace('_', ' ')} {'' if i.bytes is None else f'{i.bytes} B'}".rstrip()
                 for i in listing.instructions}
    lines.extend(source_lines_text(viewed.lines, described))
    return lines


def loops_text(viewed: ViewedKernel) -> list[str]:
    """The kernel's loops, nested by depth, each with its own peak under it (LOOP_PEAKS_SHOWN at most)."""
    listing = viewed.listing
    if not listing.loops:
        return ["  loops: none"]
    out = [f"  loops ({len(listing.loops)}; offsets from the kernel's start, objdump's <kernel+0x..>):"]
    peaks = loop_peaks(viewed)
    shown = _shown_loop_peaks(viewed, list(peaks.values()))
    for loop in listing.loops:
        notes = [f"depth {loop.depth}"] + (["innermost"] if loop.innermost else []) + \
                ([f"{loop.branches} branches back"] if loop.branches > 1 else [])
        inside = sum(1 for i in listing.instructions if i.kind.startswith("scratch")
                     and loop.start <= i.offset <= loop.end)
        notes.append(f"{inside} scratch access" + ("" if inside == 1 else "es"))
        indent = "  " * min(loop.depth - 1, INDENTED_DEPTH)
        out.append(f"    {indent}+{loop.start:#x} .. +{loop.end:#x}  {', '.join(notes)}")
        peak = peaks.get((loop.start, loop.end))
        if peak is not None and (loop.start, loop.end) in shown:
            out.append(f"    {indent}  {_loop_peak_text(peak, viewed.lines)}")
    hidden = len(peaks) - len(shown)
    if hidden:
        out.append(f"    ... the peaks of {_plural(hidden, 'more loop')} (fewer VGPRs) in --json")
    return out


def _shown_loop_peaks(viewed: ViewedKernel, peaks: list[LoopPeak]) -> set[tuple[int, int]]:
    """The loops whose peak gets a line: LOOP_PEAKS_SHOWN with the most VGPRs (the earlier head first among
    equals), the loop holding the kernel's VGPR peak always."""
    ranked = sorted(peaks, key=lambda peak: (-peak.vgprs.registers, peak.start))
    shown = {(peak.start, peak.end) for peak in ranked[:LOOP_PEAKS_SHOWN]}
    around = peak_loop(viewed)
    if around is not None and any((peak.start, peak.end) == around for peak in peaks):
        shown.add(around)
    return shown


def _loop_peak_text(peak: LoopPeak, lines: KernelLines | None) -> str:
    """``peak 60 VGPRs at +0x54c kernels.cpp:90:52: 24 v_pk_fma_f32 at kernels.cpp:90:52, ...; 19 SGPRs at
    +0x3b8``: a loop's VGPR peak and what holds it, summed by what defined it (isa.liveness.origin_sums, with
    the defining line where one instruction defined a sum), then its AGPR and SGPR peaks."""
    if peak.vgprs.offset is None:
        text = "peak 0 VGPRs"
    else:
        text = f"peak {_plural(peak.vgprs.registers, 'VGPR')} at {_at(peak.vgprs.offset, lines)}"
    if peak.held is not None:
        comp = lines.comp_dir if lines is not None else ""
        sums = origin_sums(peak.held, lines.line_at if lines is not None else (lambda _offset: None))
        named = [f"{count} {name}" + ("" if line is None else f" at {where(line, comp)}") for count, name, line in sums]
        rest = peak.vgprs.registers - sum(count for count, _name, _line in sums)
        text += ": " + ", ".join(named) + (f", {rest} more" if rest else "")
    for name, other in (("AGPR", peak.agprs), ("SGPR", peak.sgprs)):
        if other.offset is not None:
            text += f"; {_plural(other.registers, name)} at +{other.offset:#x}"
    return text


def _peak_place_text(viewed: ViewedKernel) -> list[str]:
    """Where the kernel's VGPR peak is: inside the innermost loop holding it (named by its head's and back
    branch's lines where known, else by offsets), or outside any loop."""
    pressure = viewed.pressure
    if pressure is None or pressure.vgprs.offset is None:
        return []
    around = peak_loop(viewed)
    said = f"    the VGPR peak (+{pressure.vgprs.offset:#x}) is "
    if around is None:
        return [said + "outside any loop"]
    start, end = around
    lines = viewed.lines
    placed = next((p for p in lines.loops if p.loop.start == start), None) if lines is not None else None
    if placed is None:
        return [said + f"inside the loop +{start:#x} .. +{end:#x}"]
    comp = lines.comp_dir if lines is not None else ""
    head = f"+{start:#x}" if placed.head is None else where(placed.head, comp)
    back = f"+{end:#x}" if placed.back_branch is None else where(placed.back_branch, comp)
    return [said + f"inside the loop at {head} (+{start:#x} .. +{end:#x}, back branch {back})"]


def pressure_text(viewed: ViewedKernel) -> list[str]:
    """The kernel's live registers (isa.liveness): peaks, where first reached, status."""
    pressure = viewed.pressure
    if pressure is None:
        return []
    if pressure.status.startswith(NOT_READ):
        return [f"  live registers: {pressure.status}"]
    peaks = ", ".join(f"{peak.registers} {name}" + ("" if peak.offset is None else f" (first at +{peak.offset:#x})")
                      for name, peak in (("VGPRs", pressure.vgprs), ("AGPRs", pressure.agprs),
                                         ("SGPRs", pressure.sgprs)))
    out = [f"  live registers at the peak: {peaks}; {pressure.status}", *_peak_place_text(viewed)]
    for held in pressure.holders:
        out.extend(_holders_text(held, viewed.lines))
    out.extend(_sparkline(viewed))
    if pressure.undefined_reads:
        out.append(f"  undefined reads: {_plural(pressure.undefined_reads, 'instruction')} reading a register no path "
                   f"from the entry has written (first at +{pressure.first_undefined_read:#x}); not counted live "
                   f"before it is written")
    return out


_FILE_NAMES = {"v": "VGPRs", "a": "AGPRs", "s": "SGPRs"}
SHOWN_GROUPS: Final = 6
SPARK: Final = " ▁▂▃▄▅▆▇█"


def _at(offset: int, lines: KernelLines | None) -> str:
    """``+0x618``, with its source line where spillway code placed one (``+0x618 gemm.hip:88:5``)."""
    source = lines.line_at(offset) if lines is not None else None
    return f"+{offset:#x}" + ("" if source is None else f" {where(source, lines.comp_dir if lines else '')}")


def _holders_text(held: PeakHolders, lines: KernelLines | None) -> list[str]:
    """What holds one file's peak: by the defining mnemonic, then the largest groups (with the source lines
    of their definitions and last uses where the code object has a line table)."""
    total = sum(group.count for group in held.groups)
    by_mnemonic: dict[str, int] = {}
    for group in held.groups:
        name = origin(group)
        by_mnemonic[name] = by_mnemonic.get(name, 0) + group.count
    kinds = ", ".join(f"{count} {name}" for name, count in sorted(by_mnemonic.items(), key=lambda kv: -kv[1]))
    out = [f"    at the {_FILE_NAMES[held.file][:-1]} peak ({_at(held.offset, lines)}, {total}): {kinds}"]
    for group in held.groups[:SHOWN_GROUPS]:
        sites = [f"{mnemonic} at {_at(offset, lines)}" for mnemonic, offset in zip(group.defined_by, group.defined_at)]
        if group.from_entry:
            sites.append("the entry")
        ends = ", ".join(_at(offset, lines) for offset in group.last_used_at[:3]) + \
            (", ..." if len(group.last_used_at) > 3 else "")
        out.append(f"      {group.count:>4} {', '.join(str(r) for r in group.registers)} from "
                   f"{'; '.join(sites[:3])}{'; ...' if len(sites) > 3 else ''}"
                   + (f"; last needed at {ends}" if ends else ""))
    if len(held.groups) > SHOWN_GROUPS:
        rest = held.groups[SHOWN_GROUPS:]
        out.append(f"      {sum(g.count for g in rest):>4} more in {_plural(len(rest), 'group')} "
                   f"(--json lists every group)")
    return out


def _sparkline(viewed: ViewedKernel) -> list[str]:
    """VGPR pressure along the code: the most live in each stretch (isa.liveness' vgpr_curve), in eighths of
    the peak, with loops and scratch accesses marked below."""
    pressure = viewed.pressure
    if pressure is None or not pressure.vgpr_curve or not pressure.vgprs.registers:
        return []
    size, width, top = pressure.code_size, len(pressure.vgpr_curve), pressure.vgprs.registers
    line = "".join(SPARK[(high * (len(SPARK) - 1) + top - 1) // top] for high in pressure.vgpr_curve)
    marks = [" "] * width
    for loop in viewed.listing.loops:
        for cell in range(loop.start * width // size, min(width - 1, loop.end * width // size) + 1):
            marks[cell] = "~"
    for listed in viewed.listing.instructions:
        if listed.kind.startswith("scratch"):
            marks[min(width - 1, listed.offset * width // size)] = "S"
    label = f"VGPRs along the code (+0x0 .. +{size:#x}, highest {top}): "
    return [f"    {label}{line}", f"    {' ' * len(label)}{''.join(marks)}  (~ loop, S scratch access)"]


def all_instructions_text(viewed: ViewedKernel) -> list[str]:
    """With --all-instructions: every instruction, its operands and the registers live at it."""
    if not viewed.all_instructions or viewed.pressure is None or not viewed.pressure.steps:
        return []
    steps = viewed.pressure.steps
    width = max(len(f"+{step.offset:#x}") for step in steps)
    out = [f"  all instructions ({len(steps)}; live VGPRs, AGPRs, SGPRs at each; '!' reads a register no path "
           f"has written):",
           f"    {'offset':<{width}}  {'vgpr':>4}  {'agpr':>4}  {'sgpr':>4}  mnemonic  defs <- uses"]
    for step in steps:
        if step.operands is None:
            operands = "(operands not read)"
        else:
            operands = (", ".join(str(r) for r in step.operands.defs) or "-") + " <- " + \
                (", ".join(str(r) for r in step.operands.uses) or "-")
        mark = "!" if step.undefined_read else " "
        out.append(f"    {f'+{step.offset:#x}':<{width}}  {step.vgprs:>4}  {step.agprs:>4}  {step.sgprs:>4} "
                   f"{mark}{step.mnemonic}  {operands}")
    return out


def code_text(kernels: list[ViewedKernel]) -> str:
    blocks = ["\n".join(kernel_text(k)) for k in kernels]
    return "\n\n".join(blocks) + "\n"


def document(model: CodeModel, view: View) -> str:
    """``spillway code``'s text (render.emit: --format text)."""
    return code_text(list(model.kernels))
