"""The one build of the repository's whole local matrix the tests make (it is
the slowest thing they do): `spillway matrix run --local` in a copy of the
repository, as the main job runs it on a fresh machine.  test_matrix.py holds
it to the committed baselines; test_ci.py holds the CI fan-in to its outputs
and restores its objects in the example workflow's cell jobs.  A session
fixture, registered by tests/conftest.py (one conftest: they all import as
the module `conftest`).

``one_machine_twin``: a debug twin of one cell of that run (TWIN_CELL:
`matrix build TWIN_CELL --lines` on a copy of its build folder, so only the
twin's kernel objects are compiled; the run's own folder is left as the CI
workflow test reads it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.github_actions import Runner, checkout_files
from support.toolchains import REPO, require


@dataclass
class OneMachineRun:
    runner: Runner                       # its workspace is where the run ran (the workflow's jobs reuse the path)
    run: subprocess.CompletedProcess     # matrix run --local --format github -o build/matrix-summary.md
    outputs: Path                        # a copy of the build folder: cells, junit/, matrix-summary.md and .json
    step_summary: Path                   # what the run appended to $GITHUB_STEP_SUMMARY
    root_unavailable: str                # why the sid root's cells were skipped ("" when they ran)
    seconds: float


TWIN_CELL = "clang-19"


@dataclass
class OneMachineTwin:
    build: Path              # a build folder holding TWIN_CELL: the run's build, and its debug twin in lines/
    run: subprocess.CompletedProcess
    seconds: float


@pytest.fixture(scope="session")
def one_machine_run(tmp_path_factory) -> OneMachineRun:
    from spillway import matrix as mx
    from spillway.matrix.toolchains import root_unavailable

    for version in (15, 16, 19, 22):
        require(f"clang++-{version}")
        require(f"clang-offload-bundler-{version}")
    why = root_unavailable(mx.load(REPO / "matrix" / "cells.toml").systems["sid-root"]) or ""
    if why and os.environ.get("CI"):
        pytest.fail(why)
    home = tmp_path_factory.mktemp("ci-runner")
    runner = Runner(REPO, home, checkout_files(REPO))
    runner.workspace.mkdir(parents=True)
    runner.checkout()
    step_summary = home / "one-machine-step-summary.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    env.update(PYTHONPATH=str(runner.workspace / "checker"), GITHUB_ACTIONS="true",
               GITHUB_STEP_SUMMARY=str(step_summary))

    spillway = _spillway(runner.workspace, env)

    started = time.monotonic()
    run = spillway("matrix", "run", "--local", "--format", "github", "-o", "build/matrix-summary.md",
                   "--junit-dir", "build/junit")
    seconds = time.monotonic() - started
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    compare = spillway("matrix", "compare", "--local", "--format", "json", "-o", "build/matrix-summary.json")
    assert compare.returncode == 0, compare.stderr
    outputs = home / "one-machine"
    shutil.copytree(runner.workspace / "build", outputs)
    return OneMachineRun(runner, run, outputs, step_summary, why, seconds)


def _spillway(workspace: Path, env: dict[str, str]):
    def spillway(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "spillway", *argv], capture_output=True, text=True,
                              cwd=workspace, env=env)
    return spillway


@pytest.fixture(scope="session")
def one_machine_twin(one_machine_run: OneMachineRun, tmp_path_factory) -> OneMachineTwin:
    build = tmp_path_factory.mktemp("one-machine-twin") / "build"
    shutil.copytree(one_machine_run.outputs / TWIN_CELL, build / TWIN_CELL, symlinks=True)
    workspace = one_machine_run.runner.workspace
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    env.update(PYTHONPATH=str(workspace / "checker"))
    started = time.monotonic()
    run = _spillway(workspace, env)("matrix", "build", TWIN_CELL, "--lines", "--build-dir", str(build))
    seconds = time.monotonic() - started
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert (build / TWIN_CELL / "lines" / "libengine.so").is_file(), run.stdout
    return OneMachineTwin(build, run, seconds)
