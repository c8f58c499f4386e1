"""The toolchain matrix: matrix/cells.toml, the shared recipe, and
`spillway matrix list|build|check|compare|baseline|run` on real compilers.

Cells are built into temporary folders from the repository's own kernels.
Most tests use a reduced cells file (one or two translation units) so they
take seconds; one test builds the real matrix and checks it against the
committed baselines, as a fresh machine would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from spillway import matrix as mx
from spillway.errors import UsageError
from spillway.matrix.summary import target_group
from support.hostile_sinks import without_brackets
from support import table_scan
from support.matrix_fixtures import cell_table, committed_baseline
from support.toolchains import REPO, require

CELLS = REPO / "matrix" / "cells.toml"
RECIPE = REPO / "matrix" / "compile.sh"


def spillway(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the spillway command as a user would (stdout not a terminal)."""
    return subprocess.run([sys.executable, "-m", "spillway", *argv], capture_output=True, text=True,
                          cwd=cwd or REPO)


def debian_cell(version: int, **override) -> dict:
    """The real cells.toml's clang-N cell, with fields overridden."""
    cells = tomllib.loads(CELLS.read_text())["cells"]
    return dict(cells[f"clang-{version}"], **override)


def cells_file(tmp_path: Path, cells: dict[str, dict], sources=("kernels/rmsnorm.hip",)) -> Path:
    text = ['schema = "1"', "", "[engine]", 'library = "libengine.so"',
            f"sources = [{', '.join(json.dumps(s) for s in sources)}]",
            'headers = ["kernels/include", "kernels/engine"]', 'recipe = "matrix/compile.sh"', ""]
    for name, fields in cells.items():
        text.append(cell_table(name, **fields))
    path = tmp_path / "cells.toml"
    path.write_text("\n".join(text))
    return path


def matrix_args(cells: Path, build: Path) -> list[str]:
    return ["--cells", str(cells), "--root", str(REPO), "--build-dir", str(build)]


def built_debian_cells(tmp_path: Path, versions: tuple[int, ...], source: str) -> tuple[Path, Path]:
    """(cells file, build folder) of the clang-N cells built from one source."""
    for version in versions:
        require(f"clang++-{version}")
    path = cells_file(tmp_path, {f"clang-{v}": debian_cell(v) for v in versions}, sources=(source,))
    build = tmp_path / "build"
    assert spillway("matrix", "build", *matrix_args(path, build)).returncode == 0
    return path, build


# -- the cells file ----------------------------------------------------------------------

def test_repository_cells_file_is_valid_and_complete():
    matrix = mx.load(CELLS)
    assert matrix.root == REPO
    assert {"rocm-7.2.3-clang22", "rocm-10.0-clang23", "clang-15", "clang-16", "clang-19", "clang-22"} <= \
        set(matrix.cells)
    # Every kernel file and engine file is built by every cell.
    on_disk = {str(p.relative_to(REPO)) for p in [*REPO.glob("kernels/*.hip"), *REPO.glob("kernels/engine/*.cpp")]}
    assert on_disk == set(matrix.engine.sources)
    for cell in matrix.cells.values():
        assert cell.baseline == f"checks/baselines/{cell.name}.json"
        if cell.local:
            # Local cells have committed baselines, and their packages are what the install script installs.
            assert (REPO / cell.baseline).is_file(), cell.name
            assert f"clang-offload-bundler-{cell.clang}" in cell.requires
        else:
            assert cell.rocm and cell.compiler == "amdclang"
    assert matrix.cells["clang-15"].targets == ["gfx1100", "gfx90a"]
    assert matrix.cells["clang-22"].targets == ["gfx1151", "gfx90a", "gfx942"]
    # The flag variant is the clang-22 cell but for its flags (and its name, description and baseline).
    variant, base = matrix.cells["clang-22-offload-lto"], matrix.cells["clang-22"]
    same = {"name", "description", "baseline", "flags"}
    assert variant.model_dump(exclude=same) == base.model_dump(exclude=same)
    assert (base.flags, variant.flags) == ([], ["-foffload-lto"])


def test_cells_file_keeps_to_toml_nix_reads():
    text = CELLS.read_text()
    document = tomllib.loads(text)

    def walk(value, where):
        assert not isinstance(value, float), f"{where}: a float (write versions as strings)"
        assert not hasattr(value, "isoformat"), f"{where}: dates and times are not read by Nix 2.8"
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{where}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]")
    walk(document, "cells.toml")
    for cell in document["cells"].values():
        assert isinstance(cell["clang"], str) and isinstance(cell.get("rocm", ""), str)


def test_nix_reads_the_cells_file_like_python():
    nix = shutil.which("nix")
    if not nix:
        pytest.skip("nix is not installed")
    result = subprocess.run(
        [nix, "eval", "--json", "--impure", "--expr", f"builtins.fromTOML (builtins.readFile {CELLS})"],
        capture_output=True, text=True,
        env=dict(os.environ, NIX_CONFIG="experimental-features = nix-command flakes\nsubstituters ="))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == tomllib.loads(CELLS.read_text())


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('schema = "2"', "schema = 1"), "schema: Input should be a valid string"),
    (lambda t: t.replace('targets = ["gfx1100", "gfx90a"]\ncode_object_version = "4"',
                         'targets = ["gfx1151", "gfx90a"]\ncode_object_version = "4"', 1),
     "clang 15 does not know gfx1151"),
    (lambda t: t.replace('[cells.clang-16]\n', '[cells.clang-16]\ncolour = "blue"\n'),
     "cells.clang-16.colour: unknown field"),
    (lambda t: t.replace('rocm = "7.2.3"', "rocm = 7.2"), 'cells."rocm-7.2.3-clang22".rocm'),
    (lambda t: t.replace('source = "tarball"', 'source = "ftp"'), "must be one of"),
    (lambda t: t.replace('targets = ["gfx1100", "gfx90a"]', 'targets = ["sm_90"]', 1), "not an offload target"),
    (lambda t: t.replace('cxx = "clang++-16"', 'cxx = "clang++-16"\ncompress = true').replace(
        'compress = true\npackages = ["clang-16"', 'packages = ["clang-16"').replace(
        'code_object_version = "4"\ncompress = false\nflags = []\nbaseline = "checks/baselines/clang-16.json"',
        'code_object_version = "4"\ncompress = true\nflags = []\nbaseline = "checks/baselines/clang-16.json"'),
     "compress = true needs clang >= 19"),
    (lambda t: t.replace("[engine]", "[engine\n"), "not valid TOML"),
])
def test_bad_cells_files_give_one_clear_line(tmp_path, change, message):
    bad = tmp_path / "cells.toml"
    bad.write_text(change(CELLS.read_text()))
    with pytest.raises(UsageError) as error:
        mx.load(bad, REPO)
    assert message in str(error.value)
    assert str(bad) in str(error.value)
    result = spillway("matrix", "list", "--cells", str(bad), "--root", str(REPO))
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_unknown_cell_is_a_usage_error(tmp_path):
    result = spillway("matrix", "check", "clang-7", *matrix_args(CELLS, tmp_path / "build"))
    assert result.returncode == 2
    assert "no cell 'clang-7'" in result.stderr


# -- availability ------------------------------------------------------------------------

def test_probe_reports_why_a_toolchain_is_missing(tmp_path):
    clang19 = require("clang++-19")
    path = cells_file(tmp_path, {
        "clang-99": debian_cell(19, clang="99", cxx="clang++-99", packages=["clang-99"], requires=[]),
        "wrong-version": debian_cell(19, clang="18", requires=[]),
        "no-bundler": debian_cell(19, requires=["clang-offload-bundler-99"]),
        "fake-rocm": debian_cell(19, source="nixpkgs", rocm="7.2.3", compiler="amdclang", packages=[], requires=[]),
        "here": debian_cell(19, cxx=clang19),
    })
    matrix = mx.load(path, REPO)
    reasons = {name: mx.probe(cell) for name, cell in matrix.cells.items()}
    assert reasons["clang-99"].reason.startswith("clang++-99 not found (apt-get install clang-99")
    assert "clang++-19 is clang 19." in reasons["wrong-version"].reason
    assert "the cell wants clang 18" in reasons["wrong-version"].reason
    assert reasons["no-bundler"].reason.startswith("clang-offload-bundler-99 not found")
    assert "not a ROCm/AMD clang" in reasons["fake-rocm"].reason
    assert reasons["here"].available and "clang version 19" in reasons["here"].version

    listing = spillway("matrix", "list", *matrix_args(path, tmp_path / "build"))
    assert listing.returncode == 0
    assert "clang-99" in listing.stdout        # the reason is in the table, wrapped to its width (JSON below)
    assert "1 of 5 cells available here" in listing.stdout
    document = json.loads(spillway("matrix", "list", "--json", *matrix_args(path, tmp_path / "b")).stdout)
    assert [c["available"] for c in document["cells"]] == [False, False, False, False, True]
    assert document["cells"][0]["reason"].startswith("clang++-99 not found (apt-get install clang-99")


# -- the recipe --------------------------------------------------------------------------

def recipe(*argv: str, **env) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("SPW_")}
    full.update(env)
    return subprocess.run(["bash", str(RECIPE), *argv], capture_output=True, text=True, env=full)


def test_recipe_spells_the_cell_flags():
    result = recipe("print", "compile", "kernels/rmsnorm.hip", "out.o", SPW_CXX="clang++-22",
                    SPW_TARGETS="gfx1151,gfx90a gfx942", SPW_COV="6", SPW_COMPRESS="1",
                    SPW_FLAGS="-mllvm -amdgpu-schedule-metric-bias=100", SPW_INCLUDE="/inc:/inc2")
    assert result.returncode == 0, result.stderr
    words = result.stdout.split()
    assert words[:3] == ["clang++-22", "-x", "hip"]
    assert [w for w in words if w.startswith("--offload-arch=")] == \
        ["--offload-arch=gfx1151", "--offload-arch=gfx90a", "--offload-arch=gfx942"]
    for flag in ("-nogpuinc", "-nogpulib", "-mcode-object-version=6", "--offload-compress", "-I/inc", "-I/inc2",
                 "-fPIC", "-cuid=spw_rmsnorm", "-amdgpu-schedule-metric-bias=100"):
        assert flag in words
    host = recipe("print", "compile", "kernels/engine/engine.cpp", "e.o", SPW_CXX="clang++-15")
    assert "-x c++" in host.stdout and "--offload-arch" not in host.stdout
    assert f"-I{REPO}/kernels/include" in host.stdout      # default include folders
    link = recipe("print", "link", "lib/libengine.so", "a.o", "b.o", SPW_CXX="clang++-15")
    assert link.stdout.split()[:3] == ["clang++-15", "-fPIC", "-shared"]
    assert re.search(r"-Wl\\?,-soname\\?,libengine.so", link.stdout)   # printf %q may escape commas


@pytest.mark.parametrize("argv, env, message", [
    (("compile", "k.hip", "k.o"), {}, "SPW_CXX is not set"),
    (("compile", "k.hip", "k.o"), {"SPW_CXX": "clang++-19"}, "SPW_TARGETS is empty"),
    (("compile", "k.f90", "k.o"), {"SPW_CXX": "clang++-19"}, "do not know how to compile k.f90"),
    (("archive", "x"), {"SPW_CXX": "clang++-19"}, "unknown mode 'archive'"),
])
def test_recipe_usage_errors(argv, env, message):
    result = recipe(*argv, **env)
    assert result.returncode == 2
    assert message in result.stderr


# -- building and gating real cells ------------------------------------------------------

@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A reduced matrix (rmsnorm.hip only): clang-19 held to its committed
    baseline's rmsnorm kernels, the same cell pushed over it by an occupancy flag,
    and a missing toolchain."""
    require("clang++-19")
    require("clang-offload-bundler-19")
    folder = tmp_path_factory.mktemp("small-matrix")
    baseline = committed_baseline(folder, 19, "rmsnorm")
    path = cells_file(folder, {
        "clang-19": debian_cell(19, baseline=baseline),
        # amdgpu_waves_per_eu(8) on every kernel: at most 64 VGPRs on gfx90a/gfx942.
        "clang-19-tight": debian_cell(19, flags=["-DSPW_MIN_WAVES_PER_EU=8"], baseline=baseline),
        "clang-99": debian_cell(19, clang="99", cxx="clang++-99", packages=["clang-99"],
                                requires=["clang-offload-bundler-99"], baseline="checks/baselines/clang-99.json"),
    })
    return path, folder / "build"


def test_a_cell_within_its_baseline_passes(small):
    path, build = small
    result = spillway("matrix", "check", "clang-19", *matrix_args(path, build))
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^PASS +clang-19 +OK: 15 kernels within baseline", result.stdout, re.M)
    assert (build / "clang-19" / "libengine.so").is_file()
    provenance = json.loads((build / "clang-19" / "build.json").read_text())
    assert provenance["environment"]["SPW_TARGETS"] == "gfx1151 gfx90a gfx942"
    assert "clang version 19" in provenance["compiler"]
    check = json.loads((build / "clang-19" / "check.json").read_text())
    assert check["schema"].startswith("spillway.check/") and check["passed"]


def test_a_cell_pushed_over_its_baseline_fails_naming_the_kernels(small):
    path, build = small
    result = spillway("matrix", "check", "clang-19-tight", *matrix_args(path, build))
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"^FAIL +clang-19-tight +FAIL: \d+ of 15 kernels over their baseline", result.stdout, re.M)
    # Kernels named readably, with target, metric and numbers.
    assert re.search(r"over baseline: rmsnorm<16384, 128, 128> \[gfx90a\]: spills \d+ spilled registers, "
                     r"allowed at most 0 spilled registers", result.stdout)
    assert "scratch" in result.stdout


def test_a_missing_toolchain_is_skipped_never_passed(small):
    path, build = small
    named = spillway("matrix", "check", "clang-99", *matrix_args(path, build))
    assert named.returncode == mx.EXIT_SKIPPED
    assert "skipped: clang++-99 not found" in named.stdout
    assert "required here" in named.stdout
    assert "0 cells passed" in named.stdout

    # Next to a passing cell, a named missing one still keeps the run from passing.
    both = spillway("matrix", "check", "clang-19", "clang-99", *matrix_args(path, build))
    assert both.returncode == mx.EXIT_SKIPPED
    assert "PASS" in both.stdout and "skipped: clang++-99 not found" in both.stdout

    # With no cell named, local (Debian) cells are required too.
    everything = spillway("matrix", "check", *matrix_args(path, build))
    assert everything.returncode == mx.EXIT_FAILED      # clang-19-tight is over its baseline
    assert "skipped: clang++-99 not found" in everything.stdout


def test_nix_cells_missing_here_do_not_fail_an_unnamed_run(tmp_path):
    require("clang++-19")
    path = cells_file(tmp_path, {
        "clang-19": debian_cell(19, baseline=committed_baseline(tmp_path, 19, "block_scan_kernel",
                                                                "histogram_kernel")),
        "rocm-7.2.3-clang22": dict(tomllib.loads(CELLS.read_text())["cells"]["rocm-7.2.3-clang22"],
                                   cxx="amdclang++-not-here"),
    }, sources=("kernels/prim_scan.hip",))
    result = spillway("matrix", "check", *matrix_args(path, tmp_path / "build"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "skipped: amdclang++-not-here not found (ROCm 7.2.3 comes from nixpkgs" in result.stdout
    assert "1 cells passed, 0 over baseline, 0 errors, 1 skipped" in result.stdout
    named = spillway("matrix", "check", "rocm-7.2.3-clang22", *matrix_args(path, tmp_path / "build"))
    assert named.returncode == mx.EXIT_SKIPPED


def test_builds_are_incremental(tmp_path):
    require("clang++-19")
    path = cells_file(tmp_path, {"clang-19": debian_cell(19)}, sources=("kernels/prim_scan.hip",
                                                                        "kernels/engine/dispatch.cpp"))
    build = tmp_path / "build"
    first = spillway("matrix", "build", *matrix_args(path, build))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "BUILT    clang-19" in first.stdout and "2 of 2 objects compiled" in first.stdout
    assert "[clang-19] compiled prim_scan.hip" in first.stderr     # progress, one line per step off a terminal
    library = build / "clang-19" / "libengine.so"
    before = library.stat().st_mtime_ns
    again = spillway("matrix", "build", *matrix_args(path, build))
    assert "UP TO DATE clang-19" in again.stdout and library.stat().st_mtime_ns == before
    # A flag change rebuilds every object of the cell.
    path.write_text(path.read_text().replace("flags = []", 'flags = ["-DSPW_UNUSED=1"]'))
    changed = spillway("matrix", "build", *matrix_args(path, build))
    assert "2 of 2 objects compiled" in changed.stdout
    # A deleted object is rebuilt alone.
    (build / "clang-19" / "obj" / "dispatch.cpp.o").unlink()
    partial = spillway("matrix", "build", *matrix_args(path, build))
    assert "1 of 2 objects compiled" in partial.stdout


def test_a_build_error_fails_the_cell_with_its_log(tmp_path):
    require("clang++-19")
    path = cells_file(tmp_path, {"clang-19": debian_cell(19, flags=["-DSPW_ROCPRIM_VERSION=not-a-number+"])},
                      sources=("kernels/prim_scan.hip",))
    result = spillway("matrix", "check", *matrix_args(path, tmp_path / "build"))
    assert result.returncode == mx.EXIT_FAILED
    assert "ERROR    clang-19  build failed: compile prim_scan.hip:" in result.stdout
    log = tmp_path / "build" / "clang-19" / "obj" / "prim_scan.hip.o.log"
    assert "error" in log.read_text()


def test_compare_two_cells_matches_versioned_namespaces(tmp_path):
    """prim_scan.hip's rocPRIM-style namespace follows the compiler
    (ROCPRIM_301900_NS vs ROCPRIM_302200_NS): the cells only line up through
    the stable key."""
    path, build = built_debian_cells(tmp_path, (19, 22), "kernels/prim_scan.hip")
    result = spillway("matrix", "compare", "clang-19", "clang-22", "--format", "json", *matrix_args(path, build))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["summary"]["compared"] == 9 and not document["added"] and not document["removed"]
    assert {k["target"] for k in document["kernels"]} == {"gfx11", "gfx90a", "gfx942"}
    assert all("ROCPRIM_NS" in k["key"] for k in document["kernels"])

    table = spillway("matrix", "compare", "clang-19", "clang-22", *matrix_args(path, build))
    assert "clang-22 (clang 22) against clang-19 (clang 19)" in table.stdout

    summary = spillway("matrix", "compare", "--format", "markdown", *matrix_args(path, build))
    assert summary.returncode == 0
    assert "| kernel | target | `clang-19` | `clang-22` |" in summary.stdout
    assert "| `rocprim::detail::histogram_kernel<256u, 128u>` | gfx11 |" in summary.stdout
    data = json.loads(spillway("matrix", "compare", "--format", "json", *matrix_args(path, build)).stdout)
    assert data["schema"] == "spillway.matrix-summary/2" and len(data["kernels"]) == 9
    import jsonschema
    from spillway.schemas import schema_for
    jsonschema.validate(data, schema_for("matrix-summary"))


def test_compare_reads_every_cell_with_the_occupancy_model_asked_for(tmp_path):
    """LLVM 23 charges gfx90a SGPRs more than LLVM 22 did: clang 16's
    topk_sample<32, 256> is 8 waves under llvm22 and 7 under llvm23.  The
    side-by-side view, the two-cell comparison and `matrix run` name their one
    model and follow it: each cell's figure is what `spillway report
    --occupancy-model` gives for that library."""
    path, build = built_debian_cells(tmp_path, (16, 19), "kernels/sampling.hip")
    figures = {}
    for model in ("llvm22", "llvm23"):
        result = spillway("matrix", "compare", "--format", "json", "--occupancy-model", model,
                          *matrix_args(path, build))
        assert result.returncode == 0, result.stderr
        document = json.loads(result.stdout)
        assert document["occupancy_model"] == model
        for cell in ("clang-16", "clang-19"):
            report = json.loads(spillway("report", "--all", "--occupancy-model", model,
                                         str(build / cell / "libengine.so"), "--json").stdout)
            expected: dict[tuple[str, str], int] = {}
            for record in report["kernels"]:
                ident = (target_group(record["target"]), record["key"])
                expected[ident] = min(expected.get(ident, 99), record["occupancy"])
            got = {(k["target"], k["key"]): k["cells"][cell]["occupancy"] for k in document["kernels"]
                   if k["cells"][cell] is not None}
            assert got == expected, (model, cell)
        figures[model] = {(k["name"], k["target"]): k["cells"]["clang-16"]["occupancy"]
                          for k in document["kernels"] if k["cells"]["clang-16"]}
    assert figures["llvm22"][("topk_sample<32, 256>", "gfx90a")] == 8
    assert figures["llvm23"][("topk_sample<32, 256>", "gfx90a")] == 7
    side_by_side = " ".join(spillway("matrix", "compare", *matrix_args(path, build)).stdout.split())
    assert side_by_side.count("(occupancy model llvm23;") == 1         # (the table's heading wraps)

    markdown = spillway("matrix", "compare", "--format", "markdown", "--occupancy-model", "llvm22",
                        *matrix_args(path, build)).stdout
    assert "waves per SIMD (occupancy model `llvm22`;" in markdown
    two = json.loads(spillway("matrix", "compare", "clang-16", "clang-19", "--format", "json",
                              "--occupancy-model", "llvm22", *matrix_args(path, build)).stdout)
    assert two["occupancy_model"] == "llvm22"
    row = next(k for k in two["kernels"] if k["name"] == "topk_sample<32, 256>" and k["target"] == "gfx90a")
    assert row["old"]["occupancy"] == 8
    bad = spillway("matrix", "compare", "--occupancy-model", "llvm99", *matrix_args(path, build))
    assert bad.returncode == 2 and "invalid choice: 'llvm99'" in bad.stderr and "Traceback" not in bad.stderr


def test_baseline_then_check_round_trip(tmp_path):
    require("clang++-16")
    require("clang-offload-bundler-16")
    path = cells_file(tmp_path, {"clang-16": debian_cell(16, baseline=str(tmp_path / "clang-16.json"))},
                      sources=("kernels/routed_gemm.hip",))
    build = tmp_path / "build"
    written = spillway("matrix", "baseline", *matrix_args(path, build))
    assert written.returncode == 0, written.stdout + written.stderr
    assert "clang-16: wrote" in written.stdout
    baseline = json.loads((tmp_path / "clang-16.json").read_text())
    assert baseline["gate"] == ["scratch", "spills"]
    assert baseline["note"].startswith("cell clang-16: written by spillway matrix baseline from ")
    assert "Debian clang version 16" in baseline["note"]
    assert spillway("matrix", "check", *matrix_args(path, build)).returncode == 0


def test_a_cell_whose_flags_left_its_baseline_warns_and_fails_when_strict(tmp_path):
    """A cell's baseline records the cell's flags; when the cells file gives
    the cell other flags (offload LTO turned on) than its baseline was
    written with, matrix check says so in one line and --strict-flags fails
    the cell, even though every kernel is within the baseline."""
    require("clang++-22")
    require("clang-offload-bundler-22")
    baseline = tmp_path / "clang-22.json"
    path = cells_file(tmp_path, {"clang-22": debian_cell(22, baseline=str(baseline))},
                      sources=("kernels/routed_gemm.hip",))
    build = tmp_path / "build"
    written = spillway("matrix", "baseline", *matrix_args(path, build))
    assert written.returncode == 0, written.stdout + written.stderr
    assert json.loads(baseline.read_text())["provenance"]["flags"] == []      # known: none
    quiet = spillway("matrix", "check", "--strict-flags", *matrix_args(path, build))
    assert quiet.returncode == 0 and "flags differ" not in quiet.stdout, quiet.stdout

    path = cells_file(tmp_path, {"clang-22": debian_cell(22, baseline=str(baseline), flags=["-foffload-lto"])},
                      sources=("kernels/routed_gemm.hip",))
    warned = spillway("matrix", "check", *matrix_args(path, build))
    assert warned.returncode == 0, warned.stdout + warned.stderr
    assert re.search(r"^PASS +clang-22 +OK: \d+ kernels within baseline", warned.stdout, re.M)
    assert re.search(r"^ +warning: code-generation flags differ from the baseline's: added -foffload-lto \(.*"
                     r"--strict-flags fails on it\)$", warned.stdout, re.M), warned.stdout
    strict = spillway("matrix", "check", "--no-build", "--strict-flags", *matrix_args(path, build))
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert re.search(r"^FAIL +clang-22 +OK: \d+ kernels within baseline; code-generation flags differ from the "
                     r"baseline's: added -foffload-lto .*\[--strict-flags\]$", strict.stdout, re.M), strict.stdout
    assert "accept with" not in strict.stdout      # no kernel to accept: the flags are the failure


# -- the real matrix, against the committed baselines ------------------------------------

def test_the_repository_matrix_passes_its_committed_baselines(one_machine_run):
    """What the main job does on a fresh machine: build every local cell from
    scratch and gate it against checks/baselines/<cell>.json: the bookworm
    cells, and the sid root's (clang-23, clang-24, debian-rocm-7.2.4) where
    the root is made (under CI it is: the set-up makes it).  The run is
    tests/support/one_machine_run.py's, shared with the CI workflow test (one build of the matrix)."""
    matrix = mx.load(CELLS)
    root_cells = [c.name for c in matrix.cells.values() if c.in_root]
    why = one_machine_run.root_unavailable
    result = one_machine_run.run
    for cell in ("clang-15", "clang-16", "clang-19", "clang-22", "clang-22-offload-lto", "clang-22-lines"):
        assert re.search(rf"^PASS +{cell} +OK: \d+ kernels within baseline", result.stdout, re.M)
    # The flag variants' baselines hold their flags, and the builds' are the same.
    for cell, flags in (("clang-22-offload-lto", ["-foffload-lto"]), ("clang-22-lines", ["-gline-tables-only"])):
        assert json.loads((REPO / f"checks/baselines/{cell}.json").read_text())["provenance"]["flags"] == flags
    assert "flags differ" not in result.stdout
    for cell in root_cells:
        if why:
            assert re.search(rf"^SKIPPED +{re.escape(cell)} +skipped: the sid-root root", result.stdout, re.M)
        else:
            assert re.search(rf"^PASS +{re.escape(cell)} +OK: \d+ kernels within baseline", result.stdout, re.M)
    # The first screen: one verdict line per cell, then what changed, in a table that fits the width
    # (the run is under GitHub Actions: its stop-commands brackets aside).
    lines = without_brackets(result.stdout).splitlines()
    counts = next(i for i, line in enumerate(lines) if line.startswith("matrix check: "))
    assert counts >= 5 and all(re.match(r"^(PASS|FAIL|ERROR|SKIPPED) ", line) for line in lines[:counts]), lines
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and int(columns) > 20 else 120     # (render.grid.output_width)
    assert table_scan.tables(result.stdout) and table_scan.problems(result.stdout, width) == []
    summary = (one_machine_run.outputs / "matrix-summary.md").read_text()
    assert "waves per SIMD (occupancy model `llvm23`; bold: spills or scratch)" in summary
    # The toolchains differ on the register-hungry WMMA GEMM: LLVM 15 caps gfx11 at 128 VGPRs and spills.
    row = next(line for line in summary.splitlines() if line.startswith("| `gemm_i8<128, 128, 32, 2, 2, 128>` | gfx11"))
    cells = [c.strip() for c in row.strip("|").split("|")][2:]
    assert cells[0].startswith("**128 / ") and not cells[2].startswith("**")


def test_a_broken_baseline_is_an_error_naming_the_file_not_a_traceback(tmp_path):
    """The matrix gates through spillway.gate directly: a baseline that is not
    one gives the cell an ERROR line naming the file (exit 1), and nothing is
    written as if it had passed."""
    require("clang++-19")
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": "spillway.baseline/1", "note": "n"')
    path = cells_file(tmp_path, {"clang-19": debian_cell(19, baseline=str(broken))},
                      sources=("kernels/routed_gemm.hip",))
    build = tmp_path / "build"
    result = spillway("matrix", "check", *matrix_args(path, build))
    assert result.returncode == mx.EXIT_FAILED, result.stdout + result.stderr
    line = next(l for l in result.stdout.splitlines() if l.startswith("ERROR"))
    assert str(broken) in line and "not valid JSON" in line
    assert "Traceback" not in result.stdout + result.stderr
    assert not (build / "clang-19" / "check.json").exists()
