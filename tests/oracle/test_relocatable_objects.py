"""Relocatable code objects (ET_REL) read per section (issue 42), against
LLVM's own tools, on tests/data/isa/rdc/build.sh's fixtures: -fgpu-rdc device
code of rdc.cpp through llc-22, its code in one .text (the template's two
kernels in COMDAT sections of their own all the same) and in a section per
function (-function-sections), for gfx1030 (MUBUF scratch) and gfx1100
(scratch_*):

* every kernel's figures are the ISA oracle's (tests/support/isa_oracle.py)
  over ``llvm-objdump-22 -d -z --disassemble-symbols=KERNEL``, which reads
  the symbol from its own section (instructions, scratch accesses and bytes,
  loops, calls, the code's SHA-256 ... isa_decoder.FIELDS);
* every instruction spillway places on a source line has the file and line
  ``llvm-objdump-22 -d -l`` shows at it (the line table's rows relocated to
  the section of their DW_LNE_set_address);
* the two layouts of one compile read alike, kernel by kernel.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import pytest

from spillway.isa.evidence import evidence, kernel_ranges
from spillway.isa.source_lines import decoded_kernel, instruction_lines, object_lines
from spillway.report.reader import ReadOptions, read_report
from support import isa_decoder, isa_oracle, lines_oracle
from support.toolchains import require

DATA = Path(__file__).resolve().parents[1] / "data" / "isa" / "rdc"
FIXTURES = sorted((DATA / "co").glob("*.o"))
KERNELS = ("rdc_scratch", "_Z9rdc_scaleIfEvPT_PKS0_S0_i", "_Z9rdc_scaleIiEvPT_PKS0_S0_i", "rdc_call", "rdc_plain")


def _target(path: Path) -> str:
    return path.name.split(".")[0]


def test_the_fixtures_hold_both_layouts():
    """One .text with the templates' COMDAT sections beside it, and one section per function."""
    from spillway.formats.elf import ET_REL, SHF_ALLOC, SHF_EXECINSTR, SHT_PROGBITS, ElfImage

    for path in FIXTURES:
        image = ElfImage(memoryview(path.read_bytes()))
        code = [s.name for s in image.sections
                if s.type == SHT_PROGBITS and s.flags & SHF_ALLOC and s.flags & SHF_EXECINSTR and s.size]
        assert image.e_type == ET_REL
        if ".sections." in path.name:
            assert len(code) == 6 and ".text" not in code, code
        else:
            assert code[0] == ".text" and len(code) == 3 and all(c.startswith(".text._Z9rdc_scale") for c in code[1:])


@functools.lru_cache(maxsize=None)
def _ours(path: Path) -> dict:
    data = path.read_bytes()
    code, ranges = kernel_ranges(data)
    return {r.name: (evidence(code, r.start, r.size, _target(path), bool(r.private_segment_buffer)), r)
            for r in ranges}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_kernel_is_what_objdump_shows_of_its_symbol(path):
    objdump = require("llvm-objdump-22")
    functions = {f.name: f for f in isa_oracle.read_functions(path)}
    ours = _ours(path)
    assert sorted(ours) == sorted(KERNELS)
    for name in KERNELS:
        function = functions[name]
        text = isa_oracle.subprocess.run([objdump, "-d", "-z", f"--disassemble-symbols={name}", str(path)],
                                         capture_output=True, text=True, check=True).stdout
        insns = isa_oracle.parse_objdump(text)
        theirs = isa_oracle.evidence(function, insns, {function.start: name})
        found, _range = ours[name]
        assert theirs.status == "complete" and theirs.instructions > 0, (name, theirs.status)
        assert isa_decoder.differences(theirs.fields(), found) == {}, name
        assert found.code_sha256 == hashlib.sha256(function.code).hexdigest()


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_placed_instruction_has_the_line_objdump_shows(path):
    objdump = require("llvm-objdump-22")
    data = path.read_bytes()
    code, ranges = kernel_ranges(data)
    lines = object_lines(data)
    assert lines is not None
    functions = {f.name: f for f in isa_oracle.read_functions(path)}
    placed_total = 0
    for found in ranges:
        shown = {s.insn.address: s for s in lines_oracle.objdump_lines([objdump, f"--disassemble-symbols={found.name}"],
                                                                         path)}
        instructions = decoded_kernel(code, found.start, found.size, _target(path))
        placed = instruction_lines(lines, found.section, found.start, found.size, instructions)
        start = functions[found.name].start
        # (objdump goes on past the symbol's end, to the next symbol or the section's end: the padding)
        assert [start + i.offset for i in instructions] == sorted(a for a in shown if a < start + found.size), \
            found.name
        for instruction, ours in zip(instructions, placed):
            if ours is None:
                continue
            where = shown[start + instruction.offset]
            assert (ours.file, ours.line) == (where.path, where.line), (found.name, hex(instruction.offset))
            placed_total += 1
        # every kernel of these fixtures has rows: most of its instructions are placed
        assert sum(p is not None for p in placed) * 2 > len(instructions), found.name
    assert placed_total > 300


@pytest.mark.parametrize("target", ["gfx1030", "gfx1100"])
def test_one_text_and_a_section_per_function_read_alike(target):
    text, sections = DATA / "co" / f"{target}.clang22.text.o", DATA / "co" / f"{target}.clang22.sections.o"
    assert {n: e for n, (e, _r) in _ours(text).items()} == {n: e for n, (e, _r) in _ours(sections).items()}
    reports = [read_report([str(path)], ReadOptions(isa=True))["kernels"] for path in (text, sections)]
    assert all(k["isa"]["status"] == "complete" and k["isa"]["source_lines"]["status"] == "placed"
               for kernels in reports for k in kernels)
    assert [k["isa"] for k in reports[0]] == [k["isa"] for k in reports[1]]
