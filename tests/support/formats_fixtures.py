"""Sources and hand-made containers shared by the format tests."""

from __future__ import annotations

import hashlib
import struct
import zlib

import zstandard

from conftest import DATA

FORMATS = DATA / "formats.hip"
SECOND = DATA / "second_tu.hip"


def ccob(bundle: bytes, version: int, method: int) -> bytes:
    """A compressed bundle laid out as clang-offload-bundler writes it
    (amdgpu-binaries.md 2.2): no local clang writes v1 or zlib, so these
    layouts are made here from a real uncompressed bundle."""
    payload = zlib.compress(bundle) if method == 0 else zstandard.ZstdCompressor(level=3).compress(bundle)
    digest = int.from_bytes(hashlib.md5(bundle).digest()[:8], "little")
    if version == 1:
        header = b"CCOB" + struct.pack("<HHIQ", 1, method, len(bundle), digest)
    elif version == 2:
        header = b"CCOB" + struct.pack("<HHIIQ", 2, method, 24 + len(payload), len(bundle), digest)
    else:
        header = b"CCOB" + struct.pack("<HHQQQ", 3, method, 32 + len(payload), len(bundle), digest)
    return header + payload
