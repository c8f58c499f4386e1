"""SIGKILL during `spillway matrix baseline` (the matrix writing each built
cell's baseline, as `spillway baseline write` does), through the installed
command, on two real cells (Debian clang 16 and 19) built once from the
repository's kernels.

At every kill point: each cell's baseline is byte-identical to the old one
or is the complete new one (never torn, never missing, also with --fresh,
which starts the baselines over); the second cell's is never newer than the
first's (the cells are written in order); no process of the run is left
running (the main process alone is killed, as the OOM killer or a lost CI
runner does: its workers must go with it); no temporary file is left once
the next run has started; and the next run writes the expected baselines."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from faultkit import REPO, children_of_session, descendants, run, spillway
from support.matrix_fixtures import cell_table
from support.toolchains import require

CELLS = ("clang-16", "clang-19")
ENV = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
OLD_INPUT = REPO / "fuzz" / "seeds" / "second-gfx1100.co"   # the old baselines' build: other kernels


def _cells_file(folder: Path) -> Path:
    import tomllib
    cells = tomllib.loads((REPO / "matrix" / "cells.toml").read_text())["cells"]
    lines = ['schema = "1"', "", "[engine]", 'library = "libengine.so"',
             'sources = ["kernels/routed_gemm.hip", "kernels/rmsnorm.hip"]',
             'headers = ["kernels/include", "kernels/engine"]', 'recipe = "matrix/compile.sh"', ""]
    for name in CELLS:
        lines.append(cell_table(name, **dict(cells[name], baseline=str(folder / "baselines" / f"{name}.json"))))
    path = folder / "cells.toml"
    path.write_text("\n".join(lines))
    return path


class Matrix:
    def __init__(self, folder: Path):
        self.folder = folder
        self.cells = _cells_file(folder)
        self.build = folder / "build"
        self.baselines = folder / "baselines"
        self.baselines.mkdir(exist_ok=True)
        self.paths = [self.baselines / f"{name}.json" for name in CELLS]

    def command(self, *extra: str) -> list[str]:
        return [*spillway(), "matrix", "baseline", "--cells", str(self.cells), "--root", str(REPO),
                "--build-dir", str(self.build), *extra]

    def write_old(self) -> list[bytes]:
        for path in self.paths:
            # Written anew: an update of a newer baseline from the old build would keep the targets
            # the old build lacks (a removal is accepted only with --allow-removed-target).
            path.unlink(missing_ok=True)
            result = run("baseline", "write", OLD_INPUT, "-o", path, "--gate", "scratch,spills", "--note", "old",
                         env=ENV)
            assert result.returncode == 0, result.stderr
        return [path.read_bytes() for path in self.paths]

    def update(self, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(*extra), env=ENV, cwd=self.folder, capture_output=True, timeout=600)

    def start(self, *extra: str) -> subprocess.Popen:
        return subprocess.Popen(self.command(*extra), env=ENV, cwd=self.folder, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def temporaries(self) -> list[str]:
        return sorted(p.name for p in self.baselines.iterdir() if p.name.startswith(".spillway-"))


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    for tool in ("clang++-16", "clang-offload-bundler-16", "ld.lld-16",
                 "clang++-19", "clang-offload-bundler-19", "ld.lld-19"):
        require(tool)
    m = Matrix(tmp_path_factory.mktemp("matrix"))
    built = subprocess.run([*spillway(), "matrix", "build", "--cells", str(m.cells), "--root", str(REPO),
                            "--build-dir", str(m.build)], capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout + built.stderr
    # What an uninterrupted update of the old baselines writes, and a --fresh one.
    m.old = m.write_old()
    first = m.update()
    assert first.returncode in (0, 1), first.stderr     # 1: allowances that would go up are kept
    m.status = first.returncode
    m.expected = [path.read_bytes() for path in m.paths]
    assert all(new != old for new, old in zip(m.expected, m.old))
    assert m.update().returncode == m.status and [p.read_bytes() for p in m.paths] == m.expected  # idempotent
    m.write_old()
    assert m.update("--fresh").returncode == 0
    m.fresh = [path.read_bytes() for path in m.paths]
    # The fastest of three uninterrupted runs: one run timed on a loaded host can take twice as long
    # as the next, and a kill at a fraction of it would come after every later run had finished.
    times = []
    for _ in range(3):
        m.write_old()
        started = time.monotonic()
        m.update()
        times.append(time.monotonic() - started)
    m.duration = min(times)
    return m


def _has_file_open_in(pid: int, folder: Path) -> bool:
    """The process holds a descriptor in the baselines' folder other than a
    baseline itself (the new file being written: O_TMPFILE or named)."""
    try:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return False
    return any(link.startswith(str(folder) + "/") and not link.endswith(".json") for link in links)


def _wait_for(process: subprocess.Popen, condition, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while process.poll() is None and time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.0005)
    return False


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t", "Z", "X")
    except OSError:
        return True


def _freeze_when(process: subprocess.Popen, condition, limit: float) -> bool:
    """Leave the main process stopped (SIGSTOP) at a moment when ``condition``
    holds; False when it never did.  Seeing the condition and then killing
    would race with the process (a small baseline is written in well under a
    millisecond): the condition is checked again while the process is frozen,
    and the process is resumed when it no longer holds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not _wait_for(process, condition, deadline - time.monotonic()):
            return False
        os.kill(process.pid, signal.SIGSTOP)
        while not _stopped(process.pid):
            time.sleep(0.0001)
        if process.poll() is not None:
            return False
        if condition():
            return True
        os.kill(process.pid, signal.SIGCONT)
    return False


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _kill_at(m: Matrix, process: subprocess.Popen, point: str, new: list[bytes], attempt: int = 0) -> bool:
    """SIGKILL the main process at ``point``; False when the run finished first
    (each later ``attempt`` waits a fifth less for the timed points)."""
    first, second = m.paths
    if point in ("start", "reading", "late"):
        fraction = {"start": 0.05, "reading": 0.35, "late": 0.75}[point]
        _wait_for(process, lambda: False, fraction * m.duration * 0.8 ** attempt)
    elif point == "writing the first":
        if not _freeze_when(process, lambda: _has_file_open_in(process.pid, m.baselines)
                            and _bytes(first) != new[0], 120):
            return False
    elif point == "between the cells":
        if not _freeze_when(process, lambda: _bytes(first) == new[0] and _bytes(second) != new[1], 120):
            return False
    elif point == "writing the second":
        if not _freeze_when(process, lambda: _bytes(first) == new[0] and _bytes(second) != new[1]
                            and _has_file_open_in(process.pid, m.baselines), 120):
            return False
    if process.poll() is not None:
        return False
    os.kill(process.pid, signal.SIGKILL)     # the main process only (stopped or not)
    process.wait(timeout=30)
    return True


POINTS = ["start", "reading", "writing the first", "between the cells", "writing the second", "late"]


@pytest.mark.parametrize("fresh", [False, True], ids=["update", "fresh"])
@pytest.mark.parametrize("point", POINTS)
def test_sigkill_leaves_each_baseline_old_or_new(matrix, point, fresh):
    m = matrix
    extra = ("--fresh",) if fresh else ()
    new = m.fresh if fresh else m.expected
    for attempt in range(6):
        old = m.write_old()
        process = m.start(*extra)
        killed = _kill_at(m, process, point, new, attempt)
        now = [_bytes(path) for path in m.paths]
        if not killed:
            process.wait(timeout=600)
            assert now == new
            continue
        for path, before, after, current in zip(m.paths, old, new, now):
            assert current is not None, f"{path.name} is missing after a kill at {point!r}"
            assert current in (before, after), f"{path.name} is torn after a kill at {point!r}"
        if now[1] == new[1]:
            assert now[0] == new[0], "the second cell's baseline was written before the first's"
        if point in ("start", "writing the first"):
            assert now == old, point
        if point in ("between the cells", "writing the second"):
            assert now == [new[0], old[1]], point
        # Nothing of the run is left running (its session).
        deadline = time.monotonic() + 15
        while children_of_session(process.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert children_of_session(process.pid) == [], "processes of the killed run are still running"
        # The next run starts clean, leaves no temporary file and writes what an
        # uninterrupted run would (an update of an updated baseline changes nothing).
        left = m.temporaries()
        again = m.update(*extra)
        assert again.returncode in (0, m.status), again.stderr
        assert [p.read_bytes() for p in m.paths] == new
        assert m.temporaries() == [], (left, m.temporaries())
        return
    pytest.fail(f"the matrix baseline run always finished before the kill point {point!r}")


def test_sigkill_while_the_cells_build(matrix):
    """Killed while the compilers run (the build is the first step of
    `matrix baseline`): the old baselines stay, the compilers the run had
    started finish their one translation unit and exit (none is left running),
    and the next run builds again and writes the expected baselines."""
    import shutil
    m = matrix
    for attempt in range(3):
        old = m.write_old()
        for name in CELLS:
            shutil.rmtree(m.build / name, ignore_errors=True)
        process = m.start()
        if not _wait_for(process, lambda: len(descendants(process.pid)) >= 2, 300):
            process.wait(timeout=600)
            continue
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        assert [_bytes(p) for p in m.paths] == old
        deadline = time.monotonic() + 300
        while children_of_session(process.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert children_of_session(process.pid) == [], "compilers of the killed run are still running"
        again = m.update()
        assert again.returncode in (0, m.status), again.stderr
        assert [p.read_bytes() for p in m.paths] == m.expected
        assert m.temporaries() == []
        return
    pytest.fail("the build always finished before the kill")
