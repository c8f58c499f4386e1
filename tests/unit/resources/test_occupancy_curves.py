"""occupancy.curves, the steps the HTML pages draw (issue 25): every point of
each curve is what occupancy.compute gives a kernel limited by that resource
alone, on every processor family, under every model; the steps rise in the
resource and fall in waves."""

from __future__ import annotations

import pytest

from spillway.resources.occupancy import compute, curves
from spillway.resources.targets import MODEL_NAMES

TARGETS = [("gfx906", 64), ("gfx908", 64), ("gfx90a", 64), ("gfx942", 64), ("gfx1030", 32), ("gfx1100", 32),
           ("gfx1151", 32), ("gfx1201", 32), ("gfx803", 64)]


def waves_at(steps: list[list[int]], amount: int) -> int:
    return next(waves for most, waves in steps if amount <= most)


@pytest.mark.parametrize("model", MODEL_NAMES)
@pytest.mark.parametrize("target,wave", TARGETS)
@pytest.mark.parametrize("workgroup", [64, 256, 1024])
def test_curves_are_the_models_figures(target, wave, model, workgroup):
    found = curves(target, model=model, wavefront_size=wave, max_flat_workgroup_size=workgroup)
    if found is None:
        pytest.skip(f"no {model} model for {target}")
    for name in ("vgpr", "lds"):
        steps = found[name]
        assert [s[0] for s in steps] == sorted({s[0] for s in steps}), name
        assert [s[1] for s in steps] == sorted((s[1] for s in steps), reverse=True), name
    # Every VGPR count: the model's figure for a kernel with few SGPRs and no LDS, where the
    # work-group alone allows more (the curve is VGPRs alone).
    by_workgroup = waves_at(found["lds"], 0)
    for vgprs in range(1, found["vgpr"][-1][0] + 1):
        figure = compute(target, vgpr_count=vgprs, sgpr_count=16, group_segment_fixed_size=0, wavefront_size=wave,
                         max_flat_workgroup_size=workgroup, model=model).waves_per_simd
        assert figure == min(waves_at(found["vgpr"], vgprs), by_workgroup), vgprs
    # LDS: at each step's end and one byte past it (few VGPRs and SGPRs).
    for most, waves in found["lds"]:
        for lds, expected in ((most, waves), (most + 1, None)):
            if lds > found["lds_per_cu"]:
                continue
            figure = compute(target, vgpr_count=8, sgpr_count=16, group_segment_fixed_size=lds, wavefront_size=wave,
                             max_flat_workgroup_size=workgroup, model=model).waves_per_simd
            if expected is not None:
                assert figure == min(waves, waves_at(found["vgpr"], 8)), (lds, figure)
            else:
                assert figure <= waves, (lds, figure)


def test_unknown_target_has_no_curves():
    assert curves("gfx000", wavefront_size=64, max_flat_workgroup_size=256) is None
