"""Where device code lives: host ELF files, ``ar`` archives, wheels, bundle
files, bare code objects and directories.

``scan`` turns one path into the device images it holds (AMDGPU code
objects, still unparsed) plus what it saw on the way: bitcode-only entries
and members without device code.  Files are mapped, not read.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
import zipfile
from dataclasses import dataclass, field

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from spillway.formats import bundles, offload_binary
from spillway.formats.codeobject import is_amdgpu_elf
from spillway.formats.elfstream import MemoryStream
from spillway.errors import InputError, NoDeviceCode

AR_MAGIC = b"!<arch>\n"
THIN_AR_MAGIC = b"!<thin>\n"
ZIP_MAGIC = b"PK\x03\x04"
RDC_SECTION_PREFIX = "__CLANG_OFFLOAD_BUNDLE__"
MAX_NESTING = 4


@dataclass(frozen=True)
class DeviceImage:
    """An AMDGPU code object found somewhere, not yet parsed."""

    file: str                 # display path; archive members as lib.a(k.o), wheel entries as x.whl!lib/y.so
    container: str            # how it was found, for messages
    bundle_index: int | None  # index of the bundle in its .hip_fatbin (one per translation unit)
    entry_id: str
    payload: memoryview
    offset: int | None        # of the payload in the file, when it is stored uncompressed


@dataclass
class ScanResult:
    images: list[DeviceImage] = field(default_factory=list)
    bitcode_only: list[str] = field(default_factory=list)      # "file: where"
    skipped: list[str] = field(default_factory=list)           # members without device code
    bundles: int = 0
    spirv_entries: int = 0
    kind: str = "unknown"     # what the top-level path was
    files_read: int = 0

    def merge(self, other: "ScanResult") -> None:
        self.images.extend(other.images)
        self.bitcode_only.extend(other.bitcode_only)
        self.skipped.extend(other.skipped)
        self.bundles += other.bundles
        self.spirv_entries += other.spirv_entries
        self.files_read += other.files_read

    @property
    def has_device_code(self) -> bool:
        return bool(self.images or self.bitcode_only)


@dataclass(frozen=True)
class ScanOptions:
    max_decompressed: int = bundles.DEFAULT_MAX_DECOMPRESSED


def _is_bitcode(payload: memoryview) -> bool:
    return bytes(payload[:4]) in bundles.BITCODE_MAGICS


def _map_file(path: str) -> memoryview:
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return memoryview(b"")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    return memoryview(mapped)


# -- bundle streams ---------------------------------------------------------

def _scan_bundle_stream(data: memoryview, name: str, base: int | None, container: str,
                        options: ScanOptions) -> ScanResult:
    result = ScanResult()
    found = bundles.walk(data, max_decompressed=options.max_decompressed, container=container)
    result.bundles += len(found)
    for bundle in found:
        for entry in bundle.entries:
            if entry.is_host or not entry.payload.nbytes:
                continue
            if entry.triple.startswith("spirv"):
                result.spirv_entries += 1
                continue
            if not entry.is_amdgcn:
                continue
            where = f"{container} bundle {bundle.index} entry {entry.entry_id}"
            if _is_bitcode(entry.payload):
                result.bitcode_only.append(f"{name}: {where}")
                continue
            offset = None
            if bundle.compression is None and base is not None:
                offset = base + entry.offset
            result.images.append(DeviceImage(name, where, bundle.index, entry.entry_id,
                                             entry.payload, offset))
    return result


# -- host ELF files ---------------------------------------------------------

def _scan_host_elf(data: memoryview, name: str, options: ScanOptions) -> ScanResult:
    result = ScanResult()
    try:
        elf = ELFFile(MemoryStream(data))
        sections = []
        for section in elf.iter_sections():
            header = section.header
            sections.append((section.name, header["sh_type"], header["sh_offset"], header["sh_size"]))
    except (ELFError, struct.error, ValueError, IndexError, KeyError, OverflowError) as exc:
        raise InputError(f"corrupt ELF structure ({exc})", file=name, container="ELF") from None
    except Exception as exc:
        raise InputError(f"corrupt ELF structure ({type(exc).__name__}: {exc})", file=name,
                         container="ELF") from None

    for section_name, section_type, offset, size in sections:
        if section_type == "SHT_NOBITS" or size == 0:
            continue
        is_fatbin = section_name == ".hip_fatbin"
        is_rdc = section_name.startswith(RDC_SECTION_PREFIX)
        is_offloading = (section_type == offload_binary.SHT_LLVM_OFFLOADING
                         or section_name.startswith(offload_binary.SECTION_NAME))
        if not (is_fatbin or is_rdc or is_offloading):
            continue
        if offset + size > len(data):
            raise InputError(f"section {section_name} (offset {offset:#x}, size {size}) runs past the "
                             f"end of the file ({len(data)} bytes)", file=name, container="ELF",
                             offset=offset)
        content = data[offset:offset + size]
        if is_fatbin:
            try:
                result.merge(_scan_bundle_stream(content, name, offset, ".hip_fatbin", options))
            except InputError as exc:
                # Offsets inside the section become file offsets.
                exc.offset = None if exc.offset is None else exc.offset + offset
                exc.file = name
                raise
        elif is_rdc:
            entry_id = section_name[len(RDC_SECTION_PREFIX):]
            kind, triple, _target = bundles.split_entry_id(entry_id)
            if kind == "host" or not triple.startswith("amdgcn"):
                continue
            where = f"section {section_name}"
            if _is_bitcode(content):
                result.bitcode_only.append(f"{name}: {where}")
            elif is_amdgpu_elf(content):
                result.images.append(DeviceImage(name, where, None, entry_id, content, offset))
        else:
            try:
                images = offload_binary.parse_section(content)
            except InputError as exc:
                exc.within(section_name, offset)
                exc.file = name
                raise
            for image in images:
                where = f"{section_name} record at {offset + image.offset:#x} ({image.arch or '?'})"
                if not image.triple.startswith("amdgcn"):
                    continue
                if image.image_kind == "bitcode" or _is_bitcode(image.image):
                    result.bitcode_only.append(f"{name}: {where}")
                elif is_amdgpu_elf(image.image):
                    result.images.append(DeviceImage(name, where, None, f"{image.triple}-{image.arch}",
                                                     image.image, None))
    return result


# -- archives ---------------------------------------------------------------

def iter_ar_members(data: memoryview, name: str):
    """Yield (member name, member data, offset) of a GNU/BSD ar archive."""
    if bytes(data[:8]) == THIN_AR_MAGIC:
        raise InputError("thin archive: its members are separate files, pass those instead",
                         file=name, container="ar archive", offset=0)
    position = 8
    long_names = b""
    size = len(data)
    while position < size:
        if position + 60 > size:
            if not any(bytes(data[position:])) or bytes(data[position:]) == b"\n":
                break
            raise InputError("truncated member header", file=name, container="ar archive", offset=position)
        header = bytes(data[position:position + 60])
        if header[58:60] != b"`\n":
            raise InputError("bad member header terminator", file=name, container="ar archive",
                             offset=position)
        raw_name = header[:16].decode("latin-1").rstrip()
        try:
            member_size = int(header[48:58].decode("ascii").strip() or "0")
        except ValueError:
            raise InputError("bad member size field", file=name, container="ar archive",
                             offset=position + 48) from None
        start = position + 60
        if start + member_size > size:
            raise InputError(f"member of {member_size} bytes runs past the end of the archive",
                             file=name, container="ar archive", offset=position)
        body = data[start:start + member_size]
        member_name = raw_name
        if raw_name.startswith("#1/"):  # BSD: name follows the header
            name_len = int(raw_name[3:] or "0")
            member_name = bytes(body[:name_len]).rstrip(b"\0").decode("utf-8", "replace")
            body = body[name_len:]
            start += name_len
        elif raw_name == "//":
            long_names = bytes(body)
            member_name = None
        elif raw_name in ("/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"):
            member_name = None
        elif raw_name.startswith("/") and raw_name[1:].isdigit():
            index = int(raw_name[1:])
            end = long_names.find(b"\n", index)
            member_name = long_names[index:end if end >= 0 else None].decode("utf-8", "replace").rstrip("/")
        else:
            member_name = raw_name.rstrip("/")
        if member_name is not None:
            yield member_name, body, start
        position += 60 + member_size
        position += position & 1


# -- wheels -----------------------------------------------------------------

def iter_zip_members(path: str, data: memoryview, name: str, options: ScanOptions):
    """Yield (member name, member data) of a zip file; stored members are not copied."""
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if info.is_dir():
                    continue
                if info.compress_type == zipfile.ZIP_STORED:
                    header = bytes(data[info.header_offset:info.header_offset + 30])
                    if len(header) < 30 or header[:4] != ZIP_MAGIC:
                        raise InputError(f"bad local header for {info.filename}", file=name,
                                         container="zip", offset=info.header_offset)
                    name_len, extra_len = struct.unpack_from("<HH", header, 26)
                    start = info.header_offset + 30 + name_len + extra_len
                    if start + info.compress_size > len(data):
                        raise InputError(f"{info.filename} runs past the end", file=name,
                                         container="zip", offset=info.header_offset)
                    yield info.filename, data[start:start + info.compress_size]
                else:
                    if info.file_size > options.max_decompressed:
                        raise InputError(f"{info.filename} declares {info.file_size} bytes, above the "
                                         f"cap {options.max_decompressed}", file=name, container="zip",
                                         offset=info.header_offset)
                    with archive.open(info) as member:
                        content = member.read(options.max_decompressed + 1)
                    if len(content) > options.max_decompressed:
                        raise InputError(f"{info.filename} inflates past the cap", file=name,
                                         container="zip", offset=info.header_offset)
                    yield info.filename, memoryview(content)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError) as exc:
        raise InputError(f"corrupt zip file ({exc})", file=name, container="zip") from None


# -- dispatch ---------------------------------------------------------------

def classify(data: memoryview) -> str | None:
    head = bytes(data[:24])
    if head.startswith(b"\x7fELF"):
        return "code object" if is_amdgpu_elf(data) else "ELF"
    if head.startswith(AR_MAGIC) or head.startswith(THIN_AR_MAGIC):
        return "ar archive"
    if head == bundles.UNCOMPRESSED_MAGIC or head.startswith(bundles.COMPRESSED_MAGIC):
        return "offload bundle"
    if head.startswith(ZIP_MAGIC):
        return "zip"
    return None


def scan_buffer(data: memoryview, name: str, options: ScanOptions, *, path: str | None = None,
                depth: int = 0) -> ScanResult:
    """Scan one file's bytes.  Raises NoDeviceCode when nothing is there."""
    kind = classify(data)
    if kind is None:
        raise NoDeviceCode("not an ELF file, archive, wheel or offload bundle", file=name)
    result = ScanResult(files_read=1, kind=kind)
    if kind == "code object":
        result.images.append(DeviceImage(name, "code object", None, "", data, 0))
    elif kind == "offload bundle":
        try:
            result.merge(_scan_bundle_stream(data, name, 0, "bundle file", options))
        except InputError as exc:
            exc.file = exc.file or name
            raise
    elif kind == "ELF":
        result.merge(_scan_host_elf(data, name, options))
    elif kind in ("ar archive", "zip"):
        if depth >= MAX_NESTING:
            raise InputError("archives nested too deeply", file=name, container=kind)
        if kind == "ar archive":
            members = ((f"{name}({member})", body) for member, body, _ in iter_ar_members(data, name))
        else:
            if path is None:
                raise NoDeviceCode("zip file inside an archive is not read", file=name)
            members = ((f"{name}!{member}", body) for member, body in iter_zip_members(path, data, name, options))
        result.files_read = 0
        for member_name, body in members:
            try:
                result.merge(scan_buffer(body, member_name, options, depth=depth + 1))
            except NoDeviceCode:
                result.skipped.append(member_name)
                result.files_read += 1
    if not result.has_device_code and kind in ("ELF",):
        raise NoDeviceCode("holds no device code (no .hip_fatbin, offload bundle sections or "
                           ".llvm.offloading)", file=name, container=kind)
    return result


def scan_path(path: str, options: ScanOptions = ScanOptions(), *, display: str | None = None) -> ScanResult:
    """Scan a file or directory named by the user."""
    name = display or path
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=name) from None
    if stat.S_ISDIR(info.st_mode):
        result = ScanResult(kind="directory")
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for file_name in sorted(files):
                member = os.path.join(root, file_name)
                try:
                    if not stat.S_ISREG(os.lstat(member).st_mode):
                        continue
                    result.merge(scan_path(member, options))
                except NoDeviceCode:
                    result.skipped.append(member)
                    result.files_read += 1
        return result
    try:
        data = _map_file(path)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=name) from None
    except ValueError as exc:
        raise InputError(f"cannot map: {exc}", file=name) from None
    return scan_buffer(data, name, options, path=path)
