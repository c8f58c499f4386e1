"""``spillway code``'s listing (isa.listing) against ``llvm-objdump -d -z``.

On every fixture code object (tests/data/isa/co, built by build.sh), for
every function: each instruction the listing names has, at its offset, the
line objdump prints with the same length and mnemonic, and the same class
by the oracle's rules (tests/support/isa_oracle.py); every instruction the
oracle classes as a scratch access, AGPR copy, matrix op or call is listed;
loops begin at an instruction and end on a backward branch objdump prints;
the listed scratch accesses inside loops are the oracle's scratch_in_loops.
The LLVM that decides is the one expected.json records for the fixture
(19 for gfx940/gfx941).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from spillway.isa.evidence import kernel_ranges
from spillway.isa.listing import KINDS, kernel_listing
from support import isa_oracle

DATA = Path(__file__).resolve().parents[1] / "data" / "isa"
EXPECTED = json.loads((DATA / "expected.json").read_text())
FIXTURES = sorted(EXPECTED["fixtures"])


def _oracle(name: str) -> isa_oracle.CodeObjectEvidence:
    version = EXPECTED["fixtures"][name]["llvm"]
    if isa_oracle.llvm_tool("llvm-objdump", version) is None:
        message = f"llvm-objdump of LLVM {version} is not installed (scripts/install-toolchains.sh)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return isa_oracle.read_code_object(DATA / "co" / name, versions=(version,))


@pytest.mark.parametrize("name", FIXTURES)
def test_listing_is_what_objdump_prints(name):
    oracle = _oracle(name)
    data = (DATA / "co" / name).read_bytes()
    section, ranges = kernel_ranges(data, functions=True)
    by_name = {r.name: r for r in ranges}
    listed_kernels = 0
    for function in oracle.functions:
        found = by_name[function.symbol]
        psb = True if found.private_segment_buffer is None else found.private_segment_buffer
        listing = kernel_listing(section, found.start, found.size, oracle.target, psb)
        assert listing.code.status == function.status == "complete", function.symbol
        printed = {offset: (length, mnemonic, kind) for (offset, length, mnemonic), kind
                   in zip(function.listing, function.classes)}
        ours = {i.offset: (i.length, i.mnemonic, i.kind) for i in listing.instructions}
        theirs = {offset: line for offset, line in printed.items() if line[2] in KINDS}
        assert ours == theirs, function.symbol
        for instruction in listing.instructions:
            if instruction.kind.startswith("scratch"):
                prefix = "scratch_" + instruction.kind.split("_")[1] \
                    if instruction.mnemonic.startswith("scratch_") else "buffer_" + instruction.kind.split("_")[1]
                assert instruction.bytes == isa_oracle.access_width(instruction.mnemonic, prefix)
            else:
                assert instruction.bytes is None
        for loop in listing.loops:
            assert loop.start in printed
            assert printed[loop.end][1].startswith(("s_branch", "s_cbranch_")), (function.symbol, loop)
            assert printed[loop.end][2] == "loop"
        in_loops = sum(1 for i in listing.instructions if i.kind.startswith("scratch") and i.loop_depth)
        assert in_loops == function.scratch_in_loops, function.symbol
        listed_kernels += bool(listing.instructions)
    assert listed_kernels, f"{name}: no function lists anything: the test would not test"


def test_the_fixtures_cover_every_kind():
    """Across the fixtures the oracle finds each listed kind (so the test above checks each)."""
    seen: set[str] = set()
    for name in ("gfx90a.clang22.co", "gfx1100.clang22.co", "gfx950.clang22.co"):
        for function in _oracle(name).functions:
            seen.update(function.classes)
    assert set(KINDS) <= seen
