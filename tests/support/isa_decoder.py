"""How the tests call spillway's AMDGPU decoder (checker/spillway/isa/,
issue 23) and read its answer: the one place to adapt when its entry point
changes.

    spillway.isa.evidence.evidence(code, start, size, target, private_segment_buffer)

``code``: the bytes of the section holding the function; ``start``, ``size``:
the function's offset in them and its st_size; ``target``: the processor
(``gfx906``, ``gfx9-4-generic`` ...); ``private_segment_buffer``: the kernel
descriptor's bit 0 (True for non-kernel functions, whose s[0:3] holds it by
the calling convention).  The result (object or dict) carries the field
names of issue 23 (support/isa_oracle.py states each rule) and the
instruction lengths in bytes as ``lengths`` (or ``boundaries``: (offset,
length[, class]) per instruction), or else the lengths come from the
decoder's own iterator, spillway.isa.decoder.decode (up to where it stops);
``classes`` (one of isa_oracle.CLASSES per instruction) is compared when
present.  ``scratch_unsized`` may be spelled ``scratch_without_width`` (as
(mnemonic, count) pairs).
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
          "lds_ops", "loops", "scratch_in_loops", "calls",
          # the derived figures (support/isa_oracle.py states their rules)
          "scratch_slot_load_bytes", "scratch_slot_store_bytes", "scratch_addressed_load_bytes",
          "scratch_addressed_store_bytes", "agpr_spill_copies", "agpr_accumulator_moves", "innermost_loops",
          "scratch_in_innermost_loops", "loop_depth_max")
OPTIONAL = ("scratch_unsized", "private_segment_buffer", "mix")     # compared when the decoder reports them


def entry_point():
    """The decoder's evidence function; skips only while checker/spillway/isa/
    does not exist."""
    if not DECODER.is_dir():
        pytest.skip("checker/spillway/isa/ does not exist yet (the decoder of issue 23)")
    try:
        from spillway.isa.evidence import evidence     # the module checker/spillway/isa/evidence.py
    except ImportError:
        import spillway.isa as isa
        evidence = getattr(isa, "evidence", None)
    if not callable(evidence):
        pytest.fail("spillway.isa has no evidence(code, start, size, target, private_segment_buffer) "
                    "(tests/support/isa_decoder.py: adapt it to the decoder's real entry point)")
    return evidence


class Answer:
    """The decoder's result for one function, with its instruction lengths."""

    def __init__(self, result, lengths: list[int]):
        self.result, self.lengths = result, lengths

    def __getattr__(self, name: str):
        return get(self.result, name)


def decode(entry, section: bytes, start: int, size: int, target: str, psb: bool):
    result = entry(section, start, size, target, psb)
    if get(result, "lengths") is not None or get(result, "boundaries") is not None:
        return result
    return Answer(result, _decoded_lengths(section, start, size, target))


def _decoded_lengths(section: bytes, start: int, size: int, target: str) -> list[int]:
    """Instruction lengths from the decoder's own instruction iterator
    (spillway.isa.decoder.decode), up to where it stops."""
    from spillway.isa import decoder
    name = decoder.family_of(target)
    if name is None or size <= 0:
        return []
    out = []
    try:
        for instruction in decoder.decode(section, start, start + size, decoder.load_family(name)):
            out.append(instruction.length)
    except decoder.DecodeError:
        pass
    return out


def get(result, name: str):
    if isinstance(result, dict):
        return result.get(name)
    return getattr(result, name, None)


def lengths(result) -> list[int]:
    found = result.lengths if isinstance(result, Answer) else get(result, "lengths")
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
    """Dicts, and lists of (key, count) pairs, as sorted dicts; other sequences as lists."""
    if isinstance(value, dict):
        return dict(sorted(value.items()))
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, (list, tuple)) and len(v) == 2 for v in value):
            return dict(sorted((k, n) for k, n in value))
        return list(value)
    return value


# The decoder's name for a field, where it chose another.
ALIASES = {"scratch_unsized": "scratch_without_width"}


def differences(want: dict, got) -> dict:
    """{field: (oracle, decoder)} for every differing field.  ``status`` is
    compared as complete or not: its wording for a stop is the decoder's own."""
    out = {f: (want[f], get(got, f)) for f in FIELDS if f != "status" and get(got, f) != want[f]}
    if (get(got, "status") == "complete") != (want["status"] == "complete"):
        out["status"] = (want["status"], get(got, "status"))
    for f in OPTIONAL:
        theirs = get(got, f)
        if theirs is None:
            theirs = get(got, ALIASES.get(f, f))
        if f == "mix" and isinstance(theirs, (list, tuple)) and all(isinstance(n, int) for n in theirs):
            theirs = dict(zip(isa_oracle.MIX_CLASSES, theirs))     # counts in class order
        elif isinstance(want.get(f), dict) and isinstance(theirs, (list, tuple)):
            theirs = dict(theirs)           # (mnemonic, count) pairs
        if f in want and theirs is not None and normal(theirs) != normal(want[f]):
            out[f] = (want[f], theirs)
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
