"""Occupancy (waves per SIMD) from a kernel's resources, as LLVM computes the
``Occupancy [waves/SIMD]`` figure of ``-Rpass-analysis=kernel-resource-usage``.

LLVM 22's model (amdgpu-binaries.md section 4).  ``amdgpu_waves_per_eu``
attributes leave no trace in a code object, so for kernels that use them the
figure here is what the resources allow and can be higher than the remark.
"""

from __future__ import annotations

from dataclasses import dataclass

from spillway.resources.targets import OccupancyModel, occupancy_model, processor_of


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _align(n: int, granule: int) -> int:
    return _ceil_div(n, granule) * granule


def waves_by_vgprs(vgprs: int, model: OccupancyModel, wave_size: int) -> int:
    granule = model.vgpr_granule[wave_size]
    total = model.vgpr_total[wave_size]
    if vgprs < granule:
        return model.max_waves_per_simd
    return min(max(total // _align(vgprs, granule), 1), model.max_waves_per_simd)


def waves_by_sgprs(sgprs: int, model: OccupancyModel) -> int:
    for limit, waves in model.sgpr_table:
        if sgprs <= limit:
            return waves
    return model.max_waves_per_simd


def waves_by_workgroup_and_lds(lds_bytes: int, max_workgroup_size: int, wave_size: int,
                               max_waves: int, simds: int, lds_per_cu: int, barrier_limit: int) -> int:
    """LLVM's ``getOccupancyWithWorkGroupSizes`` for the range (1, max size)."""
    wgs_by_lds = lds_per_cu // max(lds_bytes, 1)
    if wgs_by_lds == 0:
        return 1
    slots = max_waves * simds

    def props(size: int) -> tuple[int, int, int]:
        waves_per_wg = _ceil_div(size, wave_size)
        per_cu = slots if waves_per_wg == 1 else min(slots // waves_per_wg, barrier_limit)
        groups = min(per_cu, wgs_by_lds)
        return waves_per_wg, groups, waves_per_wg * groups

    min_wpw, max_wgs, max_waves_total = props(1)
    max_wpw, min_wgs, min_waves_total = props(max_workgroup_size)
    if min_waves_total >= max_waves_total:
        min_waves_total, max_waves_total = max_waves_total, min_waves_total
    else:
        threshold = _ceil_div(slots, min_wgs + 1) * min_wgs
        if min_waves_total > threshold and (min_waves_total - threshold) // min_wgs:
            min_waves_total -= min_wgs * min((min_waves_total - threshold) // min_wgs, max_wpw - min_wpw)
        left = (slots - max_wgs * min_wpw) // max_wgs
        if left:
            max_waves_total += max_wgs * min(left, (max_workgroup_size - 1) // wave_size + 1 - min_wpw)
    return min(max(_ceil_div(max_waves_total, simds), 1), max_waves)


@dataclass(frozen=True)
class Occupancy:
    waves_per_simd: int | None
    limit: str            # vgpr, sgpr, lds, workgroup, hardware, unknown target


def compute(target_id: str, *, vgpr_count: int, sgpr_count: int, group_segment_fixed_size: int,
            wavefront_size: int, max_flat_workgroup_size: int,
            workgroup_processor_mode: bool = True) -> Occupancy:
    """Occupancy and what bounds it.  Ties name the resource, not the cap."""
    model = occupancy_model(processor_of(target_id))
    if model is None or wavefront_size not in model.vgpr_granule:
        return Occupancy(None, "unknown target")
    cap = model.max_waves_per_simd
    if model.lds_per_cu_cumode is not None and not workgroup_processor_mode:
        lds, simds, barrier = model.lds_per_cu_cumode, model.simds_per_cu_cumode, model.barrier_limit_cumode
    else:
        lds, simds, barrier = model.lds_per_cu, model.simds_per_cu, model.barrier_limit
    by_wg_lds = waves_by_workgroup_and_lds(group_segment_fixed_size, max(max_flat_workgroup_size, 1),
                                           wavefront_size, cap, simds, lds, barrier)
    candidates = [("vgpr", waves_by_vgprs(vgpr_count, model, wavefront_size))]
    if model.sgpr_table:
        candidates.append(("sgpr", waves_by_sgprs(sgpr_count, model)))
    if by_wg_lds < cap:
        # Tell LDS from the work-group size: without LDS, is the figure still this low?
        no_lds = waves_by_workgroup_and_lds(0, max(max_flat_workgroup_size, 1), wavefront_size,
                                            cap, simds, lds, barrier)
        candidates.append(("lds" if no_lds > by_wg_lds else "workgroup", by_wg_lds))
    best = min(waves for _, waves in candidates)
    if best >= cap:
        return Occupancy(cap, "hardware")
    for name, waves in candidates:
        if waves == best:
            return Occupancy(best, name)
    raise AssertionError("unreachable")
