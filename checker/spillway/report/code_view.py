"""``spillway code``'s document: named kernels' loops and the instructions
behind their evidence (isa.listing), as JSON (spillway.code/3) or text.

The model is a list of ViewedKernel (a report record's place and names,
its KernelListing and its source lines, isa.source_lines.KernelLines);
``code_document`` is its JSON, render.code its text.  Offsets are bytes from
the kernel's start, as objdump's ``<kernel+0x..>``.  Version 2 added the
instruction mix to ``isa`` and the source lines: each scratch access's and
AGPR copy's ``source``, each loop's ``head`` and ``back_branch``, and the
kernel's ``source_lines`` (where the lines came from, the per-line summary).
Version 3 added each kernel's live registers (isa.liveness): ``pressure``
(status, the VGPR, AGPR and SGPR peaks with the first offset each is
reached, undefined reads, what holds each peak) and, with ``--all-instructions``,
``all_instructions`` (every instruction's operands and the registers live
at it).  Version 4 added each loop's own ``peak`` (its VGPR, AGPR and SGPR
peaks inside its span, the VGPR peak's source line and what holds it,
summed by what defined it: isa.liveness.LoopPeak) and the innermost loop
holding the kernel's VGPR peak, ``pressure.loop``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from spillway import __version__
from spillway.isa.listing import KernelListing
from spillway.isa.liveness import FilePeak, KernelPressure, LoopPeak, PressureStep, innermost_loop, origin_sums
from spillway.isa.source_lines import KernelLines, line_object, source_object, without_lines
from spillway.report.code_evidence import holders_object, isa_object, pressure_peaks

CODE_SCHEMA: Final = "spillway.code/4"
# The record's members a viewed kernel keeps (where it is, what it is).
PLACE_FIELDS: Final = ("file", "bundle_index", "target", "name", "symbol")


@dataclass(frozen=True)
class ViewedKernel:
    record: dict              # the kernel's report record (PLACE_FIELDS are used)
    listing: KernelListing
    lines: KernelLines | None = None     # None: not asked for (read as "no line table")
    pressure: KernelPressure | None = None   # the live registers (isa.liveness); None: not worked out
    all_instructions: bool = False           # show every instruction (pressure.steps), not only the curve


def lines_of(viewed: ViewedKernel) -> KernelLines:
    return viewed.lines if viewed.lines is not None else without_lines(viewed.listing.code.code_sha256)


def kernel_object(viewed: ViewedKernel) -> dict:
    listing = viewed.listing
    lines = lines_of(viewed)
    found = {name: viewed.record.get(name) for name in PLACE_FIELDS}
    found["isa"] = isa_object(listing.code)
    heads = {placed.loop.start: placed for placed in lines.loops}
    peaks = loop_peaks(viewed)
    found["loops"] = [{"start": loop.start, "end": loop.end, "branches": loop.branches, "depth": loop.depth,
                       "innermost": loop.innermost,
                       "head": source_object(heads[loop.start].head) if loop.start in heads else None,
                       "back_branch": source_object(heads[loop.start].back_branch) if loop.start in heads else None,
                       "peak": loop_peak_object(peaks.get((loop.start, loop.end)), lines)}
                      for loop in listing.loops]
    placed = {p.instruction.offset: p.source for p in (*lines.scratch, *lines.agpr_copies)}
    found["instructions"] = [{"offset": i.offset, "length": i.length, "mnemonic": i.mnemonic, "kind": i.kind,
                              "bytes": i.bytes, "loop_depth": i.loop_depth, "role": i.role or None,
                              "source": source_object(placed.get(i.offset))}
                             for i in listing.instructions]
    found["pressure"] = pressure_object(viewed.pressure, lines)
    if found["pressure"] is not None:
        around = peak_loop(viewed)
        found["pressure"]["loop"] = None if around is None else {"start": around[0], "end": around[1]}
    if viewed.all_instructions and viewed.pressure is not None:
        found["all_instructions"] = [step_object(step) for step in viewed.pressure.steps]
    found["source_lines"] = {"status": lines.status, "lines_from": lines.lines_from or None,
                             "comp_dir": lines.comp_dir, "code_sha256": lines.code_sha256,
                             "lines_code_sha256": lines.lines_code_sha256 or None,
                             "by_line": [line_object(row) for row in lines.by_line]}
    return found


def pressure_object(pressure: KernelPressure | None, lines: KernelLines) -> dict | None:
    """A kernel's live registers as JSON (None: not worked out)."""
    if pressure is None:
        return None
    return {**pressure_peaks(pressure),
            "at_peaks": [holders_object(held, lines.line_at) for held in pressure.holders],
            "vgpr_curve": list(pressure.vgpr_curve), "code_bytes": pressure.code_size}


def loop_peaks(viewed: ViewedKernel) -> dict[tuple[int, int], LoopPeak]:
    """Each loop's own peaks (isa.liveness.LoopPeak) by its (start, end); none where the registers were not
    read."""
    pressure = viewed.pressure
    return {} if pressure is None else {(peak.start, peak.end): peak for peak in pressure.loops}


def peak_loop(viewed: ViewedKernel) -> tuple[int, int] | None:
    """The innermost loop holding the kernel's VGPR peak, (start, end); None: outside every loop, or no peak."""
    pressure = viewed.pressure
    if pressure is None or pressure.vgprs.offset is None:
        return None
    return innermost_loop([(loop.start, loop.end) for loop in viewed.listing.loops], pressure.vgprs.offset)


def _file_peak(peak: FilePeak) -> dict:
    return {"peak": peak.registers, "offset": peak.offset}


def loop_peak_object(peak: LoopPeak | None, lines: KernelLines) -> dict | None:
    """One loop's own peaks as JSON, what holds its VGPR peak summed by what defined it (every sum: they add
    up to the peak), with their lines (None: the registers were not read); ``held_by`` null where that was
    not walked (isa.liveness.LOOP_HOLDERS)."""
    if peak is None:
        return None
    held = [] if peak.held is None else origin_sums(peak.held, lines.line_at, most=None)
    walked = peak.held is not None or peak.vgprs.offset is None
    return {"vgprs": _file_peak(peak.vgprs), "agprs": _file_peak(peak.agprs), "sgprs": _file_peak(peak.sgprs),
            "source": None if peak.vgprs.offset is None else source_object(lines.line_at(peak.vgprs.offset)),
            "held_by": [{"count": count, "defined_by": name, "source": source_object(line)}
                        for count, name, line in held] if walked else None}


def step_object(step: PressureStep) -> dict:
    operands = step.operands
    return {"offset": step.offset, "length": step.length, "mnemonic": step.mnemonic,
            "defs": None if operands is None else [str(r) for r in operands.defs],
            "uses": None if operands is None else [str(r) for r in operands.uses],
            "vgprs": step.vgprs, "agprs": step.agprs, "sgprs": step.sgprs, "undefined_read": step.undefined_read}


def code_document(kernels: list[ViewedKernel]) -> dict:
    return {"schema": CODE_SCHEMA, "spillway_version": __version__, "kernels": [kernel_object(k) for k in kernels]}
