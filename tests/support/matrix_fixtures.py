"""Writing matrix cell files (cells.toml syntax) for tests, and the smallest
real cell (a session fixture, registered by tests/conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.toolchains import REPO, require


def cell_table(name: str, **fields) -> str:
    """A [cells.NAME] table in cells.toml syntax (strings written as JSON
    strings, which TOML's basic strings read the same)."""
    lines = [f'[cells."{name}"]']
    for key, value in fields.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, list):
            lines.append(f"{key} = [{', '.join(json.dumps(v) for v in value)}]")
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def committed_baseline(folder: Path, version: int, *parts: str) -> str:
    """The committed clang-N baseline cut to the kernels whose keys hold one of
    ``parts`` (those of the sources a reduced cells file builds): the cell is held
    to the committed figures of what it builds, and a baseline kernel it does not
    build would fail it (issue 31)."""
    document = json.loads((REPO / "checks" / "baselines" / f"clang-{version}.json").read_text())
    document["kernels"] = [k for k in document["kernels"] if any(part in k["key"] for part in parts)]
    assert document["kernels"]
    path = folder / f"clang-{version}-{parts[0]}.json"
    path.write_text(json.dumps(document, indent=2))
    return str(path)


# -- the smallest real cell: clang-19 building kernels/sampling.hip -------------------------

SMALL_CELL = "clang-19"
# token_histogram and topk_sample<32, 256> keep private arrays in scratch and read them in loops
# (report --isa's scratch_in_loops: 11 to 129), on gfx1151, gfx90a and gfx942; 1.5 s to build.
SMALL_SOURCE = "kernels/sampling.hip"


@dataclass(frozen=True)
class SmallCell:
    """One cell built once per test session (``matrix check --no-build`` reads it
    under any cells file that names the same cell, with the baseline and gate the
    test gives it)."""

    build: Path                  # the build folder: build/<cell>/libengine.so
    fields: dict                 # the repository's clang-19 cell (cells.toml)

    @property
    def library(self) -> Path:
        return self.build / SMALL_CELL / "libengine.so"

    def cells_file(self, path: Path, **override) -> Path:
        """A cells file with the one cell (its fields overridden) building SMALL_SOURCE."""
        assert (REPO / SMALL_SOURCE).is_file()
        text = ['schema = "1"', "", "[engine]", 'library = "libengine.so"', f'sources = ["{SMALL_SOURCE}"]',
                'headers = ["kernels/include", "kernels/engine"]', 'recipe = "matrix/compile.sh"', "",
                cell_table(SMALL_CELL, **dict(self.fields, **override))]
        path.write_text("\n".join(text))
        return path

    def args(self, cells: Path) -> list[str]:
        return ["--cells", str(cells), "--root", str(REPO), "--build-dir", str(self.build)]


@pytest.fixture(scope="session")
def small_cell(tmp_path_factory) -> SmallCell:
    require("clang++-19")
    require("clang-offload-bundler-19")
    folder = tmp_path_factory.mktemp("small-cell")
    fields = tomllib.loads((REPO / "matrix" / "cells.toml").read_text())["cells"][SMALL_CELL]
    cell = SmallCell(folder / "build", fields)
    cells = cell.cells_file(folder / "cells.toml")
    built = subprocess.run([sys.executable, "-m", "spillway", "matrix", "build", *cell.args(cells)],
                           capture_output=True, text=True)
    assert built.returncode == 0 and cell.library.is_file(), built.stdout + built.stderr
    return cell
