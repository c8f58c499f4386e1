"""A kernel with private scratch and no spill: its scratch is not a spill
(kills the mutant that counts every scratch byte as a spill).  Oracle:
clang-22's remark on tests/data/regressions/mutants.hip (208 B/lane, 0 spills)."""

from __future__ import annotations

import pytest

from conftest import DATA
from spillway.formats.metadata import KernelMetadata
from spillway.gate.kernels import Resources, aggregate
from spillway.gate.metrics import METRICS
from spillway.report.reader import read_buffer, scratch_cause
from support.toolchains import parse_remarks

MUTANTS = DATA / "regressions" / "mutants.hip"


def _kernel(**fields) -> KernelMetadata:
    values = dict(name="k", symbol="k.kd", vgpr_count=8, agpr_count=None, sgpr_count=16, vgpr_spill_count=0,
                  sgpr_spill_count=0, private_segment_fixed_size=0, uses_dynamic_stack=False,
                  group_segment_fixed_size=0, wavefront_size=32, max_flat_workgroup_size=256,
                  workgroup_processor_mode=True)
    values.update(fields)
    return KernelMetadata(**values)


def test_scratch_causes():
    assert scratch_cause(_kernel(private_segment_fixed_size=208)) == "private"
    assert scratch_cause(_kernel(private_segment_fixed_size=208, vgpr_spill_count=3)) == "spill"
    assert scratch_cause(_kernel(private_segment_fixed_size=16, uses_dynamic_stack=True)) == "dynamic_stack"
    assert scratch_cause(_kernel()) == "none"
    # SGPR spills that land in VGPR lanes use no scratch: not a scratch spill.
    assert scratch_cause(_kernel(sgpr_spill_count=4)) == "none"


def test_private_array_is_not_a_spill(builder):
    code_object, stderr = builder.remarks(22, MUTANTS, "gfx1100")
    remark = parse_remarks(stderr)["private_no_spill"]
    assert int(remark["ScratchSize [bytes/lane]"]) > 0
    assert int(remark["VGPRs Spill"]) == int(remark["SGPRs Spill"]) == 0
    _, records = read_buffer(code_object.read_bytes(), "mutants.co")
    record = next(r for r in records if r["symbol"] == "private_no_spill")
    assert record["private_segment_fixed_size"] == int(remark["ScratchSize [bytes/lane]"])
    assert record["vgpr_spill_count"] == record["sgpr_spill_count"] == 0
    assert record["scratch_cause"] == "private"
    usage = aggregate([record])
    (kernel,) = usage.values()
    assert METRICS["spills"].value(kernel.resources) == 0
    assert METRICS["scratch"].value(kernel.resources) == record["private_segment_fixed_size"]
    assert METRICS["spills"].within(METRICS["spills"].value(kernel.resources), 0)


def test_spills_metric_is_spilled_registers_only():
    resources = Resources(scratch=512, dynamic_stack=False, vgpr_spills=0, sgpr_spills=0, vgprs=64, agprs=None,
                          sgprs=20, lds=0, occupancy=8)
    assert METRICS["spills"].value(resources) == 0
    assert METRICS["scratch"].value(resources) == 512
