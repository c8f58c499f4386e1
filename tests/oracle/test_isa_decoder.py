"""spillway's AMDGPU decoder (checker/spillway/isa/, issue 23) against the
llvm-objdump oracle, on every function of every fixture code object
(tests/data/isa/co/, built by tests/data/isa/build.sh).

The oracle's figures are committed in tests/data/isa/expected.json and
tests/data/isa/rare/expected.json (rare.cpp: GDS, messages, exports,
interpolation, BVH, scaled matrix ops; support/isa_oracle.py;
tests/oracle/test_isa_oracle.py keeps the files equal to the oracle rerun),
so this test needs no LLVM: for each function it
compares every field issue 23 defines and the instruction boundaries (the
length of every instruction, in order).  When a boundary differs and LLVM is
installed, the failure shows what objdump printed there.  How the decoder is
called: tests/support/isa_decoder.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support import isa_decoder, isa_oracle

REPO = Path(__file__).resolve().parents[2]
COMMITTED = isa_oracle.committed_fixtures()
FIXTURES = sorted(COMMITTED)


def _first_difference(want: str, got: list[int]) -> tuple[int, int]:
    """(instruction index, byte offset) where the lengths first differ."""
    offset = 0
    for index, (a, b) in enumerate(zip([4 * int(w) for w in want], got)):
        if a != b:
            return index, offset
        offset += a
    return min(len(want), len(got)), offset


def _objdump_near(path: Path, recorded: dict, address: int) -> str:
    """What the recorded LLVM prints around ``address`` (for the message only)."""
    argv = isa_oracle.llvm_tool("llvm-objdump", recorded["llvm"])
    if argv is None:
        return "(LLVM not installed here: no objdump text)"
    ok, text = isa_oracle.run_objdump(argv, path)
    insns = isa_oracle.parse_objdump(text) if ok else []
    near = [i for i in insns if address - 8 <= i.address <= address + 8]
    return "; ".join(f"0x{i.address:x}: {i.mnemonic} {i.operands} ({i.length} bytes)" for i in near)


@pytest.mark.parametrize("name", FIXTURES)
def test_decoder_equals_objdump_oracle(name):
    entry = isa_decoder.entry_point()
    path, recorded = COMMITTED[name]
    functions = isa_decoder.functions_in(path)
    assert sorted(functions) == sorted(recorded["functions"])
    failures = []
    for symbol, want in recorded["functions"].items():
        section, start, size, psb = functions[symbol]
        got = isa_decoder.decode(entry, section, start, size, recorded["target"], psb)
        lengths = isa_decoder.lengths(got)
        if [4 * int(w) for w in want["words"]] != lengths:
            index, offset = _first_difference(want["words"], lengths)
            failures.append(f"{symbol}: instruction {index} at +0x{offset:x}: objdump "
                            f"{4 * int(want['words'][index]) if index < len(want['words']) else 'nothing'}, "
                            f"decoder {lengths[index] if index < len(lengths) else 'nothing'} bytes; near it: "
                            f"{_objdump_near(path, recorded, want['address'] + offset)}")
        differ = isa_decoder.differences(want, got)
        if differ:
            failures.append(f"{symbol}: (objdump, decoder) {differ}")
    assert not failures, f"{name} ({recorded['target']}):\n  " + "\n  ".join(failures[:12])
