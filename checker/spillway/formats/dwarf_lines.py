"""DWARF line tables of one code object (issue 32): ``.debug_line`` (DWARF 2
to 5) and, from ``.debug_info``, the DW_AT_comp_dir and DW_AT_name of the
compile unit each table belongs to (the directory relative paths hang from).

``read_lines(elf)`` returns every line table of the ELF's ``.debug_line``
with its rows as llvm-dwarfdump --debug-line prints them (the end_sequence
rows included), or an empty tuple when there is none.  Bad input raises
InputError naming the section and the byte offset in the code object.

Addresses: each sequence (DW_LNE_set_address ... DW_LNE_end_sequence) names
the section holding its code and the address of that section's first byte
(``Sequence.section``, ``Sequence.base``), so ``address - base`` is an offset
in the section, as kernel_ranges() gives kernels' starts.  Linked code
objects (ET_DYN) need no relocation: the section is the one whose addresses
hold the sequence's first row.  Relocatable ones (ET_REL, a device ``-c``
compile before the link) hold zeros in place of the addresses and string
offsets, and RELA relocations (R_AMDGPU_ABS32/ABS64) carrying them in their
addends: they are applied to a copy of the debug sections, and a sequence's
section is its DW_LNE_set_address relocation's symbol's (one ``.text`` or a
section per function), placed in the code as codeobject.code_layout() lays
those sections out (Sequence.section CODE_SECTION, Sequence.base minus the
section's offset there), where kernel_ranges() places the kernels.

The ELF side (sections, symbols, relocations, SHF_COMPRESSED) is
formats.elf's.  Hand-written over bytes rather than pyelftools (a test
oracle only): its line programs run 29x slower and it does not apply AMDGPU
relocations (benchmarks/bench_lines.py; docs/source-lines.md, "Speed").  A numpy
version (every opcode's length at once, the chain by pointer doubling)
gave the same rows and ran slower: about one opcode per 1.5 bytes leaves
the array passes nothing to win.
"""

from __future__ import annotations

import re
import struct
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterable

from spillway.errors import InputError
from spillway.formats.codeobject import CODE_SECTION, CONTAINER, code_layout
from spillway.formats.elf import ET_REL, R_AMDGPU_ABS64, SHF_ALLOC, SHF_EXECINSTR, SHT_RELA, ElfImage, PartlyInflated

# Row flags (LineRows.flags).
IS_STMT, BASIC_BLOCK, END_SEQUENCE, PROLOGUE_END, EPILOGUE_BEGIN = 1, 2, 4, 8, 16

# Standard opcodes (DWARF 5 section 6.2.5.2) and extended ones (6.2.5.3).
_COPY, _ADVANCE_PC, _ADVANCE_LINE, _SET_FILE, _SET_COLUMN, _NEGATE_STMT, _SET_BASIC_BLOCK, _CONST_ADD_PC, \
    _FIXED_ADVANCE_PC, _SET_PROLOGUE_END, _SET_EPILOGUE_BEGIN, _SET_ISA = range(1, 13)
_END_SEQUENCE, _SET_ADDRESS, _DEFINE_FILE, _SET_DISCRIMINATOR = 1, 2, 3, 4

# Attribute forms (7.5.6) and line-table content types (6.2.4.1).
_FORM_ADDR, _FORM_BLOCK2, _FORM_BLOCK4, _FORM_DATA2, _FORM_DATA4, _FORM_DATA8, _FORM_STRING, _FORM_BLOCK, \
    _FORM_BLOCK1, _FORM_DATA1, _FORM_FLAG, _FORM_SDATA, _FORM_STRP, _FORM_UDATA, _FORM_REF_ADDR, _FORM_REF1, \
    _FORM_REF2, _FORM_REF4, _FORM_REF8, _FORM_REF_UDATA, _FORM_INDIRECT, _FORM_SEC_OFFSET, _FORM_EXPRLOC, \
    _FORM_FLAG_PRESENT, _FORM_STRX, _FORM_ADDRX, _FORM_REF_SUP4, _FORM_STRP_SUP, _FORM_DATA16, _FORM_LINE_STRP, \
    _FORM_REF_SIG8, _FORM_IMPLICIT_CONST, _FORM_LOCLISTX, _FORM_RNGLISTX, _FORM_REF_SUP8, _FORM_STRX1, \
    _FORM_STRX2, _FORM_STRX3, _FORM_STRX4, _FORM_ADDRX1, _FORM_ADDRX2, _FORM_ADDRX3, _FORM_ADDRX4 = (
        0x01, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12,
        0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23,
        0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c)
_LNCT_PATH, _LNCT_DIRECTORY_INDEX = 1, 2
_AT_NAME, _AT_STMT_LIST, _AT_COMP_DIR, _AT_STR_OFFSETS_BASE = 0x03, 0x10, 0x1b, 0x72
_TAG_COMPILE_UNIT, _TAG_PARTIAL_UNIT, _TAG_SKELETON_UNIT = 0x11, 0x3c, 0x4a

# Fixed sizes of forms (None: size from the data, the offset size or the address size).
_FIXED = {_FORM_DATA1: 1, _FORM_REF1: 1, _FORM_FLAG: 1, _FORM_STRX1: 1, _FORM_ADDRX1: 1,
          _FORM_DATA2: 2, _FORM_REF2: 2, _FORM_STRX2: 2, _FORM_ADDRX2: 2,
          _FORM_STRX3: 3, _FORM_ADDRX3: 3,
          _FORM_DATA4: 4, _FORM_REF4: 4, _FORM_REF_SUP4: 4, _FORM_STRX4: 4, _FORM_ADDRX4: 4,
          _FORM_DATA8: 8, _FORM_REF8: 8, _FORM_REF_SIG8: 8, _FORM_REF_SUP8: 8,
          _FORM_DATA16: 16, _FORM_FLAG_PRESENT: 0, _FORM_IMPLICIT_CONST: 0}
_OFFSET_SIZED = (_FORM_STRP, _FORM_LINE_STRP, _FORM_SEC_OFFSET, _FORM_STRP_SUP, _FORM_REF_ADDR)
_LEB = (_FORM_UDATA, _FORM_SDATA, _FORM_REF_UDATA, _FORM_STRX, _FORM_ADDRX, _FORM_LOCLISTX, _FORM_RNGLISTX)
_STRX = {_FORM_STRX: 0, _FORM_STRX1: 1, _FORM_STRX2: 2, _FORM_STRX3: 3, _FORM_STRX4: 4}

# A section's bytes as the readers take them: inflated whole, or the buffer of a PartlyInflated.
_Data = bytes | bytearray
_Sections = dict[str, bytes | PartlyInflated]

_DEBUG_SECTIONS = (".debug_line", ".debug_info", ".debug_abbrev", ".debug_str", ".debug_line_str",
                   ".debug_str_offsets")


@dataclass(frozen=True)
class SourceFile:
    name: str             # the file entry's name (DW_LNCT_path), as recorded
    directory: str        # the include directory it names, as recorded ("" for DWARF 2-4's index 0 or none)
    directory_index: int  # DWARF 5: 0 is the compilation directory; DWARF 2-4: 0 is the compile unit's
                          # DW_AT_comp_dir (not in the table), 1 the first include_directories entry


def _join(directory: str, name: str) -> str:
    if not directory:
        return name
    if not name:
        return directory
    return directory + name if directory.endswith("/") else directory + "/" + name


@dataclass(frozen=True)
class Sequence:
    section: str        # the section holding the sequence's code ("" when no section holds it)
    base: int           # that section's address: a row's offset in it is address - base
    first: int          # index of its first row in LineTable.rows
    stop: int           # one past its end_sequence row


@dataclass(frozen=True)
class LineRows:
    """The rows of one table, in program order, as parallel arrays."""
    address: array      # 'Q'
    line: array         # 'I'
    column: array       # 'I'
    file: array         # 'I': the file register (an index into LineTable.files)
    flags: array        # 'B': IS_STMT | BASIC_BLOCK | END_SEQUENCE | PROLOGUE_END | EPILOGUE_BEGIN

    def __len__(self) -> int:
        return len(self.address)


@dataclass(frozen=True)
class LineTable:
    offset: int                          # the unit's offset in .debug_line
    version: int                         # 2-5
    comp_dir: str                        # DW_AT_comp_dir of the compile unit naming this table ("" when none does)
    unit_name: str                       # that unit's DW_AT_name
    directories: tuple[str, ...]         # include_directories as recorded (DWARF 5: index 0 is the comp dir)
    files: tuple[SourceFile | None, ...]  # by file register value (DWARF 5 from 0; DWARF 2-4 from 1, index 0 None)
    rows: LineRows
    sequences: tuple[Sequence, ...]
    skipped: int = 0                     # sequences read_lines() skimmed (none unless given wanted ranges)

    def file_path(self, index: int) -> str:
        """The path of file ``index`` as LLVM's symbolizer joins it
        (DWARFDebugLine's getFileNameByIndex, absolute kind): the name when
        absolute, else under its directory, itself under the compile unit's
        comp_dir when relative (not DWARF 5's directory 0: it is the
        compilation directory already).  "" when there is no such file."""
        found = self.files[index] if 0 <= index < len(self.files) else None
        if found is None:
            return ""
        if found.name.startswith("/"):
            return found.name
        directory = found.directory
        if (self.version < 5 or found.directory_index != 0) and self.comp_dir and not directory.startswith("/"):
            directory = _join(self.comp_dir, directory)
        return _join(directory, found.name)


class _Bad(Exception):
    """A parse failure at an offset of the section being read."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset


def has_line_table(elf: bytes | memoryview) -> bool:
    """Whether the code object has a ``.debug_line`` section (False for an
    ELF whose section headers do not read: read_lines says what is wrong)."""
    return line_table_image(elf) is not None


def line_table_image(elf: bytes | memoryview) -> ElfImage | None:
    """The code object's ElfImage when it has a ``.debug_line`` section (for
    read_lines' ``image``: its sections read once), else None (as
    has_line_table says False)."""
    try:
        image = ElfImage(memoryview(elf))
    except (InputError, struct.error, IndexError, ValueError):
        return None
    return image if image.section(".debug_line") is not None else None


def read_lines(elf: bytes | memoryview, wanted: Iterable[tuple[str, int, int]] | None = None, *,
               image: ElfImage | None = None) -> tuple[LineTable, ...]:
    """Every line table of a code object's ``.debug_line`` (none without
    one).  Raises InputError (the code object's byte offset and the
    section's name) on a malformed table or compile unit.

    ``wanted``: (section, start, end) offset ranges, e.g. the kernels whose
    lines are needed; a sequence that cannot hold any of them is skimmed
    (its opcodes stepped over, no row made) and left out of its table's
    rows and sequences (``LineTable.skipped`` counts them).  A sequence may
    hold a range when the range meets [its first address, the next
    sequence's first address in the same section).  When the ranges cover
    much of the code, everything is run (skimming would cost more).  No
    range at all (``wanted`` empty): every table's header is read, no
    sequence (none is counted in ``skipped``).  ``image``: the ElfImage of
    ``elf`` already read (line_table_image)."""
    if image is None:
        try:
            image = ElfImage(memoryview(elf))
        except (struct.error, IndexError, ValueError) as exc:
            raise InputError(f"corrupt ELF structure ({exc})", container=CONTAINER) from None
    line_section = image.section(".debug_line")
    if line_section is None:
        return ()
    # The debug sections inflated only as far as they are read (the compile units' first entries, the strings
    # they name, the line tables' headers when no sequence is wanted); on any error, everything inflated and
    # read again, so that the error is the one a whole reading finds first.
    try:
        return _read_tables(image, line_section.offset, image.contents_on_demand(_DEBUG_SECTIONS), wanted)
    except InputError:
        pass
    return _read_tables(image, line_section.offset, dict(image.contents(_DEBUG_SECTIONS)), wanted)


def _read_tables(image: ElfImage, line_at: int, sections: _Sections,
                 wanted: Iterable[tuple[str, int, int]] | None) -> tuple[LineTable, ...]:
    """read_lines over the sections (inflated, or PartlyInflated)."""
    if ".debug_line" not in sections:
        return ()
    for name, found in sections.items():
        if isinstance(found, PartlyInflated) and name in _READ_WHOLE:
            sections[name] = bytes(found.whole())
    units: dict[int, tuple[str, str]] = {}
    info_section = image.section(".debug_info")
    if ".debug_info" in sections and info_section is not None:
        info_at = info_section.offset
        try:
            units = _compile_units(sections)
        except _Bad as bad:
            raise InputError(f".debug_info: {bad.message}", container=CONTAINER, offset=info_at + bad.offset) from None
        except (IndexError, struct.error, UnicodeDecodeError, ValueError) as exc:
            raise InputError(f".debug_info: malformed ({exc})", container=CONTAINER, offset=info_at) from None
    targets = _sequence_sections(image)
    ranges = None
    if wanted is not None:
        ranges = sorted(wanted)
        code_size = sum(size for _start, size, _name in targets.code)
        if sum(end - start for _section, start, end in ranges) * 100 >= _SKIM_BELOW * code_size:
            ranges = None
    line = sections[".debug_line"]
    # The line programs are read whole unless no sequence is wanted (only the headers then).
    headers_only = line if isinstance(line, PartlyInflated) and ranges is not None and not ranges else None
    data = headers_only.data if headers_only is not None else \
        bytes(line.whole()) if isinstance(line, PartlyInflated) else line
    tables = []
    at = 0
    while at < len(data):
        try:
            table, at = _table(data, at, sections, units, targets, ranges, headers_only)
        except _Bad as bad:
            raise InputError(f".debug_line: {bad.message}", container=CONTAINER, offset=line_at + bad.offset) from None
        except (IndexError, struct.error, UnicodeDecodeError, ValueError, OverflowError) as exc:
            raise InputError(f".debug_line: malformed unit ({exc})", container=CONTAINER,
                             offset=line_at + at) from None
        tables.append(table)
    return tuple(tables)


# Inflated whole: small sections read all over (the abbreviations; the file names of a line table's
# header in .debug_line_str, a few kilobytes, are spread over it).
_READ_WHOLE = (".debug_abbrev", ".debug_line_str", ".debug_str_offsets")

# Skim only when the wanted ranges cover less than this share (%) of the executable sections: skimming a
# line program costs about 40% of running it (benchmarks/bench_lines.py).
_SKIM_BELOW = 60


# --- ELF sections and relocations -------------------------------------------------------------

class _Targets:
    """Which section holds a sequence's code: its DW_LNE_set_address
    relocation's symbol's (ET_REL), or the executable section whose addresses
    hold its first row (linked objects)."""

    def __init__(self, relocatable: bool, relocated: dict[int, int], code: list[tuple[int, int, str]],
                 layout: dict[int, int]):
        self.relocatable = relocatable
        self.relocated = relocated      # .debug_line offset of a relocated address -> its symbol's section index
        self.code = code                # (address, size, name) of the allocated executable sections
        self.layout = layout            # ET_REL: section index -> its offset in the code (codeobject.code_layout)

    def of(self, operand_at: int | None, address: int) -> tuple[str, int]:
        """(section, its address) for a sequence whose DW_LNE_set_address
        operand is at ``operand_at`` (None: it has none) and first row at
        ``address``.  ET_REL: the address is an offset in the relocation
        symbol's section, placed in the code as kernel_ranges() places the
        kernels (the code section, at minus the section's offset in it)."""
        if self.relocatable:
            section = self.relocated.get(operand_at) if operand_at is not None else None
            place = self.layout.get(section) if section is not None else None
            return (CODE_SECTION, -place) if place is not None else ("", 0)
        for start, size, name in self.code:
            if start <= address < start + size:
                return name, start
        return "", 0


def _sequence_sections(image: ElfImage) -> _Targets:
    code = [(s.addr, s.size, s.name) for s in image.sections if s.flags & SHF_ALLOC and s.flags & SHF_EXECINSTR]
    relocated: dict[int, int] = {}
    relocatable = image.e_type == ET_REL
    if relocatable:
        symbols = image.static_symbols()
        for section in image.sections:
            if section.type == SHT_RELA and section.name == ".rela.debug_line":
                for relocation in image.relocations(section):
                    if relocation.type == R_AMDGPU_ABS64 and relocation.symbol < len(symbols):
                        relocated[relocation.offset] = symbols[relocation.symbol].shndx
    return _Targets(relocatable, relocated, code, code_layout(image) if relocatable else {})


# --- primitive readers ------------------------------------------------------------------------

def _uleb(data: _Data, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _sleb(data: _Data, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return (value - (1 << shift) if byte & 0x40 else value), at


def _cstring(data: _Data, at: int, what: str) -> tuple[str, int]:
    end = data.find(b"\0", at)
    if end < 0:
        raise _Bad(f"{what} runs past the end", at)
    return data[at:end].decode("utf-8", "replace"), end + 1


def _string_at(sections: _Sections, section: str, offset: int, where: int) -> str:
    data = sections.get(section)
    if data is None or offset >= len(data):
        raise _Bad(f"string offset {offset:#x} outside {section} "
                   f"({'absent' if data is None else f'{len(data)} bytes'})", where)
    if isinstance(data, PartlyInflated):
        end = data.string_end(offset)
        if end < 0:
            raise _Bad(f"string at {section}+{offset:#x} runs past the end", offset)
        return data.data[offset:end].decode("utf-8", "replace")
    return _cstring(data, offset, f"string at {section}+{offset:#x}")[0]


# --- .debug_line ------------------------------------------------------------------------------

def _unit_header(data: _Data, start: int) -> tuple[int, int, int, int]:
    """The start of a DWARF unit (of .debug_line or .debug_info) at ``start``:
    its initial length (the 32-bit format, or 0xffffffff and the 64-bit) and
    version -> (version, where the rest of its header begins, where the unit
    ends, offset size: 4 or 8)."""
    (length,) = struct.unpack_from("<I", data, start)
    at = start + 4
    offset_size = 4
    if length == 0xFFFFFFFF:
        (length,) = struct.unpack_from("<Q", data, at)
        at += 8
        offset_size = 8
    elif length >= 0xFFFFFFF0:
        raise _Bad(f"unit length {length:#x} is reserved", start)
    end = at + length
    if end > len(data):
        raise _Bad(f"unit length {length} runs past the section's end ({len(data)} bytes)", start)
    (version,) = struct.unpack_from("<H", data, at)
    return version, at + 2, end, offset_size


def _table(data: bytes | bytearray, start: int, sections: _Sections,
           units: dict[int, tuple[str, str]], targets: _Targets, wanted: list[tuple[str, int, int]] | None,
           inflating: PartlyInflated | None = None) -> tuple[LineTable, int]:
    """The unit at ``start`` and where the next begins.  ``inflating``: ``data``
    is its buffer, inflated as far as the header is read (no sequence wanted)."""
    if inflating is not None:
        inflating.reach(start + 64)       # the header's fixed fields
    version, at, end, offset_size = _unit_header(data, start)
    if not 2 <= version <= 5:
        raise _Bad(f"line table version {version} (2 to 5 are read)", start + offset_size)
    address_size = 8
    if version >= 5:
        address_size, _segment_selector_size = data[at], data[at + 1]
        at += 2
    header_length = int.from_bytes(data[at:at + offset_size], "little")
    at += offset_size
    program = at + header_length
    if program > end:
        raise _Bad(f"header length {header_length} runs past the unit's end", at - offset_size)
    if inflating is not None:
        inflating.reach(program)     # (a header read past it is an error: read again whole)
    min_length = data[at]
    at += 1
    max_ops = 1
    if version >= 4:
        max_ops = data[at]
        at += 1
    default_is_stmt, line_base, line_range, opcode_base = data[at], struct.unpack_from("<b", data, at + 1)[0], \
        data[at + 2], data[at + 3]
    at += 4
    if max_ops != 1:
        raise _Bad(f"maximum_operations_per_instruction {max_ops} (VLIW; AMDGPU has 1)", at - 5)
    if line_range == 0:
        raise _Bad("line_range 0", at - 2)
    if opcode_base == 0:
        raise _Bad("opcode_base 0", at - 1)
    lengths = bytes(data[at:at + opcode_base - 1])
    at += opcode_base - 1
    unit = units.get(start, ("", ""))
    comp_dir = unit[0]
    if version >= 5:
        directory_formats, at = _entry_formats(data, at)
        count, at = _entry_count(data, at, program, directory_formats, "directories")
        directories = []
        for _ in range(count):
            entry, at = _entry(data, at, directory_formats, offset_size, sections)
            directories.append(str(entry.get(_LNCT_PATH, "")))
        file_formats, at = _entry_formats(data, at)
        count, at = _entry_count(data, at, program, file_formats, "file names")
        files: list[SourceFile | None] = []
        line_strings = sections.get(".debug_line_str")
        if file_formats == _LLVM_FILE_FORMATS and offset_size == 4 and isinstance(line_strings, bytes):
            files, at = _llvm_files(data, at, count, directories, line_strings)
        for _ in range(count - len(files)):
            entry, at = _entry(data, at, file_formats, offset_size, sections)
            directory = entry.get(_LNCT_DIRECTORY_INDEX, 0)
            index = directory if isinstance(directory, int) else 0
            files.append(SourceFile(str(entry.get(_LNCT_PATH, "")),
                                    directories[index] if index < len(directories) else "", index))
    else:
        directories = [""]       # DWARF 2-4: directory 0 is the compile unit's comp_dir (file_path() adds it)
        while data[at] != 0:
            name, at = _cstring(data, at, "include directory")
            directories.append(name)
        at += 1
        files = [None]
        while data[at] != 0:
            name, at = _cstring(data, at, "file name")
            directory, at = _uleb(data, at)
            _mtime, at = _uleb(data, at)
            _size, at = _uleb(data, at)
            files.append(SourceFile(name, directories[directory] if directory < len(directories) else "", directory))
        at += 1
    if at > program:
        raise _Bad(f"header runs {at - program} bytes past its header_length", program)

    spans = [(program, end)]
    skipped = 0
    if wanted is not None and not wanted:
        # No range wanted (report --isa of a code object none of whose kernels has scratch accesses
        # or AGPR copies: only the units' directories are needed): no sequence is run or stepped over
        # (stepping over every one was 5.1 of 17.8 CPU-s of report --isa on librocsparse1 7.2.4's
        # gfx90a code objects); the header is read as always.
        spans = []
    elif wanted is not None:
        found = _skim(data, program, end, opcode_base, lengths, targets)
        if found is not None:
            spans = _wanted_spans(found, wanted)
            skipped = len(found) - len(spans)
    rows, sequences, defined = _run(data, spans, version, address_size, min_length, default_is_stmt,
                                    line_base, line_range, opcode_base, lengths, targets)
    for name, directory in defined:
        files.append(SourceFile(name, directories[directory] if directory < len(directories) else "", directory))
    recorded = tuple(directories) if version >= 5 else tuple(directories[1:])
    return LineTable(start, version, comp_dir, unit[1], recorded, tuple(files), rows, tuple(sequences),
                     skipped), end


# The file entries' formats LLVM writes (DWARF 5): the path in .debug_line_str, the directory index, an MD5.
_LNCT_MD5 = 5
_LLVM_FILE_FORMATS = [(_LNCT_PATH, _FORM_LINE_STRP), (_LNCT_DIRECTORY_INDEX, _FORM_UDATA), (_LNCT_MD5, _FORM_DATA16)]
_SOURCE_FILE_FIELDS = ("name", "directory", "directory_index")


def _llvm_files(data: _Data, at: int, count: int, directories: list[str], line_strings: bytes
                ) -> tuple[list[SourceFile | None], int]:
    """The file entries of _LLVM_FILE_FORMATS (32-bit DWARF), as _entry reads
    them, without a dict per entry (a code object of librocsparse1 7.2.4
    names a hundred files, each header read by report --isa), up to the
    first whose path _entry would refuse (the caller reads it, and says why)."""
    files: list[SourceFile | None] = []
    new, fill = object.__new__, _SOURCE_FILE_FIELDS
    limit = len(line_strings)
    for _ in range(count):
        offset = int.from_bytes(data[at:at + 4], "little")
        end = line_strings.find(b"\0", offset) if offset < limit else -1
        if end < 0:
            break
        index = data[at + 4]
        if index < 0x80:
            after = at + 5
        else:
            index, after = _uleb(data, at + 4)
        found = new(SourceFile)          # (the frozen dataclass's fields, without its __setattr__ per field)
        found.__dict__.update(zip(fill, (line_strings[offset:end].decode("utf-8", "replace"),
                                         directories[index] if index < len(directories) else "", index)))
        files.append(found)
        at = after + 16
    return files, at


def _entry_formats(data: _Data, at: int) -> tuple[list[tuple[int, int]], int]:
    count = data[at]
    at += 1
    formats = []
    for _ in range(count):
        content, at = _uleb(data, at)
        form, at = _uleb(data, at)
        formats.append((content, form))
    return formats, at


def _entry_count(data: _Data, at: int, program: int, formats: list[tuple[int, int]], what: str) -> tuple[int, int]:
    """A DWARF 5 entry count, no more than the header's bytes left can hold
    (every entry takes a byte at least: a count past that is corrupt)."""
    count, after = _uleb(data, at)
    if count and (not formats or count > program - after):
        raise _Bad(f"{count} {what} in a header with {max(program - after, 0)} bytes left"
                   f"{'' if formats else ' and no entry format'}", at)
    return count, after


def _entry(data: _Data, at: int, formats: list[tuple[int, int]], offset_size: int,
           sections: _Sections) -> tuple[dict[int, str | int], int]:
    """One directory or file entry of a DWARF 5 header: content type -> value."""
    entry: dict[int, str | int] = {}
    for content, form in formats:
        value: str | int
        if form == _FORM_STRING:
            value, at = _cstring(data, at, "inline string")
        elif form in (_FORM_LINE_STRP, _FORM_STRP):
            offset = int.from_bytes(data[at:at + offset_size], "little")
            value = _string_at(sections, ".debug_line_str" if form == _FORM_LINE_STRP else ".debug_str", offset, at)
            at += offset_size
        elif form == _FORM_UDATA:
            value, at = _uleb(data, at)
        elif form in _FIXED and form not in _STRX and form != _FORM_IMPLICIT_CONST:
            size = _FIXED[form]
            value = int.from_bytes(data[at:at + size], "little")
            at += size
        elif form == _FORM_BLOCK:
            size, at = _uleb(data, at)
            value = 0
            at += size
        else:
            raise _Bad(f"form {form:#x} in a line table header entry", at)
        entry[content] = value
    return entry, at


def _run(data: _Data, spans: list[tuple[int, int]], version: int, address_size: int, min_length: int,
         default_is_stmt: int, line_base: int, line_range: int, opcode_base: int, lengths: bytes, targets: _Targets
         ) -> tuple[LineRows, list[Sequence], list[tuple[str, int]]]:
    """Run the line-number program in each ``data[begin:end]`` span (the
    whole program, or whole sequences), from the initial registers."""
    rows = LineRows(array("Q"), array("I"), array("I"), array("I"), array("B"))
    put_address, put_line, put_column, put_file, put_flags = (rows.address.append, rows.line.append,
                                                              rows.column.append, rows.file.append,
                                                              rows.flags.append)
    sequences: list[Sequence] = []
    defined: list[tuple[str, int]] = []
    # A special opcode's address and line advances, worked out once per opcode.
    step_address = [0] * 256
    step_line = [0] * 256
    for opcode in range(opcode_base, 256):
        adjusted = opcode - opcode_base
        step_address[opcode] = (adjusted // line_range) * min_length
        step_line[opcode] = line_base + adjusted % line_range
    const_add = step_address[255] if opcode_base <= 255 else 0
    stmt = IS_STMT if default_is_stmt else 0
    first = 0
    for at, end in spans:
        address, file, line, column, flags = 0, 1, 1, 0, stmt
        placing: int | None = None      # the DW_LNE_set_address operand before the sequence's first row
        # The opcodes in the order LLVM's tables use them most (set_column, advance_line, negate_stmt,
        # set_file between special opcodes).
        while at < end:
            opcode = data[at]
            at += 1
            if opcode >= opcode_base:
                address += step_address[opcode]
                line += step_line[opcode]
                put_address(address)
                put_line(line)
                put_column(column)
                put_file(file)
                put_flags(flags)
                flags &= IS_STMT
            elif opcode == _SET_COLUMN:
                column = data[at]
                if column < 0x80:
                    at += 1
                else:
                    column, at = _uleb(data, at)
            elif opcode == _ADVANCE_LINE:
                byte = data[at]
                if byte < 0x40:
                    line += byte
                    at += 1
                elif byte < 0x80:
                    line += byte - 0x80
                    at += 1
                else:
                    delta, at = _sleb(data, at)
                    line += delta
            elif opcode == _NEGATE_STMT:
                flags ^= IS_STMT
            elif opcode == _SET_FILE:
                file = data[at]
                if file < 0x80:
                    at += 1
                else:
                    file, at = _uleb(data, at)
            elif opcode == _CONST_ADD_PC:
                address += const_add
            elif opcode == _ADVANCE_PC:
                advance, at = _uleb(data, at)
                address += advance * min_length
            elif opcode == _COPY:
                put_address(address)
                put_line(line)
                put_column(column)
                put_file(file)
                put_flags(flags)
                flags &= IS_STMT
            elif opcode == _SET_PROLOGUE_END:
                flags |= PROLOGUE_END
            elif opcode == _SET_EPILOGUE_BEGIN:
                flags |= EPILOGUE_BEGIN
            elif opcode == _SET_BASIC_BLOCK:
                flags |= BASIC_BLOCK
            elif opcode == _FIXED_ADVANCE_PC:
                address += data[at] | data[at + 1] << 8
                at += 2
            elif opcode == 0:
                size, at = _uleb(data, at)
                if size == 0 or at + size > end:
                    raise _Bad(f"extended opcode of {size} bytes at {at:#x}", at - 1)
                next_at = at + size
                sub = data[at]
                if sub == _END_SEQUENCE:
                    put_address(address)
                    put_line(line)
                    put_column(column)
                    put_file(file)
                    put_flags(flags | END_SEQUENCE)
                    section, base = targets.of(placing, rows.address[first])
                    sequences.append(Sequence(section, base, first, len(rows.address)))
                    first = len(rows.address)
                    address, file, line, column, flags = 0, 1, 1, 0, stmt
                    placing = None
                elif sub == _SET_ADDRESS:
                    width = size - 1
                    if width not in (4, 8) or (version >= 5 and width != address_size):
                        raise _Bad(f"DW_LNE_set_address with a {width}-byte operand", at - 1)
                    address = int.from_bytes(data[at + 1:next_at], "little")
                    if len(rows.address) == first:
                        placing = at + 1
                elif sub == _DEFINE_FILE and version <= 4:
                    name, after = _cstring(data, at + 1, "DW_LNE_define_file name")
                    directory, _after = _uleb(data, after)
                    defined.append((name, directory))
                # DW_LNE_set_discriminator and unknown extended opcodes: skipped by their length
                at = next_at
            else:
                # DW_LNS_set_isa and opcodes this reader does not know: skip their ULEB operands.
                for _ in range(lengths[opcode - 1]):
                    _value, at = _uleb(data, at)
        if at > end:
            raise _Bad("the line-number program runs past its unit's end", end)
        if first < len(rows.address):
            raise _Bad(f"{len(rows.address) - first} row(s) after the last DW_LNE_end_sequence", end)
    return rows, sequences, defined


def _skim(data: _Data, at: int, end: int, opcode_base: int, lengths: bytes, targets: _Targets
          ) -> list[tuple[int, int, str, int]] | None:
    """Each sequence's (program offset, end offset, section, first address
    as an offset in that section), stepping over the opcodes without
    running them; None when something is irregular (the caller runs the
    whole program, which says what).  The runs of opcodes between extended
    ones are stepped over by a regular expression (_opcode_runs: in C, a
    sequence's few extended opcodes in Python); where it stops short of an
    extended opcode, the step-by-step reader takes over (_skim_stepped), so
    the answer is the one stepping gives."""
    runs = _opcode_runs(opcode_base, lengths)
    if runs is None:
        return _skim_stepped(data, at, end, opcode_base, lengths, targets)
    found: list[tuple[int, int, str, int]] = []
    begin = at
    placing: int | None = None
    first_address = 0
    match = runs.match
    try:
        while True:
            run = match(data, at, end)
            at = run.end() if run is not None else at        # (the empty run matches too)
            if at >= end:
                break
            if data[at] != 0:          # an opcode the expression does not take: step from the sequence's start
                return _skim_stepped(data, begin, end, opcode_base, lengths, targets, found)
            at, begin, placing, first_address = _extended(data, at + 1, begin, placing, first_address, targets,
                                                          found)
            if at >= end:
                break
    except IndexError:
        return None
    if at != end or begin != end:
        return None
    return found


def _extended(data: _Data, at: int, begin: int, placing: int | None, first_address: int, targets: _Targets,
              found: list[tuple[int, int, str, int]]) -> tuple[int, int, int | None, int]:
    """An extended opcode (its size at ``at``) as _skim sees it: DW_LNE_end_sequence closes a sequence
    (appended to ``found``), the sequence's first DW_LNE_set_address places it.  The new (at, begin,
    placing, first_address)."""
    size, at = _uleb(data, at)
    sub = data[at]
    if sub == _END_SEQUENCE:
        section, base = targets.of(placing, first_address)
        found.append((begin, at + size, section, first_address - base))
        return at + size, at + size, None, 0
    if sub == _SET_ADDRESS and placing is None and size in (5, 9):
        return at + size, begin, at + 1, int.from_bytes(data[at + 1:at + size], "little")
    return at + size, begin, placing, first_address


_ULEB = rb"[\x80-\xff]*+[\x00-\x7f]"
_RUNS: dict[tuple[int, bytes], re.Pattern[bytes] | None] = {}


def _opcode_runs(opcode_base: int, lengths: bytes) -> re.Pattern[bytes] | None:
    """A pattern matching the longest run of opcodes other than extended ones
    (0) as _skim_stepped steps over them: special opcodes, standard ones with
    their ULEB operands (DW_LNS_fixed_advance_pc: a 2-byte operand).  None
    for a header it does not cover (an opcode_base past 256)."""
    key = (opcode_base, lengths)
    if key in _RUNS:
        return _RUNS[key]
    pattern = None
    if 1 <= opcode_base <= 256 and len(_RUNS) < 64:
        by_count: dict[int, list[int]] = {}
        for opcode in range(1, opcode_base):
            count = lengths[opcode - 1] if opcode - 1 < len(lengths) else 0
            if opcode == _FIXED_ADVANCE_PC:
                count = -1
            by_count.setdefault(count, []).append(opcode)
        bare = by_count.pop(0, []) + list(range(opcode_base, 256))
        choices = []
        if bare:
            choices.append(_byte_class(bare))
        for count, opcodes in sorted(by_count.items()):
            operands = rb"[\s\S]{2}" if count == -1 else b"(?:" + _ULEB + b"){%d}" % count
            choices.append(_byte_class(opcodes) + operands)
        pattern = re.compile(b"(?:" + b"|".join(choices) + b")*+", re.DOTALL)
    if len(_RUNS) < 64:
        _RUNS[key] = pattern
    return pattern


def _byte_class(values: list[int]) -> bytes:
    return b"[" + b"".join(b"\\x%02x" % value for value in values) + b"]"


def _skim_stepped(data: _Data, at: int, end: int, opcode_base: int, lengths: bytes, targets: _Targets,
                  found: list[tuple[int, int, str, int]] | None = None) -> list[tuple[int, int, str, int]] | None:
    """_skim, one opcode at a time in Python, from a sequence's start ``at``
    (``found``: the sequences before it)."""
    operands = [0] * 256
    for opcode in range(1, min(opcode_base, 256)):
        operands[opcode] = lengths[opcode - 1] if opcode - 1 < len(lengths) else 0
    if opcode_base > _FIXED_ADVANCE_PC:
        operands[_FIXED_ADVANCE_PC] = -1
    found = [] if found is None else found
    begin = at
    placing: int | None = None
    first_address = 0
    try:
        while at < end:
            opcode = data[at]
            at += 1
            if opcode >= opcode_base:
                continue
            count = operands[opcode]
            if count == 1:
                while data[at] >= 0x80:
                    at += 1
                at += 1
            elif opcode == 0:
                at, begin, placing, first_address = _extended(data, at, begin, placing, first_address, targets,
                                                              found)
            elif count == -1:
                at += 2
            else:
                for _ in range(count):
                    while data[at] >= 0x80:
                        at += 1
                    at += 1
    except IndexError:
        return None
    if at != end or begin != end:
        return None
    return found


def _wanted_spans(found: list[tuple[int, int, str, int]], wanted: list[tuple[str, int, int]]
                  ) -> list[tuple[int, int]]:
    """The program spans of the sequences that may hold a wanted range (in program order)."""
    starts: dict[str, list[int]] = {}
    for _begin, _end, section, first in found:
        starts.setdefault(section, []).append(first)
    for section in starts:
        starts[section].sort()
    by_section: dict[str, list[tuple[int, int]]] = {}
    for section, low, high in wanted:
        by_section.setdefault(section, []).append((low, high))
    spans = []
    for begin, end, section, first in found:
        following = starts[section]
        after = bisect_right(following, first)
        bound = following[after] if after < len(following) else 1 << 64
        if any(low < bound and first < high for low, high in by_section.get(section, ())):
            spans.append((begin, end))
    return spans


# --- .debug_info: each compile unit's directory and name --------------------------------------

def _compile_units(sections: _Sections) -> dict[int, tuple[str, str]]:
    """DW_AT_stmt_list -> (DW_AT_comp_dir, DW_AT_name) of every compile unit
    (its first DIE's attributes only).  A PartlyInflated .debug_info is
    inflated as far as those are read."""
    found = sections[".debug_info"]
    inflating = found if isinstance(found, PartlyInflated) else None
    info = found.data if isinstance(found, PartlyInflated) else found
    abbrev = sections.get(".debug_abbrev", b"")
    assert not isinstance(abbrev, PartlyInflated)       # (inflated whole by read_lines)
    out: dict[int, tuple[str, str]] = {}
    at = 0
    while at < len(info):
        start = at
        if inflating is not None:
            inflating.reach(start + 64)     # the unit's header and, mostly, its first entry
        version, at, end, offset_size = _unit_header(info, start)
        if version >= 5:
            unit_type, address_size = info[at], info[at + 1]
            at += 2
            abbrev_offset = int.from_bytes(info[at:at + offset_size], "little")
            at += offset_size
            if unit_type in (4, 5):       # DW_UT_skeleton, DW_UT_split_compile: a DWO id
                at += 8
            elif unit_type in (2, 6):     # DW_UT_type, DW_UT_split_type: signature and type offset
                at += 8 + offset_size
        elif version >= 2:
            abbrev_offset = int.from_bytes(info[at:at + offset_size], "little")
            at += offset_size
            address_size = info[at]
            at += 1
        else:
            raise _Bad(f"compile unit version {version}", start + offset_size)
        code, at = _uleb(info, at)
        if code:
            tag, specs = _abbreviation(abbrev, abbrev_offset, code, start)
            if tag in (_TAG_COMPILE_UNIT, _TAG_PARTIAL_UNIT, _TAG_SKELETON_UNIT):
                values, read_to = _attributes(info, at, specs, offset_size, address_size, version, start)
                # Every byte read lies before where the reading stopped: past what is inflated, some were
                # zeros in place of the entry's, so it is read again (inflated that far first).
                while inflating is not None and read_to > inflating.filled and not inflating.done:
                    inflating.reach(read_to)
                    values, read_to = _attributes(info, at, specs, offset_size, address_size, version, start)
                stmt_list = values.get(_AT_STMT_LIST)
                if isinstance(stmt_list, int):
                    base = values.get(_AT_STR_OFFSETS_BASE)
                    strings = (_resolve(values.get(_AT_COMP_DIR), sections, base, offset_size, start),
                               _resolve(values.get(_AT_NAME), sections, base, offset_size, start))
                    out.setdefault(stmt_list, strings)
        at = end
    return out


def _abbreviation(abbrev: _Data, offset: int, wanted: int, unit: int) -> tuple[int, list[tuple[int, int, int]]]:
    """(tag, [(attribute, form, implicit constant)]) of abbreviation ``wanted``."""
    at = offset
    while at < len(abbrev):
        code, at = _uleb(abbrev, at)
        if code == 0:
            break
        tag, at = _uleb(abbrev, at)
        at += 1          # DW_CHILDREN_*
        specs = []
        while True:
            name, at = _uleb(abbrev, at)
            form, at = _uleb(abbrev, at)
            constant = 0
            if form == _FORM_IMPLICIT_CONST:
                constant, at = _sleb(abbrev, at)
            if name == 0 and form == 0:
                break
            specs.append((name, form, constant))
        if code == wanted:
            return tag, specs
    raise _Bad(f"abbreviation {wanted} not in .debug_abbrev at {offset:#x}", unit)


def _attributes(info: bytes | bytearray, at: int, specs: list[tuple[int, int, int]], offset_size: int,
                address_size: int, version: int, unit: int) -> tuple[dict[int, object], int]:
    """The attributes this reader wants: (form, raw value) of strings, the
    value of DW_AT_stmt_list and DW_AT_str_offsets_base; the others skipped.
    And where the entry ends."""
    values: dict[int, object] = {}
    for name, form, constant in specs:
        while form == _FORM_INDIRECT:
            form, at = _uleb(info, at)
        value: object = None
        if form == _FORM_STRING:
            end = info.find(b"\0", at)
            if end < 0:
                raise _Bad("string attribute runs past the end", at)
            value = (form, info[at:end].decode("utf-8", "replace"))
            at = end + 1
        elif form in _OFFSET_SIZED:
            number = int.from_bytes(info[at:at + offset_size], "little")
            value = (form, number) if form in (_FORM_STRP, _FORM_LINE_STRP) else number
            at += offset_size
        elif form == _FORM_ADDR:
            at += address_size
        elif form in _STRX:
            size = _STRX[form]
            if size:
                number = int.from_bytes(info[at:at + size], "little")
                at += size
            else:
                number, at = _uleb(info, at)
            value = (form, number)
        elif form in _FIXED:
            size = _FIXED[form]
            value = int.from_bytes(info[at:at + size], "little") if size else constant
            at += size
        elif form in _LEB:
            value, at = _uleb(info, at) if form != _FORM_SDATA else _sleb(info, at)
        elif form in (_FORM_BLOCK, _FORM_EXPRLOC):
            size, at = _uleb(info, at)
            at += size
        elif form in (_FORM_BLOCK1, _FORM_BLOCK2, _FORM_BLOCK4):
            width = {_FORM_BLOCK1: 1, _FORM_BLOCK2: 2, _FORM_BLOCK4: 4}[form]
            at += width + int.from_bytes(info[at:at + width], "little")
        else:
            raise _Bad(f"attribute form {form:#x} in the compile unit at {unit:#x}", at)
        if name == _AT_STMT_LIST and version <= 3 and isinstance(value, int):
            values[name] = value            # DWARF 2/3: data4/data8
        elif value is not None:
            values[name] = value
        if at > len(info):
            raise _Bad("attributes run past the end", unit)
    return values, at


def _resolve(value: object, sections: _Sections, base: object, offset_size: int,
             unit: int) -> str:
    """A string attribute's text ("" when absent)."""
    if not isinstance(value, tuple):
        return ""
    form, raw = value
    if form == _FORM_STRING:
        return str(raw)
    if form == _FORM_STRP:
        return _string_at(sections, ".debug_str", raw, unit)
    if form == _FORM_LINE_STRP:
        return _string_at(sections, ".debug_line_str", raw, unit)
    offsets = sections.get(".debug_str_offsets")
    start = base if isinstance(base, int) else 8     # DWARF 5: past the contribution's header
    at = start + raw * offset_size
    if offsets is None or at + offset_size > len(offsets):
        raise _Bad(f"string index {raw} outside .debug_str_offsets", unit)
    if isinstance(offsets, PartlyInflated):
        offsets.reach(at + offset_size)
        return _string_at(sections, ".debug_str", int.from_bytes(offsets.data[at:at + offset_size], "little"), unit)
    return _string_at(sections, ".debug_str", int.from_bytes(offsets[at:at + offset_size], "little"), unit)
