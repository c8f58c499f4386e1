"""Bad input: one line naming the file, the container and the offset, exit
status 2, never a traceback; and fuzzing shows no uncaught exception."""

from __future__ import annotations

import json

import shutil
import struct
import subprocess
import sys
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spillway.errors import SpillwayError
from spillway.report.reader import ReadOptions, read_buffer
from support.formats_fixtures import FORMATS, SECOND, ccob

SPILLWAY = [sys.executable, "-m", "spillway"]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*SPILLWAY, *args], capture_output=True, text=True, timeout=120)


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    line = lines[0]
    assert line.startswith("spillway: error: ")
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


@pytest.fixture(scope="module")
def samples(builder):
    bundle = builder.hip(22, FORMATS, ["gfx90a", "gfx1100"], "--cuda-device-only", output="k.hipfb")
    code_object, _ = builder.remarks(22, FORMATS, "gfx1100")
    obj = builder.hip(19, FORMATS, ["gfx1100"])
    compressed = builder.hip(22, SECOND, ["gfx1100"], "--offload-compress")
    new_driver = builder.hip(22, SECOND, ["gfx1100"], "--offload-new-driver", "-fgpu-rdc")
    return {"bundle": bundle, "code_object": code_object, "object": obj, "compressed": compressed,
            "new_driver": new_driver}


def test_not_an_elf(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    assert_one_line_error(run_cli("report", str(path)), str(path), "not an ELF file")


def test_missing_and_empty_files(tmp_path):
    assert_one_line_error(run_cli("report", str(tmp_path / "nope.so")), "nope.so", "cannot read")
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    assert_one_line_error(run_cli("report", str(empty)), "empty.so")


def test_truncated_elf(samples, tmp_path):
    data = samples["object"].read_bytes()
    path = tmp_path / "cut.o"
    path.write_bytes(data[: len(data) // 2])
    assert_one_line_error(run_cli("report", str(path)), "cut.o", "ELF")


def test_truncated_code_object(samples, tmp_path):
    data = samples["code_object"].read_bytes()
    path = tmp_path / "cut.co"
    path.write_bytes(data[:200])
    assert_one_line_error(run_cli("report", str(path)), "cut.co", "code object", "offset 0x")


def test_lying_entry_count(samples, tmp_path):
    data = bytearray(samples["bundle"].read_bytes())
    struct.pack_into("<Q", data, 24, 1 << 40)
    path = tmp_path / "count.hipfb"
    path.write_bytes(bytes(data))
    assert_one_line_error(run_cli("report", str(path)), "count.hipfb", "bundle file > offload bundle at offset 0x18",
                          "entries")


def test_entry_past_the_end(samples, tmp_path):
    data = bytearray(samples["bundle"].read_bytes())
    struct.pack_into("<Q", data, 40, len(data))  # first entry's size
    path = tmp_path / "offset.hipfb"
    path.write_bytes(bytes(data))
    assert_one_line_error(run_cli("report", str(path)), "offset.hipfb", "bundle file > offload bundle at offset 0x20",
                          "runs past")


def test_hash_mismatch_with_verify_hashes(samples, tmp_path):
    stream = bytearray(ccob(samples["bundle"].read_bytes(), 3, 1))
    stream[24] ^= 0xFF
    path = tmp_path / "hash.bundle"
    path.write_bytes(bytes(stream))
    assert_one_line_error(run_cli("report", "--verify-hashes", str(path)), "hash.bundle", "hash mismatch",
                          "offset 0x18")


def test_stored_hash_is_not_checked_by_default_as_in_llvm(samples, tmp_path):
    """clang-offload-bundler recomputes the MD5 only with -verbose, and only to
    print it: a bundle it unbundles is read, the same kernels as intact."""
    intact = tmp_path / "intact.bundle"
    intact.write_bytes(ccob(samples["bundle"].read_bytes(), 3, 1))
    stream = bytearray(intact.read_bytes())
    stream[24] ^= 0xFF
    changed = tmp_path / "hash.bundle"
    changed.write_bytes(bytes(stream))
    read = [run_cli("report", "--all", "--json", str(p)) for p in (intact, changed)]
    assert [r.returncode for r in read] == [0, 0]
    kernels = [json.loads(r.stdout)["kernels"] for r in read]
    assert kernels[1] and [dict(k, file=None) for k in kernels[0]] == [dict(k, file=None) for k in kernels[1]]


def test_declared_size_far_above_the_cap(samples, tmp_path):
    stream = bytearray(ccob(samples["bundle"].read_bytes(), 3, 1))
    struct.pack_into("<Q", stream, 16, 1 << 40)
    path = tmp_path / "declared.bundle"
    path.write_bytes(bytes(stream))
    assert_one_line_error(run_cli("report", str(path)), "declared.bundle", "exceeds the cap")


def test_declared_size_above_real_size(samples, tmp_path):
    real = samples["bundle"].read_bytes()
    stream = bytearray(ccob(real, 2, 0))
    struct.pack_into("<I", stream, 12, len(real) * 50)
    path = tmp_path / "lying.bundle"
    path.write_bytes(bytes(stream))
    assert_one_line_error(run_cli("report", str(path)), "lying.bundle", "declared uncompressed size")


@pytest.mark.parametrize("method", [0, 1], ids=["zlib", "zstd"])
def test_bomb_beyond_configured_cap(tmp_path, method):
    """256 MiB of zeros in a few KiB, declared honestly: the cap stops it
    before the memory is spent."""
    zeros = b"\0" * (256 << 20)
    bomb = ccob(zeros, 3, method)
    del zeros
    assert len(bomb) < 2 << 20
    path = tmp_path / "bomb.bundle"
    path.write_bytes(bomb)
    assert_one_line_error(run_cli("report", "--max-decompressed", "16M", str(path)), "bomb.bundle",
                          "exceeds the cap")


def test_unknown_code_object_version(samples, tmp_path):
    data = bytearray(samples["code_object"].read_bytes())
    data[8] = 9
    path = tmp_path / "future.co"
    path.write_bytes(bytes(data))
    assert_one_line_error(run_cli("report", str(path)), "future.co", "code object at offset 0x8",
                          "unknown code object version")


def _metadata_desc_offset(data: bytes) -> int:
    marker = data.find(b"AMDGPU\0\0")
    assert marker > 0
    return marker + 8


def test_malformed_msgpack(samples, tmp_path):
    data = bytearray(samples["code_object"].read_bytes())
    data[_metadata_desc_offset(data)] = 0xC1  # a byte msgpack never uses
    path = tmp_path / "msgpack.co"
    path.write_bytes(bytes(data))
    assert_one_line_error(run_cli("report", str(path)), "msgpack.co", "code object note at offset 0x",
                          "malformed msgpack")


def test_named_file_without_device_code(tmp_path):
    plain = tmp_path / "plain.o"
    subprocess.run(["cc", "-c", "-x", "c", "-", "-o", str(plain)], input=b"int f(void){return 1;}", check=True)
    assert_one_line_error(run_cli("report", str(plain)), "plain.o", "no device code")


def test_bitcode_only_object_says_so(samples):
    line = assert_one_line_error(run_cli("report", str(samples["new_driver"])), ".llvm.offloading")
    assert "bitcode only: resource usage exists after the device link" in line


def test_zero_kernels_overall_is_not_a_success(tmp_path):
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "a.txt").write_text("x")
    assert_one_line_error(run_cli("report", str(tmp_path / "tree")), "no kernels found")


def test_target_filter_that_selects_nothing(samples):
    assert_one_line_error(run_cli("report", "--target", "gfx942", str(samples["object"])),
                          "no kernels found", "selected targets")


def test_corrupt_wheel(tmp_path):
    path = tmp_path / "bad.whl"
    path.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    assert_one_line_error(run_cli("report", str(path)), "bad.whl", "zip")


# -- fuzzing ---------------------------------------------------------------

FUZZ_OPTIONS = ReadOptions(max_decompressed=32 << 20)


def _mutate(seed: bytes, edits, cut) -> bytes:
    data = bytearray(seed)
    for position, value in edits:
        if data:
            data[position % len(data)] = value
    if cut is not None and data:
        del data[cut % len(data):]
    return bytes(data)


def _fuzz_one(data: bytes) -> None:
    started = time.monotonic()
    tracemalloc.start()
    try:
        read_buffer(data, "fuzz", FUZZ_OPTIONS)
    except SpillwayError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert time.monotonic() - started < 5
    assert peak < 200 << 20


edits_near_headers = st.lists(st.tuples(st.integers(0, 4095), st.integers(0, 255)), max_size=8)
edits_anywhere = st.lists(st.tuples(st.integers(0, 1 << 24), st.integers(0, 255)), max_size=8)
cuts = st.one_of(st.none(), st.integers(0, 1 << 24))


@pytest.mark.parametrize("seed_name", ["bundle", "code_object", "object", "compressed", "new_driver", "ccob_v1",
                                       "archive"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(near=edits_near_headers, anywhere=edits_anywhere, cut=cuts)
def test_fuzz_parsers_raise_only_input_errors(samples, tmp_path, seed_name, near, anywhere, cut):
    seed = _seed(samples, tmp_path, seed_name)
    _fuzz_one(_mutate(seed, near + anywhere, cut))


_SEEDS: dict[str, bytes] = {}


def _seed(samples, tmp_path, name: str) -> bytes:
    if name not in _SEEDS:
        if name == "ccob_v1":
            _SEEDS[name] = ccob(samples["bundle"].read_bytes(), 1, 1)
        elif name == "archive":
            member = samples["object"]
            work = tmp_path / "ar"
            work.mkdir(exist_ok=True)
            shutil.copy(member, work / "m.o")
            subprocess.run(["ar", "rcs", "lib.a", "m.o"], cwd=work, check=True)
            _SEEDS[name] = (work / "lib.a").read_bytes()
        else:
            _SEEDS[name] = samples[name].read_bytes()
    return _SEEDS[name]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4096))
def test_fuzz_random_bytes_with_real_magics(data):
    for prefix in (b"", b"\x7fELF\x02\x01\x01", b"__CLANG_OFFLOAD_BUNDLE__", b"CCOB", b"!<arch>\n",
                   b"\x10\xff\x10\xad"):
        _fuzz_one(prefix + data)
