"""LLVM OffloadBinary records (``.llvm.offloading`` sections of the new
offload driver), versions 1 to 3.

Layout (amdgpu-binaries.md section 1.4; llvm/llvm-project
``llvm/include/llvm/Object/OffloadBinary.h`` and ``lib/Object/OffloadBinary.cpp``
on main, read for the facts only):

* header: magic ``10 FF 10 AD``, u32 version, u64 size of the record, u64
  offset of the entry table, then u64 "entry size" (v1, always one entry) or
  u64 entry count (v2+); v3 adds u64 ``InflatedSize`` (40-byte header).
* v3 with ``InflatedSize`` != 0: everything from the entry-table offset to the
  end of the record is one zstd (by its magic) or zlib stream, and
  ``InflatedSize`` is the size of the whole record once inflated.
* entry (40 bytes): u16 image kind, u16 offload kind, u32 flags, u64 offset of
  its string map, u64 number of strings, u64 image offset, u64 image size.
  Flag bit 0 (``OIF_Metadata``) marks an entry without an image.
* string map element: (key offset, value offset) in v1, plus a u64 value size
  in v2+; keys are NUL-terminated.  All offsets are from the record start.

Records are concatenated in a section, each at an 8-aligned offset.
Hand-written with struct: no Python library reads this format.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from spillway.errors import InputError
from spillway.formats.walk import advance
from spillway.formats import bundles

MAGIC = b"\x10\xff\x10\xad"
SHT_LLVM_OFFLOADING = 0x6FFF4C0B
SECTION_NAME = ".llvm.offloading"
SUPPORTED_VERSIONS = (1, 2, 3)
HEADER_SIZE = {1: 32, 2: 32, 3: 40}
ENTRY_SIZE = 40
STRING_ENTRY_SIZE = {1: 16, 2: 24, 3: 24}
FLAG_METADATA_ONLY = 1
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
MAX_STRING = 1 << 16

IMAGE_KINDS = {0: "none", 1: "object", 2: "bitcode", 3: "cubin", 4: "fatbinary", 5: "ptx", 6: "spirv"}
CONTAINER = "OffloadBinary"


@dataclass(frozen=True)
class OffloadImage:
    image_kind: str
    offload_kind: int
    flags: int
    strings: dict[str, str]
    image: memoryview
    offset: int              # of the record inside the section
    version: int
    entry_index: int         # of the entry inside its record
    compressed: bool         # the record was inflated: image offsets are not file offsets
    image_offset: int | None  # of the image inside the section, when stored uncompressed

    @property
    def triple(self) -> str:
        return self.strings.get("triple", "")

    @property
    def arch(self) -> str:
        return self.strings.get("arch", "")

    @property
    def metadata_only(self) -> bool:
        return bool(self.flags & FLAG_METADATA_ONLY) or self.image.nbytes == 0


def is_amdgpu_triple(triple: str) -> bool:
    """``amdgcn-amd-amdhsa`` (clang 23 and older) or ``amdgpu11.00-amd-amdhsa``
    (clang 24 spells the architecture with its version)."""
    return triple.split("-", 1)[0].startswith(("amdgcn", "amdgpu"))


def _string(record: memoryview, offset: int, size: int | None, where: int) -> str:
    if offset >= len(record):
        raise InputError(f"string offset {offset:#x} outside the record ({len(record)} bytes)",
                         container=CONTAINER, offset=where)
    if size is not None:
        if size > MAX_STRING or offset + size > len(record):
            raise InputError(f"string of {size} bytes at {offset:#x} runs past the record",
                             container=CONTAINER, offset=where)
        return bytes(record[offset:offset + size]).decode("utf-8", "replace")
    end = bytes(record[offset:offset + MAX_STRING]).find(b"\0")
    if end < 0:
        raise InputError(f"unterminated string at {offset:#x}", container=CONTAINER, offset=where)
    return bytes(record[offset:offset + end]).decode("utf-8", "replace")


def _inflate(data: memoryview, base: int, size: int, entries_at: int, inflated_size: int,
             max_decompressed: int) -> memoryview:
    """The whole record as it was before compression (header kept, sizes restored)."""
    if entries_at > size or inflated_size < entries_at:
        raise InputError(f"compressed record: entry offset {entries_at:#x}, record size {size}, inflated "
                         f"size {inflated_size} are inconsistent", container=CONTAINER, offset=base + 16)
    if inflated_size > max_decompressed:
        raise InputError(f"compressed record claims {inflated_size} bytes inflated, above the cap "
                         f"{max_decompressed}", container=CONTAINER, offset=base + 32)
    body_size = inflated_size - entries_at
    stream = data[entries_at:size]
    method = "zstd" if bytes(stream[:4]) == ZSTD_MAGIC else "zlib"
    where = f"{CONTAINER} v3 ({method})"
    try:
        if method == "zstd":
            body, _ = bundles.inflate_zstd(stream, body_size, where, need_end=False)
        else:
            body, _ = bundles.inflate_zlib(stream, body_size, where)
    except InputError as exc:
        # "inflates past" the limit means: more than InflatedSize says.
        raise exc.within(CONTAINER, base + entries_at) from None
    if len(body) != body_size:
        raise InputError(f"compressed record ({method}) inflates to {len(body) + entries_at} bytes, its "
                         f"header says {inflated_size}", container=CONTAINER, offset=base + 32)
    header = bytearray(data[:entries_at])
    struct.pack_into("<Q", header, 8, inflated_size)
    struct.pack_into("<Q", header, 32, 0)
    return memoryview(bytes(header) + body)


def parse_record(data: memoryview, base: int, *, max_decompressed: int = 4 << 30
                 ) -> tuple[list[OffloadImage], int]:
    """Parse the record at the start of ``data``; return its images and its
    size in ``data`` (before inflation).  ``base`` is its offset in the section."""
    if len(data) < 8:
        raise InputError("truncated OffloadBinary header", container=CONTAINER, offset=base)
    if bytes(data[:4]) != MAGIC:
        raise InputError(f"bad OffloadBinary magic {bytes(data[:4]).hex()}", container=CONTAINER, offset=base)
    (version,) = struct.unpack_from("<I", data, 4)
    if version not in SUPPORTED_VERSIONS:
        raise InputError(f"unsupported OffloadBinary version {version} (spillway reads 1 to 3)",
                         container=CONTAINER, offset=base + 4)
    header_size = HEADER_SIZE[version]
    if len(data) < header_size:
        raise InputError(f"truncated OffloadBinary v{version} header ({len(data)} of {header_size} bytes)",
                         container=CONTAINER, offset=base)
    size, entries_at, entry_field = struct.unpack_from("<QQQ", data, 8)
    inflated_size = struct.unpack_from("<Q", data, 32)[0] if version >= 3 else 0
    if size < header_size or size > len(data):
        raise InputError(f"record size {size} does not fit in {len(data)} bytes", container=CONTAINER,
                         offset=base + 8)
    if entries_at < header_size:
        raise InputError(f"entry table at {entries_at:#x} overlaps the {header_size}-byte header",
                         container=CONTAINER, offset=base + 16)
    compressed = inflated_size != 0
    record = data[:size]
    if compressed:
        record = _inflate(data, base, size, entries_at, inflated_size, max_decompressed)
    record_size = len(record)
    count = 1 if version == 1 else entry_field
    pair_size = STRING_ENTRY_SIZE[version]
    if count == 0:
        raise InputError("record has no entries", container=CONTAINER, offset=base + 24)
    if count > record_size // ENTRY_SIZE or entries_at + count * ENTRY_SIZE > record_size:
        raise InputError(f"entry table ({count} entries at {entries_at:#x}) runs past the record "
                         f"({record_size} bytes)", container=CONTAINER, offset=base + 24)
    images = []
    # Offsets of errors inside an inflated record cannot be file offsets.
    at_record = (lambda offset: base) if compressed else (lambda offset: base + offset)
    for index in range(count):
        at = entries_at + index * ENTRY_SIZE
        image_kind, offload_kind, flags, strings_at, string_count, image_at, image_size = \
            struct.unpack_from("<HHIQQQQ", record, at)
        if string_count > record_size // pair_size or strings_at + string_count * pair_size > record_size:
            raise InputError(f"string map of entry {index} ({string_count} strings at {strings_at:#x}) runs "
                             f"past the record", container=CONTAINER, offset=at_record(at + 8))
        strings = {}
        for pair in range(string_count):
            pair_at = strings_at + pair * pair_size
            if version == 1:
                key_at, value_at = struct.unpack_from("<QQ", record, pair_at)
                value_size = None
            else:
                key_at, value_at, value_size = struct.unpack_from("<QQQ", record, pair_at)
            key = _string(record, key_at, None, at_record(pair_at))
            strings[key] = _string(record, value_at, value_size, at_record(pair_at))
        if image_at > record_size or image_size > record_size - image_at:
            raise InputError(f"image of entry {index} (offset {image_at:#x}, size {image_size}) runs past "
                             f"the record ({record_size} bytes)", container=CONTAINER,
                             offset=at_record(at + 24))
        images.append(OffloadImage(IMAGE_KINDS.get(image_kind, f"kind {image_kind}"), offload_kind, flags,
                                   strings, record[image_at:image_at + image_size], base, version, index,
                                   compressed, None if compressed else base + image_at))
    return images, size


def parse_section(data: memoryview, *, max_decompressed: int = 4 << 30) -> list[OffloadImage]:
    """All records of a section: each starts at an 8-aligned offset."""
    images, position = [], 0
    while position < len(data):
        if not any(bytes(data[position:position + 8])):
            position += 8
            continue
        found, size = parse_record(data[position:], position, max_decompressed=max_decompressed)
        images.extend(found)
        position = advance(position, (position + size + 7) & ~7, container=CONTAINER, what="record")
    return images
