"""Source lines on the matrix (issue 32), against LLVM's own tools, on the
cells built with line tables: ``clang-22-lines`` (-gline-tables-only, from the
one-machine run, tests/support/one_machine_run.py) and the debug twin of
``clang-19`` (``matrix build clang-19 --lines`` on a copy of that run's
build, the one_machine_twin fixture).  The code objects are cut out of the
libraries by LLVM's tools (llvm-readelf's section table and
clang-offload-bundler: tests/support/llvm_pipeline.py), never by spillway.

* Code identity: every function of every code object of ``clang-22-lines``
  has the SHA-256 of ``clang-22``'s, and of clang-19's twin that of
  clang-19's release: -gline-tables-only leaves the code byte-identical.
* Every instruction of every function of those code objects gets from
  spillway the line, column and ``inferred`` flag the rows of
  ``llvm-dwarfdump-22 --debug-line`` give it by issue 32's rule
  (tests/support/lines_oracle.py), and the file and line
  ``llvm-objdump-22 -d -l`` shows at it.
* Every line the library model (report.library_lines, through
  matrix.lines.cell_lines: the cell's own tables, or the twin's for the
  release's kernels) gives a scratch access, an AGPR copy, a loop head and a
  loop's back branch is that line, for every kernel of both cells.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from spillway import matrix as mx
from spillway.isa.evidence import kernel_ranges
from spillway.isa.source_lines import CODE_OBJECT, DEBUG_TWIN, PLACED, SourceLine, decoded_kernel, instruction_lines, \
    object_lines
from spillway.matrix.lines import built_twin, cell_lines
from spillway.resources.targets import processor_of
from support import isa_oracle, lines_oracle, llvm_pipeline
from support.one_machine_run import TWIN_CELL
from support.toolchains import REPO

pytestmark = pytest.mark.oracle

LINES_CELL = "clang-22-lines"


def code_objects(library: Path, work: Path) -> list[Path]:
    """The library's code objects, bundle by bundle, cut by LLVM 22's tools."""
    return llvm_pipeline.library_code_objects(library, work)


def _objdump() -> list[str]:
    argv = isa_oracle.llvm_tool("llvm-objdump", 22)
    if argv is None:
        pytest.fail("llvm-objdump-22 is not installed (scripts/install-toolchains.sh)")
    return argv


@dataclass
class OracleFunction:
    path: Path
    function: isa_oracle.Function
    expected: dict[int, lines_oracle.Expected | None]    # address -> the line issue 32's rule gives
    shown: dict[int, lines_oracle.Shown]                 # address -> what objdump -d -l shows


def oracle_lines(path: Path) -> dict[tuple[str, str], OracleFunction]:
    """(processor, function) -> its instructions' lines by LLVM's tools."""
    target = isa_oracle.readelf_target(isa_oracle.llvm_tool("llvm-readelf", 22) or [], path)
    shown = lines_oracle.objdump_lines(_objdump(), path)
    sequences = lines_oracle.sequences(lines_oracle.dwarfdump_rows(path)[0])
    insns = [s.insn for s in shown]
    by_address = {s.insn.address: s for s in shown}
    return {(target, f.name): OracleFunction(path, f, lines_oracle.expected_lines(sequences, insns, f.start,
                                                                                 f.start + f.size), by_address)
            for f in isa_oracle.read_functions(path)}


def _same(ours: SourceLine | None, oracle: OracleFunction, address: int, where) -> bool:
    """spillway's line at ``address`` is the oracle's (True: it has one)."""
    theirs = oracle.expected[address]
    if theirs is None:
        assert ours is None, where
        return False
    assert ours is not None, where
    assert (ours.line, ours.column, ours.inferred) == (theirs.line, theirs.column, theirs.inferred), where
    # objdump shows a line taken from a row after the instruction (issue 41) at that row's instruction.
    origin = oracle.shown[address if theirs.source < address else theirs.source]
    assert (ours.file, ours.line) == (origin.path, origin.line), where
    return True


@pytest.fixture(scope="module")
def cells(one_machine_run, one_machine_twin, tmp_path_factory):
    """(cell, its build folder, the library whose line tables it uses, the oracle of its code objects)."""
    work = tmp_path_factory.mktemp("lines-cells")
    found = []
    for cell, build in ((LINES_CELL, one_machine_run.outputs), (TWIN_CELL, one_machine_twin.build)):
        library = build / cell / ("lines" if cell == TWIN_CELL else "") / "libengine.so"
        paths = code_objects(library, work / cell)
        oracle: dict[tuple[str, str], OracleFunction] = {}
        for path in paths:
            for key, function in oracle_lines(path).items():
                assert key not in oracle, key           # each function once per target in the engine
                oracle[key] = function
        found.append((cell, build, library, paths, oracle))
    return found


@pytest.mark.parametrize("release, lines, build", [("clang-22", LINES_CELL, "run"), (TWIN_CELL, "twin", "twin")])
def test_line_tables_leave_every_kernel_of_the_cell_byte_identical(one_machine_run, one_machine_twin, tmp_path,
                                                                   release, lines, build):
    folder = one_machine_run.outputs if build == "run" else one_machine_twin.build
    plain = folder / release / "libengine.so"
    with_lines = folder / (lines if lines != "twin" else f"{release}/lines") / "libengine.so"

    def digests(library: Path, work: Path) -> list[dict[str, str]]:
        return [{f.name: hashlib.sha256(f.code).hexdigest() for f in isa_oracle.read_functions(path)}
                for path in code_objects(library, work)]

    ours, theirs = digests(with_lines, tmp_path / "lines"), digests(plain, tmp_path / "plain")
    assert ours == theirs
    assert len(ours) == 18 and sum(map(len, ours)) >= 66      # 6 translation units x 3 targets; 22 kernels each
    assert with_lines.read_bytes() != plain.read_bytes()       # the line tables are there
    print(f"one-machine run {one_machine_run.seconds:.1f} s; {TWIN_CELL}'s twin {one_machine_twin.seconds:.1f} s")


def test_every_instruction_has_the_line_objdump_shows(cells):
    total = inferred = unplaced = 0
    for cell, _build, _library, paths, oracle in cells:
        for path in paths:
            data = path.read_bytes()
            section, ranges = kernel_ranges(data, functions=True)
            lines = object_lines(data)
            assert lines is not None, path
            target = isa_oracle.readelf_target(isa_oracle.llvm_tool("llvm-readelf", 22) or [], path)
            for found in ranges:
                function = oracle[(target, found.name)]
                instructions = decoded_kernel(section, found.start, found.size, target)
                placed = instruction_lines(lines, found.section, found.start, found.size, instructions)
                assert [function.function.start + i.offset for i in instructions] == list(function.expected), \
                    (cell, found.name)
                for instruction, ours in zip(instructions, placed):
                    address = function.function.start + instruction.offset
                    if _same(ours, function, address, (cell, target, found.name, hex(address))):
                        total += 1
                        inferred += bool(ours and ours.inferred)
                    else:
                        unplaced += 1
    assert total > 50_000 and inferred > 100, (total, inferred, unplaced)
    print(f"{total} instructions with the line objdump shows ({inferred} inferred), {unplaced} with none")


def test_every_line_of_the_library_model_is_objdumps(cells):
    checked = 0
    for cell, build, library, _paths, oracle in cells:
        matrix = mx.load(REPO / "matrix" / "cells.toml")
        if cell == TWIN_CELL:
            assert built_twin(matrix, build, matrix.cell(cell)) == library
        kernels = cell_lines(matrix, build, matrix.cell(cell))
        assert len(kernels) == 66, cell
        for kernel in kernels:
            model = kernel.lines
            assert (model.status, model.lines_from) == (PLACED, DEBUG_TWIN if cell == TWIN_CELL else CODE_OBJECT)
            function = oracle[(processor_of(kernel.target), kernel.symbol)]
            start = function.function.start
            for placed in (*model.scratch, *model.agpr_copies):
                address = start + placed.instruction.offset
                checked += _same(placed.source, function, address, (cell, kernel.symbol, hex(address)))
            for loop in model.loops:
                checked += _same(loop.head, function, start + loop.loop.start, (cell, kernel.symbol, "head"))
                checked += _same(loop.back_branch, function, start + loop.loop.end, (cell, kernel.symbol, "back"))
            # The per-line summary adds up to what was placed.
            assert sum(t.accesses for t in model.by_line) == len(model.scratch)
            assert sum(t.agpr_copies for t in model.by_line) == len(model.agpr_copies)
    assert checked > 2_000, checked
    print(f"{checked} lines of the library model equal objdump's")


def outputs_agree(library: Path, oracle: dict[tuple[str, str], OracleFunction]) -> tuple[int, int]:
    """``spillway code --json`` and ``report --isa --json`` on the cell's
    library against the oracle: every scratch access's, AGPR copy's and loop
    end's line, every kernel's by_line and report --isa's top lines
    (tests/support/lines_oracle.py).  (lines compared, kernels)."""
    import json
    import subprocess
    import sys

    def spillway(*argv: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "spillway", *argv], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    traffic: dict[tuple[str, str], dict] = {}
    for key, found in oracle.items():
        insns = sorted((s.insn for s in found.shown.values()), key=lambda i: i.address)
        evidence = isa_oracle.evidence(found.function, insns, {})
        psb = {int(q[2:q.index(":")]) for q in evidence.private_segment_buffer}
        traffic[key] = lines_oracle.line_traffic(found.function, insns, lines_oracle.places(found.expected,
                                                                                            found.shown), psb)
    checked = 0
    code = spillway("code", str(library), "*", "--all", "--json")
    for kernel in code["kernels"]:
        key = (processor_of(kernel["target"]), kernel["symbol"].removesuffix(".kd"))
        found = oracle[key]
        where = lines_oracle.places(found.expected, found.shown)
        start = found.function.start
        assert kernel["source_lines"]["status"] == "placed", key
        for instruction in kernel["instructions"]:
            got = instruction["source"]
            if instruction["kind"] in ("scratch_load", "scratch_store", "agpr_write", "agpr_read"):
                assert (None if got is None else (got["file"], got["line"], got["column"], got["inferred"])) == \
                    where[start + instruction["offset"]], (key, hex(instruction["offset"]))
                checked += 1
        for loop in kernel["loops"]:
            for member, offset in (("head", loop["start"]), ("back_branch", loop["end"])):
                got = loop[member]
                assert (None if got is None else (got["file"], got["line"], got["column"], got["inferred"])) == \
                    where[start + offset], (key, member)
                checked += 1
        rows = {(r["file"], r["line"]): [r[f] for f in lines_oracle.TRAFFIC_FIELDS]
                for r in kernel["source_lines"]["by_line"]}
        assert rows == traffic[key], key
    report = spillway("report", "--isa", "--all", "--json", str(library))
    for record in report["kernels"]:
        key = (processor_of(record["target"]), record["symbol"].removesuffix(".kd"))
        top, more = lines_oracle.top_loop_lines(traffic[key], 8)
        lines = record["isa"]["source_lines"]
        assert [(r["file"], r["line"], [r[f] for f in lines_oracle.TRAFFIC_FIELDS]) for r in lines["top"]] == \
            [(k[0], k[1], figures) for k, figures in top], key
        assert lines["more"] == more
        checked += len(top)
    return checked, len(code["kernels"])


def test_code_and_report_print_objdumps_lines_on_the_lines_cell(cells):
    """What spillway code and report --isa print of clang-22-lines' library
    (its own line tables) is what LLVM's tools give."""
    cell, _build, library, _paths, oracle = cells[0]
    assert cell == LINES_CELL
    checked, kernels = outputs_agree(library, oracle)
    assert kernels == 66 and checked > 1_000, (checked, kernels)
    print(f"{checked} printed lines of {kernels} kernels equal objdump's")
