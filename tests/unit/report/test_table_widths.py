"""Tables where nothing is cut and no two kernels look alike (issue 25).

Every text table (report, check, compare, matrix compare) rendered by the
command itself at 80 and 120 columns, on a library built here from
tests/data/tables/colliding.hip: template kernels whose names agree up to deep
inside their arguments, for a long target ID (gfx90a:sramecc+:xnack-), each
kernel in two bundles (identical records).  Read back with
support.table_scan: no table line longer than the width, no header and no
figure or target cut (only name-like cells, left of the target column, elide),
distinct kernels under distinct labels, identical records one row with a count.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from support import table_scan
from support.matrix_fixtures import cell_table
from support.toolchains import REPO, require

SOURCE = REPO / "tests" / "data" / "tables" / "colliding.hip"
TARGETS = ["gfx90a:sramecc+:xnack-", "gfx1100"]
WIDTHS = (80, 120)
# The matrix's local cells' names (the real cells.toml's, in its order: nine of them): long ones fold
# or are numbered, never cut.
CELLS = tuple(name for name, cell in tomllib.loads((REPO / "matrix" / "cells.toml").read_text())["cells"].items()
              if cell["source"] == "debian")


@pytest.fixture(scope="module")
def libraries(builder) -> dict[str, Path]:
    """old and new: each the kernels compiled twice (two bundles, the same
    kernels) into one shared library; new with larger private arrays (-DSTEP=2)."""
    require("clang++-22")
    out = {}
    for side, extra in (("old", ()), ("new", ("-DSTEP=2",))):
        # Two translation units from one source (-DCOPY tells their CUIDs apart).
        objects = [builder.hip(22, SOURCE, TARGETS, f"-DCOPY={copy}", *extra) for copy in (1, 2)]
        out[side] = builder.link(22, objects, f"lib{side}.so", "-shared")
    return out


def spillway(*argv, columns: int, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS=str(columns))
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run([sys.executable, "-m", "spillway", *map(str, argv)], capture_output=True, text=True,
                          env=env, cwd=cwd)


def on_a_terminal(*argv, columns: int) -> str:
    """What a command prints on a terminal (check's table is only drawn there), colours stripped."""
    env = dict(os.environ, COLUMNS=str(columns), TERM="xterm")
    env.pop("GITHUB_ACTIONS", None)
    main, secondary = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "spillway", *map(str, argv)], stdout=secondary,
                               stderr=subprocess.DEVNULL, env=env)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait()
    os.close(main)
    text = b"".join(chunks).decode().replace("\r\n", "\n")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def records(path: Path) -> list[dict]:
    result = spillway("report", "--json", path, columns=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["kernels"]


def assert_fits(text: str, width: int) -> list[table_scan.Table]:
    found = table_scan.tables(text)
    assert found, text
    assert table_scan.problems(text, width) == [], text
    return found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("isa", [False, True])
def test_report_fits_and_merges_identical_records(libraries, width, isa):
    kernels = records(libraries["old"])
    assert len(kernels) == 24 and {k["target"] for k in kernels} == set(TARGETS)   # JSON keeps every record
    result = spillway("report", "--all", *(["--isa"] if isa else []), libraries["old"], columns=width)
    assert result.returncode == 0, result.stderr
    (table,) = assert_fits(result.stdout, width)
    shown = table_scan.labels(table)
    distinct = {(k["name"], k["target"]) for k in kernels}
    # One row per kernel and target (each was in both bundles, with the same figures), told apart.
    assert len(shown) == len(distinct) == 12 and len(set(shown)) == 12, result.stdout
    assert all(" ×2 " in row for row in table.rows), result.stdout
    assert "12 records merged" in result.stdout
    names = {label for label, _ in shown}
    assert len(names) == len({k["name"] for k in kernels}) == 6          # six names, six labels
    if width == 80:
        assert "not shown at 80 columns:" in result.stdout               # the columns left out are named


@pytest.mark.parametrize("width", WIDTHS)
def test_report_of_two_libraries_keeps_files_apart(libraries, width, tmp_path):
    copies = []
    for side in ("old", "new"):
        copy = tmp_path / f"build-{side}" / "lib" / "libkernels.so"
        copy.parent.mkdir(parents=True)
        shutil.copyfile(libraries[side], copy)
        copies.append(copy)
    result = spillway("report", *copies, columns=width)
    assert result.returncode == 0, result.stderr
    (table,) = assert_fits(result.stdout, width)
    files = {row.split()[0] for row in table.rows}
    assert len(files) == 2, result.stdout                  # the two paths never read alike
    assert len(table.rows) == 24                           # 12 per library, merged within each


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("isa", [False, True])
def test_compare_fits(libraries, width, isa):
    result = spillway("compare", libraries["new"], "--against", libraries["old"], "--all",
                      *(["--isa"] if isa else []), columns=width)
    assert result.returncode == 0, result.stderr
    (table,) = assert_fits(result.stdout, width)
    shown = table_scan.labels(table)
    assert len(shown) == len(set(shown)) == 12, result.stdout


@pytest.mark.parametrize("width", WIDTHS)
def test_check_fits_on_a_terminal(libraries, width, tmp_path):
    baseline = tmp_path / "base.json"
    wrote = spillway("baseline", "write", libraries["old"], "-o", baseline, "--gate", "scratch,vgprs", "--note", "old",
                     columns=width)
    assert wrote.returncode == 0, wrote.stderr
    text = on_a_terminal("check", libraries["new"], "--baseline", baseline, columns=width)
    (table,) = assert_fits(text, width)
    shown = table_scan.labels(table)
    assert len(shown) >= 12, text
    # A kernel and target fails on several metrics: one row each, the same label for the same kernel only.
    by_label: dict[str, set[str]] = {}
    for label, target in shown:
        by_label.setdefault(label, set()).add(target)
    assert len(by_label) == 6, text


@pytest.mark.parametrize("width", WIDTHS)
def test_matrix_compare_fits(libraries, width, tmp_path):
    """The local cells side by side (the real cells' names: eleven), their builds
    the two libraries in turn: the figures in which the cells differ, one a line."""
    assert len(CELLS) == 11 and "clang-22-lines" in CELLS and "rocm-10.0-amd-llvm23" in CELLS
    cells = tmp_path / "cells.toml"
    text = ['schema = "1"', "", "[engine]", 'library = "libengine.so"', 'sources = ["kernels/rmsnorm.hip"]',
            'headers = ["kernels/include"]', 'recipe = "matrix/compile.sh"', ""]
    build = tmp_path / "build"
    for index, name in enumerate(CELLS):
        text.append(cell_table(name, compiler="clang", clang="22", cxx="clang++-22", source="debian",
                               packages=["clang-22"], targets=["gfx90a", "gfx1100"],
                               baseline=f"checks/baselines/{name}.json"))
        (build / name).mkdir(parents=True)
        shutil.copyfile(libraries["old" if index % 2 else "new"], build / name / "libengine.so")
    cells.write_text("\n".join(text))
    args = ["--cells", cells, "--root", REPO, "--build-dir", build]
    result = spillway("matrix", "compare", "--summary", *args, columns=width)
    assert result.returncode == 0, result.stderr
    (table,) = assert_fits(result.stdout, width)
    shown = table_scan.labels(table)
    assert len(shown) == len(set(shown)) == 12, result.stdout
    header = "\n".join(table.header)
    if width == 120:
        assert all(part in header for part in ("clang-22-", "offload-", "lto", "lines", "debian-", "rocm-", "7.2.4"))
    else:
        assert "5 = clang-22-offload-lto" in " ".join(result.stdout.split()), result.stdout   # the legend
    assert "0 are the same in every cell" in result.stdout
    pair = spillway("matrix", "compare", *args, "clang-15", "clang-16", columns=width)
    assert pair.returncode == 0, pair.stderr
    assert_fits(pair.stdout, width)


# -- the rules, on synthetic rows ------------------------------------------------------------

def record(name: str = "void k<1>(float*)", target: str = "gfx90a:sramecc+:xnack-", file: str = "lib.so",
           **figures) -> dict:
    base = {"file": file, "name": name, "target": target, "vgpr_count": 32, "agpr_count": 0, "sgpr_count": 16,
            "vgpr_spill_count": 0, "sgpr_spill_count": 0, "private_segment_fixed_size": 0,
            "uses_dynamic_stack": False, "scratch_cause": "none", "group_segment_fixed_size": 0, "occupancy": 8,
            "occupancy_limit": "vgpr", "occupancy_next": None}
    return dict(base, **figures)


def test_identical_records_merge_and_nothing_else_does():
    """The rule: one row when every cell the table has is equal (full name,
    target, file when files are shown, every figure, those a narrow table
    leaves out included)."""
    from spillway.render.table import kernel_rows, merge_copies

    kernels = [record(), record(), record(), record(group_segment_fixed_size=64),   # LDS differs (a dropped column)
               record(target="gfx90a:sramecc-:xnack-"), record(name="void k<2>(float*)"), record(file="other.so")]
    columns, rows = kernel_rows(kernels)
    columns, merged, count = merge_copies(columns, rows)
    # (Without a file column, one input: the last record is the first one's fourth copy.)
    assert count == 3 and len(merged) == 4
    at = [c.header for c in columns].index("×")
    assert [row[at] for row in merged] == ["×4", "", "", ""]
    # With a file column (several inputs) the files tell records apart.
    columns, rows = kernel_rows(kernels, files={"lib.so": "lib.so", "other.so": "other.so"})
    assert merge_copies(columns, rows)[2] == 2
    columns, rows = kernel_rows([record(), record(vgpr_count=33)])
    assert merge_copies(columns, rows)[2] == 0 and len(merge_copies(columns, rows)[0]) == len(columns)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_grid_cuts_only_names(width):
    """A header or figure is never cut at any width: headers fold, optional
    columns go (named in a note), short headers with a legend; only the name
    column and elidable name-like columns shorten."""
    import io

    from rich.console import Console

    from spillway.render.grid import Column, KernelName, grid

    columns = [Column("file", elide=True, min_width=8), Column("kernel", name=True), Column("target"),
               Column("scratch B/lane", "right"), Column("waves/SIMD", "right"),
               Column("an optional column", drop=1), Column("debian-rocm-7.2.4", "right", short="1")]
    rows = [[f"folder-{i}/libkernels.so", KernelName(f"void ns::kernel<{i}, float>(float*)"),
             "gfx90a:sramecc+:xnack-", str(1000 * i), str(i), "words words", f"{i * 123456}"] for i in range(1, 6)]
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, force_terminal=False)
    table = grid(console, columns, rows)
    console.print(table)
    text = out.getvalue()
    for row in rows:
        for cell in row[2:5] + row[6:]:
            assert cell in text, text                          # every figure whole
    assert "gfx90a:sramecc+:xnack-" in text
    header = [line for line in text.splitlines() if "kernel" in line][0]
    assert "…" not in header
    if width <= 80:
        assert "not shown at" in text and "an optional column" in text.split("not shown at")[1]
    if width >= 120:
        assert "words words" in text


@pytest.mark.parametrize("tier", ["fast", "matrix", "rocm"])
def test_recorded_outputs_hold_no_cut_table(tier):
    """Every text table the golden outputs record (tests/data/golden: report,
    check, compare and the matrix on the committed fixtures, the matrix's
    builds and librocsparse1, at 80 and 120 columns) fits its width with
    nothing but names cut; outputs recorded as digests are the larger ones."""
    from support import golden

    scanned = 0
    for steps in golden.load_records(tier).values():
        for name, record in steps.items():
            text = record["stdout"].get("text")
            if text is None or not table_scan.tables(text):
                continue
            scanned += 1
            assert table_scan.problems(text, record["columns"]) == [], (name, text)
    assert scanned >= {"fast": 20, "matrix": 2, "rocm": 0}[tier]
