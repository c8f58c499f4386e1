"""LLVM OffloadBinary records, versions 1 to 3, several entries per record,
compressed version 3.

Fixtures: tests/data/containers/offload_binary/ (built by build.sh there with
Debian's clang 23.1.4 and clang 24 inside the sid root; committed so these
tests need no root).  Oracles: llvm-objdump-24 --offloading's listing of the
same files (llvm-objdump-24-offloading.txt, captured with the command
written above each block), the code objects that were packed (gfx1100.co,
gfx90a.co) and llvm-readelf --notes on them; llvm-objdump --offloading for the
linked libraries.  Synthetic records come from a writer of the layout here.
"""

from __future__ import annotations

import random
import re
import struct
import zlib
from pathlib import Path

import pytest
import zstandard

from spillway.errors import BitcodeOnly, InputError
from spillway.formats import offload_binary
from spillway.formats.containers import scan_path
from spillway.report.reader import ReadOptions, read_buffer, read_path
from support import oracles
from support.formats_fixtures import expected_by_symbol, one_line_error, run_cli

from conftest import DATA

FIXTURES = DATA / "containers" / "offload_binary"
OBJDUMP_KINDS = {"object": "elf", "bitcode": "llvm ir", "none": "<none>"}
PRODUCERS = {1: "openmp", 2: "cuda", 4: "hip", 8: "sycl"}


def objdump_listing() -> dict[str, list[dict]]:
    """file -> the entries llvm-objdump-24 --offloading printed for it."""
    out: dict[str, list[dict]] = {}
    current = None
    for line in (FIXTURES / "llvm-objdump-24-offloading.txt").read_text().splitlines():
        if line.startswith("## "):
            current = out.setdefault(line.split()[-1], [])
        elif line.startswith("OFFLOADING IMAGE"):
            current.append({})
        elif line.strip() and current:
            key, value = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            current[-1][key] = value
    return out


def section_images(path: Path) -> list[offload_binary.OffloadImage]:
    data = path.read_bytes()
    if data.startswith(offload_binary.MAGIC):
        return offload_binary.parse_section(memoryview(data))
    from elftools.elf.elffile import ELFFile
    with path.open("rb") as handle:
        section = ELFFile(handle).get_section_by_name(".llvm.offloading")
        return offload_binary.parse_section(memoryview(section.data()))


LISTED = sorted(objdump_listing())


@pytest.mark.parametrize("name", LISTED)
def test_every_entry_matches_llvm_objdump(name):
    want = objdump_listing()[name]
    got = section_images(FIXTURES / name)
    assert len(got) == len(want) >= 1
    for image, expected in zip(got, want):
        assert OBJDUMP_KINDS[image.image_kind] == expected["kind"]
        assert image.arch == expected["arch"] and image.triple == expected["triple"]
        assert PRODUCERS[image.offload_kind] == expected["producer"]
        assert f"{image.image.nbytes} bytes" == expected["image size"]


def test_versions_written_by_each_tool():
    versions = {name: {image.version for image in section_images(FIXTURES / name)} for name in LISTED}
    assert versions["rdc-23.o"] == {2} and versions["ob-v2.bin"] == {2}
    assert versions["rdc-24.o"] == {3} and versions["ob-v3.bin"] == {3} and versions["ob-v3-zstd.bin"] == {3}
    assert versions["ob-v1.bin"] == {1}
    compressed = {name for name in LISTED if any(i.compressed for i in section_images(FIXTURES / name))}
    assert compressed == {"ob-v3-zstd.bin", "ob-v3-zlib.bin", "host-v3-zstd.o"}


@pytest.mark.parametrize("name", ["rdc-23.o", "rdc-24.o", "merged-24.o"])
def test_rdc_objects_are_bitcode_only(name):
    path = FIXTURES / name
    one_line_error(run_cli("report", str(path)), str(path), ".llvm.offloading record",
                   "bitcode only: resource usage exists after the device link")
    scan = scan_path(str(path))
    assert not scan.images
    assert len(scan.bitcode_only) == (4 if name == "merged-24.o" else 2)


def test_two_records_in_one_section():
    images = section_images(FIXTURES / "merged-24.o")
    assert sorted({image.offset for image in images}) == [0, images[-1].offset] and images[-1].offset > 0
    assert images[-1].offset % 8 == 0
    assert [image.entry_index for image in images] == [0, 1, 0, 1]


@pytest.mark.parametrize("name", ["ob-v1.bin", "ob-v2.bin", "ob-v3.bin", "ob-v3-zstd.bin", "ob-v3-zlib.bin",
                                  "host-v3-zstd.o"])
def test_packed_code_objects_are_read_as_llvm_readelf_reads_them(name):
    path = FIXTURES / name
    records = read_path(str(path), ReadOptions())[1]
    archs = ["gfx1100"] if name == "ob-v1.bin" else ["gfx1100", "gfx90a"]
    images = [i for i in section_images(path)]
    assert [i.arch for i in images] == archs
    for image, arch in zip(images, archs):
        assert bytes(image.image) == (FIXTURES / f"{arch}.co").read_bytes()
    assert {r["target"] for r in records} == set(archs)
    for arch in archs:
        expected = expected_by_symbol(FIXTURES / f"{arch}.co")
        mine = {r["symbol"]: r for r in records if r["target"] == arch}
        assert set(mine) == set(expected)
        assert sum(r["target"] == arch for r in records) == len(expected)   # no record twice
        for symbol, want in expected.items():
            for field, value in want.items():
                if not (field == "workgroup_processor_mode" and value is None):
                    assert mine[symbol][field] == value, (name, arch, field)
            assert mine[symbol]["file"] == str(path) and mine[symbol]["bundle_index"] is None


def test_uncompressed_images_carry_their_file_offset():
    data = (FIXTURES / "ob-v3.bin").read_bytes()
    scan = scan_path(str(FIXTURES / "ob-v3.bin"))
    for image in scan.images:
        assert image.offset == data.find(bytes(image.payload))
    assert all(image.offset is None for image in scan_path(str(FIXTURES / "ob-v3-zstd.bin")).images)


@pytest.mark.parametrize("name", ["linked-23.so", "linked-24.so", "plain-23.o", "plain-24.o"])
def test_linked_and_plain_outputs_match_llvm_readelf(name, tmp_path):
    path = FIXTURES / name
    records = read_path(str(path), ReadOptions())[1]
    entries = [e for e in oracles.extract(path, tmp_path / "oracle") if e[2].read_bytes()[:4] == b"\x7fELF"]
    expected = {}
    for index, entry_id, code_object in entries:
        for symbol, record in expected_by_symbol(code_object).items():
            expected[(index, record["target"], symbol)] = record
    got = {(r["bundle_index"], r["target"], r["symbol"]): r for r in records}
    assert set(got) == set(expected) and len(got) == (8 if name.startswith("linked") else 1)
    assert len(records) == len(got)   # no record twice
    for key, want in expected.items():
        for field, value in want.items():
            if not (field == "workgroup_processor_mode" and value is None):
                assert got[key][field] == value, (key, field)


# -- synthetic records ----------------------------------------------------------------------------

def write_record(entries, version: int, compress: str | None = None) -> bytes:
    """An OffloadBinary record in the layout of OffloadBinary.h: entries are
    (image kind, offload kind, flags, {key: value}, image bytes)."""
    header_size = 40 if version >= 3 else 32
    pair_size = 16 if version == 1 else 24
    strings = bytearray(b"\0")
    string_at = {}

    def intern(text: str) -> int:
        if text not in string_at:
            string_at[text] = len(strings)
            strings.extend(text.encode() + b"\0")
        return string_at[text]

    pairs_total = sum(len(e[3]) for e in entries)
    pairs_at = header_size + 40 * len(entries)
    table_at = pairs_at + pair_size * pairs_total
    for entry in entries:
        for key, value in entry[3].items():
            intern(key), intern(value)
    images_at = (table_at + len(strings) + 7) & ~7
    size = (images_at + sum(len(e[4]) for e in entries) + 7) & ~7
    out = bytearray(size)
    struct.pack_into("<4sIQQQ", out, 0, offload_binary.MAGIC, version, size, header_size,
                     40 if version == 1 else len(entries))
    pair, image_at = pairs_at, images_at
    for index, (image_kind, offload_kind, flags, mapping, image) in enumerate(entries):
        struct.pack_into("<HHIQQQQ", out, header_size + 40 * index, image_kind, offload_kind, flags, pair,
                         len(mapping), image_at, len(image))
        for key, value in mapping.items():
            if version == 1:
                struct.pack_into("<QQ", out, pair, table_at + string_at[key], table_at + string_at[value])
            else:
                struct.pack_into("<QQQ", out, pair, table_at + string_at[key], table_at + string_at[value],
                                 len(value.encode()))
            pair += pair_size
        out[image_at:image_at + len(image)] = image
        image_at += len(image)
    out[table_at:table_at + len(strings)] = strings
    if compress is None:
        return bytes(out)
    body = bytes(out[header_size:])
    packed = zstandard.ZstdCompressor().compress(body) if compress == "zstd" else zlib.compress(body)
    header = bytearray(out[:header_size])
    struct.pack_into("<Q", header, 8, header_size + len(packed))
    struct.pack_into("<Q", header, 32, size)
    record = bytes(header) + packed
    return record + b"\0" * (-len(record) % 8)


def code_object(arch: str) -> bytes:
    return (FIXTURES / f"{arch}.co").read_bytes()


def amdgpu(arch: str, triple: str = "amdgcn-amd-amdhsa") -> dict:
    return {"triple": triple, "arch": arch}


@pytest.mark.parametrize("version, compress", [(2, None), (3, None), (3, "zstd"), (3, "zlib")])
def test_synthetic_records_with_several_entries(version, compress):
    entries = [(1, 4, 0, amdgpu("gfx1100"), code_object("gfx1100")),
               (0, 4, offload_binary.FLAG_METADATA_ONLY, {"triple": "amdgcn-amd-amdhsa", "note": "metadata"}, b""),
               (1, 4, 0, amdgpu("gfx90a", "amdgpu9.0a-amd-amdhsa"), code_object("gfx90a")),
               (1, 2, 0, {"triple": "nvptx64-nvidia-cuda", "arch": "sm_90"}, b"cubin")]
    blob = write_record(entries, version, compress) + write_record(entries[:1], 1)
    images = offload_binary.parse_section(memoryview(blob))
    assert [(i.arch, i.version, i.metadata_only) for i in images] == [
        ("gfx1100", version, False), ("", version, True), ("gfx90a", version, False),
        ("sm_90", version, False), ("gfx1100", 1, False)]
    records = read_buffer(blob, "synthetic.bin")[1]
    assert sorted({(r["target"]) for r in records}) == ["gfx1100", "gfx90a"]
    per_code_object = len(oracles.expected_records(FIXTURES / "gfx1100.co"))
    assert len(records) == 3 * per_code_object       # the CUDA entry and the metadata-only entry are not read


@pytest.mark.parametrize("compress", [None, "zstd"])
def test_fatbinary_image_holding_an_offload_bundle(compress):
    """An entry whose image is a clang offload bundle (kind fatbinary) is
    walked by the bundle's size fields, like .hip_fatbin."""
    from elftools.elf.elffile import ELFFile
    with (FIXTURES / "plain-24.o").open("rb") as handle:
        fatbin = ELFFile(handle).get_section_by_name(".hip_fatbin").data()
    blob = write_record([(4, 4, 0, amdgpu("gfx1100"), fatbin)], 3, compress)
    file_record, found = read_buffer(blob, "fatbinary.bin")
    direct = read_path(str(FIXTURES / "plain-24.o"), ReadOptions())[1]
    assert file_record["bundles"] == 1
    assert [(r["target"], r["symbol"], r["vgpr_count"]) for r in found] == \
        [(r["target"], r["symbol"], r["vgpr_count"]) for r in direct]


def test_values_with_their_own_size_are_not_read_to_a_nul():
    record = bytearray(write_record([(1, 4, 0, amdgpu("gfx1100"), code_object("gfx1100"))], 3))
    # The string map's value size wins over the NUL (v2+ layout).
    entry_strings, = struct.unpack_from("<Q", record, 40 + 8)
    key_at, value_at, value_size = struct.unpack_from("<QQQ", record, entry_strings + 24)
    struct.pack_into("<Q", record, entry_strings + 24 + 16, value_size - 3)
    images = offload_binary.parse_section(memoryview(bytes(record)))
    assert images[0].arch == "gfx1"


# -- bad input: exit 2, one line ----------------------------------------------------------------

def _mutate(name: str, edit) -> bytes:
    data = bytearray((FIXTURES / name).read_bytes())
    edit(data)
    return bytes(data)


BAD = {
    "truncated": ("ob-v3.bin", lambda d: d.__delitem__(slice(5000, None)), "does not fit"),
    "truncated-header": ("ob-v3.bin", lambda d: d.__delitem__(slice(36, None)), "truncated OffloadBinary v3 header"),
    "lying-size": ("ob-v2.bin", lambda d: struct.pack_into("<Q", d, 8, 1 << 40), "does not fit"),
    "lying-entry-count": ("ob-v3.bin", lambda d: struct.pack_into("<Q", d, 24, 1000), "entry table"),
    "entry-table-in-header": ("ob-v3.bin", lambda d: struct.pack_into("<Q", d, 16, 8), "overlaps"),
    "image-outside": ("ob-v3.bin", lambda d: struct.pack_into("<Q", d, 40 + 32, 1 << 20), "runs past the record"),
    "strings-outside": ("ob-v2.bin", lambda d: struct.pack_into("<Q", d, 32 + 16, 1 << 30), "string map"),
    "string-outside": ("ob-v1.bin", None, "outside the record"),
    "inflated-size-too-big": ("ob-v3-zstd.bin", lambda d: struct.pack_into("<Q", d, 32, 9000), "inflates to"),
    "inflated-size-too-small": ("ob-v3-zlib.bin", lambda d: struct.pack_into("<Q", d, 32, 4000), "inflates past"),
    "inflated-size-above-cap": ("ob-v3-zstd.bin", lambda d: struct.pack_into("<Q", d, 32, 1 << 42), "above the cap"),
    "corrupt-zstd": ("ob-v3-zstd.bin", lambda d: d.__setitem__(slice(60, 90), b"\xff" * 30), "zstd"),
    "corrupt-zlib": ("ob-v3-zlib.bin", lambda d: d.__setitem__(slice(60, 90), b"\xff" * 30), "zlib"),
    "version-4": ("ob-v3.bin", lambda d: struct.pack_into("<I", d, 4, 4), "unsupported OffloadBinary version 4"),
    "no-entries": ("ob-v3.bin", lambda d: struct.pack_into("<Q", d, 24, 0), "no entries"),
}


def _string_outside(d: bytearray) -> None:
    strings_at, = struct.unpack_from("<Q", d, 32 + 8)
    struct.pack_into("<Q", d, strings_at, 1 << 33)


BAD["string-outside"] = ("ob-v1.bin", _string_outside, "outside the record")


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_records_are_one_line_errors(tmp_path, case):
    name, edit, fragment = BAD[case]
    path = tmp_path / f"{case}.bin"
    path.write_bytes(_mutate(name, edit))
    one_line_error(run_cli("report", str(path)), str(path), "OffloadBinary", fragment)


def test_bad_compressed_record_inside_a_host_object(tmp_path):
    data = bytearray((FIXTURES / "host-v3-zstd.o").read_bytes())
    start = data.find(offload_binary.MAGIC)
    struct.pack_into("<Q", data, start + 32, 9000)
    path = tmp_path / "host.o"
    path.write_bytes(bytes(data))
    line = one_line_error(run_cli("report", str(path)), str(path), ".llvm.offloading", "inflates to")
    assert f"at offset {start + 32:#x}" in line     # the InflatedSize field, as a file offset


def test_fuzzed_records_raise_only_input_errors():
    rng = random.Random(13)
    seeds = [(FIXTURES / name).read_bytes() for name in ("ob-v2.bin", "ob-v3.bin", "ob-v3-zstd.bin", "ob-v1.bin")]
    for _ in range(600):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 6)):
            at = rng.randrange(0, 160) if rng.random() < 0.7 else rng.randrange(len(data))
            data[at] = rng.randrange(256)
        if rng.random() < 0.2:
            del data[rng.randrange(len(data)):]
        try:
            read_buffer(bytes(data), "fuzz.bin")
        except InputError:
            pass
        except BitcodeOnly:
            pass
