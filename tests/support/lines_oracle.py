"""The source-line oracle (issue 32): what LLVM's own tools say about a code
object's line tables, never read by spillway's parser.

- ``dwarfdump_rows(path)``: the rows ``llvm-dwarfdump-22 --debug-line``
  prints, as (address, line, column, file, flags) with spillway's flag bits
  (formats.dwarf_lines: IS_STMT 1, BASIC_BLOCK 2, END_SEQUENCE 4,
  PROLOGUE_END 8, EPILOGUE_BEGIN 16), every table in order; its tables'
  versions; and each compile unit's DW_AT_comp_dir (``--debug-info``).
- ``objdump_lines(argv, path)``: every instruction of ``llvm-objdump -d -l -z``
  with the source line objdump shows for it: the last ``; PATH:LINE`` line
  printed at or before it.  objdump prints one when the (file, line) of the
  instruction's row differs from the last one printed, and never for a row
  of line 0 (so a line-0 instruction shows the last line printed before it,
  whichever block it was in).
- ``places``, ``line_traffic``, ``top_loop_lines``: each instruction's
  (file, line, column, inferred), and per source line the scratch bytes and
  AGPR copies summed from objdump's instructions by tests/support/
  isa_oracle.py's rules (what spillway code's by_line and report --isa's
  source_lines must say).
- ``expected_lines(rows, insns, start, end)``: the line each instruction of
  the function [start, end) gets by issue 32's rule, from those rows and the
  instructions objdump prints: the last row at or before the address in the
  sequence holding it; a row of line 0 takes the line and column of the
  nearest preceding instruction of the same basic block whose row has a line
  (inferred); with none (issue 41), the line and column of the first row
  after its row in the sequence, in the order llvm-dwarfdump prints them,
  whose line is not 0 and which has a length (the next row's address is
  greater), when that row's address is still in the block (inferred); basic
  blocks start at ``start``, at the target of each ``s_branch``/
  ``s_cbranch_*`` (not join/fork) inside the function and after each such
  branch, and end where the next one starts or at ``end``.
"""

from __future__ import annotations

import os
import re
import subprocess
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

from support import isa_oracle
from support.isa_oracle import Function, Insn, branch_target, is_loop_candidate, parse_objdump, scratch_kind

_ROW = re.compile(r"^0x([0-9a-f]{16})\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s+\d+\s*(.*)$")
_VERSION = re.compile(r"^\s+version: (\d+)$")
_SOURCE = re.compile(r"^; (?P<path>.+):(?P<line>\d+)$")
_COMP_DIR = re.compile(r'DW_AT_comp_dir\s+\((?:indexed \(\w+\) string = )?"(?P<dir>[^"]*)"\)')
FLAGS = {"is_stmt": 1, "basic_block": 2, "end_sequence": 4, "prologue_end": 8, "epilogue_begin": 16}


@dataclass(frozen=True)
class Row:
    address: int
    line: int
    column: int
    file: int
    flags: int


def dwarfdump_rows(path: Path, dwarfdump: str = "llvm-dwarfdump-22") -> tuple[list[Row], list[int]]:
    """Every row llvm-dwarfdump prints, in order, and each table's version."""
    text = subprocess.run([dwarfdump, "--debug-line", str(path)], capture_output=True, text=True,
                          check=True).stdout
    rows: list[Row] = []
    versions: list[int] = []
    for line in text.splitlines():
        found = _ROW.match(line)
        if found:
            flags = sum(FLAGS.get(word, 0) for word in found.group(5).split())
            rows.append(Row(int(found.group(1), 16), int(found.group(2)), int(found.group(3)),
                            int(found.group(4)), flags))
            continue
        version = _VERSION.match(line)
        if version:
            versions.append(int(version.group(1)))
    return rows, versions


def comp_dirs(path: Path, dwarfdump: str = "llvm-dwarfdump-22") -> list[str]:
    text = subprocess.run([dwarfdump, "--debug-info", str(path)], capture_output=True, text=True,
                          check=True).stdout
    return [found.group("dir") for found in _COMP_DIR.finditer(text)]


def sequences(rows: list[Row]) -> list[list[Row]]:
    """The rows split after each end_sequence row."""
    out: list[list[Row]] = [[]]
    for row in rows:
        out[-1].append(row)
        if row.flags & FLAGS["end_sequence"]:
            out.append([])
    return [found for found in out if found]


@dataclass(frozen=True)
class Shown:
    insn: Insn
    path: str | None          # the last "; PATH:LINE" objdump printed at or before the instruction
    line: int | None


def objdump_argv(path: Path) -> list[str]:
    """llvm-objdump of the LLVM a line-table fixture was built with (19 for
    the clang19 ones, else 22); skips locally when absent, fails under CI."""
    import pytest

    version = 19 if ".clang19." in path.name else 22
    argv = isa_oracle.llvm_tool("llvm-objdump", version)
    if argv is None:
        message = f"llvm-objdump of LLVM {version} is not installed (scripts/install-toolchains.sh)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return argv


def objdump_lines(argv: list[str], path: Path) -> list[Shown]:
    done = subprocess.run([*argv, "-d", "-l", "-z", str(path)], capture_output=True, text=True, check=True)
    shown: list[Shown] = []
    current: tuple[str | None, int | None] = (None, None)
    for line in done.stdout.splitlines():
        source = _SOURCE.match(line)
        if source and not line.endswith("():"):
            current = (source.group("path"), int(source.group("line")))
            continue
        if line.startswith("\t"):
            found = parse_objdump(line)
            if found:
                shown.append(Shown(found[0], *current))
    return shown


@dataclass(frozen=True)
class Expected:
    line: int
    column: int
    inferred: bool
    source: int               # address of the instruction whose row gave the line


def row_at(sequence_list: list[list[Row]], address: int) -> Row | None:
    """The last row at or before ``address`` in the sequence holding it (LLVM's lookup)."""
    for rows in sequence_list:
        if rows[0].address <= address < rows[-1].address:
            body = rows[:-1]
            at = bisect_right([r.address for r in body], address) - 1
            return body[at]
    return None


def first_line_after(sequence_list: list[list[Row]], address: int, ceiling: int) -> Row | None:
    """The first row after the one ``address`` takes (row_at) in its
    sequence whose line is not 0, which has a length and whose address is
    below ``ceiling``."""
    for rows in sequence_list:
        if rows[0].address <= address < rows[-1].address:
            at = bisect_right([r.address for r in rows[:-1]], address) - 1
            for row, following in zip(rows[at + 1:-1], rows[at + 2:]):
                if row.address >= ceiling:
                    return None
                if row.line and following.address > row.address:
                    return row
            return None
    return None


def expected_lines(sequence_list: list[list[Row]], insns: list[Insn], start: int, end: int
                   ) -> dict[int, Expected | None]:
    """Address -> the line issue 32's rule gives each instruction of the function [start, end)."""
    mine = [insn for insn in insns if start <= insn.address < end]
    blocks = {start}
    for insn in mine:
        if is_loop_candidate(insn.mnemonic):
            target = branch_target(insn)
            if start <= target < end:
                blocks.add(target)
            if insn.address + 4 < end:
                blocks.add(insn.address + 4)
    out: dict[int, Expected | None] = {}
    last: Expected | None = None
    ordered: list[int] = []          # the block starts and ``end``, sorted when first needed
    for insn in mine:
        if insn.address in blocks:
            last = None
        row = row_at(sequence_list, insn.address)
        if row is not None and row.line:
            last = out[insn.address] = Expected(row.line, row.column, False, insn.address)
        elif last is not None:
            out[insn.address] = Expected(last.line, last.column, True, last.source)
        elif row is None:
            out[insn.address] = None
        else:
            ordered = ordered or sorted(blocks) + [end]
            ceiling = ordered[bisect_right(ordered, insn.address)]
            after = first_line_after(sequence_list, insn.address, ceiling)
            out[insn.address] = None if after is None else Expected(after.line, after.column, True, after.address)
    return out


def places(expected: dict[int, Expected | None], shown: dict[int, Shown]
           ) -> dict[int, tuple[str | None, int, int, bool] | None]:
    """Address -> (file, line, column, inferred) of each instruction: the
    line issue 32's rule gives it, in the file objdump -l shows at the
    instruction whose row gave that line (None: no line)."""
    out: dict[int, tuple[str | None, int, int, bool] | None] = {}
    for address, found in expected.items():
        if found is None:
            out[address] = None
            continue
        origin = shown[found.source]
        assert origin.line == found.line, hex(address)
        out[address] = (origin.path, found.line, found.column, found.inferred)
    return out


def line_traffic(function: Function, insns: list[Insn], where: dict, psb: set[int]) -> dict:
    """(file, line) -> [load, store, loop load, loop store, innermost load,
    innermost store bytes per lane, accesses, inferred, AGPR copies] of the
    function's scratch accesses (isa_oracle.scratch_kind with the private
    segment buffer quads ``psb``) and v_accvgpr_write/read, by the lines
    ``where`` (places()) gives them; ("", 0) for none.  Loops: the spans of
    the backward branches (isa_oracle's rule); innermost: holding no other."""
    start, end = function.start, function.start + function.size
    mine = [i for i in insns if start <= i.address < end]
    spans = [(branch_target(i), i.address) for i in mine if is_loop_candidate(i.mnemonic)
             and start <= branch_target(i) <= i.address]
    innermost = [a for a in spans if not any(b != a and a[0] <= b[0] and b[1] <= a[1] for b in spans)]
    totals: dict = {}
    for insn in mine:
        found = where.get(insn.address)
        key = (found[0], found[1]) if found else ("", 0)
        access = scratch_kind(insn, psb)
        if access:
            kind, width = access
            figures = totals.setdefault(key, [0] * 9)
            store = kind == "store"
            figures[store] += width or 0
            if any(lo <= insn.address <= hi for lo, hi in spans):
                figures[2 + store] += width or 0
            if any(lo <= insn.address <= hi for lo, hi in innermost):
                figures[4 + store] += width or 0
            figures[6] += 1
            figures[7] += bool(found and found[3])
        elif insn.mnemonic.startswith(("v_accvgpr_write", "v_accvgpr_read")):
            totals.setdefault(key, [0] * 9)[8] += 1
    return totals


# LineTraffic's members line_traffic() gives, in its order (agpr_spill_copies is the evidence's split).
TRAFFIC_FIELDS = ("load_bytes", "store_bytes", "loop_load_bytes", "loop_store_bytes", "innermost_load_bytes",
                  "innermost_store_bytes", "accesses", "inferred", "agpr_copies")


def top_loop_lines(totals: dict, limit: int) -> tuple[list, int]:
    """report --isa's source_lines.top from line_traffic(): the lines with
    scratch bytes in loops, most innermost-loop bytes first, then loop bytes,
    bytes, accesses, copies, file and line; and how many more."""
    looping = sorted(((key, figures) for key, figures in totals.items() if figures[2] + figures[3]),
                     key=lambda item: (-(item[1][4] + item[1][5]), -(item[1][2] + item[1][3]),
                                       -(item[1][0] + item[1][1]), -item[1][6], -item[1][8], item[0]))
    return looping[:limit], max(len(looping) - limit, 0)
