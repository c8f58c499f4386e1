"""The cells on AMD's LLVM from the package index (matrix/cells.toml [backends]):
rocm-7.2.2-amd-llvm22 and rocm-10.0-amd-llvm23, Debian clang 22 in front.

One small kernel (tests/data/amd_llvm/spill256.hip: 256 floats live under a
1024-thread bound) is built once for gfx90a by the two back-end cells and by
the clang-22 cell, through `spillway matrix build` with the real recipe; its
figures differ between AMD LLVM 23, AMD LLVM 22 and Debian's LLVM 22, so each
cell is shown to run its own back end.  Then every failure a user meets, one
line each with the matrix's exit statuses.

The back ends come from scripts/install-toolchains.sh (CI's set-up runs it);
where they are not installed the tests skip with the reason, and fail under CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from spillway import matrix as mx
from support.toolchains import REPO, require

CELLS = REPO / "matrix" / "cells.toml"
INSTALL = REPO / "scripts" / "install-toolchains.sh"
HELPER = REPO / "matrix" / "amd_llvm.py"
DOCUMENT = tomllib.loads(CELLS.read_text())
FIXTURE = "tests/data/amd_llvm/spill256.hip"
AMD_CELLS = ("rocm-7.2.2-amd-llvm22", "rocm-10.0-amd-llvm23")


def spillway(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spillway", *argv], capture_output=True, text=True, cwd=REPO,
                          env=dict(os.environ, **(env or {})))


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(v) for v in value) + "]"
    return json.dumps(value)


def table(name: str, fields: dict) -> list[str]:
    return [f"[{name}]", *(f"{key} = {toml_value(value)}" for key, value in fields.items()), ""]


def cells_file(folder: Path, cells: dict[str, dict], sources=(FIXTURE,), backends: dict | None = None,
               store: dict | None = None) -> Path:
    """A reduced cells file: the repository's back ends (or ``backends``) and these cells."""
    lines = ['schema = "2"', "", "[engine]", 'library = "libengine.so"', f"sources = {toml_value(list(sources))}",
             'headers = ["kernels/include", "kernels/engine"]', 'recipe = "matrix/compile.sh"', ""]
    lines += table("backend_store", dict(DOCUMENT["backend_store"], **(store or {})))
    for name, fields in (backends or DOCUMENT["backends"]).items():
        lines += table(f'backends."{name}"', fields)
    for name, fields in cells.items():
        lines += table(f'cells."{name}"', fields)
    path = folder / "cells.toml"
    path.write_text("\n".join(lines))
    return path


def cell(name: str, **override) -> dict:
    return dict(DOCUMENT["cells"][name], **override)


def backend(name: str, **override) -> dict:
    return dict(DOCUMENT["backends"][name], **override)


def matrix_args(cells: Path, build: Path) -> list[str]:
    return ["--cells", str(cells), "--root", str(REPO), "--build-dir", str(build)]


def installed(name: str) -> Path:
    """A back end's library as set-up installed it; skip (fail under CI) when not."""
    found = mx.load(CELLS).file.backends[name]
    library = found.installed_library()
    forwarders = found.forwarder_folder()
    if not library.is_file() or (forwarders is not None and not forwarders.is_dir()):
        message = f"{library} is not installed (scripts/install-toolchains.sh installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return library


def figures(library: Path) -> dict[str, tuple[int, int, int]]:
    """target -> (VGPRs, spilled VGPRs, scratch bytes) of the fixture's kernel, as spillway reads them."""
    result = subprocess.run([sys.executable, "-m", "spillway", "report", "--json", "--all", str(library)],
                            capture_output=True, text=True, check=True)
    document = json.loads(result.stdout)
    found = {}
    for kernel in document["kernels"]:
        if "spill256" in kernel["name"]:
            found[kernel["target"]] = (kernel["vgpr_count"], kernel["vgpr_spill_count"],
                                       kernel["private_segment_fixed_size"])
    return found


@pytest.fixture(scope="module")
def fixture_build(tmp_path_factory):
    """The fixture kernel built for gfx90a by both back-end cells and clang-22 (once for the module)."""
    for name in ("rocm-7.2.2", "rocm-10.0"):
        installed(name)
    require("clang++-22")
    require("ld.lld-22")
    require("clang-offload-bundler-22")
    folder = tmp_path_factory.mktemp("amd-llvm")
    cells = {name: cell(name, targets=["gfx90a"]) for name in (*AMD_CELLS, "clang-22")}
    path = cells_file(folder, cells)
    build = folder / "build"
    result = spillway("matrix", "build", *matrix_args(path, build), "-j", "2", *cells)
    assert result.returncode == 0, result.stdout + result.stderr
    return path, build


def test_each_cell_compiles_with_its_own_back_end(fixture_build):
    _, build = fixture_build
    found = {name: figures(build / name / "libengine.so")["gfx90a"] for name in (*AMD_CELLS, "clang-22")}
    # 128 VGPRs (the 1024-thread bound's limit on gfx90a) in every cell, and a different spill in each:
    # AMD LLVM 23 (ROCm 10.0), AMD LLVM 22 (ROCm 7.2.2) and Debian's LLVM 22 allocate differently.
    assert {vgprs for vgprs, _, _ in found.values()} == {128}, found
    spills = {name: (spilled, scratch) for name, (_, spilled, scratch) in found.items()}
    assert len(set(spills.values())) == 3, spills
    assert all(spilled > 0 and scratch > 0 for spilled, scratch in spills.values()), spills


def test_the_recorded_back_end_is_the_librarys_own(fixture_build):
    _, build = fixture_build
    for name in AMD_CELLS:
        document = json.loads((build / name / "build.json").read_text())
        recorded = document["backend"]
        pinned = DOCUMENT["backends"][DOCUMENT["cells"][name]["backend"]]
        library = installed(recorded["name"])
        # The helper reads the library's own strings: the commit it names is the one recorded.
        probe = subprocess.run([sys.executable, str(HELPER), "probe", "--library", str(library),
                                *(["--preload", str(library.parents[len(Path(pinned["library"]).parts) - 1].parent
                                                    / "sysdeps")] if pinned["sysdeps"] else [])],
                               capture_output=True, text=True, check=True)
        own = json.loads(probe.stdout)
        assert recorded["llvm_commit"] == own["commit"] == pinned["commit"]
        assert recorded["llvm_version"] == own["version"] and own["version"].startswith(pinned["llvm"] + ".")
        assert recorded["rocm"] == pinned["rocm"] and document["toolchain"].startswith(f"ROCm {pinned['rocm']} ")
        assert recorded["wheel"] == {"package": pinned["package"], "version": pinned["version"],
                                     "file": pinned["wheel"], "sha256": pinned["sha256"]}
        assert recorded["front_end"].startswith("Debian clang version 22.")
        assert recorded["library_sha256"] == _sha256(library)


def _sha256(path: Path) -> str:
    import hashlib
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_back_end_baseline_records_it_and_checks(fixture_build, tmp_path):
    path, build = fixture_build
    name = "rocm-10.0-amd-llvm23"
    text = path.read_text().replace(f'baseline = "checks/baselines/{name}.json"',
                                    f'baseline = "{tmp_path}/{name}.json"')
    moved = tmp_path / "cells.toml"
    moved.write_text(text)
    result = spillway("matrix", "baseline", *matrix_args(moved, build), name)
    assert result.returncode == 0, result.stdout + result.stderr
    written = json.loads((tmp_path / f"{name}.json").read_text())
    assert written["schema"] == "spillway.baseline/5"
    assert written["provenance"]["backend"]["llvm_commit"] == DOCUMENT["backends"]["rocm-10.0"]["commit"]
    assert written["provenance"]["compilers"] == [written["provenance"]["backend"]["front_end"]]
    result = spillway("matrix", "check", *matrix_args(moved, build), name)
    assert result.returncode == 0 and "PASS" in result.stdout, result.stdout + result.stderr


def test_the_committed_back_end_cells_and_baselines_agree():
    matrix = mx.load(CELLS)
    for name in AMD_CELLS:
        amd = matrix.cell(name)
        assert amd.local and not amd.in_root and amd.backend_info is not None
        committed = json.loads((REPO / amd.baseline).read_text())
        recorded = committed["provenance"]["backend"]
        assert committed["schema"] == "spillway.baseline/5"
        assert recorded["llvm_commit"] == amd.backend_info.commit
        assert recorded["wheel"]["sha256"] == amd.backend_info.sha256
        assert amd.toolchain().startswith(f"ROCm {amd.rocm} (AMD LLVM {amd.backend_info.llvm})")


# -- failures: one line each, the matrix's exit statuses ------------------------------------

def _install(cells: Path, store: Path, cell_name: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, SPILLWAY_CELLS=str(cells), SPILLWAY_AMD_LLVM=str(store), SPILLWAY_NO_ROOT="1")
    return subprocess.run(["bash", str(INSTALL), "--cell", cell_name], capture_output=True, text=True, env=env,
                          timeout=600)


def test_a_wheel_whose_hash_differs_is_refused(tmp_path):
    library = installed("rocm-7.2.2")
    pinned = DOCUMENT["backends"]["rocm-7.2.2"]
    wheel = library.parents[len(Path(pinned["library"]).parts)] / "wheels" / pinned["wheel"]
    if not wheel.is_file():
        pytest.skip(f"{wheel} is not kept here")
    store = tmp_path / "store"
    (store / "wheels").mkdir(parents=True)
    os.link(wheel, store / "wheels" / pinned["wheel"]) if wheel.stat().st_dev == store.stat().st_dev \
        else shutil.copy(wheel, store / "wheels" / pinned["wheel"])
    wrong = "0" * 64
    cells = cells_file(tmp_path, {"rocm-7.2.2-amd-llvm22": cell("rocm-7.2.2-amd-llvm22")},
                       backends={"rocm-7.2.2": backend("rocm-7.2.2", sha256=wrong)})
    result = _install(cells, store, "rocm-7.2.2-amd-llvm22")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if "rocm-7.2.2" in line]
    assert len(lines) == 1 and f"has sha256 {pinned['sha256']}, cells.toml pins {wrong}" in lines[0], result.stderr
    assert not (store / f"{pinned['package']}-{pinned['version']}").exists()


def test_a_wheel_that_will_not_download_is_one_line(tmp_path):
    require("clang-22")
    cells = cells_file(tmp_path, {"rocm-7.2.2-amd-llvm22": cell("rocm-7.2.2-amd-llvm22")},
                       backends={"rocm-7.2.2": backend("rocm-7.2.2", version="0.0.0.0.0.1")})
    result = _install(cells, tmp_path / "store", "rocm-7.2.2-amd-llvm22")
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "pip download rocm-llvm-python==0.0.0.0.0.1 failed:" in lines[0], result.stderr


def test_a_library_without_its_forwarder_does_not_load(tmp_path):
    library = installed("rocm-10.0")
    pinned = DOCUMENT["backends"]["rocm-10.0"]
    store = tmp_path / "store"
    placed = store / f"{pinned['package']}-{pinned['version']}" / pinned["library"]
    placed.parent.mkdir(parents=True)
    placed.symlink_to(library)           # the library, and no sysdeps/ beside it
    cells = cells_file(tmp_path, {"rocm-10.0-amd-llvm23": cell("rocm-10.0-amd-llvm23", targets=["gfx90a"])})
    result = spillway("matrix", "build", *matrix_args(cells, tmp_path / "build"), "rocm-10.0-amd-llvm23",
                      env={"SPILLWAY_AMD_LLVM": str(store)})
    assert result.returncode == 3, result.stdout + result.stderr
    line = next(line for line in result.stdout.splitlines() if "rocm-10.0-amd-llvm23" in line)
    assert "cannot load" in line and "librocm_sysdeps_z.so.1" in line and "install-toolchains.sh" in line


def test_a_front_end_newer_than_the_back_end_is_refused_before_building(tmp_path):
    cells = cells_file(tmp_path, {"new-front": cell("rocm-7.2.2-amd-llvm22", clang="23", cxx="clang++-23")})
    result = spillway("matrix", "build", *matrix_args(cells, tmp_path / "build"), "new-front")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and not (tmp_path / "build").exists()
    assert "front end clang 23 is newer than the back end rocm-7.2.2's AMD LLVM 22" in result.stderr


def test_ir_the_back_end_rejects_names_the_unit_and_llvms_message(tmp_path):
    installed("rocm-7.2.2")
    require("clang++-22")
    # Without drop_attributes, AMD LLVM 22.0.0git meets clang 22.1's nocreateundeforpoison.
    cells = cells_file(tmp_path, {"rocm-7.2.2-amd-llvm22": cell("rocm-7.2.2-amd-llvm22", targets=["gfx90a"])},
                       sources=("kernels/gemm_wmma.hip",),
                       backends={"rocm-7.2.2": backend("rocm-7.2.2", drop_attributes=[])})
    result = spillway("matrix", "build", *matrix_args(cells, tmp_path / "build"), "rocm-7.2.2-amd-llvm22")
    assert result.returncode == 1, result.stdout + result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("FAILED"))
    assert "gemm_wmma.hip (gfx90a): AMD LLVM 22.0.0 rejects the front end's IR:" in line
    assert "nocreateundeforpoison" in line and "error:" in line
