"""Shared by the fault tests: the installed command, one-line error checks,
and small inputs built from the committed fuzz seeds (fuzz/seeds/, built by
fuzz/seeds/build.sh with clang-22)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "fuzz" / "seeds"
CODE_OBJECT = SEEDS / "second-gfx1100.co"
HOST_OBJECT = SEEDS / "host.o"

sys.path.insert(0, str(REPO / "fuzz"))
import layers  # noqa: E402  (fuzz/layers.py: the outer-layer builders)


def spillway() -> list[str]:
    """The installed command, as a user runs it."""
    found = shutil.which("spillway")
    return [found] if found else [sys.executable, "-m", "spillway"]


def run(*args, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("capture_output", True)
    return subprocess.run([*spillway(), *map(str, args)], timeout=timeout, **kwargs)


def one_line_error(result: subprocess.CompletedProcess, *fragments: str, status: int = 2) -> str:
    """Exit ``status``, exactly one line on stderr starting 'spillway: error:',
    no traceback; every fragment in that line."""
    stderr = result.stderr.decode("utf-8", "backslashreplace") if isinstance(result.stderr, bytes) \
        else result.stderr
    assert result.returncode == status, (result.returncode, stderr)
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("spillway: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def code_object_with_kernels(kernels: list[dict], target: str = "amdgcn-amd-amdhsa--gfx1100") -> bytes:
    """The seed code object with its metadata replaced: one entry per dict
    (keys without the leading dot; missing ones taken from a plain kernel)."""
    import msgpack
    base = {".name": "k", ".symbol": "k.kd", ".vgpr_count": 8, ".sgpr_count": 16, ".agpr_count": 0,
            ".vgpr_spill_count": 0, ".sgpr_spill_count": 0, ".private_segment_fixed_size": 0,
            ".group_segment_fixed_size": 0, ".wavefront_size": 32, ".max_flat_workgroup_size": 256,
            ".uses_dynamic_stack": False, ".workgroup_processor_mode": True}
    entries = []
    for kernel in kernels:
        entry = dict(base)
        entry.update({("." + k if not k.startswith(".") else k): v for k, v in kernel.items()})
        entries.append(entry)
    document = {"amdhsa.version": [1, 2], "amdhsa.target": target, "amdhsa.kernels": entries}
    return layers.code_object_with_metadata(CODE_OBJECT.read_bytes(), msgpack.packb(document))


def live_processes() -> list[tuple[int, int, int]]:
    """(pid, parent pid, session id) of every live process (zombies left out),
    from /proc/PID/stat."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue            # the process ended
        if fields[0] != "Z":
            found.append((int(entry), int(fields[1]), int(fields[3])))
    return found


def children_of_session(session: int) -> list[int]:
    """Live processes in a session (to find orphaned workers)."""
    return [pid for pid, _, sid in live_processes() if sid == session]


def descendants(pid: int) -> list[int]:
    """Live processes whose parent chain reaches ``pid``."""
    children: dict[int, list[int]] = {}
    for child, parent, _ in live_processes():
        children.setdefault(parent, []).append(child)
    found, frontier = [], [pid]
    while frontier:
        below = children.get(frontier.pop(), [])
        found += below
        frontier += below
    return found
