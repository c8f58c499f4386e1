"""spillway's AMDGPU decoder against ``llvm-objdump -d -z`` on every kernel of
the ISA fixtures (tests/data/isa/co, built by tests/data/isa/build.sh): each
instruction's offset, length and mnemonic as objdump prints them, with the
LLVM the oracle chose for the fixture (22; 19 for gfx940/gfx941).  The
per-kernel fields are tests/oracle/test_isa_decoder.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import isa_oracle
from support.isa_boundaries import compare_with_objdump

DATA = Path(__file__).resolve().parents[1] / "data" / "isa"
EXPECTED = json.loads((DATA / "expected.json").read_text())
FIXTURES = sorted(EXPECTED["fixtures"])


@pytest.mark.parametrize("name", FIXTURES)
def test_boundaries_and_mnemonics_equal_objdump(name):
    recorded = EXPECTED["fixtures"][name]
    objdump = isa_oracle.llvm_tool("llvm-objdump", recorded["llvm"])
    if objdump is None:
        pytest.skip(f"LLVM {recorded['llvm']}'s llvm-objdump is not installed")
    count, kernels, mismatches = compare_with_objdump(DATA / "co" / name, objdump, recorded["target"])
    assert kernels > 0 and count > 0
    assert not mismatches, "\n".join(mismatches[:10])
