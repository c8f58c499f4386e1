"""ROCm kpack: split host binaries, .kpack archives, folders, .kpm manifests.

Fixtures: tests/data/containers/kpack/ (build.sh there): two libraries we
built (two translation units each, gfx1100 and gfx90a, one with compressed
bundles) and what AMD's own splitter (ROCm/rocm-kpack split_artifacts.py)
made of them.  Oracles: the unsplit libraries (every kernel read through the
split binary must equal the unsplit binary's), llvm-objdump --offloading's
code objects of the unsplit library (byte-equal to the archive's blobs) and
llvm-readelf --notes.  Synthetic archives (zstd-per-kernel, which the
splitter does not write by default) and manifests come from writers of the
documented layout here.
"""

from __future__ import annotations

import os
import random
import shutil
import struct
from pathlib import Path

import msgpack
import pytest
import zstandard

from spillway.errors import InputError
from spillway.formats import kpack
from spillway.formats.elf import SHT_NOBITS, ElfImage
from spillway.report.reader import ReadOptions, read_path
from support import oracles
from support.formats_fixtures import one_line_error, run_cli

from conftest import DATA

FIXTURES = DATA / "containers" / "kpack"
INSTALLED = FIXTURES / "installed"
STAGE = INSTALLED / "stage"
LIBS = ("libspw.so", "libspwz.so")
ARCHS = ("gfx1100", "gfx90a")


def records(path: Path | str, **options) -> list[dict]:
    return read_path(str(path), ReadOptions(**options))[1]


def by_kernel(found: list[dict]) -> dict[tuple, dict]:
    out = {(r["bundle_index"], r["target"], r["symbol"]): r for r in found}
    assert len(out) == len(found)
    return out


def install(tmp_path: Path, archs=ARCHS, libs=LIBS) -> Path:
    """A copy of the installed tree with some architectures' archives."""
    root = tmp_path / "prefix"
    (root / "stage" / "lib").mkdir(parents=True)
    (root / "stage" / ".kpack").mkdir()
    for lib in libs:
        shutil.copy(STAGE / "lib" / lib, root / "stage" / "lib" / lib)
    for arch in archs:
        shutil.copy(STAGE / ".kpack" / f"spw_lib_{arch}.kpack", root / "stage" / ".kpack")
    return root


# -- what the splitter wrote ---------------------------------------------------------------------

@pytest.mark.parametrize("lib", LIBS)
def test_split_binary_has_hipk_wrappers_a_marker_and_no_device_code(lib):
    data = memoryview((STAGE / "lib" / lib).read_bytes())
    image = ElfImage(data)
    sections = {s.name: s for s in image.sections}
    assert sections[".hip_fatbin"].type == SHT_NOBITS
    offset, size = sections[kpack.WRAPPER_SECTION].offset, sections[kpack.WRAPPER_SECTION].size
    assert kpack.parse_wrappers(data[offset:offset + size], offset) == [(kpack.HIPK, 0), (kpack.HIPK, 1)]
    offset, size = sections[kpack.REF_SECTION].offset, sections[kpack.REF_SECTION].size
    reference = kpack.parse_reference(data[offset:offset + size], offset)
    assert reference.kernel_name == f"stage/lib/{lib}"
    assert reference.search_paths == ["../.kpack/spw_lib_@GFXARCH@.kpack"]


@pytest.mark.parametrize("lib", LIBS)
def test_every_kernel_through_the_split_binary_equals_the_unsplit_binarys(lib):
    split = by_kernel(records(STAGE / "lib" / lib))
    unsplit = by_kernel(records(FIXTURES / "unsplit" / lib))
    assert set(split) == set(unsplit) and len(split) == 8
    assert {k[0] for k in split} == {0, 1} and {k[1] for k in split} == set(ARCHS)
    for key, want in unsplit.items():
        got = split[key]
        assert got["file"] == str(STAGE / "lib" / lib)
        assert got["archive"] == os.path.normpath(STAGE / ".kpack" / f"spw_lib_{key[1]}.kpack")
        assert {k: v for k, v in got.items() if k not in ("file", "archive")} == \
            {k: v for k, v in want.items() if k not in ("file", "archive")}


def test_archive_blobs_are_the_code_objects_llvm_objdump_extracts_and_match_llvm_readelf(tmp_path):
    entries = oracles.extract(FIXTURES / "unsplit" / "libspw.so", tmp_path / "oracle")
    code_objects = {(index, entry_id.split("--", 1)[1]): path.read_bytes() for index, entry_id, path in entries}
    assert len(code_objects) == 4
    mine = by_kernel(records(STAGE / "lib" / "libspw.so"))
    for arch in ARCHS:
        data = memoryview((STAGE / ".kpack" / f"spw_lib_{arch}.kpack").read_bytes())
        archive = kpack.parse_archive(data)
        assert archive.scheme == "none" and archive.gfx_arches == [arch]
        for entry in archive.for_binary("stage/lib/libspw.so"):
            payload, offset = kpack.code_object(data, archive, entry, max_decompressed=1 << 30)
            assert bytes(payload) == code_objects[(entry.index, arch)]
            path = tmp_path / f"{entry.index}-{arch}.co"
            path.write_bytes(bytes(payload))
            for want in oracles.expected_records(path):
                got = mine[(entry.index, want["target"], want["symbol"])]
                for field, value in want.items():
                    if not (field == "workgroup_processor_mode" and value is None):
                        assert got[field] == value, (entry.key, field)


def test_archive_on_its_own():
    path = STAGE / ".kpack" / "spw_lib_gfx1100.kpack"
    found = records(path)
    assert len(found) == 8
    assert {r["file"] for r in found} == {f"{path}!stage/lib/libspw.so", f"{path}!stage/lib/libspwz.so"}
    assert {r["archive"] for r in found} == {str(path)} and {r["bundle_index"] for r in found} == {0, 1}
    assert {r["target"] for r in found} == {"gfx1100"}


def test_folder_reads_each_code_object_once_through_its_binary():
    found = records(INSTALLED)
    assert len(found) == 16
    assert {r["file"] for r in found} == {str(STAGE / "lib" / lib) for lib in LIBS}


def test_folder_of_archives_alone(tmp_path):
    folder = tmp_path / "archives"
    shutil.copytree(STAGE / ".kpack", folder)
    found = records(folder)
    assert len(found) == 16 and all("!stage/lib/" in r["file"] for r in found)


def test_partial_install_reads_the_architectures_that_are_there(tmp_path):
    root = install(tmp_path, archs=("gfx90a",))
    found = records(root / "stage" / "lib" / "libspw.so")
    assert {r["target"] for r in found} == {"gfx90a"} and len(found) == 4


def test_missing_archives_name_what_was_looked_for(tmp_path):
    root = install(tmp_path, archs=())
    binary = root / "stage" / "lib" / "libspw.so"
    line = one_line_error(run_cli("report", str(binary)), str(binary), "split binary (kpack)", "stage/lib/libspw.so",
                          str(root / "stage" / ".kpack" / "spw_lib_@GFXARCH@.kpack"), "--kpack")
    assert "no device code" not in line
    # The folder too: a split binary whose archives are missing is never skipped.
    one_line_error(run_cli("report", str(root)), "split binary (kpack)")
    # Named on the command line, they are used.
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(STAGE / ".kpack", elsewhere)
    result = run_cli("report", "--all", "--kpack", str(elsewhere), str(binary), "--json")
    assert result.returncode == 0, result.stderr
    assert '"archive"' in result.stdout and str(elsewhere) in result.stdout
    # One archive file, or a manifest listing one, gives that architecture only.
    one = records(binary, kpack_archives=[str(elsewhere / "spw_lib_gfx90a.kpack")])
    assert {r["target"] for r in one} == {"gfx90a"} and len(one) == 4
    manifest = elsewhere / "spw_lib.kpm"
    manifest.write_bytes(write_manifest({"gfx1100": {"file": "spw_lib_gfx1100.kpack", "kernel_count": 4,
                                                     "size": (elsewhere / "spw_lib_gfx1100.kpack").stat().st_size}}))
    assert {r["target"] for r in records(binary, kpack_archives=[str(manifest)])} == {"gfx1100"}


def test_archives_without_the_binary(tmp_path):
    root = install(tmp_path, archs=())
    archive = write_archive({("stage/lib/other.so#0", "gfx1100"): code_object("gfx1100", 0)}, "none")
    (root / "stage" / ".kpack" / "spw_lib_gfx1100.kpack").write_bytes(archive)
    binary = root / "stage" / "lib" / "libspw.so"
    one_line_error(run_cli("report", str(binary)), "hold no code objects for 'stage/lib/libspw.so'")


def test_hipk_wrappers_without_a_marker(tmp_path):
    data = bytearray((STAGE / "lib" / "libspw.so").read_bytes())
    at = data.find(b".rocm_kpack_ref\0")
    data[at:at + 15] = b".rocm_kpack_rex"
    path = tmp_path / "libspw.so"
    path.write_bytes(bytes(data))
    one_line_error(run_cli("report", str(path)), str(path), "2 HIPK wrappers", "no .rocm_kpack_ref")


def test_broken_marker(tmp_path):
    data = bytearray((STAGE / "lib" / "libspw.so").read_bytes())
    image = ElfImage(memoryview(bytes(data)))
    marker = image.section(kpack.REF_SECTION)
    assert marker is not None
    offset, size = marker.offset, marker.size
    data[offset:offset + size] = b"\xc1" * size          # 0xc1 is never used in msgpack
    path = install(tmp_path, libs=()) / "stage" / "lib" / "libspw.so"
    path.write_bytes(bytes(data))
    one_line_error(run_cli("report", str(path)), str(path), "section .rocm_kpack_ref", "not valid msgpack")


# -- synthetic archives and manifests -----------------------------------------------------------

def code_object(arch: str, index: int) -> bytes:
    data = memoryview((STAGE / ".kpack" / f"spw_lib_{arch}.kpack").read_bytes())
    archive = kpack.parse_archive(data)
    entry = next(e for e in archive.for_binary("stage/lib/libspw.so") if e.index == index)
    return bytes(kpack.code_object(data, archive, entry, max_decompressed=1 << 30)[0])


def write_archive(kernels: dict[tuple[str, str], bytes], scheme: str, *, arches=None) -> bytes:
    """A .kpack file in the documented layout: header, blobs from 64, TOC."""
    out = bytearray(64)
    toc: dict = {}
    blobs = []
    frames = []
    for ordinal, ((key, arch), blob) in enumerate(kernels.items()):
        toc.setdefault(key, {})[arch] = {"type": "hsaco", "ordinal": ordinal, "original_size": len(blob)}
        if scheme == "none":
            blobs.append({"offset": len(out), "size": len(blob)})
            out += blob
        else:
            frames.append(zstandard.ZstdCompressor(level=3).compress(blob))
    document = {"format_version": 1, "group_name": "test", "gfx_arch_family": "mixed",
                "gfx_arches": arches or sorted({arch for _, arch in kernels}), "toc": toc,
                "compression_scheme": scheme}
    if scheme == "none":
        document["blobs"] = blobs
    else:
        blob = struct.pack("<I", len(frames)) + b"".join(struct.pack("<I", len(f)) + f for f in frames)
        document["zstd_offset"], document["zstd_size"] = 64, len(blob)
        out += blob
    toc_at = len(out)
    out += msgpack.packb(document, use_bin_type=True)
    struct.pack_into("<4sIQ", out, 0, b"KPAK", 1, toc_at)
    return bytes(out)


def write_manifest(files: dict[str, dict]) -> bytes:
    return msgpack.packb({"format_version": 1, "component_name": "spw_lib", "prefix": "stage",
                          "kpack_files": files})


SYNTHETIC = {("stage/lib/libspw.so#0", "gfx1100"): None, ("stage/lib/libspw.so#1", "gfx1100"): None,
             ("stage/lib/libspw.so#0", "gfx90a"): None, ("stage/lib/libspw.so#1", "gfx90a"): None}


def synthetic(scheme: str) -> bytes:
    return write_archive({(key, arch): code_object(arch, int(key[-1])) for key, arch in SYNTHETIC}, scheme)


@pytest.mark.parametrize("scheme", ["none", "zstd-per-kernel"])
def test_synthetic_archive_through_the_binary_equals_the_unsplit_binary(tmp_path, scheme):
    root = install(tmp_path, archs=(), libs=("libspw.so",))
    # One archive for both architectures, named as the pattern expects for one of them.
    (root / "stage" / ".kpack" / "spw_lib_gfx1100.kpack").write_bytes(synthetic(scheme))
    split = by_kernel(records(root / "stage" / "lib" / "libspw.so"))
    unsplit = by_kernel(records(FIXTURES / "unsplit" / "libspw.so"))
    assert set(split) == set(unsplit)
    for key, want in unsplit.items():
        assert {k: v for k, v in split[key].items() if k not in ("file", "archive")} == \
            {k: v for k, v in want.items() if k not in ("file", "archive")}


def test_manifest_on_its_own_and_in_a_folder(tmp_path):
    root = install(tmp_path)
    kpack_dir = root / "stage" / ".kpack"
    files = {arch: {"file": f"spw_lib_{arch}.kpack", "size": (kpack_dir / f"spw_lib_{arch}.kpack").stat().st_size,
                    "kernel_count": 4} for arch in ARCHS}
    (kpack_dir / "spw_lib.kpm").write_bytes(write_manifest(files))
    found = records(kpack_dir / "spw_lib.kpm")
    assert len(found) == 16 and {r["target"] for r in found} == set(ARCHS)
    assert len(records(root)) == 16                       # the folder: still each code object once
    partial = {"gfx90a": files["gfx90a"]}
    (kpack_dir / "partial.kpm").write_bytes(write_manifest(partial))
    assert {r["target"] for r in records(kpack_dir / "partial.kpm")} == {"gfx90a"}


@pytest.mark.parametrize("case, edit, fragment", [
    ("size", lambda f: f["gfx1100"].update(size=f["gfx1100"]["size"] + 1), "the manifest says"),
    ("count", lambda f: f["gfx90a"].update(kernel_count=3), "holds 4 code objects for gfx90a, the manifest says 3"),
    ("missing", lambda f: f["gfx1100"].update(file="spw_lib_gfx942.kpack"), "not there"),
    ("outside", lambda f: f["gfx1100"].update(file="../../etc/x.kpack"), "outside the manifest's folder"),
    ("type", lambda f: f["gfx1100"].update(size="big"), "not a size"),
])
def test_bad_manifests(tmp_path, case, edit, fragment):
    kpack_dir = install(tmp_path) / "stage" / ".kpack"
    files = {arch: {"file": f"spw_lib_{arch}.kpack", "size": (kpack_dir / f"spw_lib_{arch}.kpack").stat().st_size,
                    "kernel_count": 4} for arch in ARCHS}
    edit(files)
    manifest = kpack_dir / "spw_lib.kpm"
    manifest.write_bytes(write_manifest(files))
    one_line_error(run_cli("report", str(manifest)), str(manifest), fragment)
    one_line_error(run_cli("report", str(kpack_dir)), fragment)          # checked in a folder too


def _toc_at(data: bytes) -> int:
    return struct.unpack_from("<Q", data, 8)[0]


def _retoc(data: bytes, change) -> bytes:
    toc_at = _toc_at(data)
    document = msgpack.unpackb(data[toc_at:], raw=False)
    change(document)
    return data[:toc_at] + msgpack.packb(document, use_bin_type=True)


def _frame_size(data: bytearray, value: int) -> None:
    struct.pack_into("<I", data, 68, value)


BAD_ARCHIVES = {
    "truncated": ("none", lambda d: d[:len(d) - 40], "not valid msgpack"),
    "truncated-header": ("none", lambda d: d[:12], "truncated header"),
    "toc-outside": ("none", lambda d: d[:8] + struct.pack("<Q", 1 << 40) + d[16:], "outside the archive"),
    "version-2": ("none", lambda d: d[:4] + struct.pack("<I", 2) + d[8:], "unsupported kpack version 2"),
    "blob-outside": ("none", lambda d: _retoc(d, lambda t: t["blobs"][1].update(size=1 << 30)),
                     "points outside the archive's data"),
    "blob-in-header": ("none", lambda d: _retoc(d, lambda t: t["blobs"][0].update(offset=4)),
                       "points outside the archive's data"),
    "size-mismatch": ("none", lambda d: _retoc(d, lambda t: t["toc"]["stage/lib/libspw.so#0"]["gfx1100"].update(
        original_size=5)), "the table of contents says 5"),
    "ordinal-outside": ("none", lambda d: _retoc(d, lambda t: t["toc"]["stage/lib/libspw.so#1"]["gfx90a"].update(
        ordinal=9)), "ordinal 9 points outside the 4 blobs"),
    "unknown-scheme": ("none", lambda d: _retoc(d, lambda t: t.update(compression_scheme="lz4")),
                       "unknown compression_scheme 'lz4'"),
    "no-toc": ("none", lambda d: _retoc(d, lambda t: t.pop("toc")), "no \"toc\" map"),
    "zstd-outside": ("zstd-per-kernel", lambda d: _retoc(d, lambda t: t.update(zstd_size=1 << 20)),
                     "points outside the archive's data"),
    "zstd-frame-size-lies": ("zstd-per-kernel", lambda d: bytes(_set(bytearray(d), _frame_size, 1 << 20)),
                             "runs past the zstd blob"),
    "zstd-count-lies": ("zstd-per-kernel", lambda d: d[:64] + struct.pack("<I", 99) + d[68:],
                        "claims 99 frames"),
    "zstd-inflated-size-lies": ("zstd-per-kernel", lambda d: _retoc(
        d, lambda t: t["toc"]["stage/lib/libspw.so#0"]["gfx1100"].update(original_size=100)), "above the limit 100"),
    "zstd-corrupt-frame": ("zstd-per-kernel", lambda d: d[:80] + b"\xff" * 20 + d[100:], "zstd"),
}


def _set(data: bytearray, edit, value) -> bytearray:
    edit(data, value)
    return data


@pytest.mark.parametrize("case", sorted(BAD_ARCHIVES))
def test_bad_archives_on_their_own_and_through_the_binary(tmp_path, case):
    scheme, edit, fragment = BAD_ARCHIVES[case]
    data = edit(synthetic(scheme))
    root = install(tmp_path, archs=(), libs=("libspw.so",))
    archive = root / "stage" / ".kpack" / "spw_lib_gfx1100.kpack"
    archive.write_bytes(data)
    if data[:4] == b"KPAK" and len(data) >= 16:
        one_line_error(run_cli("report", str(archive)), str(archive), "kpack archive", fragment)
    one_line_error(run_cli("report", str(root / "stage" / "lib" / "libspw.so")), str(archive), fragment)


def test_fuzzed_archives_raise_only_input_errors(tmp_path):
    rng = random.Random(13)
    seeds = [synthetic("none"), synthetic("zstd-per-kernel")]
    path = tmp_path / "fuzz.kpack"
    for _ in range(300):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 6)):
            at = rng.randrange(0, 100) if rng.random() < 0.4 else rng.randrange(len(data))
            data[at] = rng.randrange(256)
        path.write_bytes(bytes(data))
        try:
            records(path)
        except InputError:
            pass


# -- search paths: the marker is the binary's, so untrusted -------------------------------------

# What real markers hold: ROCm/rocm-kpack writes ("../" * depth) + ".kpack/<group>_@GFXARCH@.kpack"
# (python/rocm_kpack/packing_visitor.py _compute_kpack_search_pattern; artifact_splitter.py
# compute_manifest_relative_path), ".kpack/<name>_@GFXARCH@.kpack" for a binary at the prefix,
# and its tests use plain names ("kernels.kpack"); ROCm's librocsparse.so and rocblas embed
# "../.kpack/blas_lib_@GFXARCH@.kpack"; this fixture's splitter wrote "../.kpack/spw_lib_@GFXARCH@.kpack".
LEGITIMATE = ["../.kpack/spw_lib_@GFXARCH@.kpack", "../../../.kpack/torch_@GFXARCH@.kpack",
              ".kpack/xio_@GFXARCH@.kpack", "kernels.kpack", ".kpack/blas-gfx100X.kpack", "./sub/@GFXARCH@/x.kpack"]

REFUSED = {
    "/etc/passw@GFXARCH@": "an absolute path",
    "/tmp/x.kpack": "an absolute path",
    "../../../../../../etc/passwd": "into a folder other than .kpack",
    "../../../../../../tmp/x.kpack": "into a folder other than .kpack",
    ".kpack/../../x.kpack": "climbs with .. after a folder name",
    "~/x.kpack": "~",
    "a~b/x.kpack": "~",
    "../.kpack/*.kpack": "glob character *",
    "../.kpack/x?.kpack": "glob character ?",
    "../.kpack/[a-z].kpack": "glob character [",
    "@GFXARCH@/@GFXARCH@.kpack": "more than once",
    "x\n::error::y.kpack": "control or formatting character",
    "x\u202e.kpack": "control or formatting character",
    "..\\.kpack\\x.kpack": "backslash",
    ".kpack/x.kpm": "does not name a .kpack file",
    "../.kpack/.kpack": "does not name a .kpack file",
    "../" * 17 + ".kpack/x.kpack": "climbs 17 folders",
    "": "empty",
    "a" * 1025 + ".kpack": "longer than 1024",
}


@pytest.mark.parametrize("path", LEGITIMATE)
def test_search_paths_the_tools_write_are_followed(path):
    assert kpack.search_path_refusal(path) is None


@pytest.mark.parametrize("path", sorted(REFUSED))
def test_hostile_search_paths_are_refused(path):
    refusal = kpack.search_path_refusal(path)
    assert refusal is not None and REFUSED[path] in refusal


def test_gfxarch_is_each_known_processor_never_a_wildcard():
    names = kpack.candidates("/x/.kpack/lib_@GFXARCH@.kpack")
    assert len(names) == len(kpack.ARCHITECTURES) == 64
    assert "/x/.kpack/lib_gfx1100.kpack" in names and "/x/.kpack/lib_gfx90a.kpack" in names
    assert kpack.candidates("/x/.kpack/lib.kpack") == ["/x/.kpack/lib.kpack"]


def test_an_archive_named_for_no_processor_is_not_read(tmp_path):
    """@GFXARCH@ used to be a glob: spw_lib_anything.kpack was read too."""
    root = install(tmp_path, archs=(), libs=("libspw.so",))
    shutil.copy(STAGE / ".kpack" / "spw_lib_gfx90a.kpack", root / "stage" / ".kpack" / "spw_lib_zzz.kpack")
    binary = root / "stage" / "lib" / "libspw.so"
    one_line_error(run_cli("report", str(binary)), "none was found")
    shutil.copy(STAGE / ".kpack" / "spw_lib_gfx90a.kpack", root / "stage" / ".kpack" / "spw_lib_gfx90a.kpack")
    assert {r["target"] for r in records(binary)} == {"gfx90a"}


def _hostile_host(folder: Path, paths: list[str]) -> Path:
    from support import synthetic_elf

    path = folder / "lib" / "libhostile.so"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(synthetic_elf.kpack_host("lib/libhostile.so", paths))
    return path


# Every file the command opens and every folder it lists or globs, from Python's audit events,
# except Python's own imports (sys.path) and /dev/null.  (os.stat has no event; a refused
# marker reaches no stat either: it is refused before any path is made of it.)
_AUDITED = """
import os, sys
log = open(sys.argv.pop(1), "w")
imports = tuple(os.path.realpath(p or ".") for p in sys.path)
def hook(event, args):
    if event in ("open", "os.listdir", "os.scandir", "glob.glob", "os.walk") and isinstance(args[0], str):
        path = os.path.realpath(args[0])
        if path != os.devnull and not path.startswith(tuple(p + os.sep for p in imports)) and path not in imports:
            print(event, path, file=log, flush=True)
sys.addaudithook(hook)
from spillway.cli import main
sys.exit(main())
"""


def _audited(log: Path, *args: str):
    import subprocess
    import sys as _sys

    return subprocess.run([_sys.executable, "-c", _AUDITED, str(log), *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("path", ["/etc/passw@GFXARCH@", "/etc/passwd", "../" * 16 + "etc/passwd",
                                  "~/.bash_history", "../@GFXARCH@/@GFXARCH@.kpack"])
def test_a_refused_search_path_is_one_line_and_reads_nothing(tmp_path, path):
    host = _hostile_host(tmp_path / "prefix", [path])
    log = tmp_path / "opened.txt"
    result = _audited(log, "report", str(host))
    line = one_line_error(result, str(host), "split binary (kpack)", repr(path), "refused", "--kpack")
    assert "bad magic" not in line and "root:" not in line and result.stdout == ""   # nothing of /etc/passwd
    seen = log.read_text().splitlines()
    assert seen == [f"open {os.path.realpath(host)}"], seen


def test_too_many_search_paths(tmp_path):
    fine = _hostile_host(tmp_path / "a", [f".kpack/x{n}_@GFXARCH@.kpack" for n in range(kpack.MAX_SEARCH_PATHS)])
    one_line_error(run_cli("report", str(fine)), "none was found")
    many = _hostile_host(tmp_path / "b", [f".kpack/x{n}_@GFXARCH@.kpack" for n in range(kpack.MAX_SEARCH_PATHS + 1)])
    one_line_error(run_cli("report", str(many)), "17 kpack search paths, more than the 16")


def test_a_refused_marker_is_not_followed_when_archives_are_named(tmp_path):
    """A real split binary whose marker now says /etc/...: refused, unless --kpack names its
    archives (then only those are read)."""
    data = bytearray((STAGE / "lib" / "libspw.so").read_bytes())
    good = b"../.kpack/spw_lib_@GFXARCH@.kpack"
    bad = b"/etc/../etc/passw@GFXARCH@.kpack/"
    marker = ElfImage(memoryview(bytes(data))).section(kpack.REF_SECTION)
    assert marker is not None
    offset, size = marker.offset, marker.size
    at = data.find(good, offset, offset + size)
    assert len(bad) == len(good) and at >= 0
    data[at:at + len(good)] = bad
    root = install(tmp_path, libs=())
    binary = root / "stage" / "lib" / "libspw.so"
    binary.write_bytes(bytes(data))
    one_line_error(run_cli("report", str(binary)), "'/etc/../etc/passw@GFXARCH@.kpack/' refused: an absolute path")
    found = records(binary, kpack_archives=[str(root / "stage" / ".kpack" / "spw_lib_gfx90a.kpack")])
    assert {r["target"] for r in found} == {"gfx90a"} and len(found) == 4
