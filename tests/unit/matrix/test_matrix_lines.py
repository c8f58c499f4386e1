"""Source lines in the matrix (issue 32): the cells file's rules for line
tables, debug twins built beside a cell's release build (cells.toml
``lines = "twin"``, ``matrix build --lines``), and the library model that
takes a twin's lines for the release's kernels only where their code is the
same (report.library_lines, matrix.lines).

Built on the session's small cell (clang-19 building kernels/sampling.hip,
tests/support/matrix_fixtures.py), copied: its twin and a clang-19 cell
with -O1 (other code) and line tables are about 5 s of compiling.  Every line against LLVM's tools on the whole matrix:
tests/oracle/test_lines_matrix_cells.py.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spillway import matrix as mx
from spillway.errors import InputError, UsageError
from spillway.isa.source_lines import CODE_DIFFERS, CODE_OBJECT, DEBUG_TWIN, NO_LINE_TABLE, NOT_IN_TWIN, PLACED
from spillway.matrix.lines import built_twin, cell_lines
from spillway.report.library_lines import library_lines
from support.matrix_fixtures import SMALL_CELL, SMALL_SOURCE, cell_table
from support.toolchains import REPO

CELLS = REPO / "matrix" / "cells.toml"
HOST_SOURCE = "kernels/engine/dispatch.cpp"


def spillway(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spillway", *argv], capture_output=True, text=True, cwd=REPO)


# -- the cells file ------------------------------------------------------------------------

def _load_with(tmp_path: Path, old: str, new: str) -> mx.Matrix:
    text = CELLS.read_text()
    assert old in text
    path = tmp_path / "cells.toml"
    path.write_text(text.replace(old, new, 1))
    return mx.load(path, REPO)


def test_the_lines_cell_is_clang_22_with_line_tables_only():
    matrix = mx.load(CELLS)
    lines, base = matrix.cells["clang-22-lines"], matrix.cells["clang-22"]
    same = {"name", "description", "baseline", "flags"}
    assert lines.model_dump(exclude=same) == base.model_dump(exclude=same)
    assert lines.flags == ["-gline-tables-only"] and lines.line_tables and not base.line_tables
    # No committed cell asks for a twin: the default run builds what it always built.
    assert all(cell.lines == "" for cell in matrix.cells.values())


@pytest.mark.parametrize("flags, message", [
    ('["-gline-tables-only", "-gdwarf-4"]', "-gline-tables-only -gdwarf-4 is full debug information"),
    ('["-gline-tables-only", "-gdwarf"]', "write -gdwarf -gline-tables-only for line tables only"),
])
def test_line_tables_then_a_dwarf_version_is_refused(tmp_path, flags, message):
    """clang's last -g option sets the level: -gdwarf-4 after
    -gline-tables-only is full debug information, which changes code."""
    with pytest.raises(UsageError) as error:
        _load_with(tmp_path, 'flags = ["-gline-tables-only"]', f"flags = {flags}")
    assert message in str(error.value) and "cells.clang-22-lines" in str(error.value)
    result = spillway("matrix", "list", "--cells", str(tmp_path / "cells.toml"), "--root", str(REPO))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1 and message in result.stderr


def test_which_flags_give_line_tables(tmp_path):
    for flags, own in [('["-gdwarf-4", "-gline-tables-only"]', True), ('["-gline-tables-only", "-g0"]', False),
                       ('["-g"]', True), ('["-DNDEBUG"]', False)]:
        matrix = _load_with(tmp_path, 'flags = ["-gline-tables-only"]', f"flags = {flags}")
        assert matrix.cells["clang-22-lines"].line_tables is own, flags


def test_a_twin_of_a_cell_with_line_tables_is_refused(tmp_path):
    with pytest.raises(UsageError, match=r'lines = "twin": the cell\'s own flags \(-gline-tables-only\) already'):
        _load_with(tmp_path, 'flags = ["-gline-tables-only"]', 'flags = ["-gline-tables-only"]\nlines = "twin"')
    with pytest.raises(UsageError, match=r"clang-19\.lines: must be one of"):
        _load_with(tmp_path, 'baseline = "checks/baselines/clang-19.json"',
                   'baseline = "checks/baselines/clang-19.json"\nlines = "yes"')


# -- twins, built ------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Built:
    folder: Path
    build: Path

    def cells(self, **fields) -> Path:
        """A cells file: the small cell (its fields overridden) and an -O1 line-table
        variant, building the kernel source and a host source."""
        base = json.loads((self.folder / "fields.json").read_text())
        text = ['schema = "1"', "", "[engine]", 'library = "libengine.so"',
                f'sources = ["{SMALL_SOURCE}", "{HOST_SOURCE}"]',
                'headers = ["kernels/include", "kernels/engine"]', 'recipe = "matrix/compile.sh"', "",
                cell_table(SMALL_CELL, **dict(base, **fields)),
                cell_table("clang-19-o1-lines", **dict(base, flags=["-O1", "-gline-tables-only"]))]
        path = self.folder / "cells.toml"
        path.write_text("\n".join(text))
        return path

    def run(self, *argv: str, **fields) -> subprocess.CompletedProcess:
        done = spillway("matrix", "build", *argv, "--cells", str(self.cells(**fields)), "--root", str(REPO),
                        "--build-dir", str(self.build))
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    def matrix(self, **fields) -> mx.Matrix:
        return mx.load(self.cells(**fields), REPO)

    def library(self, cell: str, twin: bool = False) -> str:
        return str(self.build / cell / ("lines" if twin else "") / "libengine.so")


@pytest.fixture(scope="module")
def built(small_cell, tmp_path_factory) -> Built:
    folder = tmp_path_factory.mktemp("twins")
    (folder / "fields.json").write_text(json.dumps(small_cell.fields))
    found = Built(folder, folder / "build")
    shutil.copytree(small_cell.build / SMALL_CELL, found.build / SMALL_CELL)   # its objects: not compiled again
    found.run(SMALL_CELL)
    return found


def _mtimes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file() and not p.name.endswith(".json")}


def test_no_twin_is_built_unless_asked_for(built):
    cell = built.build / SMALL_CELL
    document = json.loads((cell / "build.json").read_text())
    assert "lines" not in document and not (cell / "lines").exists()
    assert not list((cell / "obj").glob("*.lines.o*"))


def test_a_twin_is_built_beside_the_release_which_stays_as_it_was(built):
    cell = built.build / SMALL_CELL
    before, release = json.loads((cell / "build.json").read_text()), _mtimes(cell) | _mtimes(cell / "obj")
    done = built.run(SMALL_CELL, "--lines")
    # Only the kernel source is compiled again (the host object is the release's), and linked.
    assert "[clang-19] compiled sampling.hip (lines)" in done.stderr
    assert "[clang-19] linked libengine.so (lines)" in done.stderr
    assert "compiled dispatch.cpp" not in done.stderr and not re.search(r"compiled sampling\.hip \(\d", done.stderr)
    assert f"BUILT    clang-19: {built.library(SMALL_CELL)}".replace(str(REPO) + "/", "") in done.stdout
    assert f"debug twin {built.library(SMALL_CELL, twin=True)})" in done.stdout
    assert {**_mtimes(cell), **_mtimes(cell / "obj")}.items() >= release.items()     # the release untouched
    after = json.loads((cell / "build.json").read_text())
    lines = after.pop("lines")
    assert after == {**before, "status": "built"}
    assert lines["library"] == "lines/libengine.so" and lines["flags"] == ["-gline-tables-only"]
    assert lines["stamp"] == (cell / "lines" / "libengine.so.stamp").read_text().strip()
    assert sorted(p.name for p in (cell / "obj").glob("*.lines.o")) == ["sampling.hip.lines.o"]
    # The twin's compile: the cell's flags, then line tables only, last (a -gdwarf-N of the cell's sets the version).
    matrix = built.matrix(flags=["-gdwarf-4"])
    env = mx.recipe_environment(matrix, matrix.cell(SMALL_CELL), twin=True)
    printed = subprocess.run(["bash", str(REPO / "matrix" / "compile.sh"), "print", "compile", SMALL_SOURCE, "x.o"],
                             capture_output=True, text=True, env={"PATH": os.environ["PATH"], **env}, cwd=REPO)
    assert "-O3 -fPIC -gdwarf-4 -gline-tables-only -c" in printed.stdout, printed.stdout + printed.stderr
    assert built_twin(built.matrix(), built.build, built.matrix().cell(SMALL_CELL)) == cell / "lines" / "libengine.so"
    again = built.run(SMALL_CELL, "--lines")
    assert "UP TO DATE clang-19" in again.stdout and "debug twin" in again.stdout and "compiled" not in again.stderr


def test_a_build_without_the_twin_forgets_it_and_the_field_asks_for_it(built):
    cell = built.build / SMALL_CELL
    built.run(SMALL_CELL, "--lines")
    plain = built.run(SMALL_CELL)
    assert "UP TO DATE clang-19" in plain.stdout and "debug twin" not in plain.stdout
    assert "lines" not in json.loads((cell / "build.json").read_text())
    matrix = built.matrix()
    assert built_twin(matrix, built.build, matrix.cell(SMALL_CELL)) is None     # left on disk, never read
    assert {k.lines.status for k in cell_lines(matrix, built.build, matrix.cell(SMALL_CELL))} == {NO_LINE_TABLE}
    asked = built.run(SMALL_CELL, lines="twin")
    assert "UP TO DATE clang-19" in asked.stdout and "debug twin" in asked.stdout and "compiled" not in asked.stderr
    matrix = built.matrix(lines="twin")
    assert built_twin(matrix, built.build, matrix.cell(SMALL_CELL)) is not None
    # A twin whose stamp is not the one build.json records (built again elsewhere) is not read.
    stamp = cell / "lines" / "libengine.so.stamp"
    kept = stamp.read_text()
    stamp.write_text("0" * 64 + "\n")
    try:
        assert built_twin(matrix, built.build, matrix.cell(SMALL_CELL)) is None
    finally:
        stamp.write_text(kept)


def test_no_twin_for_a_cell_with_line_tables_of_its_own():
    matrix = mx.load(CELLS)
    builder = mx.Builder(matrix, REPO / "build", lines=True)
    assert not builder.wants_twin(matrix.cell("clang-22-lines")) and builder.wants_twin(matrix.cell("clang-22"))
    assert not mx.Builder(matrix, REPO / "build").wants_twin(matrix.cell("clang-22"))


def test_twin_lines_are_the_lines_of_a_build_with_line_tables(built):
    """The release's kernels take the twin's lines (the code is the same): the
    lines the twin, a build with line tables, has itself."""
    built.run(SMALL_CELL, "--lines")
    matrix = built.matrix()
    twin = cell_lines(matrix, built.build, matrix.cell(SMALL_CELL))
    own = library_lines([built.library(SMALL_CELL, twin=True)])
    assert len(twin) == len(own) == 9        # sampling.hip's three kernels x gfx1151, gfx90a, gfx942
    assert {(k.lines.status, k.lines.lines_from) for k in twin} == {(PLACED, DEBUG_TWIN)}
    assert {(k.lines.status, k.lines.lines_from) for k in own} == {(PLACED, CODE_OBJECT)}
    for ours, theirs in zip(twin, own):
        assert (ours.target, ours.key) == (theirs.target, theirs.key)
        assert dataclasses.replace(ours.lines, lines_from=CODE_OBJECT) == theirs.lines
    placed = [p for k in twin for p in k.lines.scratch]
    assert len(placed) > 50 and all(p.source and p.source.file == str(REPO / SMALL_SOURCE) for p in placed)
    assert all(p.source and p.source.file for k in twin for p in k.lines.scratch)
    assert sum(t.innermost_load_bytes + t.innermost_store_bytes for k in twin for t in k.lines.by_line) > 0


def test_a_twin_with_other_code_gives_no_lines_for_it(built):
    """A twin whose code differs (here: built at -O1) lends no line to the
    kernels whose code differs, and says so."""
    built.run(SMALL_CELL, "clang-19-o1-lines")
    found = library_lines([built.library(SMALL_CELL)], twin=[built.library("clang-19-o1-lines")])
    differing = [k for k in found if k.lines.status == CODE_DIFFERS]
    assert differing and all(k.lines.lines_code_sha256 != k.lines.code_sha256 for k in differing)
    assert all(not (k.lines.scratch or k.lines.loops or k.lines.by_line or k.lines.lines_from) for k in differing)
    for k in found:
        assert k.lines.status in (CODE_DIFFERS, PLACED)
        assert (k.lines.status == PLACED) == (k.lines.lines_code_sha256 == k.lines.code_sha256)


def test_kernels_pair_with_the_twin_by_place(built):
    """The n-th code object of a target holding a kernel pairs with the twin's
    n-th: the library read twice pairs both times with a twin read twice, and
    only the first time with a twin read once."""
    built.run(SMALL_CELL, "--lines")
    release, twin = built.library(SMALL_CELL), built.library(SMALL_CELL, twin=True)
    once = library_lines([release], twin=[twin])
    twice = library_lines([release, release], twin=[twin, twin])
    assert [k.lines for k in twice] == [k.lines for k in once] * 2
    short = library_lines([release, release], twin=[twin])
    assert [k.lines for k in short[:len(once)]] == [k.lines for k in once]
    assert {(k.lines.status, k.lines.lines_code_sha256) for k in short[len(once):]} == {(NOT_IN_TWIN, "")}
    # Chosen kernels only.
    chosen = {(once[0].target, once[0].key)}
    assert [k.lines for k in library_lines([release], wanted=chosen, twin=[twin])] == [once[0].lines]


def test_a_twin_that_is_not_one_is_a_one_line_error(built, tmp_path):
    release = built.library(SMALL_CELL)
    text = tmp_path / "twin.so"
    text.write_text("not a library\n")
    with pytest.raises(InputError, match=rf"^debug twin {text}: not an ELF file"):
        library_lines([release], twin=[str(text)])
    with pytest.raises(InputError, match=r"^debug twin .*missing\.so: cannot read"):
        library_lines([release], twin=[str(tmp_path / "missing.so")])
