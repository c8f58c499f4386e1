"""The machine code of a few kernels already read: their code objects read
again, after a selection, so only those are decoded (the default report's
printed rows, ``spillway code``'s named kernels, check's failures).

A kernel is found by its record's place: ``file``, ``bundle_index``,
``image_offset``, ``archive`` name the code object (a compressed bundle is
inflated only when it holds one of them), ``target`` and ``symbol`` the
kernel in it.  Only the code objects holding a wanted kernel are parsed.
"""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar

from spillway.errors import InputError
from spillway.formats import codeobject
from spillway.formats.containers import PendingImages, ScanResult, expand, scan_path
from spillway.isa.evidence import KernelRange, kernel_ranges
from spillway.report.reader import ReadOptions

T = TypeVar("T")
# work(record, code section bytes, the kernel's range or None, target ID) -> what the caller keeps
Work = Callable[[dict, memoryview, "KernelRange | None", str], T]


def symbol_name(symbol: str) -> str:
    """The kernel's STT_FUNC symbol: its descriptor's name without ``.kd``."""
    return symbol[:-3] if symbol.endswith(".kd") else symbol


def _place(record: dict) -> tuple:
    return record["file"], record["bundle_index"], record.get("image_offset"), record.get("archive")


def each_kernel_code(paths: Iterable[str], options: ReadOptions, records: list[dict], work: Work
                     ) -> list[T | None]:
    """``work`` on each of ``records`` (report records read from ``paths``
    with ``options``) with its kernel's code; None for a record whose code
    object was not found again.  Raises InputError as the reader does (the
    inputs changed since, a corrupt bundle)."""
    wanted: dict[tuple, list[int]] = {}
    for index, record in enumerate(records):
        wanted.setdefault(_place(record), []).append(index)
    bundles = {(place[0], place[1]) for place in wanted}
    found: list[T | None] = [None] * len(records)
    left = len(records)
    budget = options.budget()
    for path in paths:
        if not left:
            break
        scan = scan_path(path, options.scan_options(budget))
        for unit in scan.images:
            if (unit.file, unit.bundle_index) not in bundles:
                continue
            images = expand(unit, ScanResult()) if isinstance(unit, PendingImages) else (unit,)
            for image in images:
                indexes = wanted.get((image.file, image.bundle_index, image.image_offset, image.archive))
                if not indexes or all(found[i] is not None for i in indexes):
                    continue
                left -= _work_on(image.payload, [(i, records[i]) for i in indexes if found[i] is None], work, found)
    return found


def _work_on(payload: memoryview, chosen: list[tuple[int, dict]], work: Work, found: list) -> int:
    try:
        code = codeobject.parse(payload)
    except InputError:
        return 0      # the reader read it once: a code object that does not parse now is not the one
    mine = [(i, record) for i, record in chosen if record["target"] == code.target_id]
    if not mine:
        return 0
    try:
        section, ranges = kernel_ranges(payload)
    except InputError:
        section, ranges = memoryview(b""), []
    by_name = {r.name: r for r in ranges}
    for index, record in mine:
        found[index] = work(record, section, by_name.get(symbol_name(record["symbol"])) or by_name.get(record["name"]),
                            code.target_id)
    return len(mine)
