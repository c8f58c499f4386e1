"""Bounded memory and bounded decompression (issues 9 and 14): compressed
bundles are found from their headers and inflated later as a stream, one
entry at a time; what an input and a run may inflate to is capped.

Synthetic bundles around the committed Tensile-style code objects
(tests/data/tensile, built by its build.sh), so every case runs without a
compiler; the real libraries are covered by tests/oracle."""

from __future__ import annotations

import hashlib
import struct
import zlib

import orjson
import pytest
import zstandard

from conftest import DATA
from support.formats_fixtures import ccob

from spillway.errors import InputError
from spillway.formats import bundles
from spillway.formats.containers import (MIN_INPUT_ALLOWANCE, DecompressionBudget, PendingImages, ScanResult,
                                         expand)
from spillway.report.reader import FIELDS, KernelTable, ReadOptions, json_chunks, read_buffer

TENSILE = DATA / "tensile"
HOST_ID = "host-x86_64-unknown-linux-gnu-"
GFX1100_ID = "hipv4-amdgcn-amd-amdhsa--gfx1100"
GFX90A_ID = "hipv4-amdgcn-amd-amdhsa--gfx90a"


def bundle_bytes(entries: list[tuple[str, bytes]], *, align: int = 4096, reverse_layout: bool = False) -> bytes:
    """An uncompressed offload bundle as clang-offload-bundler lays it out:
    magic, count, descriptors, then the payloads at aligned offsets."""
    header_size = 32 + sum(24 + len(entry_id) for entry_id, _ in entries)
    position = (header_size + align - 1) // align * align
    offsets = []
    order = list(reversed(entries)) if reverse_layout else entries
    placed = {}
    for entry_id, payload in order:
        placed[entry_id] = position
        position = (position + len(payload) + align - 1) // align * align
    for entry_id, _ in entries:
        offsets.append(placed[entry_id])
    head = bundles.UNCOMPRESSED_MAGIC + struct.pack("<Q", len(entries))
    for (entry_id, payload), offset in zip(entries, offsets):
        head += struct.pack("<QQQ", offset, len(payload), len(entry_id)) + entry_id.encode()
    out = bytearray(max(offsets[i] + len(entries[i][1]) for i in range(len(entries))) if entries else len(head))
    out[:len(head)] = head
    for (_, payload), offset in zip(entries, offsets):
        out[offset:offset + len(payload)] = payload
    return bytes(out)


@pytest.fixture(scope="module")
def code_objects() -> dict[str, bytes]:
    return {GFX1100_ID: (TENSILE / "tensile_gfx1100.hsaco").read_bytes(),
            GFX90A_ID: (TENSILE / "tensile_gfx90a.hsaco").read_bytes()}


def entries_of(code_objects) -> list[tuple[str, bytes]]:
    return [(HOST_ID, b""), (GFX1100_ID, code_objects[GFX1100_ID]), (GFX90A_ID, code_objects[GFX90A_ID])]


def kernel_rows(data: bytes) -> list[tuple]:
    _, records = read_buffer(data, "x")
    return sorted(tuple(r[f] for f in FIELDS if f not in ("file", "bundle_index")) for r in records)


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("method", [0, 1], ids=["zlib", "zstd"])
def test_lazy_walk_inflates_nothing_and_streams_the_same_entries(code_objects, version, method):
    plain = bundle_bytes(entries_of(code_objects))
    stream = ccob(plain, version, method) + b"\0" * 8 + ccob(plain, version, method)
    found = bundles.walk_lazy(memoryview(stream))
    assert [type(b) for b in found] == [bundles.PendingBundle] * 2
    assert found[1].offset == found[0].size + 8
    for lazy in found:
        _, inflated, length = bundles.decompress(memoryview(stream)[lazy.offset:])   # the whole bundle at once
        assert lazy.size == length
        entries, _ = bundles.parse_uncompressed(memoryview(inflated))
        streamed = [(e.entry_id, bytes(e.payload)) for e in bundles.iter_compressed_entries(lazy)]
        kept = [(e.entry_id, bytes(e.payload)) for e in entries if e.payload.nbytes]
        assert sorted(streamed) == sorted(kept)


def test_streamed_entries_skip_what_is_not_wanted(code_objects):
    pending = bundles.walk_lazy(memoryview(ccob(bundle_bytes(entries_of(code_objects)), 3, 1)))[0]
    seen = []
    got = [e.entry_id for e in bundles.iter_compressed_entries(
        pending, lambda kind, triple: seen.append((kind, triple)) or triple.startswith("amdgcn"))]
    assert got == [GFX1100_ID, GFX90A_ID]
    assert seen == [("hipv4", "amdgcn-amd-amdhsa-"), ("hipv4", "amdgcn-amd-amdhsa-")]  # empty host: not asked
    got = [e.entry_id for e in bundles.iter_compressed_entries(pending, lambda kind, triple: False)]
    assert got == []


def test_out_of_order_entries_are_read_whole(code_objects):
    plain = bundle_bytes(entries_of(code_objects)[1:], reverse_layout=True)
    pending = bundles.walk_lazy(memoryview(ccob(plain, 3, 1)))[0]
    assert {e.entry_id: bytes(e.payload) for e in bundles.iter_compressed_entries(pending)} == \
        {GFX1100_ID: code_objects[GFX1100_ID], GFX90A_ID: code_objects[GFX90A_ID]}


@pytest.mark.parametrize("method", [0, 1], ids=["zlib", "zstd"])
def test_a_bad_hash_is_found_once_the_stream_ends(code_objects, method):
    data = bytearray(ccob(bundle_bytes(entries_of(code_objects)), 3, method))
    data[24] ^= 0xFF                        # the stored hash
    pending = bundles.walk_lazy(memoryview(bytes(data)))[0]
    with pytest.raises(InputError, match="hash mismatch"):
        list(bundles.iter_compressed_entries(pending, verify_hash=True))
    assert len(list(bundles.iter_compressed_entries(pending))) == 2     # not checked unless asked, as in LLVM


def test_a_stream_shorter_than_declared_is_an_error(code_objects):
    plain = bundle_bytes(entries_of(code_objects))
    payload = zstandard.ZstdCompressor().compress(plain)
    digest = int.from_bytes(hashlib.md5(plain).digest()[:8], "little")
    lying = b"CCOB" + struct.pack("<HHQQQ", 3, 1, 32 + len(payload), len(plain) + 4096, digest) + payload
    pending = bundles.walk_lazy(memoryview(lying))[0]
    with pytest.raises(InputError, match="declared|declares"):
        list(bundles.iter_compressed_entries(pending))


def test_a_declared_size_above_the_cap_is_refused_before_inflating():
    plain = bundles.UNCOMPRESSED_MAGIC + struct.pack("<Q", 0)
    data = ccob(plain, 3, 0)
    forged = data[:16] + struct.pack("<Q", 8 << 30) + data[24:]
    with pytest.raises(InputError, match="--max-decompressed"):
        bundles.walk_lazy(memoryview(forged), max_decompressed=1 << 30)


def test_read_gives_the_same_kernels_compressed_or_not(code_objects):
    plain = bundle_bytes(entries_of(code_objects))
    direct = kernel_rows(plain)
    assert direct, "the fixture code objects hold kernels"
    for version in (1, 2, 3):
        for method in (0, 1):
            assert kernel_rows(ccob(plain, version, method)) == direct


def test_expand_counts_bitcode_and_spirv_without_keeping_them(code_objects):
    entries = entries_of(code_objects) + [("hip-spirv64-amd-amdhsa--amdgcnspirv", b"\x03\x02\x23\x07" * 4),
                                          ("hipv4-amdgcn-amd-amdhsa--gfx942", b"BC\xc0\xde" + b"\0" * 60)]
    pending = bundles.walk_lazy(memoryview(ccob(bundle_bytes(entries), 3, 1)))[0]
    counts = ScanResult()
    images = list(expand(PendingImages("lib.so", ".hip_fatbin", pending, 1 << 30), counts))
    assert sorted(i.entry_id for i in images) == [GFX1100_ID, GFX90A_ID]
    assert counts.spirv_entries == 1
    assert len(counts.bitcode_only) == 1 and "gfx942" in counts.bitcode_only[0]


# -- bounded decompression -----------------------------------------------------------

def bomb(count: int, claimed: int) -> bytes:
    """``count`` CCOB v3 headers, each claiming ``claimed`` bytes, with a tiny
    zstd frame behind each (the 48 KiB, 1.5 GB input of issue 14)."""
    frame = zstandard.ZstdCompressor().compress(b"\0" * 1024)
    one = b"CCOB" + struct.pack("<HHQQQ", 3, 1, 32 + len(frame), claimed, 0) + frame
    return one * count


def test_an_input_claiming_far_more_than_its_size_is_refused():
    data = bomb(6, 250 << 20)
    assert len(data) < 48 << 10
    with pytest.raises(InputError) as caught:
        read_buffer(data, "bomb.bundle", ReadOptions(max_decompressed=256 << 20))
    message = str(caught.value.message)
    assert "--max-inflation" in message and str(MIN_INPUT_ALLOWANCE) in message   # names the limit and the option
    assert caught.value.file == "bomb.bundle"


def test_the_per_input_allowance_scales_with_the_input():
    budget = DecompressionBudget(max_inflation=64, max_total=1 << 40)
    budget.begin_file("big.so", 406 << 20)          # librocsparse1 7.2.4 inflates 5.3x
    budget.charge(2135 << 20, "big.so", ".hip_fatbin")
    budget.begin_file("small.so", 48 << 10)
    budget.charge(MIN_INPUT_ALLOWANCE, "small.so", ".hip_fatbin")    # always allowed
    with pytest.raises(InputError, match="--max-inflation"):
        budget.charge(1, "small.so", ".hip_fatbin")


def test_the_run_total_counts_every_input():
    budget = DecompressionBudget(max_inflation=1e9, max_total=3 << 20)
    for name in ("a.co", "b.co"):
        budget.begin_file(name, 1 << 20)
        budget.charge(1 << 20, name, "bundle file")
    budget.begin_file("c.co", 1 << 20)
    with pytest.raises(InputError, match="--max-decompressed-total"):
        budget.charge(2 << 20, "c.co", "bundle file")


def test_the_option_raises_the_per_input_limit():
    data = bomb(2, 200 << 20)
    with pytest.raises(InputError, match="--max-inflation"):
        read_buffer(data, "b", ReadOptions(max_inflation=64, max_decompressed_total=1 << 40))
    # Raised: the headers pass, and the forged frames are caught when inflated.
    with pytest.raises(InputError, match="declare|hash|stream"):
        read_buffer(data, "b", ReadOptions(max_inflation=1e6))


# -- compact records ----------------------------------------------------------------

def test_kernel_table_is_a_sequence_of_records_and_writes_the_same_json(code_objects):
    _, records = read_buffer(bundle_bytes(entries_of(code_objects)), "x")
    table = KernelTable()
    table.extend(records)
    assert len(table) == len(records) and list(table) == records and table == records
    assert table[0] == records[0] and table[-2:] == records[-2:]
    document = {"schema": "spillway.report/2", "spillway_version": "0", "files": [{"path": "x"}],
                "kernels": table}
    text = b"".join(json_chunks(document))
    assert orjson.loads(text) == dict(document, kernels=records)
    assert text.count(b"\n") >= len(records)          # one kernel per line
    empty = b"".join(json_chunks(dict(document, kernels=KernelTable())))
    assert orjson.loads(empty)["kernels"] == []


# -- the metadata fast path ------------------------------------------------------------

def _notes(data: bytes) -> list[bytes]:
    from spillway.formats import elf, metadata

    out = []
    for note, _ in elf.ElfImage(memoryview(data)).notes():
        out += [bytes(desc) for name, kind, desc, _ in metadata.iter_notes(note) if kind == metadata.NT_AMDGPU_METADATA]
    return out


def test_the_exact_path_reads_what_the_fast_path_reads(code_objects):
    """decode_resources (the exact path) skips the argument lists as the fast
    path does; kernels_from and target_of give the same records, and
    malformations stay errors."""
    import msgpack

    from spillway.formats import metadata

    descs = [d for data in code_objects.values() for d in _notes(data)]
    assert len(descs) > 2
    for desc in descs:
        exact, fast = metadata.decode_resources(desc), metadata.read_fast(desc)
        assert fast is not None
        assert metadata.kernels_from(exact) == fast.kernels
        assert metadata.target_of(exact) == fast.target
    desc = descs[0]
    bad = [desc + b"\xc0", desc[:-3], msgpack.packb([1, 2]), b"\xc1",
           msgpack.packb({b"amdhsa.kernels": [{b".name": b"k", b".vgpr_count": {(1,): 2}}]}, use_bin_type=False)]
    for data in bad:
        with pytest.raises(InputError):
            metadata.kernels_from(metadata.decode_resources(data))
    wrong = [msgpack.packb({"amdhsa.kernels": 3}), msgpack.packb({"amdhsa.kernels": [5]})]
    for data in wrong:
        with pytest.raises(InputError, match="not a list|not a map"):
            metadata.kernels_from(metadata.decode_resources(data))


def windowed_ccob(plain: bytes, window_log: int) -> bytes:
    """A CCOB v3 zstd bundle whose frame's window is 2**window_log bytes: below
    the content size it is a multi-segment frame (rocBLAS 7.2.4's bundles above
    128 MiB), read as a stream; the bundler's smaller ones are single-segment."""
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=window_log, source_size=0)
    return ccob(plain, 3, 1, payload=zstandard.ZstdCompressor(compression_params=params).compress(plain))


def test_single_segment_frames_inflate_in_one_call_and_multi_segment_ones_stream(code_objects, monkeypatch):
    plain = bundle_bytes(entries_of(code_objects))
    calls = []
    for name in ("_InflatedWhole", "_InflateStream"):
        real = getattr(bundles, name)
        monkeypatch.setattr(bundles, name, lambda *args, real=real, name=name: calls.append(name) or real(*args))
    expected = {GFX1100_ID: code_objects[GFX1100_ID], GFX90A_ID: code_objects[GFX90A_ID]}
    single = bundles.walk_lazy(memoryview(ccob(plain, 3, 1)))[0]
    multi = bundles.walk_lazy(memoryview(windowed_ccob(plain, 10)))[0]
    assert zstandard.get_frame_parameters(multi.data[32:]).window_size < len(plain)
    for pending, path in ((single, "_InflatedWhole"), (multi, "_InflateStream")):
        calls.clear()
        assert {e.entry_id: bytes(e.payload) for e in bundles.iter_compressed_entries(pending, verify_hash=True)} \
            == expected
        assert calls == [path]


def test_a_truncated_single_segment_frame_is_one_input_error(code_objects):
    plain = bundle_bytes(entries_of(code_objects))
    cut = ccob(plain, 3, 1, payload=zstandard.ZstdCompressor().compress(plain)[:-64])
    pending = bundles.walk_lazy(memoryview(cut))[0]
    with pytest.raises(InputError, match="zstd stream is corrupt"):
        list(bundles.iter_compressed_entries(pending))


def test_a_decompressor_with_a_large_window_is_not_kept_idle(code_objects, monkeypatch):
    plain = bundle_bytes(entries_of(code_objects))
    monkeypatch.setattr(bundles, "_IDLE_ZSTD", [])
    monkeypatch.setattr(bundles, "_KEPT_WINDOW", 1 << 10)
    list(bundles.iter_compressed_entries(bundles.walk_lazy(memoryview(windowed_ccob(plain, 11)))[0]))
    assert bundles._IDLE_ZSTD == []           # its 2 KiB window is "large" here
    list(bundles.iter_compressed_entries(bundles.walk_lazy(memoryview(windowed_ccob(plain, 10)))[0]))
    assert len(bundles._IDLE_ZSTD) == 1


@pytest.fixture(params=["heap", "huge pages"])
def inflate_path(request, monkeypatch):
    """Both ways a single-segment frame is inflated: one call into a bytes
    object, or (large outputs) into a private mapping given huge pages."""
    if request.param == "huge pages":
        monkeypatch.setattr(bundles, "_HUGE_PAGES_FROM", 0)
        monkeypatch.setattr(bundles, "_huge_pages", lambda: True)
    else:
        monkeypatch.setattr(bundles, "_HUGE_PAGES_FROM", 1 << 62)
    return request.param


def test_both_inflate_paths_give_the_entries_and_check_the_hash(code_objects, inflate_path, monkeypatch):
    made = []
    real = bundles._inflate_into_huge_pages
    monkeypatch.setattr(bundles, "_inflate_into_huge_pages", lambda *a: made.append(a[2]) or real(*a))
    plain = bundle_bytes(entries_of(code_objects))
    pending = bundles.walk_lazy(memoryview(ccob(plain, 3, 1)))[0]
    first = {e.entry_id: e.payload for e in bundles.iter_compressed_entries(pending, verify_hash=True)}
    again = list(bundles.iter_compressed_entries(pending))       # a later bundle leaves the first one's views
    assert {k: bytes(v) for k, v in first.items()} == \
        {GFX1100_ID: code_objects[GFX1100_ID], GFX90A_ID: code_objects[GFX90A_ID]}
    assert len(again) == 2
    assert made == ([len(plain)] * 2 if inflate_path == "huge pages" else [])
    data = bytearray(ccob(plain, 3, 1))
    data[24] ^= 0xFF                        # the stored hash
    with pytest.raises(InputError, match="hash mismatch"):
        list(bundles.iter_compressed_entries(bundles.walk_lazy(memoryview(bytes(data)))[0], verify_hash=True))


def test_both_inflate_paths_refuse_a_truncated_frame(code_objects, inflate_path):
    plain = bundle_bytes(entries_of(code_objects))
    cut = ccob(plain, 3, 1, payload=zstandard.ZstdCompressor().compress(plain)[:-64])
    with pytest.raises(InputError, match="zstd stream is corrupt|declared uncompressed size"):
        list(bundles.iter_compressed_entries(bundles.walk_lazy(memoryview(cut))[0]))


@pytest.mark.parametrize("setting, allowed", [("always [madvise] never", True), ("[always] madvise never", True),
                                              ("always madvise [never]", False), ("", False)])
def test_huge_pages_are_asked_for_only_where_the_kernel_gives_them(setting, allowed):
    assert bundles.huge_pages_allowed(setting) is allowed


def test_without_a_mapping_a_large_frame_inflates_on_the_heap(code_objects, monkeypatch):
    monkeypatch.setattr(bundles, "_HUGE_PAGES_FROM", 0)
    monkeypatch.setattr(bundles, "_huge_pages", lambda: True)

    def no_memory(*args, **kwargs):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(bundles.mmap, "mmap", no_memory)
    plain = bundle_bytes(entries_of(code_objects))
    pending = bundles.walk_lazy(memoryview(ccob(plain, 3, 1)))[0]
    assert {e.entry_id: bytes(e.payload) for e in bundles.iter_compressed_entries(pending, verify_hash=True)} == \
        {GFX1100_ID: code_objects[GFX1100_ID], GFX90A_ID: code_objects[GFX90A_ID]}
