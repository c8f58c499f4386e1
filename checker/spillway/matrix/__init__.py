"""The toolchain matrix: cells from ``matrix/cells.toml``, whether each cell's
toolchain is available here (on this machine or in a system root), building
every cell's engine with the shared recipe (``matrix/compile.sh``), gating
each build against its own baseline, and comparing cells.

Modules: ``cells`` (the cells file), ``toolchains`` (is a toolchain here;
system roots), ``build`` (incremental, parallel builds), ``gating`` (gate
and baseline, through spillway.gate directly), ``summary`` (cells side by
side, and its JSON document; spillway.render draws its table, Markdown and page), ``lines`` (source
lines of a cell's kernels: its own line tables or its debug twin's), ``documents``
(published JSON schemas), ``exits`` (exit statuses).
This package re-exports what ``spillway matrix`` uses.
"""

from __future__ import annotations

from spillway.matrix.build import Builder, CellBuild, build_exit_status, library_path, recipe_environment
from spillway.matrix.cells import Cell, Matrix, System, load
from spillway.matrix.exits import EXIT_FAILED, EXIT_OK, EXIT_SKIPPED, EXIT_USAGE, exit_status as run_exit_status
from spillway.matrix.gating import CellCheck, check_cell, exit_status, required_cells, write_baseline
from spillway.matrix.summary import Summary, compare_cells, short_name, summarize, summary_json
from spillway.matrix.toolchains import Availability, probe

__all__ = [
    "Availability", "Builder", "Cell", "CellBuild", "CellCheck", "EXIT_FAILED", "EXIT_OK", "EXIT_SKIPPED",
    "EXIT_USAGE", "Matrix", "Summary", "System", "build_exit_status", "check_cell", "compare_cells",
    "exit_status", "library_path", "load", "probe", "recipe_environment", "required_cells", "run_exit_status",
    "short_name", "summarize", "summary_json", "write_baseline",
]
