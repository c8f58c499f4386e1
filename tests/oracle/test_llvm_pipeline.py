"""The oracle's own tests: support.llvm_pipeline frames bundles from their
headers' size fields (synthetic inputs) and, on libraries built here, finds
the same kernel records as the other LLVM route (llvm-objdump --offloading
then llvm-readelf, support.oracles)."""

from __future__ import annotations

import struct

import pytest

from support import llvm_pipeline, oracles
from support.formats_fixtures import FORMATS, SECOND
from support.llvm_pipeline import Bundle, OracleError, cut_bundles
from support.oracle_expectations import as_row, assert_same_kernels


def plain_bundle(entries: list[tuple[str, bytes]]) -> bytes:
    header = llvm_pipeline.BUNDLE_MAGIC + struct.pack("<Q", len(entries))
    table_size = sum(24 + len(e[0]) for e in entries)
    offset, table, payload = len(header) + table_size, b"", b""
    for entry_id, data in entries:
        table += struct.pack("<QQQ", offset, len(data), len(entry_id)) + entry_id.encode()
        payload += data
        offset += len(data)
    return header + table + payload


def ccob(version: int, payload: bytes) -> bytes:
    if version == 2:
        head = b"CCOB" + struct.pack("<HHIIQ", 2, 1, 0, 0, 0)
        return head[:8] + struct.pack("<I", len(head) + len(payload)) + head[12:] + payload
    head = b"CCOB" + struct.pack("<HHQQQ", 3, 1, 0, 0, 0)
    return head[:8] + struct.pack("<Q", len(head) + len(payload)) + head[16:] + payload


def test_plain_bundles_end_at_their_furthest_entry_and_skip_padding():
    first = plain_bundle([("host-x86_64-unknown-linux-gnu-", b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"A" * 100)])
    second = plain_bundle([("hipv4-amdgcn-amd-amdhsa--gfx1100", b"B" * 7)])
    section = first + bytes(4096 - len(first)) + second
    assert cut_bundles(section) == [Bundle(0, 0, len(first), "plain"), Bundle(1, 4096, len(second), "plain")]


def test_compressed_bundles_use_their_total_size_field():
    v2, v3 = ccob(2, b"x" * 50), ccob(3, b"y" * 70)
    section = v2 + bytes(10) + v3 + bytes(3)
    assert cut_bundles(section) == [Bundle(0, 0, len(v2), "ccob-v2"), Bundle(1, len(v2) + 10, len(v3), "ccob-v3")]


def test_ccob_v1_runs_to_the_next_magic():
    v1 = b"CCOB" + struct.pack("<HH", 1, 1) + b"z" * 40
    plain = plain_bundle([("hipv4-amdgcn-amd-amdhsa--gfx90a", b"C" * 8)])
    assert cut_bundles(v1 + plain) == [Bundle(0, 0, len(v1), "ccob-v1"), Bundle(1, len(v1), len(plain), "plain")]


@pytest.mark.parametrize("section,message", [
    (b"garbage" + bytes(10), "no bundle magic at offset 0"),
    (ccob(3, b"q" * 10)[:-4], "claims"),
    (b"CCOB" + struct.pack("<HH", 9, 1) + bytes(16), "CCOB version 9"),
])
def test_framing_errors_are_reported(section, message):
    with pytest.raises(OracleError, match=message):
        cut_bundles(section)


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "ccob"])
def test_pipeline_agrees_with_llvm_objdump_route(builder, tmp_path, compress):
    """A shared library of two translation units (two bundles), built with
    clang-22: the pipeline's records equal llvm-objdump --offloading plus
    llvm-readelf's (uncompressed) or spillway-independent unbundling of each
    object file's single bundle (compressed)."""
    targets = ["gfx90a", "gfx1100"]
    extra = ("--offload-compress",) if compress else ()
    objects = [builder.hip(22, FORMATS, targets, *extra), builder.hip(22, SECOND, targets, *extra)]
    library = builder.link(22, objects, "libtwo.so", "-shared")
    found = llvm_pipeline.read_file(library, library.name, tmp_path / "pipeline")
    assert (found.kind, found.bundles, found.code_objects) == ("host", 2, 4)
    if compress:
        routes = [(index, oracles.extract_with_bundler(obj, tmp_path / f"o{index}"))
                  for index, obj in enumerate(objects)]
        entries = [(index, entry_id, path) for index, listed in routes for _, entry_id, path in listed]
    else:
        entries = oracles.extract(library, tmp_path / "objdump")
    want = []
    for index, _entry_id, code_object in entries:
        compiler = "; ".join(dict.fromkeys(c for c in oracles.readelf_comment(code_object)
                                           if not c.startswith("Linker:")))
        for record in oracles.expected_records(code_object):
            want.append(as_row({**record, "file": library.name, "bundle_index": index, "compiler": compiler}))
    assert len(want) == found.kernels > 0
    assert_same_kernels([as_row(r) for r in found.records], want, what="pipeline", oracle="objdump route")
