"""metadata.read_fast: msgspec decodes a note straight into kernel records.
It must give exactly what the exact path (decode_resources + kernels_from +
target_of) gives, or refuse the note (None) so that the exact path reads it
and names what is wrong.  Checked on the fixtures' real notes, on every
shape of value the exact path treats specially, and as a differential
property over generated documents."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA
from spillway.errors import InputError
from spillway.formats import codeobject, elf, metadata


def _exact(desc: bytes):
    """The exact path's answer, or the InputError it raises."""
    try:
        document = metadata.decode_resources(desc)
        return metadata.NoteResources(metadata.kernels_from(document), metadata.target_of(document))
    except InputError as exc:
        return exc


def _same_or_refused(desc: bytes) -> metadata.NoteResources | None:
    fast, exact = metadata.read_fast(desc), _exact(desc)
    if fast is not None:
        assert not isinstance(exact, InputError), f"fast path read a note the exact path refuses: {exact}"
        assert fast == exact
        # flags are booleans, as the exact path gives them (LLVM writes 0/1 integers)
        for kernel in fast.kernels:
            assert kernel.workgroup_processor_mode in (None, True, False)
            assert type(kernel.workgroup_processor_mode) in (type(None), bool)
            assert type(kernel.uses_dynamic_stack) is bool
    return fast


def _real_notes() -> list[bytes]:
    notes = []
    for path in sorted(Path(DATA).rglob("*.hsaco")) + sorted((Path(DATA) / "tensile").glob("*.co")):
        data = memoryview(path.read_bytes())
        if not codeobject.is_amdgpu_elf(data):
            continue
        for note, _ in elf.ElfImage(data).notes():
            notes += [bytes(desc) for name, kind, desc, _ in metadata.iter_notes(note)
                      if kind == metadata.NT_AMDGPU_METADATA]
    return notes


def test_real_notes_take_the_fast_path_and_read_the_same():
    notes = _real_notes()
    assert len(notes) >= 5
    kernels = 0
    for desc in notes:
        fast = _same_or_refused(desc)
        assert fast is not None, "an LLVM-written note must not need the exact path"
        kernels += len(fast.kernels)
    assert kernels >= 10


KERNEL = {".name": "k", ".symbol": "k.kd", ".vgpr_count": 40, ".sgpr_count": 20, ".agpr_count": 0,
          ".vgpr_spill_count": 0, ".sgpr_spill_count": 0, ".private_segment_fixed_size": 0,
          ".group_segment_fixed_size": 1024, ".wavefront_size": 64, ".max_flat_workgroup_size": 256,
          ".uses_dynamic_stack": False, ".workgroup_processor_mode": 1,
          ".args": [{".name": "a", ".size": 8, ".offset": 0, ".value_kind": "global_buffer"}]}


def _note(kernel: dict, **top) -> bytes:
    return msgpack.packb({"amdhsa.version": [1, 2], "amdhsa.target": "amdgcn-amd-amdhsa--gfx1100",
                          "amdhsa.kernels": [kernel], **top})


@pytest.mark.parametrize("change, fast", [
    ({}, True),
    ({".workgroup_processor_mode": 0}, True),
    ({".workgroup_processor_mode": True}, True),
    ({".workgroup_processor_mode": 2}, False),        # not a flag: the exact path says so
    ({".workgroup_processor_mode": None}, True),
    ({".uses_dynamic_stack": 1}, False),              # the exact path reads 0/1 as a flag
    ({".vgpr_count": -1}, False),
    ({".vgpr_count": True}, False),
    ({".vgpr_count": 1.0}, False),
    ({".vgpr_count": None}, False),
    ({".vgpr_count": 2 ** 64 - 1}, True),
    ({".agpr_count": None}, True),
    ({".vgpr_spill_count": None}, False),
    ({".wavefront_size": 16}, False),
    ({".symbol": None}, False),
    ({".name": b"k"}, False),                         # bin type: the exact path reads it as a name
    ({".name": 5}, False),
])
def test_each_special_value_is_read_the_same_or_refused(change, fast):
    kernel = {k: v for k, v in dict(KERNEL, **change).items()}
    desc = msgpack.packb({"amdhsa.target": "amdgcn-amd-amdhsa--gfx1100", "amdhsa.kernels": [kernel]},
                         use_bin_type=True)
    assert (_same_or_refused(desc) is not None) is fast


@pytest.mark.parametrize("desc", [
    _note(KERNEL) + b"\x00",                          # trailing byte
    _note(KERNEL)[:-2],                               # truncated
    msgpack.packb([1, 2]),                            # not a map
    b"\xc1",                                          # reserved byte
    msgpack.packb({1: 2, "amdhsa.kernels": []}),      # a key that is not a string
    msgpack.packb({"amdhsa.kernels": 3}),
    msgpack.packb({"amdhsa.kernels": [5]}),
    msgpack.packb({"amdhsa.kernels": [{".name": "k"}]}),              # required fields missing
    msgpack.packb({"amdhsa.kernels": [dict(KERNEL, **{".name": "\udcff"})]}, unicode_errors="surrogateescape"),
    b"\x81\xaeamdhsa.kernels\x91" + b"\x91" * 1100 + b"\xc0",         # nested beyond msgpack's depth
])
def test_malformed_notes_are_refused(desc):
    assert metadata.read_fast(desc) is None


def test_a_key_given_twice_keeps_the_last_one_as_the_exact_path_does():
    first = msgpack.packb(".vgpr_count") + msgpack.packb(10)
    rest = b"".join(msgpack.packb(k) + msgpack.packb(v) for k, v in KERNEL.items())
    kernel = bytes([0x80 | (len(KERNEL) + 1)]) + first + rest     # .vgpr_count 10, later 40
    desc = b"\x81" + msgpack.packb("amdhsa.kernels") + b"\x91" + kernel
    fast = _same_or_refused(desc)
    assert fast is not None and fast.kernels[0].vgpr_count == 40


def test_notes_without_kernels_or_target():
    assert _same_or_refused(msgpack.packb({"amdhsa.version": [1, 2]})) == metadata.NoteResources([], None)


# -- a differential property -----------------------------------------------------------

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.integers(0, 2 ** 64 - 1),
                     st.floats(allow_nan=False), st.text(max_size=4), st.binary(max_size=4))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=6)
_FIELDS = [k for k in KERNEL if k != ".args"]


@st.composite
def _kernels(draw):
    kernel = dict(KERNEL)
    for key in draw(st.lists(st.sampled_from(_FIELDS + [".args"]), max_size=4, unique=True)):
        if draw(st.booleans()):
            del kernel[key]
        else:
            kernel[key] = draw(_VALUES)
    return kernel


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels=st.lists(_kernels(), max_size=3), target=st.one_of(st.none(), st.text(max_size=8), _VALUES),
       bin_strings=st.booleans())
def test_the_fast_path_agrees_with_the_exact_path(kernels, target, bin_strings):
    try:
        desc = msgpack.packb({"amdhsa.target": target, "amdhsa.kernels": kernels}, use_bin_type=bin_strings)
    except (TypeError, ValueError, OverflowError):
        return
    _same_or_refused(desc)
