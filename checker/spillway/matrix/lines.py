"""Source lines of a cell's kernels (issue 32): from the cell's own build when
its flags give line tables (``clang-22-lines``), else from its debug twin
when its last build made one (``lines = "twin"``, ``matrix build --lines``),
else none (each kernel's ``KernelLines.status`` says there is no line table).

A twin is used only as the build that made the library recorded it: its
``build.json`` names the twin with the stamp of the twin's link and the flags
it was built with, and the twin on disk has that stamp (a later build without
a twin drops the record, so a twin left from older sources, whose lines may
have moved with the code unchanged, is never read).  Within a twin, a
kernel's lines are used only where its code is the release's
(report.library_lines).
"""

from __future__ import annotations

from pathlib import Path

from spillway import json_codec

from spillway.matrix.build import TWIN_DIR, cell_dir, library_path
from spillway.matrix.cells import Cell, Matrix
from spillway.report.library_lines import KernelSourceLines, library_lines
from spillway.report.reader import ReadOptions


def built_twin(matrix: Matrix, build_dir: Path, cell: Cell) -> Path | None:
    """The debug twin of the cell's last build, when it made one."""
    folder = cell_dir(build_dir, cell)
    try:
        recorded = json_codec.loads((folder / "build.json").read_bytes()).get("lines")
    except (OSError, json_codec.JSONDecodeError, AttributeError):
        return None
    if not isinstance(recorded, dict) or recorded.get("flags") != cell.twin_flags():
        return None
    twin = folder / TWIN_DIR / matrix.engine.library
    if recorded.get("library") != f"{TWIN_DIR}/{matrix.engine.library}" or not twin.is_file():
        return None
    try:
        stamp = twin.with_name(twin.name + ".stamp").read_text().strip()
    except OSError:
        return None
    return twin if stamp and stamp == recorded.get("stamp") else None


def cell_lines(matrix: Matrix, build_dir: Path, cell: Cell, wanted: set[tuple[str, str]] | None = None,
               options: ReadOptions | None = None) -> list[KernelSourceLines]:
    """report.library_lines() of the cell's library: its own lines, or its
    twin's (``wanted``: (target, key) pairs; None: every kernel).  Raises
    InputError as the reader does (a library not built: "cannot read")."""
    library = library_path(matrix, build_dir, cell)
    twin = None if cell.line_tables else built_twin(matrix, build_dir, cell)
    return library_lines([str(library)], options, wanted, [str(twin)] if twin else None)
