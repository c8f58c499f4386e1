"""The rule report --isa's figures must keep on every fixture family (issue
42): a kernel whose code was read to its end, that makes no call and has no
dynamic stack, has private segment bytes exactly when its code reaches
scratch - at least one scratch access, or (the private_flat kernels of
tests/data/isa/kernels.cpp) flat instructions, which may address private
memory.  A scratch access without private bytes, or private bytes with
neither, means the decoder lost or invented the private segment buffer:
issue 42's GFX10 v_cmpx, read as a write of s0, hid every scratch access of 9
of librocsparse0's 88,137 such kernels."""

from __future__ import annotations

from pathlib import Path

import pytest

from spillway.report.reader import ReadOptions, read_report

DATA = Path(__file__).resolve().parents[2] / "data"
# Every folder of binaries under tests/data and what in it holds device code (rdc-*.o and merged-*.o of
# offload_binary hold bitcode only; embedded/host.so needs --scan-embedded: its code objects are read as .co).
FAMILIES = {"isa/co": ("*.co",), "isa/rare/co": ("*.co",), "isa/lines/co": ("*.co", "*.o"), "isa/vcmpx/co": ("*.co",),
            "isa/rdc/co": ("*.o",), "occupancy/clang-23": ("*.ccob",), "occupancy/clang-24": ("*.ccob",),
            "command_line": ("*.o",), "containers/embedded": ("*.co",),
            "containers/offload_binary": ("*.co", "*.bin", "linked-*.so", "plain-*.o", "host-*.o"),
            "containers/kpack/unsplit": ("*.so",), "tensile": ("*.co", "*.hsaco"), "regressions/codeobject": ("*",)}


def _binaries(family: str) -> list[str]:
    return sorted({str(p) for pattern in FAMILIES[family] for p in (DATA / family).glob(pattern)})


@pytest.mark.parametrize("family", FAMILIES)
def test_private_bytes_exactly_when_the_code_reaches_scratch(family):
    document = read_report(_binaries(family), ReadOptions(isa=True))
    checked = 0
    broken = []
    for kernel in document["kernels"]:
        isa = kernel["isa"]
        if isa["status"] != "complete" or isa["calls"] or kernel["uses_dynamic_stack"]:
            continue
        checked += 1
        accesses = isa["scratch_loads"] + isa["scratch_stores"]
        private = kernel["private_segment_fixed_size"] > 0
        if (private and not (accesses or isa["flat_ops"])) or (accesses and not private):
            broken.append((kernel["file"], kernel["target"], kernel["name"], kernel["private_segment_fixed_size"],
                           accesses))
    assert checked and not broken, broken


def test_the_families_hold_kernels_with_scratch_on_each_kind_of_access():
    """The rule is not held vacuously: the fixtures have kernels with private
    bytes reached through MUBUF (GFX9, GFX10: the v_cmpx fixture among them),
    through scratch_* (GFX11 on), and from relocatable objects."""
    paths = [path for family in ("isa/co", "isa/vcmpx/co", "isa/rdc/co") for path in _binaries(family)]
    document = read_report(paths, ReadOptions(isa=True))
    reached = {(Path(k["file"]).parent.parent.name, k["target"]) for k in document["kernels"]
               if k["private_segment_fixed_size"] and k["isa"]["scratch_stores"]}
    assert {("vcmpx", "gfx1030"), ("rdc", "gfx1030"), ("rdc", "gfx1100"), ("isa", "gfx906"),
            ("isa", "gfx1100")} <= reached, reached
