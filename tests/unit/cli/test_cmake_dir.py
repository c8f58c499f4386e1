"""`spillway cmake-dir` and the CMake module it points to: found through the
installed package, a missing baseline fails the test with the commands that
write it, and the <NAME>_baseline target writes, then tightens, it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.formats_fixtures import FORMATS
from support.toolchains import require

SPILLWAY = [sys.executable, "-m", "spillway"]


def run(*command, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, cwd=cwd)


def test_cmake_dir_holds_the_module():
    result = run(*SPILLWAY, "cmake-dir")
    assert result.returncode == 0, result.stderr
    folder = Path(result.stdout.strip())
    assert (folder / "SpillwayKernelResources.cmake").is_file()
    assert (folder / "SpillwayWriteBaseline.cmake").is_file()
    assert folder.parent.name == "spillway"          # package data, not the checkout's cmake/


def test_baseline_target_writes_then_tightens_and_the_test_says_how(builder, tmp_path):
    require("cmake")
    require("ctest")
    library = builder.link(22, [builder.hip(22, FORMATS, ["gfx90a"])], "libformats.so", "-shared")
    baseline = tmp_path / "checks" / "engine.json"
    python = Path(sys.executable).as_posix()
    (tmp_path / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.20)
project(p NONE)
set(SPILLWAY_COMMAND "{python};-m;spillway")
execute_process(COMMAND {python} -m spillway cmake-dir OUTPUT_VARIABLE spillway_dir
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
list(APPEND CMAKE_MODULE_PATH "${{spillway_dir}}")
include(SpillwayKernelResources)
enable_testing()
spillway_kernel_resources_test(BINARY {library.as_posix()} BASELINE {baseline.as_posix()} GATE scratch,spills
                               NOTE "formats.hip, clang 22")
""")
    build = tmp_path / "build"
    configured = run("cmake", "-S", tmp_path, "-B", build)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    failed = run("ctest", "--test-dir", build, "--output-on-failure")
    assert failed.returncode != 0
    assert f"write it with: spillway baseline write {library} -o {baseline} --note TEXT" in failed.stdout
    assert f"(or: cmake --build {build} --target kernel_resources_test_baseline)" in failed.stdout
    written = run("cmake", "--build", build, "--target", "kernel_resources_test_baseline")
    assert written.returncode == 0, written.stdout + written.stderr
    document = json.loads(baseline.read_text())
    assert document["note"] == "formats.hip, clang 22" and document["gate"] == ["scratch", "spills"]
    passed = run("ctest", "--test-dir", build, "--output-on-failure")
    assert passed.returncode == 0, passed.stdout
    # Again: an update (tightening), the note kept.
    document["note"] = "edited by hand"
    baseline.write_text(json.dumps(document))
    again = run("cmake", "--build", build, "--target", "kernel_resources_test_baseline")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "updated" in again.stdout
    assert json.loads(baseline.read_text())["note"] == "edited by hand"
