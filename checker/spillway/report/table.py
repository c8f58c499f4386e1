"""Tables that fit: one console and one table style for every table spillway
prints (report, check, compare, matrix), and tab-separated values.

Width: the terminal's on a terminal; when piped, ``COLUMNS`` if set, else
PIPED_WIDTH.  Piped and file output carries no colour and no box drawing.
Kernel names are one line each: the name column's cells are labelled
(``report.labels``: the short name where it is distinct and fits, else the
tokens where names differ with what they share elided, never two kernels
alike), unless ``--names full`` asks for the whole signature (then it folds).
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import IO, Iterable, Sequence

# Width of piped output when COLUMNS is not set (CI logs are wide).
PIPED_WIDTH = 120
# Rows a table shows by default (--limit; 0 = all).  JSON is always complete.
DEFAULT_LIMIT = 50


def output_width(tty: bool) -> int:
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 20:
        return int(columns)
    if tty:
        return shutil.get_terminal_size((PIPED_WIDTH, 24)).columns
    return PIPED_WIDTH


def console(file: IO[str] | None = None, *, stderr: bool = False):
    """A rich Console for stdout (or ``file``): colour only on a terminal."""
    from rich.console import Console

    stream = file or (sys.stderr if stderr else sys.stdout)
    tty = file is None and stream.isatty()
    return Console(file=stream, width=output_width(tty), color_system="auto" if tty else None,
                   force_terminal=tty, soft_wrap=False, highlight=False, emoji=False)


def is_tty(console_) -> bool:
    return bool(console_.is_terminal)


def new_table(console_, title: str | None = None):
    """A table: light rules on a terminal, plain aligned columns elsewhere."""
    from rich import box
    from rich.table import Table

    tty = is_tty(console_)
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD if tty else None,
                 show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True,
                 header_style="bold" if tty else "")


class Column:
    """One column of ``grid``: the kernel-name column (``name=True``) takes
    what the others leave; every other column is as wide as its widest cell."""

    def __init__(self, header: str, justify: str = "left", *, name: bool = False, max_width: int | None = None,
                 drop: int = 0):
        self.header, self.justify, self.name, self.max_width = header, justify, name, max_width
        # Columns with drop > 0 are left out on narrow outputs, drop=1 first,
        # until the name column has NAME_ROOM characters.
        self.drop = drop


# What the kernel-name column should get before optional columns are kept.
NAME_ROOM = 28
# Narrower than this, the name column pushes the table past the width.
NAME_MIN = 12


class KernelName:
    """A name-column cell given as the demangled name: the table labels it
    (report.labels: at most the column's room, no two kernels alike), or
    shows it whole with ``--names full``."""

    __slots__ = ("full",)

    def __init__(self, full: str):
        self.full = full

    def __str__(self) -> str:
        from spillway.resources.names import table_name
        return table_name(self.full)


def _plain(cell) -> str:
    return cell[0] if isinstance(cell, tuple) else str(cell)


def _label_names(rows: list, index: int, room: int, names: str) -> None:
    """Replace the KernelName cells of column ``index`` by their labels."""
    full = [row[index].full for row in rows if isinstance(row[index], KernelName)]
    if not full:
        return
    if names == "full":
        labels = {name: name for name in full}
    else:
        from spillway.report.labels import distinct_labels
        labels = distinct_labels(full, room)
    for row in rows:
        if isinstance(row[index], KernelName):
            row[index] = labels[row[index].full]


def grid(console_, columns: Sequence[Column], rows: Sequence[Sequence], *, names: str = "short",
         title: str | None = None):
    """A rich Table that fits ``console_.width``: one line per row unless
    ``names == "full"`` (then long names fold).  Cells are plain text, or
    (text, style) pairs; markup in them is escaped."""
    from rich.markup import escape

    tty = is_tty(console_)
    separator = 2 if tty else 1
    columns, rows = _drop_columns(console_.width, separator, list(columns), [list(r) for r in rows])
    for index, column in enumerate(columns):
        if column.name:
            others = [max([len(c.header)] + [len(_plain(row[i])) for row in rows]) for i, c in enumerate(columns)
                      if not c.name]
            others = [min(w, c.max_width) if c.max_width else w
                      for w, c in zip(others, [c for c in columns if not c.name])]
            room = max(NAME_MIN, console_.width - sum(others) - separator * (len(columns) - 1))
            _label_names(rows, index, room, names)
    widths = []
    for index, column in enumerate(columns):
        width = max([len(column.header)] + [len(_plain(row[index])) for row in rows])
        if column.max_width:
            width = min(width, column.max_width)
        widths.append(width)
    table = new_table(console_, title)
    fixed = sum(w for w, c in zip(widths, columns) if not c.name) + separator * (len(columns) - 1)
    for column, width in zip(columns, widths):
        if column.name:
            room = max(NAME_MIN, console_.width - fixed)
            if names == "full":
                table.add_column(column.header, overflow="fold", width=min(width, room))
            else:
                table.add_column(column.header, no_wrap=True, overflow="ellipsis", width=min(width, room))
        else:
            table.add_column(column.header, justify=column.justify, no_wrap=True, overflow="ellipsis",
                             width=width)
    for row in rows:
        cells = []
        for cell in row:
            if isinstance(cell, tuple):
                text, style = cell
                cells.append(f"[{style}]{escape(text)}[/]" if style and tty else escape(text))
            else:
                cells.append(escape(str(cell)))
        table.add_row(*cells)
    return table


def _drop_columns(width: int, separator: int, columns: list, rows: list) -> tuple[list, list]:
    def natural(index: int) -> int:
        column = columns[index]
        size = max([len(column.header)] + [len(_plain(row[index])) for row in rows])
        return min(size, column.max_width) if column.max_width else size

    while True:
        fixed = sum(natural(i) for i, c in enumerate(columns) if not c.name) + separator * (len(columns) - 1)
        droppable = [i for i, c in enumerate(columns) if c.drop > 0]
        if width - fixed >= NAME_ROOM or not droppable:
            return columns, rows
        index = min(droppable, key=lambda i: columns[i].drop)
        columns = columns[:index] + columns[index + 1:]
        rows = [row[:index] + row[index + 1:] for row in rows]


def tsv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).replace("\t", " ").replace("\r", " ").replace("\n", " ")


def tsv(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    lines = ["\t".join(header)]
    lines.extend("\t".join(tsv_cell(v) for v in row) for row in rows)
    return "\n".join(lines) + "\n"


def limited(rows: list, limit: int) -> tuple[list, int]:
    """(rows to show, how many are hidden) for --limit N (0 = all)."""
    if limit and limit > 0 and len(rows) > limit:
        return rows[:limit], len(rows) - limit
    return rows, 0


def short_files(paths: list[str]) -> dict[str, str]:
    """File column text: each file without the folder all of them share."""
    if not paths:
        return {}
    folders = [os.path.dirname(p) for p in paths]
    common = os.path.commonpath(folders) if all(f.startswith("/") for f in folders) or not any(
        f.startswith("/") for f in folders) else ""
    out = {}
    for path in paths:
        out[path] = os.path.relpath(path, common) if common and path.startswith(common) else path
    return out
