"""Faults a user meets while `spillway baseline write` runs, through the
installed command: SIGKILL at several points (the old baseline stays
byte-identical, no temporary file is left once the next run has started, no
worker process outlives the run), SIGINT (exit 130, one line), and
concurrent writers to one file (never a torn file)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from faultkit import children_of_session, code_object_with_kernels, layers, run, spillway

ENV = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")


def _kernels(count: int, scratch_step: int) -> bytes:
    return code_object_with_kernels([{"name": f"_Z6kernelILi{i}EEvPf",
                                      "private_segment_fixed_size": i % 3 * scratch_step} for i in range(count)])


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Two builds of many kernels: the old one has less scratch (the update
    changes most lines); several targets so the read takes a few seconds."""
    folder = tmp_path_factory.mktemp("builds")
    paths = {}
    for name, step in (("old", 16), ("new", 32)):
        co = _kernels(3000, step)
        entries = [(layers.HOST_ENTRY, b"")] + [(f"hipv4-amdgcn-amd-amdhsa--{t}", co)
                                                 for t in ("gfx1100", "gfx1030", "gfx1151", "gfx1200")]
        path = folder / f"{name}.hipfb"
        path.write_bytes(layers.bundle(entries, align=8))
        paths[name] = path
    # What the update writes when it is not interrupted (SOURCE_DATE_EPOCH: same bytes every run).
    expected = folder / "expected.json"
    assert run("baseline", "write", paths["old"], "-o", expected, "--note", "n", env=ENV).returncode == 0
    assert run("baseline", "write", paths["new"], "-o", expected, "--allow", "*", "--reason", "r",
               env=ENV).returncode == 0
    paths["old_bytes"] = None
    paths["expected"] = expected.read_bytes()
    return paths


def _fresh_baseline(build, folder: Path) -> tuple[Path, bytes]:
    target = folder / "baseline.json"
    assert run("baseline", "write", build["old"], "-o", target, "--note", "n", env=ENV).returncode == 0
    return target, target.read_bytes()


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".spillway-"))


def _start_update(build, target: Path) -> subprocess.Popen:
    return subprocess.Popen([*spillway(), "baseline", "write", str(build["new"]), "-o", str(target),
                             "--allow", "*", "--reason", "r"], env=ENV, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _writing(pid: int, folder: Path) -> bool:
    """Has the process an open file in the baseline's folder (the new file
    being written and synced)?"""
    try:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return False
    return any(link.startswith(str(folder) + "/") and not link.endswith("baseline.json") for link in links)


FRACTIONS = {"start": 0.05, "reading": 0.4, "late": 0.9}


def _kill_when(process: subprocess.Popen, folder: Path, point: str, duration: float,
               attempt: int = 0) -> bool:
    """SIGKILL at ``point``; True if the process was killed (not finished).
    ``duration`` is how long an update takes; a timed point moves earlier by
    a tenth of the run on each retry (a run that finished before its kill
    point, on a machine quieter than when ``duration`` was measured)."""
    started = time.monotonic()
    if point == "in_write":
        while process.poll() is None:
            if _writing(process.pid, folder):
                break
            time.sleep(0.0005)
    else:
        fraction = max(FRACTIONS[point] - 0.1 * attempt, FRACTIONS[point] / 2)
        while process.poll() is None and time.monotonic() - started < fraction * duration:
            time.sleep(0.005)
    if process.poll() is not None:
        return False
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    return True


@pytest.fixture(scope="module")
def duration(build, tmp_path_factory):
    folder = tmp_path_factory.mktemp("timing")
    target, _ = _fresh_baseline(build, folder)
    started = time.monotonic()
    process = _start_update(build, target)
    process.communicate(timeout=300)
    assert process.returncode == 0
    return time.monotonic() - started


@pytest.mark.parametrize("point", ["start", "reading", "in_write", "late"])
def test_sigkill_leaves_the_old_baseline_or_the_new_one(build, duration, tmp_path, point):
    target, old = _fresh_baseline(build, tmp_path)
    for attempt in range(6):
        started = time.monotonic()
        process = _start_update(build, target)
        killed = _kill_when(process, tmp_path, point, duration, attempt)
        now = target.read_bytes()
        if not killed:
            process.communicate(timeout=30)
            # The next attempt times its kill point on this run's length.
            duration = min(duration, time.monotonic() - started)
            assert now == build["expected"]
            target.write_bytes(old)
            continue
        # Old or new, never a mixture; before the rename, always the old one.
        assert now in (old, build["expected"]), point
        if point in ("start", "reading"):
            assert now == old
        json.loads(now)
        # No worker outlives the run (the session is the run's).
        deadline = time.monotonic() + 10
        while children_of_session(process.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert children_of_session(process.pid) == []
        # An unnamed temporary (O_TMPFILE) leaves nothing even when killed
        # mid-write; a named one from a killed run goes when the next run starts.
        left = _temporaries(tmp_path)
        again = run("baseline", "write", build["new"], "-o", target, "--allow", "*", "--reason", "r", env=ENV)
        assert again.returncode == 0, again.stderr
        assert target.read_bytes() == build["expected"]
        assert _temporaries(tmp_path) == [], (left, _temporaries(tmp_path))
        return
    pytest.fail(f"the update always finished before the kill point {point!r}")


def test_stale_named_temporary_of_a_killed_run_is_removed(build, tmp_path):
    """What a run killed between naming its file and renaming it leaves
    (or one of an older spillway on a file system without O_TMPFILE)."""
    target, _ = _fresh_baseline(build, tmp_path)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".spillway-{dead.pid}-0123456789ab.tmp"
    stale.write_bytes(b'{"half": ')
    alive = tmp_path / f".spillway-{os.getpid()}-0123456789ab.tmp"   # a live writer's: kept
    alive.write_bytes(b"in progress")
    unrelated = tmp_path / ".spillway-notes"
    unrelated.write_text("not ours")
    result = run("baseline", "write", build["new"], "-o", target, "--allow", "*", "--reason", "r", env=ENV)
    assert result.returncode == 0, result.stderr
    assert not stale.exists()
    assert alive.exists() and unrelated.exists()


def test_sigint_gives_130_and_one_line(build, duration, tmp_path):
    target, old = _fresh_baseline(build, tmp_path)
    process = _start_update(build, target)
    time.sleep(min(0.4 * duration, 1.5))
    if process.poll() is not None:
        pytest.fail("the update finished before SIGINT")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    lines = stderr.decode().strip().splitlines()
    assert lines == ["spillway: interrupted"], stderr
    assert target.read_bytes() == old
    assert _temporaries(tmp_path) == []
    deadline = time.monotonic() + 10
    while children_of_session(process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert children_of_session(process.pid) == []


def test_concurrent_writers_never_tear_the_file(build, tmp_path):
    target, old = _fresh_baseline(build, tmp_path)
    for _ in range(2):
        writers = [_start_update(build, target) for _ in range(3)]
        for writer in writers:
            writer.communicate(timeout=300)
        assert all(w.returncode in (0, 1) for w in writers), [w.returncode for w in writers]
        assert target.read_bytes() == build["expected"]
        assert _temporaries(tmp_path) == []
