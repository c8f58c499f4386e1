"""Metadata notes and entries the real fixtures never exercise: several
notes with padding (kills dropping the 4-byte padding of name or desc), and
malformed kernel entries of each type (kills removing the check that an
entry is a map, which becomes an AttributeError, and the type check on
counts, a TypeError).  Template: the committed fuzz seed code object."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import msgpack
import pytest

from spillway.errors import InputError, SpillwayError
from spillway.formats import codeobject, metadata

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "fuzz"))
import layers  # noqa: E402

TEMPLATE = (REPO / "fuzz" / "seeds" / "second-gfx1100.co").read_bytes()
KERNEL = {".name": "k", ".symbol": "k.kd", ".vgpr_count": 8, ".sgpr_count": 16, ".vgpr_spill_count": 0,
          ".sgpr_spill_count": 0, ".private_segment_fixed_size": 0, ".group_segment_fixed_size": 0,
          ".wavefront_size": 32, ".max_flat_workgroup_size": 256, ".uses_dynamic_stack": False}


def _document(*kernels) -> dict:
    return {"amdhsa.version": [1, 2], "amdhsa.target": "amdgcn-amd-amdhsa--gfx1100",
            "amdhsa.kernels": list(kernels)}


def _note(name: bytes, kind: int, desc: bytes) -> bytes:
    named = name + b"\0"
    return (struct.pack("<III", len(named), len(desc), kind) + named + b"\0" * (-len(named) % 4)
            + desc + b"\0" * (-len(desc) % 4))


@pytest.mark.parametrize("before", [
    [(b"AMD", 1, b"\x01")],                                  # desc of 1 byte: 3 bytes of padding
    [(b"GNU", 3, b"\x01\x02\x03\x04\x05")],                  # 5 bytes: 3 of padding
    [(b"AMDGPU", 7, b"ab"), (b"X", 2, b"\x01\x02\x03")],     # two odd notes, odd names
    [(b"LONGERNAME", 9, b"")],                               # name of 11 bytes, empty desc
])
def test_metadata_after_padded_notes(before):
    desc = msgpack.packb(_document(dict(KERNEL, **{".vgpr_count": 24})))
    section = b"".join(_note(*n) for n in before) + _note(b"AMDGPU", 32, desc)
    assert any(len(d) % 4 or (len(n) + 1) % 4 for n, _, d in before)
    parsed = codeobject.parse(layers.with_note_section(TEMPLATE, section))
    assert [(k.name, k.vgpr_count) for k in parsed.kernels] == [("k", 24)]
    records = list(metadata.iter_notes(section))
    assert [(name, kind) for name, kind, _, _ in records] == [(n, k) for n, k, _ in before] + [(b"AMDGPU", 32)]
    assert bytes(records[-1][2]) == desc


def test_note_positions_are_padded():
    section = _note(b"AMD", 1, b"\x01") + _note(b"AMDGPU", 32, b"\x80")
    offsets = [position for _, _, _, position in metadata.iter_notes(section)]
    assert offsets == [0, 12 + 4 + 4]


NOT_MAPS = [1, "k", b"k", None, True, [KERNEL], 2.5]


@pytest.mark.parametrize("entry", NOT_MAPS, ids=[type(v).__name__ for v in NOT_MAPS])
def test_kernel_entry_that_is_not_a_map(entry):
    with pytest.raises(InputError, match=r"amdhsa.kernels\[1\] is not a map"):
        metadata.kernels_from(metadata.decode_resources(msgpack.packb(_document(KERNEL, entry))))


BAD_COUNTS = [("vgpr_count", "8"), ("vgpr_count", b"8"), ("sgpr_count", 1.5), ("vgpr_count", True),
              ("private_segment_fixed_size", -4), ("group_segment_fixed_size", [0]),
              ("vgpr_spill_count", {"a": 1}), ("agpr_count", "0"), ("max_flat_workgroup_size", "256"),
              ("wavefront_size", 2.0)]


@pytest.mark.parametrize("field, value", BAD_COUNTS)
def test_count_of_the_wrong_type(field, value):
    document = _document(dict(KERNEL, **{"." + field: value}))
    with pytest.raises(InputError, match=f"metadata .{field} is .*not a count"):
        metadata.kernels_from(metadata.decode_resources(msgpack.packb(document)))


@pytest.mark.parametrize("field, value, message", [
    ("name", 7, "not a string"), ("symbol", [1], "not a string"), ("wavefront_size", 48, "neither 32 nor 64"),
    ("uses_dynamic_stack", "yes", "not a boolean"), ("workgroup_processor_mode", 2, "not a boolean"),
])
def test_other_fields_of_the_wrong_type(field, value, message):
    document = _document(dict(KERNEL, **{"." + field: value}))
    with pytest.raises(InputError, match=message):
        metadata.kernels_from(metadata.decode_resources(msgpack.packb(document)))


@pytest.mark.parametrize("kernels", [7, "k", {"a": 1}])
def test_kernels_that_are_not_a_list(kernels):
    with pytest.raises(InputError, match="amdhsa.kernels is not a list"):
        metadata.kernels_from({"amdhsa.kernels": kernels})


def test_bad_entries_through_the_code_object_parser():
    """Through codeobject.parse (what the report runs): still one error type."""
    for entry in NOT_MAPS + [dict(KERNEL, **{".vgpr_count": "8"})]:
        desc = msgpack.packb(_document(KERNEL, entry))
        with pytest.raises(SpillwayError):
            codeobject.parse(layers.code_object_with_metadata(TEMPLATE, desc))


# -- what the exact path reads, and how it names a malformed note ---------------------

def _packed(document: dict) -> bytes:
    return msgpack.packb(document, use_bin_type=True, unicode_errors="surrogateescape")


FULL = dict(KERNEL, **{".args": [{".name": "a", ".size": 8, ".offset": 0, ".value_kind": "global_buffer"}]})
MANY = {f".unread_{i}": i for i in range(20)}      # a map16, not a fixmap


@pytest.mark.parametrize("desc, name", [
    (_packed(_document(dict(FULL, **{".name": "k\udcff"}))), "k\ufffd"),       # a stray byte in a name
    (_packed(_document(dict(FULL, **{".name": b"kb"}))), "kb"),                 # a name of the bin type
    (_packed(_document(dict(FULL, **{".args": [{".name": "\udcff"}]}))), "k"),  # not UTF-8 where nothing reads
    (_packed(_document({**FULL, "\udcff": 1})), "k"),                           # ... a key, in a fixmap
    (_packed(_document({**FULL, **MANY, "\udcff": 1})), "k"),                   # ... in a map16
    (b"\x83\xa1\xff\x01\x91\x01\x02" + _packed("amdhsa.kernels") + _packed([FULL]), "k"),   # keys of any kind
    (_packed({1: 2, "amdhsa.kernels": [FULL]}), "k"),
    (b"\x82\x81\x01\x02\x03" + _packed("amdhsa.kernels") + _packed([FULL]), "k"),     # a map as a key
], ids=["name-not-utf8", "name-bin", "args-not-utf8", "key-not-utf8", "key-not-utf8-map16", "odd-keys", "int-key",
        "map-key"])
def test_the_exact_path_reads_what_llvm_would(desc, name):
    """(LLVM's msgpack reader checks no string's encoding, nor a key's type.)"""
    exact = metadata.kernels_from(metadata.decode_resources(desc))
    assert [k.name for k in exact] == [name]
    fast = metadata.read_fast(desc)
    assert fast is None or fast.kernels == exact


@pytest.mark.parametrize("desc, message", [
    (_packed(_document(FULL)) + b"\x00", r"malformed msgpack metadata \(trailing characters \(byte \d+\)\)"),
    (_packed(_document(FULL))[:-2], r"malformed msgpack metadata \(input data was truncated\)"),
    (_packed(_document(FULL)).replace(b"\xaf.wavefront_size ", b"\xaf.wavefront_size\xc1"),
     r"malformed msgpack metadata \(invalid opcode '\\xc1' \(byte \d+\)\)"),
    (b"\x81\xaeamdhsa.kernels\x91" + b"\x91" * 1100 + b"\xc0", r"malformed msgpack metadata \(nested deeper"),
    (_packed([1, 2]), r"^metadata is not a msgpack map$"),
    (_packed(dict(_document(FULL), **{"amdhsa.target": "gfx\udcff"})), r"metadata amdhsa.target is not UTF-8"),
    (_packed(_document(dict(FULL, **{".vgpr_count": "8"}))), r"metadata .vgpr_count is '8', not a count"),
    (_packed(_document(dict(FULL, **{".vgpr_count": ["\udcff"]}))),
     r"metadata .vgpr_count is \[b'\\xff'\], not a count"),
    (_packed(_document(dict(FULL, **{".vgpr_count": {"\udcff": [1]}}))),
     r"metadata .vgpr_count is \{b'\\xff': \[1\]\}, not a count"),
    (_packed({"amdhsa.kernels": ["\udcff"]}), r"amdhsa.kernels\[0\] is not a map"),
])
def test_the_exact_path_names_what_is_wrong(desc, message):
    with pytest.raises(InputError, match=message):
        document = metadata.decode_resources(desc)
        metadata.target_of(document)
        metadata.kernels_from(document)
