"""formats.elf, the package's one ELF reader, on small ELF files built here
byte by byte (the layout of the gABI's Elf64_Ehdr/Shdr/Sym/Rela/Chdr), on a
real code object against pyelftools as the oracle, and a guard that no other
module of the package spells out an ELF structure or reads with pyelftools."""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path

import pytest
import zstandard

from spillway.errors import InputError
from spillway.formats import elf
from spillway.formats.elf import (ET_DYN, ET_REL, R_AMDGPU_ABS32, R_AMDGPU_ABS64, SHF_ALLOC, SHF_COMPRESSED,
                                  SHF_EXECINSTR, SHT_NOTE, SHT_PROGBITS, SHT_RELA, SHT_STRTAB, SHT_SYMTAB, STT_FUNC,
                                  STT_OBJECT, ElfImage, Relocation, Section, Symbol)

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "checker" / "spillway"
STB_GLOBAL = 1


def _strings(names: list[str]) -> tuple[bytes, dict[str, int]]:
    table, at = b"\0", {}
    for name in names:
        at[name] = len(table)
        table += name.encode() + b"\0"
    return table, at


def build(sections: list[dict], *, e_type: int = ET_DYN, e_class: int = 2, extended: bool = False) -> bytes:
    """An ELF64 LE file: a 64-byte header, each section's data, then the
    section header table (a null section first, then ``sections``, then
    .shstrtab).  A section dict: name, type, data and optionally flags,
    addr, link, info, entsize (link as a name is resolved to its index).
    ``extended``: e_shnum 0 and e_shstrndx SHN_XINDEX, the real values in
    section 0 (gABI extended numbering)."""
    names = [s["name"] for s in sections] + [".shstrtab"]
    shstrtab, name_at = _strings(names)
    entries = [*sections, {"name": ".shstrtab", "type": SHT_STRTAB, "data": shstrtab}]
    index = {s["name"]: number + 1 for number, s in enumerate(entries)}
    body = bytearray(64)
    placed = []
    for entry in entries:
        while len(body) % 8:
            body.append(0)
        placed.append((len(body), len(entry["data"])))
        body += entry["data"]
    while len(body) % 8:
        body.append(0)
    shoff = len(body)
    count = len(entries) + 1
    null = (0, 0, 0, 0, 0, count if extended else 0, index[".shstrtab"] if extended else 0, 0, 0, 0)
    body += struct.pack("<IIQQQQIIQQ", *null)
    for entry, (offset, size) in zip(entries, placed):
        link = entry.get("link", 0)
        link = index[link] if isinstance(link, str) else link
        body += struct.pack("<IIQQQQIIQQ", name_at[entry["name"]], entry["type"], entry.get("flags", 0),
                            entry.get("addr", 0), offset, size, link, entry.get("info", 0), 8, entry.get("entsize", 0))
    header = b"\x7fELF" + bytes([e_class, 1, 1, 64, 4]) + bytes(7)
    header += struct.pack("<HHIQQQIHHHHHH", e_type, 224, 1, 0, 0, shoff, 0x4C, 64, 56, 0, 64,
                          0 if extended else count, 0xFFFF if extended else index[".shstrtab"])
    body[:64] = header
    return bytes(body)


def symtab(symbols: list[tuple[str, int, int, int, int]]) -> tuple[bytes, bytes]:
    """(.symtab, .strtab) for (name, value, size, type, shndx), after the null symbol."""
    strtab, at = _strings([s[0] for s in symbols])
    table = bytes(24)
    for name, value, size, kind, shndx in symbols:
        table += struct.pack("<IBBHQQ", at[name], STB_GLOBAL << 4 | kind, 0, shndx, value, size)
    return table, strtab


def chdr(kind: int, data: bytes, packed: bytes) -> bytes:
    return struct.pack("<IIQQ", kind, 0, len(data), 1) + packed


TEXT = {"name": ".text", "type": SHT_PROGBITS, "flags": SHF_ALLOC | SHF_EXECINSTR, "addr": 0x1000,
        "data": bytes(range(256)) * 2}


def linked_object() -> bytes:
    table, strings = symtab([("kern", 0x1100, 0x40, STT_FUNC, 1), ("kern.kd", 0x0, 64, STT_OBJECT, 2),
                             ("helper", 0x1140, 0x20, STT_FUNC, 1)])
    return build([TEXT, {"name": ".rodata", "type": SHT_PROGBITS, "flags": SHF_ALLOC, "data": bytes(64)},
                  {"name": ".symtab", "type": SHT_SYMTAB, "data": table, "link": ".strtab", "entsize": 24},
                  {"name": ".strtab", "type": SHT_STRTAB, "data": strings},
                  {"name": ".note", "type": SHT_NOTE, "data": b"note-bytes"}])


def test_sections_are_named_records_in_index_order():
    image = ElfImage(linked_object())
    assert [s.name for s in image.sections] == ["", ".text", ".rodata", ".symtab", ".strtab", ".note", ".shstrtab"]
    text = image.section(".text")
    assert isinstance(text, Section)
    assert (text.type, text.flags, text.addr, text.size, text.addralign) == (SHT_PROGBITS, 6, 0x1000, 512, 8)
    assert image.section_bytes(".text") == TEXT["data"]
    assert image.section(".absent") is None and image.section_bytes(".absent") is None
    assert image.e_type == ET_DYN and image.e_flags == 0x4C and image.header.machine == 224
    assert [(bytes(view), at) for view, at in image.notes()] == [(b"note-bytes", image.section(".note").offset)]


def test_symbols_by_index_and_filtered_before_names_are_decoded():
    image = ElfImage(linked_object())
    [table] = image.symbol_tables()
    every = image.symbols(table)
    assert every[0] == Symbol("", 0, 0, 0, 0, 0)            # index 0: the null symbol, so indexes hold
    assert every[1] == Symbol("kern", 0x1100, 0x40, STB_GLOBAL << 4 | STT_FUNC, 0, 1)
    assert (every[1].bind, every[1].type) == (STB_GLOBAL, STT_FUNC)
    assert [s.name for s in image.symbols(table, type=STT_FUNC)] == ["kern", "helper"]
    assert [s.name for s in image.symbols(table, type=STT_OBJECT, size=64)] == ["kern.kd"]
    assert image.static_symbols() == every


def test_kernel_ranges_and_descriptors_through_the_reader():
    from spillway.formats.codeobject import kernel_descriptors
    from spillway.isa.evidence import kernel_ranges

    data = linked_object()
    assert list(kernel_descriptors(ElfImage(data))) == ["kern.kd"]
    code, ranges = kernel_ranges(data)
    assert bytes(code) == TEXT["data"]
    assert [(r.name, r.start, r.size) for r in ranges] == [("kern", 0x100, 0x40)]
    _, with_functions = kernel_ranges(data, functions=True)
    assert [(r.name, r.start) for r in with_functions] == [("kern", 0x100), ("helper", 0x140)]


def relocatable(debug_flags: int = 0, debug_data: bytes = bytes(16), relocation_type: int = R_AMDGPU_ABS64) -> bytes:
    table, strings = symtab([("sym", 0x30, 0, STT_FUNC, 1)])
    relocations = struct.pack("<QQq", 0, 1 << 32 | relocation_type, 0x5)
    relocations += struct.pack("<QQq", 8, 1 << 32 | R_AMDGPU_ABS32, 0x7)
    return build([TEXT | {"addr": 0},
                  {"name": ".symtab", "type": SHT_SYMTAB, "data": table, "link": ".strtab", "entsize": 24},
                  {"name": ".strtab", "type": SHT_STRTAB, "data": strings},
                  {"name": ".debug_line", "type": SHT_PROGBITS, "flags": debug_flags, "data": debug_data},
                  {"name": ".rela.debug_line", "type": SHT_RELA, "data": relocations, "link": ".symtab",
                   "info": 4, "entsize": 24}], e_type=ET_REL)


def test_relocations_are_read_and_applied_in_a_relocatable_object():
    image = ElfImage(relocatable())
    rela = image.section(".rela.debug_line")
    assert image.relocations(rela) == [Relocation(0, 1, R_AMDGPU_ABS64, 5), Relocation(8, 1, R_AMDGPU_ABS32, 7)]
    patched = image.contents([".debug_line"])[".debug_line"]
    assert patched == (0x35).to_bytes(8, "little") + (0x37).to_bytes(4, "little") + bytes(4)


def test_a_linked_object_is_not_relocated():
    data = bytearray(relocatable())
    data[16] = ET_DYN
    assert ElfImage(bytes(data)).contents([".debug_line"])[".debug_line"] == bytes(16)


def test_an_unsupported_relocation_is_an_error_naming_the_file():
    with pytest.raises(InputError, match="relocation type 1 not supported") as caught:
        ElfImage(relocatable(relocation_type=1), file="lib.so").contents([".debug_line"])
    assert caught.value.file == "lib.so" and caught.value.container == "code object"


@pytest.mark.parametrize("kind", ["zlib", "zstd"])
def test_compressed_sections_are_inflated_then_relocated(kind):
    plain = bytes(range(16))
    packed = zlib.compress(plain) if kind == "zlib" else zstandard.ZstdCompressor().compress(plain)
    data = relocatable(SHF_COMPRESSED, chdr(1 if kind == "zlib" else 2, plain, packed))
    out = ElfImage(data).contents([".debug_line"])[".debug_line"]
    assert out == (0x35).to_bytes(8, "little") + (0x37).to_bytes(4, "little") + plain[12:]


def test_a_compressed_section_declaring_too_much_is_refused():
    header = struct.pack("<IIQQ", 1, 0, 1 << 31, 1) + zlib.compress(b"x")
    image = ElfImage(relocatable(SHF_COMPRESSED, header), file="a.co")
    with pytest.raises(InputError, match="declares 2147483648 bytes") as caught:
        image.contents([".debug_line"])
    assert caught.value.file == "a.co" and caught.value.offset == image.section(".debug_line").offset


def test_a_corrupt_compressed_stream_names_the_file():
    header = struct.pack("<IIQQ", 1, 0, 16, 1) + b"not zlib at all"
    with pytest.raises(InputError, match="zlib stream is corrupt") as caught:
        ElfImage(relocatable(SHF_COMPRESSED, header), file="b.co").contents([".debug_line"])
    assert caught.value.file == "b.co"


def _compressed_debug(data: bytes, packed: bytes | None = None) -> ElfImage:
    """A linked object whose .debug_str is ``data`` compressed with zlib (``packed``: that stream instead)."""
    stream = packed if packed is not None else zlib.compress(data)
    return ElfImage(build([TEXT, {"name": ".debug_str", "type": SHT_PROGBITS, "flags": SHF_COMPRESSED,
                                  "data": chdr(1, data, stream)}]), file="c.co")


def test_a_section_inflated_on_demand_holds_the_whole_sections_bytes_as_far_as_reached():
    plain = b"".join(b"string %d\0" % n for n in range(20000))        # 200 kB: far more than one step
    image = _compressed_debug(plain)
    section = image.contents_on_demand([".debug_str"])[".debug_str"]
    assert isinstance(section, elf.PartlyInflated) and len(section) == len(plain)
    assert section.filled == 0
    at = plain.index(b"string 50\0")
    assert section.string_end(at) == at + len("string 50") and 0 < section.filled < len(plain) // 4
    assert section.reach(100_000)[:section.filled] == plain[:section.filled] and section.filled >= 100_000
    assert not section.done
    assert bytes(section.whole()) == plain == image.contents([".debug_str"])[".debug_str"] and section.done
    assert section.string_end(len(plain) - 1) == len(plain) - 1


@pytest.mark.parametrize("stream, declared", [
    (zlib.compress(b"x" * 100_000), 99_999),         # a longer stream than declared
    (zlib.compress(b"x" * 100_000), 100_001),        # a shorter one
    (zlib.compress(b"x" * 100_000)[:-8], 100_000),   # truncated
    (b"not zlib at all" * 10, 100_000),              # corrupt
], ids=["longer", "shorter", "truncated", "corrupt"])
def test_a_bad_stream_inflated_on_demand_says_what_a_whole_inflation_says(stream, declared):
    image = ElfImage(build([TEXT, {"name": ".debug_str", "type": SHT_PROGBITS, "flags": SHF_COMPRESSED,
                                   "data": struct.pack("<IIQQ", 1, 0, declared, 1) + stream}]), file="d.co")
    with pytest.raises(InputError) as whole:
        image.contents([".debug_str"])
    section = image.contents_on_demand([".debug_str"])[".debug_str"]
    with pytest.raises(InputError) as on_demand:
        section.whole()
    assert str(on_demand.value) == str(whole.value) and on_demand.value.file == "d.co"


def test_only_zlib_sections_of_a_linked_object_are_inflated_on_demand():
    plain = bytes(range(256)) * 64
    packed = zstandard.ZstdCompressor().compress(plain)
    image = ElfImage(build([TEXT, {"name": ".debug_str", "type": SHT_PROGBITS, "flags": SHF_COMPRESSED,
                                   "data": chdr(2, plain, packed)}]))
    assert image.contents_on_demand([".debug_str"]) == {".debug_str": plain}
    relocated = ElfImage(relocatable(SHF_COMPRESSED, chdr(1, bytes(range(16)), zlib.compress(bytes(range(16))))))
    assert relocated.contents_on_demand([".debug_line"]) == relocated.contents([".debug_line"])


def test_extended_section_numbering():
    plain, extended = ElfImage(linked_object()), ElfImage(build(
        [TEXT, {"name": ".note", "type": SHT_NOTE, "data": b"n"}], extended=True))
    assert [s.name for s in extended.sections] == ["", ".text", ".note", ".shstrtab"]
    assert plain.header.shnum == 7 and extended.header.shnum == 0


@pytest.mark.parametrize("damage, message, offset", [
    (lambda d: d[:40], "truncated ELF header (40 bytes)", 0),
    (lambda d: d[:4] + b"\x01" + d[5:], "not a 64-bit little-endian ELF", 0),
    (lambda d: d[:-64], "section header table", 0x28),
])
def test_bad_headers_are_input_errors_with_file_and_offset(damage, message, offset):
    with pytest.raises(InputError) as caught:
        ElfImage(damage(linked_object()), file="x.so", container="ELF")
    assert message in caught.value.message
    assert (caught.value.file, caught.value.container, caught.value.offset) == ("x.so", "ELF", offset)


def test_a_symbol_table_past_the_end_is_an_error_not_a_short_read():
    data = bytearray(linked_object())
    image = ElfImage(bytes(data))
    number = [s.name for s in image.sections].index(".symtab")
    at = image.header.shoff + number * 64 + 32                      # sh_size
    data[at:at + 8] = struct.pack("<Q", len(data))
    damaged = ElfImage(bytes(data), file="y.so")
    with pytest.raises(InputError, match="symbol table .* runs past the end") as caught:
        damaged.symbols(damaged.symbol_tables()[0])
    assert caught.value.file == "y.so"


def test_a_real_code_object_reads_as_pyelftools_reads_it():
    """The oracle: pyelftools' sections and symbols of a clang-22 code object."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    path = REPO / "tests" / "data" / "isa" / "lines" / "co" / "headers.gfx906.clang22.dwarf5.co"
    data = path.read_bytes()
    image = ElfImage(data)
    with path.open("rb") as handle:
        oracle = ELFFile(handle)
        want = [(s.name, s.header["sh_offset"], s.header["sh_size"], s.header["sh_addr"], s.header["sh_flags"],
                 s.header["sh_link"], s.header["sh_info"], s.header["sh_entsize"]) for s in oracle.iter_sections()]
        want_symbols = {s.name: [(x.name, x["st_value"], x["st_size"], x["st_shndx"] if isinstance(x["st_shndx"], int)
                                  else {"SHN_UNDEF": 0, "SHN_ABS": 0xFFF1}[x["st_shndx"]])
                                 for x in s.iter_symbols()]
                        for s in oracle.iter_sections() if isinstance(s, SymbolTableSection)}
        # the symbols of one type (ElfImage.symbols picks their entries out before unpacking them)
        want_typed = {(s.name, kind): [x.name for x in s.iter_symbols() if x["st_info"]["type"] == kind]
                      for s in oracle.iter_sections() if isinstance(s, SymbolTableSection)
                      for kind in ("STT_FUNC", "STT_OBJECT", "STT_NOTYPE")}
    assert [(s.name, s.offset, s.size, s.addr, s.flags, s.link, s.info, s.entsize)
            for s in image.sections] == want
    got_symbols = {t.name: [(s.name, s.value, s.size, s.shndx) for s in image.symbols(t)]
                   for t in image.symbol_tables()}
    assert got_symbols == want_symbols and sum(map(len, got_symbols.values())) > 10
    got_typed = {(t.name, kind): [s.name for s in image.symbols(t, type=number)] for t in image.symbol_tables()
                 for kind, number in (("STT_FUNC", STT_FUNC), ("STT_OBJECT", STT_OBJECT), ("STT_NOTYPE", 0))}
    assert got_typed == want_typed and all(want_typed[(".symtab", kind)] for kind in ("STT_FUNC", "STT_OBJECT"))


def test_a_host_elf_is_read_by_the_reader_and_a_32_bit_one_holds_no_device_code():
    from spillway.errors import NoDeviceCode
    from spillway.formats.containers import ScanOptions, scan_buffer

    host = bytearray(linked_object())
    host[18] = 62                                                   # EM_X86_64: a host, not a code object
    with pytest.raises(NoDeviceCode, match="holds no device code"):
        scan_buffer(memoryview(bytes(host)), "host.so", ScanOptions())
    host[4] = 1                                                     # ELFCLASS32
    with pytest.raises(NoDeviceCode, match="32-bit or big-endian ELF") as caught:
        scan_buffer(memoryview(bytes(host)), "host32.so", ScanOptions())
    assert caught.value.file == "host32.so"
    with pytest.raises(InputError, match="truncated ELF header") as truncated:
        scan_buffer(memoryview(bytes(host[:4]) + bytes([2]) + bytes(host[5:30])), "short.so", ScanOptions())
    assert (truncated.value.file, truncated.value.container) == ("short.so", "ELF")


# ELF structures spelled as struct formats: Ehdr after e_ident, Shdr, Phdr, Sym, Rela, Chdr (64-bit LE); and
# pyelftools, or its header dictionaries, beside the reader.
_ELF_STRUCTURES = re.compile(r"""["'](?:<HHIQQQIHHHHHH|<IIQQQQIIQQ|<IIQQQQQQ|<IBBHQQ|<QQq|<IIQQ)["']"""
                             r"""|^\s*(?:from|import)\s+elftools|\[["'](?:e|sh|st|r|p)_[a-z]+["']\]""")


def elf_structures_in(text: str) -> list[str]:
    return [f"{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
            if _ELF_STRUCTURES.search(line)]


def test_no_module_but_formats_elf_spells_out_an_elf_structure():
    """One ELF parser: no other module of the package holds an ELF struct
    format, reads with pyelftools or indexes its header dictionaries."""
    offenders = [f"{path.relative_to(REPO)}:{found}" for path in sorted(PACKAGE.rglob("*.py"))
                 if path != PACKAGE / "formats" / "elf.py" for found in elf_structures_in(path.read_text())]
    assert not offenders, "ELF structures outside formats/elf.py:\n" + "\n".join(offenders)
    assert elf_structures_in((PACKAGE / "formats" / "elf.py").read_text())   # the patterns do match the reader


def test_the_guard_catches_the_parsers_there_were():
    """What the package held before formats/elf.py (issue 37): every line is caught."""
    before = """\
        for name_at, info, _other, shndx, value, size in struct.iter_unpack("<IBBHQQ", table):
            raw = list(struct.iter_unpack("<IIQQQQIIQQ", data[self.e_shoff:self.e_shoff + 64]))
     shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", view, 16)
        for p_type, _f, off, _va, _pa, filesz, _m, _a in struct.iter_unpack('<IIQQQQQQ', table):
        for r_offset, r_info, r_addend in struct.iter_unpack("<QQq", image.data[offset:]):
    kind, _reserved, size, _align = struct.unpack_from("<IIQQ", data, 0)
            sections.append((section.name, header["sh_type"], header["sh_offset"]))
from elftools.elf.elffile import ELFFile
"""
    assert len(elf_structures_in(before)) == len(before.splitlines())
    assert not elf_structures_in('    size, entries_at = struct.unpack_from("<QQQ", data, 8)\n'
                                 '    magic, version, toc_at = struct.unpack_from("<4sIQ", data, 0)\n')


def test_module_constants_match_the_struct_sizes():
    assert (elf.SECTION_SIZE, elf.SEGMENT_SIZE, elf.SYMBOL_SIZE, elf.RELA_SIZE) == (64, 56, 24, 24)
