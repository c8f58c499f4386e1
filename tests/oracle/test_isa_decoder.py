"""spillway's AMDGPU decoder (checker/spillway/isa/, issue 23) against the
llvm-objdump oracle, on every function of every fixture code object
(tests/data/isa/co/, built by tests/data/isa/build.sh).

The oracle's figures are committed in tests/data/isa/expected.json
(support/isa_oracle.py; tests/oracle/test_isa_oracle.py keeps the file equal
to the oracle rerun), so this test needs no LLVM: for each function it
compares every field issue 23 defines and the instruction boundaries (the
length of every instruction, in order).  When a boundary differs and LLVM is
installed, the failure shows what objdump printed there.

The decoder's entry point, as this test calls it (``_decode`` is the one
place to adapt):

    spillway.isa.evidence(code, start, size, target, private_segment_buffer)

``code``: the bytes of the section holding the function; ``start``, ``size``:
the function's offset in them and its st_size; ``target``: the processor
(``gfx906``, ``gfx9-4-generic`` ...); ``private_segment_buffer``: the kernel
descriptor's bit (True for non-kernel functions, whose s[0:3] holds it by the
calling convention).  The result (object or dict) carries the issue's field
names, and the instruction lengths in bytes as ``lengths`` (or
``boundaries``: (offset, length[, class]) per instruction).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import isa_oracle

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "isa"
DECODER = REPO / "checker" / "spillway" / "isa"
EXPECTED = json.loads((DATA / "expected.json").read_text())
FIXTURES = sorted(EXPECTED["fixtures"])

# The per-kernel fields of issue 23 (support/isa_oracle.py states each rule).
FIELDS = ("instructions", "code_bytes", "code_sha256", "status", "scratch_loads", "scratch_stores",
          "scratch_load_bytes", "scratch_store_bytes", "flat_ops", "agpr_writes", "agpr_reads", "matrix_ops",
          "lds_ops", "loops", "scratch_in_loops", "calls")
OPTIONAL = ("scratch_unsized", "private_segment_buffer")     # compared when the decoder reports them


def _decoder():
    if not DECODER.is_dir():
        pytest.skip("checker/spillway/isa/ does not exist yet (the decoder of issue 23)")
    import spillway.isa as isa
    entry = getattr(isa, "evidence", None)
    if entry is None:
        pytest.fail("spillway.isa has no evidence(code, start, size, target, private_segment_buffer) "
                    "(see this file's docstring; adapt _decode to the decoder's real entry point)")
    return entry


def _decode(entry, section: bytes, start: int, size: int, target: str, psb: bool):
    return entry(section, start, size, target, psb)


def _get(result, name: str):
    if isinstance(result, dict):
        return result.get(name)
    return getattr(result, name, None)


def _lengths(result) -> list[int] | None:
    lengths = _get(result, "lengths")
    if lengths is not None:
        return [int(n) for n in lengths]
    boundaries = _get(result, "boundaries")
    if boundaries is not None:
        return [int(b[1]) for b in boundaries]
    return None


def _sections(path: Path) -> dict[str, tuple[bytes, int, int, bool]]:
    """symbol -> (its section's bytes, offset in them, size, PSB bit)."""
    from elftools.elf.elffile import ELFFile
    out = {}
    functions = isa_oracle.read_functions(path)
    with open(path, "rb") as handle:
        elf = ELFFile(handle)
        text = elf.get_section_by_name(".text")
        assert text is not None, f"{path}: no .text"
        data, base = text.data(), text["sh_addr"]
        for function in functions:
            out[function.name] = (data, function.start - base, function.size, function.private_segment_buffer)
    return out


def _first_difference(want: str, got: list[int]) -> tuple[int, int]:
    """(instruction index, byte offset) where the lengths first differ."""
    offset = 0
    for index, (a, b) in enumerate(zip([4 * int(w) for w in want], got)):
        if a != b:
            return index, offset
        offset += a
    return min(len(want), len(got)), offset


def _objdump_near(path: Path, address: int) -> str:
    """What the recorded LLVM prints around ``address`` (for the message only)."""
    recorded = EXPECTED["fixtures"][path.name]
    argv = isa_oracle.llvm_tool("llvm-objdump", recorded["llvm"])
    if argv is None:
        return "(LLVM not installed here: no objdump text)"
    ok, text = isa_oracle.run_objdump(argv, path)
    insns = isa_oracle.parse_objdump(text) if ok else []
    near = [i for i in insns if address - 8 <= i.address <= address + 8]
    return "; ".join(f"0x{i.address:x}: {i.mnemonic} {i.operands} ({i.length} bytes)" for i in near)


@pytest.mark.parametrize("name", FIXTURES)
def test_decoder_equals_objdump_oracle(name):
    entry = _decoder()
    path = DATA / "co" / name
    recorded = EXPECTED["fixtures"][name]
    sections = _sections(path)
    assert sorted(sections) == sorted(recorded["functions"])
    failures = []
    for symbol, want in recorded["functions"].items():
        section, start, size, psb = sections[symbol]
        got = _decode(entry, section, start, size, recorded["target"], psb)
        lengths = _lengths(got)
        if lengths is None:
            pytest.fail("the decoder's result has neither lengths nor boundaries")
        if [4 * int(w) for w in want["words"]] != lengths:
            index, offset = _first_difference(want["words"], lengths)
            failures.append(f"{symbol}: instruction {index} at +0x{offset:x}: objdump "
                            f"{4 * int(want['words'][index]) if index < len(want['words']) else 'nothing'}, "
                            f"decoder {lengths[index] if index < len(lengths) else 'nothing'} bytes; near it: "
                            f"{_objdump_near(path, recorded['functions'][symbol]['address'] + offset)}")
        differ = {f: (want[f], _get(got, f)) for f in FIELDS if _get(got, f) != want[f]}
        differ.update({f: (want[f], _get(got, f)) for f in OPTIONAL
                       if _get(got, f) is not None and _normal(_get(got, f)) != _normal(want[f])})
        if differ:
            failures.append(f"{symbol}: (objdump, decoder) {differ}")
    assert not failures, f"{name} ({recorded['target']}):\n  " + "\n  ".join(failures[:12])


def _normal(value):
    if isinstance(value, dict):
        return dict(sorted(value.items()))
    if isinstance(value, (list, tuple)):
        return list(value)
    return value
