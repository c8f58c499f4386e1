"""Outer layers, rebuilt valid around mutated inner data.

Each builder here writes a container the way its producer does (clang-offload-
bundler, the new offload driver, ``ar``, ``zipfile``, a linker's section table)
so that a mutation of the inner bytes is not stopped by the outer parser's size,
hash or CRC checks and reaches the inner parsers.  The small parsers here are
deliberately lenient (they return None instead of raising): they only serve the
mutators, never spillway itself, so they share no code with it.
"""

from __future__ import annotations

import hashlib
import io
import struct
import zipfile
import zlib

import zstandard

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
AMDGPU_ENTRY = "hipv4-amdgcn-amd-amdhsa--gfx1100"
HOST_ENTRY = "host-x86_64-unknown-linux-gnu-"
OFFLOAD_MAGIC = b"\x10\xff\x10\xad"
SHT_NOTE = 7
SHT_LLVM_OFFLOADING = 0x6FFF4C0B

_ZSTD = zstandard.ZstdCompressor(level=1)


# -- notes and code objects -----------------------------------------------------

def note(name: bytes, note_type: int, desc: bytes, *, pad: bool = True) -> bytes:
    """One ELF note record; ``pad=False`` writes it without the 4-byte padding
    of name and desc (a producer bug the parser must not paper over)."""
    named = name + b"\0" if name else b""
    head = struct.pack("<III", len(named), len(desc), note_type)
    if not pad:
        return head + named + desc
    return head + named + b"\0" * (-len(named) % 4) + desc + b"\0" * (-len(desc) % 4)


def sections(elf: bytes) -> list[list[int]] | None:
    """Section headers of a 64-bit LE ELF as mutable lists of the 10 fields."""
    if len(elf) < 64 or elf[:4] != b"\x7fELF":
        return None
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    if shentsize != 64 or shoff + shnum * 64 > len(elf):
        return None
    return [list(struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * 64)) for i in range(shnum)]


def note_sections(elf: bytes) -> list[int]:
    found = sections(elf) or []
    return [i for i, s in enumerate(found) if s[1] == SHT_NOTE]


def metadata_of(elf: bytes) -> bytes | None:
    """The NT_AMDGPU_METADATA desc of a code object (first one found)."""
    found = sections(elf)
    if not found:
        return None
    for s in found:
        if s[1] != SHT_NOTE or s[4] + s[5] > len(elf):
            continue
        data, position = elf[s[4]:s[4] + s[5]], 0
        while position + 12 <= len(data):
            namesz, descsz, kind = struct.unpack_from("<III", data, position)
            desc_at = position + 12 + ((namesz + 3) & ~3)
            if desc_at + descsz > len(data):
                break
            if kind == 32 and data[position + 12:position + 12 + namesz].rstrip(b"\0") == b"AMDGPU":
                return data[desc_at:desc_at + descsz]
            position = desc_at + ((descsz + 3) & ~3)
    return None


def with_note_section(elf: bytes, content: bytes, index: int | None = None) -> bytes:
    """``elf`` with one note section's content replaced: the new content is
    appended (4-aligned) and the section header points at it, so every other
    offset in the file stays valid."""
    found = sections(elf)
    notes = [i for i, s in enumerate(found or []) if s[1] == SHT_NOTE]
    if not notes:
        return elf
    index = notes[0] if index is None or index not in notes else index
    out = bytearray(elf)
    out += b"\0" * (-len(out) % 4)
    at = len(out)
    out += content
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    struct.pack_into("<QQ", out, shoff + index * 64 + 24, at, len(content))
    return bytes(out)


def code_object_with_metadata(template: bytes, metadata: bytes, *, extra_notes: int = 0,
                              pad: bool = True, metadata_first: bool = False) -> bytes:
    """A code object whose note section holds ``metadata`` among other notes
    (odd-sized vendor notes before it, so padding matters)."""
    records = [note(b"AMD", 1 + i, b"\x01\x02\x03"[: 1 + i % 3], pad=pad) for i in range(extra_notes)]
    meta = note(b"AMDGPU", 32, metadata, pad=pad)
    records = [meta] + records if metadata_first else records + [meta]
    return with_note_section(template, b"".join(records))


# -- offload bundles -----------------------------------------------------------------

def bundle(entries: list[tuple[str, bytes]], *, align: int = 4096) -> bytes:
    """An uncompressed bundle as clang-offload-bundler lays it out."""
    header = bytearray(BUNDLE_MAGIC + struct.pack("<Q", len(entries)))
    descriptor_size = sum(24 + len(entry_id.encode("utf-8", "surrogateescape")) for entry_id, _ in entries)
    position = len(header) + descriptor_size
    offsets = []
    for _, payload in entries:
        if payload and align > 1:
            position += -position % align
        offsets.append(position)
        position += len(payload)
    for (entry_id, payload), offset in zip(entries, offsets):
        raw = entry_id.encode("utf-8", "surrogateescape")
        header += struct.pack("<QQQ", offset, len(payload), len(raw)) + raw
    out = bytearray(header)
    for (_, payload), offset in zip(entries, offsets):
        out += b"\0" * (offset - len(out))
        out += payload
    return bytes(out)


def bundle_entries(data: bytes) -> tuple[list[tuple[str, bytes]], int] | None:
    """Entries of the uncompressed bundle at the start of ``data`` and its end."""
    if len(data) < 32 or data[:24] != BUNDLE_MAGIC:
        return None
    count, = struct.unpack_from("<Q", data, 24)
    if count > 64:
        return None
    position, end, entries = 32, 32, []
    for _ in range(count):
        if position + 24 > len(data):
            return None
        offset, size, id_len = struct.unpack_from("<QQQ", data, position)
        position += 24
        if id_len > 4096 or position + id_len > len(data) or offset + size > len(data):
            return None
        entry_id = data[position:position + id_len].decode("latin-1")
        position += id_len
        entries.append((entry_id, data[offset:offset + size]))
        end = max(end, offset + size)
    return entries, max(end, position)


def ccob(bundle_bytes: bytes, version: int, method: int) -> bytes:
    """A compressed bundle with a correct hash and sizes (amdgpu-binaries.md 2.2)."""
    payload = zlib.compress(bundle_bytes, 1) if method == 0 else _ZSTD.compress(bundle_bytes)
    digest = int.from_bytes(hashlib.md5(bundle_bytes).digest()[:8], "little")
    if version == 1:
        return b"CCOB" + struct.pack("<HHIQ", 1, method, len(bundle_bytes) & 0xFFFFFFFF, digest) + payload
    if version == 2:
        return b"CCOB" + struct.pack("<HHIIQ", 2, method, (24 + len(payload)) & 0xFFFFFFFF,
                                     len(bundle_bytes) & 0xFFFFFFFF, digest) + payload
    return b"CCOB" + struct.pack("<HHQQQ", 3, method, 32 + len(payload), len(bundle_bytes), digest) + payload


def stream(parts: list[bytes], padding: int = 0) -> bytes:
    """Bundles back to back, each followed by zero padding, as in .hip_fatbin."""
    return b"".join(part + b"\0" * padding for part in parts)


# -- OffloadBinary ------------------------------------------------------------------

def offload_record(version: int, images: list[tuple[int, dict[str, str], bytes]]) -> bytes:
    """An OffloadBinary record (v1: one image, 16-byte string pairs; v2 and
    later: several images, 24-byte pairs), laid out like LLVM writes it."""
    if version == 1:
        images = images[:1]
    pair_size = 16 if version == 1 else 24
    entry_at = 32
    strings_at = entry_at + 40 * len(images)
    table = bytearray()
    pairs_total = sum(len(s) for _, s, _ in images) * pair_size
    blob_at = strings_at + pairs_total
    blob = bytearray()
    string_tables = []
    for _, strings, _ in images:
        start = strings_at + len(table)
        for key, value in strings.items():
            key_at = blob_at + len(blob)
            blob += key.encode() + b"\0"
            value_at = blob_at + len(blob)
            blob += value.encode() + b"\0"
            table += struct.pack("<QQ", key_at, value_at)
            if pair_size == 24:
                table += struct.pack("<Q", len(value.encode()))
        string_tables.append(start)
    image_at = blob_at + len(blob)
    image_at += -image_at % 8
    body = bytearray()
    entries = bytearray()
    position = image_at
    for (kind, strings, image), start in zip(images, string_tables):
        entries += struct.pack("<HHIQQQQ", kind, 1, 0, start, len(strings), position, len(image))
        body += image + b"\0" * (-len(image) % 8)
        position += len(image) + (-len(image) % 8)
    size = position
    head = OFFLOAD_MAGIC + struct.pack("<IQQQ", version, size, entry_at,
                                       len(images) if version >= 2 else 0)
    out = head + entries + table + blob
    out += b"\0" * (image_at - len(out))
    return bytes(out + body)


# -- host ELF -------------------------------------------------------------------------

def host_elf(section_list: list[tuple[str, int, bytes]]) -> bytes:
    """A minimal x86-64 relocatable with the given (name, type, content)
    sections plus a section name table, every offset consistent."""
    names = bytearray(b"\0")
    name_at = []
    for name, _, _ in section_list:
        name_at.append(len(names))
        names += name.encode() + b"\0"
    shstr_at = len(names)
    names += b".shstrtab\0"
    body = bytearray(b"\0" * 64)
    placed = []
    for (_, _, content) in section_list:
        body += b"\0" * (-len(body) % 8)
        placed.append((len(body), len(content)))
        body += content
    names_offset = len(body)
    body += names
    body += b"\0" * (-len(body) % 8)
    shoff = len(body)
    table = bytearray(b"\0" * 64)
    for (name, kind, _), at, (offset, size) in zip(section_list, name_at, placed):
        table += struct.pack("<IIQQQQIIQQ", at, kind, 0, 0, offset, size, 0, 0, 8, 0)
    table += struct.pack("<IIQQQQIIQQ", shstr_at, 3, 0, 0, names_offset, len(names), 0, 0, 1, 0)
    shnum = len(section_list) + 2
    header = (b"\x7fELF\x02\x01\x01\x00" + b"\0" * 8
              + struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, shnum, shnum - 1))
    body[:64] = header
    return bytes(body + table)


# -- ar and zip -----------------------------------------------------------------------

# What the ar layer can write into a header field in place of the true number
# (fuzz/targets.py's ar families pick one with a control byte).
AR_FIELDS = ("size", "name")     # the member size; the BSD "#1/N" length or GNU "/N" index
AR_VALUES = ("negative", "signed", "spaced", "underscore", "zero", "past_end", "huge")


# "negative" variants: minus the true number, and the two that once sent the
# walk back onto its own header forever (-60, -61: the header's size, with the
# parity step).
AR_NEGATIVE = ("true", "-60", "-61", "-1")


def _ar_number(value: str, true: int, past_end: int, width: int, variant: int = 0) -> str:
    negative = f"-{true or 1}" if AR_NEGATIVE[variant % 4] == "true" else AR_NEGATIVE[variant % 4]
    text = {"negative": negative, "signed": f"+{true}", "spaced": f" {true}",
            "underscore": f"{str(true)[:1]}_{str(true)[1:] or '0'}", "zero": "0",
            "past_end": str(past_end), "huge": "9" * width}[value]
    return text[:width]


def ar_archive(members: list[tuple[str, bytes]], *, bsd: bool = False,
               corrupt: tuple[str, str, int] | None = None, variant: int = 0) -> bytes:
    """A GNU ar archive with a ``//`` long-name table, or (``bsd``) one with
    ``#1/N`` names stored before each member's data.  ``corrupt`` = (field
    of AR_FIELDS, value of AR_VALUES, header index): that header's field is
    written with the value instead of the true number (``variant`` picks
    the negative number, AR_NEGATIVE)."""
    long_names = bytearray()
    headers = []
    for name, _ in members:     # (raw name, the number in it)
        if bsd:
            headers.append((f"#1/{len(name.encode())}", len(name.encode())))
        elif len(name) >= 15:
            headers.append((f"/{len(long_names)}", len(long_names)))
            long_names += name.encode() + b"/\n"
        else:
            headers.append((name + "/", None))
    out = bytearray(b"!<arch>\n")
    # per header: (offset, size field's true value, the number in its name or None)
    written: list[tuple[int, int, int | None]] = []

    def add(raw_name: str, number: int | None, data: bytes) -> None:
        written.append((len(out), len(data), number))
        out.extend(f"{raw_name:<16}{0:<12}{0:<6}{0:<6}{644:<8}{len(data):<10}`\n".encode())
        out.extend(data)
        if len(out) % 2:
            out.extend(b"\n")

    if long_names:
        add("//", None, bytes(long_names))
    for (raw_name, number), (name, data) in zip(headers, members):
        add(raw_name, number, name.encode() + data if bsd else data)
    if corrupt is None or not written:
        return bytes(out)
    field, value, index = corrupt
    at, size, number = written[index % len(written)]
    if field == "size":
        text = _ar_number(value, size, len(out) - at - 60 + 1, 10, variant)
        out[at + 48:at + 58] = f"{text:<10}".encode()
    else:
        prefix = "#1/" if bsd else "/"
        past_end = size + 1 if bsd else len(long_names) + 1
        text = prefix + _ar_number(value, number or 0, past_end, 16 - len(prefix), variant)
        out[at:at + 16] = f"{text:<16}".encode()
    return bytes(out)


def ar_members(data: bytes) -> list[tuple[str, bytes]] | None:
    if not data.startswith(b"!<arch>\n"):
        return None
    position, members, long_names = 8, [], b""
    while position + 60 <= len(data):
        header = data[position:position + 60]
        try:
            size = int(header[48:58].decode().strip() or 0)
        except ValueError:
            return None
        raw = header[:16].decode("latin-1").rstrip()
        body = data[position + 60:position + 60 + size]
        if raw == "//":
            long_names = body
        elif raw.startswith("/") and raw[1:].isdigit():
            start = int(raw[1:])
            end = long_names.find(b"\n", start)
            members.append((long_names[start:end].decode("latin-1").rstrip("/"), body))
        elif raw not in ("/", "/SYM64/"):
            members.append((raw.rstrip("/"), body))
        position += 60 + size
        position += position & 1
    return members


def zip_file(members: list[tuple[str, bytes]], *, deflate: bool = True) -> bytes:
    """A zip (wheel) with valid CRCs and sizes."""
    buffer = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(buffer, "w", method, compresslevel=1 if deflate else None) as archive:
        for name, data in members:
            archive.writestr(zipfile.ZipInfo(name or "x", (1980, 1, 1, 0, 0, 0)), data,
                             compress_type=method)
    return buffer.getvalue()


# -- a framing for several members in one fuzz input ----------------------------------

def pack_members(members: list[tuple[str, bytes]]) -> bytes:
    """[u16 name length][name][u32 data length][data]..., read by unpack_members."""
    out = bytearray()
    for name, data in members:
        raw = name.encode()[:255]
        out += struct.pack("<H", len(raw)) + raw + struct.pack("<I", len(data)) + data
    return bytes(out)


def unpack_members(data: bytes, limit: int = 16) -> list[tuple[str, bytes]]:
    """Lenient: a truncated member takes what is left."""
    members, position = [], 0
    while position + 2 <= len(data) and len(members) < limit:
        name_len, = struct.unpack_from("<H", data, position)
        name_len = min(name_len, 255)
        position += 2
        name = data[position:position + name_len].decode("latin-1")
        position += name_len
        if position + 4 > len(data):
            members.append((name, data[position:]))
            break
        size, = struct.unpack_from("<I", data, position)
        position += 4
        members.append((name, data[position:position + size]))
        position += size
    return members


# -- kpack archives -------------------------------------------------------------------

def kpack_archive(members: list[tuple[str, bytes]], *, zstd: bool = False, toc_edit=None) -> bytes:
    """A .kpack archive (ROCm kpack, version 1) holding each member as one
    code object of binary ``lib/libx.so#<index>`` for the member's name as
    the architecture; ``toc_edit(toc)`` may change the table of contents."""
    import msgpack
    out = bytearray(b"KPAK" + struct.pack("<IQ", 1, 0) + b"\0" * 48)
    toc = {"format_version": 1, "group_name": "fuzz", "gfx_arch_family": "gfx110X",
           "gfx_arches": [], "compression_scheme": "zstd-per-kernel" if zstd else "none", "toc": {}}
    blobs = []
    if zstd:
        frames = [_ZSTD.compress(data) for _, data in members]
        start = len(out)
        out += struct.pack("<I", len(frames))
        for frame in frames:
            out += struct.pack("<I", len(frame)) + frame
        toc["zstd_offset"], toc["zstd_size"] = start, len(out) - start
    else:
        for _, data in members:
            blobs.append({"offset": len(out), "size": len(data)})
            out += data
        toc["blobs"] = blobs
    for ordinal, (name, data) in enumerate(members):
        arch = name or "gfx1100"
        toc["gfx_arches"].append(arch)
        toc["toc"].setdefault(f"lib/libx.so#{ordinal % 3}", {})[arch] = {
            "type": "hsaco", "ordinal": ordinal, "original_size": len(data)}
    packed = msgpack.packb(toc)
    if toc_edit is not None:
        try:
            packed = msgpack.packb(toc_edit(toc), unicode_errors="surrogateescape")
        except Exception:   # an edit msgpack cannot write (an int past 64 bits): keep the TOC
            pass
    toc_at = len(out)
    out += packed
    struct.pack_into("<Q", out, 8, toc_at)
    return bytes(out)
