"""Cells that build in a system root (matrix/cells.toml `system = "sid-root"`):
clang-23, clang-24 and debian-rocm-7.2.4, in the Debian sid root that
scripts/install-toolchains.sh makes with mmdebstrap.

Synthetic tests (a cells file pointing at a root that is not there, a fake
root of symbolic links) run everywhere.  The real builds need the root: they
skip with the reason where it is not made, and fail under CI, whose set-up
(scripts/install-test-deps.sh -> install-toolchains.sh) makes it.
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
from spillway.matrix import toolchains
from support.toolchains import REPO, require

CELLS = REPO / "matrix" / "cells.toml"
INSTALL = REPO / "scripts" / "install-toolchains.sh"
DOCUMENT = tomllib.loads(CELLS.read_text())
ROOT_CELLS = ("clang-23", "clang-24", "debian-rocm-7.2.4")


def spillway(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spillway", *argv], capture_output=True, text=True, cwd=REPO,
                          env=dict(os.environ, **(env or {})))


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(v) for v in value) + "]"
    return json.dumps(value)


def cells_file(folder: Path, cells: dict[str, dict], sources=("kernels/sampling.hip",),
               root: str | None = None) -> Path:
    """A reduced cells file with the repository's [systems] (the sid root at
    ``root`` when given) and these cells."""
    lines = ['schema = "1"', "", "[engine]", 'library = "libengine.so"',
             f"sources = {toml_value(list(sources))}",
             'headers = ["kernels/include", "kernels/engine"]', 'recipe = "matrix/compile.sh"', ""]
    for name, system in DOCUMENT["systems"].items():
        system = dict(system, **({"path": root} if root and system["kind"] == "root" else {}))
        lines.append(f'[systems."{name}"]')
        lines += [f"{key} = {toml_value(value)}" for key, value in system.items()]
        lines.append("")
    for name, fields in cells.items():
        lines.append(f'[cells."{name}"]')
        lines += [f"{key} = {toml_value(value)}" for key, value in fields.items()]
        lines.append("")
    path = folder / "cells.toml"
    path.write_text("\n".join(lines))
    return path


def cell(name: str, **override) -> dict:
    return dict(DOCUMENT["cells"][name], **override)


def matrix_args(cells: Path, build: Path) -> list[str]:
    return ["--cells", str(cells), "--root", str(REPO), "--build-dir", str(build)]


def sid_root() -> Path:
    """The real root; skip (fail under CI) when it is not made here."""
    system = mx.load(CELLS).systems["sid-root"]
    why = toolchains.root_unavailable(system)
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return system.location()


# -- the cells file and the install step ------------------------------------------------------

def test_root_cells_are_listed_with_their_system_and_packages():
    matrix = mx.load(CELLS)
    root = matrix.systems["sid-root"]
    assert root.kind == "root" and root.suite == "sid" and root.overlay == "experimental"
    assert root.path == "/var/tmp/spillway-sid-root" and root.path_setting == "SPILLWAY_SID_ROOT"
    assert not root.path.startswith(str(REPO))         # outside the checkout: clones share it
    assert matrix.systems["bookworm"].kind == "host"
    for name in ROOT_CELLS:
        c = matrix.cells[name]
        assert c.in_root and c.local and c.system == "sid-root", name
        assert (REPO / c.baseline).is_file(), name
    assert matrix.cells["clang-23"].suite == "sid" and matrix.cells["clang-24"].suite == "experimental"
    rocm = matrix.cells["debian-rocm-7.2.4"]
    assert rocm.hip == "rocm" and rocm.compiler == "hipcc" and rocm.rocm == "7.2.4" and rocm.clang == "22"
    for name in ("clang-15", "clang-16", "clang-19", "clang-22"):
        assert not matrix.cells[name].in_root and matrix.cells[name].hip == "mini"
    # Every Debian package is listed once for the system it goes into (a flag variant of a cell,
    # the same compiler with other flags, lists its compiler's packages: counted once per compiler).
    per_system: dict[str, list[str]] = {name: list(s.get("packages", [])) for name, s in DOCUMENT["systems"].items()}
    compilers: set[tuple[str, str, tuple[str, ...]]] = set()
    for c in DOCUMENT["cells"].values():
        if c["source"] == "debian":
            compiler = (c["system"], c.get("cxx", ""), tuple(c["packages"]))
            if compiler in compilers:
                continue
            compilers.add(compiler)
            per_system[c["system"]] += c["packages"]
    for name, packages in per_system.items():
        assert len(packages) == len(set(packages)), name
    assert "clang-24" in per_system["sid-root"] and "clang-24" not in per_system["bookworm"]
    assert "mmdebstrap" in per_system["bookworm"] and "nix-bin" in per_system["sid-root"]


@pytest.mark.parametrize("old, new, message", [
    ('system = "sid-root"\nsuite = "sid"\ncompiler = "clang"\nclang = "23"',
     'system = "moon"\nsuite = "sid"\ncompiler = "clang"\nclang = "23"',
     "cell clang-23: system 'moon' is not a [systems] table"),
    ('path = "/var/tmp/spillway-sid-root"\n', "", 'kind "root" needs path'),
    ("[cells.clang-22]\n", '[cells.clang-22]\nsuite = "sid"\n', "cell clang-22: suite is for cells of a root system"),
    ('rocm = "7.2.4"\n', "", 'hip = "rocm" needs rocm'),
    ('hip = "rocm"', 'hip = "cuda"', "must be one of 'mini' or 'rocm'"),
])
def test_bad_system_fields_give_one_clear_line(tmp_path, old, new, message):
    source = CELLS.read_text()
    assert source.count(old) == 1
    path = tmp_path / "cells.toml"
    path.write_text(source.replace(old, new))
    result = spillway("matrix", "list", "--cells", str(path), "--root", str(REPO))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_install_step_reads_the_root_from_cells_toml_and_the_setting_moves_it(tmp_path):
    require("dpkg-query")      # a Debian machine (not inside a Nix build)
    require("python3")
    result = subprocess.run(["bash", str(INSTALL), "--root-path"], capture_output=True, text=True,
                            env={k: v for k, v in os.environ.items() if k != "SPILLWAY_SID_ROOT"})
    assert result.returncode == 0 and result.stdout.strip() == "/var/tmp/spillway-sid-root"
    moved = subprocess.run(["bash", str(INSTALL), "--root-path"], capture_output=True, text=True,
                           env=dict(os.environ, SPILLWAY_SID_ROOT=str(tmp_path / "elsewhere")))
    assert moved.stdout.strip() == str(tmp_path / "elsewhere")
    # --check on a root that is not made: says so, exit 1, makes nothing.
    check = subprocess.run(["bash", str(INSTALL), "--check"], capture_output=True, text=True,
                           env=dict(os.environ, SPILLWAY_SID_ROOT=str(tmp_path / "elsewhere")))
    assert check.returncode == 1
    assert f"sid-root: not made yet ({tmp_path / 'elsewhere'})" in check.stdout
    assert not (tmp_path / "elsewhere").exists()
    skipped = subprocess.run(["bash", str(INSTALL), "--check", "--no-root"], capture_output=True, text=True)
    assert "sid-root: skipped (--no-root" in skipped.stdout


# -- a machine without the root --------------------------------------------------------------

def test_cells_of_a_root_that_is_not_made_are_skipped_with_the_reason(tmp_path):
    require("clang++-22")
    missing = tmp_path / "no-root"
    path = cells_file(tmp_path, {"clang-22": cell("clang-22", baseline=str(tmp_path / "clang-22.json")),
                                 "clang-24": cell("clang-24")}, root=str(missing))
    build = tmp_path / "build"
    # The host cell's baseline for this small build (sampling.hip only).
    written = spillway("matrix", "baseline", "clang-22", *matrix_args(path, build))
    assert written.returncode == 0, written.stdout + written.stderr

    unnamed = spillway("matrix", "check", *matrix_args(path, build))
    assert unnamed.returncode == 0, unnamed.stdout + unnamed.stderr
    assert re.search(r"^PASS +clang-22 ", unnamed.stdout, re.M)
    line = next(l for l in unnamed.stdout.splitlines() if "clang-24" in l)
    assert line.startswith("SKIPPED") and "PASS" not in line
    assert f"the sid-root root is not made: {missing} does not exist" in line
    assert "scripts/install-toolchains.sh makes it" in line and "SPILLWAY_SID_ROOT moves it" in line
    assert "1 cells passed, 0 over baseline, 0 errors, 1 skipped" in unnamed.stdout

    # Named on the command line: the run cannot pass (exit 3, toolchain missing).
    named = spillway("matrix", "check", "clang-24", *matrix_args(path, build))
    assert named.returncode == mx.EXIT_SKIPPED
    assert "required here" in named.stdout
    # --local selects it but does not require it.
    local = spillway("matrix", "check", "--local", *matrix_args(path, build))
    assert local.returncode == 0 and "SKIPPED  clang-24" in local.stdout
    listing = spillway("matrix", "list", "--json", *matrix_args(path, build))
    assert listing.returncode == 0, listing.stderr
    entry = next(c for c in json.loads(listing.stdout)["cells"] if c["name"] == "clang-24")
    assert not entry["available"] and "is not made" in entry["reason"]
    # A build of it is skipped too, never built.
    built = spillway("matrix", "build", *matrix_args(path, build))
    assert "SKIPPED  clang-24: the sid-root root is not made" in built.stdout
    assert not (build / "clang-24" / "libengine.so").exists()


def test_a_root_is_not_entered_without_root_privileges(tmp_path, monkeypatch):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / ".spillway-ready").write_text("x")
    system = mx.System(name="sid-root", kind="root", path=str(tmp_path / "root"), suite="sid")
    if os.geteuid() == 0 and shutil.which("chroot") and shutil.which("unshare"):
        assert toolchains.root_unavailable(system) == ""
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "entered with chroot, which needs root" in toolchains.root_unavailable(system)
    (tmp_path / "root" / ".spillway-ready").unlink()
    assert f"{tmp_path / 'root'} is not finished (no .spillway-ready)" in toolchains.root_unavailable(system)


def test_paths_inside_a_root_follow_its_own_links(tmp_path):
    """Absolute links inside a root point into the root (merged /usr, the
    /usr/bin/clang++-24 -> ../lib/llvm-24/bin/clang++ kind of link)."""
    root = tmp_path / "root"
    (root / "usr" / "lib" / "llvm-24" / "bin").mkdir(parents=True)
    real = root / "usr" / "lib" / "llvm-24" / "bin" / "clang"
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    (root / "usr" / "bin").mkdir()
    (root / "bin").symlink_to("usr/bin")
    (root / "usr" / "lib" / "llvm-24" / "bin" / "clang++").symlink_to("clang")
    (root / "usr" / "bin" / "clang++-24").symlink_to("/usr/lib/llvm-24/bin/clang++")   # absolute: in the root
    assert toolchains.inside(root, "/usr/bin/clang++-24") == real
    assert toolchains.inside(root, "/bin/clang++-24") == real
    assert toolchains.inside(root, "/usr/lib/llvm-24/bin/../bin/clang++") == real
    c = mx.load(CELLS).cells["clang-24"]
    assert toolchains.which_in_root(root, "clang++-24", c) == "/usr/bin/clang++-24"
    assert toolchains.which_in_root(root, "clang-linker-wrapper-24", c) is None


def test_recipe_enters_a_root_only_through_spw_root(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPW_")}
    base = dict(env, SPW_CXX="clang++-24", SPW_TARGETS="gfx942", SPW_CLANG="24")
    printed = subprocess.run(["bash", str(REPO / "matrix" / "compile.sh"), "print", "compile", "kernels/rmsnorm.hip",
                              "o.o"], capture_output=True, text=True, env=dict(base, SPW_ROOT="/"))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith("chroot / env PATH=/usr/lib/llvm-24/bin:")
    bad = subprocess.run(["bash", str(REPO / "matrix" / "compile.sh"), "compile", "k.hip", "o.o"],
                         capture_output=True, text=True, env=dict(base, SPW_ROOT=str(tmp_path)))
    assert bad.returncode == 2 and "is not a system root" in bad.stderr
    rocm = subprocess.run(["bash", str(REPO / "matrix" / "compile.sh"), "print", "compile", "kernels/rmsnorm.hip",
                           "o.o"], capture_output=True, text=True, env=dict(base, SPW_HIP="rocm"))
    words = rocm.stdout.split()
    assert "-DSPW_HIP_RUNTIME=1" in words and "-nogpuinc" not in words and "-nogpulib" not in words
    odd = subprocess.run(["bash", str(REPO / "matrix" / "compile.sh"), "print", "compile", "kernels/rmsnorm.hip",
                          "o.o"], capture_output=True, text=True, env=dict(base, SPW_HIP="cuda"))
    assert odd.returncode == 2 and "SPW_HIP must be mini or rocm" in odd.stderr


# -- real builds in the root ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def warnings_build(tmp_path_factory):
    """kernels/sampling.hip and kernels/prim_scan.hip built by every Debian
    cell, on the host and in the root."""
    sid_root()
    folder = tmp_path_factory.mktemp("root-cells")
    names = ("clang-15", "clang-16", "clang-19", "clang-22", *ROOT_CELLS)
    for name in names[:4]:
        require(DOCUMENT["cells"][name]["cxx"])
    path = cells_file(folder, {name: cell(name) for name in names},
                      sources=("kernels/sampling.hip", "kernels/prim_scan.hip"))
    build = folder / "build"
    result = spillway("matrix", "build", *names, *matrix_args(path, build))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return path, build, names


def test_every_cell_builds_the_kernels_without_a_warning(warnings_build):
    """clang 24 deprecates __builtin_amdgcn_uicmp and __hip_atomic_fetch_add;
    spw_device.h picks what each compiler has (clang 15 included)."""
    _, build, names = warnings_build
    for name in names:
        for source in ("sampling.hip", "prim_scan.hip"):
            log = (build / name / "obj" / f"{source}.o.log").read_text()
            assert "warning" not in log.lower(), f"{name} {source}:\n{log[-2000:]}"
    # The root cells really ran in the root, with their own compilers.
    first = (build / "clang-24" / "obj" / "sampling.hip.o.log").read_text().splitlines()[0]
    assert first.startswith("(in /")
    provenance = json.loads((build / "clang-24" / "build.json").read_text())
    assert provenance["system"] == "sid-root" and "clang version 24" in provenance["compiler"]
    rocm = json.loads((build / "debian-rocm-7.2.4" / "build.json").read_text())
    assert rocm["compiler"].startswith("HIP version: 7.2.") and "clang version 22" in rocm["compiler"]
    assert rocm["environment"]["SPW_HIP"] == "rocm"


def test_the_scan_kernels_meet_real_rocprim_under_one_stable_key(warnings_build):
    """debian-rocm-7.2.4 builds kernels/prim_scan.hip against the real rocPRIM
    7.2.4 (rocprim::ROCPRIM_400200_NS::); the mini_hip.h cells imitate the
    namespace.  The stable keys line up in every cell."""
    path, build, names = warnings_build
    report = spillway("report", "--all", "--json", str(build / "debian-rocm-7.2.4" / "libengine.so"))
    assert report.returncode == 0, report.stderr
    scans = [k for k in json.loads(report.stdout)["kernels"] if "rocprim::" in k["name"]]
    assert len(scans) == 9                  # 3 kernels x 3 targets
    assert all("rocprim::ROCPRIM_400200_NS::detail::" in k["name"] for k in scans)
    keys = {k["key"] for k in scans}
    for name in names:
        if name == "debian-rocm-7.2.4":
            continue
        other = spillway("report", "--all", "--json", str(build / name / "libengine.so"))
        theirs = {k["key"] for k in json.loads(other.stdout)["kernels"] if "rocprim::" in k["name"]}
        assert theirs == keys, name
    compared = spillway("matrix", "compare", "clang-22", "debian-rocm-7.2.4", "--format", "json",
                        *matrix_args(path, build))
    assert compared.returncode == 0, compared.stderr
    document = json.loads(compared.stdout)
    rocprim = [k for k in document["kernels"] if "rocprim" in k["name"]]
    assert len(rocprim) == 9
    assert not [k for k in document.get("added", []) if "rocprim" in k.get("name", "")]
    assert not [k for k in document.get("removed", []) if "rocprim" in k.get("name", "")]


def test_root_builds_read_like_the_compilers_own_remarks(tmp_path):
    """Oracle: clang 24's -Rpass-analysis=kernel-resource-usage in the root,
    against spillway's report of the same device code object."""
    root = sid_root()
    work = tmp_path / "w"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPW_")}
    # The recipe's root entry, with the remark flags as extra flags: one device-only compile.
    result = subprocess.run(
        ["bash", str(REPO / "matrix" / "compile.sh"), "compile", str(REPO / "kernels" / "rmsnorm.hip"),
         str(work / "rmsnorm.co")], capture_output=True, text=True,
        env=dict(env, SPW_ROOT=str(root), SPW_CLANG="24", SPW_CXX="clang++-24", SPW_TARGETS="gfx942",
                 SPW_COV="6", SPW_FLAGS="--cuda-device-only --no-gpu-bundle-output "
                                        "-Rpass-analysis=kernel-resource-usage"))
    assert result.returncode == 0, result.stderr[-3000:]
    from support.toolchains import parse_remarks
    remarks = parse_remarks(result.stderr)
    assert len(remarks) == 5
    report = spillway("report", "--all", "--json", str(work / "rmsnorm.co"))
    kernels = {k["key"]: k for k in json.loads(report.stdout)["kernels"]}
    assert set(kernels) == set(remarks)
    for key, remark in remarks.items():
        assert int(remark["VGPRs"]) == kernels[key]["vgpr_count"], key
        assert int(remark["ScratchSize [bytes/lane]"]) == kernels[key]["private_segment_fixed_size"], key
        assert int(remark["LDS Size [bytes/block]"]) == kernels[key]["group_segment_fixed_size"], key
