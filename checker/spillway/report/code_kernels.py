"""``spillway code``'s model: the kernels a FILTER names among the records
read, each with its listing (isa.listing) and source lines (isa.source_lines),
as ViewedKernel (report.code_view).

The work is per code object, not per kernel (issue 37: 4,032 kernels of one
gfx908 code object of librocsparse1 6.4.3 took more than 13 CPU-minutes, the
line table inflated and parsed once per kernel and each kernel decoded again
by the plain-Python decoder): each code object holding a chosen kernel is
read again once (report.kernel_code), its chosen kernels decoded together by
the vectorized path (isa.vector.evidence_many, then listings_many from the
same arrays), and its line table read once for all of them.
"""

from __future__ import annotations

from typing import Optional, Sequence

from spillway.errors import InputError, UsageError
from spillway.formats.codeobject import function_symbol
from spillway.isa.evidence import KernelRange
from spillway.report.code_view import ViewedKernel
from spillway.report.reader import ReadOptions
from spillway.resources.names import NameFilter

# Names an ambiguous filter's error lists.
SHOWN_NAMES = 5


def matching(kernels: Sequence[dict], pattern: str) -> list[dict]:
    """The records ``pattern`` names: those with that exact name (demangled,
    or the symbol), else those the report's filter matches."""
    exact = [k for k in kernels if pattern in (k["name"], k["symbol"], function_symbol(k["symbol"]))]
    if exact:
        return exact
    matches = NameFilter(pattern)
    return [k for k in kernels if matches(k["name"])]


def choose(kernels: Sequence[dict], pattern: str, everything: bool) -> list[dict]:
    """The records ``pattern`` names: exact names (demangled, or the symbol)
    first, else the report's filter; more than one kernel in one code object
    is a UsageError unless ``everything``."""
    chosen = matching(kernels, pattern)
    if not chosen:
        raise UsageError(f"no kernel matches {pattern!r} (of {len(kernels)} kernels read)")
    if everything or len(chosen) == 1:
        return chosen
    names = sorted({k["name"] for k in chosen})
    if len(names) > 1:
        listed = "; ".join(names[:SHOWN_NAMES]) + ("; ..." if len(names) > SHOWN_NAMES else "")
        raise UsageError(f"{len(names)} kernels match {pattern!r}: {listed} (give the exact name, or --all)")
    targets = sorted({k["target"] for k in chosen})
    if len(targets) > 1:
        raise UsageError(f"{names[0]} is built for {len(targets)} targets ({', '.join(targets)}): choose one "
                         f"with --target, or --all")
    places = sorted({f"{k['file']}" + ("" if k["bundle_index"] is None else f" bundle {k['bundle_index']}")
                     for k in chosen})
    raise UsageError(f"{names[0]} ({targets[0]}) is in {len(chosen)} code objects ({'; '.join(places[:SHOWN_NAMES])})"
                     f": narrow the PATHs, or --all")


def viewed_kernels(paths: list[str], options: ReadOptions, records: list[dict],
                   lines_from: Optional[list[str]] = None, all_instructions: bool = False
                   ) -> tuple[ViewedKernel, ...]:
    """Each record's ViewedKernel, its code objects read again from ``paths``;
    ``lines_from``: debug twins to take the lines from (report.library_lines)
    instead of each code object's own line table; ``all_instructions``: each
    kernel's every instruction with its operands and live registers
    (isa.liveness steps).  InputError for a record whose code is not found
    again."""
    from spillway.report.kernel_code import each_code_object

    def listings_of(_records, section, found: list[Optional[KernelRange]], target: str, payload):
        decoded = decoded_listings(section, found, target)
        # each loop's own peak (isa.liveness.LoopPeak) needs the listing's loops; the lines, the peaks' offsets
        spans = [None if one is None else [(loop.start, loop.end) for loop in one[0].loops] for one in decoded]
        pressures = object_pressure(section, found, target, all_instructions, spans)
        listed = placed_listings(payload, found, decoded, own_lines=not lines_from,
                                 more=[placed_offsets(p) for p in pressures])
        return [None if one is None else (*one, pressure) for one, pressure in zip(listed, pressures)]

    listings = each_code_object(paths, options, records, listings_of)
    twin = twin_lines_of(paths, options, records, lines_from) if lines_from else None
    viewed: list[ViewedKernel] = []
    for number, (record, found) in enumerate(zip(records, listings)):
        if found is None:
            raise InputError(f"{record['name']} ({record['target']}): its code was not found (no STT_FUNC "
                             f"symbol {function_symbol(record['symbol'])}, or the input changed while read)",
                             file=record["file"])
        listing, lines, pressure = found
        viewed.append(ViewedKernel(record, listing, twin[number] if twin is not None else lines, pressure,
                                   all_instructions))
    return tuple(viewed)


def placed_offsets(pressure) -> list[int]:
    """The offsets spillway code shows with their lines: each register peak,
    and what holds it (definitions, last uses)."""
    if pressure is None:
        return []
    out = []
    for held in pressure.holders:
        out.append(held.offset)
        for group in held.groups:
            out += [*group.defined_at, *group.last_used_at]
    for loop in pressure.loops:                 # each loop's VGPR peak and what defined the registers held there
        if loop.held is not None:
            out.append(loop.held.offset)
            out += [at for group in loop.held.groups for at in group.defined_at]
    return out


def object_listings(payload, section: memoryview, found: list[Optional[KernelRange]], target: str,
                    own_lines: bool, more: Optional[list[list[int]]] = None) -> list:
    """(listing, its lines or None) of each kernel of one code object found
    (None where it was not): decoded together, the line table read once;
    ``more``: for each kernel found, other offsets to place
    (KernelLines.more)."""
    return placed_listings(payload, found, decoded_listings(section, found, target), own_lines, more)


def decoded_listings(section: memoryview, found: list[Optional[KernelRange]], target: str) -> list:
    """(listing, branches) of each kernel of one code object found (None
    where it was not), decoded together: object_listings' first step."""
    from spillway.isa.vector import DecodedSection, evidence_many, listings_many

    present = [r for r in found if r is not None]
    code, batch = _side_by_side(section, [(r.start, r.size, bool(r.private_segment_buffer)) for r in present])
    decoded = DecodedSection()
    figures = evidence_many(code, batch, target, keep=decoded)
    listed = iter(listings_many(code, batch, target, figures, decoded))
    return [None if kernel is None else next(listed) for kernel in found]


def placed_listings(payload, found: list[Optional[KernelRange]], decoded: list, own_lines: bool,
                    more: Optional[list[list[int]]] = None) -> list:
    """object_listings' second step: each decoded_listings' (listing,
    branches) with its lines or None, the line table read once."""
    from spillway.isa.source_lines import LINE_TABLE_NOT_READ, kernel_lines, object_lines, without_lines

    present = [r for r in found if r is not None]
    lines = None
    failed = None
    if own_lines and present:
        try:
            lines = object_lines(payload, [(r.section, r.start, r.start + r.size) for r in present])
        except InputError as exc:         # a malformed table: said in each status, the listings stand
            failed = f"{LINE_TABLE_NOT_READ}: {exc.message}"
    out: list = []
    for number, (kernel, one) in enumerate(zip(found, decoded)):
        if kernel is None:
            out.append(None)
            continue
        listing, branches = one
        if not own_lines:
            out.append((listing, None))
        elif failed is not None:
            out.append((listing, without_lines(listing.code.code_sha256, failed)))
        else:
            out.append((listing, kernel_lines(listing, branches, lines, kernel.section, kernel.start,
                                              more=more[number] if more else ())))
    return out


def object_pressure(section: memoryview, found: list[Optional[KernelRange]], target: str, steps: bool,
                    loops: Optional[list] = None) -> list:
    """The live registers (isa.liveness.KernelPressure) of each kernel of one
    code object found (None where it was not), with what holds each peak;
    ``steps``: every instruction's too; ``loops``: each kernel's loop spans,
    each loop's own peaks."""
    from spillway.isa.liveness import each_kernel_pressure

    return each_kernel_pressure(section, found, target, steps=steps, holders=True, loops=loops)


def object_figures(section: memoryview, found: list[Optional[KernelRange]], target: str) -> list:
    """The evidence figures (isa.evidence.KernelCode) of each kernel of one
    code object found (None where it was not), decoded together: what
    object_listings gives without the listings and lines."""
    from spillway.isa.vector import evidence_many

    present = [r for r in found if r is not None]
    code, batch = _side_by_side(section, [(r.start, r.size, bool(r.private_segment_buffer)) for r in present])
    figures = iter(evidence_many(code, batch, target))
    return [None if kernel is None else next(figures) for kernel in found]


def _side_by_side(section: memoryview, kernels: list[tuple[int, int, bool]]
                  ) -> tuple[memoryview, list[tuple[int, int, bool]]]:
    """The (start, size, private segment buffer) kernels' words side by side
    and where each is there, when they are less than half of the section
    (check's failures, a few kernels named): only their words are decoded
    (isa.vector.evidence_many's sparse rule), once for both the figures and
    the listings; else the section as it is.  A kernel's figures and listing
    are relative to its start, so the same either way."""
    view = memoryview(section)
    if (not kernels or sum(size for _start, size, _psb in kernels) * 2 >= len(view)
            or any(size <= 0 or start < 0 or start + size > len(view) or start % 4 or size % 4
                   for start, size, _psb in kernels)):
        return view, kernels
    moved = []
    at = 0
    for _start, size, psb in kernels:
        moved.append((at, size, psb))
        at += size
    return memoryview(b"".join(view[start:start + size] for start, size, _psb in kernels)), moved


def twin_lines_of(paths: list[str], options: ReadOptions, records: list[dict], twin: list[str]) -> list:
    """Each record's source lines from the debug twin ``twin`` (report.
    library_lines: the twin's kernel of the same target and symbol in the
    same place, used where its code is the same)."""
    from spillway.report.library_lines import library_lines

    wanted = {(record["target"], record["key"]) for record in records}
    found = library_lines(paths, options, wanted, twin)
    by_place: dict[tuple, list] = {}
    for kernel in found:
        by_place.setdefault((kernel.file, kernel.bundle_index, kernel.target, kernel.symbol), []).append(kernel.lines)
    out = []
    for record in records:
        place = (record["file"], record["bundle_index"], record["target"], function_symbol(record["symbol"]))
        candidates = by_place.get(place)
        if not candidates:
            raise InputError(f"{record['name']} ({record['target']}): not found again when reading the debug twin's "
                             f"pairs (the input changed while read)", file=record["file"])
        out.append(candidates.pop(0))
    return out
