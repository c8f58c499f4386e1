"""What the renderings of a matrix cell's check share (spillway.render: the
verdict lines of ``matrix check``, ``run``, ``collect``, their GitHub
annotations and SARIF runs): a failure worded as ``check`` words it, the
command that accepts a failing cell's kernels, those that accept what a cell
no longer builds, the library a cell's check read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from spillway.gate.check import CheckResult, Finding, Quote, RemovalCommands, RemovedTarget, raw
from spillway.gate.commands import accept_command as _command, accept_removed_command
from spillway.matrix.gating import CellCheck

def accept_command(c: CellCheck, keys: list[str], word: Quote = raw) -> str:
    """The `spillway baseline write` that accepts these kernels of a failing cell
    (``word``: how a line output shows each word, as gate.commands)."""
    library = cell_library(c)
    path = os.path.relpath(library) if library else f"build/{c.cell.name}/LIBRARY"
    return _command([path], c.cell.baseline, keys[:10], gate=",".join(c.cell.gate), word=word)


def removal_commands(c: CellCheck, word: Quote = raw) -> RemovalCommands:
    """The commands that accept what a cell no longer builds: `spillway baseline write
    --allow-removed` for its baseline's kernels and targets; a target the cell declares
    in cells.toml is built, or taken out of the cell's targets there."""
    library = cell_library(c)
    path = os.path.relpath(library) if library else f"build/{c.cell.name}/LIBRARY"

    def target(removed: RemovedTarget) -> str:
        command = accept_removed_command([path], c.cell.baseline, (), [removed.target], word=word)
        if not removed.declared:
            return command
        what = "build it, or take it out of the cell's targets in cells.toml"
        return f"{what} (and accept its removal from the baseline with: {command})" if removed.in_baseline else what

    def every(result: CheckResult) -> tuple[str, int]:
        keys = list(dict.fromkeys(key for _target, key, _name in c.removed))
        targets = [t.target for t in c.removed_targets if t.in_baseline]
        return (accept_removed_command([path], c.cell.baseline, keys[:10], targets, word=word),
                max(0, len(keys) - 10))

    return RemovalCommands(lambda key: accept_removed_command([path], c.cell.baseline, [key], word=word), target,
                           every)


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


def failure_text(f: dict, quote=raw) -> str:
    """One over-baseline finding of spillway.check/2, worded as check words it
    (``quote``: the sink's, for the name and target)."""
    return Finding.from_document(f).line(quote=quote)
