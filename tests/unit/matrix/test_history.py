"""A kernel over AMD's releases (matrix/releases.toml): `spillway matrix history`,
`bisect` and `cache` on the AMD LLVM fixture kernel (tests/data/amd_llvm/spill256.hip,
256 floats live under a 1024-thread bound), one target (gfx90a), a few releases.

Measured with these back ends behind clang-19 (spilled VGPRs): ROCm 6.4.3 and 6.4.4
(AMD LLVM 19) 1315, ROCm 7.0.0-7.1.1 (AMD LLVM 20) 1330, ROCm 7.2.2 (AMD LLVM 22)
1756.  The wheels come from the store scripts/install-toolchains.sh shares (downloaded
and checked by hash when missing); each back-end build takes 3-7 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from spillway import matrix as mx
from spillway.matrix import releases as rel
from support.toolchains import REPO, require

RELEASES = REPO / "matrix" / "releases.toml"
DOCUMENT = tomllib.loads(RELEASES.read_text())
CELLS = tomllib.loads((REPO / "matrix" / "cells.toml").read_text())
FIXTURE = "tests/data/amd_llvm/spill256.hip"
HELPER = REPO / "matrix" / "amd_llvm.py"


def spillway(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spillway", *argv], capture_output=True, text=True, cwd=REPO)


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return "[" + ", ".join("{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in item.items()) + " }"
                                   for item in value) + "]"
        return json.dumps(value)
    return json.dumps(value)


def series(folder: Path, names: list[str], store: str | None = None, override: dict | None = None) -> Path:
    """A cells file whose engine is the fixture, and a releases file of these releases."""
    lines = ['schema = "2"', "", "[engine]", 'library = "libengine.so"', f'sources = ["{FIXTURE}"]',
             'headers = ["kernels/include", "kernels/engine"]', 'recipe = "matrix/compile.sh"', "",
             "[backend_store]", f'path = "{store or CELLS["backend_store"]["path"]}"', "",
             '[cells."clang-22"]']
    lines += [f"{k} = {_value(v)}" for k, v in CELLS["cells"]["clang-22"].items()]
    (folder / "cells.toml").write_text("\n".join(lines) + "\n")
    out = ['schema = "1"', f"targets = {_value(DOCUMENT['targets'])}", ""]
    for major, frontend in DOCUMENT["frontends"].items():
        out += [f'[frontends."{major}"]', *(f"{k} = {_value(v)}" for k, v in frontend.items()), ""]
    for name in names:
        fields = dict(DOCUMENT["releases"][name], **(override or {}).get(name, {}))
        out += [f'[releases."{name}"]', *(f"{k} = {_value(v)}" for k, v in fields.items()), ""]
    (folder / "releases.toml").write_text("\n".join(out))
    return folder / "cells.toml"


def args(cells: Path, build: Path) -> list[str]:
    return ["--cells", str(cells), "--root", str(REPO), "--build-dir", str(build)]


@pytest.fixture(scope="module")
def tools():
    require("clang++-19")
    require("ld.lld-22")


@pytest.fixture(scope="module")
def shared_build(tmp_path_factory, tools):
    return tmp_path_factory.mktemp("history-build")


# -- the series file -----------------------------------------------------------------------

def test_the_series_pins_every_release_and_chooses_one_build_of_630_and_631():
    matrix = mx.load(REPO / "matrix" / "cells.toml")
    loaded = rel.load(matrix)
    names = [r.rocm for r in loaded.ordered()]
    assert names[0] == "6.2.0" and names[-1] == "10.0" and len(names) == 19
    assert {"6.3.0", "6.3.1"} <= {r.rocm for r in loaded.ordered() if r.other_builds}
    for release in loaded.ordered():
        assert release.version.startswith(release.rocm) or release.package == "rocm-bindings-compiler"
        assert release.llvm == release.llvm_version.split(".")[0]


def test_the_recorded_version_and_commit_are_each_librarys_own():
    """For every release whose library is unpacked here: what amd_llvm.py reads from it."""
    sys.path.insert(0, str(HELPER.parent))
    import amd_llvm
    loaded = rel.load(mx.load(REPO / "matrix" / "cells.toml"))
    checked = 0
    for release in loaded.ordered():
        library = release.installed_library()
        if library.is_file():
            found = amd_llvm.identity(str(library))
            assert (found["version"], found["commit"]) == (release.llvm_version, release.commit), release.rocm
            checked += 1
    if not checked:
        pytest.skip("no release library is unpacked here")


# -- history -------------------------------------------------------------------------------

def test_history_over_three_releases(tmp_path, shared_build):
    cells = series(tmp_path, ["6.4.3", "7.0.2", "7.2.2"])
    run = spillway("matrix", "history", "spill256", "--target", "gfx90a", "--json", *args(cells, shared_build))
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert document["schema"] == "spillway.history/1"
    assert document["frontend"]["cxx"] == "clang++-19"
    assert [c["release"] for c in document["releases"]] == ["6.4.3", "7.0.2", "7.2.2"]
    assert [c["builds"] for c in document["releases"]] == [1, 1, 1]
    assert [c["llvm_version"] for c in document["releases"]] == ["19.0.0git", "20.0.0git", "22.0.0git"]
    (kernel,) = document["kernels"]
    spills = [kernel["figures"][r]["spills"] for r in ("6.4.3", "7.0.2", "7.2.2")]
    assert spills == [1315, 1330, 1756]
    assert len({kernel["figures"][r]["code_sha256"] for r in ("6.4.3", "7.0.2", "7.2.2")}) == 3
    for release in ("6.4.3", "7.0.2", "7.2.2"):
        assert (shared_build / "history" / release / "spill256-gfx90a.co").is_file()
    # Again: everything reused, the same figures; the table says so.
    again = spillway("matrix", "history", "spill256", "--target", "gfx90a", *args(cells, shared_build))
    assert again.returncode == 0, again.stderr
    assert "0 back-end builds made" in again.stdout
    assert " 1315 " in again.stdout and " 1756 " in again.stdout
    # The page: a chart and a table per kernel, the kernel's name escaped once.
    page = spillway("matrix", "history", "spill256", "--target", "gfx90a", "--format", "html",
                    *args(cells, shared_build))
    assert page.returncode == 0, page.stderr
    assert page.stdout.count("<svg") == 1 and page.stdout.count("<polyline") == 3   # spills, VGPRs, scratch
    assert "<h2>spill256(float const*, float*, int)" in page.stdout and "<td>1756</td>" in page.stdout


def test_a_range_from_72_is_built_behind_clang22_and_rocm_10_through_its_forwarder(tmp_path, shared_build):
    """AMD LLVM 22.0.0git behind clang 22.1.8 needs text IR without nocreateundeforpoison;
    ROCm 10.0's libLLVM.so loads only with the sysdeps forwarder preloaded."""
    require("clang++-22")
    real = rel.load(mx.load(REPO / "matrix" / "cells.toml")).release("10.0")
    if not (real.forwarder_folder() or Path("/nonexistent")).is_dir():
        pytest.skip("the sysdeps forwarder is not built (scripts/install-toolchains.sh)")
    cells = series(tmp_path, ["7.2.2", "10.0"])
    run = spillway("matrix", "history", "spill256", "--target", "gfx90a", "--json", *args(cells, shared_build))
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["frontend"]["cxx"] == "clang++-22"
    (kernel,) = document["kernels"]
    assert [kernel["figures"][r]["spills"] for r in ("7.2.2", "10.0")] == [1756, 1123]
    assert (shared_build / "history" / "frontend" / "clang-22.1.8" / "spill256-gfx90a.ll").is_file()


def test_bisect_builds_few_releases_and_names_the_first_bad_one(tmp_path, shared_build):
    names = ["6.4.3", "6.4.4", "7.0.0", "7.0.2", "7.2.2"]
    cells = series(tmp_path, names)
    run = spillway("matrix", "bisect", "spill256", "--good", "6.4.3", "--bad", "7.2.2", "--target", "gfx90a",
                   "--json", *args(cells, shared_build))
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert document["first_bad"] == "7.0.0" and document["last_good"] == "6.4.4"
    looked = [b["release"] for b in document["builds"]]
    assert looked == ["6.4.3", "7.2.2", "7.0.0", "6.4.4"]          # 7.0.2 never needed
    assert len(looked) == 4 < len(names)
    assert document["monotonic"] is True
    assert [b["value"] for b in document["builds"]] == [1315, 1756, 1330, 1315]
    # The table ends with compare --isa of the two neighbours.
    table = spillway("matrix", "bisect", "spill256", "--good", "6.4.3", "--bad", "7.2.2", "--target", "gfx90a",
                     *args(cells, shared_build))
    assert table.returncode == 0, table.stderr
    assert "first bad release: ROCm 7.0.0 (last good: ROCm 6.4.4)" in table.stdout
    assert "compare --isa: ROCm 6.4.4 -> ROCm 7.0.0 (source lines from line-table twins whose code is " \
           "byte-identical)" in table.stdout
    assert (shared_build / "history" / "7.0.0" / "spill256-gfx90a-lines.co").is_file()
    assert "spilled registers: 1,315 -> 1,330" in table.stdout


def test_bisect_says_when_the_bad_release_is_not_worse(tmp_path, shared_build):
    cells = series(tmp_path, ["7.0.2", "7.2.2"])
    run = spillway("matrix", "bisect", "spill256", "--good", "7.0.2", "--bad", "7.2.2", "--metric", "vgpr",
                   "--target", "gfx90a", *args(cells, shared_build))
    assert run.returncode == 1
    assert "is not worse than at the good release" in run.stdout


def test_bisect_says_when_the_figures_it_saw_are_not_monotonic(tmp_path, shared_build):
    """A made-up series: ROCm 10.0's library (1123 spills behind clang-19) filed as a release
    "7.1.5" between 6.4.3 (1315) and 7.2.2 (1756), so the release in the middle spills less
    than the good one."""
    real = DOCUMENT["releases"]["10.0"]
    loaded = rel.load(mx.load(REPO / "matrix" / "cells.toml")).release("10.0")
    if not (loaded.forwarder_folder() or Path("/nonexistent")).is_dir():
        pytest.skip("the sysdeps forwarder is not built (scripts/install-toolchains.sh)")
    cells = series(tmp_path, ["6.4.3", "7.2.2"])
    fields = dict(real, rocm="7.1.5", llvm="19")     # llvm 19: keep clang-19 as the front end
    with (tmp_path / "releases.toml").open("a") as handle:
        handle.write('\n[releases."7.1.5"]\n' + "\n".join(f"{k} = {_value(v)}" for k, v in fields.items()) + "\n")
    run = spillway("matrix", "bisect", "spill256", "--good", "6.4.3", "--bad", "7.2.2", "--target", "gfx90a",
                   "--json", *args(cells, shared_build))
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert [(b["release"], b["value"], b["verdict"]) for b in document["builds"]] == [
        ("6.4.3", 1315, "good"), ("7.2.2", 1756, "bad"), ("7.1.5", 1123, "good")]
    assert document["first_bad"] == "7.2.2" and document["monotonic"] is False
    assert "not monotonic over the releases built (6.4.3 1315, 7.1.5 1123, 7.2.2 1756)" in document["note"]


# -- failures, one line each ----------------------------------------------------------------

def one_line(run: subprocess.CompletedProcess, status: int, *words: str) -> str:
    assert run.returncode == status, (run.returncode, run.stdout, run.stderr)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_an_unknown_release_name(tmp_path):
    cells = series(tmp_path, ["6.4.3", "7.0.2"])
    one_line(spillway("matrix", "history", "--releases", "6.9.9..7.0.2", *args(cells, tmp_path / "b")), 2,
             "no release '6.9.9'", "6.4.3, 7.0.2")
    one_line(spillway("matrix", "bisect", "spill256", "--good", "6.4.3", "--bad", "8.0",
                      *args(cells, tmp_path / "b")), 2, "no release '8.0'")


def test_a_front_end_too_new_is_refused_before_building(tmp_path, tools):
    cells = series(tmp_path, ["6.4.3", "7.0.2"])
    one_line(spillway("matrix", "history", "--frontend", "22", *args(cells, tmp_path / "b")), 2,
             "clang 22.1.8 is newer than ROCm 6.4.3's AMD LLVM 19.0.0git", "read forward only")
    assert not (tmp_path / "b").exists()


def test_a_target_the_front_end_does_not_know(tmp_path, tools):
    cells = series(tmp_path, ["6.3.3", "6.4.3"])
    one_line(spillway("matrix", "history", "--target", "gfx942", *args(cells, tmp_path / "b")), 2,
             "clang++-16", "does not know it")


def test_a_kernel_not_in_the_engine(tmp_path, tools):
    cells = series(tmp_path, ["6.4.3", "7.0.2"])
    one_line(spillway("matrix", "history", "no_such_kernel", "--target", "gfx90a", *args(cells, tmp_path / "b")),
             2, "kernel 'no_such_kernel' is in no translation unit of the engine", FIXTURE)


def test_a_release_that_does_not_load_is_listed_with_the_reason(tmp_path, shared_build):
    """ROCm 10.0's library without its sysdeps forwarder (a store holding only the library)."""
    real = rel.load(mx.load(REPO / "matrix" / "cells.toml")).release("10.0")
    if not real.installed_library().is_file():
        pytest.skip("ROCm 10.0's library is not installed (scripts/install-toolchains.sh)")
    store = tmp_path / "store"
    folder = store / f"{real.package}-{real.version}"
    (folder / real.library).parent.mkdir(parents=True)
    os.symlink(real.installed_library(), folder / real.library)
    (folder / rel.READY_MARK).write_text(real.sha256 + "\n")
    cells = series(tmp_path, ["10.0"], store=str(store))
    run = spillway("matrix", "history", "spill256", "--target", "gfx90a", "--json", *args(cells, tmp_path / "b"))
    assert run.returncode == 1, run.stderr
    (column,) = json.loads(run.stdout)["releases"]
    assert column["status"] == "failed"
    assert "cannot load" in column["reason"] and "librocm_sysdeps" in column["reason"]
    assert "\n" not in column["reason"] and "Traceback" not in run.stderr
    table = spillway("matrix", "history", "spill256", "--target", "gfx90a", *args(cells, tmp_path / "b"))
    assert "ROCm 10.0: failed: cannot load" in table.stdout


def test_a_release_listed_as_unusable_is_shown_not_dropped(tmp_path, shared_build):
    cells = series(tmp_path, ["6.4.3", "7.0.2"], override={"7.0.2": {"unusable": "a reason written here"}})
    run = spillway("matrix", "history", "spill256", "--target", "gfx90a", *args(cells, shared_build))
    assert run.returncode == 0, run.stderr
    assert "ROCm 7.0.2: unusable: a reason written here" in run.stdout
    assert "ROCm 7.0.2: not built: a reason written here" in run.stderr


# -- the cache -----------------------------------------------------------------------------

def test_the_cache_lists_and_removes_a_release(tmp_path):
    store = tmp_path / "store"
    real = DOCUMENT["releases"]["7.0.2"]
    (store / "wheels").mkdir(parents=True)
    (store / "wheels" / real["wheel"]).write_bytes(b"w" * 1000)
    library = store / f"{real['package']}-{real['version']}" / real["library"]
    library.parent.mkdir(parents=True)
    library.write_bytes(b"l" * 3000)
    other = store / "rocm-llvm-python-6.4.3.555.43"
    other.mkdir()
    cells = series(tmp_path, ["6.4.3", "7.0.2"], store=str(store))
    listed = spillway("matrix", "cache", "--json", *args(cells, tmp_path / "b"))
    assert listed.returncode == 0, listed.stderr
    entries = json.loads(listed.stdout)["entries"]
    assert sorted((e["kind"], e["release"], e["bytes"]) for e in entries) == [
        ("library", "6.4.3", 0), ("library", "7.0.2", 3000), ("wheel", "7.0.2", 1000)]
    removed = spillway("matrix", "cache", "--remove", "7.0.2", *args(cells, tmp_path / "b"))
    assert removed.returncode == 0, removed.stderr
    assert "removed 2 entries" in removed.stdout
    assert not library.exists() and not (store / "wheels" / real["wheel"]).exists() and other.is_dir()
