"""The one ELF reader of the package: 64-bit little-endian ELF over bytes
(a memoryview of a mapped file or an inflated bundle entry, never copied
whole).

``ElfImage(data)`` reads the header and the section table into ``Section``
records; it then gives a section's bytes (checked against the end of the
data), notes, program headers (``Segment``), symbol tables (``Symbol``),
RELA relocations (``Relocation``), and the contents of a section as a
consumer wants them: inflated when SHF_COMPRESSED (zlib or zstd, through
the bounded inflaters of formats.bundles) and, in a relocatable object
(ET_REL), with its ``.rela`` section's AMDGPU relocations applied
(``ElfImage.contents``).  Every error is an InputError naming the file
(when given), the container and the byte offset.

Hand-written with ``struct.Struct`` (one ``iter_unpack`` per table) rather
than pyelftools: pyelftools' construct-based parsing costs tens of
microseconds per header and symbol, most of the time on libraries with
hundreds of code objects and 239,806 kernels, and it applies no AMDGPU
relocations.  Symbols are filtered on their raw fields (type, size) before
their names are decoded, so a caller that wants the 64-byte kernel
descriptors or the functions pays for those only.  Only this module spells
out ELF structures (tests/unit/formats/test_elf.py checks the package).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import NamedTuple

from spillway.errors import InputError

# The container an ElfImage's errors name unless told otherwise (formats.codeobject.CONTAINER).
CODE_OBJECT = "code object"

ELF_MAGIC = b"\x7fELF"
ELFCLASS64, ELFDATA2LSB = 2, 1
ET_REL, ET_EXEC, ET_DYN = 1, 2, 3
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOTE, SHT_NOBITS, SHT_DYNSYM = 1, 2, 3, 4, 7, 8, 11
SHF_ALLOC, SHF_EXECINSTR, SHF_COMPRESSED = 0x2, 0x4, 0x800
STT_OBJECT, STT_FUNC = 1, 2
PT_LOAD, PT_NOTE = 1, 4
SHN_XINDEX = 0xFFFF
# Elf64_Chdr.ch_type (gABI); Debian's ROCm 6.4 libraries compress their debug sections with zlib.
ELFCOMPRESS_ZLIB, ELFCOMPRESS_ZSTD = 1, 2
# Relocation types (LLVM's ELFRelocs/AMDGPU.def) the debug sections of a relocatable object use.
R_AMDGPU_NONE, R_AMDGPU_ABS64, R_AMDGPU_ABS32 = 0, 3, 6
_RELOCATION_WIDTH = {R_AMDGPU_ABS64: 8, R_AMDGPU_ABS32: 4}

# A compressed section may declare at most this many bytes, and at most this many times its
# compressed size (a zip-bomb guard; real debug sections inflate 3-10 times).
INFLATED_MAX, INFLATED_RATIO_MAX = 1 << 30, 1024

# Elf64_Ehdr from e_type (offset 16) on; Elf64_Shdr; Elf64_Phdr; Elf64_Sym; Elf64_Rela; Elf64_Chdr.
_HEADER = struct.Struct("<HHIQQQIHHHHHH")
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SEGMENT = struct.Struct("<IIQQQQQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")
_CHDR = struct.Struct("<IIQQ")
HEADER_SIZE, SECTION_SIZE, SEGMENT_SIZE, SYMBOL_SIZE, RELA_SIZE = 64, _SECTION.size, _SEGMENT.size, \
    _SYMBOL.size, _RELA.size


class Header(NamedTuple):
    """Elf64_Ehdr after e_ident."""
    type: int
    machine: int
    version: int
    entry: int
    phoff: int
    shoff: int
    flags: int
    ehsize: int
    phentsize: int
    phnum: int
    shentsize: int
    shnum: int
    shstrndx: int


class Section(NamedTuple):
    """Elf64_Shdr, its name resolved ("" where not asked for)."""
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int


class Segment(NamedTuple):
    """Elf64_Phdr."""
    type: int
    flags: int
    offset: int
    vaddr: int
    paddr: int
    filesz: int
    memsz: int
    align: int


class Symbol(NamedTuple):
    """Elf64_Sym, its name decoded (UTF-8, bad bytes replaced)."""
    name: str
    value: int
    size: int
    info: int
    other: int
    shndx: int

    @property
    def bind(self) -> int:
        return self.info >> 4

    @property
    def type(self) -> int:
        return self.info & 0xF


class Relocation(NamedTuple):
    """Elf64_Rela, r_info split into its symbol index and type."""
    offset: int
    symbol: int
    type: int
    addend: int


def is_elf64_le(head: bytes | memoryview) -> bool:
    """ELF magic, 64-bit, little-endian: the only ELF this package reads."""
    head = bytes(head[:6])
    return len(head) == 6 and head[:4] == ELF_MAGIC and head[4] == ELFCLASS64 and head[5] == ELFDATA2LSB


def machine(head: bytes | memoryview) -> int | None:
    """e_machine of an ELF64 little-endian header (None when shorter than 20 bytes)."""
    return struct.unpack_from("<H", head, 18)[0] if len(head) >= 20 else None


def read_header(data: bytes | memoryview) -> Header:
    """The fields after e_ident (the caller has checked 64 bytes are there)."""
    return Header(*_HEADER.unpack_from(data, 16))


def read_sections(data: bytes | memoryview, offset: int, count: int) -> list[Section]:
    """``count`` section headers at ``offset``, names not resolved (the
    caller has checked they lie inside ``data``)."""
    return [Section("", *fields[1:]) for fields in _SECTION.iter_unpack(data[offset:offset + count * SECTION_SIZE])]


def read_segments(data: bytes | memoryview, offset: int, count: int) -> list[Segment]:
    """``count`` program headers at ``offset`` (checked by the caller)."""
    return [Segment(*fields) for fields in _SEGMENT.iter_unpack(data[offset:offset + count * SEGMENT_SIZE])]


class ElfImage:
    """A 64-bit little-endian ELF: its header, its sections (``sections``,
    a list of Section by index) and what they hold.

    ``file``, ``container``: what errors name (the container defaults to
    "code object").  Raises InputError when the header is short or not
    ELF64 little-endian, or the section table or its name table runs past
    the end of the data."""

    def __init__(self, data: bytes | memoryview, *, file: str | None = None, container: str = CODE_OBJECT):
        self.data = data = memoryview(data)
        self.file = file
        self.container = container
        if len(data) < HEADER_SIZE:
            raise self.error(f"truncated ELF header ({len(data)} bytes)", 0)
        if not is_elf64_le(data):
            raise self.error("not a 64-bit little-endian ELF", 0)
        self.header = header = read_header(data)
        self.e_type, self.e_flags, self.e_phoff, self.e_phnum = header.type, header.flags, header.phoff, header.phnum
        self.e_shoff = header.shoff
        self.sections: list[Section] = []
        count, names_index = header.shnum, header.shstrndx
        if not header.shoff or (count == 0 and header.shoff + SECTION_SIZE > len(data)):
            return
        if header.shentsize != SECTION_SIZE or header.shoff + max(count, 1) * SECTION_SIZE > len(data):
            raise self.error(f"section header table (offset {header.shoff:#x}, {count} entries) runs past "
                             f"the end ({len(data)} bytes)", 0x28)
        if count == 0 or names_index == SHN_XINDEX:   # extended numbering: the counts are in section 0
            first = read_sections(data, header.shoff, 1)[0]
            count = count or first.size
            names_index = first.link if names_index == SHN_XINDEX else names_index
            if header.shoff + count * SECTION_SIZE > len(data):
                raise self.error(f"section header table (offset {header.shoff:#x}, {count} entries) runs past "
                                 f"the end ({len(data)} bytes)", 0x28)
        raw = _SECTION.iter_unpack(data[header.shoff:header.shoff + count * SECTION_SIZE])
        fields = list(raw)
        names = b""
        if names_index < len(fields):
            names = bytes(self.view(fields[names_index][4], fields[names_index][5], "section name table"))
        sections = self.sections
        for name_at, *rest in fields:
            end = names.find(b"\0", name_at)
            sections.append(Section(names[name_at:end if end >= 0 else None].decode("latin-1"), *rest))

    def error(self, message: str, offset: int | None) -> InputError:
        return InputError(message, file=self.file, container=self.container, offset=offset)

    # -- bytes ------------------------------------------------------------------------------------

    def view(self, offset: int, size: int, what: str) -> memoryview:
        """The bytes at ``offset``, not copied; InputError when they run past the end."""
        if offset + size > len(self.data):
            raise self.error(f"{what} (offset {offset:#x}, size {size}) runs past the end "
                             f"({len(self.data)} bytes)", offset)
        return self.data[offset:offset + size]

    def section(self, name: str) -> Section | None:
        """The first section called ``name``."""
        for section in self.sections:
            if section.name == name:
                return section
        return None

    def section_bytes(self, name: str) -> bytes | None:
        """The raw bytes of the first section called ``name`` that has some in
        the file (not NOBITS); None without one."""
        for section in self.sections:
            if section.name == name and section.type != SHT_NOBITS:
                return bytes(self.view(section.offset, section.size, f"section {name}"))
        return None

    def notes(self) -> list[tuple[memoryview, int]]:
        """(bytes, file offset) of each SHT_NOTE section, else of each PT_NOTE segment."""
        found = [(self.view(s.offset, s.size, "note section"), s.offset) for s in self.sections if s.type == SHT_NOTE]
        if found or not self.e_phoff:
            return found
        return [(self.view(s.offset, s.filesz, "note segment"), s.offset) for s in self.segments() if s.type == PT_NOTE]

    def segments(self) -> list[Segment]:
        """The program headers (none when e_phoff is 0)."""
        if not self.e_phoff:
            return []
        if self.e_phoff + self.e_phnum * SEGMENT_SIZE > len(self.data):
            raise self.error("program header table runs past the end", 0x20)
        return read_segments(self.data, self.e_phoff, self.e_phnum)

    # -- symbols and relocations ------------------------------------------------------------------

    def symbol_tables(self) -> list[Section]:
        """SHT_SYMTAB and SHT_DYNSYM sections of 24-byte entries whose string
        table exists, in section order."""
        return [s for s in self.sections
                if s.type in (SHT_SYMTAB, SHT_DYNSYM) and s.entsize == SYMBOL_SIZE and s.link < len(self.sections)]

    def symbols(self, table: Section, *, type: int | None = None, size: int | None = None) -> list[Symbol]:
        """The symbols of ``table``; with ``type`` (STT_*) or ``size``, only
        those (filtered before names are decoded).  Unfiltered, a symbol's
        index in the list is its index in the table (relocations name it so)."""
        entries = self.view(table.offset, table.size - table.size % SYMBOL_SIZE, "symbol table")
        link = self.sections[table.link]
        strings = bytes(self.view(link.offset, link.size, "string table"))
        out = []
        chosen: Iterable[tuple[int, int, int, int, int, int]]
        if type is None:
            chosen = _SYMBOL.iter_unpack(entries)
        else:
            # Only the entries of that type unpacked: their st_info bytes picked out in C (a code object's
            # .symtab holds six untyped symbols for each kernel and its descriptor).
            marks = bytes(entries[4::SYMBOL_SIZE]).translate(_of_type(type))
            chosen = (_SYMBOL.unpack_from(entries, at * SYMBOL_SIZE) for at in _found(marks))
        for name_at, info, other, shndx, value, symbol_size in chosen:
            if (type is not None and info & 0xF != type) or (size is not None and symbol_size != size):
                continue
            end = strings.find(b"\0", name_at)
            out.append(Symbol(strings[name_at:end if end >= 0 else None].decode("utf-8", "replace"),
                              value, symbol_size, info, other, shndx))
        return out

    def static_symbols(self) -> list[Symbol]:
        """Every symbol of the first SHT_SYMTAB, by index (none without one)."""
        for table in self.symbol_tables():
            if table.type == SHT_SYMTAB:
                return self.symbols(table)
        return []

    def relocations(self, section: Section) -> list[Relocation]:
        """The entries of a SHT_RELA section."""
        entries = self.view(section.offset, section.size - section.size % RELA_SIZE, f"section {section.name}")
        return [Relocation(offset, info >> 32, info & 0xFFFFFFFF, addend)
                for offset, info, addend in _RELA.iter_unpack(entries)]

    # -- contents as a consumer wants them --------------------------------------------------------

    def contents(self, names: tuple[str, ...] | list[str]) -> dict[str, bytes]:
        """The bytes of each named section present (NOBITS ones left out):
        inflated when SHF_COMPRESSED and, in a relocatable object, with the
        RELA relocations of ``.rela<name>`` applied (R_AMDGPU_ABS32/ABS64:
        symbol value plus addend; debug sections of a ``-c`` compile hold
        zeros in their place)."""
        out: dict[str, bytes] = {}
        for section in self.sections:
            if section.name in names and section.name not in out and section.type != SHT_NOBITS:
                found = bytes(self.view(section.offset, section.size, f"section {section.name}"))
                out[section.name] = self._inflated(section, found) if section.flags & SHF_COMPRESSED else found
        if self.e_type != ET_REL or not out:
            return out
        symbols: list[Symbol] | None = None
        for section in self.sections:
            target = section.name[len(".rela"):]
            if section.type != SHT_RELA or not section.name.startswith(".rela") or target not in out:
                continue
            if symbols is None:
                symbols = self.static_symbols()
            out[target] = self._relocated(section, target, out[target], symbols)
        return out

    def _relocated(self, section: Section, target: str, data: bytes, symbols: list[Symbol]) -> bytes:
        patched = bytearray(data)
        for relocation in self.relocations(section):
            if relocation.type == R_AMDGPU_NONE:
                continue
            width = _RELOCATION_WIDTH.get(relocation.type)
            if width is None:
                raise self.error(f"{section.name}: relocation type {relocation.type} not supported "
                                 "(R_AMDGPU_ABS32 and ABS64 are)", section.offset)
            if relocation.offset + width > len(patched):
                raise self.error(f"{section.name}: relocation at {relocation.offset:#x} outside {target} "
                                 f"({len(patched)} bytes)", section.offset)
            value = (symbols[relocation.symbol].value if relocation.symbol < len(symbols) else 0) + relocation.addend
            patched[relocation.offset:relocation.offset + width] = \
                (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
        return bytes(patched)

    def contents_on_demand(self, names: tuple[str, ...] | list[str]) -> dict[str, bytes | PartlyInflated]:
        """``contents``, with each zlib SHF_COMPRESSED section a PartlyInflated:
        inflated only as far as a reader asks (PartlyInflated.reach).  A
        relocatable object's (its relocations patch the whole) and zstd
        sections are inflated whole, as ``contents`` does.  Errors in a part
        never reached are never seen: a reader that needs them all (or that
        met an error) calls ``contents``."""
        if self.e_type == ET_REL:
            return dict(self.contents(names))
        out: dict[str, bytes | PartlyInflated] = {}
        for section in self.sections:
            if section.name in names and section.name not in out and section.type != SHT_NOBITS:
                found = self.view(section.offset, section.size, f"section {section.name}")
                if section.flags & SHF_COMPRESSED and len(found) >= _CHDR.size \
                        and _CHDR.unpack_from(found, 0)[0] == ELFCOMPRESS_ZLIB:
                    out[section.name] = PartlyInflated(self, section, found)
                else:
                    whole = bytes(found)
                    out[section.name] = self._inflated(section, whole) if section.flags & SHF_COMPRESSED else whole
        return out

    def _inflated(self, section: Section, data: bytes) -> bytes:
        """A SHF_COMPRESSED section's contents (gABI: an Elf64_Chdr, then a
        zlib or zstd stream of ch_size bytes)."""
        name, offset = section.name, section.offset
        if len(data) < _CHDR.size:
            raise self.error(f"{name}: compressed section of {len(data)} bytes has no compression header", offset)
        kind, _reserved, size, _align = _CHDR.unpack_from(data, 0)
        if size > INFLATED_MAX or size > INFLATED_RATIO_MAX * len(data):
            raise self.error(f"{name}: compressed section declares {size} bytes from {len(data)} (the limit is "
                             f"{INFLATED_MAX} bytes, {INFLATED_RATIO_MAX} times the compressed size)", offset)
        # The bounded inflaters every compressed format uses (bundles, offload binaries, kpack): never more
        # than the declared size plus one byte is produced.
        from spillway.formats import bundles

        stream = memoryview(data)[_CHDR.size:]
        try:
            if kind == ELFCOMPRESS_ZLIB:
                out, _ = bundles.inflate_zlib(stream, size, f"{name} (zlib)")
            elif kind == ELFCOMPRESS_ZSTD:
                out, _ = bundles.inflate_zstd(stream, size, f"{name} (zstd)", need_end=False)
            else:
                raise self.error(f"{name}: compression type {kind} not supported (zlib and zstd are)", offset)
        except InputError as exc:
            exc.file = exc.file or self.file
            raise
        if len(out) != size:
            raise self.error(f"{name}: compressed section inflates to {len(out)} bytes, its header says {size}",
                             offset)
        return out


@lru_cache(maxsize=None)
def _of_type(symbol_type: int) -> bytes:
    """A bytes.translate table: st_info -> 1 for a symbol of this type (STT_*), else 0."""
    return bytes(int(info & 0xF == symbol_type) for info in range(256))


def _found(marks: bytes) -> Iterator[int]:
    """The indexes of the 1 bytes of ``marks``."""
    at = marks.find(1)
    while at >= 0:
        yield at
        at = marks.find(1, at + 1)


class PartlyInflated:
    """A zlib SHF_COMPRESSED section inflated as far as it is read: ``data``
    has the size its compression header declares, of which the first
    ``filled`` bytes are inflated (zeros after them until ``reach`` goes
    further).  A code object's .debug_info and .debug_str are tens of
    kilobytes each, of which the line tables' reader wants a few hundred bytes
    (the compile units' first entries and the strings they name): inflating
    them whole was a tenth of ``report --isa``'s CPU on librocsparse1 7.2.4.

    The declared size and the ratio are checked at once, as ``contents``
    does; a corrupt or short stream raises the InputError ``contents`` would
    (with ``contents``' message) only when the reading reaches it."""

    __slots__ = ("image", "section", "data", "filled", "_inflater", "_stream", "done")

    _STEP = 4096        # bytes inflated beyond what a reader asks (a few reads, not one per string)

    def __init__(self, image: ElfImage, section: Section, raw: memoryview):
        kind, _reserved, size, _align = _CHDR.unpack_from(raw, 0)
        if size > INFLATED_MAX or size > INFLATED_RATIO_MAX * len(raw):
            raise image.error(f"{section.name}: compressed section declares {size} bytes from {len(raw)} (the limit "
                              f"is {INFLATED_MAX} bytes, {INFLATED_RATIO_MAX} times the compressed size)",
                              section.offset)
        import zlib

        self.image, self.section = image, section
        self.data = bytearray(size)
        self.filled = 0
        self.done = False
        self._inflater = zlib.decompressobj()
        self._stream: bytes | memoryview = raw[_CHDR.size:]

    def __len__(self) -> int:
        return len(self.data)

    def reach(self, end: int) -> bytearray:
        """``data`` with at least its first ``end`` bytes inflated (all of them
        when ``end`` is past the declared size)."""
        if end <= self.filled or self.done:
            return self.data
        import zlib

        size = len(self.data)
        what = f"{self.section.name} (zlib)"
        end = min(max(end, self.filled + self._STEP), size)
        while self.filled < end and not self.done:
            want = end - self.filled
            try:
                # (one byte more at the declared end, as inflate_zlib asks: a longer stream is an error)
                piece = self._inflater.decompress(self._stream, want + (end == size))
            except zlib.error as exc:
                raise self._error(f"zlib stream is corrupt ({exc})", what) from None
            self._stream = self._inflater.unconsumed_tail
            if self.filled + len(piece) > size:
                raise self._error(f"zlib stream inflates past {size} bytes", what)
            self.data[self.filled:self.filled + len(piece)] = piece
            self.filled += len(piece)
            if self._inflater.eof or self.filled == size or not piece:
                self.done = True
                if not self._inflater.eof:
                    raise self._error("zlib stream is truncated", what)
                if self.filled != size:
                    raise self.image.error(f"{self.section.name}: compressed section inflates to {self.filled} "
                                           f"bytes, its header says {size}", self.section.offset)
        return self.data

    def whole(self) -> bytearray:
        return self.reach(len(self.data))

    def string_end(self, at: int) -> int:
        """Where the NUL that ends the string at ``at`` is (-1: none before the end)."""
        while True:
            data = self.reach(at + 256)
            end = data.find(b"\0", at, self.filled)
            if end >= 0 or self.done:
                return end
            at = max(at, self.filled)

    def _error(self, message: str, container: str) -> InputError:
        return InputError(message, file=self.image.file, container=container)
