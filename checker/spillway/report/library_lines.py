"""Source lines of a library's kernels (issue 32): isa.source_lines' model
(each scratch access, AGPR copy and loop with its file:line, and the scratch
traffic per source line) for every kernel of the binaries read, or for
chosen ones, with the lines of their own code objects or of a debug twin's.

A debug twin is the same library built again with ``-gline-tables-only``
(``spillway matrix build --lines``: ``build/<cell>/lines/``).  Its code
objects are walked in the same order as the release's, and a release kernel
is paired with the twin's kernel of the same target and symbol in the same
place: the n-th code object of that target that holds the symbol, on both
sides (one build recipe and link order give the same sequence of code
objects; a kernel template instantiated in two translation units is in two
of them).  The twin's lines are used only when the twin's code of the kernel
has the same SHA-256 (isa.source_lines.twin_lines); otherwise the kernel's
``KernelLines.status`` says why and it carries no line.

Memory: without a twin, one code object at a time.  With one, the release's
listings of the chosen kernels are kept until the twin's walk reaches them
(choose the kernels on a whole ROCm library: report --isa's per-line figures,
isa.vector.line_traffic_many, need no model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from spillway.errors import InputError
from spillway.formats import codeobject
from spillway.formats.containers import DeviceImage, PendingImages, ScanResult, expand, scan_path
from spillway.isa.evidence import KernelRange, kernel_ranges
from spillway.isa.listing import KernelListing, kernel_listing
from spillway.isa.source_lines import (CODE_NOT_READ, LINE_TABLE_NOT_READ, KernelLines, branches_of, decoded_kernel,
                                       kernel_lines, object_lines, read_twin, twin_lines, without_lines)
from spillway.report.reader import ReadOptions
from spillway.resources.names import stable_key
from spillway.resources.targets import target_selected

try:       # numpy: a dependency; without it the reference decoder gives the same listings
    from spillway.isa import vector as _vector
except ImportError:        # pragma: no cover - exercised by tests that hide numpy
    _vector = None  # type: ignore[assignment]

TWIN = "debug twin"                 # how errors in the twin's files are named


@dataclass(frozen=True)
class KernelSourceLines:
    file: str                 # the input holding the kernel, as report records name it
    bundle_index: int | None
    target: str               # target ID
    symbol: str               # the kernel's function symbol
    key: str                  # its stable key (the gate's)
    lines: KernelLines


def library_lines(paths: Iterable[str], options: ReadOptions | None = None,
                  wanted: set[tuple[str, str]] | None = None, twin: Iterable[str] | None = None
                  ) -> list[KernelSourceLines]:
    """The source-line model of each kernel of the binaries ``paths`` (in the
    order they are read), or of the (target, key) pairs ``wanted``, from
    their own line tables or, given ``twin`` (the paths of a debug twin of
    the same binaries), from the twin's, kernel by kernel where the code is
    the same.  Raises InputError on a malformed input or debug twin's line
    table; a kernel whose own line table does not read gets the status
    'line table not read: ...' (its code read as always)."""
    options = options or ReadOptions()
    out: list[KernelSourceLines] = []
    pending: dict[tuple[str, str, int], list[tuple[int, KernelListing, list[tuple[int, int]]]]] = {}
    for image, code, occurrences in _code_objects(paths, options, ""):
        mine = [(kernel, symbol, occurrence) for kernel, symbol, occurrence in occurrences
                if wanted is None or (code.target_id, stable_key(kernel.name)) in wanted]
        if not mine:
            continue
        unread = ""
        try:
            section, ranges = kernel_ranges(image.payload)
        except InputError as exc:
            section, ranges, unread = memoryview(b""), [], f"{CODE_NOT_READ}: {exc.message}"
        by_name = {r.name: r for r in ranges}
        found = [by_name.get(symbol) or by_name.get(kernel.name) for kernel, symbol, _ in mine]
        listings = iter(_listings(section, [r for r in found if r is not None], code.target_id))
        lines = None
        lines_unread = ""
        if twin is None:
            try:
                lines = object_lines(image.payload, [(r.section, r.start, r.start + r.size) for r in found if r])
            except InputError as exc:
                # The kernels' code stands; a table that does not read is said in their status (as
                # spillway code says it), and a check's results keep their baseline lines.
                lines_unread = f"{LINE_TABLE_NOT_READ}: {exc.message}"
        for (kernel, symbol, occurrence), place in zip(mine, found):
            where = (image.file, image.bundle_index, code.target_id, symbol, stable_key(kernel.name))
            if place is None:
                why = unread or f"{CODE_NOT_READ}: no STT_FUNC symbol {symbol} with a descriptor in the code object"
                out.append(KernelSourceLines(*where, _unread(why)))
                continue
            listing, branches = next(listings)
            if twin is None and lines_unread:
                out.append(KernelSourceLines(*where, without_lines(listing.code.code_sha256, lines_unread)))
            elif twin is None:
                out.append(KernelSourceLines(*where, kernel_lines(listing, branches, lines, place.section,
                                                                  place.start)))
            else:
                pending.setdefault((code.target_id, symbol, occurrence), []).append((len(out), listing, branches))
                out.append(KernelSourceLines(*where, _unread("")))      # filled in from the twin below
    if twin is not None:
        _from_twin(list(twin), options, pending, out)
    return out


def _from_twin(paths: list[str], options: ReadOptions,
               pending: dict[tuple[str, str, int], list[tuple[int, KernelListing, list[tuple[int, int]]]]],
               out: list[KernelSourceLines]) -> None:
    """Fill in ``out`` at the ``pending`` places from the twin's kernels."""
    for image, code, occurrences in _code_objects(paths, options, TWIN):
        names = [symbol for _kernel, symbol, occurrence in occurrences
                 if (code.target_id, symbol, occurrence) in pending]
        if not names:
            continue
        try:
            kernels, lines = read_twin(image.payload, names)
        except InputError as exc:
            raise _within(exc, image) from None
        for _kernel, symbol, occurrence in occurrences:
            for index, listing, branches in pending.pop((code.target_id, symbol, occurrence), ()):
                out[index] = _with(out[index], twin_lines(listing, branches, symbol, kernels, lines))
    for (_target, symbol, _occurrence), waiting in pending.items():
        for index, listing, branches in waiting:
            out[index] = _with(out[index], twin_lines(listing, branches, symbol, {}, None))


def _with(found: KernelSourceLines, lines: KernelLines) -> KernelSourceLines:
    return KernelSourceLines(found.file, found.bundle_index, found.target, found.symbol, found.key, lines)


def _code_objects(paths: Iterable[str], options: ReadOptions, side: str
                  ) -> Iterator[tuple[DeviceImage, codeobject.CodeObject, list]]:
    """Each code object of the selected targets, in the order the reader
    reads them, with its kernels as (metadata, symbol, occurrence): the
    occurrence counts the earlier code objects of the same target that hold
    the same symbol.  ``side``: what errors name before the file ("debug
    twin")."""
    seen: dict[tuple[str, str], int] = {}
    try:
        for image in _images(paths, options):
            try:
                code = codeobject.parse(image.payload)
            except InputError as exc:
                raise _within(exc, image) from None
            if not target_selected(code.target_id, options.targets):
                continue
            occurrences = []
            for kernel in code.kernels:
                symbol = codeobject.function_symbol(kernel.symbol)
                occurrence = seen.get((code.target_id, symbol), 0)
                seen[(code.target_id, symbol)] = occurrence + 1
                occurrences.append((kernel, symbol, occurrence))
            yield image, code, occurrences
    except InputError as exc:
        if side:
            exc.file = f"{side} {exc.file}" if exc.file else side
        raise


def _images(paths: Iterable[str], options: ReadOptions) -> Iterator[DeviceImage]:
    budget = options.budget()
    for path in paths:
        for unit in scan_path(path, options.scan_options(budget)).images:
            yield from (expand(unit, ScanResult()) if isinstance(unit, PendingImages) else (unit,))


def _within(exc: InputError, image: DeviceImage) -> InputError:
    exc.within(image.container, image.offset or 0, rebase=image.offset is not None)
    exc.file = image.file
    return exc


def _listings(section: memoryview, ranges: list[KernelRange], target: str
              ) -> list[tuple[KernelListing, list[tuple[int, int]]]]:
    """isa.listing.kernel_listing() of each kernel, and its branches."""
    batch = [(r.start, r.size, bool(r.private_segment_buffer)) for r in ranges]
    if _vector is not None and batch:
        decoded = _vector.DecodedSection()
        figures = _vector.evidence_many(section, batch, target, keep=decoded)
        return _vector.listings_many(section, batch, target, figures, decoded)
    return [(kernel_listing(section, start, size, target, psb), branches_of(decoded_kernel(section, start, size,
                                                                                            target)))
            for start, size, psb in batch]


def _unread(status: str) -> KernelLines:
    return KernelLines(status, "", "", "", "", (), (), (), ())
