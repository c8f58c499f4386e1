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

from spillway.gate.failure_code import FailureCode, failures_code
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
                    root: str, twin: Optional[list[str]] = None) -> FailureDetails:
    """The machine code of the kernels ``code_for`` (every instance, folded at
    its worst) and the source location of those of ``lines_for`` (the first
    instance that gives one; from the debug twin ``twin`` when given, which is
    read as gate.source_location reads it), from the binaries ``binaries``
    read again at ``places`` only (Inputs.places of the read that found them)."""
    from spillway.report.code_kernels import object_listings
    from spillway.report.kernel_code import each_code_object

    code_for, lines_for = set(code_for), set(lines_for)
    own_lines = bool(lines_for) and not twin
    records: list[dict] = []
    for ident in sorted(code_for | (lines_for if own_lines else set())):
        for (file, bundle_index, image_offset, archive), symbol in places.get(ident, ()):
            records.append({"file": file, "bundle_index": bundle_index, "image_offset": image_offset,
                            "archive": archive, "target": ident[0], "key": ident[1], "symbol": symbol,
                            "name": usage[ident].name})

    def work(_records, section, found, target: str, payload):
        return object_listings(payload, section, found, target, own_lines=own_lines)

    found = each_code_object(binaries, options, records, work) if records else []
    details = FailureDetails()
    if code_for and binaries:
        codes: dict[Kernel, list[KernelCode]] = {}
        for record, answer in zip(records, found):
            ident = (record["target"], record["key"])
            if answer is not None and ident in code_for:
                codes.setdefault(ident, []).append(answer[0].code)
        details.code = failures_code(codes)
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
