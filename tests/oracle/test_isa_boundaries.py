"""spillway's AMDGPU decoder against ``llvm-objdump -d -z`` on every kernel of
the ISA fixtures (tests/data/isa/co, built by tests/data/isa/build.sh, and
tests/data/isa/rare/co, rare.cpp's rarely used instructions): each
instruction's offset, length and mnemonic as objdump prints them, with the
LLVM the oracle chose for the fixture (22; 19 for gfx940/gfx941).  The
per-kernel fields are tests/oracle/test_isa_decoder.py's."""

from __future__ import annotations


import pytest

from support import isa_oracle
from support.isa_boundaries import compare_with_objdump

COMMITTED = isa_oracle.committed_fixtures()
FIXTURES = sorted(COMMITTED)


@pytest.mark.parametrize("name", FIXTURES)
def test_boundaries_and_mnemonics_equal_objdump(name):
    path, recorded = COMMITTED[name]
    objdump = isa_oracle.llvm_tool("llvm-objdump", recorded["llvm"])
    if objdump is None:
        pytest.skip(f"LLVM {recorded['llvm']}'s llvm-objdump is not installed")
    count, kernels, mismatches = compare_with_objdump(path, objdump, recorded["target"])
    assert kernels > 0 and count > 0
    assert not mismatches, "\n".join(mismatches[:10])
