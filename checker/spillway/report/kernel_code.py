"""The machine code of a few kernels already read: their code objects read
again, after a selection, so only those are decoded (the default report's
printed rows, ``spillway code``'s named kernels, check's failures).

A kernel is found by its record's place: ``file``, ``bundle_index``,
``image_offset``, ``archive`` name the code object (a compressed bundle is
inflated only when it holds one of them), ``target`` and ``symbol`` the
kernel in it.  Only the code objects holding a wanted kernel are parsed.
"""

from __future__ import annotations

import dataclasses
import gc
from typing import Callable, Iterable, TypeVar

from spillway.errors import InputError
from spillway.formats import codeobject
from spillway.formats.containers import PendingImages, ScanResult, expand, scan_path
from spillway.isa.evidence import KernelCode, KernelRange, kernel_ranges
from spillway.report.reader import ReadOptions

T = TypeVar("T")
# work(record, code section bytes, the kernel's range or None, target ID[, code object bytes]) -> what the
# caller keeps (the code object's bytes with_payload)
Work = Callable[..., T]


def _kernel_range(by_name: dict[str, KernelRange], record: dict) -> KernelRange | None:
    """The record's kernel among a code object's ranges: by its function symbol (its descriptor's name
    without ``.kd``), else by its name."""
    return by_name.get(codeobject.function_symbol(record["symbol"])) or by_name.get(record["name"])


def _place(record: dict) -> tuple:
    return record["file"], record["bundle_index"], record.get("image_offset"), record.get("archive")


def each_kernel_code(paths: Iterable[str], options: ReadOptions, records: list[dict], work: Work,
                     with_payload: bool = False) -> list[T | None]:
    """``work`` on each of ``records`` (report records read from ``paths``
    with ``options``) with its kernel's code; None for a record whose code
    object was not found again.  ``with_payload``: ``work`` also gets the
    whole code object's bytes (for its line tables) as a fifth argument.
    Raises InputError as the reader does (the inputs changed since, a
    corrupt bundle)."""
    # The caller holds a library's records (250,000 on librocsparse1 7.2.4): the collector's passes
    # over them while the decoder's tables are built cost more than the decoding itself.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _each_kernel_code(paths, options, records, work, with_payload)
    finally:
        if collecting:
            gc.enable()


def each_code_object(paths: Iterable[str], options: ReadOptions, records: list[dict], work: Callable[..., list]
                     ) -> list:
    """each_kernel_code, with ``work`` called once per code object holding
    wanted records: work(its records, code section bytes, each record's
    kernel range or None, target ID, code object bytes) -> one answer per
    record, in order (what is worked out once per code object -- its line
    table, the decoding of its kernels together -- is then done once)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _each_kernel_code(paths, options, records, work, True, per_object=True)
    finally:
        if collecting:
            gc.enable()


def _each_kernel_code(paths: Iterable[str], options: ReadOptions, records: list[dict], work: Work,
                      with_payload: bool, per_object: bool = False) -> list[T | None]:
    wanted: dict[tuple, list[int]] = {}
    for index, record in enumerate(records):
        wanted.setdefault(_place(record), []).append(index)
    # Records still to find per bundle: a compressed bundle is inflated only up to its last one.
    left: dict[tuple, int] = {}
    for place, indexes in wanted.items():
        left[place[:2]] = left.get(place[:2], 0) + len(indexes)
    done = [False] * len(records)
    found: list[T | None] = [None] * len(records)
    budget = options.budget()
    for path in paths:
        if not any(left.values()):
            break
        scan = scan_path(path, options.scan_options(budget))
        for unit in scan.images:
            bundle = (unit.file, unit.bundle_index)
            if not left.get(bundle):
                continue
            images = expand(unit, ScanResult()) if isinstance(unit, PendingImages) else (unit,)
            for image in images:
                indexes = [i for i in wanted.get((image.file, image.bundle_index, image.image_offset, image.archive),
                                                  ()) if not done[i]]
                if indexes:
                    left[bundle] -= _work_on(image.payload, [(i, records[i]) for i in indexes], work, found, done,
                                             with_payload, per_object)
                if not left[bundle]:
                    break
    return found


def _work_on(payload: memoryview, chosen: list[tuple[int, dict]], work: Work, found: list, done: list[bool],
             with_payload: bool = False, per_object: bool = False) -> int:
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
    if per_object:
        kernels = [_kernel_range(by_name, record) for _i, record in mine]
        answers = work([record for _i, record in mine], section, kernels, code.target_id, payload)
        for (index, _record), answer in zip(mine, answers, strict=True):
            done[index] = True
            found[index] = answer
        return len(mine)
    for index, record in mine:
        done[index] = True
        kernel = _kernel_range(by_name, record)
        found[index] = (work(record, section, kernel, code.target_id, payload) if with_payload
                        else work(record, section, kernel, code.target_id))
    return len(mine)


def decoded_evidence(_record: dict, section: memoryview, found: KernelRange | None, target: str) -> KernelCode | None:
    """each_kernel_code's work that decodes the kernel by the evidence's rules
    (None: its code was not found)."""
    from spillway.report.code_evidence import kernel_evidence

    if found is None:
        return None
    return kernel_evidence(section, found.start, found.size, target, bool(found.private_segment_buffer))


# What evidence_of_kernels reads of each record: where its code object is and which kernel it is.
PLACE_FIELDS = ("file", "bundle_index", "target", "key", "symbol", "name", "image_offset", "archive")


def evidence_of_kernels(paths: list[str], options: ReadOptions, wanted: set[tuple[str, str]]
                        ) -> dict[tuple[str, str], list[KernelCode]]:
    """The evidence of every instance of the kernels ``wanted`` ((target, key)
    pairs, as the gate names them) in the binaries ``paths``: the inputs read
    again (their records' places only), then only the code objects holding
    them.  Kernels not found are absent from the answer."""
    from spillway.report.reader import read_report

    chosen: list[dict] = []

    def keep(rows: list[tuple]) -> None:
        for row in rows:
            record = dict(zip(PLACE_FIELDS, row))
            if (record["target"], record["key"]) in wanted:
                chosen.append(record)

    quiet = dataclasses.replace(options, isa=False, progress=None, require_kernels=False)
    read_report(paths, quiet, rows_sink=keep, rows_fields=PLACE_FIELDS)

    out: dict[tuple[str, str], list[KernelCode]] = {}
    for record, code in zip(chosen, each_kernel_code(paths, quiet, chosen, decoded_evidence)):
        if code is not None:
            out.setdefault((record["target"], record["key"]), []).append(code)
    return out


def printed_rows_evidence(paths: list[str], options: ReadOptions, kernels: list[dict]) -> list[dict]:
    """The records the report table prints, each with its ``isa`` object (None where its
    code was not found): only their code objects are read again and only these kernels
    decoded (report --isa decodes every kernel as it reads).  The command hands this to
    the table's model (render.models.ReportModel.code_of), which calls it for the rows it
    prints; the inputs were read once already, so an error now (they changed since) is
    one line, as any input error."""
    from spillway.report.code_evidence import isa_object

    found = each_kernel_code(paths, options, kernels, decoded_evidence)
    return [dict(k, isa=None if code is None else isa_object(code)) for k, code in zip(kernels, found)]
