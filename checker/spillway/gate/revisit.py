"""A failing check's one look again at its binaries (issue 37: a failing
``check --format json|sarif`` read them four times, two engines finding the
same kernels again): the read that checked them kept where each kernel is
(gate.reading, ``places``), so only the code objects holding a failing kernel
are read again, once, each decoded once for both what the outputs show of its
failing kernels: their machine code (gate.failure_code) and the source line
each failure points at (gate.source_location).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from spillway.gate.failure_code import FailureCode, PeakNote, failures_code
from spillway.gate.kernels import Kernel, KernelUsage
from spillway.gate.source_location import SourceLocation, failure_locations, locate
from spillway.isa.evidence import KernelCode
from spillway.report.reader import ReadOptions


@dataclass
class FailureDetails:
    code: Optional[dict[Kernel, FailureCode]] = None             # None: not asked for, or no binary to read
    sources: dict[Kernel, SourceLocation] = field(default_factory=dict)


def failure_details(binaries: list[str], options: ReadOptions, usage: Mapping[Kernel, KernelUsage],
                    places: Mapping[Kernel, list[tuple]], code_for: Iterable[Kernel], lines_for: Iterable[Kernel],
                    root: str, twin: Optional[list[str]] = None, pressure: bool = False) -> FailureDetails:
    """The machine code of the kernels ``code_for`` (every instance, folded at
    its worst) and the source location of those of ``lines_for`` (the first
    instance that gives one; from the debug twin ``twin`` when given, which is
    read as gate.source_location reads it), from the binaries ``binaries``
    read again at ``places`` only (Inputs.places of the read that found them).
    ``pressure`` (check --pressure): the code's VGPR peak too, with its line
    where the code object has a line table (gate.failure_code.PeakNote)."""
    from spillway.isa.liveness import each_kernel_pressure
    from spillway.isa.operands import VGPR
    from spillway.report.code_kernels import object_figures, object_listings
    from spillway.report.kernel_code import each_code_object

    code_for, lines_for = set(code_for), set(lines_for)
    own_lines = (bool(lines_for) or pressure) and not twin
    records: list[dict] = []
    for ident in sorted(code_for | (lines_for if own_lines else set())):
        for (file, bundle_index, image_offset, archive), symbol in places.get(ident, ()):
            records.append({"file": file, "bundle_index": bundle_index, "image_offset": image_offset,
                            "archive": archive, "target": ident[0], "key": ident[1], "symbol": symbol,
                            "name": usage[ident].name})

    located: dict[tuple[str, str], bool] = {}

    def work(_records, section, found, target: str, payload) -> list[Optional[tuple]]:
        # (figures, lines or None, VGPR peak or None) of each kernel
        # (the VGPR peak and what holds it, no curve)
        peaks = each_kernel_pressure(section, found, target, holders=(VGPR,), with_curve=False) if pressure \
            else [None] * len(found)
        if own_lines and not pressure and not may_locate(payload, root, located):
            return [None if figures is None else (figures, None, None)
                    for figures in object_figures(section, found, target)]
        # (the peak and each definition held there: check --pressure's lines)
        more = [[] if peak is None or peak.holders == () else
                [peak.holders[0].offset, *(at for group in peak.holders[0].groups for at in group.defined_at)]
                for peak in peaks]
        return [None if answer is None else (answer[0].code, answer[1], peak)
                for answer, peak in zip(object_listings(payload, section, found, target, own_lines=own_lines,
                                                        more=more), peaks)]

    found = each_code_object(binaries, options, records, work) if records else []
    details = FailureDetails()
    if code_for and binaries:
        codes: dict[Kernel, list[KernelCode]] = {}
        notes: dict[Kernel, list[PeakNote]] = {}
        for record, answer in zip(records, found):
            ident = (record["target"], record["key"])
            if answer is not None and ident in code_for:
                codes.setdefault(ident, []).append(answer[0])
                note = peak_note(answer[2], answer[1])
                if note is not None:
                    notes.setdefault(ident, []).append(note)
        details.code = failures_code(codes, notes)
    if lines_for and twin:
        details.sources = failure_locations(binaries, options, lines_for, root, twin)
    elif lines_for:
        for record, answer in zip(records, found):
            ident = (record["target"], record["key"])
            if answer is None or ident not in lines_for or ident in details.sources or answer[1] is None:
                continue
            location = locate(answer[1], root)
            if location is not None:
                details.sources[ident] = location
    return details


def peak_note(pressure, lines) -> Optional[PeakNote]:
    """check --pressure's note of a kernel's VGPR peak (isa.liveness.KernelPressure with its VGPR holders;
    ``lines``: its KernelLines, None without a line table); None: no VGPR is live, or not read."""
    from spillway.isa.liveness import origin_sums

    if pressure is None or not pressure.holders:
        return None
    held = pressure.holders[0]
    line_at = lines.line_at if lines is not None else (lambda _offset: None)
    return PeakNote(pressure.vgprs.registers, held.offset, line_at(held.offset),
                    tuple(origin_sums(held, line_at)), pressure.status)


def may_locate(payload, root: str, located: dict[tuple[str, str], bool]) -> bool:
    """Whether a failing kernel of this code object can point at a source
    line: some file its line tables name is in the repository under ``root``
    (gate.source_location.repository_file, with any of the tables'
    directories: a location is only ever one of these).  When none is (the
    sources are not checked out where check runs, or the kernels come from
    headers outside it), its line programs are not run nor its kernels
    listed: only the tables' headers are read (the lines of the 627 failures
    of librocsparse1 6.4.3 against a baseline of 7.2.4 cost 1 CPU-s, for no
    location).  A DWARF 2-4 table may name more files in its program
    (DW_LNE_define_file): then it can.  ``located``: the answers so far, by
    (file, directory)."""
    from spillway.errors import InputError
    from spillway.formats.dwarf_lines import read_lines
    from spillway.gate.source_location import repository_file

    try:
        tables = read_lines(payload, ())
    except InputError:
        return False        # read in full, the same error: no line, so no location
    if any(table.version < 5 for table in tables):
        return True
    directories = {table.comp_dir for table in tables} | {""}
    for table in tables:
        for number in range(len(table.files)):
            path = table.file_path(number)
            for directory in directories:
                key = (path, directory)
                found = located.get(key)
                if found is None:
                    found = located[key] = repository_file(path, directory, root) is not None
                if found:
                    return True
    return False
