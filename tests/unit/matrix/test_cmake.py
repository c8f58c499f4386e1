"""cmake/SpillwayKernelResources.cmake on a small CMake project
(tests/data/cmake_project): ctest passes on a good build and fails, naming
the kernel, on a build that spills."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.toolchains import REPO, cmake_project_compiler, require

PROJECT = Path(__file__).resolve().parents[2] / "data" / "cmake_project"
MODULE = REPO / "cmake" / "SpillwayKernelResources.cmake"


def compiler() -> str:
    return cmake_project_compiler()


def run(*command, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, cwd=cwd)


def configure_and_build(build: Path, baseline: Path, *options: str) -> None:
    # The spillway of the Python running the tests, when it has a script next to it.
    script = Path(sys.executable).parent / "spillway"
    chosen = [f"-DSPILLWAY_EXECUTABLE={script}"] if script.exists() else []
    result = run("cmake", "-S", PROJECT, "-B", build, f"-DCMAKE_CXX_COMPILER={compiler()}",
                 f"-DKERNEL_BASELINE={baseline}", *chosen, *options)
    assert result.returncode == 0, result.stdout + result.stderr
    result = run("cmake", "--build", build)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    require("cmake")
    require("ctest")
    compiler()
    folder = tmp_path_factory.mktemp("cmake")
    baseline = folder / "baseline.json"
    good = folder / "good"
    configure_and_build(good, baseline)
    library = good / "libkernels.so"
    written = run(sys.executable, "-m", "spillway", "baseline", "write", library, "-o", baseline,
                  "--note", "tests/data/cmake_project built with KERNEL_MAX_THREADS=128", "--gate", "scratch,spills")
    assert written.returncode == 0, written.stdout + written.stderr
    return folder, baseline


def test_ctest_passes_on_a_good_build(project):
    folder, _ = project
    result = run("ctest", "--test-dir", folder / "good", "--output-on-failure")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"kernel_resources_test \.+ +Passed", result.stdout)
    assert "OK: 2 kernels within baseline" in result.stdout or "100% tests passed" in result.stdout


def test_the_test_is_labelled_cpu_and_kernels(project):
    folder, _ = project
    for label in ("cpu", "kernels"):
        listed = run("ctest", "--test-dir", folder / "good", "-N", "-L", label)
        assert "kernel_resources_test" in listed.stdout and "Total Tests: 1" in listed.stdout
    assert "Total Tests: 0" in run("ctest", "--test-dir", folder / "good", "-N", "-L", "gpu").stdout


def test_ctest_fails_naming_the_kernel_on_a_build_that_spills(project):
    folder, baseline = project
    spilling = folder / "spilling"
    # Same kernel, launch bound 1024: on gfx90a it gets 128 VGPRs and spills.
    configure_and_build(spilling, baseline, "-DKERNEL_MAX_THREADS=1024")
    result = run("ctest", "--test-dir", spilling, "--output-on-failure")
    assert result.returncode != 0
    assert re.search(r"kernel_resources_test \.+\*+Failed", result.stdout)
    assert re.search(r"over baseline: row_norm_16k \[gfx90a\]: scratch \d+ B/lane, allowed at most 0", result.stdout)
    assert "scale_rows" not in result.stdout.split("over baseline", 1)[1].split("\n", 1)[0]


def test_module_rejects_a_call_without_baseline(tmp_path):
    require("cmake")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\n"
        f"include({MODULE.as_posix()})\nenable_testing()\n"
        "spillway_kernel_resources_test(BINARY libx.so)\n")
    result = run("cmake", "-S", tmp_path, "-B", tmp_path / "build")
    assert result.returncode != 0
    assert "BASELINE <file> is required" in " ".join(result.stderr.split())
