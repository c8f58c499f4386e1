"""A benchmarked command's process tree, read from /proc (Linux), for the
memory figures of bench_scale.py (summed RSS) and bench_libraries.py
(summed PSS).  Sampled every 20 ms beside the measured run on the same two
cores, so it reads only the tree's own files: /proc/PID/task/*/children (a
full scan of every process's parent where the kernel has no such file)."""

from __future__ import annotations

import os

PAGE = os.sysconf("SC_PAGE_SIZE")


def _children(pid: int) -> list[int] | None:
    """The children of ``pid`` (None where the kernel has no children file)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found            # the process ended
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(map(int, handle.read().split()))
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{task}"):
                continue            # the thread ended
            return None
        except OSError:
            continue
    return found


def _tree_by_scan(root: int) -> list[int]:
    """``tree`` from every process's parent."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def tree(root: int) -> list[int]:
    """``root`` and its descendants."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        children = _children(pid)
        if children is None:
            return _tree_by_scan(root)
        todo.extend(children)
    return found


def rss(pid: int) -> int:
    """Resident set size in bytes (0 once the process has ended)."""
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def pss(pid: int) -> int:
    """Proportional set size in bytes (0 once the process has ended)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss(root: int) -> int:
    """Summed RSS of ``root`` and its descendants, in bytes."""
    return sum(rss(pid) for pid in tree(root))


def tree_pss(root: int) -> int:
    """Summed PSS of ``root`` and its descendants, in bytes."""
    return sum(pss(pid) for pid in tree(root))
