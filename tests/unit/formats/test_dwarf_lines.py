"""formats.dwarf_lines on hand-assembled line programs in small synthetic
ELF files: each opcode's effect on the registers (DWARF 5 section 6.2.5),
DWARF 2, 3, 4 and 5 headers, 64-bit DWARF, the compile unit's directory,
relocatable objects' RELA relocations, skimming, and bad input (one
InputError naming the section and the byte offset, never a traceback).
The real-compiler oracle is tests/oracle/test_source_lines_oracle.py."""

from __future__ import annotations

import struct

import pytest

from spillway.errors import InputError
from spillway.formats.dwarf_lines import (BASIC_BLOCK, END_SEQUENCE, EPILOGUE_BEGIN, IS_STMT, PROLOGUE_END,
                                          line_table_image, read_lines)

TEXT_ADDRESS = 0x1000
TEXT_SIZE = 0x400
S, E = IS_STMT, END_SEQUENCE


# --- building blocks --------------------------------------------------------------------------

def uleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def sleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        done = (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)


OPCODE_BASE, LINE_BASE, LINE_RANGE, MIN_LENGTH = 13, -5, 14, 4
STANDARD_LENGTHS = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])


def special(address_advance: int, line_advance: int) -> bytes:
    """The special opcode advancing the address by ``address_advance``
    instructions (x MIN_LENGTH bytes) and the line by ``line_advance``."""
    opcode = (line_advance - LINE_BASE) + LINE_RANGE * address_advance + OPCODE_BASE
    assert OPCODE_BASE <= opcode <= 255 and LINE_BASE <= line_advance < LINE_BASE + LINE_RANGE
    return bytes([opcode])


def set_address(address: int, width: int = 8) -> bytes:
    return b"\0" + uleb(1 + width) + b"\x02" + address.to_bytes(width, "little")


END = b"\0\x01\x01"
COPY, NEGATE_STMT, BASIC, CONST_ADD_PC, PROLOGUE, EPILOGUE = b"\x01", b"\x06", b"\x07", b"\x08", b"\x0a", b"\x0b"


def advance_pc(n: int) -> bytes:
    return b"\x02" + uleb(n)


def advance_line(n: int) -> bytes:
    return b"\x03" + sleb(n)


def set_file(n: int) -> bytes:
    return b"\x04" + uleb(n)


def set_column(n: int) -> bytes:
    return b"\x05" + uleb(n)


def fixed_advance_pc(n: int) -> bytes:
    return b"\x09" + struct.pack("<H", n)


def unit(version: int, after_header_length: bytes, program: bytes, *, address_size: int = 8,
         dwarf64: bool = False) -> bytes:
    """A whole unit: length, version, (v5: address and selector sizes), header_length, header, program."""
    offset_size = 8 if dwarf64 else 4
    middle = struct.pack("<H", version)
    if version >= 5:
        middle += bytes([address_size, 0])
    middle += len(after_header_length).to_bytes(offset_size, "little") + after_header_length + program
    if dwarf64:
        return b"\xff\xff\xff\xff" + struct.pack("<Q", len(middle)) + middle
    return struct.pack("<I", len(middle)) + middle


def common(version: int, opcode_base: int = OPCODE_BASE, lengths: bytes = STANDARD_LENGTHS,
           line_range: int = LINE_RANGE, max_ops: int = 1, default_is_stmt: int = 1) -> bytes:
    out = bytes([MIN_LENGTH])
    if version >= 4:
        out += bytes([max_ops])
    return out + bytes([default_is_stmt]) + struct.pack("<bBB", LINE_BASE, line_range, opcode_base) + lengths


def header_v4(directories: list[str], files: list[tuple[str, int]], version: int = 4, **options) -> bytes:
    out = common(version, **options)
    for directory in directories:
        out += directory.encode() + b"\0"
    out += b"\0"
    for name, directory in files:
        out += name.encode() + b"\0" + uleb(directory) + uleb(0) + uleb(0)
    return out + b"\0"


DW_LNCT_PATH, DW_LNCT_DIRECTORY_INDEX, DW_LNCT_MD5 = 1, 2, 5
DW_FORM_STRING, DW_FORM_LINE_STRP, DW_FORM_UDATA, DW_FORM_DATA16, DW_FORM_STRX1 = 0x08, 0x1f, 0x0f, 0x1e, 0x25


def header_v5(directories: list[str], files: list[tuple[str, int]], line_strings: bytearray | None = None,
              **options) -> bytes:
    """DWARF 5 entries: paths inline (DW_FORM_string), or offsets into
    ``line_strings`` (DW_FORM_line_strp, appended to it), an MD5 per file."""
    form = DW_FORM_STRING if line_strings is None else DW_FORM_LINE_STRP

    def path(text: str) -> bytes:
        if line_strings is None:
            return text.encode() + b"\0"
        offset = len(line_strings)
        line_strings.extend(text.encode() + b"\0")
        return struct.pack("<I", offset)

    out = common(5, **options)
    out += bytes([1]) + uleb(DW_LNCT_PATH) + uleb(form) + uleb(len(directories))
    out += b"".join(path(d) for d in directories)
    out += bytes([3]) + uleb(DW_LNCT_PATH) + uleb(form) + uleb(DW_LNCT_DIRECTORY_INDEX) + uleb(DW_FORM_UDATA) \
        + uleb(DW_LNCT_MD5) + uleb(DW_FORM_DATA16) + uleb(len(files))
    out += b"".join(path(name) + uleb(directory) + bytes(range(16)) for name, directory in files)
    return out


def compile_unit(version: int, comp_dir: str, name: str, stmt_list: int = 0) -> tuple[bytes, bytes]:
    """(.debug_info, .debug_abbrev) of one compile unit with DW_AT_name,
    DW_AT_stmt_list (sec_offset) and DW_AT_comp_dir as inline strings."""
    abbrev = uleb(1) + uleb(0x11) + b"\x00" + uleb(0x03) + uleb(0x08) + uleb(0x10) + uleb(0x17) \
        + uleb(0x1b) + uleb(0x08) + uleb(0x13) + uleb(0x0b) + b"\0\0" + b"\0"   # ...DW_AT_language data1
    die = uleb(1) + name.encode() + b"\0" + struct.pack("<I", stmt_list) + comp_dir.encode() + b"\0" + b"\x21" + b"\0"
    if version >= 5:
        head = struct.pack("<HBBI", version, 1, 8, 0)           # DW_UT_compile, address size, abbrev offset
    else:
        head = struct.pack("<HIB", version, 0, 8)
    body = head + die
    return struct.pack("<I", len(body)) + body, abbrev


# --- a synthetic ELF --------------------------------------------------------------------------

def elf(debug: dict[str, bytes], *, e_type: int = 3, relocations: list[tuple[int, int, int, int]] = (),
        symbols: list[tuple[str, int, int, int]] = (), compressed: frozenset[str] = frozenset()) -> bytes:
    """An AMDGPU ELF with .text and the given debug sections; ET_REL
    (e_type 1) ones get .symtab (a section symbol for .text first, then
    ``symbols`` (name, value, section index, type)) and .rela.debug_line
    (``relocations``: offset, type, symbol index, addend)."""
    names = [".text", *debug]
    # name, type, flags, addr, data, link, info, entsize
    contents: list[tuple[str, int, int, int, bytes, int, int, int]] = []
    contents.append((".text", 1, 0x6, TEXT_ADDRESS if e_type == 3 else 0, bytes(TEXT_SIZE), 0, 0, 0))
    for name, data in debug.items():
        contents.append((name, 1, SHF_COMPRESSED if name in compressed else 0, 0, data, 0, 0, 0))
    if e_type == 1:
        strtab = b"\0"
        entries = [bytes(24), struct.pack("<IBBHQQ", 0, 3, 0, 1, 0, 0)]      # null, STT_SECTION .text
        for name, value, shndx, kind in symbols:
            entries.append(struct.pack("<IBBHQQ", len(strtab), kind, 0, shndx, value, 0))
            strtab += name.encode() + b"\0"
        symtab_index = len(contents) + 1
        contents.append((".symtab", 2, 0, 0, b"".join(entries), symtab_index + 1, 2, 24))
        contents.append((".strtab", 3, 0, 0, strtab, 0, 0, 0))
        line_index = 1 + names.index(".debug_line")
        rela = b"".join(struct.pack("<QQq", offset, symbol << 32 | kind, addend)
                        for offset, kind, symbol, addend in relocations)
        contents.append((".rela.debug_line", 4, 0, 0, rela, symtab_index, line_index, 24))
    shstrtab = b"\0"
    name_at = []
    for entry in contents:
        name_at.append(len(shstrtab))
        shstrtab += entry[0].encode() + b"\0"
    name_at.append(len(shstrtab))
    shstrtab += b".shstrtab\0"
    body = bytearray(64)
    placed = []
    for entry in contents:
        placed.append(len(body))
        body += entry[4]
    shstr_at = len(body)
    body += shstrtab
    while len(body) % 8:
        body += b"\0"
    shoff = len(body)
    body += bytes(64)                                                # the null section
    for (name, kind, flags, addr, data, link, info, entsize), at, offset in zip(contents, name_at, placed):
        body += struct.pack("<IIQQQQIIQQ", at, kind, flags, addr, offset, len(data), link, info, 1, entsize)
    body += struct.pack("<IIQQQQIIQQ", name_at[-1], 3, 0, 0, shstr_at, len(shstrtab), 0, 0, 1, 0)
    count = len(contents) + 2
    header = b"\x7fELF" + bytes([2, 1, 1, 64, 3]) + bytes(7)
    header += struct.pack("<HHIQQQIHHHHHH", e_type, 224, 1, 0, 0, shoff, 0x4e, 64, 56, 0, 64, count, count - 1)
    body[:64] = header
    return bytes(body)


SHF_COMPRESSED = 0x800


def compress(data: bytes, kind: str, declared: int | None = None, ch_type: int | None = None) -> bytes:
    """A SHF_COMPRESSED section's bytes, as llvm-objcopy --compress-debug-sections writes them: an
    Elf64_Chdr (type, reserved, size, alignment), then the stream."""
    import zlib

    import zstandard

    stream = zlib.compress(data) if kind == "zlib" else zstandard.ZstdCompressor().compress(data)
    code = ch_type if ch_type is not None else {"zlib": 1, "zstd": 2}[kind]
    return struct.pack("<IIQQ", code, 0, len(data) if declared is None else declared, 1) + stream


def rows_of(data: bytes, **options) -> list[tuple[int, int, int, int, int]]:
    return [row for table in read_lines(data, **options)
            for row in zip(table.rows.address, table.rows.line, table.rows.column, table.rows.file, table.rows.flags)]


def program_elf(program: bytes, version: int = 5, **options) -> bytes:
    header = header_v5(["/build"], [("k.cpp", 0)]) if version >= 5 else header_v4([], [("k.cpp", 0)], version)
    return elf({".debug_line": unit(version, header, program, **options)})


# --- the opcodes ------------------------------------------------------------------------------

def test_special_opcodes_advance_address_and_line_and_emit_a_row():
    program = set_address(TEXT_ADDRESS) + PROLOGUE + special(0, 8) + special(2, 1) + special(3, -5) + special(0, 0) \
        + END
    assert rows_of(program_elf(program)) == [(0x1000, 9, 0, 1, S | PROLOGUE_END), (0x1008, 10, 0, 1, S),
                                             (0x1014, 5, 0, 1, S), (0x1014, 5, 0, 1, S), (0x1014, 5, 0, 1, S | E)]


def test_standard_opcodes():
    program = (set_address(TEXT_ADDRESS) + advance_line(41) + set_column(7) + COPY          # row at 0x1000 line 42
               + advance_pc(3) + advance_line(-40) + set_column(300) + set_file(2) + COPY    # 0x100c line 2, col 300
               + CONST_ADD_PC + NEGATE_STMT + PROLOGUE + COPY                                 # const_add_pc: 17 x 4
               + fixed_advance_pc(6) + EPILOGUE + BASIC + COPY + COPY                         # flags only on the first
               + advance_pc(1) + END)
    const_add = ((255 - OPCODE_BASE) // LINE_RANGE) * MIN_LENGTH
    assert rows_of(program_elf(program)) == [
        (0x1000, 42, 7, 1, S), (0x100c, 2, 300, 2, S), (0x100c + const_add, 2, 300, 2, PROLOGUE_END),
        (0x100c + const_add + 6, 2, 300, 2, EPILOGUE_BEGIN | BASIC_BLOCK), (0x100c + const_add + 6, 2, 300, 2, 0),
        (0x100c + const_add + 10, 2, 300, 2, E)]


def test_end_sequence_resets_the_registers_and_each_sequence_is_placed():
    program = (set_address(TEXT_ADDRESS) + advance_line(9) + set_column(3) + set_file(2) + NEGATE_STMT + COPY
               + advance_pc(4) + END
               + set_address(TEXT_ADDRESS + 0x100) + COPY + advance_pc(1) + END)
    data = program_elf(program)
    assert rows_of(data) == [(0x1000, 10, 3, 2, 0), (0x1010, 10, 3, 2, E),
                             (0x1100, 1, 0, 1, S), (0x1104, 1, 0, 1, S | E)]
    table = read_lines(data)[0]
    assert [(s.section, s.base, s.first, s.stop) for s in table.sequences] == [
        (".text", TEXT_ADDRESS, 0, 2), (".text", TEXT_ADDRESS, 2, 4)]


def test_an_address_outside_every_executable_section_is_in_none():
    data = program_elf(set_address(0x9000) + COPY + advance_pc(1) + END)
    assert read_lines(data)[0].sequences[0].section == ""


def test_unknown_standard_and_extended_opcodes_are_stepped_over():
    # opcode_base 14: opcode 13 is a standard opcode this reader does not know, with 2 operands;
    # DW_LNE_set_discriminator and an unknown extended opcode are skipped by their length.
    lengths = STANDARD_LENGTHS + bytes([2])
    header = header_v5(["/b"], [("k.cpp", 0)], opcode_base=14, lengths=lengths)
    program = (set_address(TEXT_ADDRESS) + b"\x0d" + uleb(300) + uleb(5) + b"\0\x02\x04\x07"
               + b"\0\x04\x80\x01\x02\x03" + bytes([14 + 5]) + END)    # special: line + 0 (14 + (0 - -5))
    assert rows_of(elf({".debug_line": unit(5, header, program)})) == [(0x1000, 1, 0, 1, S), (0x1000, 1, 0, 1, S | E)]


def test_a_multi_byte_uleb_and_sleb():
    program = set_address(TEXT_ADDRESS) + advance_line(100000) + set_column(2 ** 20) + COPY + advance_line(-99999) \
        + advance_pc(0x4000) + COPY + END
    assert rows_of(program_elf(program)) == [(0x1000, 100001, 2 ** 20, 1, S), (0x1000 + 0x10000, 2, 2 ** 20, 1, S),
                                             (0x1000 + 0x10000, 2, 2 ** 20, 1, S | E)]


# --- headers ----------------------------------------------------------------------------------

def test_dwarf5_files_and_directories_by_line_strp_with_the_unit_directory():
    strings = bytearray()
    header = header_v5(["/work/build", "include", "/opt/rocm/include"],
                       [("k.cpp", 0), ("ops.h", 1), ("hip.h", 2), ("/abs/x.h", 1)], strings)
    info, abbrev = compile_unit(5, "/work/build", "k.cpp")
    data = elf({".debug_line": unit(5, header, set_address(TEXT_ADDRESS) + COPY + END),
                ".debug_line_str": bytes(strings), ".debug_info": info, ".debug_abbrev": abbrev})
    table = read_lines(data)[0]
    assert (table.version, table.comp_dir, table.unit_name) == (5, "/work/build", "k.cpp")
    assert table.directories == ("/work/build", "include", "/opt/rocm/include")
    assert [f.name for f in table.files if f] == ["k.cpp", "ops.h", "hip.h", "/abs/x.h"]
    assert [table.file_path(i) for i in range(5)] == [
        "/work/build/k.cpp", "/work/build/include/ops.h", "/opt/rocm/include/hip.h", "/abs/x.h", ""]


@pytest.mark.parametrize("damage", [None, "outside", "unterminated"])
def test_llvm_file_entries_read_as_the_general_reader_reads_them(monkeypatch, damage):
    """The file entries LLVM writes (line_strp path, udata directory, MD5) are read by a loop of their own
    (formats.dwarf_lines._llvm_files): the same files (a directory index of two ULEB bytes too), and the
    same error where a path is refused, as the reader of any entry format gives."""
    from spillway.formats import dwarf_lines

    strings = bytearray()
    directories = ["/work/build"] + [f"d{n}" for n in range(140)]
    header = bytearray(header_v5(directories, [("k.cpp", 0), ("a.h", 139), ("b.h", 3)], strings))
    if damage == "outside":            # the second file's path at an offset past .debug_line_str
        at = header.index(struct.pack("<I", strings.index(b"a.h\0")))
        header[at:at + 4] = struct.pack("<I", len(strings) + 5)
    if damage == "unterminated":       # the last string of .debug_line_str runs to its end
        strings = strings[:-1]
    line = unit(5, bytes(header), set_address(TEXT_ADDRESS) + COPY + END)
    data = elf({".debug_line": line, ".debug_line_str": bytes(strings)})

    def read() -> object:
        try:
            return [(t.files, t.directories) for t in read_lines(data)]
        except InputError as exc:
            return str(exc)

    own = read()
    monkeypatch.setattr(dwarf_lines, "_LLVM_FILE_FORMATS", [])      # every entry by the general reader
    assert own == read()
    if damage is None:
        assert [(f.name, f.directory, f.directory_index) for f in own[0][0]] == [
            ("k.cpp", "/work/build", 0), ("a.h", "d138", 139), ("b.h", "d2", 3)]
    else:
        assert isinstance(own, str) and ".debug_line" in own


@pytest.mark.parametrize("version", [2, 3, 4])
def test_dwarf2_to_4_files_are_numbered_from_1_and_directory_0_is_comp_dir(version):
    header = header_v4(["include", "/opt/inc"], [("k.cpp", 0), ("ops.h", 1), ("a.h", 2)], version)
    program = set_address(TEXT_ADDRESS) + set_file(3) + COPY + END
    info, abbrev = compile_unit(version, "/work/build", "k.cpp")
    data = elf({".debug_line": unit(version, header, program), ".debug_info": info, ".debug_abbrev": abbrev})
    table = read_lines(data)[0]
    assert table.version == version and table.directories == ("include", "/opt/inc")
    assert table.files[0] is None
    assert [table.file_path(i) for i in range(4)] == ["", "/work/build/k.cpp", "/work/build/include/ops.h",
                                                      "/opt/inc/a.h"]
    assert rows_of(data)[0] == (0x1000, 1, 0, 3, S)


def test_without_debug_info_paths_stay_as_recorded():
    header = header_v4(["include"], [("k.cpp", 0), ("ops.h", 1)])
    table = read_lines(elf({".debug_line": unit(4, header, set_address(TEXT_ADDRESS) + COPY + END)}))[0]
    assert table.comp_dir == "" and [table.file_path(i) for i in (1, 2)] == ["k.cpp", "include/ops.h"]


def test_define_file_adds_a_file():
    header = header_v4([], [("k.cpp", 0)])
    program = set_address(TEXT_ADDRESS) + b"\0" + uleb(1 + 6 + 3) + b"\x03" + b"new.h\0" + b"\0\0\0" + set_file(2) \
        + COPY + END
    table = read_lines(elf({".debug_line": unit(4, header, program)}))[0]
    assert [f.name for f in table.files if f] == ["k.cpp", "new.h"] and table.rows.file[0] == 2


def test_dwarf64_and_a_4_byte_address():
    header = header_v4([], [("k.cpp", 0)])
    data = elf({".debug_line": unit(4, header, set_address(TEXT_ADDRESS, 4) + COPY + END, dwarf64=True)})
    assert rows_of(data) == [(0x1000, 1, 0, 1, S), (0x1000, 1, 0, 1, S | E)]


def test_several_units_and_default_is_stmt_false():
    first = unit(5, header_v5(["/a"], [("a.cpp", 0)]), set_address(TEXT_ADDRESS) + COPY + END)
    second = unit(5, header_v5(["/b"], [("b.cpp", 0)], default_is_stmt=0), set_address(TEXT_ADDRESS + 4) + COPY + END)
    tables = read_lines(elf({".debug_line": first + second}))
    assert [t.offset for t in tables] == [0, len(first)]
    assert [t.file_path(0) for t in tables] == ["/a/a.cpp", "/b/b.cpp"]
    assert tables[1].rows.flags[0] == 0


@pytest.mark.parametrize("kind", ["zlib", "zstd"])
def test_compressed_sections_read_as_the_plain_ones(kind):
    """SHF_COMPRESSED debug sections (Debian's ROCm 6.4 libraries: zlib) inflate to the same tables."""
    program = set_address(TEXT_ADDRESS) + special(0, 1) + advance_pc(4) + b"\x00\x01\x01"
    header = header_v5(["/build"], [("k.cpp", 0)])
    line = unit(5, header, program)
    info, abbrev = compile_unit(5, "/build", "k.cpp")
    plain = elf({".debug_line": line, ".debug_info": info, ".debug_abbrev": abbrev})
    packed = elf({".debug_line": compress(line, kind), ".debug_info": compress(info, kind),
                  ".debug_abbrev": abbrev}, compressed=frozenset({".debug_line", ".debug_info"}))
    assert rows_of(packed) == rows_of(plain) and rows_of(plain)
    assert [t.comp_dir for t in read_lines(packed)] == [t.comp_dir for t in read_lines(plain)] == ["/build"]


@pytest.mark.parametrize("section, message", [
    (compress(b"x" * 100, "zlib", declared=99), "zlib stream inflates past 99 bytes"),
    (compress(b"x" * 100, "zstd", declared=101), "inflates to 100 bytes, its header says 101"),
    (compress(b"x" * 100, "zlib", ch_type=3), "compression type 3 not supported"),
    (compress(b"x" * 100, "zlib")[:24] + b"not zlib", "zlib stream is corrupt"),
    (compress(b"x" * 100, "zstd")[:24] + b"not zstd", "zstd frame header is corrupt"),
    (compress(b"x" * 100, "zlib", declared=1 << 40), "declares 1099511627776 bytes"),
    (compress(b"x" * 100, "zlib", declared=2_000_000), "1024 times the compressed size"),
    (b"\x01\0\0\0", "has no compression header"),
], ids=["size-lie-more", "size-lie-less", "unknown-type", "not-zlib", "not-zstd", "huge", "ratio", "short"])
def test_a_bad_compressed_section_is_a_one_line_error(section, message):
    data = elf({".debug_line": section}, compressed=frozenset({".debug_line"}))
    with pytest.raises(InputError) as caught:
        read_lines(data)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert ".debug_line" in str(caught.value)             # the section is named


def _large_compressed(*, line_tail: bytes = b""):
    """(whole, compressed) ELFs of one DWARF 5 table whose sections are read in part: a compile unit
    whose comp_dir runs past the first inflation step, then 200 kB of its other entries, and a
    line program of 5,000 sequences.  ``line_tail``: bytes that replace the compressed .debug_line's
    last ones (a stream corrupt past the header)."""
    import zlib

    comp_dir = "/build/" + "d" * 6000
    info, abbrev = compile_unit(5, comp_dir, "k.cpp")
    body = info[4:] + bytes(200_000)       # the unit's other entries (never read)
    info = struct.pack("<I", len(body)) + body
    strings = bytearray()
    header = header_v5(["/build"], [("k.cpp", 0), ("k.h", 0)], strings)
    program = (set_address(TEXT_ADDRESS) + special(0, 1) + advance_pc(4) + END) * 5000
    line = unit(5, header, program)
    plain = elf({".debug_line": line, ".debug_info": info, ".debug_abbrev": abbrev,
                 ".debug_line_str": bytes(strings)})
    packed_line = zlib.compress(line)
    packed_line = packed_line[:len(packed_line) - len(line_tail)] + line_tail
    packed = elf({".debug_line": struct.pack("<IIQQ", 1, 0, len(line), 1) + packed_line,
                  ".debug_info": compress(info, "zlib"), ".debug_abbrev": abbrev,
                  ".debug_line_str": compress(bytes(strings), "zlib")},
                 compressed=frozenset({".debug_line", ".debug_info", ".debug_line_str"}))
    return plain, packed, comp_dir


def test_compressed_sections_are_inflated_as_far_as_they_are_read(monkeypatch):
    """With no sequence wanted, .debug_line is inflated as far as its headers, .debug_info as far as its
    compile units' first entries (here read again past the first step): the same tables, headers and
    directories as a whole reading's."""
    from spillway.formats import elf as elf_module

    plain, packed, comp_dir = _large_compressed()
    sections = []
    contents_on_demand = elf_module.ElfImage.contents_on_demand

    def spied(self, names):
        found = contents_on_demand(self, names)
        sections.append(found)
        return found

    monkeypatch.setattr(elf_module.ElfImage, "contents_on_demand", spied)
    monkeypatch.setattr(elf_module.ElfImage, "contents", None)      # (no whole reading behind the answer)
    tables = read_lines(packed, [])
    (expected,) = read_lines(plain, [])
    assert [(t.offset, t.comp_dir, t.unit_name, t.directories, t.files, len(t.rows)) for t in tables] == \
        [(0, comp_dir, "k.cpp", expected.directories, expected.files, 0)]
    assert tables[0].file_path(1) == "/build/k.h"
    inflated = {name: (found.filled, len(found)) for name, found in sections[0].items()
                if isinstance(found, elf_module.PartlyInflated)}
    assert inflated[".debug_line"][0] < inflated[".debug_line"][1] // 4
    assert 6000 < inflated[".debug_info"][0] < inflated[".debug_info"][1] // 4


def test_a_partly_inflated_reading_sees_no_corruption_past_what_it_reads(monkeypatch):
    """A .debug_line stream corrupt past the headers: no sequence wanted, the headers are read; the
    sequences wanted (or all of them), the error a whole reading gives."""
    plain, packed, _ = _large_compressed(line_tail=b"\xff" * 16)
    assert [t.comp_dir for t in read_lines(packed, [])] == [t.comp_dir for t in read_lines(plain, [])]
    for wanted in (None, [(".text", 0, 4)]):
        with pytest.raises(InputError, match=r"\.debug_line \(zlib\): zlib stream is (corrupt|truncated)"):
            read_lines(packed, wanted)


def test_no_debug_line_no_tables():
    assert read_lines(elf({})) == ()
    assert line_table_image(elf({})) is None and line_table_image(b"not an ELF") is None


def test_the_image_of_a_code_object_with_a_line_table_reads_its_tables():
    """line_table_image: the ElfImage read_lines takes (the sections read once by report --isa)."""
    program = set_address(TEXT_ADDRESS) + special(0, 1) + advance_pc(4) + END
    data = elf({".debug_line": unit(5, header_v5(["/build"], [("k.cpp", 0)]), program)})
    image = line_table_image(data)
    assert image is not None and image.section(".debug_line") is not None
    assert read_lines(data, image=image) == read_lines(data) and rows_of(data)


# --- relocatable objects ----------------------------------------------------------------------

def test_relocatable_object_addresses_and_strings_come_from_the_relocations():
    strings = bytearray(b"/wrong\0")                               # what offset 0 in place would name
    header = header_v5(["/work/build"], [("k.cpp", 0)], strings)
    program = set_address(0) + COPY + advance_pc(1) + END + set_address(0) + COPY + advance_pc(2) + END
    line = unit(5, header, program)
    strp = [line.index(struct.pack("<I", 7)), line.index(struct.pack("<I", 7 + len("/work/build") + 1))]
    addresses = [line.index(b"\0\x09\x02") + 3, line.rindex(b"\0\x09\x02") + 3]
    zeroed = bytearray(line)
    for at in strp:
        zeroed[at:at + 4] = bytes(4)
    for at in addresses:
        zeroed[at:at + 8] = bytes(8)
    # symbols: 1 = .text's section symbol; 2 = a function at .text+0x40; 3 = .debug_line_str's section symbol
    relocations = [(strp[0], 6, 3, 7), (strp[1], 6, 3, 7 + len("/work/build") + 1),
                   (addresses[0], 3, 1, 0x10), (addresses[1], 3, 2, 0)]
    data = elf({".debug_line": bytes(zeroed), ".debug_line_str": bytes(strings)}, e_type=1,
               relocations=relocations, symbols=[("f", 0x40, 1, 2), (".debug_line_str", 0, 3, 3)])
    table = read_lines(data)[0]
    assert table.file_path(0) == "/work/build/k.cpp"
    assert rows_of(data) == [(0x10, 1, 0, 1, S), (0x14, 1, 0, 1, S | E), (0x40, 1, 0, 1, S), (0x48, 1, 0, 1, S | E)]
    assert [(s.section, s.base) for s in table.sequences] == [(".text", 0), (".text", 0)]


def test_an_unsupported_relocation_is_a_one_line_error():
    line = unit(5, header_v5(["/b"], [("k.cpp", 0)]), set_address(0) + COPY + END)
    data = elf({".debug_line": line}, e_type=1, relocations=[(line.index(b"\0\x09\x02") + 3, 10, 1, 0)])
    with pytest.raises(InputError, match="relocation type 10 not supported"):
        read_lines(data)


# --- skimming ---------------------------------------------------------------------------------

def _three_sequences() -> bytes:
    program = b"".join(set_address(TEXT_ADDRESS + start) + advance_line(line) + COPY + advance_pc(8) + COPY
                       + advance_pc(8) + END for start, line in ((0x0, 10), (0x100, 20), (0x80, 30)))
    return program_elf(program)


def test_skimming_keeps_only_the_sequences_that_may_hold_a_wanted_range():
    data = _three_sequences()
    full = read_lines(data)[0]
    wanted = read_lines(data, [(".text", 0x90, 0x94)])[0]     # in [0x80, 0x100): the third sequence
    assert (len(full.sequences), full.skipped, len(wanted.sequences), wanted.skipped) == (3, 0, 1, 2)
    assert list(wanted.rows.line) == [31, 31, 31] and list(wanted.rows.address) == list(full.rows.address)[6:]
    # A range in the gap after a sequence's last row still reaches it (the bound is the next start).
    assert read_lines(data, [(".text", 0x60, 0x64)])[0].rows.line[0] == 11
    assert read_lines(data, [(".data", 0x0, 0x4)])[0].sequences == ()


def test_wanted_ranges_covering_much_of_the_code_run_everything():
    data = _three_sequences()
    table = read_lines(data, [(".text", 0, TEXT_SIZE // 2)])[0]
    assert table.skipped == 0 and len(table.sequences) == 3


# --- bad input --------------------------------------------------------------------------------

def _bad(line: bytes, **debug: bytes) -> str:
    data = elf({".debug_line": line, **debug})
    with pytest.raises(InputError) as caught:
        read_lines(data)
    text = str(caught.value)
    assert "\n" not in text and "code object at offset 0x" in text, text
    line_at = data.index(line)
    return text.replace(f"{caught.value.offset:#x}", f"+{caught.value.offset - line_at:#x}")


V5 = header_v5(["/b"], [("k.cpp", 0)])
GOOD = set_address(TEXT_ADDRESS) + COPY + END


@pytest.mark.parametrize("line, message", [
    (unit(5, V5, GOOD)[:-2], "at offset +0x0: .debug_line: unit length 79 runs past the section's end (81 bytes)"),
    (b"\xf0\xff\xff\xff" + bytes(8), "at offset +0x0: .debug_line: unit length 0xfffffff0 is reserved"),
    (unit(6, V5, GOOD), "at offset +0x4: .debug_line: line table version 6 (2 to 5 are read)"),
    (unit(1, V5, GOOD), "at offset +0x4: .debug_line: line table version 1"),
    (unit(5, header_v5(["/b"], [("k.cpp", 0)], line_range=0), GOOD), ".debug_line: line_range 0"),
    (unit(5, header_v5(["/b"], [("k.cpp", 0)], max_ops=4), GOOD), "maximum_operations_per_instruction 4"),
    (unit(5, V5[:-3], b""), "at offset +0x41: .debug_line: header runs 3 bytes past its header_length"),
    (unit(5, V5, set_address(TEXT_ADDRESS) + COPY), "at offset +0x50: .debug_line: 1 row(s) after the last "
                                                    "DW_LNE_end_sequence"),
    (unit(5, V5, set_address(TEXT_ADDRESS) + b"\0\x09\x01" + END), "extended opcode of 9 bytes"),
    (unit(5, V5, set_address(TEXT_ADDRESS) + b"\0\x05\x02\0\0\0\0" + END), "DW_LNE_set_address with a 4-byte "
                                                                           "operand"),
    (unit(5, V5, set_address(TEXT_ADDRESS) + COPY + b"\x05\x80\x80"), ".debug_line: malformed unit"),
    (unit(5, header_v5(["/b"], [("k.cpp", 0)], bytearray(b"x" * 9)), GOOD), "string offset 0x9 outside "
                                                                             ".debug_line_str (absent)"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_bad_tables_are_one_line_errors_with_the_offset(line, message):
    assert message in _bad(line)


def test_an_entry_count_past_the_header_is_refused_not_run():
    header = bytearray(header_v5(["/b"], [("k.cpp", 0)]))
    at = header.index(b"/b\0") - 1                  # the directory count, 1
    huge = bytes(header[:at]) + uleb(2 ** 60) + bytes(header[at + 1:])
    assert "1152921504606846976 directories in a header with" in _bad(unit(5, huge, GOOD))
    empty = bytes(header[:at - 3]) + bytes([0]) + uleb(5) + bytes(header[at + 1:])     # no format, 5 entries
    assert "5 directories in a header with" in _bad(unit(5, empty, GOOD)) and "no entry format" in _bad(
        unit(5, empty, GOOD))


def test_a_header_longer_than_its_length_says_so():
    whole = unit(5, V5, GOOD)
    cut = bytearray(whole)
    struct.pack_into("<I", cut, 8, len(V5) - 4)       # header_length 4 bytes short: the header runs past it
    assert "header runs 4 bytes past its header_length" in _bad(bytes(cut))


def test_a_bad_compile_unit_is_a_one_line_error():
    info, abbrev = compile_unit(5, "/b", "k.cpp")
    message = _bad(unit(5, V5, GOOD), **{".debug_info": info, ".debug_abbrev": abbrev[:3]})
    assert ".debug_info:" in message


def test_mutated_tables_give_rows_or_one_input_error():
    """Bytes of a real table's .debug_line, .debug_info and .debug_line_str
    changed at random (a fixed seed): read_lines returns or raises
    InputError, never anything else."""
    import random
    from pathlib import Path

    from spillway.formats.elf import ElfImage
    path = Path(__file__).resolve().parents[2] / "data" / "isa" / "lines" / "co" / "headers.gfx906.clang22.dwarf5.co"
    data = path.read_bytes()
    image = ElfImage(memoryview(data))
    spans = [(s.offset, s.size) for s in image.sections if s.name in (".debug_line", ".debug_info", ".debug_line_str",
                                                               ".debug_abbrev", ".debug_str_offsets")]
    chooser = random.Random(32)
    outcomes = {"rows": 0, "error": 0}
    for _ in range(600):
        mutated = bytearray(data)
        offset, size = chooser.choice(spans)
        for _ in range(chooser.randint(1, 3)):
            mutated[offset + chooser.randrange(size)] = chooser.randrange(256)
        try:
            read_lines(bytes(mutated))
            read_lines(bytes(mutated), [(".text", 0, 8)])
            outcomes["rows"] += 1
        except InputError as error:
            assert "\n" not in str(error)
            outcomes["error"] += 1
    assert outcomes["rows"] and outcomes["error"], outcomes


def test_skimming_by_pattern_finds_what_stepping_finds():
    """_skim steps over runs of opcodes with a regular expression; on every
    line program of the committed code objects, and on those programs with
    bytes changed at random (a fixed seed), it gives what stepping over one
    opcode at a time gives (_skim_stepped): the same sequences, or None."""
    import random
    from pathlib import Path

    from spillway.formats import dwarf_lines
    from spillway.formats.elf import ElfImage

    programs = []
    original = dwarf_lines._skim

    def kept(data, at, end, opcode_base, lengths, targets):
        programs.append((bytes(data), at, end, opcode_base, lengths, targets))
        return original(data, at, end, opcode_base, lengths, targets)

    folder = Path(__file__).resolve().parents[2] / "data" / "isa" / "lines" / "co"
    dwarf_lines._skim = kept
    try:
        for path in sorted(folder.iterdir()):
            data = path.read_bytes()
            read_lines(data, [(s.name, 0, 4) for s in ElfImage(memoryview(data)).sections if s.flags & 4])
    finally:
        dwarf_lines._skim = original
    assert len(programs) >= 10
    chooser = random.Random(37)
    outcomes = {"same": 0, "irregular": 0}
    for data, at, end, opcode_base, lengths, targets in programs:
        for turn in range(40):
            mutated = bytearray(data)
            for _ in range(chooser.randint(1, 3) if turn else 0):
                value = chooser.choice((0, 1, 2, 5, 9, 0x80, 0xFF, chooser.randrange(256)))
                mutated[chooser.randrange(at, end)] = value
            found = dwarf_lines._skim(bytes(mutated), at, end, opcode_base, lengths, targets)
            assert found == dwarf_lines._skim_stepped(bytes(mutated), at, end, opcode_base, lengths, targets)
            outcomes["same" if found is not None else "irregular"] += 1
    assert outcomes["same"] and outcomes["irregular"], outcomes
