"""A report record's ``isa`` object (``report --isa``): the evidence of a
kernel's machine code (spillway.isa), read in the worker that parses its code
object, from the same bytes.

The object holds KernelCode's fields as JSON: ``scratch_without_width`` as
{mnemonic: count}, ``loop_spans`` as [target, branch] offset pairs from the
kernel's start, ``mix`` as {class: instructions} (isa.mix).  A kernel whose code cannot be read (no STT_FUNC symbol, a
code object whose sections do not hold together) still has an object, with
zero counts and a ``status`` saying why: the rest of the report stands.

A kernel of a code object with a DWARF line table (``-gline-tables-only``)
also has ``source_lines``: the source lines with the most scratch bytes per
lane in loops (isa.source_lines), at most TOP_LINES of them; a code object
without one gives no such member (its records are as before).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable, Final, Sequence

from spillway.constants import SCRATCH_OFFSETS
from spillway.errors import InputError
from spillway.formats.metadata import KernelMetadata
from spillway.formats.codeobject import function_symbol
from spillway.formats.dwarf_lines import line_table_image
from spillway.isa.evidence import KernelCode, KernelRange, evidence, kernel_ranges
from spillway.isa.liveness import FilePeak, KernelPressure, PeakHolders, origin_sums
from spillway.isa.listing import SCRATCH_LOAD_KIND, SCRATCH_STORE_KIND, kernel_listing
from spillway.isa.source_lines import (LINE_TABLE_NOT_READ, NO_ROWS, PLACED, ObjectLines, SourceLine, branches_of,
                                       decoded_kernel, kernel_lines, line_object, loop_lines, object_lines,
                                       source_object)
from spillway.isa.mix import mix_object

# The object's scalar and list members, in the order a record writes them (the fields of KernelCode);
# then ``mix`` (an object of its own) and, with a line table, ``source_lines``.
ISA_FIELDS: Final = tuple(name for name in KernelCode.__dataclass_fields__ if name != "mix")

if TYPE_CHECKING:
    from spillway.isa.vector import DecodedSection

try:       # numpy: a dependency, but the plain-Python reference gives the same figures without it
    from spillway.isa import vector as _vector
except ImportError:        # pragma: no cover - exercised by tests that hide numpy
    _vector = None  # type: ignore[assignment]


# Fewer than 1/_SPARSE of a code object's kernels are decoded alone (isa.vector.evidence_many's sparse).
_SPARSE = 4
# The most source lines a record's isa.source_lines lists (the lines with the most scratch bytes in loops).
TOP_LINES: Final = 8


def isa_object(code: KernelCode) -> dict:
    """KernelCode as the record's ``isa`` JSON object."""
    found = dict(vars(code))          # the fields in order (ISA_FIELDS, then mix, set again last)
    del found["mix"]
    found["scratch_without_width"] = dict(code.scratch_without_width)
    found["loop_spans"] = [list(span) for span in code.loop_spans]
    found["mix"] = mix_object(code.mix)
    return found


def _peak(peak: FilePeak) -> dict:
    return {"peak": peak.registers, "offset": peak.offset}


def pressure_peaks(pressure: KernelPressure) -> dict:
    """A kernel's peaks and status as JSON: what spillway code's ``pressure``
    and report --pressure's share."""
    return {"status": pressure.status, "vgprs": _peak(pressure.vgprs), "agprs": _peak(pressure.agprs),
            "sgprs": _peak(pressure.sgprs), "undefined_reads": pressure.undefined_reads,
            "first_undefined_read": pressure.first_undefined_read, "instructions": pressure.instructions}





def holders_object(held: PeakHolders, line_at: Callable[[int], SourceLine | None]) -> dict:
    """What holds one file's peak as JSON, each offset's line by ``line_at`` (None: no line)."""
    return {"file": held.file, "offset": held.offset, "source": source_object(line_at(held.offset)),
            "groups": [{"registers": [str(r) for r in group.registers], "count": group.count,
                        "defined_at": list(group.defined_at), "defined_by": list(group.defined_by),
                        "defined_source": [source_object(line_at(at)) for at in group.defined_at],
                        "from_entry": group.from_entry, "last_used_at": list(group.last_used_at),
                        "last_used_source": [source_object(line_at(at)) for at in group.last_used_at]}
                       for group in held.groups]}


def _unread(status: str) -> KernelCode:
    return KernelCode(0, 0, "", 0, 0, 0, 0, (), 0, 0, 0, 0, 0, 0, (), 0, 0, status)   # no code: no identity


def code_objects_evidence(payload: bytes | memoryview, kernels: list[KernelMetadata], target: str,
                          use_numpy: bool = True, pressure: bool = False) -> list[dict]:
    """The ``isa`` object of each of ``kernels`` (a code object's, in its
    order) from the code object's bytes ``payload``; ``pressure``: with
    each kernel's live registers (``pressure``, pressure_object).  Never
    raises on bad code: each kernel's ``status`` says what stopped the
    reading."""
    try:
        code, ranges = kernel_ranges(payload, entries=pressure)   # (entry registers: the liveness only)
    except InputError as exc:
        where = f" at {exc.offset:#x}" if exc.offset is not None else ""
        unread = [isa_object(_unread(f"code not read: {exc.message}{where}")) for _ in kernels]
        if pressure:
            for record in unread:
                record["pressure"] = None
        return unread
    by_name = {r.name: r for r in ranges}
    chosen = []
    for kernel in kernels:
        chosen.append(by_name.get(function_symbol(kernel.symbol)) or by_name.get(kernel.name))
    batch = [(r.start, r.size, bool(r.private_segment_buffer)) for r in chosen if r is not None]
    decoded = _vector.DecodedSection() if use_numpy and _vector is not None else None
    if use_numpy and _vector is not None:
        # A few kernels of the code object (report FILTER --isa): only their words are decoded.
        figures = _vector.evidence_many(code, batch, target, keep=decoded, sparse=len(batch) * _SPARSE < len(ranges))
    else:
        figures = [evidence(code, start, size, target, psb) for start, size, psb in batch]
    present = [r for r in chosen if r is not None]
    lines, table = _source_lines(payload, code, present, figures, target, decoded, every=pressure)
    live = (_pressure_objects(code, present, target, table, figures, _scratch_offsets(code, batch, target, figures,
                                                                                      decoded))
            if pressure else [None] * len(present))
    found = iter(zip(figures, lines, live))
    out = []
    for k, r in zip(kernels, chosen):
        if r is None:
            record = isa_object(_unread(f"no STT_FUNC symbol {function_symbol(k.symbol)} with a descriptor in "
                                        f"the code object"))
            if pressure:
                record["pressure"] = None
            out.append(record)
            continue
        figure, placed, registers = next(found)
        record = isa_object(figure)
        if placed is not None:
            record["source_lines"] = placed
        if pressure:
            record["pressure"] = registers
        out.append(record)
    return out


def _origins(held: PeakHolders, line_at: Callable[[int], SourceLine | None]) -> list[dict]:
    """report --pressure's vgpr_peak_origins (isa.liveness.origin_sums) as JSON."""
    return [{"count": count, "defined_by": name, "source": source_object(line)}
            for count, name, line in origin_sums(held, line_at)]


def _scratch_offsets(code: memoryview, batch: list[tuple[int, int, bool]], target: str, figures: list[KernelCode],
                     decoded: DecodedSection | None) -> list[tuple[int, ...]]:
    """Each kernel's scratch access offsets (spillway code's scratch_load and scratch_store instructions): those
    evidence_many kept while it counted them (``decoded``); a kernel it did not keep them for (a sparse batch,
    no numpy) is listed again (isa.listing), only when it has some."""
    out: list[tuple[int, ...]] = []
    for kernel, figure in zip(batch, figures):
        if not figure.scratch_loads + figure.scratch_stores:
            out.append(())
            continue
        kept = decoded.scratch.get(kernel) if decoded is not None else None
        if kept is None:
            start, size, psb = kernel
            if _vector is not None:
                (listing, _branches), = _vector.listings_many(code, [kernel], target, [figure])
            else:
                listing = kernel_listing(code, start, size, target, psb)
            kept = tuple(i.offset for i in listing.instructions if i.kind in (SCRATCH_LOAD_KIND, SCRATCH_STORE_KIND))
        out.append(kept)
    return out


def spread_offsets(offsets: Sequence[int], limit: int = SCRATCH_OFFSETS) -> list[int]:
    """At most ``limit`` of ``offsets``, evenly spread over them (all of them when there are no more)."""
    if len(offsets) <= limit:
        return list(offsets)
    return [offsets[n * len(offsets) // limit] for n in range(limit)]


def peak_loop(spans: Sequence[tuple[int, int]], offset: int | None) -> tuple[int, int] | None:
    """The innermost loop holding ``offset``, as spillway code's loops (isa.listing.loops_of: KernelCode's
    loop_spans grouped by their target, the head): (head, its last back branch); None outside every loop."""
    if offset is None:
        return None
    heads = [head for head, branch in spans if head <= offset <= branch]
    if not heads:
        return None
    head = max(heads)
    return head, max(branch for start, branch in spans if start == head)


def _pressure_objects(code: memoryview, ranges: list[KernelRange], target: str, lines: ObjectLines | None,
                      figures: list[KernelCode], scratch: list[tuple[int, ...]]) -> list[dict]:
    """Each kernel's ``pressure`` object (report --pressure): its peaks and
    status (isa.liveness), and at the VGPR peak its source line, the
    innermost loop holding it and the largest group of registers held there
    (issue 41 item 4), placed in the code object's line table when it has
    one; its scratch accesses' offsets (``scratch``, at most SCRATCH_OFFSETS)."""
    from spillway.isa.liveness import each_kernel_pressure
    from spillway.isa.operands import VGPR
    from spillway.isa.source_lines import block_starts

    out = []
    pressures = each_kernel_pressure(code, ranges, target, holders=(VGPR,), with_curve=True)
    for found, pressure, figure, offsets in zip(ranges, pressures, figures, scratch):
        assert pressure is not None             # (every range is a kernel's)
        record = pressure_peaks(pressure)
        held = next((h for h in pressure.holders if h.file == "v"), None)
        at_peak = None
        origins: list[dict] = []
        if held is not None:
            largest = dataclasses.replace(held, groups=held.groups[:1])
            loop = peak_loop(figure.loop_spans, held.offset)
            placed: dict[int, SourceLine | None] = {}
            if lines is not None and lines.covers(found.section, found.start, found.size):
                wanted = sorted({held.offset, *(at for group in largest.groups for at in group.last_used_at),
                                 *(at for group in held.groups for at in group.defined_at), *(loop or ())})
                blocks = block_starts(pressure.branches, pressure.code_size)
                placed = dict(zip(wanted, lines.place_many(found.section, found.start, wanted, blocks,
                                                           pressure.code_size)))
            at_peak = holders_object(largest, placed.get)
            at_peak["loop"] = None if loop is None else {
                "start": loop[0], "end": loop[1], "head": source_object(placed.get(loop[0])),
                "back_branch": source_object(placed.get(loop[1]))}
            origins = _origins(held, placed.get)
        record["at_vgpr_peak"] = at_peak
        record["vgpr_peak_origins"] = origins
        record["vgpr_curve"] = list(pressure.vgpr_curve)
        record["code_bytes"] = pressure.code_size
        record["scratch_offsets"] = spread_offsets(offsets)
        out.append(record)
    return out


def _source_lines(payload: bytes | memoryview, code: memoryview, ranges: list[KernelRange],
                  figures: list[KernelCode], target: str, decoded: DecodedSection | None, every: bool = False
                  ) -> tuple[list[dict | None], ObjectLines | None]:
    """Each kernel's ``source_lines`` object (None for every kernel when the
    code object has no line table): its lines with the most scratch bytes
    in loops (source_lines.loop_lines), and the line tables read.  Only the
    kernels with scratch accesses or AGPR copies are placed (their sequences
    read, the others skimmed; ``every``: every kernel's sequences read, for
    other lines to place).  A malformed line table is said in each kernel's
    status."""
    image = line_table_image(payload)
    if image is None:
        return [None] * len(ranges), None
    busy = [n for n, f in enumerate(figures) if f.scratch_loads + f.scratch_stores + f.agpr_writes + f.agpr_reads]
    try:
        lines = object_lines(payload, [(ranges[n].section, ranges[n].start, ranges[n].start + ranges[n].size)
                                       for n in (range(len(ranges)) if every else busy)], image=image)
    except InputError as exc:
        where = f" at {exc.offset:#x}" if exc.offset is not None else ""
        return [{"status": f"{LINE_TABLE_NOT_READ}: {exc.message}{where}", "comp_dir": "", "top": [], "more": 0}
                for _ in ranges], None
    if lines is None:
        return [None] * len(ranges), None
    # A kernel with nothing to place is not read (its sequences skimmed): placed, with no line to list, under
    # the one compilation directory of the code object's units when they share one.
    directories = {table.comp_dir for table in lines.tables}
    shared = directories.pop() if len(directories) == 1 else ""
    out: list[dict] = [{"status": PLACED, "comp_dir": shared, "top": [], "more": 0} for _ in ranges]
    for n in busy:
        found = ranges[n]
        if lines.covers(found.section, found.start, found.size):
            out[n]["comp_dir"] = lines.comp_dir(found.section, found.start)
        else:
            out[n] = {"status": NO_ROWS, "comp_dir": "", "top": [], "more": 0}
    # A kernel with no scratch access in a loop has no line to list (loop_lines lists the lines with scratch
    # bytes in loops): it is placed, its rows not gathered.
    chosen = [n for n in busy if out[n]["status"] == PLACED and figures[n].scratch_in_loops]
    batch = [(ranges[n].start, ranges[n].size, bool(ranges[n].private_segment_buffer)) for n in chosen]
    if decoded is not None and _vector is not None:
        traffic = _vector.line_traffic_many(code, batch, target, [figures[n] for n in chosen], decoded, lines,
                                            [ranges[n].section for n in chosen])
    else:
        traffic = []
        for n, (start, size, psb) in zip(chosen, batch):
            listing = kernel_listing(code, start, size, target, psb)
            branches = branches_of(decoded_kernel(code, start, size, target))
            traffic.append(kernel_lines(listing, branches, lines, ranges[n].section, start).by_line)
    for n, rows in zip(chosen, traffic):
        top, more = loop_lines(rows, TOP_LINES)
        out[n]["top"] = [line_object(row) for row in top]
        out[n]["more"] = more
    return list(out), lines


def kernel_evidence(section: memoryview, start: int, size: int, target: str, psb: bool) -> KernelCode:
    """evidence() of one kernel of a code section, by the numpy path when numpy is there (on the
    kernel's bytes alone: the rest of the section is not decoded)."""
    if _vector is None or start < 0 or size <= 0 or start + size > len(section):
        return evidence(section, start, size, target, psb)
    return _vector.evidence_many(section[start:start + size], [(0, size, psb)], target)[0]


