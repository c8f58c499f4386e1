"""AMDGPU code objects embedded as data in host sections.

Programs that load kernels with ``hipModuleLoadData`` keep whole code objects
as byte arrays in ``.rodata``, ``.data`` or a section of their own; no offload
section says where.  This module finds them: it looks for ``\\x7fELF`` in the
host's data sections (never inside the offload containers, whose size fields
already delimit their contents, and never inside an image it has accepted),
keeps a candidate only when its own header says 64-bit little-endian,
``e_machine`` AMDGPU (224) and OS ABI AMDGPU HSA (64), and then checks that
its section table, its sections, its program headers and its notes all lie
inside the host section before it is trusted.  Such a header with a table or a
note outside the section is a broken image: an error, not a skip.  A sound
image without an ``NT_AMDGPU_METADATA`` note (the HSA runtime keeps trap
handlers and code object v2 blobs in ``.data``, libhsa-runtime64.so.1 of
Debian 12 has several) carries no kernel resources: it is stepped over, not
counted and not searched inside.

Pure functions over memoryviews; the host's section table is read with
``elf.ElfImage``.
"""

from __future__ import annotations

from dataclasses import dataclass

from spillway.errors import InputError, NoDeviceCode
from spillway.formats import metadata
from spillway.formats.elf import (ELF_MAGIC, PT_LOAD, PT_NOTE, SECTION_SIZE, SEGMENT_SIZE, SHF_EXECINSTR, SHT_NOBITS,
                                  SHT_NOTE, SHT_PROGBITS, ElfImage, machine, read_header, read_sections,
                                  read_segments)
from spillway.formats.walk import advance
from spillway.resources.targets import ELFOSABI_AMDGPU_HSA, EM_AMDGPU

_CHUNK = 16 << 20

# Sections whose contents are delimited by their own format (bundles,
# OffloadBinary records, kpack markers) or that hold no data arrays.
SKIPPED_SECTIONS = (".hip_fatbin", ".hipFatBinSegment", ".llvm.offloading", ".rocm_kpack_ref",
                    ".hip_gpubin_handle", ".comment", ".eh_frame", ".eh_frame_hdr", ".gcc_except_table")
SKIPPED_PREFIXES = ("__CLANG_OFFLOAD_BUNDLE__", ".llvm.offloading", ".debug", ".note", ".rela", ".rel.",
                    ".gnu", ".dyn", ".got", ".plt", ".init", ".fini", ".symtab", ".strtab", ".shstrtab")


@dataclass(frozen=True)
class EmbeddedImage:
    section: str
    offset: int           # of the image in the host file (or in the buffer given)
    payload: memoryview


class EmbeddedImagesNotRead(NoDeviceCode):
    """A host file without offload sections whose data holds code objects:
    they are read only with ``--scan-embedded``."""

    def __init__(self, count: int, **where):
        self.count = count
        super().__init__(not_read_message(count), **where)


def not_read_message(count: int, files: int = 1) -> str:
    where = "in host data sections" if files == 1 else f"in host data sections of {files} files"
    return (f"no offload sections, but {count} AMDGPU code object{'s' if count != 1 else ''} embedded "
            f"as data {where}: read {'them' if count != 1 else 'it'} with --scan-embedded")


def scanned_sections(host: ElfImage):
    """(name, offset, size) of the host sections that may hold data arrays."""
    for section in host.sections:
        if section.type != SHT_PROGBITS or section.flags & SHF_EXECINSTR or section.size < 64:
            continue
        if section.name in SKIPPED_SECTIONS or section.name.startswith(SKIPPED_PREFIXES):
            continue
        yield section.name, section.offset, section.size


class _Finder:
    """``find`` over a large memoryview without copying it more than once."""

    def __init__(self, data: memoryview):
        self.data = data
        self.start = 0
        self.chunk = b""

    def find(self, needle: bytes, position: int, end: int) -> int:
        while position < end:
            if not (self.start <= position and position + len(needle) <= self.start + len(self.chunk)):
                self.start = position
                self.chunk = bytes(self.data[position:min(end, position + _CHUNK)])
            found = self.chunk.find(needle, position - self.start, end - self.start)
            if found >= 0:
                return self.start + found
            chunk_end = self.start + len(self.chunk)
            if chunk_end >= end:
                return -1
            position = chunk_end - len(needle) + 1
            self.chunk = b""
        return -1


def claims_amdgpu_hsa(head: bytes) -> bool:
    """The header's own words: ELF64, little-endian, version 1, AMDGPU, HSA."""
    return (len(head) >= 64 and head[:4] == ELF_MAGIC and head[4] == 2 and head[5] == 1 and head[6] == 1
            and head[7] == ELFOSABI_AMDGPU_HSA and machine(head) == EM_AMDGPU)


def image_extent(view: memoryview, section: str) -> tuple[int, bool]:
    """Validate the code object at the start of ``view``; return its size and
    whether it has an NT_AMDGPU_METADATA note.

    Raises InputError (offsets inside the image) when a table, a section,
    a segment or the metadata note lies outside ``view``.
    """
    available = len(view)
    header = read_header(view)
    e_type, version, ehsize, shoff, shnum, shentsize, shstrndx = (header.type, header.version, header.ehsize,
                                                                  header.shoff, header.shnum, header.shentsize,
                                                                  header.shstrndx)
    phoff, phnum, phentsize = header.phoff, header.phnum, header.phentsize
    container = f"embedded code object in section {section}"

    def fail(message: str, offset: int) -> InputError:
        return InputError(message, container=container, offset=offset)

    if version != 1 or ehsize != 64 or e_type not in (1, 2, 3):
        raise fail(f"ELF header says version {version}, header size {ehsize}, type {e_type}", 16)
    if shnum == 0 or shoff == 0:
        raise fail("no section table", 0x28)
    if shentsize != SECTION_SIZE or shoff < 64 or shoff + shnum * SECTION_SIZE > available:
        raise fail(f"section table ({shnum} entries of {shentsize} bytes at {shoff:#x}) runs past the end of "
                   f"section {section} ({available} bytes left)", 0x28)
    if shstrndx >= shnum:
        raise fail(f"section name table index {shstrndx} is not below the section count {shnum}", 0x3E)
    extent = shoff + shnum * SECTION_SIZE
    notes = []
    for index, header_entry in enumerate(read_sections(view, shoff, shnum)):
        if header_entry.type == SHT_NOBITS or index == 0:
            continue
        offset, size = header_entry.offset, header_entry.size
        if offset + size > available:
            raise fail(f"section {index} (offset {offset:#x}, size {size}) runs past the end of section "
                       f"{section} ({available} bytes left)", shoff + index * SECTION_SIZE)
        extent = max(extent, offset + size)
        if header_entry.type == SHT_NOTE:
            notes.append((offset, size))
    if phnum:
        if phentsize != SEGMENT_SIZE or phoff + phnum * SEGMENT_SIZE > available:
            raise fail(f"program headers ({phnum} at {phoff:#x}) run past the end of section {section}", 0x20)
        extent = max(extent, phoff + phnum * SEGMENT_SIZE)
        for index, segment in enumerate(read_segments(view, phoff, phnum)):
            if segment.type in (PT_LOAD, PT_NOTE) and segment.offset + segment.filesz > available:
                raise fail(f"segment {index} (offset {segment.offset:#x}, size {segment.filesz}) runs past the end "
                           f"of section {section}", phoff + index * SEGMENT_SIZE)
    found = False
    for offset, size in notes:
        try:
            for name, note_type, _desc, _at in metadata.iter_notes(view[offset:offset + size]):
                if name == metadata.AMDGPU_NOTE_NAME and note_type == metadata.NT_AMDGPU_METADATA:
                    found = True
        except InputError as exc:
            raise fail(f"note section: {exc.message}", offset + (exc.offset or 0)) from None
    return extent, found


def find_in_section(data: memoryview, section: str, base: int, finder: _Finder | None = None,
                    start: int = 0, end: int | None = None) -> list[EmbeddedImage]:
    """Images inside ``data[start:end]``; offsets are ``base`` + position in ``data``."""
    finder = finder or _Finder(data)
    end = len(data) if end is None else end
    images: list[EmbeddedImage] = []
    position = start
    while True:
        found = finder.find(ELF_MAGIC, position, end)
        if found < 0 or found + 64 > end:
            return images
        if not claims_amdgpu_hsa(bytes(data[found:found + 64])):
            position = found + 1
            continue
        view = data[found:end]
        try:
            size, has_metadata = image_extent(view, section)
        except InputError as exc:
            exc.offset = base + found + (exc.offset or 0)
            raise
        if has_metadata:
            images.append(EmbeddedImage(section, base + found, view[:size]))
        position = advance(found, found + size, container=section, what="embedded code object")


def find_images(data: memoryview) -> list[EmbeddedImage]:
    """Every embedded code object in a host ELF's data sections.  Offsets are
    file offsets.  Raises InputError for a broken image or section table."""
    if len(data) < 64:
        raise InputError(f"truncated ELF header ({len(data)} bytes)", container="ELF", offset=0)
    host = ElfImage(data)
    finder = _Finder(data)
    images = []
    for name, offset, size in scanned_sections(host):
        if offset + size > len(data):
            raise InputError(f"section {name} (offset {offset:#x}, size {size}) runs past the end of the file",
                             container="ELF", offset=offset)
        images.extend(find_in_section(data, name, 0, finder, offset, offset + size))
    return images
