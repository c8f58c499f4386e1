"""From paths to a report: find device images, parse code objects, derive
occupancy, names and scratch causes."""

from __future__ import annotations

import multiprocessing as mp
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable

from spillway import __version__
from spillway.formats import codeobject
from spillway.resources import occupancy
from spillway.formats.containers import DeviceImage, ScanOptions, ScanResult, scan_buffer, scan_path
from spillway.errors import BitcodeOnly, InputError, NoDeviceCode
from spillway.formats.metadata import KernelMetadata
from spillway.resources.names import demangle, stable_key
from spillway.constants import REPORT_SCHEMA as SCHEMA


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


@lru_cache(maxsize=65536)
def _occupancy(target_id, vgprs, sgprs, lds, wave, max_wg, wgp):
    return occupancy.compute(target_id, vgpr_count=vgprs, sgpr_count=sgprs,
                             group_segment_fixed_size=lds, wavefront_size=wave,
                             max_flat_workgroup_size=max_wg, workgroup_processor_mode=wgp)


FIELDS = ("file", "bundle_index", "target", "code_object_version", "compiler", "symbol", "name", "key",
          "vgpr_count", "agpr_count", "sgpr_count", "vgpr_spill_count", "sgpr_spill_count",
          "private_segment_fixed_size", "uses_dynamic_stack", "group_segment_fixed_size",
          "wavefront_size", "max_flat_workgroup_size", "workgroup_processor_mode",
          "occupancy", "occupancy_limit", "scratch_cause")


def kernel_values(kernel: KernelMetadata, code: codeobject.CodeObject, file: str,
                  bundle_index: int | None) -> tuple:
    """A report record's values in FIELDS order."""
    occ = _occupancy(code.target_id, kernel.vgpr_count, kernel.sgpr_count,
                     kernel.group_segment_fixed_size, kernel.wavefront_size,
                     kernel.max_flat_workgroup_size, kernel.workgroup_processor_mode is not False)
    return (file, bundle_index, code.target_id, code.code_object_version, code.compiler,
            kernel.name, demangle(kernel.name), stable_key(kernel.name),
            kernel.vgpr_count, kernel.agpr_count, kernel.sgpr_count, kernel.vgpr_spill_count,
            kernel.sgpr_spill_count, kernel.private_segment_fixed_size, kernel.uses_dynamic_stack,
            kernel.group_segment_fixed_size, kernel.wavefront_size, kernel.max_flat_workgroup_size,
            kernel.workgroup_processor_mode, occ.waves_per_simd, occ.limit, scratch_cause(kernel))


def kernel_record(kernel: KernelMetadata, code: codeobject.CodeObject, file: str,
                  bundle_index: int | None) -> dict:
    """A report record: a plain dict in KernelRecord's field order (building
    88,000 pydantic models costs seconds; tests check the schema)."""
    return dict(zip(FIELDS, kernel_values(kernel, code, file, bundle_index)))


# -- parsing many code objects on several cores ------------------------------

_IMAGES: list[DeviceImage] = []
_TARGETS: list[str] = []


def _parse_slice(bounds: tuple[int, int]):
    """Parse images[start:stop]; runs in a forked worker that shares the maps."""
    out = []
    for index in range(*bounds):
        image = _IMAGES[index]
        try:
            code = codeobject.parse(image.payload)
        except InputError as exc:
            exc.within(image.container, image.offset or 0, rebase=image.offset is not None)
            exc.file = image.file
            return out, (exc.message, exc.file, exc.container, exc.offset)
        if _target_selected(code.target_id, _TARGETS):
            out.append([kernel_values(k, code, image.file, image.bundle_index) for k in code.kernels])
        else:
            out.append(None)
    return out, None


def _parse_images(images: list[DeviceImage], targets: list[str], progress) -> tuple[int, list[tuple]]:
    """Parse every image; returns (code objects, kernel value tuples) in order."""
    global _IMAGES, _TARGETS
    _IMAGES, _TARGETS = images, targets
    total = sum(image.payload.nbytes for image in images)
    if progress:
        progress(0, total)
    workers = min(os.cpu_count() or 1, 8)
    try:
        if workers > 1 and len(images) >= 32 and total >= 32 << 20 and "fork" in mp.get_all_start_methods():
            step = max(1, len(images) // (workers * 8))
            slices = [(start, min(start + step, len(images))) for start in range(0, len(images), step)]
            with mp.get_context("fork").Pool(workers) as pool:
                results = []
                for (start, stop), result in zip(slices, pool.imap(_parse_slice, slices)):
                    results.append(result)
                    if progress:
                        progress(sum(images[i].payload.nbytes for i in range(start, stop)), total)
        else:
            results = []
            for index in range(len(images)):
                results.append(_parse_slice((index, index + 1)))
                if progress:
                    progress(images[index].payload.nbytes, total)
    finally:
        _IMAGES, _TARGETS = [], []
    values, code_objects = [], 0
    for parsed, error in results:
        code_objects += len(parsed)
        for kernels in parsed:
            if kernels:
                values.extend(kernels)
        if error:
            message, file, container, offset = error
            raise InputError(message, file=file, container=container, offset=offset)
    return code_objects, values


@dataclass
class ReadOptions:
    max_decompressed: int = ScanOptions.max_decompressed
    targets: list[str] = field(default_factory=list)   # processor or full target IDs to keep


def _target_selected(target_id: str, wanted: list[str]) -> bool:
    if not wanted:
        return True
    processor = target_id.split(":", 1)[0]
    return any(w == target_id or w == processor for w in wanted)


def read_path(path: str, options: ReadOptions, progress: Callable[[int, int], None] | None = None
              ) -> tuple[dict, list[dict]]:
    """Read one user-named path.  Raises InputError for bad or empty input."""
    return _finish(scan_path(path, ScanOptions(options.max_decompressed)), path, options, progress)


def read_buffer(data: bytes | memoryview, name: str, options: ReadOptions | None = None
                ) -> tuple[dict, list[dict]]:
    """Read an in-memory file (used by tests and fuzzing)."""
    options = options or ReadOptions()
    return _finish(scan_buffer(memoryview(data), name, ScanOptions(options.max_decompressed)),
                   name, options, None)


def _finish(scan: ScanResult, path: str, options: ReadOptions, progress) -> tuple[dict, list[dict]]:
    if not scan.images:
        if scan.bitcode_only:
            raise BitcodeOnly(file=path, container=scan.bitcode_only[0].split(": ", 1)[-1])
        if scan.kind != "directory":
            raise NoDeviceCode("holds no AMDGPU device code", file=path, container=scan.kind)
    code_objects, values = _parse_images(scan.images, options.targets, progress)
    records = [dict(zip(FIELDS, v)) for v in values]
    file_record = {"path": path, "kind": scan.kind, "bundles": scan.bundles, "code_objects": code_objects,
                   "kernels": len(records), "bitcode_only": scan.bitcode_only,
                   "skipped_without_device_code": len(scan.skipped), "spirv_entries": scan.spirv_entries}
    return file_record, records


def read_report(paths: Iterable[str], options: ReadOptions | None = None,
                progress: Callable[[int, int], None] | None = None) -> dict:
    """The report document (see report.Report for its schema)."""
    options = options or ReadOptions()
    files, kernels = [], []
    for path in paths:
        file_record, records = read_path(path, options, progress)
        files.append(file_record)
        kernels.extend(records)
    return {"schema": SCHEMA, "spillway_version": __version__, "files": files, "kernels": kernels}
