"""Sources and hand-made containers shared by the format tests."""

from __future__ import annotations

import hashlib
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import zstandard

from conftest import DATA
from support import oracles

FORMATS = DATA / "formats.hip"
SECOND = DATA / "second_tu.hip"
SPILLWAY = [sys.executable, "-m", "spillway"]


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The command as a user runs it, in a process of its own."""
    return subprocess.run([*SPILLWAY, *args], capture_output=True, text=True, timeout=timeout)


def one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit 2 with one line on stderr holding every fragment, never a traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def expected_by_symbol(code_object: Path) -> dict[str, dict]:
    """llvm-readelf's records of one code object by mangled name (unique in these fixtures)."""
    records = oracles.expected_records(code_object)
    by_symbol = {r["symbol"]: r for r in records}
    assert len(by_symbol) == len(records)
    return by_symbol


def ccob(bundle: bytes, version: int, method: int, payload: bytes | None = None) -> bytes:
    """A compressed bundle laid out as clang-offload-bundler writes it
    (amdgpu-binaries.md 2.2): no local clang writes v1 or zlib, so these
    layouts are made here from a real uncompressed bundle.  ``payload``: the
    compressed bytes to store instead (a frame made otherwise, or cut short)."""
    if payload is None:
        payload = zlib.compress(bundle) if method == 0 else zstandard.ZstdCompressor(level=3).compress(bundle)
    digest = int.from_bytes(hashlib.md5(bundle).digest()[:8], "little")
    if version == 1:
        header = b"CCOB" + struct.pack("<HHIQ", 1, method, len(bundle), digest)
    elif version == 2:
        header = b"CCOB" + struct.pack("<HHIIQ", 2, method, 24 + len(payload), len(bundle), digest)
    else:
        header = b"CCOB" + struct.pack("<HHQQQ", 3, method, 32 + len(payload), len(bundle), digest)
    return header + payload
