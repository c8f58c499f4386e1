"""Occupancy equals what clang prints with -Rpass-analysis=kernel-resource-usage,
under LLVM 22's model (``--occupancy-model llvm22``) for bookworm's clang 16, 19 and 22.
The LLVM 23 and 24 models are tested against a committed corpus in
test_occupancy_models.py.

The corpus forces exact register counts with inline-asm clobbers and sweeps
LDS and work-group sizes, on wave32 and wave64, WGP and CU mode, across the
targets of the matrix.  Unit checks below pin the worked examples of the
reference (amdgpu-binaries.md section 4).
"""

from __future__ import annotations

import pytest

from spillway.resources import occupancy
from spillway.report.reader import ReadOptions, read_path
from support.toolchains import KNOWN_TARGETS, parse_remarks

VGPRS = (8, 24, 41, 64, 65, 84, 96, 97, 120, 121, 128, 129, 144, 145, 168, 176, 192, 193, 216, 240, 241, 256)
LDS_FLOATS = (1, 1024, 2048, 4096, 6144, 10000, 12288, 16384)
GROUP_SIZES = (64, 128, 256, 512, 1024)
AGPR_PAIRS = ((61, 1), (61, 64), (65, 64), (2, 200), (17, 3), (128, 128), (200, 60))


def corpus_source() -> str:
    lines = ['#include "mini_hip.h"',
             "#define K(NAME, V, L, W) extern \"C\" __global__ void __launch_bounds__(W) NAME(float* p) { \\",
             "  __shared__ float s[L]; s[threadIdx.x % L] = p[threadIdx.x]; __syncthreads(); \\",
             "  asm volatile(\"\" ::: V); p[threadIdx.x] = s[(threadIdx.x + 1) % L]; }",
             "#define KA(NAME, V, A, W) extern \"C\" __global__ void __launch_bounds__(W) NAME(float* p) { \\",
             "  asm volatile(\"\" ::: V, A); p[threadIdx.x] = 1.0f; }"]
    for v in VGPRS:                                   # VGPR-limited
        lines.append(f'K(occ_v{v}, "v{v - 1}", 1, 64)')
    for lds in LDS_FLOATS:                            # LDS- and work-group-limited
        for group in GROUP_SIZES:
            lines.append(f'K(occ_l{lds}_w{group}, "v3", {lds}, {group})')
    for v, group in ((100, 256), (129, 256), (84, 512), (64, 1024), (40, 1024)):
        lines.append(f'K(occ_v{v}_l6144_w{group}, "v{v - 1}", 6144, {group})')
    lines.append("#if defined(__gfx90a__) || defined(__gfx942__) || defined(__gfx950__)")
    for v, a in AGPR_PAIRS:
        lines.append(f'KA(occ_v{v}_a{a}, "v{v - 1}", "a{a - 1}", 64)')
    lines.append("#endif")
    return "\n".join(lines) + "\n"


# (target, extra flags); wave64 and CU mode only where the hardware has them.
MODES = [
    ("gfx90a", ()), ("gfx942", ()), ("gfx1030", ()), ("gfx1030", ("-mcumode",)),
    ("gfx1030", ("-mwavefrontsize64",)), ("gfx1100", ()), ("gfx1100", ("-mwavefrontsize64",)),
    ("gfx1151", ()), ("gfx1151", ("-mwavefrontsize64", "-mcumode")), ("gfx1200", ()),
]


def _cases():
    for version in (16, 19, 22):
        for target, flags in MODES:
            if target in KNOWN_TARGETS[version]:
                yield pytest.param(version, target, flags, id=f"clang{version}-{target}{''.join(flags)}")


@pytest.mark.parametrize("version,target,flags", list(_cases()))
def test_occupancy_equals_clang_remark(builder, tmp_path_factory, version, target, flags):
    source = tmp_path_factory.getbasetemp() / "occupancy_corpus.hip"
    if not source.exists():
        source.write_text(corpus_source())
    code_object, stderr = builder.remarks(version, source, target, *flags)
    remarks = parse_remarks(stderr)
    records = read_path(str(code_object), ReadOptions(occupancy_model="llvm22"))[1]
    assert len(records) == len(remarks) > 40
    assert {r["occupancy_model"] for r in records} == {"llvm22"}
    mismatches = []
    for record in records:
        remark = remarks[record["symbol"]]
        waves = int(remark["Occupancy [waves/SIMD]"])
        arch, agprs = int(remark["VGPRs"]), int(remark.get("AGPRs", 0))
        # gfx90a-class metadata holds the unified total: align(arch, 4) + AGPRs.
        expected_vgprs = (-(-arch // 4) * 4 + agprs) if agprs else arch
        assert record["vgpr_count"] == expected_vgprs, record["symbol"]
        if record["occupancy"] != waves:
            mismatches.append((record["symbol"], record["vgpr_count"], record["group_segment_fixed_size"],
                               record["max_flat_workgroup_size"], record["occupancy"], waves))
    assert not mismatches, f"(kernel, vgprs, lds, max wg, spillway, clang): {mismatches}"
    # The corpus really exercises more than one limit.
    limits = {r["occupancy_limit"] for r in records}
    assert "vgpr" in limits and ({"lds", "workgroup"} & limits)


def test_corpus_covers_both_wave_sizes(builder, tmp_path_factory):
    source = tmp_path_factory.getbasetemp() / "occupancy_corpus.hip"
    if not source.exists():
        source.write_text(corpus_source())
    sizes = set()
    for flags in ((), ("-mwavefrontsize64",)):
        code_object, _ = builder.remarks(22, source, "gfx1100", *flags)
        sizes |= {r["wavefront_size"] for r in read_path(str(code_object), ReadOptions())[1]}
    assert sizes == {32, 64}


def _occ(target, vgprs, *, sgprs=16, lds=0, wave=32, max_wg=1024, wgp=True):
    return occupancy.compute(target, model="llvm22", vgpr_count=vgprs, sgpr_count=sgprs, group_segment_fixed_size=lds,
                             wavefront_size=wave, max_flat_workgroup_size=max_wg, workgroup_processor_mode=wgp)


@pytest.mark.parametrize("vgprs,w32,w64", [
    (61, 16, 10), (100, 12, 7), (117, 12, 6), (129, 10, 5), (146, 9, 4), (164, 9, 4), (176, 8, 4),
    (183, 8, 4), (230, 6, 3), (244, 5, 3), (256, 5, 2)])
def test_gfx1151_worked_table(vgprs, w32, w64):
    assert _occ("gfx1151", vgprs).waves_per_simd == w32
    assert _occ("gfx1151", vgprs, wave=64).waves_per_simd == w64


@pytest.mark.parametrize("total,expected", [(65, 7), (132, 3), (61, 8)])
def test_gfx90a_unified_register_file(total, expected):
    # .vgpr_count already holds align(arch, 4) + AGPRs (V61/A1 -> 65 -> 7 waves)
    assert _occ("gfx90a:xnack-", total, wave=64).waves_per_simd == expected


@pytest.mark.parametrize("sgprs,expected", [(80, 10), (84, 9), (100, 8), (104, 7)])
def test_sgpr_limit_before_gfx10(sgprs, expected):
    result = _occ("gfx906", 8, sgprs=sgprs, wave=64, max_wg=64)
    assert result.waves_per_simd == expected
    assert result.limit == ("hardware" if expected == 10 else "sgpr")


def test_lds_examples_and_limit_names():
    assert _occ("gfx1151", 8, lds=40000, max_wg=256).waves_per_simd == 6
    assert _occ("gfx1151", 8, lds=40000, max_wg=256).limit == "lds"
    assert _occ("gfx1151", 8, lds=24576, max_wg=128).waves_per_simd == 5
    assert _occ("gfx1151", 200).limit == "vgpr"
    assert _occ("gfx1151", 8).limit == "hardware"
    assert _occ("gfx-unknown", 8).waves_per_simd is None


def test_sgprs_do_not_limit_gfx10_and_later():
    assert _occ("gfx1030", 8, sgprs=106, max_wg=64).waves_per_simd == 16


# -- the cached answer's key leaves out only what the model does not read ----------------

from hypothesis import given, settings, strategies as st   # noqa: E402

from spillway.resources.targets import MODEL_NAMES, known_processors   # noqa: E402


@settings(max_examples=600, deadline=None)
@given(processor=st.sampled_from(known_processors()), model=st.sampled_from(MODEL_NAMES),
       wave=st.sampled_from([32, 64]), wgp=st.booleans(),
       vgprs=st.integers(0, 600), agprs=st.one_of(st.none(), st.integers(0, 300)),
       sgprs=st.integers(0, 120), lds=st.integers(0, 70000), max_wg=st.integers(0, 1200))
def test_the_cached_key_gives_what_the_whole_formula_gives(processor, model, wave, wgp, vgprs, agprs, sgprs,
                                                           lds, max_wg):
    """compute() drops SGPRs from GFX10 on and AGPRs outside gfx908 from the cache's
    key; the uncached formula on the figures as given must agree."""
    got = occupancy.compute(processor, vgpr_count=vgprs, agpr_count=agprs, sgpr_count=sgprs,
                            group_segment_fixed_size=lds, wavefront_size=wave,
                            max_flat_workgroup_size=max_wg, workgroup_processor_mode=wgp, model=model)
    k = occupancy._kernel_for(processor, model, wave, wgp)
    if k is None:
        assert got.waves_per_simd is None
        return
    whole = occupancy._compute(k, vgprs, agprs or 0, sgprs, lds, max(max_wg, 1))
    assert got == whole


def _same_waves(count: int, waves_of) -> int:
    """Another register count (0..600) allowing the same waves as ``count``: the
    farthest one, so a cache keyed by waves is asked for what it kept for another."""
    same = [n for n in range(0, 601) if n != count and waves_of(n) == waves_of(count)]
    return max(same, key=lambda n: abs(n - count)) if same else count


@settings(max_examples=150, deadline=None)
@given(processor=st.sampled_from(known_processors()), model=st.sampled_from(MODEL_NAMES),
       wave=st.sampled_from([32, 64]), wgp=st.booleans(),
       vgprs=st.integers(0, 600), agprs=st.one_of(st.none(), st.integers(0, 300)),
       sgprs=st.integers(0, 120), lds=st.integers(0, 70000), max_wg=st.integers(0, 1200))
def test_an_answer_kept_for_other_counts_of_the_same_waves_is_this_kernels(processor, model, wave, wgp, vgprs,
                                                                           agprs, sgprs, lds, max_wg):
    """compute() keeps answers by the waves the register counts allow: warmed with
    counts of the same waves, it must still give the whole formula's answer."""
    k = occupancy._kernel_for(processor, model, wave, wgp)
    if k is None:
        return
    other_agprs = None if agprs is None else _same_waves(agprs, k.vgpr) or agprs
    agprs_read = (agprs or 0) if k.model.agprs == "separate" else 0
    sgprs_read = sgprs if k.model.gfx_major < 10 else 0
    expected = occupancy._compute(k, vgprs, agprs_read, sgprs_read, lds, max(max_wg, 1))
    # Kept first, one sweep at a time: other counts of the same waves, and counts
    # through the range (a key that merged two wave figures, or dropped a register
    # file, hands another kernel's answer to this one).
    sweeps = [[(_same_waves(vgprs, k.vgpr), other_agprs, _same_waves(sgprs, k.sgpr))],
              [(n, agprs, sgprs) for n in range(0, 601, 3)], [(vgprs, agprs, n) for n in range(0, 121, 3)]]
    if agprs:
        sweeps.append([(vgprs, n, sgprs) for n in range(1, 301, 3)])
    for sweep in sweeps:
        occupancy._BY_WAVES.clear()
        for warm_vgprs, warm_agprs, warm_sgprs in sweep:
            occupancy.compute(processor, vgpr_count=warm_vgprs, agpr_count=warm_agprs, sgpr_count=warm_sgprs,
                              group_segment_fixed_size=lds, wavefront_size=wave, max_flat_workgroup_size=max_wg,
                              workgroup_processor_mode=wgp, model=model)
        got = occupancy.compute(processor, vgpr_count=vgprs, agpr_count=agprs, sgpr_count=sgprs,
                                group_segment_fixed_size=lds, wavefront_size=wave,
                                max_flat_workgroup_size=max_wg, workgroup_processor_mode=wgp, model=model)
        assert got == expected


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_kept_answers_tell_sgpr_and_vgpr_limits_apart(model):
    """gfx900 with few VGPRs: the SGPR count sets the waves (LLVM 23: 10 SGPRs give
    10 waves, 90 give 7, 100 give 6), and with few SGPRs the VGPR count does,
    whatever was asked before."""
    occupancy._BY_WAVES.clear()
    asked = [(24, 10), (24, 90), (24, 100), (24, 102), (128, 10), (24, 10)]
    got = [occupancy.compute("gfx900", vgpr_count=v, sgpr_count=s, group_segment_fixed_size=0, wavefront_size=64,
                             max_flat_workgroup_size=256, model=model) for v, s in asked]
    k = occupancy._kernel_for("gfx900", model, 64, True)
    assert got == [occupancy._compute(k, v, 0, s, 0, 256) for v, s in asked]
    assert [g.limit for g in got] == ["hardware", "sgpr", "sgpr", "sgpr", "vgpr", "hardware"]
