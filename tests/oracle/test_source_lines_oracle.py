"""Source lines (formats.dwarf_lines, isa.source_lines) against LLVM's own
tools, on the line-table fixtures tests/data/isa/lines/build.sh compiles
(one target per decoder family, DWARF 5 and 4, linked and relocatable,
clang 22 and 19, a kernel inlining a header from a subdirectory):

* every row of every table is what ``llvm-dwarfdump-22 --debug-line``
  prints (address, line, column, file, flags, end_sequence rows), with its
  table's version and the compile unit's DW_AT_comp_dir (``--debug-info``);
* every instruction of every function gets the line, column and
  ``inferred`` flag tests/support/lines_oracle.py works out from those rows
  and the instructions ``llvm-objdump -d`` prints (the objdump of the LLVM
  the ISA fixtures record: 19 for gfx940), and the file and line
  ``llvm-objdump -d -l`` shows at it (objdump shows no line 0: a line-0
  instruction shows the last line printed before it, which is the inferred
  one when there is one); a line-0 instruction with no earlier line in its
  block takes the first row with a line after it in the block (issue 41),
  the line objdump shows at that row's instruction;
* -gline-tables-only leaves the code byte-identical: each function's
  SHA-256 in the linked fixtures equals the plain build's
  (tests/data/isa/co, the same compile without it; DWARF 4 with -gdwarf-4
  before -gline-tables-only, see build.sh).
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import pytest

from spillway.formats.dwarf_lines import read_lines
from spillway.isa.evidence import kernel_ranges
from spillway.isa.source_lines import decoded_kernel, instruction_lines, object_lines
from support import isa_oracle, lines_oracle

DATA = Path(__file__).resolve().parents[1] / "data" / "isa"
FIXTURES = sorted((DATA / "lines" / "co").iterdir())


def _target(path: Path) -> str:
    return next(part for part in path.name.split(".") if part.startswith("gfx"))


def test_the_fixtures_cover_what_the_issue_asks():
    names = [path.name for path in FIXTURES]
    assert {name.split(".")[0] for name in names if name.endswith(".co")} >= {
        "gfx803", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx942", "gfx950", "gfx1010", "gfx1030", "gfx1100",
        "gfx1151", "gfx1201", "gfx1250"}
    assert any(name.endswith(".dwarf4.co") for name in names) and any(name.endswith(".dwarf4.o") for name in names)
    assert any(name.endswith(".dwarf5.o") for name in names)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_rows_are_what_dwarfdump_prints(path):
    theirs, versions = lines_oracle.dwarfdump_rows(path)
    tables = read_lines(path.read_bytes())
    ours = [lines_oracle.Row(*row) for table in tables
            for row in zip(table.rows.address, table.rows.line, table.rows.column, table.rows.file, table.rows.flags)]
    assert theirs and ours == theirs
    assert [table.version for table in tables] == versions == [4 if ".dwarf4." in path.name else 5]
    assert [table.comp_dir for table in tables] == lines_oracle.comp_dirs(path)
    assert sum(len(table.sequences) for table in tables) == len(lines_oracle.sequences(theirs))
    assert all(sequence.section == ".text" for table in tables for sequence in table.sequences)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_instruction_has_the_line_objdump_shows(path):
    compared, _inferred, _unplaced, _after = _compare(path)
    assert compared > 100 or path.name.startswith("headers."), f"{path.name}: only {compared} instructions"


def test_the_fixtures_exercise_inference_and_its_limit():
    """Some instructions take an inferred line from before them, some from
    after them (nothing earlier in their block has a line), and some
    line-0 ones none (no line in their block at all)."""
    counts = [_compare(path) for path in FIXTURES]
    assert sum(c[1] for c in counts) > 100 and sum(c[3] for c in counts) > 100, counts
    assert sum(c[2] for c in counts) > 10, counts


@functools.lru_cache(maxsize=None)
def _compare(path: Path) -> tuple[int, int, int, int]:
    """Compare every instruction's line with the oracle's; (instructions
    with a line, of which inferred, instructions without one, inferred from
    a row after them)."""
    shown = lines_oracle.objdump_lines(lines_oracle.objdump_argv(path), path)
    by_address = {found.insn.address: found for found in shown}
    sequences = lines_oracle.sequences(lines_oracle.dwarfdump_rows(path)[0])
    data = path.read_bytes()
    section, ranges = kernel_ranges(data, functions=True)
    lines = object_lines(data)
    assert lines is not None
    functions = {f.name: f for f in isa_oracle.read_functions(path)}
    compared = inferred = unplaced = after = 0
    for found in ranges:
        function = functions[found.name]
        instructions = decoded_kernel(section, found.start, found.size, _target(path))
        placed = instruction_lines(lines, found.section, found.start, found.size, instructions)
        expected = lines_oracle.expected_lines(sequences, [s.insn for s in shown], function.start,
                                               function.start + function.size)
        assert [function.start + i.offset for i in instructions] == list(expected), found.name
        for instruction, ours in zip(instructions, placed):
            address = function.start + instruction.offset
            theirs = expected[address]
            if theirs is None:
                assert ours is None, (found.name, hex(address))
                unplaced += 1
                continue
            assert ours is not None, (found.name, hex(address))
            assert (ours.line, ours.column, ours.inferred) == (theirs.line, theirs.column, theirs.inferred), \
                (found.name, hex(address))
            # objdump shows the inferred line at the instruction whose row gave it (for a line taken from
            # after, the line before is what objdump shows at the instruction itself).
            origin = by_address[address if theirs.source < address else theirs.source]
            assert (ours.file, ours.line) == (origin.path, origin.line), (found.name, hex(address))
            compared += 1
            inferred += ours.inferred
            after += theirs.source > address
    return compared, inferred, unplaced, after


@pytest.mark.parametrize("path", [p for p in FIXTURES if p.suffix == ".co" and not p.name.startswith("headers.")],
                         ids=lambda p: p.name)
def test_line_tables_leave_the_code_byte_identical(path):
    plain = DATA / "co" / ".".join(path.name.split(".")[:2] + ["co"])
    ours = _code_digests(path)
    assert ours and ours == _code_digests(plain)


def _code_digests(path: Path) -> dict[str, str]:
    return {f.name: hashlib.sha256(f.code).hexdigest() for f in isa_oracle.read_functions(path)}


def test_the_header_fixture_names_a_file_under_an_include_directory():
    path = DATA / "lines" / "co" / "headers.gfx906.clang22.dwarf5.co"
    table = read_lines(path.read_bytes())[0]
    assert table.directories == ("/spillway/tests/data/isa/lines/headers", "./include")
    assert [table.file_path(i) for i in range(len(table.files))] == [
        "/spillway/tests/data/isa/lines/headers/headers.cpp", "/spillway/tests/data/isa/lines/headers/./include/ops.h"]
    assert {table.rows.file[i] for i in range(len(table.rows))} == {0, 1}


COMPRESSED = ["gfx90a.clang22.dwarf5.co", "gfx1100.clang22.dwarf4.co", "gfx942.clang22.dwarf5.o",
              "gfx90a.clang22.dwarf4.o"]


@pytest.mark.parametrize("kind", ["zlib", "zstd"])
@pytest.mark.parametrize("name", COMPRESSED)
def test_compressed_debug_sections_read_as_llvm_reads_them(tmp_path, name, kind):
    """SHF_COMPRESSED debug sections, as llvm-objcopy --compress-debug-sections writes them (and as
    Debian's ROCm 6.4 libraries ship them, zlib): the rows llvm-dwarfdump prints from the compressed
    file, and the same as from the plain one (relocatable objects: relocations applied after
    inflating)."""
    import subprocess

    from support.toolchains import require

    objcopy = [require("llvm-objcopy-22")]

    plain = DATA / "lines" / "co" / name
    packed = tmp_path / name
    subprocess.run([*objcopy, f"--compress-debug-sections={kind}", str(plain), str(packed)], check=True)
    assert packed.read_bytes() != plain.read_bytes()
    theirs, versions = lines_oracle.dwarfdump_rows(packed)
    tables = read_lines(packed.read_bytes())
    ours = [lines_oracle.Row(*row) for table in tables
            for row in zip(table.rows.address, table.rows.line, table.rows.column, table.rows.file, table.rows.flags)]
    assert theirs and ours == theirs
    assert [table.version for table in tables] == versions
    assert [table.comp_dir for table in tables] == lines_oracle.comp_dirs(packed)
    plain_tables = read_lines(plain.read_bytes())
    assert [t.file_path(i) for t in tables for i in range(len(t.files))] == \
        [t.file_path(i) for t in plain_tables for i in range(len(t.files))]
