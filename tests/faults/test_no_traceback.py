"""Every input fault issue 14 lists ends in one line and exit 2, through the
installed command: paths that are not UTF-8 (and are kept losslessly in
JSON), report JSON with fields of the wrong type, non-regular files, sizes out
of range, `-` for standard input, a 1 MB kernel name, and the amplification
case (48 KiB holding six CCOB bundles of 250 MB each)."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import struct
import subprocess
import sys
import threading

import msgpack
import pytest
import zstandard

from faultkit import CODE_OBJECT, code_object_with_kernels, layers, one_line_error, run, spillway

ODD = os.fsdecode(b"k\xff\xfe.co")      # a file name that is not UTF-8


@pytest.fixture
def odd_file(tmp_path):
    path = tmp_path / ODD
    path.write_bytes(CODE_OBJECT.read_bytes())
    return path


def test_non_utf8_path_in_report_json_is_lossless(odd_file, tmp_path):
    out = tmp_path / "r.json"
    result = run("report", "--json", "-o", out, odd_file)
    assert result.returncode == 0, result.stderr
    text = out.read_bytes()
    assert b"\\udcff\\udcfe" in text                 # the documented escape
    document = json.loads(text)
    assert os.fsencode(document["files"][0]["path"]) == os.fsencode(str(odd_file))
    assert os.fsencode(document["kernels"][0]["file"]) == os.fsencode(str(odd_file))
    # spillway reads its own report back (check and compare take reports).
    baseline = tmp_path / "b.json"
    written = run("baseline", "write", out, "-o", baseline, "--note", "odd")
    assert written.returncode == 0, written.stderr
    assert run("check", out, "--baseline", baseline).returncode == 0


def test_non_utf8_path_in_baseline_and_compare(odd_file, tmp_path):
    baseline = tmp_path / "b.json"
    written = run("baseline", "write", odd_file, "-o", baseline, "--note", "odd", "--record-all")
    assert written.returncode == 0, written.stderr
    files = json.loads(baseline.read_bytes())["provenance"]["files"]
    assert os.fsencode(files[0]["path"]).endswith(b"k\xff\xfe.co")
    assert run("check", odd_file, "--baseline", baseline).returncode == 0
    compared = run("compare", odd_file, "--against", baseline, "--format", "json")
    assert compared.returncode == 0, compared.stderr
    json.loads(compared.stdout)
    table = run("compare", odd_file, "--against", baseline)
    assert table.returncode == 0, table.stderr


def test_non_utf8_path_in_an_error_is_shown_escaped(tmp_path):
    path = tmp_path / os.fsdecode(b"bad\xff.so")
    path.write_bytes(b"not an ELF")
    line = one_line_error(run("report", path))
    assert "bad\\xff.so" in line or "bad\\udcff.so" in line


def _report(tmp_path, **changes) -> str:
    result = run("report", "--json", "-o", tmp_path / "good.json", CODE_OBJECT)
    assert result.returncode == 0, result.stderr
    document = json.loads((tmp_path / "good.json").read_bytes())
    for where, value in changes.items():
        if where == "files":
            document["files"] = value
        else:
            document["kernels"][0][where] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    return str(path)


BAD_REPORTS = [("files", 3, "files"), ("vgpr_count", "8", "vgpr_count"), ("target", ["gfx1100"], "target"),
               ("private_segment_fixed_size", 1.5, "private_segment_fixed_size"), ("name", 7, "name"),
               ("uses_dynamic_stack", "no", "uses_dynamic_stack"), ("occupancy", "4", "occupancy"),
               ("key", None, "key"), ("sgpr_spill_count", -1, "sgpr_spill_count"), ("files", [1], "files"),
               ("occupancy_model", ["llvm22"], "occupancy_model"), ("bundle_index", "0", "bundle_index")]


@pytest.mark.parametrize("field, value, named", BAD_REPORTS, ids=[f"{f}={v!r}" for f, v, _ in BAD_REPORTS])
def test_report_json_with_a_field_of_the_wrong_type(tmp_path, field, value, named):
    bad = _report(tmp_path, **{field: value})
    baseline = tmp_path / "b.json"
    assert run("baseline", "write", CODE_OBJECT, "-o", baseline, "--note", "n").returncode == 0
    one_line_error(run("check", bad, "--baseline", baseline), "bad.json", named)
    one_line_error(run("compare", bad, "--against", baseline), "bad.json", named)
    one_line_error(run("compare", CODE_OBJECT, "--against", bad), "bad.json", named)
    one_line_error(run("baseline", "write", bad, "-o", tmp_path / "new.json", "--note", "n"), "bad.json", named)


@pytest.mark.parametrize("size", ["inf", "1e400", "nan", "-1", "0", "99999999E"])
def test_max_decompressed_out_of_range(size):
    result = run("report", "--max-decompressed", size, CODE_OBJECT)
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
    assert b"--max-decompressed" in result.stderr.strip().splitlines()[-1]


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", [
    ["report", "{fifo}"], ["report", "{co}", "{fifo}"],
    ["baseline", "write", "{fifo}", "-o", "{dir}/b.json", "--note", "n"],
    ["baseline", "write", "{co}", "-o", "{fifo}", "--note", "n"], ["check", "{co}", "--baseline", "{fifo}"],
    ["compare", "{fifo}", "--against", "{co}"], ["report", "--json", "-o", "{fifo}", "{co}"],
    ["report", "/dev/zero"],
])
def test_non_regular_files_are_refused_at_once(fifo, tmp_path, command):
    args = [a.format(fifo=fifo, co=CODE_OBJECT, dir=tmp_path) for a in command]
    result = run(*args, timeout=60)
    line = one_line_error(result)
    assert "FIFO" in line or "not a regular file" in line or "device" in line, line


def test_dash_is_standard_input(tmp_path):
    data = CODE_OBJECT.read_bytes()
    result = run("report", "--all", "-", input=data)
    assert result.returncode == 0, result.stderr
    assert b"axpy" in result.stdout
    # "-" is a path, never the FILTER; a FILTER after it still works.
    filtered = run("report", "--all", "-", "axpy", input=data)
    assert filtered.returncode == 0 and b"axpy" in filtered.stdout
    # A report JSON on standard input, for check.
    report = run("report", "--json", CODE_OBJECT)
    baseline = tmp_path / "b.json"
    assert run("baseline", "write", "-", "-o", baseline, "--note", "stdin", input=data).returncode == 0
    checked = run("check", "-", "--baseline", baseline, input=report.stdout)
    assert checked.returncode == 0, checked.stderr
    # A wheel on standard input (a zip needs seeking: stdin is copied first).
    wheel = layers.zip_file([("pkg/k.co", data)])
    assert b"axpy" in run("report", "--all", "-", input=wheel).stdout
    one_line_error(run("report", "-", input=b"garbage"), "-")


def test_one_megabyte_kernel_name(tmp_path):
    """Name handling is linear (the old stable key was quadratic: 19 s for
    160 KB); the timeout only guards against a hang, speed is benchmarked."""
    name = "_NS" + "ROCPRIM_" * 131072
    path = tmp_path / "long.co"
    path.write_bytes(code_object_with_kernels([{"name": name}]))
    for args in (["report", "--all", path], ["report", "--json", "-o", tmp_path / "r.json", path]):
        result = run(*args, timeout=60)
        assert result.returncode == 0, result.stderr[-500:]
    assert json.loads((tmp_path / "r.json").read_bytes())["kernels"][0]["name"] == name


def _amplifier(copies: int, inflated: int) -> bytes:
    """``copies`` CCOB v3 zstd bundles, each inflating to ``inflated`` bytes: a
    valid bundle (host entry, then the seed code object at the far end of
    zeros), compressed and hashed in pieces so the test never holds it."""
    code = CODE_OBJECT.read_bytes()
    entry_id = b"hipv4-amdgcn-amd-amdhsa--gfx1100"
    head_size = 24 + 8 + 24 + len(layers.HOST_ENTRY) + 24 + len(entry_id)
    offset = inflated - len(code)
    head = (layers.BUNDLE_MAGIC + struct.pack("<Q", 2)
            + struct.pack("<QQQ", head_size, 0, len(layers.HOST_ENTRY)) + layers.HOST_ENTRY.encode()
            + struct.pack("<QQQ", offset, len(code), len(entry_id)) + entry_id)
    digest = hashlib.md5()
    compressor = zstandard.ZstdCompressor(level=19).compressobj()
    pieces = []
    zeros = b"\0" * (1 << 20)

    def feed(chunk: bytes) -> None:
        digest.update(chunk)
        pieces.append(compressor.compress(chunk))

    feed(head)
    left = offset - len(head)
    while left:
        chunk = zeros[:min(left, len(zeros))]
        feed(chunk)
        left -= len(chunk)
    feed(code)
    pieces.append(compressor.flush())
    payload = b"".join(pieces)
    one = b"CCOB" + struct.pack("<HHQQQ", 3, 1, 32 + len(payload), inflated,
                                int.from_bytes(digest.digest()[:8], "little")) + payload
    return one * copies


def _peak_rss_mb(args: list[str]) -> tuple[subprocess.CompletedProcess, int]:
    """Run the command in a helper Python so RUSAGE_CHILDREN is this command's alone."""
    probe = ("import resource, subprocess, sys, json\n"
             "r = subprocess.run(sys.argv[1:], capture_output=True)\n"
             "print(json.dumps([r.returncode, r.stderr.decode('utf-8', 'replace'),"
             " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10]))\n")
    out = subprocess.run([sys.executable, "-c", probe, *spillway(), *map(str, args)], capture_output=True,
                         timeout=600, text=True)
    code, stderr, peak = json.loads(out.stdout)
    return subprocess.CompletedProcess(args, code, b"", stderr.encode()), peak


@pytest.mark.slow
def test_amplification_is_refused_with_bounded_memory(tmp_path):
    path = tmp_path / "amplifier.hipfb"
    path.write_bytes(_amplifier(6, 250_000_000))
    assert path.stat().st_size < 64 << 10
    for extra in ([], ["--max-decompressed", "256M"]):
        result, peak = _peak_rss_mb(["report", *extra, path])
        line = one_line_error(result, "amplifier.hipfb")
        assert "--max-" in line, line          # names the limit's option
        assert peak < 600, f"peak RSS {peak} MB"


def test_wheel_member_with_an_empty_name(tmp_path):
    """Found by the zip fuzzer: zipfile's is_dir() fails on an empty name."""
    import io
    import zipfile
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("pkg/k.co", CODE_OBJECT.read_bytes())
        archive.writestr(zipfile.ZipInfo(""), b"x")
    path = tmp_path / "empty-name.whl"
    path.write_bytes(buffer.getvalue())
    one_line_error(run("report", path), "empty-name.whl", "empty name")
