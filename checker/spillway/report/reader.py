"""From paths to a report: find device images, parse code objects, derive
occupancy, names and scratch causes."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import itertools
import mmap
import operator
import os
from dataclasses import dataclass, field
from functools import lru_cache
from collections.abc import Sequence
from typing import Callable, Iterable, Iterator, NamedTuple

from spillway import __version__
from spillway.json_codec import document_chunks, dumps as json_dumps, encode_record, record_layout
from spillway.formats import codeobject, embedded
from spillway.resources import occupancy
from spillway.formats.containers import (DEFAULT_MAX_DECOMPRESSED_TOTAL, DEFAULT_MAX_INFLATION,
                                         DEFAULT_MAX_KERNELS, DecompressionBudget, PendingImages, ScanOptions,
                                         ScanResult, expand, scan_buffer, scan_path, too_many_kernels)
from spillway.errors import BitcodeOnly, InputError, NoDeviceCode
from spillway.formats.metadata import KernelMetadata
from spillway.report.pool import ordered_results, start_pool
from spillway.resources.names import demangle, stable_key
from spillway.resources.targets import MACH_TO_PROCESSOR, processor_of, target_selected
from spillway.constants import REPORT_SCHEMA as SCHEMA
from spillway.report.fields import FIELDS, ROW_FIELDS
from spillway.report.ordered_writer import _Sink


def scratch_cause(kernel: KernelMetadata) -> str:
    """Why a kernel needs scratch.  Scratch without spills is not a spill."""
    spilled = kernel.vgpr_spill_count > 0 or (kernel.sgpr_spill_count > 0 and kernel.private_segment_fixed_size > 0)
    if spilled:
        return "spill"
    if kernel.uses_dynamic_stack:
        return "dynamic_stack"
    if kernel.private_segment_fixed_size > 0:
        return "private"
    return "none"


@lru_cache(maxsize=1 << 17)
def _occupancy(target_id, vgprs, agprs, sgprs, lds, wave, max_wg, wgp, model):
    return occupancy.compute(target_id, vgpr_count=vgprs, agpr_count=agprs, sgpr_count=sgprs,
                             group_segment_fixed_size=lds, wavefront_size=wave,
                             max_flat_workgroup_size=max_wg, workgroup_processor_mode=wgp, model=model)




def kernel_values(kernel: KernelMetadata, code: codeobject.CodeObject, file: str,
                  bundle_index: int | None, image_offset: int | None = None, archive: str | None = None,
                  occupancy_model: str | None = None) -> tuple:
    """A report record's values in FIELDS order.  ``occupancy_model``: llvm22, llvm23,
    llvm24 or producer (the model of the LLVM named in the code object's .comment)."""
    model = occupancy.resolve_model(occupancy_model or _MODEL, code.compiler)
    return _values(kernel, kernel.name, (file, bundle_index, code.target_id, code.code_object_version,
                                         code.compiler), image_offset, archive, model)


def _values(kernel: KernelMetadata, name: str, where: tuple, image_offset: int | None, archive: str | None,
            model: str) -> tuple:
    """kernel_values with what is the same for every kernel of a code object
    worked out once: ``where`` is (file, bundle_index, target, code object
    version, compiler) and ``model`` a concrete model name."""
    return (*where, *_name_values(name), *_resource_values(kernel, where[2], model), image_offset, archive)


def _name_values(name: str) -> tuple[str, str, str]:
    """A record's symbol, name and key (FIELDS order) for a kernel's mangled name."""
    return name, demangle(name), stable_key(name)


def _resource_values(kernel: KernelMetadata, target: str, model: str) -> tuple:
    """A record's values from vgpr_count to scratch_cause (FIELDS order): what
    the kernel's resources give on ``target`` under ``model``."""
    vgprs, agprs, sgprs, lds = kernel.vgpr_count, kernel.agpr_count, kernel.sgpr_count, \
        kernel.group_segment_fixed_size
    occ = _occupancy(target, vgprs, agprs, sgprs, lds, kernel.wavefront_size,
                     kernel.max_flat_workgroup_size, kernel.workgroup_processor_mode is not False, model)
    return (vgprs, agprs, sgprs, kernel.vgpr_spill_count,
            kernel.sgpr_spill_count, kernel.private_segment_fixed_size, kernel.uses_dynamic_stack,
            lds, kernel.wavefront_size, kernel.max_flat_workgroup_size,
            kernel.workgroup_processor_mode, occ.waves_per_simd, occ.limit, model, occ.next,
            scratch_cause(kernel))


def kernel_record(kernel: KernelMetadata, code: codeobject.CodeObject, file: str,
                  bundle_index: int | None) -> dict:
    """A report record: a plain dict in KernelRecord's field order (building
    88,000 pydantic models costs seconds; tests check the schema)."""
    return dict(zip(FIELDS, kernel_values(kernel, code, file, bundle_index)))


# -- parsing many code objects on several cores ------------------------------
#
# A unit of work is one code object (a DeviceImage) or one compressed bundle
# (PendingImages: inflated and parsed in the worker, one code object at a
# time).  Forked workers share the file maps; each returns the kernels of its
# units as compact tuples (FIELDS order), with the strings a unit repeats (the
# same kernel for each target of a bundle) shared, so the parent keeps about
# 300 bytes per kernel, not a dict of 24 keys.  Peak memory is the parent's
# tuples plus, per worker, one inflated code object.

_UNITS: list = []
_TARGETS: list[str] = []
_MODEL: str = occupancy.DEFAULT_MODEL      # ReadOptions.occupancy_model while parsing
_ENCODE = False     # workers hand back JSON lines (report --json), not tuples
_SINK: "_Sink | None" = None    # with _ENCODE: the workers write the lines themselves
_PROJECT: Callable[[tuple], tuple] | None = None   # rows handed back hold only these fields
_ISA = False        # ReadOptions.isa: each row ends with its kernel's isa object (ROW_FIELDS)
_PRESSURE = False   # ReadOptions.pressure: each isa object has the kernel's live registers too
_MAX_KERNELS: int | None = None   # ReadOptions.max_kernels: more in one task is an InputError
# ReadOptions.code_filter with _ISA: only the code of the kernels whose demangled name it
# matches is decoded (the others' rows end with None), and only code objects holding one.
_CODE_FILTER: Callable[[str], bool] | None = None
# ReadOptions.kernel_prefilter: only the kernels whose mangled name it passes are recorded (the others counted).
_PREFILTER: Callable[[str], bool] | None = None
_LINE_INDENT = b"    "
# Below these, parsing stays in one process (forking costs more than it saves).
_PARALLEL_MIN_TASKS = 4
# Tasks handed out per worker ahead of the one being written, when the workers write
# the report themselves (those ahead are put aside on disk): at 4, a worker waiting for
# a task idled 0.17-0.33 s of 3.3 on librocsparse1 7.2.4; at 16, 0.08-0.14 s.
_SINK_WINDOW = 16
_PARALLEL_MIN_BYTES = 32 << 20


def _images_of(unit, counts: ScanResult):
    if isinstance(unit, PendingImages):
        return expand(unit, counts)
    return (unit,)


def _parse_units(number: int, indexes: tuple[int, ...]):
    """Parse _UNITS[i] for i in indexes, task ``number`` of the run; runs in a
    forked worker (or inline).  Returns ((code objects, kernel tuples,
    bitcode-only entries, SPIR-V entries, recorded command lines), error) where error is None, an
    InputError's fields or, when writing to _SINK failed, ("OSError", errno,
    strerror).  With _SINK, the task's JSON lines go there in task order
    (a failed task stops every later one writing)."""
    if _SINK is None:
        return _parse_task(indexes)
    output = _SINK.task(number)
    try:
        result, error = _parse_task(indexes, output.emit)
        output.finish(failed=result is None)
    except OSError as exc:
        output.abandon()
        return None, ("OSError", exc.errno, exc.strerror)
    return result, error


def _parse_task(indexes: tuple[int, ...], emit: Callable[[bytes], None] | None = None):
    """``emit``: where each code object's JSON lines go (_ENCODE), rather
    than into the result."""
    values: list[tuple] = []
    encoded: list[bytes] = []      # _ENCODE: each code object's records, as JSON lines
    if emit is None:
        emit = encoded.append
    kernels = 0
    listed = 0      # kernels of the task's code objects, against _MAX_KERNELS
    unlisted = 0    # kernels of the targets read that _PREFILTER left out
    counts = ScanResult()
    code_objects = 0
    recorded: dict[str, None] = {}     # distinct command lines the compiler recorded, in order
    shared: dict = {}      # a kernel name's (name, demangled name, key), for each target of a bundle
    share = shared.get
    names: dict = {}     # _ENCODE: a kernel's encoded names, for each target of the task's bundle
    skipped = _other_processors(_TARGETS)
    # Parsing makes no reference cycles, and the collector's passes over the
    # growing list of records cost 7% of the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for index in indexes:
            for image in _images_of(_UNITS[index], counts):
                if skipped is not None and codeobject.flags_processor(image.payload) in skipped:
                    # --target: a code object of another processor is not parsed (its metadata
                    # and names were most of a --target read's time: 13 of librocsparse1's 14)
                    code_objects += 1
                    continue
                try:
                    code = codeobject.parse(image.payload, _MAX_KERNELS)
                except InputError as exc:
                    exc.within(image.container, image.offset or 0, rebase=image.offset is not None)
                    exc.file = image.file
                    raise
                code_objects += 1
                listed += len(code.kernels)
                if _MAX_KERNELS is not None and listed > _MAX_KERNELS:
                    raise too_many_kernels(_MAX_KERNELS, image.file)
                if not target_selected(code.target_id, _TARGETS):
                    continue
                if _PREFILTER is not None:
                    kept = [kernel for kernel in code.kernels if _PREFILTER(kernel.name)]
                    unlisted += len(code.kernels) - len(kept)
                    code = dataclasses.replace(code, kernels=kept)
                if code.command_lines:
                    recorded.update(dict.fromkeys(code.command_lines))
                model = occupancy.resolve_model(_MODEL, code.compiler)
                where = (image.file, image.bundle_index, code.target_id, code.code_object_version, code.compiler)
                offset, archive = image.image_offset, image.archive
                # --isa: the code's evidence, decoded here from the bytes just parsed (with a
                # filter, only the matching kernels': the others' rows end with None).
                decoded = code.kernels
                if _ISA and _CODE_FILTER is not None:
                    decoded = [k for k in code.kernels if _CODE_FILTER(_named(k.name, shared)[1])]
                isa: list[dict | None] | None = None
                if _ISA and decoded:
                    isa = list(_code_evidence(image.payload, code, decoded))
                if isa is not None and len(decoded) != len(code.kernels):
                    by_kernel = dict(zip(map(id, decoded), isa))
                    isa = [by_kernel.get(id(k)) for k in code.kernels]
                elif _ISA and isa is None and code.kernels:
                    isa = [None] * len(code.kernels)
                if _ENCODE:
                    # Encoded here, on every core, rather than in the parent (a ROCm library's
                    # report is half a gigabyte of JSON), a code object at a time.
                    if code.kernels:
                        kernels += len(code.kernels)
                        emit(_encode_code_object(code.kernels, where, offset, archive, model, names, isa))
                    continue
                table = _RESOURCE_VALUES.table(code.target_id, model)
                for kernel in code.kernels:
                    # One tuple of names per kernel name across the targets of a bundle, and
                    # the resources' values worked out once per distinct resources.
                    named = share(kernel.name, None)
                    if named is None:
                        named = _named(kernel.name, shared)
                    resources = table.get(kernel[2:])
                    if resources is None:
                        resources = _RESOURCE_VALUES.add(table, kernel[2:],
                                                         _resource_values(kernel, code.target_id, model))
                    values.append((*where, *named, *resources, offset, archive))
                if isa is not None:
                    first = len(values) - len(code.kernels)
                    for at, found in enumerate(isa, first):
                        values[at] = (*values[at], found)
    except InputError as exc:
        return None, (exc.message, exc.file, exc.container, exc.offset)
    finally:
        if collecting:
            gc.enable()
        _drop_mapped_pages(indexes)
    if _ENCODE:
        return (code_objects, EncodedKernels(kernels, encoded), counts.bitcode_only, counts.spirv_entries,
                list(recorded), unlisted), None
    if _PROJECT is not None:
        values = list(map(_PROJECT, values))
    return (code_objects, values, counts.bitcode_only, counts.spirv_entries, list(recorded), unlisted), None


def _other_processors(targets: list[str]) -> frozenset[str] | None:
    """The processors --target leaves out (None: every target kept): a code
    object whose header names one of them is skipped before it is parsed.
    Only processors the header table knows: an unknown machine value is
    parsed, its metadata's target judged as before (target_selected)."""
    if not targets:
        return None
    wanted = {processor_of(target) for target in targets}
    return frozenset(MACH_TO_PROCESSOR.values()) - wanted


def _named(name: str, shared: dict) -> tuple[str, str, str]:
    """A kernel name's (symbol, demangled name, key), worked out once per task."""
    named = shared.get(name)
    if named is None:
        named = shared[name] = _name_values(name)
    return named


def _code_evidence(payload, code: codeobject.CodeObject, kernels: list[KernelMetadata]) -> list[dict]:
    from spillway.report.code_evidence import code_objects_evidence

    return code_objects_evidence(payload, kernels, code.target_id, pressure=_PRESSURE)


# A record line's layout: FIELDS as a record json_codec encodes in C, without
# a dict per kernel (half the encoding time); the same bytes as json_dumps's.
_RecordLine = record_layout("RecordLine", FIELDS)
_encode_line = encode_record


# A record line in four segments, each encoded once for what it depends on:
# where the code object is (once per code object), the kernel's names (once
# per kernel name in a task: the same kernel comes once per target of a
# bundle), what the resources give (once per target, model and resources:
# 73,826 distinct of librocsparse1 7.2.4's 249,970 kernels) and where the
# image sits.  Joined, they are the bytes _encode_lines writes for the row
# (a record is written with its members in order, separated by commas, with
# no spaces), at a fraction of the cost: building and encoding a row per kernel
# was 2.8 of the 7.2 CPU-seconds of that report.
_NAMES_AT, _RESOURCES_AT, _TAIL_AT = FIELDS.index("symbol"), FIELDS.index("vgpr_count"), \
    FIELDS.index("image_offset")
_LineHead = record_layout("LineHead", FIELDS[:_NAMES_AT])
_LineNames = record_layout("LineNames", FIELDS[_NAMES_AT:_RESOURCES_AT])
_LineResources = record_layout("LineResources", FIELDS[_RESOURCES_AT:_TAIL_AT])
_LineTail = record_layout("LineTail", FIELDS[_TAIL_AT:])
# The names segment is _name_values(name), keyed on the name; the resources
# segment is keyed on a kernel's fields after its name and symbol: every input
# of that part of the row besides target and model.


class _ByResources:
    """What a kernel's resources give on a target under a model (its record's
    values from vgpr_count on, or their JSON), kept for the next kernel with
    the same resources: librocsparse1 7.2.4's 249,970 kernels have 73,826
    distinct.  A table per target and model, keyed on a kernel's fields after
    its name and symbol; every table is emptied once they hold ``kept``
    entries between them (a hostile binary must not grow them without end)."""

    def __init__(self, kept: int):
        self.kept, self.held = kept, 0
        self.tables: dict[tuple[str, str], dict[tuple, object]] = {}

    def table(self, target: str, model: str) -> dict:
        table = self.tables.get((target, model))
        if table is None:
            table = self.tables[(target, model)] = {}
        return table

    def add(self, table: dict, key: tuple, value):
        if self.held >= self.kept:
            for kept in self.tables.values():
                kept.clear()
            self.held = 0
        table[key] = value
        self.held += 1
        return value


# (entries per process: about 200 bytes each)
_RESOURCE_SEGMENTS = _ByResources(1 << 15)     # the encoded segments (_encode_code_object)
_RESOURCE_VALUES = _ByResources(1 << 15)       # the values (_parse_task's rows)
assert KernelMetadata._fields[:2] == ("name", "symbol")     # (the key: kernel[2:])
_LINE_SEPARATOR = b",\n" + _LINE_INDENT


def _encode_code_object(kernels: list[KernelMetadata], where: tuple, image_offset: int | None,
                        archive: str | None, model: str, names: dict[str, bytes], isa: list[dict | None] | None = None
                        ) -> bytes:
    """_encode_lines of the code object's rows, from cached segments.
    ``names``: the task's encoded names segments by kernel name; ``isa``:
    each kernel's isa object (--isa), written last in its record."""
    # Each segment is made safe in a log once, when it is encoded (json_codec.encode_record applies
    # untrusted.json_log_safe: names, paths and targets come from the binary); a segment ends between
    # members, never inside a string, so the joined lines are safe too, without a scan of every line.
    head = _encode_line(_LineHead(*where))[:-1]          # (without its closing brace)
    tail = b"," + _encode_line(_LineTail(image_offset, archive))[1:]
    if isa is not None and len(isa) != len(kernels):
        raise ValueError(f"{len(isa)} isa objects for {len(kernels)} kernels")
    # With isa objects: each record's closing brace after its isa member (_with_isa's bytes, without
    # splitting the lines again).
    isa_tail = tail[:-1] + b',"isa":' if isa is not None else b""
    segments = _RESOURCE_SEGMENTS.table(where[2], model)
    parts: list[bytes] = []
    extend = parts.extend
    for number, kernel in enumerate(kernels):
        named = names.get(kernel.name)
        resources = segments.get(kernel[2:])
        if named is None:
            name = kernel.name
            named = names[name] = b"," + _encode_line(_LineNames(*_name_values(name)))[1:-1]
        if resources is None:
            resources = _RESOURCE_SEGMENTS.add(segments, kernel[2:], (b"," + _encode_line(
                _LineResources(*_resource_values(kernel, where[2], model)))[1:-1]))
        if isa is None:
            extend((_LINE_SEPARATOR, head, named, resources, tail))
        else:
            extend((_LINE_SEPARATOR, head, named, resources, isa_tail, _encode_line(isa[number]), b"}"))
    parts[0] = _LINE_INDENT        # the first line has no separator before it
    return b"".join(parts)


def _with_isa(lines: bytes, isa: list[dict | None]) -> bytes:
    """Records (one per line, joined by ``,\\n``) with an ``isa`` member added
    last to each, in order."""
    records = lines.split(_LINE_SEPARATOR)
    return _LINE_SEPARATOR.join([record[:-1] + b',"isa":' + _encode_line(found) + b"}"
                                 for record, found in zip(records, isa, strict=True)])


def _encode_lines(values: list[tuple]) -> bytes:
    """Kernel rows as JSON records, one per line (indented), joined by ``,\\n``;
    rows with an isa object (ROW_FIELDS) have it last."""
    lines = [_LINE_INDENT + _encode_line(_RecordLine(*row[:len(FIELDS)])) for row in values]
    if values and len(values[0]) > len(FIELDS):
        return _with_isa(b",\n".join(lines), [row[-1] for row in values])
    return b",\n".join(lines)


class EncodedKernels(NamedTuple):
    """A task's kernel records as JSON: per code object, one record per line,
    joined by ``,\n``."""

    kernels: int
    pieces: list[bytes]


def _drop_mapped_pages(indexes: tuple[int, ...]) -> None:
    """Forget the pages of the mapped files these units were read from
    (MADV_DONTNEED: on a read-only file mapping the data stays in the page
    cache and comes back on the next touch), so a worker's RSS does not grow
    with the part of the library it has read."""
    maps = {id(m): m for m in (getattr(_UNITS[i].payload, "obj", None) for i in indexes)
            if isinstance(m, mmap.mmap)}
    for mapped in maps.values():
        try:
            mapped.madvise(mmap.MADV_DONTNEED)
        except (OSError, ValueError, AttributeError):   # closed, or no madvise on this platform
            pass


def _tasks(units: list) -> list[tuple[int, ...]]:
    """Group small code objects into tasks of about 4 MB; a compressed bundle
    is a task of its own."""
    tasks: list[tuple[int, ...]] = []
    current: list[int] = []
    size = 0
    for index, unit in enumerate(units):
        if isinstance(unit, PendingImages):
            if current:
                tasks.append(tuple(current))
                current, size = [], 0
            tasks.append((index,))
            continue
        current.append(index)
        size += unit.payload.nbytes
        if size >= 4 << 20 or len(current) >= 64:
            tasks.append(tuple(current))
            current, size = [], 0
    if current:
        tasks.append(tuple(current))
    return tasks


def _unit_size(unit) -> int:
    if isinstance(unit, PendingImages):
        return unit.bundle.header.uncompressed_size
    return unit.payload.nbytes


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3      # glibc's mallopt parameters


@lru_cache(maxsize=1)
def _tune_allocator() -> None:
    """Keep glibc's malloc from handing freed memory back to the system and
    asking for it again: every inflated code object and encoded piece is a
    block of hundreds of kilobytes, and with glibc's defaults each one was
    fresh pages (page faults, zeroing: 0.4-0.6 CPU-s per process on
    librocsparse1 7.2.4).  Up to 32 MiB blocks come from the heap, and up to
    32 MiB of free heap is kept (128 MiB cost 50 MB more RSS over the process
    tree for no measurable speed).  Set once, before the pool forks (the workers inherit it); a
    no-op where there is no glibc."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, 32 << 20)


def iter_units(units: list, targets: list[str], progress=None, model: str = occupancy.DEFAULT_MODEL, *,
               encode: bool = False, fields: tuple[str, ...] | None = None, isa: bool = False,
               max_kernels: int | None = None, code_filter: Callable[[str], bool] | None = None,
               pressure: bool = False, prefilter: Callable[[str], bool] | None = None):
    """Parse every unit; yield (code objects, kernel tuples, bitcode-only
    entries, SPIR-V entries, recorded command lines, kernels ``prefilter``
    left out) per task, in order.  Raises the first InputError.
    ``encode``: the kernels come as EncodedKernels, not tuples.  ``fields``:
    the tuples hold these fields (of ROW_FIELDS, in this order), not all of
    them.  ``isa``: each kernel's code is decoded too (its row ends with its
    isa object; ``fields`` may name it).  ``max_kernels``: a task (or a code
    object, before its kernels are decoded) with more is an InputError; the
    caller counts the run's total (DecompressionBudget.charge_kernels).
    ``code_filter`` (with ``isa``): decode only the code of the kernels whose
    demangled name it accepts; the others' rows end with None.  ``pressure``
    (with ``isa``): each isa object has the kernel's live registers too
    (report.code_evidence).  ``prefilter``: only the kernels whose mangled
    name it passes are recorded (ReadOptions.kernel_prefilter)."""
    global _UNITS, _TARGETS, _MODEL, _ENCODE, _PROJECT, _ISA, _MAX_KERNELS, _CODE_FILTER, _PRESSURE, _PREFILTER
    _UNITS, _TARGETS, _MODEL, _ENCODE, _ISA, _PRESSURE = units, targets, model, encode, isa, isa and pressure
    _MAX_KERNELS, _CODE_FILTER, _PREFILTER = max_kernels, code_filter, prefilter
    _PROJECT = projection(fields) if fields else None
    total = sum(_unit_size(u) for u in units)
    if progress:
        progress(0, total)
    tasks = _tasks(units)
    if total >= _PARALLEL_MIN_BYTES:
        _tune_allocator()
    workers = _worker_count()
    parallel = (workers > 1 and len(tasks) >= _PARALLEL_MIN_TASKS and total >= _PARALLEL_MIN_BYTES
                and hasattr(os, "fork"))
    if _SINK is not None:
        _SINK.start()
    try:
        with contextlib.ExitStack() as stack:
            results: Iterable[tuple]
            if parallel:
                if _ISA:
                    # The decoder's modules (numpy among them) imported once here, before the fork,
                    # rather than in every worker (0.16 CPU-s each).
                    import spillway.report.code_evidence  # noqa: F401
                # Leaving the pool (an error, or the caller stopping) terminates its workers.
                # The workers inherit every object of the parent (the CLI's imports: hundreds of
                # thousands); frozen, the collector never walks them, so their pages stay shared.
                gc.freeze()
                stack.callback(gc.unfreeze)
                # Nor does it walk what the parent makes meanwhile: the workers' answers (a
                # tuple per kernel, unpickled) and what callers fold them into make no
                # reference cycles; without its passes over them the parent of a check on
                # librocsparse1 7.2.4 needs 1.45 CPU-s, not 1.8.
                if gc.isenabled():
                    gc.disable()
                    stack.callback(gc.enable)
                arguments = list(enumerate(tasks))
                pool = start_pool(stack, workers, _parse_units, arguments)  # workers that leave Ctrl-C to us
                # Tasks handed out ahead of the one being written: each result is small when the
                # workers write the records themselves (the tasks ahead are put aside on disk).
                # (well within the sink's slots for tasks put aside: a slot is reused 64 tasks on)
                window = min(workers * _SINK_WINDOW, _Sink._SLOTS // 2) if _SINK is not None else workers + 1
                results = ordered_results(pool, window)
            else:
                results = itertools.starmap(_parse_units, enumerate(tasks))
            for task, (result, error) in zip(tasks, results):
                if error and error[0] == "OSError":
                    raise OSError(error[1], error[2])
                if error:
                    message, file, container, offset = error
                    raise InputError(message, file=file, container=container, offset=offset)
                if progress:
                    progress(sum(_unit_size(units[i]) for i in task), total)
                yield result
    finally:
        _UNITS, _TARGETS, _MODEL, _ENCODE, _PROJECT, _ISA = [], [], occupancy.DEFAULT_MODEL, False, None, False
        _PRESSURE = False
        _MAX_KERNELS = _CODE_FILTER = _PREFILTER = None


def projection(fields: tuple[str, ...]) -> Callable[[tuple], tuple]:
    """A function from a FIELDS (or ROW_FIELDS) row to the tuple of ``fields`` (two or more)."""
    if len(fields) < 2:
        raise ValueError("a projection keeps two fields or more")
    return operator.itemgetter(*(ROW_FIELDS.index(f) for f in fields))  # type: ignore[return-value]


class KernelTable(Sequence):
    """Kernel records kept compact: one tuple per kernel in FIELDS order, or
    ROW_FIELDS with --isa (a dict of 24 keys costs about 1.2 KB; a ROCm library has 250,000 kernels).
    Indexing and iterating give dicts, made on demand; ``rows`` are the
    tuples (``json_chunks`` writes them one kernel per line)."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[tuple] | None = None):
        self.rows = rows if rows is not None else []

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [dict(zip(ROW_FIELDS, row)) for row in self.rows[index]]
        return dict(zip(ROW_FIELDS, self.rows[index]))

    def __iter__(self):
        for row in self.rows:
            yield dict(zip(ROW_FIELDS, row))

    def __eq__(self, other) -> bool:
        if isinstance(other, KernelTable):
            return self.rows == other.rows
        return isinstance(other, list) and list(self) == other

    __hash__ = None  # type: ignore[assignment]

    def extend(self, other) -> None:
        if isinstance(other, KernelTable):
            self.rows.extend(other.rows)
        else:
            self.rows.extend(tuple(record[f] for f in ROW_FIELDS if f in record) for record in other)


def json_chunks(document: dict):
    """A report document as JSON bytes, in chunks: the header pretty-printed
    as ``json_dumps(indent=True)`` writes it, then one kernel per line, so a 250,000-kernel
    report is never one string in memory."""
    kernels = document["kernels"]
    if not isinstance(kernels, KernelTable):
        yield json_dumps(document, indent=True) + b"\n"
        return
    yield from document_chunks({k: v for k, v in document.items() if k != "kernels"}, {"kernels": iter(kernels)})


@dataclass(frozen=True)
class ReadOptions:
    """How inputs are read (the command line's read options): frozen, a command
    that reads with other settings makes its own (dataclasses.replace)."""

    max_decompressed: int = ScanOptions.max_decompressed
    targets: list[str] = field(default_factory=list)   # processor or full target IDs to keep
    scan_embedded: bool = False   # read code objects embedded as data in host sections (--scan-embedded)
    kpack_archives: list[str] = field(default_factory=list)   # .kpack files or folders for split binaries
    occupancy_model: str = occupancy.DEFAULT_MODEL   # llvm22, llvm23, llvm24 or producer (--occupancy-model)
    max_decompressed_total: int = DEFAULT_MAX_DECOMPRESSED_TOTAL   # per run (--max-decompressed-total)
    max_inflation: float = DEFAULT_MAX_INFLATION   # per input: times its size (--max-inflation)
    max_kernels: int = DEFAULT_MAX_KERNELS   # per run (--max-kernels)
    verify_hashes: bool = False   # check compressed bundles' MD5 hashes (--verify-hashes)
    # Called as the read goes with (bytes just read, bytes of the input being read), and
    # (0, its size) as each input starts: a progress bar, or work done meanwhile (baseline
    # write hashes its inputs).
    progress: Callable[[int, int], None] | None = None
    # A read that finds no kernel is an InputError (no_kernels_found), not an empty report.
    require_kernels: bool = False
    # Decode each kernel's machine code too (--isa): records get an ``isa`` object.
    isa: bool = False
    # With isa: decode only the code of the kernels whose demangled name this accepts
    # (report FILTER --isa: resources.names.NameFilter); the others' isa is None.
    code_filter: Callable[[str], bool] | None = None
    # With isa: each kernel's live registers too (--pressure: isa.liveness, opt-in for its cost).
    pressure: bool = False
    # Only the kernels whose mangled name this passes are recorded, the others counted in their file's
    # kernels (spillway code: resources.names.mangled_prefilter of its FILTER; their names not demangled).
    kernel_prefilter: Callable[[str], bool] | None = None

    def budget(self) -> DecompressionBudget:
        return DecompressionBudget(self.max_inflation, self.max_decompressed_total, self.max_kernels)

    def scan_options(self, budget: DecompressionBudget | None = None) -> ScanOptions:
        return ScanOptions(self.max_decompressed, scan_embedded=self.scan_embedded, budget=budget,
                           kpack_archives=tuple(self.kpack_archives), verify_hashes=self.verify_hashes)


RowsSink = Callable[[list[tuple]], None]


def no_kernels_found(paths: Iterable[str], targets: list[str], side: str = "") -> InputError:
    """The error of a read that found no kernel (``side``: which side of a comparison)."""
    where = f"{side}: " if side else ""
    return InputError(f"{where}no kernels found in {', '.join(paths)}"
                      + (" for the selected targets" if targets else ""))


def read_path(path: str, options: ReadOptions, progress: Callable[[int, int], None] | None = None, *,
              budget: DecompressionBudget | None = None, compact: bool = False,
              rows_sink: RowsSink | None = None, rows_fields: tuple[str, ...] | None = None
              ) -> tuple[dict, list[dict] | KernelTable]:
    """Read one user-named path.  Raises InputError for bad or empty input.
    ``compact``: the records as a KernelTable (tuples) rather than dicts.
    ``rows_sink``: each batch of rows goes to it as it is read, and none is kept;
    ``rows_fields``: its rows hold only these fields (in this order)."""
    budget = budget or options.budget()
    progress = progress or options.progress
    return _finish(scan_path(path, options.scan_options(budget)), path, options, progress, compact, rows_sink,
                   rows_fields, budget)


def read_buffer(data: bytes | memoryview, name: str, options: ReadOptions | None = None
                ) -> tuple[dict, list[dict] | KernelTable]:
    """Read an in-memory file (used by tests and fuzzing)."""
    options = options or ReadOptions()
    budget = options.budget()
    return _finish(scan_buffer(memoryview(data), name, options.scan_options(budget)),
                   name, options, None, False, budget=budget)


def _refuse_without_images(scan: ScanResult, path: str) -> None:
    if not scan.images:
        if scan.bitcode_only:
            raise BitcodeOnly(file=path, container=scan.bitcode_only[0].split(": ", 1)[-1])
        if scan.embedded_not_read:
            raise InputError(embedded.not_read_message(scan.embedded_not_read, scan.embedded_files),
                             file=path, container=scan.kind)
        if scan.kind != "directory":
            raise NoDeviceCode("holds no AMDGPU device code", file=path, container=scan.kind)


class _FileTally:
    """What one input's units add up to: its entry in the report's ``files``."""

    def __init__(self, scan: ScanResult, path: str):
        self.scan, self.path = scan, path
        self.code_objects = self.kernels = 0
        self.bitcode_only = list(scan.bitcode_only)
        self.spirv = scan.spirv_entries
        self.command_lines: dict[str, None] = {}

    def add(self, found: int, kernels: int, bitcode: list, spirv_entries: int, command_lines: list[str]) -> None:
        self.code_objects += found
        self.kernels += kernels
        self.bitcode_only.extend(bitcode)
        self.spirv += spirv_entries
        self.command_lines.update(dict.fromkeys(command_lines))

    def record(self) -> dict:
        scan, path = self.scan, self.path
        if not self.code_objects and scan.kind != "directory":
            # Compressed bundles are opened only now: they may have held no code object.
            if self.bitcode_only:
                raise BitcodeOnly(file=path, container=self.bitcode_only[0].split(": ", 1)[-1])
            raise NoDeviceCode("holds no AMDGPU device code", file=path, container=scan.kind)
        record = {"path": path, "kind": scan.kind, "bundles": scan.bundles, "code_objects": self.code_objects,
                  "kernels": self.kernels, "bitcode_only": self.bitcode_only,
                  "skipped_without_device_code": len(scan.skipped), "spirv_entries": self.spirv}
        if self.command_lines:      # only then: other files' records stay as they were
            record["command_lines"] = list(self.command_lines)
        return record


def _finish(scan: ScanResult, path: str, options: ReadOptions, progress, compact: bool,
            rows_sink: RowsSink | None = None, rows_fields: tuple[str, ...] | None = None,
            budget: DecompressionBudget | None = None) -> tuple[dict, list[dict] | KernelTable]:
    _refuse_without_images(scan, path)
    tally, values = _FileTally(scan, path), []
    fields = rows_fields if rows_sink is not None else None
    budget = budget or options.budget()
    for found, rows, bitcode, spirv_entries, command_lines, unlisted in iter_units(
            scan.images, options.targets, progress, options.occupancy_model, fields=fields, isa=options.isa,
            max_kernels=options.max_kernels, code_filter=options.code_filter, pressure=options.pressure,
            prefilter=options.kernel_prefilter):
        budget.charge_kernels(len(rows) + unlisted, path)
        tally.add(found, len(rows) + unlisted, bitcode, spirv_entries, command_lines)
        if rows_sink is not None:
            rows_sink(rows)
        else:
            values.extend(rows)
    file_record = tally.record()
    records = KernelTable(values) if compact else [dict(zip(ROW_FIELDS, v)) for v in values]
    return file_record, records


def _worker_count() -> int:
    return min(os.cpu_count() or 1, 8)


def report_json(paths: Iterable[str], options: ReadOptions | None = None,
                progress: Callable[[int, int], None] | None = None, *,
                on_empty: Callable[[], None] | None = None) -> Iterator[bytes]:
    """The report document as JSON, written while it is read: the workers
    encode their kernels, one per line, and the document's pieces come out
    in order, so memory does not grow with the number of kernels.  The same
    document as ``json_chunks(read_report(...))`` but for the order of its
    members: ``files`` comes after ``kernels``, as it is known only then.

    Nothing is produced before the first kernel is read, so an input that
    holds no device code gives its error before any output; an error later
    ends the stream (written atomically to a file, it leaves no file).
    ``on_empty`` is called before a document without kernels is produced (it
    may raise)."""
    yield from _report_json(paths, options, progress, on_empty, None)


def write_report_json(fd: int, paths: Iterable[str], options: ReadOptions | None = None,
                      progress: Callable[[int, int], None] | None = None, *,
                      on_empty: Callable[[], None] | None = None) -> None:
    """``report_json``'s bytes written to the file descriptor ``fd``, the
    kernels by the workers themselves (see _Sink).  Nothing is written before
    the first kernel; an OSError writing is raised as such."""
    for _ in _report_json(paths, options, progress, on_empty, fd):
        pass


def _report_json(paths: Iterable[str], options: ReadOptions | None, progress, on_empty,
                 fd: int | None) -> Iterator[bytes]:
    global _SINK
    options = options or ReadOptions()
    progress = progress or options.progress
    paths = list(paths)
    budget = options.budget()
    head = json_dumps({"schema": SCHEMA, "spillway_version": __version__,
                       "occupancy_model": options.occupancy_model}, indent=True)
    opening = head[:-2] + b',\n  "kernels": [\n'
    sink = _Sink(fd, opening, _worker_count() + 1) if fd is not None else None
    opened = False
    files = []
    try:
        for path in paths:
            scan = scan_path(path, options.scan_options(budget))
            _refuse_without_images(scan, path)
            tally = _FileTally(scan, path)
            _SINK = sink
            for found, encoded, bitcode, spirv_entries, command_lines, unlisted in iter_units(
                    scan.images, options.targets, progress, options.occupancy_model, encode=True,
                    isa=options.isa, max_kernels=options.max_kernels, pressure=options.pressure,
                    prefilter=options.kernel_prefilter):
                budget.charge_kernels(encoded.kernels + unlisted, path)
                tally.add(found, encoded.kernels + unlisted, bitcode, spirv_entries, command_lines)
                for piece in encoded.pieces:
                    yield (b",\n" if opened else opening) + piece
                    opened = True
            files.append(tally.record())
    finally:
        _SINK = None
        if sink is not None:
            sink.close()
    opened = opened or (sink is not None and sink.opened)
    if not opened and on_empty is not None:
        on_empty()
    if not opened and options.require_kernels:
        raise no_kernels_found(paths, options.targets)
    tail = json_dumps({"files": files}, indent=True)[1:]     # '\n  "files": ...}'
    last = (b"\n  ]," if opened else head[:-2] + b',\n  "kernels": [],') + tail + b"\n"
    if sink is not None:
        sink.write(last)
    else:
        yield last


def read_report(paths: Iterable[str], options: ReadOptions | None = None,
                progress: Callable[[int, int], None] | None = None, *, compact: bool = False,
                rows_sink: RowsSink | None = None, rows_fields: tuple[str, ...] | None = None) -> dict:
    """The report document (see report.Report for its schema).  ``compact``:
    its kernels are a KernelTable (tuples, dicts on demand) -- what the
    command line uses, as a ROCm library has hundreds of thousands.
    ``rows_sink``: the kernels' rows (FIELDS order) go to it a batch at a time
    as they are read, and the document's kernels stay empty (``files`` counts
    them): what check and baseline write use, to fold rows while the workers
    parse and never hold them all; ``rows_fields``: those rows hold only these
    fields, in this order (what the workers hand over is then smaller)."""
    options = options or ReadOptions()
    progress = progress or options.progress
    paths = list(paths)
    budget = options.budget()          # decompressed totals count over the whole run
    files = []
    kernels: list[dict] | KernelTable = KernelTable() if compact else []
    for path in paths:
        file_record, records = read_path(path, options, progress, budget=budget, compact=compact,
                                         rows_sink=rows_sink, rows_fields=rows_fields)
        files.append(file_record)
        kernels.extend(records)
    if options.require_kernels and not any(f["kernels"] for f in files):
        raise no_kernels_found(paths, options.targets)
    return {"schema": SCHEMA, "spillway_version": __version__, "occupancy_model": options.occupancy_model,
            "files": files, "kernels": kernels}
