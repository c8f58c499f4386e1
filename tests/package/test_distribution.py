"""The package as it would be published: `python -m build` makes the sdist and,
from it, the wheel; `twine check` passes on both; the wheel installs into a
fresh virtual environment (its dependencies from the package index), where
the `spillway` command reads a binary exactly as the checkout's does and the
CMake module the wheel carries gates a CMake project (tests/data/cmake_project)
with no checkout on its module path.

The distribution name is `spillway-amdgpu` (`spillway` on the package index
is an unrelated project); the command and the import package stay `spillway`."""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from support.toolchains import REPO, cmake_project_compiler, require

DISTRIBUTION = "spillway-amdgpu"
FIXTURE = REPO / "fuzz" / "seeds" / "second-gfx1100.co"     # built by fuzz/seeds/build.sh


def run(*command, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    return subprocess.run([str(c) for c in command], timeout=600, **kwargs)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, (result.args, result.stdout[-3000:], result.stderr[-3000:])
    return result


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    pytest.importorskip("build", reason="pip install build (the [test] extra installs it)")
    out = tmp_path_factory.mktemp("dist")
    # A copy of the tracked files: the build writes egg-info next to the sources.
    source = out / "source"
    files = ok(run("git", "-C", REPO, "ls-files", "-z")).stdout.split("\0")
    for name in filter(None, files):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    ok(run(sys.executable, "-m", "build", "--outdir", out / "dist", source))
    return out / "dist"


def test_sdist_and_wheel_are_built_and_pass_twine_check(dist):
    pytest.importorskip("twine", reason="pip install twine (the [test] extra installs it)")
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(dist.iterdir())
    assert wheels[0].name.startswith("spillway_amdgpu-") and sdists[0].name.startswith("spillway_amdgpu-")
    checked = ok(run(sys.executable, "-m", "twine", "check", "--strict", *sdists, *wheels))
    assert checked.stdout.count("PASSED") == 2, checked.stdout
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = wheel.namelist()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(wheel.read(metadata_name).decode())
    assert metadata["Name"] == DISTRIBUTION
    assert "spillway/cmake/SpillwayKernelResources.cmake" in names
    assert "spillway/launch.py" in names and not any(n.startswith(("tests/", "fuzz/")) for n in names)
    with tarfile.open(sdists[0]) as sdist:
        members = sdist.getnames()
    assert any(m.endswith("/pyproject.toml") for m in members)
    assert any(m.endswith("/checker/spillway/cmake/SpillwayKernelResources.cmake") for m in members)


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("venv") / "v"
    ok(run(sys.executable, "-m", "venv", folder))
    wheel = next(dist.glob("*.whl"))
    ok(run(folder / "bin" / "pip", "install", "-q", "--disable-pip-version-check", wheel))
    return folder


def test_installed_command_reads_as_the_checkout_does(venv, tmp_path):
    spillway = venv / "bin" / "spillway"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    version = ok(run(spillway, "--version", env=clean)).stdout
    import spillway as checkout
    assert checkout.__version__ in version
    # The installed package is the venv's, not the checkout's.
    where = ok(run(venv / "bin" / "python", "-c", "import spillway; print(spillway.__file__)", env=clean,
                   cwd=tmp_path)).stdout.strip()
    assert where.startswith(str(venv)), where
    installed = ok(run(spillway, "report", "--all", "--json", FIXTURE, env=clean, cwd=tmp_path)).stdout
    here = ok(run(sys.executable, "-m", "spillway", "report", "--all", "--json", FIXTURE, cwd=tmp_path)).stdout
    assert installed == here and '"kernels"' in installed


def test_cmake_module_from_the_wheel(venv, tmp_path):
    require("cmake")
    require("ctest")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    spillway = venv / "bin" / "spillway"
    module_dir = ok(run(spillway, "cmake-dir", env=clean)).stdout.strip()
    assert module_dir.startswith(str(venv)) and Path(module_dir, "SpillwayKernelResources.cmake").is_file()
    # The project three folders down, as in the checkout, but with no cmake/ folder above it:
    # the module can only come from the wheel.
    project = tmp_path / "a" / "b" / "c"
    shutil.copytree(REPO / "tests" / "data" / "cmake_project", project)
    (tmp_path / "kernels").symlink_to(REPO / "kernels")
    assert not (tmp_path / "cmake").exists()
    baseline = tmp_path / "baseline.json"
    build = tmp_path / "build"
    ok(run("cmake", "-S", project, "-B", build, f"-DCMAKE_CXX_COMPILER={cmake_project_compiler()}",
           f"-DCMAKE_MODULE_PATH={module_dir}", f"-DKERNEL_BASELINE={baseline}",
           f"-DSPILLWAY_EXECUTABLE={spillway}", env=clean))
    ok(run("cmake", "--build", build, env=clean))
    ok(run(spillway, "baseline", "write", build / "libkernels.so", "-o", baseline, "--note", "wheel test",
           "--gate", "scratch,spills", env=clean))
    tested = ok(run("ctest", "--test-dir", build, "--output-on-failure", env=clean))
    assert "100% tests passed" in tested.stdout, tested.stdout
