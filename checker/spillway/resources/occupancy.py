"""Occupancy (waves per SIMD) from a kernel's resources, as LLVM computes the
``Occupancy [waves/SIMD]`` figure of ``-Rpass-analysis=kernel-resource-usage``,
and the next step: what the limiting resource must come down to for one more
wave.

Three models, one per LLVM version whose remarks they reproduce:

``llvm22``
    amdgpu-binaries.md section 4: an SGPR step table before GFX10, LDS counted
    to the byte.
``llvm23``
    LLVM 23.1 (llvm-project#201342: SGPRs cost ``align(n, 16) + 16`` (the trap
    handler's reserve) of 800 per SIMD before GFX10, 512 in granules of 8 on
    GFX6/7; #205637: a work-group's LDS is rounded up to the allocation granule).
``llvm24``
    Debian's LLVM 24 snapshot of October 2026: LLVM 23's rules; RDNA 2 and later
    allocate LDS in 1 KiB blocks (#219495, #224852); GFX6 counts 64 KiB of LDS
    per CU; gfx1310 gets parameters of its own.

Before GFX10, LLVM 23 and 24 also charge an LDS- or work-group-limited kernel
the SGPRs ``getMinNumSGPRs`` gives for that limit, which the reworked SGPR
inverse can turn into one wave fewer (see ``_Kernel.wg_lds``).  Each model was
fitted to its compiler's remarks (scripts/occupancy-sweep.py); hand-written,
as no library reproduces LLVM's arithmetic.

Per-processor parameters are in :mod:`spillway.resources.targets`.
``amdgpu_waves_per_eu`` attributes leave no trace in a code object, so for
kernels that use them the figure here is what the resources allow and can be
higher than the remark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final, Optional

from .targets import MODEL_NAMES, SGPR_TRAP_RESERVE, OccupancyModel, occupancy_model, processor_of

DEFAULT_MODEL = "llvm23"            # the newest released LLVM's
# The model of figures whose document names none: version-1 baselines, and report
# records written before spillway had occupancy models.
UNNAMED_MODEL: Final = "llvm22"
MODEL_CHOICES = (*MODEL_NAMES, "producer")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _align(n: int, granule: int) -> int:
    return _ceil_div(n, granule) * granule


# -- choosing a model ------------------------------------------------------------

_CLANG_MAJOR = re.compile(r"clang version (\d+)\.")


def model_for_compiler(compiler: str | None, default: str = DEFAULT_MODEL) -> str:
    """The model of the LLVM that produced a code object, from its ``.comment``
    ("Debian clang version 23.1.4", "AMD clang version 22.0.0git (...)"): LLVM 22 and
    older get ``llvm22``, 23 ``llvm23``, 24 and newer ``llvm24``; no clang named:
    ``default``."""
    majors = [int(m) for m in _CLANG_MAJOR.findall(compiler or "")]
    if not majors:
        return default
    major = max(majors)
    if major <= 22:
        return "llvm22"
    return "llvm23" if major == 23 else "llvm24"


def resolve_model(choice: str, compiler: str | None) -> str:
    """A concrete model name for ``choice`` (a model name or ``producer``)."""
    if choice == "producer":
        return model_for_compiler(compiler)
    if choice not in MODEL_NAMES:
        raise ValueError(f"unknown occupancy model {choice!r} (choose from {', '.join(MODEL_CHOICES)})")
    return choice


# -- the pieces of the formula ---------------------------------------------------

def waves_by_vgprs(vgprs: int, model: OccupancyModel, wave_size: int) -> int:
    granule = model.vgpr_granule[wave_size]
    total = model.vgpr_total[wave_size]
    if vgprs < granule:
        return model.max_waves_per_simd
    return min(max(total // _align(vgprs, granule), 1), model.max_waves_per_simd)


def waves_by_sgprs(sgprs: int, model: OccupancyModel, llvm: str = "llvm22") -> int:
    """SGPR limit (only before GFX10).  LLVM 22: a step table; LLVM 23+: the
    inverse of the per-wave SGPR budget, ``total // (align(n, granule) + 16)``."""
    if llvm == "llvm22":
        for limit, waves in model.sgpr_table:
            if sgprs <= limit:
                return waves
        return model.max_waves_per_simd
    if not model.sgpr_total or sgprs <= 0:
        return model.max_waves_per_simd
    per_wave = _align(sgprs, model.sgpr_granule) + SGPR_TRAP_RESERVE
    return min(max(model.sgpr_total // per_wave, 1), model.max_waves_per_simd)


def min_sgprs_for_waves(waves: int, model: OccupancyModel) -> int:
    """LLVM's ``getMinNumSGPRs``: the fewest SGPRs a kernel limited to ``waves`` is
    charged for (one more than the budget of ``waves + 1``), capped at the addressable
    count; 0 at the cap."""
    if waves >= model.max_waves_per_simd or not model.sgpr_total:
        return 0
    budget = model.sgpr_total // (waves + 1) - SGPR_TRAP_RESERVE
    return min(budget // model.sgpr_granule * model.sgpr_granule + 1, model.sgpr_addressable)


@lru_cache(maxsize=1 << 16)
def waves_by_workgroup_and_lds(lds_bytes: int, max_workgroup_size: int, wave_size: int,
                               max_waves: int, simds: int, lds_per_cu: int, barrier_limit: int,
                               lds_granule: int = 1) -> int:
    """LLVM's ``getOccupancyWithWorkGroupSizes`` for the range (1, max size);
    LLVM 23+ round the work-group's LDS up to ``lds_granule`` first."""
    if lds_bytes > 0 and lds_granule > 1:
        lds_bytes = _align(lds_bytes, lds_granule)
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


# -- one kernel --------------------------------------------------------------------

@dataclass(frozen=True)
class Occupancy:
    waves_per_simd: Optional[int]
    limit: str                      # vgpr, sgpr, lds, workgroup, hardware, unknown target
    model: str = DEFAULT_MODEL      # llvm22, llvm23, llvm24
    next: Optional[dict] = None     # {"waves": N, "needs": [{"resource": ..., "at_most": ...}]}


@dataclass(frozen=True, eq=False)       # (one per parameters, from _kernel_for: hashed by identity)
class _Kernel:
    """The figures a model reads, and the per-mode parameters it needs."""

    model: OccupancyModel
    llvm: str
    wave: int
    lds_pool: int
    simds: int
    barrier: int
    lds_granule: int
    # The next-step searches' answers, by (resource, ..., goal); see _threshold.
    thresholds: dict = field(default_factory=dict, compare=False, hash=False, repr=False)
    # Each limit's answers by its inputs: a library's distinct kernels repeat the same
    # few hundred register counts and LDS sizes (bounded like thresholds).
    _by_vgprs: dict = field(default_factory=dict, compare=False, hash=False, repr=False)
    _by_sgprs: dict = field(default_factory=dict, compare=False, hash=False, repr=False)
    _by_wg_lds: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def vgpr(self, vgprs: int) -> int:
        waves = self._by_vgprs.get(vgprs)
        if waves is None:
            waves = _kept(self._by_vgprs, vgprs, waves_by_vgprs(vgprs, self.model, self.wave))
        return waves

    def sgpr(self, sgprs: int) -> int:
        if self.model.gfx_major >= 10:
            return self.model.max_waves_per_simd
        waves = self._by_sgprs.get(sgprs)
        if waves is None:
            waves = _kept(self._by_sgprs, sgprs, waves_by_sgprs(sgprs, self.model, self.llvm))
        return waves

    def wg_lds(self, lds: int, max_wg: int) -> int:
        """The work-group/LDS limit.  LLVM 23+ before GFX10: the SGPR count the kernel is
        charged for is at least ``getMinNumSGPRs`` of that limit, and the reworked SGPR
        inverse turns that minimum into fewer waves (LDS allowing 9 waves on gfx900 prints 8)."""
        waves = self._by_wg_lds.get((lds, max_wg))
        if waves is not None:
            return waves
        waves = waves_by_workgroup_and_lds(lds, max(max_wg, 1), self.wave, self.model.max_waves_per_simd,
                                           self.simds, self.lds_pool, self.barrier, self.lds_granule)
        if self.llvm != "llvm22" and self.model.gfx_major < 10 and waves < self.model.max_waves_per_simd:
            waves = min(waves, waves_by_sgprs(min_sgprs_for_waves(waves, self.model), self.model, self.llvm))
        return _kept(self._by_wg_lds, (lds, max_wg), waves)


def _kept(answers: dict, key, value):
    """``answers[key] = value``, the dict emptied first once it holds _THRESHOLDS_KEPT
    entries (a hostile binary's counts must not grow it without end)."""
    if len(answers) >= _THRESHOLDS_KEPT:
        answers.clear()
    answers[key] = value
    return value


def _register_total(model: OccupancyModel, vgprs: int, agprs: int | None) -> int:
    # gfx90a class: .vgpr_count already holds align(arch, 4) + AGPRs; gfx908: separate files.
    if model.agprs == "separate" and agprs:
        return max(vgprs, agprs)
    return vgprs


def compute(target_id: str, *, vgpr_count: int, sgpr_count: int, group_segment_fixed_size: int,
            wavefront_size: int, max_flat_workgroup_size: int, workgroup_processor_mode: bool = True,
            agpr_count: int | None = None, model: str = DEFAULT_MODEL) -> Occupancy:
    """Occupancy, what bounds it (ties name the resource, not the cap), and the
    next step, under one LLVM model (``llvm22``, ``llvm23``, ``llvm24``)."""
    if model not in MODEL_NAMES:
        raise ValueError(f"unknown occupancy model {model!r}")
    k = _kernel_for(target_id, model, wavefront_size, bool(workgroup_processor_mode))
    if k is None:
        return Occupancy(None, "unknown target", model)
    # What the model does not read is left out of the cached answer's key: AGPRs count
    # apart from VGPRs only on gfx908 (gfx90a's .vgpr_count holds both), and SGPRs bound
    # occupancy only before GFX10.
    agprs = (agpr_count or 0) if k.model.agprs == "separate" else 0
    sgprs = sgpr_count if k.model.gfx_major < 10 else 0
    max_wg = max(max_flat_workgroup_size, 1)
    # Registers enter the answer only through the waves each register file allows (the
    # limits, and the next step's thresholds, which hold whatever the count above them),
    # so the answer is kept by those waves: librocsparse1 7.2.4's 52,500 distinct inputs
    # are 11,440 keys.  (agprs: waves, or -1 for none, as 0 AGPRs takes another branch.)
    key = (k, k.vgpr(vgpr_count), k.vgpr(agprs) if agprs else -1, k.sgpr(sgprs) if sgprs else -1,
           group_segment_fixed_size, max_wg)
    found = _BY_WAVES.get(key)
    if found is None:
        found = _kept(_BY_WAVES, key, _compute(k, vgpr_count, agprs, sgprs, group_segment_fixed_size, max_wg))
    return found


_BY_WAVES: dict = {}


def _compute(k: _Kernel, vgprs: int, agprs: int, sgprs: int, lds: int, max_wg: int) -> Occupancy:
    waves, limit = _evaluate(k, vgprs, agprs, sgprs, lds, max_wg)
    return Occupancy(waves, limit, k.llvm, _next_step(k, waves, vgprs, agprs, sgprs, lds, max_wg))


@lru_cache(maxsize=4096)
def _kernel_for(target_id: str, model: str, wavefront_size: int, workgroup_processor_mode: bool
                ) -> Optional[_Kernel]:
    """The parameters of one target, model, wave size and mode (None: no model),
    made once: a library has hundreds of thousands of kernels and a few dozen of these."""
    params = occupancy_model(processor_of(target_id), model)
    if params is None or model not in params.models or wavefront_size not in params.vgpr_granule:
        return None
    cu_mode = params.lds_per_cu_cumode is not None and not workgroup_processor_mode
    if cu_mode:
        pool, simds, barrier = params.lds_per_cu_cumode, params.simds_per_cu_cumode, params.barrier_limit_cumode
    else:
        pool, simds, barrier = params.lds_per_cu, params.simds_per_cu, params.barrier_limit
    # cu_mode implies the CU-mode figures are set (lds_per_cu_cumode is not None).
    return _Kernel(params, model, wavefront_size, pool, simds, barrier,  # type: ignore[arg-type]
                   params.lds_granule_for(model, cu_mode))


def _evaluate(k: _Kernel, vgprs: int, agprs: int, sgprs: int, lds: int, max_wg: int) -> tuple[int, str]:
    """Waves and what bounds them: the lowest limit, the first of vgpr, sgpr,
    lds/workgroup on a tie; "hardware" when none is below the cap.  (Written
    without generators: this runs for each distinct kernel of a library.)"""
    cap = k.model.max_waves_per_simd
    best, limit = k.vgpr(_register_total(k.model, vgprs, agprs)), "vgpr"
    if k.model.gfx_major < 10:
        by_sgprs = k.sgpr(sgprs)
        if by_sgprs < best:
            best, limit = by_sgprs, "sgpr"
    by_wg_lds = k.wg_lds(lds, max_wg)
    if by_wg_lds < cap and by_wg_lds < best:
        # Tell LDS from the work-group size: without LDS, is the figure still this low?
        best, limit = by_wg_lds, ("lds" if k.wg_lds(0, max_wg) > by_wg_lds else "workgroup")
    if best >= cap:
        return cap, "hardware"
    return best, limit


def _largest_below(current: int, ok) -> int | None:
    """The largest value below ``current`` (down to 0) for which ``ok`` holds.

    ``ok`` holds for small values and fails from some point on (waves fall
    as registers grow), so this is a binary search: a count from a hostile
    binary (vgpr_count 2**63) costs 63 steps, not 2**63."""
    if current <= 0 or not ok(0):
        return None
    low, high = 0, current - 1           # ok(low) holds
    while low < high:
        middle = (low + high + 1) // 2
        if ok(middle):
            low = middle
        else:
            high = middle - 1
    return low


_THRESHOLDS_KEPT = 1 << 16      # per _Kernel; a hostile binary's counts must not grow it without end


def _threshold(k: _Kernel, key: tuple, current: int, ok) -> int | None:
    """``_largest_below(current, ok)`` where ``ok(current)`` fails, kept per kernel
    parameters: ``ok`` holds up to a point and fails beyond it, so the answer is
    that point whatever ``current`` is, and ``key`` (what ``ok`` depends on) names it."""
    found = k.thresholds.get(key, _MISSING)
    if found is _MISSING:
        found = _kept(k.thresholds, key, _largest_below(current, ok))
    return found


_MISSING = object()


def _next_step(k: _Kernel, waves: int, vgprs: int, agprs: int, sgprs: int, lds: int,
               max_wg: int) -> Optional[dict]:
    """What every limit holding the kernel at ``waves`` must come down to for at
    least one more wave; None at the cap or when nothing in the binary raises it."""
    if waves >= k.model.max_waves_per_simd:
        return None
    goal = waves + 1
    needs: list[tuple[str, int]] = []
    new = {"vgprs": vgprs, "agprs": agprs, "sgprs": sgprs, "lds": lds, "max_wg": max_wg}
    if k.vgpr(_register_total(k.model, vgprs, agprs)) < goal:
        if k.model.agprs == "separate" and agprs:
            for resource, key, value in (("vgpr", "vgprs", vgprs), ("agpr", "agprs", agprs)):
                if k.vgpr(value) < goal:
                    at_most = _threshold(k, ("vgpr", goal), value, lambda n: k.vgpr(n) >= goal)
                    if at_most is None:
                        return None
                    needs.append((resource, at_most))
                    new[key] = at_most
        else:
            # On gfx90a-class parts this is .vgpr_count, the unified VGPR+AGPR total.
            at_most = _threshold(k, ("vgpr", goal), vgprs, lambda n: k.vgpr(n) >= goal)
            if at_most is None:
                return None
            needs.append(("vgpr", at_most))
            new["vgprs"] = at_most
    if k.model.gfx_major < 10 and k.sgpr(sgprs) < goal:
        at_most = _threshold(k, ("sgpr", goal), sgprs, lambda n: k.sgpr(n) >= goal)
        if at_most is None:
            return None
        needs.append(("sgpr", at_most))
        new["sgprs"] = at_most
    if k.wg_lds(lds, max_wg) < goal:
        if k.wg_lds(0, max_wg) >= goal:
            # ok(0) holds and LDS is above 0 here, so the search finds a size.
            needs.append(("lds", _threshold(k, ("lds", max_wg, goal), lds,  # type: ignore[arg-type]
                                            lambda n: k.wg_lds(n, max_wg) >= goal)))
            new["lds"] = needs[-1][1]
        else:
            # (a bound of 0 reads as 1, so the search starts from a size that holds)
            smaller = _threshold(k, ("workgroup", lds, goal), max_wg, lambda w: k.wg_lds(lds, max(w, 1)) >= goal)
            if smaller is not None:
                needs.append(("workgroup", smaller))
                new["max_wg"] = smaller
            else:
                smaller = _threshold(k, ("workgroup", 0, goal), max_wg, lambda w: k.wg_lds(0, max(w, 1)) >= goal)
                if smaller is None:
                    return None
                needs.append(("workgroup", smaller))
                needs.append(("lds", _threshold(k, ("lds", smaller, goal), lds,  # type: ignore[arg-type]
                                                lambda n: k.wg_lds(n, smaller) >= goal)))
                new["max_wg"], new["lds"] = smaller, needs[-1][1]
    if not needs:
        return None
    reached, _ = _evaluate(k, new["vgprs"], new["agprs"], new["sgprs"], new["lds"], new["max_wg"])
    if reached < goal:                       # cannot happen with the limits above; never claim it
        return None
    return {"waves": reached, "needs": [{"resource": r, "at_most": v} for r, v in needs]}


_RECORD_INPUTS = ("target", "vgpr_count", "sgpr_count", "group_segment_fixed_size", "wavefront_size",
                  "max_flat_workgroup_size")


def apply_model(record: dict, choice: str) -> dict:
    """A report record with its occupancy fields recomputed under ``choice`` (a model
    name or ``producer``), so a report written under one model compares with a build
    read under another.  A record that names no model (nothing to tell it was another's)
    or lacks the figures the model needs is returned as is."""
    if not isinstance(record.get("occupancy_model"), str):
        return record
    if not all(isinstance(record.get(f), int) and not isinstance(record.get(f), bool)
               for f in _RECORD_INPUTS[1:]) or not isinstance(record.get("target"), str):
        return record
    compiler = record.get("compiler") if isinstance(record.get("compiler"), str) else None
    model = resolve_model(choice, compiler)
    if record["occupancy_model"] == model:
        return record   # already under that model: keep the figures as written
    agprs = record.get("agpr_count")
    occ = compute(record["target"], vgpr_count=record["vgpr_count"], sgpr_count=record["sgpr_count"],
                  group_segment_fixed_size=record["group_segment_fixed_size"],
                  wavefront_size=record["wavefront_size"],
                  max_flat_workgroup_size=record["max_flat_workgroup_size"],
                  workgroup_processor_mode=record.get("workgroup_processor_mode") is not False,
                  agpr_count=agprs if isinstance(agprs, int) else None, model=model)
    return dict(record, occupancy=occ.waves_per_simd, occupancy_limit=occ.limit, occupancy_model=model,
                occupancy_next=occ.next)


_NEED_UNITS = {"vgpr": "VGPRs", "agpr": "AGPRs", "sgpr": "SGPRs", "lds": "B of LDS",
               "workgroup": "threads per work-group"}


def next_step_text(step: Optional[dict]) -> str:
    """``occupancy_next`` in words: "96 or fewer VGPRs for 7" ("" when there is none)."""
    if not step:
        return ""
    needs = " and ".join(f"{n['at_most']} or fewer {_NEED_UNITS.get(n['resource'], n['resource'])}"
                         for n in step["needs"])
    return f"{needs} for {step['waves']}"


# -- the curves a page draws ---------------------------------------------------------

def curves(target_id: str, *, model: str = DEFAULT_MODEL, wavefront_size: int, max_flat_workgroup_size: int,
           workgroup_processor_mode: bool = True) -> Optional[dict]:
    """The occupancy curves of one target under one model, as steps a page draws
    (the HTML pages; never re-implemented in the browser): ``vgpr`` is
    ``[[most VGPRs, waves], ...]`` with VGPRs rising (a kernel with at most that
    many VGPRs gets that many waves by its VGPRs alone), ``lds`` the same for a
    work-group's bytes of LDS at ``max_flat_workgroup_size`` work-items.  None
    for a target without a model."""
    k = _kernel_for(target_id, model, wavefront_size, bool(workgroup_processor_mode))
    if k is None:
        return None
    max_wg = max(max_flat_workgroup_size, 1)
    register_file = max(k.model.vgpr_total[wavefront_size], 1)
    vgpr_steps: list[list[int]] = []
    for count in range(1, min(register_file, 512) + 1):
        waves = k.vgpr(count)
        if vgpr_steps and vgpr_steps[-1][1] == waves:
            vgpr_steps[-1][0] = count
        else:
            vgpr_steps.append([count, waves])
    # LDS: waves fall as the size grows; each level's largest size by bisection.
    lds_steps: list[list[int]] = []
    size = 0
    while size < k.lds_pool:
        waves = k.wg_lds(size, max_wg)
        low, high = size, k.lds_pool          # k.wg_lds(low) == waves; find the last size that keeps it
        while low < high:
            middle = (low + high + 1) // 2
            if k.wg_lds(middle, max_wg) >= waves:
                low = middle
            else:
                high = middle - 1
        lds_steps.append([low, waves])
        size = low + 1
    return {"target": target_id, "model": model, "wavefront_size": wavefront_size,
            "max_flat_workgroup_size": max_wg, "max_waves": k.model.max_waves_per_simd,
            "vgpr": vgpr_steps, "lds": lds_steps, "lds_per_cu": k.lds_pool}
