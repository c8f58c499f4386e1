"""The GFX10 v_cmpx fixture (issue 42, tests/data/isa/vcmpx/build.sh): a
gfx1030 kernel whose entry block holds ``v_cmpx_gt_i32_e64 s13, v9`` as clang
15 encodes it (vdst field 0: on GFX10 a VOP3 v_cmpx writes EXEC only) before
41 scratch stores and a load through the private segment buffer s[0:3].
spillway's figures are the ISA oracle's over llvm-objdump-22's text, and the
build script makes the committed bytes again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from spillway.isa.evidence import evidence, kernel_ranges
from support import isa_decoder, isa_oracle
from support.toolchains import require

FOLDER = Path(__file__).resolve().parents[1] / "data" / "isa" / "vcmpx"
FIXTURE = FOLDER / "co" / "gfx1030.clang22.vcmpx.co"


def test_the_fixture_holds_clang_15s_v_cmpx_before_the_scratch_stores():
    text = subprocess.run([require("llvm-objdump-22"), "-d", str(FIXTURE)], capture_output=True, text=True,
                          check=True).stdout
    insns = isa_oracle.parse_objdump(text)
    at = next(i for i in insns if i.mnemonic == "v_cmpx_gt_i32_e64")
    assert (at.operands, text.count("D4940000 0002120D")) == ("s13, v9", 1)
    stores = [i for i in insns if i.mnemonic == "buffer_store_dword" and "s[0:3]" in i.operands]
    assert len(stores) == 41 and all(i.address > at.address for i in stores)


def test_figures_are_the_oracles():
    found, = isa_oracle.read_code_object(FIXTURE, (22,)).functions
    assert (found.scratch_stores, found.scratch_loads, found.private_segment_buffer) == (41, 1, ["s[0:3]"])
    code, (kernel,) = kernel_ranges(FIXTURE.read_bytes())
    ours = evidence(code, kernel.start, kernel.size, "gfx1030", bool(kernel.private_segment_buffer))
    assert isa_decoder.differences(found.fields(), ours) == {}


def test_the_build_script_makes_the_committed_fixture(tmp_path):
    for tool in ("clang++-22", "clang-22", "ld.lld-22"):
        require(tool)
    copy = tmp_path / "vcmpx"
    shutil.copytree(FOLDER, copy)
    subprocess.run([str(copy / "build.sh")], check=True, capture_output=True)
    assert (copy / "vcmpx.gfx1030.s").read_bytes() == (FOLDER / "vcmpx.gfx1030.s").read_bytes()
    assert (copy / "co" / FIXTURE.name).read_bytes() == FIXTURE.read_bytes()
