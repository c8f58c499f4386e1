"""Where in the repository a failing kernel is (issue 32): the source line a
check failure and its SARIF result point at, so that GitHub annotates the
pull request's diff, when the binaries carry DWARF line tables
(``-gline-tables-only``, or a debug twin).

The line: the kernel's source line with the most scratch traffic (by_line's
order: bytes per lane in innermost loops, then in loops, then in all; the
first placed access on it gives the column), else the line of the kernel's
first instruction (a kernel over its VGPR or occupancy allowance with no
scratch access: its definition).  Accesses with no line are passed over.

The file, relative to the *source root* (``check --source-root``, default
the current directory: a CI job's checkout): the path the line table gives
(its directory joined under the compile unit's DW_AT_comp_dir) when it lies
under the root; else, when the build ran in another folder (a container, a
cache, another checkout), its path relative to DW_AT_comp_dir when that file
exists under the root, else the longest tail of its path that is a file
under the root (``/__w/app/app/src/k.hip`` -> ``src/k.hip``).  A file found
no way (a system header, a ROCm header not in the repository) gives no
location, and the result stays at the kernel's line in the baseline.

The binaries are read again for the failing kernels only (report.
library_lines: every code object scanned, only those kernels decoded).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from spillway.isa.source_lines import PLACED, KernelLines, SourceLine
from spillway.paths import relative_path
from spillway.report.reader import ReadOptions

# Why a location was chosen (SourceLocation.chosen_by).
MOST_SCRATCH = "the line with the most scratch traffic"
KERNEL_ENTRY = "the kernel's first instruction"


@dataclass(frozen=True)
class SourceLocation:
    path: str            # relative to the source root, with forward slashes
    line: int
    column: int          # 0: none named
    inferred: bool       # the line table said line 0 there (constants.INFERRED_LINE)
    chosen_by: str       # MOST_SCRATCH or KERNEL_ENTRY

    def as_dict(self) -> dict:
        return {"file": self.path, "line": self.line, "column": self.column, "inferred": self.inferred,
                "chosen_by": self.chosen_by}


def kernel_line(lines: KernelLines) -> tuple[SourceLine, str] | None:
    """The line a failure of the kernel points at, and why (None: no line)."""
    if lines.status != PLACED:
        return None
    for row in lines.by_line:
        if not row.file:
            continue
        for placed in (*lines.scratch, *lines.agpr_copies):
            source = placed.source
            if source is not None and (source.file, source.line) == (row.file, row.line):
                return source, MOST_SCRATCH
    if lines.entry is not None:
        return lines.entry, KERNEL_ENTRY
    return None


def repository_file(file: str, comp_dir: str, root: str) -> str | None:
    """``file`` (as the line table joins it) relative to ``root``, or None
    when it is not in the repository (see the module's docstring)."""
    base = os.path.abspath(root)
    if os.path.isabs(file):
        relative = os.path.relpath(os.path.normpath(file), base)
        if not relative.startswith(".." + os.sep) and relative != "..":
            return relative.replace(os.sep, "/")
    under = relative_path(file, comp_dir)
    if not os.path.isabs(under):
        normal = os.path.normpath(under)
        if not normal.startswith(".." + os.sep) and normal != ".." and os.path.isfile(os.path.join(base, normal)):
            return normal.replace(os.sep, "/")
    # Built in another checkout (a container's /__w/repo/repo, another machine's home): the longest tail
    # of the path that is a file under the root.
    parts = [part for part in os.path.normpath(file).split(os.sep) if part and part != ".."]
    for first in range(1, len(parts)):
        tail = os.path.join(*parts[first:])
        if os.path.isfile(os.path.join(base, tail)):
            return tail.replace(os.sep, "/")
    return None


def locate(lines: KernelLines, root: str) -> SourceLocation | None:
    found = kernel_line(lines)
    if found is None:
        return None
    source, chosen_by = found
    path = repository_file(source.file, lines.comp_dir, root)
    if path is None:
        return None
    return SourceLocation(path, source.line, source.column, source.inferred, chosen_by)


def failure_locations(paths: Iterable[str], options: ReadOptions, wanted: set[tuple[str, str]], root: str,
                      twin: Iterable[str] | None = None) -> dict[tuple[str, str], SourceLocation]:
    """(target, key) -> the source location of each of the ``wanted``
    kernels that has one, from the binaries ``paths`` (or their debug twin):
    the first instance (in reading order) that gives one."""
    from spillway.report.library_lines import library_lines

    if not wanted:
        return {}
    out: dict[tuple[str, str], SourceLocation] = {}
    for kernel in library_lines(paths, options, wanted, twin):
        ident = (kernel.target, kernel.key)
        if ident not in out:
            found = locate(kernel.lines, root)
            if found is not None:
                out[ident] = found
    return out
