"""Comparing built cells: every cell's kernels read with spillway's reader and
lined up by target group and stable key, side by side (the Summary model;
summary_json is its JSON document, spillway.render draws its table, Markdown and page), or two cells
through spillway's own comparison."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from spillway.errors import UsageError
from spillway.matrix.build import library_path
from spillway.matrix.cells import Cell, Matrix
from spillway.resources.occupancy import DEFAULT_MODEL


def target_group(target_id: str) -> str:
    """Rows of the cross-cell view: gfx11 parts are one row (gfx1100 in LLVM
    15/16 cells, gfx1151 elsewhere: same register file, same numbers bar
    SGPRs), other targets are their processor."""
    processor = target_id.split(":", 1)[0]
    match = re.match(r"^gfx(1[0-9])[0-9a-f]{2}$", processor)
    return f"gfx{match.group(1)}" if match else processor


def read_cell(matrix: Matrix, build_dir: Path, cell: Cell, occupancy_model: str = DEFAULT_MODEL):
    """({(target group, stable key): KernelUsage}, processors built) of a built
    cell, occupancy under ``occupancy_model``, or None when it is not built.
    Read as check reads a build (compact rows folded as the workers hand them
    over), then each kernel's targets folded into its target group."""
    from spillway.gate.kernels import KernelUsage
    from spillway.gate.reading import read_sources
    from spillway.report.reader import ReadOptions

    library = library_path(matrix, build_dir, cell)
    if not library.is_file():
        return None
    usage = read_sources([str(library)], ReadOptions(occupancy_model=occupancy_model), allow_empty=True).usage
    grouped: dict[tuple[str, str], KernelUsage] = {}
    for (target, key), kernel in usage.items():
        ident = (target_group(target), key)
        seen = grouped.get(ident)
        if seen is None:
            grouped[ident] = KernelUsage(ident[0], key, short_name(kernel.name), kernel.resources,
                                         kernel.instances, kernel.occupancy_next)
        else:
            seen.add_instance(kernel.resources, kernel.occupancy_next, kernel.instances)
    return grouped, sorted({target for target, _ in usage})


def short_name(demangled: str) -> str:
    """``void ns::f<1, 2>(int*, float)`` -> ``ns::f<1, 2>`` with versioned
    inline namespaces dropped."""
    from spillway.resources.names import display_key, short_name as without_signature
    return without_signature(display_key(demangled))


@dataclass
class Summary:
    cells: list[Cell]
    targets: dict[str, list[str]]                  # cell -> processors built
    rows: list[tuple[str, str, str]]               # (group, key, name)
    usage: dict[str, dict]                         # cell -> {(group, key): KernelUsage}
    occupancy_model: str = DEFAULT_MODEL           # what every cell's waves per SIMD follow

    def value(self, cell: str, row: tuple[str, str, str]):
        usage = self.usage[cell].get((row[0], row[1]))
        return usage.resources if usage else None

    def differs(self, row) -> bool:
        """Do the cells that built this kernel for this target disagree?"""
        seen = {self._figures(self.value(c.name, row)) for c in self.cells} - {None}
        return len(seen) > 1

    @staticmethod
    def _figures(r) -> Optional[tuple]:
        return None if r is None else (r.vgprs, r.spills, r.scratch, r.occupancy)


def summarize(matrix: Matrix, build_dir: Path, cells: list[Cell],
              occupancy_model: str = DEFAULT_MODEL) -> Summary:
    """The built ones of ``cells`` side by side, every cell's occupancy under one
    model (as compare applies one model to both sides)."""
    usage: dict[str, dict] = {}
    targets: dict[str, list[str]] = {}
    rows: dict[tuple[str, str], str] = {}
    built = []
    for cell in cells:
        read = read_cell(matrix, build_dir, cell, occupancy_model)
        if read is None:
            continue
        built.append(cell)
        usage[cell.name], targets[cell.name] = read
        for (group, key), kernel in usage[cell.name].items():
            rows.setdefault((group, key), kernel.name)
    order = sorted(rows, key=lambda gk: (rows[gk], _group_order(gk[0]), gk[1]))
    return Summary(built, targets, [(g, k, rows[(g, k)]) for g, k in order], usage, occupancy_model)


def _group_order(group: str) -> tuple:
    return (0 if group.startswith("gfx1") else 1, group)


def compare_cells(matrix: Matrix, build_dir: Path, old: Cell, new: Cell, occupancy_model: str = DEFAULT_MODEL):
    """spillway's own comparison (compare.compare) of two cells, kernels
    matched by stable key and target group, both read under ``occupancy_model``."""
    from spillway.gate.compare import compare
    sides = []
    for cell in (old, new):
        read = read_cell(matrix, build_dir, cell, occupancy_model)
        if read is None:
            raise UsageError(f"cell {cell.name} is not built (run spillway matrix build {cell.name})")
        sides.append(read[0])
    return compare(sides[1], sides[0], [new.name], [old.name], occupancy_model=occupancy_model)


def summary_json(summary: Summary) -> dict:
    from spillway import __version__
    from spillway.matrix.documents import MATRIX_SUMMARY_SCHEMA
    return {
        "schema": MATRIX_SUMMARY_SCHEMA,
        "spillway_version": __version__,
        "occupancy_model": summary.occupancy_model,
        "cells": [{"name": c.name, "toolchain": c.toolchain(), "targets": summary.targets[c.name]}
                  for c in summary.cells],
        "kernels": [{"name": row[2], "key": row[1], "target": row[0],
                     "cells": {c.name: (None if summary.value(c.name, row) is None
                                        else summary.value(c.name, row).as_dict()) for c in summary.cells}}
                    for row in summary.rows],
    }
