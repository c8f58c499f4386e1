"""Occupancy where LDS is not a multiple of any allocation granule: kills the
mutant that rounds LDS up to 512-byte blocks (LLVM 22's model does not; every
size in the other fixtures is a round number).  Oracle: clang-22's
-Rpass-analysis=kernel-resource-usage on tests/data/regressions/mutants.hip."""

from __future__ import annotations

import pytest

from conftest import DATA
from spillway.report.reader import ReadOptions, read_buffer
from spillway.resources import occupancy
from support.toolchains import parse_remarks

MUTANTS = DATA / "regressions" / "mutants.hip"


@pytest.fixture(scope="module")
def compiled(builder):
    code_object, stderr = builder.remarks(22, MUTANTS, "gfx1100")
    return code_object, parse_remarks(stderr)


def test_every_lds_size_matches_clang_22(compiled):
    code_object, remarks = compiled
    _, records = read_buffer(code_object.read_bytes(), "mutants.co", ReadOptions(occupancy_model="llvm22"))
    lds_kernels = [r for r in records if r["symbol"].startswith("lds_")]
    assert len(lds_kernels) == 6
    for record in lds_kernels:
        remark = remarks[record["symbol"]]
        assert record["group_segment_fixed_size"] == int(remark["LDS Size [bytes/block]"])
        assert record["occupancy"] == int(remark["Occupancy [waves/SIMD]"]), record["symbol"]
    # The sizes really are off every granule, and one of them tells the
    # 512-byte rounding apart (6 waves from clang, 4 when rounded).
    assert all(r["group_segment_fixed_size"] % 128 for r in lds_kernels)
    by_name = {r["symbol"]: r for r in records}
    assert by_name["lds_43688_256"]["occupancy"] == 6


def test_lds_43688_without_a_compiler():
    """The same figure from the model alone (runs where no clang is installed)."""
    common = dict(vgpr_count=15, sgpr_count=18, wavefront_size=32, workgroup_processor_mode=True,
                  model="llvm22")
    assert occupancy.compute("gfx1100", group_segment_fixed_size=43688, max_flat_workgroup_size=256,
                             **common).waves_per_simd == 6
    rounded = -(-43688 // 512) * 512
    assert occupancy.compute("gfx1100", group_segment_fixed_size=rounded, max_flat_workgroup_size=256,
                             **common).waves_per_simd == 4
