"""The terminal rendering of the matrix's cell checks (``matrix check``,
``run``, ``collect``): a verdict line per cell, its failures worded as
``check`` words them, the command that accepts them; and the accept command
the GitHub and SARIF renderings of a cell share."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from spillway.gate.check import CheckResult, Finding, RemovalCommands, RemovedTarget
from spillway.gate.commands import accept_command as _command, accept_removed_command
from spillway.matrix.gating import CellCheck
from spillway.untrusted import visible

# Failures listed per failing cell; the rest are counted (all of them are in the cell's check.json).
FAILURES_SHOWN = 20


def accept_command(c: CellCheck, keys: list[str]) -> str:
    """The `spillway baseline write` that accepts these kernels of a failing cell."""
    library = cell_library(c)
    path = os.path.relpath(library) if library else f"build/{c.cell.name}/LIBRARY"
    return _command([path], c.cell.baseline, keys[:10], gate=",".join(c.cell.gate))


def removal_commands(c: CellCheck) -> RemovalCommands:
    """The commands that accept what a cell no longer builds: `spillway baseline write
    --allow-removed` for its baseline's kernels and targets; a target the cell declares
    in cells.toml is built, or taken out of the cell's targets there."""
    library = cell_library(c)
    path = os.path.relpath(library) if library else f"build/{c.cell.name}/LIBRARY"

    def target(removed: RemovedTarget) -> str:
        command = accept_removed_command([path], c.cell.baseline, (), [removed.target])
        if not removed.declared:
            return command
        what = "build it, or take it out of the cell's targets in cells.toml"
        return f"{what} (and accept its removal from the baseline with: {command})" if removed.in_baseline else what

    def every(result: CheckResult) -> tuple[str, int]:
        keys = list(dict.fromkeys(key for _target, key, _name in c.removed))
        targets = [t.target for t in c.removed_targets if t.in_baseline]
        return accept_removed_command([path], c.cell.baseline, keys[:10], targets), max(0, len(keys) - 10)

    return RemovalCommands(lambda key: accept_removed_command([path], c.cell.baseline, [key]), target, every)


def removal_result(c: CellCheck) -> CheckResult:
    """A cell's removals as a check result (for the renderings a check and a cell share)."""
    return CheckResult(c.cell.baseline, tuple(c.cell.gate), 0, [], list(c.removed), [], failing=[],
                       removed_targets=list(c.removed_targets))


def cell_library(c: CellCheck) -> Optional[Path]:
    """The library a cell's check read (next to its check.json)."""
    if c.report is None:
        return None
    found = sorted(p for p in c.report.parent.iterdir() if p.suffix == ".so")
    return found[0] if found else None


def failure_text(f: dict) -> str:
    """One over-baseline finding of spillway.check/2, worded as check words it."""
    return Finding.from_document(f).line()


def print_checks(console, checks: list[CellCheck]) -> None:
    """``matrix check``: each cell's verdict line with its failures under it, then the counts."""
    width = max(len(c.cell.name) for c in checks) if checks else 0
    for c in checks:
        _verdict(console, c, width)
        _details(console, c)
    _counts(console, checks)


def print_verdicts(console, checks: list[CellCheck]) -> None:
    """The main job's first lines: one line per cell, its verdict and why, then the counts."""
    width = max(len(c.cell.name) for c in checks) if checks else 0
    for c in checks:
        _verdict(console, c, width)
    _counts(console, checks)


def print_details(console, checks: list[CellCheck]) -> None:
    """After the verdicts (and what changed): each failing cell's failures and
    the command that accepts them, and the flags warnings."""
    from rich.markup import escape

    for c in checks:
        if c.failures or c.removed or c.removed_targets or (
                c.flags_warning and not c.reason.endswith("[--strict-flags]")):
            console.print(escape(visible(f"{c.cell.name}:")), highlight=False)
            _details(console, c)


def _verdict(console, c: CellCheck, width: int) -> None:
    from rich.markup import escape

    name = c.cell.name.ljust(width)
    if c.verdict == "pass":
        console.print(escape(visible(f"PASS     {name}  {c.reason}")), highlight=False)
    elif c.verdict == "fail":
        console.print(escape(visible(f"FAIL     {name}  {c.reason}")), highlight=False, style="red")
    elif c.verdict == "error":
        console.print(escape(visible(f"ERROR    {name}  {c.reason}")), highlight=False, style="red")
    elif c.verdict == "skipped":
        note = " (required here: the run does not pass)" if c.required else ""
        console.print(escape(visible(f"SKIPPED  {name}  skipped: {c.reason}{note}")), highlight=False, style="yellow")


def _details(console, c: CellCheck) -> None:
    from rich.markup import escape

    if c.verdict == "fail":
        for f in c.failures[:FAILURES_SHOWN]:
            console.print(escape(visible(f"           over baseline: {failure_text(f)}")), highlight=False)
        if len(c.failures) > FAILURES_SHOWN:
            console.print(f"           ... and {len(c.failures) - FAILURES_SHOWN} more ({c.report})",
                          highlight=False)
        keys = list(dict.fromkeys(f["key"] for f in c.failures))
        if keys:
            console.print(escape(visible(f"           intended? accept with: {accept_command(c, keys)}")),
                          highlight=False, soft_wrap=True)
        if c.removed or c.removed_targets:
            from spillway.gate.table import print_removed

            print_removed(removal_result(c), console, limit=FAILURES_SHOWN, names="short",
                          removals=removal_commands(c), indent="           ")
    if c.flags_warning and not c.reason.endswith("[--strict-flags]"):
        console.print(escape(visible(f"           warning: {c.flags_warning} (--strict-flags fails on it)")),
                      highlight=False, style="yellow", soft_wrap=True)


def _counts(console, checks: list[CellCheck]) -> None:
    counts = {v: sum(1 for c in checks if c.verdict == v) for v in ("pass", "fail", "error", "skipped")}
    console.print(f"matrix check: {counts['pass']} cells passed, {counts['fail']} over baseline, "
                  f"{counts['error']} errors, {counts['skipped']} skipped", highlight=False)
