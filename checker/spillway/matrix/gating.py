"""Gating built cells against their baselines, and writing baselines, with the
library's own functions (spillway.gate.check.check, spillway.gate.baseline.build):
the same code `spillway check` and `spillway baseline write` run, called
directly, so a cell is held to exactly what a user running those commands
would be held to."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from spillway import atomic, json_codec
from spillway.errors import SpillwayError
from spillway.matrix.build import CellBuild, cell_dir, library_path
from spillway.matrix.cells import Cell, Matrix
from spillway.matrix.exits import EXIT_FAILED, EXIT_OK, exit_status as run_status

Verdict = Literal["pass", "fail", "error", "skipped"]


@dataclass
class CellCheck:
    cell: Cell
    verdict: Verdict
    reason: str = ""                 # skipped / error: why; pass / fail: the check's sentence
    failures: list[dict] = field(default_factory=list)   # the check document's "failures"
    required: bool = False
    report: Optional[Path] = None    # the check's JSON document (build/<cell>/check.json)
    flags_warning: str = ""          # the cell's flags differ from its baseline's (a failure with strict_flags)
    # What the cell no longer builds (failures): baseline kernels (target, key, name), and targets of its
    # baseline or of its cells.toml entry.
    removed: list[tuple[str, str, str]] = field(default_factory=list)
    removed_targets: list = field(default_factory=list)       # gate.check.RemovedTarget
    result: Any = None               # pass / fail: the gate.check.CheckResult (its JUnit file, spillway.render)


def _read(library: Path, occupancy_model: str | None = None, gate=()):
    """The cell's library, its machine code decoded too when ``gate`` holds a
    machine-code metric (loop_scratch, agpr_copies), as check and baseline write read it."""
    from spillway.gate.metrics import needs_code
    from spillway.gate.reading import read_sources
    from spillway.report.reader import ReadOptions
    from spillway.resources.occupancy import DEFAULT_MODEL
    return read_sources([str(library)], ReadOptions(occupancy_model=occupancy_model or DEFAULT_MODEL,
                                                    isa=needs_code(gate)))


def check_cell(matrix: Matrix, build_dir: Path, build: CellBuild, gate: Optional[str] = None,
               occupancy_model: Optional[str] = None, strict_flags: bool = False) -> CellCheck:
    """Gate one built cell; writes build/<cell>/check.json (the caller its JUnit
    file, from the result the CellCheck keeps).
    The cell's flags are compared with those its baseline recorded: a
    difference is a warning, or with ``strict_flags`` a failure."""
    from spillway.gate.baseline import load_baseline, recorded_model
    from spillway.gate.check import check
    from spillway.gate.flags import cell_flags, compare as compare_flags
    from spillway.gate.metrics import parse_metrics

    cell = build.cell
    if build.status == "skipped":
        return CellCheck(cell, "skipped", build.reason)
    if build.status == "failed":
        return CellCheck(cell, "error", f"build failed: {build.reason}")
    baseline_path = matrix.resolve(cell.baseline)
    if not baseline_path.is_file():
        return CellCheck(cell, "error", f"no baseline {cell.baseline}: write it with "
                                        f"`spillway matrix baseline {cell.name}` where this toolchain runs")
    library = library_path(matrix, build_dir, cell)
    result_path = cell_dir(build_dir, cell) / "check.json"
    result_path.unlink(missing_ok=True)
    try:
        metrics = parse_metrics(gate) if gate else None
        baseline = load_baseline(str(baseline_path))
        # The baseline's occupancy model unless told otherwise (version 1: llvm22).
        model = occupancy_model or recorded_model(baseline)
        inputs = _read(library, model, metrics or baseline.gate)
        # Every kernel and target of the baseline, and every target the cell declares, must be built.
        result = check(inputs.usage, baseline, metrics or baseline.gate, baseline_path=str(baseline_path),
                       occupancy_model=model, declared_targets=cell.targets)
        document = result.to_json()
        atomic.write_bytes(str(result_path), json_codec.dumps(document, indent=True) + b"\n")
    except SpillwayError as exc:
        return CellCheck(cell, "error", str(exc))
    # The cell's flags are what its build used (a collected build made with others is refused before).
    differ = compare_flags(baseline.provenance.flags, cell_flags(cell.flags))
    warning = differ.sentence() if differ else ""
    if warning and strict_flags:
        return CellCheck(cell, "fail", f"{result.summary()}; {warning} [--strict-flags]", document["failures"],
                         report=result_path, flags_warning=warning, removed=result.vanished,
                         removed_targets=result.removed_targets, result=result)
    return CellCheck(cell, "pass" if result.passed else "fail", result.summary(), document["failures"],
                     report=result_path, flags_warning=warning, removed=result.vanished,
                     removed_targets=result.removed_targets, result=result)


def exit_status(checks: list[CellCheck]) -> int:
    return run_status(failed=any(c.verdict in ("fail", "error") for c in checks),
                      required_skipped=any(c.verdict == "skipped" and c.required for c in checks),
                      any_done=any(c.verdict == "pass" for c in checks))


def required_cells(cells: list[Cell], explicit: bool, named: Optional[bool] = None) -> set[str]:
    """Cells whose absence fails a run.  Named cells are always required.
    With --local (``explicit`` without ``named``) or no names: the local cells
    of this machine; cells of a system root only when named (a machine where
    the root cannot be made lists them as skipped without failing)."""
    if named is None:
        named = explicit
    if named:
        return {c.name for c in cells}
    return {c.name for c in cells if c.local and not c.in_root}


# -- baselines --------------------------------------------------------------------------

def baseline_note(matrix: Matrix, build_dir: Path, build: CellBuild) -> str:
    cell = build.cell
    try:
        shown = library_path(matrix, build_dir, cell).relative_to(matrix.root)
    except ValueError:
        shown = library_path(matrix, build_dir, cell)
    flags = " ".join(cell.flags) or "no extra flags"
    where = f" in the {cell.system} root" if cell.in_root else ""
    headers = ", real HIP headers" if cell.hip == "rocm" else ""
    return (f"cell {cell.name}: written by spillway matrix baseline from {shown} built by "
            f"{matrix.engine.recipe}{where} with {build.version} (targets {', '.join(cell.targets)}, "
            f"code object v{cell.code_object_version or 'default'}"
            f"{', compressed' if cell.compress else ''}{headers}, {flags})")


def write_baseline(matrix: Matrix, build_dir: Path, build: CellBuild, fresh: bool = False) -> tuple[int, str]:
    """Write or update one built cell's baseline (what `spillway baseline
    write` does); returns (status, text): 1 when an allowance would have gone
    up (kept, as the command keeps it)."""
    from spillway.gate.baseline import (BackendProvenance, build as build_baseline, load_baseline, recorded_model,
                                        update_summary, write_baseline as write_file)
    from spillway.gate.commands import accept_removed_command
    from spillway.gate.flags import cell_flags

    cell = build.cell
    baseline_path = matrix.resolve(cell.baseline)
    baseline_path.parent.mkdir(parents=True, exist_ok=True)
    # Relative to where we run (the repository root for the main job), so the
    # committed baseline's provenance does not carry this machine's paths.
    library = os.path.relpath(library_path(matrix, build_dir, cell))
    shown = os.path.relpath(baseline_path)
    try:
        # --fresh ignores the old baseline but leaves it in place until the new
        # one is renamed over it: a run killed before that keeps the old file.
        previous = load_baseline(str(baseline_path)) if baseline_path.is_file() and not fresh else None
        # An update keeps the model the baseline was written with (version 1: llvm22).
        inputs = _read(Path(library), recorded_model(previous) if previous else None, cell.gate)
        inputs.sources = [library]
        backend = BackendProvenance.model_validate(build.backend) if build.backend else None
        result = build_baseline(inputs, note=baseline_note(matrix, build_dir, build), gate=tuple(cell.gate),
                                previous=previous, flags=cell_flags(cell.flags), backend=backend)
        write_file(str(baseline_path), result.baseline)
    except SpillwayError as exc:
        return EXIT_FAILED, f"error: {exc}"
    lines = [f"kept {c.metric} of {c.name} [{c.target}] at {c.old} (now {c.new}): raise it with "
             f"spillway baseline write --allow" for c in result.refused]
    lines += [f"kept target {target}: no kernel built for it; accept its removal with: "
              f"{accept_removed_command([library], shown, (), [target])}" for target, _ in result.kept_targets]
    lines += [f"kept {name} [{target}]: no longer built; accept its removal with: "
              f"{accept_removed_command([library], shown, [key])}" for target, key, name in result.kept_removed]
    lines.append(update_summary(result, shown))
    return (EXIT_FAILED if result.kept else EXIT_OK), "\n".join(lines)
