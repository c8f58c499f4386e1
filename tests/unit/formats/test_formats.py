"""Every container spillway reads, built by real compilers, checked field by
field against llvm-readelf --notes on the code objects LLVM's own
llvm-objdump --offloading extracts."""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import zstandard

from spillway.formats import bundles
from spillway.resources.names import demangle
from spillway.report.reader import ReadOptions, read_path
from support import oracles
from support.oracle_expectations import assert_same_kernels
from support.formats_fixtures import FORMATS, SECOND, ccob  # noqa: F401
from support.toolchains import KNOWN_TARGETS, require

from conftest import DATA



def read(path: Path, **options):
    return read_path(str(path), ReadOptions(**options))


def assert_matches_oracle(path: Path, records: list[dict], tmp_path: Path, *, host: bool = True,
                          bundler: bool = False) -> None:
    """Each kernel record equals llvm-readelf's view of the same code object."""
    if bundler:
        entries = oracles.extract_with_bundler(path, tmp_path / "oracle")
    elif host:
        entries = oracles.extract(path, tmp_path / "oracle")
    else:
        entries = [(None, "", path)]
    assert entries, f"llvm-objdump found no device entries in {path}"
    entries = [e for e in entries if e[2].read_bytes()[:4] == b"\x7fELF"]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:   # one llvm-readelf per entry
        documents = list(pool.map(oracles.expected_records, [e[2] for e in entries]))
    expected = []
    for (index, entry_id, code_object), document in zip(entries, documents):
        for record in document:
            target = record.get("target") or entry_id.split("--", 1)[-1]
            expected.append({**record, "bundle_index": index, "target": target})
    fields = [f for f in expected[0] if f != "bundle_index"] if expected else []
    # V4 has no .workgroup_processor_mode key; spillway reads the descriptor
    # instead, so that field is compared only where the metadata has it.
    no_wgp = {(e["bundle_index"], e["target"]) for e in expected if e.get("workgroup_processor_mode") is None}

    def row(record: dict, index) -> tuple:
        where = (index, record["target"])
        return (index, *(None if f == "workgroup_processor_mode" and where in no_wgp else record[f]
                         for f in fields))

    # Equal multisets: the same kernel records, each as many times, every field equal.
    assert_same_kernels([row(r, r["bundle_index"] if host else None) for r in records],
                        [row(e, e["bundle_index"]) for e in expected], what="spillway",
                        oracle="llvm-readelf", fields=["bundle_index", *fields])
    for got in records:
        assert got["name"] == demangle(got["symbol"])


def targets_for(version: int) -> list[str]:
    wanted = ["gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1151", "gfx1200"]
    return [t for t in wanted if t in KNOWN_TARGETS[version]]


@pytest.mark.parametrize("version", [15, 16, 19, 22])
def test_object_with_one_bundle_many_targets(builder, tmp_path, version):
    obj = builder.hip(version, FORMATS, targets_for(version))
    file_record, records = read(obj)
    assert file_record["bundles"] == 1
    assert file_record["kind"] == "ELF"
    assert {r["target"].split(":")[0] for r in records} == set(targets_for(version))
    assert len(records) == 3 * len(targets_for(version))
    assert_matches_oracle(obj, records, tmp_path)
    compilers = {r["compiler"] for r in records}
    assert all(f"clang version {version}." in c for c in compilers), compilers


@pytest.mark.parametrize("version", [15, 22])
def test_shared_library_and_executable_with_one_bundle_per_translation_unit(builder, tmp_path, version):
    targets = ["gfx90a", "gfx1100"]
    objects = [builder.hip(version, FORMATS, targets), builder.hip(version, SECOND, targets)]
    library = builder.link(version, objects, "libtwo.so", "-shared")
    stubs = builder.run(["cc", "-c", "-fPIC", str(DATA / "stubs.c"), "-o", "stubs.o"], ["stubs.o"],
                        [DATA / "stubs.c"])[0] / "stubs.o"
    executable = builder.link(version, [*objects, stubs], "two")
    for binary in (library, executable):
        file_record, records = read(binary)
        assert file_record["bundles"] == 2
        assert {r["bundle_index"] for r in records} == {0, 1}
        assert {r["name"] for r in records if r["bundle_index"] == 1} == {"axpy"}
        assert_matches_oracle(binary, records, tmp_path / binary.name)


def _fatbin_offsets(binary: Path) -> list[int]:
    from elftools.elf.elffile import ELFFile
    with open(binary, "rb") as handle:
        section = ELFFile(handle).get_section_by_name(".hip_fatbin")
        data = memoryview(section.data())
    return [b.offset for b in bundles.walk_lazy(data)]


def test_bundles_in_linked_output_are_4096_aligned(builder):
    objects = [builder.hip(19, FORMATS, ["gfx1100"]), builder.hip(19, SECOND, ["gfx1100"])]
    library = builder.link(19, objects, "libtwo.so", "-shared")
    offsets = _fatbin_offsets(library)
    assert len(offsets) == 2 and offsets[0] == 0 and offsets[1] % 4096 == 0 and offsets[1] > 0


@pytest.mark.parametrize("version,env,ccob_version", [
    (19, {}, 2),
    (22, {}, 3),
    (22, {"COMPRESSED_BUNDLE_FORMAT_VERSION": "2"}, 2),
])
def test_compressed_bundles_from_real_compilers(builder, tmp_path, version, env, ccob_version):
    targets = ["gfx90a", "gfx1100"]
    objects = [builder.hip(version, FORMATS, targets, "--offload-compress", env=env),
               builder.hip(version, SECOND, targets, "--offload-compress", env=env)]
    for obj in objects:
        head = _fatbin_head(obj)
        assert head[:4] == b"CCOB" and struct.unpack_from("<H", head, 4)[0] == ccob_version
    for index, obj in enumerate(objects):
        assert_matches_oracle(obj, read(obj)[1], tmp_path / str(index), bundler=True)
    library = builder.link(version, objects, "libz.so", "-shared")
    file_record, records = read(library)
    assert file_record["bundles"] == 2
    plain = read(builder.link(version, [builder.hip(version, FORMATS, targets),
                                        builder.hip(version, SECOND, targets)], "libplain.so", "-shared"))[1]
    assert _resources(records) == _resources(plain)


def _fatbin_head(obj: Path) -> bytes:
    from elftools.elf.elffile import ELFFile
    with open(obj, "rb") as handle:
        return ELFFile(handle).get_section_by_name(".hip_fatbin").data()[:32]


def _resources(records):
    keep = ("bundle_index", "target", "symbol", "vgpr_count", "sgpr_count", "private_segment_fixed_size",
            "group_segment_fixed_size", "occupancy")
    return sorted(tuple(r[k] for k in keep) for r in records)


def _pad(data: bytes, alignment: int = 4096) -> bytes:
    return data + b"\0" * (-len(data) % alignment)


@pytest.fixture(scope="module")
def raw_bundles(builder):
    """Two real uncompressed bundle files (device-only compiles)."""
    first = builder.hip(22, FORMATS, ["gfx90a", "gfx1100"], "--cuda-device-only", output="k.hipfb")
    second = builder.hip(22, SECOND, ["gfx90a", "gfx1100"], "--cuda-device-only", output="k.hipfb")
    return first, second


def test_raw_bundle_file(raw_bundles, tmp_path):
    first, _ = raw_bundles
    assert first.read_bytes().startswith(bundles.UNCOMPRESSED_MAGIC)
    file_record, records = read(first)
    assert file_record["kind"] == "offload bundle" and len(records) == 6
    unbundled = tmp_path / "gfx1100.co"
    subprocess.run([require("clang-offload-bundler-22"), "--type=o", f"--input={first}",
                    f"--output={unbundled}", "--targets=hipv4-amdgcn-amd-amdhsa--gfx1100", "--unbundle"],
                   check=True)
    assert_matches_oracle(unbundled, [r for r in records if r["target"] == "gfx1100"],
                          tmp_path, host=False)


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("method", [0, 1], ids=["zlib", "zstd"])
def test_every_ccob_layout_and_method(raw_bundles, tmp_path, version, method):
    first, second = (p.read_bytes() for p in raw_bundles)
    expected = _resources(read(raw_bundles[0])[1]) + _resources(read(raw_bundles[1])[1])
    # Two bundles back to back with zero padding, as in a linked .hip_fatbin;
    # v1 has no size field, so its end is where the compressed stream ends.
    stream = _pad(ccob(first, version, method)) + ccob(second, version, method)
    path = tmp_path / f"v{version}.bundle"
    path.write_bytes(stream)
    file_record, records = read(path)
    assert file_record["bundles"] == 2
    got = sorted(_resources([dict(r, bundle_index=None) for r in records]))
    assert got == sorted(_resources([dict(r, bundle_index=None) for r in
                                     read(raw_bundles[0])[1] + read(raw_bundles[1])[1]]))
    assert len(got) == len(expected)


def test_magic_inside_compressed_payload_is_not_a_bundle_start(raw_bundles, tmp_path):
    """Bundles are walked by size fields: a 'CCOB' inside a payload is data."""
    first = raw_bundles[0].read_bytes()
    stored = ccob(first, 3, 0)
    # zlib level 0 stores the input verbatim, so plant the magic in it.
    planted = first + b"CCOB\x03\x00\x01\x00" + b"\xff" * 24
    payload = zlib.compress(planted, 0)
    digest = int.from_bytes(hashlib.md5(planted).digest()[:8], "little")
    stored = b"CCOB" + struct.pack("<HHQQQ", 3, 0, 32 + len(payload), len(planted), digest) + payload
    path = tmp_path / "planted.bundle"
    path.write_bytes(stored)
    file_record, records = read(path)
    assert file_record["bundles"] == 1 and len(records) == 6


@pytest.mark.parametrize("version", [15, 16, 19, 22])
def test_rdc_object_is_bitcode_only_and_its_device_link_has_kernels(builder, tmp_path, version):
    targets = ["gfx90a", "gfx1100"]
    obj = builder.hip(version, FORMATS, targets, "-fgpu-rdc")
    from spillway.errors import BitcodeOnly
    with pytest.raises(BitcodeOnly) as caught:
        read(obj)
    assert "bitcode only: resource usage exists after the device link" in str(caught.value)
    assert "__CLANG_OFFLOAD_BUNDLE__" in str(caught.value)
    second = builder.hip(version, SECOND, targets, "-fgpu-rdc")
    library = builder.link(version, [obj, second], "librdc.so", "-shared", "-fgpu-rdc", "--hip-link",
                           "-no-hip-rt", *[f"--offload-arch={t}" for t in targets])
    file_record, records = read(library)
    # What survives the device link is the linker's business (clang-22 keeps
    # fewer kernels here); what spillway reports must equal LLVM's view.
    assert records
    assert_matches_oracle(library, records, tmp_path)


@pytest.mark.parametrize("version", [15, 16, 19, 22])
def test_new_driver_objects_and_libraries(builder, tmp_path, version):
    targets = ["gfx90a", "gfx1100"]
    rdc = builder.hip(version, FORMATS, targets, "--offload-new-driver", "-fgpu-rdc")
    from spillway.errors import BitcodeOnly
    with pytest.raises(BitcodeOnly) as caught:
        read(rdc)
    assert ".llvm.offloading" in str(caught.value)
    second = builder.hip(version, SECOND, targets, "--offload-new-driver", "-fgpu-rdc")
    library = builder.link(version, [rdc, second], "libnew.so", "-shared", "--offload-new-driver",
                           "-fgpu-rdc", "--hip-link", "-no-hip-rt", *[f"--offload-arch={t}" for t in targets])
    file_record, records = read(library)
    assert records and {r["bundle_index"] for r in records} == {0}
    assert_matches_oracle(library, records, tmp_path)
    plain = builder.hip(version, FORMATS, targets, "--offload-new-driver")
    assert_matches_oracle(plain, read(plain)[1], tmp_path / "plain")


@pytest.mark.parametrize("suffix", [".hsaco", ".co"])
def test_raw_code_object(builder, tmp_path, suffix):
    code_object, _ = builder.remarks(22, FORMATS, "gfx1151")
    renamed = tmp_path / f"kernels{suffix}"
    shutil.copy(code_object, renamed)
    file_record, records = read(renamed)
    assert file_record["kind"] == "code object" and file_record["bundles"] == 0
    assert {r["target"] for r in records} == {"gfx1151"}
    assert_matches_oracle(renamed, records, tmp_path, host=False)


@pytest.mark.parametrize("version,cov", [(15, 3), (15, 4), (15, 5), (19, 4), (19, 5), (19, 6), (22, 4),
                                         (22, 5), (22, 6)])
def test_code_object_versions(builder, tmp_path, version, cov):
    code_object = builder.hip(version, FORMATS, ["gfx1030"], "--cuda-device-only", "--no-gpu-bundle-output",
                              f"-mcode-object-version={cov}", output="k.co")
    assert code_object.read_bytes()[8] == cov - 2  # EI_ABIVERSION, as LLVM writes it
    records = read(code_object)[1]
    assert {r["code_object_version"] for r in records} == {cov}
    assert_matches_oracle(code_object, records, tmp_path, host=False)
    # V4 and older have no .workgroup_processor_mode: read from the descriptor.
    assert {r["workgroup_processor_mode"] for r in records} == {True}


def test_target_features_in_target_id(builder):
    obj = builder.hip(22, FORMATS, ["gfx90a:xnack+", "gfx90a:xnack-", "gfx942:sramecc+:xnack-"])
    targets = {r["target"] for r in read(obj)[1]}
    assert targets == {"gfx90a:xnack+", "gfx90a:xnack-", "gfx942:sramecc+:xnack-"}


def test_ar_archive_members_and_skipped_files(builder, tmp_path):
    objects = [builder.hip(19, FORMATS, ["gfx1100"]), builder.hip(22, SECOND, ["gfx1100"], "-fgpu-rdc")]
    plain = tmp_path / "plain.o"
    subprocess.run(["cc", "-c", "-x", "c", "-", "-o", str(plain)], input=b"int f(void){return 1;}", check=True)
    archive = tmp_path / "libmix.a"
    for index, obj in enumerate(objects):
        shutil.copy(obj, tmp_path / f"member{index}.o")
    subprocess.run(["ar", "rcs", str(archive), "member0.o", "member1.o", "plain.o"], cwd=tmp_path, check=True)
    file_record, records = read(archive)
    assert file_record["kind"] == "ar archive"
    assert {r["file"] for r in records} == {f"{archive}(member0.o)"}
    assert file_record["skipped_without_device_code"] == 1
    assert len(file_record["bitcode_only"]) == 1 and "member1.o" in file_record["bitcode_only"][0]


def test_directory_is_read_recursively(builder, tmp_path):
    root = tmp_path / "tree"
    (root / "lib" / "deep").mkdir(parents=True)
    shutil.copy(builder.hip(19, FORMATS, ["gfx1100"]), root / "lib" / "a.o")
    shutil.copy(builder.hip(19, SECOND, ["gfx1100"]), root / "lib" / "deep" / "b.o")
    (root / "README").write_text("not a binary")
    (root / "lib" / "deep" / "empty.bin").write_bytes(b"")
    file_record, records = read(root)
    assert file_record["kind"] == "directory"
    assert {Path(r["file"]).name for r in records} == {"a.o", "b.o"}
    assert file_record["skipped_without_device_code"] == 2


def test_wheel_members_read_in_place(builder, tmp_path):
    library = builder.link(22, [builder.hip(22, FORMATS, ["gfx90a", "gfx1100"])], "libk.so", "-shared")
    other = builder.link(22, [builder.hip(22, SECOND, ["gfx1100"])], "libo.so", "-shared")
    wheel = tmp_path / "engine-1.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(library, "engine/libk.so", compress_type=zipfile.ZIP_STORED)
        archive.write(other, "engine/lib/libo.so", compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("engine-1.0.dist-info/METADATA", "Name: engine\n")
    file_record, records = read(wheel)
    assert file_record["kind"] == "zip"
    assert {r["file"] for r in records} == {f"{wheel}!engine/libk.so", f"{wheel}!engine/lib/libo.so"}
    assert file_record["skipped_without_device_code"] == 1
    direct = read(library)[1] + read(other)[1]
    assert _resources([dict(r, file="") for r in records]) == _resources(direct)


def test_stable_key_is_the_unversioned_mangling(builder):
    """The key of a kernel in ROCPRIM_300400_NS equals the symbol clang emits
    for the same kernel in ROCPRIM_NS, and a rocPRIM update keeps it."""
    def reduce_kernel(namespace):
        obj = builder.hip(22, FORMATS, ["gfx1100"], f"-DROCPRIM_NS_NAME={namespace}")
        [record] = [r for r in read(obj)[1] if "reduce_kernel" in r["name"]]
        return record
    old, new, fixed = reduce_kernel("ROCPRIM_300400_NS"), reduce_kernel("ROCPRIM_400000_NS"), \
        reduce_kernel("ROCPRIM_NS")
    assert old["symbol"] != new["symbol"]
    assert old["key"] == new["key"] == fixed["symbol"]
    assert "ROCPRIM_300400_NS" in old["name"]


def test_librocrand_matches_llvm_readelf(librocrand, tmp_path):
    file_record, records = read(librocrand)
    assert file_record["bundles"] >= 1 and len(records) > 100
    assert_matches_oracle(librocrand, records, tmp_path)


@pytest.mark.slow
def test_librocsparse_matches_llvm_readelf(librocsparse, tmp_path):
    file_record, records = read(librocsparse)
    assert file_record["bundles"] == 111 and len(records) == 88137
    assert_matches_oracle(librocsparse, records, tmp_path)
