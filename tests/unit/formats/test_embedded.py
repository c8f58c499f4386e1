"""Code objects embedded as data in host sections (--scan-embedded).

Fixtures: tests/data/containers/embedded/host.so (built by build.sh beside
it: two raw code objects pulled into .rodata and a section of its own with
.incbin, plus decoys that start with \\x7fELF), and the mojolearn-amd 0.8.62
wheel from PyPI (fetched by scripts/install-test-deps.sh into a cache outside
the checkout, never committed).  Oracles: the host's own symbol table
(llvm-readelf -s) for where each image sits, the committed .co files for its
bytes, and llvm-readelf --notes for every field.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest

from spillway.errors import InputError
from spillway.formats import embedded
from spillway.report.reader import ReadOptions, read_path
from support import oracles
from support.formats_fixtures import expected_by_symbol, one_line_error
from support.formats_fixtures import run_cli as _run_cli

from conftest import DATA

FIXTURE = DATA / "containers" / "embedded"
HOST = FIXTURE / "host.so"
MOJOLEARN = "mojolearn_amd-0.8.62-py3-none-manylinux_2_35_x86_64.whl"
def run_cli(*args: str) -> subprocess.CompletedProcess:
    return _run_cli(*args, timeout=600)   # the 180 MB wheel, on a loaded machine


MOJOLEARN_IMAGES = 4502   # 1288 + 928 + 674 + 1184 + 300 + 128 in its six libraries


def symbol_offsets(host: Path, pattern: str) -> dict[str, tuple[int, int]]:
    """name -> (file offset, size) of matching symbols, from llvm-readelf."""
    sections = {}
    text = subprocess.run([oracles.tool("llvm-readelf"), "-SW", str(host)], check=True,
                          capture_output=True, text=True).stdout
    for match in re.finditer(r"\[\s*(\d+)\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)", text):
        sections[int(match.group(1))] = (int(match.group(2), 16), int(match.group(3), 16))
    out = {}
    text = subprocess.run([oracles.tool("llvm-readelf"), "-sW", str(host)], check=True,
                          capture_output=True, text=True).stdout
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 8 and fields[6].isdigit() and re.fullmatch(pattern, fields[7]):
            address, ndx = int(fields[1], 16), int(fields[6])
            section_address, section_offset = sections[ndx]
            out[fields[7]] = (address - section_address + section_offset, int(fields[2], 0))
    return out


def records_of(path: Path, **options) -> list[dict]:
    return read_path(str(path), ReadOptions(**options))[1]


# -- the self-built host ------------------------------------------------------------------------

def test_without_the_option_no_device_code_names_the_option_and_the_count():
    line = one_line_error(run_cli("report", str(HOST)), str(HOST), "--scan-embedded",
                          "2 AMDGPU code objects embedded")
    assert "no device code" not in line


def test_images_are_found_where_the_symbols_say_with_the_bytes_of_the_code_objects(tmp_path):
    symbols = symbol_offsets(HOST, r"gfx\w+_image")
    data = HOST.read_bytes()
    found = embedded.find_images(memoryview(data))
    assert [(image.section, image.offset) for image in found] == [
        (".rodata", symbols["gfx1100_image"][0]), (".kernel_blobs", symbols["gfx90a_image"][0])]
    for image, arch in zip(found, ("gfx1100", "gfx90a")):
        offset, size = symbols[f"{arch}_image"]
        assert bytes(image.payload) == (FIXTURE / f"{arch}.co").read_bytes()
        assert image.payload.nbytes == size


def test_every_field_matches_llvm_readelf_on_the_embedded_code_objects(tmp_path):
    symbols = symbol_offsets(HOST, r"gfx\w+_image")
    records = records_of(HOST, scan_embedded=True)
    assert len(records) == 4
    for arch in ("gfx1100", "gfx90a"):
        expected = expected_by_symbol(FIXTURE / f"{arch}.co")
        mine = {r["symbol"]: r for r in records if r["target"] == arch}
        assert set(mine) == set(expected)
        assert sum(r["target"] == arch for r in records) == len(expected)   # no record twice
        for symbol, want in expected.items():
            got = mine[symbol]
            for field, value in want.items():
                if not (field == "workgroup_processor_mode" and value is None):
                    assert got[field] == value, (arch, symbol, field)
            assert got["file"] == str(HOST)
            assert got["image_offset"] == symbols[f"{arch}_image"][0]
            assert got["archive"] is None and got["bundle_index"] is None
    # Same records as reading the code objects themselves, apart from where they were.
    direct = records_of(FIXTURE / "gfx1100.co")
    strip = lambda r: {k: v for k, v in r.items() if k not in ("file", "image_offset")}  # noqa: E731
    assert sorted(map(strip, direct), key=str) == sorted(
        (strip(r) for r in records if r["target"] == "gfx1100"), key=str)


def test_decoys_are_not_images():
    data = memoryview(HOST.read_bytes())
    starts = [m.start() for m in re.finditer(rb"\x7fELF", bytes(data))]
    assert len(starts) >= 5          # the host itself, two images, two decoys (and none inside images)
    assert len(embedded.find_images(data)) == 2


def test_cli_json_has_the_offset_field():
    result = run_cli("report", "--scan-embedded", str(HOST), "--json")
    assert result.returncode == 0, result.stderr
    kernels = json.loads(result.stdout)["kernels"]
    assert len(kernels) == 4 and all(k["image_offset"] > 0 and k["archive"] is None for k in kernels)
    assert {k["symbol"] for k in kernels} == {"embedded_private", "embedded_scale"}


def test_wheel_whose_members_hold_only_embedded_images(tmp_path):
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(HOST, "pkg/lib/host.so")
        archive.writestr("pkg/__init__.py", "")
    one_line_error(run_cli("report", str(wheel)), str(wheel), "--scan-embedded", "2 AMDGPU code objects")
    records = records_of(wheel, scan_embedded=True)
    assert {r["file"] for r in records} == {f"{wheel}!pkg/lib/host.so"}
    assert len(records) == 4


def test_directory_counts_the_images_it_did_not_read(tmp_path):
    shutil.copy(HOST, tmp_path / "a.so")
    shutil.copy(HOST, tmp_path / "b.so")
    one_line_error(run_cli("report", str(tmp_path)), "4 AMDGPU code objects", "of 2 files", "--scan-embedded")
    assert len(records_of(tmp_path, scan_embedded=True)) == 8


def test_images_inside_bundles_are_not_searched(builder):
    """A host with a .hip_fatbin: --scan-embedded must not find the bundle's
    code objects a second time (they are delimited by the bundle's sizes)."""
    from support.formats_fixtures import FORMATS
    obj = builder.hip(22, FORMATS, ["gfx90a", "gfx1100"])
    library = builder.link(22, [obj], "libk.so", "-shared")
    plain = records_of(library)
    scanned = records_of(library, scan_embedded=True)
    assert plain and sorted(map(str, plain)) == sorted(map(str, scanned))


# -- broken embedded images: exit 2, one line ---------------------------------------------------

def _patched(tmp_path: Path, name: str, edit) -> Path:
    data = bytearray(HOST.read_bytes())
    offset = symbol_offsets(HOST, r"gfx1100_image")["gfx1100_image"][0]
    edit(data, offset)
    path = tmp_path / name
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("case, edit, fragment", [
    ("section-table-outside", lambda d, o: struct.pack_into("<Q", d, o + 0x28, 0x7FFF0000),
     "section table"),
    ("lying-section-count", lambda d, o: struct.pack_into("<H", d, o + 0x3C, 4000), "section table"),
    ("section-outside", None, "runs past the end of section .rodata"),
    ("note-outside", None, "note"),
    ("no-section-table", lambda d, o: struct.pack_into("<H", d, o + 0x3C, 0), "no section table"),
])
def test_broken_embedded_image_is_an_error_naming_where(tmp_path, case, edit, fragment):
    if case in ("section-outside", "note-outside"):
        co = (FIXTURE / "gfx1100.co").read_bytes()
        shoff, = struct.unpack_from("<Q", co, 0x28)
        shnum, = struct.unpack_from("<H", co, 0x3C)
        headers = [struct.unpack_from("<IIQQQQIIQQ", co, shoff + i * 64) for i in range(shnum)]
        index = next(i for i, h in enumerate(headers) if h[1] == (7 if case == "note-outside" else 1))

        def edit(d, o, index=index):
            at = o + shoff + index * 64
            if case == "section-outside":
                struct.pack_into("<Q", d, at + 32, 1 << 20)          # sh_size
            else:
                note = o + headers[index][4]
                struct.pack_into("<I", d, note + 4, 1 << 20)           # descsz of the first note
    path = _patched(tmp_path, f"{case}.so", edit)
    for args in (["report", "--scan-embedded", str(path)], ["report", str(path)]):
        line = one_line_error(run_cli(*args), str(path), "embedded code object in section .rodata", fragment)
        assert "at offset 0x" in line


def test_image_without_kernel_metadata_is_stepped_over_not_counted():
    """Trap handlers and code object v2 blobs (as libhsa-runtime64 keeps in
    .data) are sound ELF images without NT_AMDGPU_METADATA: not an error, not
    an image, and not searched inside."""
    co = bytearray((FIXTURE / "gfx1100.co").read_bytes())
    shoff, = struct.unpack_from("<Q", co, 0x28)
    shnum, = struct.unpack_from("<H", co, 0x3C)
    for index in range(shnum):
        if struct.unpack_from("<I", co, shoff + index * 64 + 4)[0] == 7:      # SHT_NOTE -> SHT_PROGBITS
            struct.pack_into("<I", co, shoff + index * 64 + 4, 1)
    good = (FIXTURE / "gfx90a.co").read_bytes()
    blob = bytes(co) + good
    found = embedded.find_in_section(memoryview(blob), ".data", 0)
    assert [(image.offset, image.payload.nbytes) for image in found] == [(len(co), len(good))]


def test_truncated_host_section(tmp_path):
    """The image's tables point past a host section that was cut short."""
    data = HOST.read_bytes()
    offset = symbol_offsets(HOST, r"gfx1100_image")["gfx1100_image"][0]
    view = memoryview(data)[offset:offset + 3000]
    with pytest.raises(InputError, match="runs past the end of section .rodata"):
        embedded.find_in_section(view, ".rodata", offset)


def test_weak_candidates_are_skipped_and_images_are_not_searched_inside():
    co = bytearray((FIXTURE / "gfx1100.co").read_bytes())
    # An AMDGPU HSA header claim inside the image (in its .text) that would be
    # a broken image if anyone searched there.
    text = next(h for h in (struct.unpack_from("<IIQQQQIIQQ", co, struct.unpack_from("<Q", co, 0x28)[0] + i * 64)
                            for i in range(struct.unpack_from("<H", co, 0x3C)[0])) if h[2] & 0x4)
    co[text[4]:text[4] + 64] = co[:64]
    pal = bytearray(co[:64])
    pal[7] = 65                                    # OS ABI AMDGPU PAL: not HSA, not a candidate
    blob = b"\x7fELF" + b"\0" * 60 + bytes(pal) + bytes(co) + b"\x7fEL"
    found = embedded.find_in_section(memoryview(blob), ".rodata", 0x1000)
    assert [(image.offset, image.payload.nbytes) for image in found] == [(0x1000 + 128, len(co))]


def test_random_mutations_raise_only_input_errors():
    data = HOST.read_bytes()
    offset = symbol_offsets(HOST, r"gfx1100_image")["gfx1100_image"][0]
    rng = random.Random(13)
    for _ in range(300):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutated[offset + rng.randrange(0, 7024)] = rng.randrange(256)
        try:
            embedded.find_images(memoryview(bytes(mutated)))
        except InputError:
            pass


# -- the real wheel -----------------------------------------------------------------------------

def cache_dir() -> Path:
    """Where scripts/fetch-pypi-fixtures.sh puts PyPI wheels (outside the checkout)."""
    return Path(os.environ.get("SPILLWAY_FIXTURES", "/var/cache/spillway-fixtures")) / "pypi"


@pytest.fixture(scope="module")
def mojolearn() -> Path:
    path = cache_dir() / MOJOLEARN
    if not path.exists():
        message = f"{path} missing: scripts/fetch-pypi-fixtures.sh (run by install-test-deps.sh) fetches it"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def test_mojolearn_wheel_without_the_option(mojolearn):
    one_line_error(run_cli("report", str(mojolearn)), str(mojolearn), "--scan-embedded",
                   f"{MOJOLEARN_IMAGES} AMDGPU code objects", "of 6 files")


def test_mojolearn_wheel_every_image_is_where_its_symbol_is_and_matches_llvm_readelf(mojolearn, tmp_path):
    records = records_of(mojolearn, scan_embedded=True)
    assert len({(r["file"], r["image_offset"]) for r in records}) == MOJOLEARN_IMAGES
    with zipfile.ZipFile(mojolearn) as archive:
        members = [n for n in archive.namelist() if n.endswith(".so")]
        archive.extractall(tmp_path, members)
    checked = 0
    for member in members:
        host = tmp_path / member
        mine = [r for r in records if r["file"] == f"{mojolearn}!{member}"]
        if not mine:
            continue
        # The images are C string literals: each symbol is one image plus its NUL.
        symbols = {offset: size for offset, size in symbol_offsets(host, r"static_string_\w+").values()}
        data = host.read_bytes()
        offsets = sorted({r["image_offset"] for r in mine})
        for offset in offsets:
            assert offset in symbols, (member, offset)
        # llvm-readelf on a sample of images cut out at those offsets and sizes.
        for offset in random.Random(member).sample(offsets, min(5, len(offsets))):
            image = tmp_path / f"image-{checked}.co"
            image.write_bytes(data[offset:offset + symbols[offset] - 1])
            expected = expected_by_symbol(image)
            got = {r["symbol"]: r for r in mine if r["image_offset"] == offset}
            assert set(got) == set(expected)
            assert sum(r["image_offset"] == offset for r in mine) == len(expected)   # no record twice
            for symbol, want in expected.items():
                for field, value in want.items():
                    if not (field == "workgroup_processor_mode" and value is None):
                        assert got[symbol][field] == value, (member, offset, symbol, field)
            checked += 1
    assert checked >= 25


HSA_RUNTIME = Path("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1")


def test_rocm_runtime_blit_kernels_in_data_match_llvm_readelf(tmp_path):
    """Debian's libhsa-runtime64 (installed with hipcc) keeps its blit kernels
    as code objects in .data, next to trap handlers without metadata."""
    if not HSA_RUNTIME.exists():
        message = f"{HSA_RUNTIME} missing: apt-get install libhsa-runtime64-1 (hipcc pulls it in)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    one_line_error(run_cli("report", str(HSA_RUNTIME)), "--scan-embedded", "AMDGPU code objects embedded")
    data = HSA_RUNTIME.read_bytes()
    found = embedded.find_images(memoryview(data))
    assert len(found) >= 10 and {image.section for image in found} == {".data"}
    mine = records_of(HSA_RUNTIME, scan_embedded=True)
    for number, image in enumerate(found):
        path = tmp_path / f"blit-{number}.co"
        path.write_bytes(bytes(image.payload))
        expected = oracles.expected_records(path)      # llvm-readelf reads the image cut at our extent
        got = sorted((r for r in mine if r["image_offset"] == image.offset), key=lambda r: r["symbol"])
        assert len(got) == len(expected) > 0
        for want, have in zip(sorted(expected, key=lambda r: r["symbol"]), got):
            for field, value in want.items():
                if not (field == "workgroup_processor_mode" and value is None):
                    assert have[field] == value, (image.offset, want["symbol"], field)
