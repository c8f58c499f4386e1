"""LLVM OffloadBinary records (``.llvm.offloading`` sections of the new
offload driver).  Layout: amdgpu-binaries.md section 1.4."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from spillway.errors import InputError

MAGIC = b"\x10\xff\x10\xad"
SHT_LLVM_OFFLOADING = 0x6FFF4C0B
SECTION_NAME = ".llvm.offloading"

IMAGE_KINDS = {0: "none", 1: "object", 2: "bitcode", 3: "cubin", 4: "fatbinary", 5: "ptx", 6: "spirv"}
CONTAINER = "OffloadBinary"


@dataclass(frozen=True)
class OffloadImage:
    image_kind: str
    offload_kind: int
    strings: dict[str, str]
    image: memoryview
    offset: int          # of the record inside the section

    @property
    def triple(self) -> str:
        return self.strings.get("triple", "")

    @property
    def arch(self) -> str:
        return self.strings.get("arch", "")


def _string(data: memoryview, offset: int, where: int) -> str:
    if offset >= len(data):
        raise InputError(f"string offset {offset:#x} outside the record", container=CONTAINER, offset=where)
    end = bytes(data[offset:offset + 4096]).find(b"\0")
    if end < 0:
        raise InputError("unterminated string", container=CONTAINER, offset=where)
    return bytes(data[offset:offset + end]).decode("utf-8", "replace")


def parse_record(data: memoryview, base: int) -> tuple[list[OffloadImage], int]:
    """Parse the record at the start of ``data``; return images and its size."""
    if len(data) < 32:
        raise InputError("truncated OffloadBinary header", container=CONTAINER, offset=base)
    if bytes(data[:4]) != MAGIC:
        raise InputError(f"bad OffloadBinary magic {bytes(data[:4]).hex()}", container=CONTAINER, offset=base)
    version, size, entry_offset, entry_field = struct.unpack_from("<IQQQ", data, 4)
    if version not in (1, 2):
        raise InputError(f"unsupported OffloadBinary version {version}", container=CONTAINER, offset=base + 4)
    if size < 32 or size > len(data):
        raise InputError(f"record size {size} does not fit in {len(data)} bytes", container=CONTAINER,
                         offset=base + 8)
    record = data[:size]
    count = 1 if version == 1 else entry_field
    pair_size = 16 if version == 1 else 24
    if count > size // 40:
        raise InputError(f"record claims {count} entries", container=CONTAINER, offset=base + 24)
    images = []
    for index in range(count):
        at = entry_offset + index * 40
        if at + 40 > size:
            raise InputError("entry runs past the record", container=CONTAINER, offset=base + 16)
        image_kind, offload_kind, _flags, strings_at, string_count, image_at, image_size = \
            struct.unpack_from("<HHIQQQQ", record, at)
        if string_count > size // pair_size or strings_at + string_count * pair_size > size:
            raise InputError("string map runs past the record", container=CONTAINER, offset=base + at + 8)
        strings = {}
        for pair in range(string_count):
            key_at, value_at = struct.unpack_from("<QQ", record, strings_at + pair * pair_size)
            strings[_string(record, key_at, base + at)] = _string(record, value_at, base + at)
        if image_at + image_size > size:
            raise InputError(f"image (offset {image_at:#x}, size {image_size}) runs past the record",
                             container=CONTAINER, offset=base + at + 24)
        images.append(OffloadImage(IMAGE_KINDS.get(image_kind, f"kind {image_kind}"), offload_kind,
                                   strings, record[image_at:image_at + image_size], base))
    return images, size


def parse_section(data: memoryview) -> list[OffloadImage]:
    """All records of a section: each starts at an 8-aligned offset."""
    images, position = [], 0
    while position < len(data):
        if not any(bytes(data[position:position + 8])):
            position += 8
            continue
        found, size = parse_record(data[position:], position)
        images.extend(found)
        position = (position + size + 7) & ~7
    return images
