"""How the tests call spillway's AMDGPU decoder (checker/spillway/isa/,
issue 23) and read its answer: the one place to adapt when its entry point
changes.

    spillway.isa.evidence(code, start, size, target, private_segment_buffer)

``code``: the bytes of the section holding the function; ``start``, ``size``:
the function's offset in them and its st_size; ``target``: the processor
(``gfx906``, ``gfx9-4-generic`` ...); ``private_segment_buffer``: the kernel
descriptor's bit 0 (True for non-kernel functions, whose s[0:3] holds it by
the calling convention).  The result (object or dict) carries the field
names of issue 23 (support/isa_oracle.py states each rule) and the
instruction lengths in bytes as ``lengths`` (or ``boundaries``: (offset,
length[, class]) per instruction); ``classes`` (one of isa_oracle.CLASSES
per instruction) is compared when present.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from . import isa_oracle

REPO = Path(__file__).resolve().parents[2]
DECODER = REPO / "checker" / "spillway" / "isa"

# The per-function fields of issue 23 every decoder result must equal.
FIELDS = ("instructions", "code_bytes", "code_sha256", "status", "scratch_loads", "scratch_stores",
          "scratch_load_bytes", "scratch_store_bytes", "flat_ops", "agpr_writes", "agpr_reads", "matrix_ops",
          "lds_ops", "loops", "scratch_in_loops", "calls")
OPTIONAL = ("scratch_unsized", "private_segment_buffer")     # compared when the decoder reports them


def entry_point():
    """spillway.isa.evidence; skips only while checker/spillway/isa/ does not exist."""
    if not DECODER.is_dir():
        pytest.skip("checker/spillway/isa/ does not exist yet (the decoder of issue 23)")
    import spillway.isa as isa
    entry = getattr(isa, "evidence", None)
    if entry is None:
        pytest.fail("spillway.isa has no evidence(code, start, size, target, private_segment_buffer) "
                    "(tests/support/isa_decoder.py: adapt it to the decoder's real entry point)")
    return entry


def decode(entry, section: bytes, start: int, size: int, target: str, psb: bool):
    return entry(section, start, size, target, psb)


def get(result, name: str):
    if isinstance(result, dict):
        return result.get(name)
    return getattr(result, name, None)


def lengths(result) -> list[int]:
    found = get(result, "lengths")
    if found is not None:
        return [int(n) for n in found]
    boundaries = get(result, "boundaries")
    if boundaries is not None:
        return [int(b[1]) for b in boundaries]
    pytest.fail("the decoder's result has neither lengths nor boundaries")


def classes(result) -> list[str] | None:
    found = get(result, "classes")
    if found is None:
        boundaries = get(result, "boundaries")
        if boundaries and len(boundaries[0]) > 2:
            found = [b[2] for b in boundaries]
    return None if found is None else [str(c) for c in found]


def digests(sizes: list[int], kinds: list[str] | None) -> tuple[str, str | None]:
    """isa_oracle.sequence_digests of the decoder's answer."""
    bounds, typed = hashlib.sha256(), hashlib.sha256()
    offset = 0
    for index, length in enumerate(sizes):
        bounds.update(f"{offset} {length}\n".encode())
        if kinds is not None:
            typed.update(f"{offset} {length} {kinds[index]}\n".encode())
        offset += length
    return bounds.hexdigest()[:16], (typed.hexdigest()[:16] if kinds is not None else None)


def normal(value):
    if isinstance(value, dict):
        return dict(sorted(value.items()))
    if isinstance(value, (list, tuple)):
        return list(value)
    return value


def differences(want: dict, got) -> dict:
    """{field: (oracle, decoder)} for every differing field."""
    out = {f: (want[f], get(got, f)) for f in FIELDS if get(got, f) != want[f]}
    out.update({f: (want[f], get(got, f)) for f in OPTIONAL
                if f in want and get(got, f) is not None and normal(get(got, f)) != normal(want[f])})
    return out


def functions_in(path: Path) -> dict[str, tuple[bytes, int, int, bool]]:
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
