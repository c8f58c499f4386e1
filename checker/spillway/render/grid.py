"""The grid toolkit: one console and one table style for every table spillway
prints (the per-command tables are render.table's), and tab-separated values.

Width: the terminal's on a terminal; when piped, ``COLUMNS`` if set, else
PIPED_WIDTH.  Piped and file output carries no colour and no box drawing.
Kernel names are one line each: the name column's cells are labelled
(``report.labels``: the short name where it is distinct and fits, else the
tokens where names differ with what they share elided, never two kernels
alike), unless ``--names full`` asks for the whole signature (then it folds).
Nothing else is cut (``fit``): headers fold, optional columns are left out
with a note, short headers get a legend, name-like columns shorten; every
figure, target and header keeps its whole text.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import sys
from itertools import islice
from typing import IO, Iterable, Iterator, Sequence

from spillway.resources.names import table_name
from spillway.untrusted import each_visible, shown, utf8_shown, visible

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


default_console = console    # (for functions whose parameter is a console)


def lines_console(stderr: bool = False):
    """The matrix's console (its verdicts and lines): rich output on a terminal;
    piped, plain lines 200 columns wide that never wrap or colour.  Text is never
    read as emoji codes (``:warning:`` in a kernel name stays text)."""
    from rich.console import Console

    if (sys.stderr if stderr else sys.stdout).isatty():
        return Console(stderr=stderr, soft_wrap=False, emoji=False, highlight=False)
    return Console(stderr=stderr, width=200, color_system=None, soft_wrap=True, emoji=False, highlight=False)


def is_tty(console_) -> bool:
    return bool(console_.is_terminal)


def new_table(console_, title: str | None = None, fitted: bool = False):
    """A table: light rules on a terminal, plain aligned columns elsewhere
    (``fitted``: a FittedTable, for ``grid``)."""
    from rich import box
    from rich.table import Table

    tty = is_tty(console_)
    kind = _fitted_class() if fitted else Table
    return kind(title=title, title_justify="left", box=box.SIMPLE_HEAD if tty else None,
                 show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True,
                 header_style="bold" if tty else "")


class Column:
    """One column of ``grid``.

    The kernel-name column (``name=True``) takes what the others leave, its
    cells labelled (report.labels).  Every other column is as wide as its
    widest cell and its header: its cells are never cut, unless it declares
    ``elide`` (a name-like cell, such as a file path: labelled as kernel
    names are, report.labels, in no less than ``min_width`` characters,
    never two distinct cells alike).  On a narrow output the grid
    first folds headers onto up to ``grid``'s ``header_lines`` lines (at
    spaces, after ``/`` and ``-``), then leaves out the columns with
    ``drop > 0`` (``drop=1`` first, with a note saying which), then shows
    ``short`` instead of the header (with a legend line), then shortens the
    ``elide`` columns to what the name column leaves them."""

    def __init__(self, header: str, justify: str = "left", *, name: bool = False, max_width: int | None = None,
                 drop: int = 0, elide: bool = False, min_width: int | None = None, short: str | None = None):
        # max_width: the widest an elide column gets (other columns are as wide as their cells).
        self.header, self.justify, self.name, self.max_width = header, justify, name, max_width
        self.drop = drop
        self.elide = elide
        self.min_width = min_width
        self.short = short


# What the kernel-name column should get before optional columns are kept.
NAME_ROOM = 28
# Narrower than this, the name column pushes the table past the width.
NAME_MIN = 12
# The narrowest a name-like column (elide) gets when nothing else fits.
ELIDE_FLOOR = 8
# Lines a folded header may take.
HEADER_LINES = 2

_PIECE = re.compile(r"[^/-]+[/-]?|[/-]")


def _header_pieces(header: str) -> list[tuple[str, str]]:
    """(piece, what joins it to the previous one): words split at spaces
    (joined by a space) and after ``/`` and ``-`` (joined directly)."""
    pieces: list[tuple[str, str]] = []
    for word in header.split():
        for index, piece in enumerate(_PIECE.findall(word)):
            pieces.append((piece, "" if index else " "))
    return pieces


def fold_header(header: str, width: int) -> list[str]:
    """``header`` on lines of at most ``width`` characters where it can break
    (a piece longer than ``width`` keeps its own line)."""
    lines: list[str] = []
    for piece, glue in _header_pieces(header):
        if lines and len(lines[-1]) + len(glue) + len(piece) <= width:
            lines[-1] += glue + piece
        else:
            lines.append(piece)
    return lines or [""]


def folded_width(header: str, lines: int) -> int:
    """The narrowest width ``header`` folds into at most ``lines`` lines."""
    pieces = _header_pieces(header)
    width = max((len(p) for p, _ in pieces), default=0)
    while len(fold_header(header, width)) > lines and width < len(header):
        width += 1
    return width


class KernelName:
    """A name-column cell given as the demangled name: the table labels it
    (report.labels: at most the column's room, no two kernels alike), or
    shows it whole with ``--names full``."""

    __slots__ = ("full",)

    def __init__(self, full: str):
        self.full = full

    def __str__(self) -> str:
        return table_name(self.full)


# -- the terminal's sink: every line and every cell the renderers put on a terminal passes here ----------

def cell_text(text: str) -> str:
    """A table cell's text (names, targets and files come from the binaries): at
    most untrusted.LINE_STRING_LIMIT characters of it (``shown``), as one line of
    a terminal (``visible``), before the table is fitted."""
    return visible(shown(text))


def terminal_text(text: str, style: str = ""):
    """``text`` as a rich Text held to a log line's rules (untrusted.visible):
    no markup or emoji code in it is read (rich.markup.escape is never needed)."""
    from rich.text import Text

    return Text(visible(text), style=style)


def say(console_, line: str, *, style: str | None = None, soft_wrap: bool | None = None) -> None:
    """Print one line of text: the one way the renderers put text (not a table)
    on a terminal.  Strings from a binary come in raw, each cut by
    untrusted.shown where the line quotes it; the line is made safe here, once."""
    console_.print(terminal_text(line), style=style, soft_wrap=soft_wrap)


def _visible_row(row: Sequence) -> list:
    """A row's cells as the terminal shows them (``cell_text``), before the table is fitted."""
    out: list = []
    for cell in row:
        if type(cell) is str:
            out.append(cell_text(cell))
        elif isinstance(cell, (int, float)) or cell is None:
            out.append(cell)
        elif isinstance(cell, KernelName):      # cut after labelling (_label_names): a label is of the whole name
            out.append(KernelName(visible(cell.full)))
        elif isinstance(cell, tuple):
            out.append((cell_text(cell[0]), cell[1]))
        else:
            out.append(cell_text(str(cell)))
    return out


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
        if isinstance(row[index], KernelName):       # at most LINE_STRING_LIMIT characters of it (``shown``)
            row[index] = shown(labels[row[index].full])


def _fitted_class() -> type:
    from rich.table import Table
    from rich.text import Text

    class FittedTable(Table):
        """A table from ``grid``: its ``layout``, its title as a heading line
        and a note under it (the columns left out), both wrapped at the
        console's width."""

        layout: Layout
        note: str = ""
        heading: str = ""

        def __rich_console__(self, console, options):
            if self.heading:
                yield Text(self.heading)
            yield from super().__rich_console__(console, options)
            if self.note:
                yield Text(self.note)

    return FittedTable


class Layout:
    """Where ``grid`` put the columns: the ones it left out (their headers),
    whether it folded headers or showed their short forms."""

    def __init__(self) -> None:
        self.dropped: list[str] = []
        self.folded = False
        self.shortened = False


def fit(width: int, separator: int, columns: list[Column], rows: list[list],
        header_lines: int = HEADER_LINES) -> tuple[list[Column], list[list], list[int], list[str], Layout]:
    """(columns kept, rows, the width of each non-name column (0 for the name
    column), each column's header text, layout) for a table of at most
    ``width`` characters where only ``elide`` columns and the name column cut
    their cells."""
    layout = Layout()
    # An optional column with nothing in it is left out first (and not named in the note: nothing is lost).
    empty = [i for i, c in enumerate(columns) if c.drop > 0 and rows and not any(_plain(row[i]) for row in rows)]
    columns = [copy.copy(c) for i, c in enumerate(columns) if i not in empty]
    rows = [[cell for i, cell in enumerate(row) if i not in empty] for row in rows]
    cell = [max([0] + [len(_plain(row[i])) for row in rows]) for i in range(len(columns))]
    mode = ["one"] * len(columns)
    squeezed = [False] * len(columns)
    cap = [0] * len(columns)                    # an elide column's width once squeezed
    name_natural = max([0] + [len(str(row[i])) for i, c in enumerate(columns) if c.name for row in rows])

    def header_text(i: int) -> str:
        column = columns[i]
        if mode[i] == "short" and column.short is not None:
            return column.short
        if mode[i] == "fold":
            return "\n".join(fold_header(column.header, folded_width(column.header, header_lines)))
        return column.header

    def column_width(i: int) -> int:
        column = columns[i]
        size = cell[i]
        if column.elide and column.max_width:
            size = min(size, column.max_width)
        if column.elide and squeezed[i]:
            size = min(size, cap[i])
        return max(size, max(len(line) for line in header_text(i).split("\n")))

    def fixed() -> int:
        return sum(column_width(i) for i, c in enumerate(columns) if not c.name) + separator * (len(columns) - 1)

    has_name = any(c.name for c in columns)
    wanted = min(NAME_ROOM, max(name_natural, len(next((c.header for c in columns if c.name), ""))))

    def fits() -> bool:
        return width - fixed() >= wanted if has_name else fixed() <= width

    if not fits():
        foldable = [i for i, c in enumerate(columns) if not c.name and len(_header_pieces(c.header)) > 1
                    and folded_width(c.header, header_lines) < len(c.header)]
        for i in foldable:
            mode[i] = "fold"
        layout.folded = bool(foldable)
    while not fits():
        droppable = [i for i, c in enumerate(columns) if c.drop > 0]
        if not droppable:
            break
        index = min(droppable, key=lambda i: columns[i].drop)
        layout.dropped.append(columns[index].header)
        columns = columns[:index] + columns[index + 1:]
        rows = [row[:index] + row[index + 1:] for row in rows]
        for state in (cell, mode, squeezed, cap):
            del state[index]
    if not fits():
        for i, c in enumerate(columns):
            if c.short is not None:
                mode[i] = "short"
                layout.shortened = True
    elidable = [i for i, c in enumerate(columns) if c.elide and not c.name]
    if not fits() and elidable:
        # Name-like cells shorten last: to their min_width, plus what the name column's
        # NAME_ROOM leaves; labelled distinct as kernel names are.
        for i in elidable:
            squeezed[i] = True
            cap[i] = columns[i].min_width or NAME_MIN
        spare = width - fixed() - wanted
        for i in elidable:
            cap[i] += max(0, spare) // len(elidable)
        # Still no NAME_MIN for the names: these cells go down to ELIDE_FLOOR.
        while width - fixed() < NAME_MIN and any(cap[i] > ELIDE_FLOOR for i in elidable):
            for i in elidable:
                cap[i] = max(ELIDE_FLOOR, cap[i] - 1)
    for i in elidable:
        texts = [_plain(row[i]) for row in rows]
        if max(map(len, texts), default=0) > column_width(i):
            from spillway.report.labels import distinct_labels
            labels = distinct_labels(texts, column_width(i))
            for row, text in zip(rows, texts):
                row[i] = labels[text]
    widths = [0 if c.name else column_width(i) for i, c in enumerate(columns)]
    return columns, rows, widths, [header_text(i) for i in range(len(columns))], layout


def grid(console_, columns: Sequence[Column], rows: Sequence[Sequence], *, names: str = "short",
         title: str | None = None, header_lines: int = HEADER_LINES):
    """A rich Table that fits ``console_.width``: one line per row unless
    ``names == "full"`` (then long names fold), no figure and no header cut
    (``fit``).  Cells are plain text, or (text, style) pairs, shown as
    ``cell_text`` (never read as markup).  The table's ``layout`` says what was left out."""
    from rich.text import Text

    tty = is_tty(console_)
    separator = 2 if tty else 1
    width = console_.width
    columns, rows, widths, headers, layout = fit(width, separator, list(columns), [_visible_row(r) for r in rows],
                                                 header_lines)
    room = max(NAME_MIN, width - sum(widths) - separator * (len(columns) - 1))
    for index, column in enumerate(columns):
        if column.name:
            _label_names(rows, index, room, names)
    legend = [f"{c.short} = {c.header}" for c, h in zip(columns, headers) if c.short is not None and h == c.short]
    if legend:
        title = (title + "\n" if title else "") + "columns: " + ", ".join(legend)
    # The title as a line of text above the table (wrapped, not padded to the table's width).
    table = new_table(console_, None, fitted=True)
    table.heading = title or ""
    table.layout = layout
    for column, size, header in zip(columns, widths, headers):
        if column.name:
            natural = max([len(header)] + [len(_plain(row[columns.index(column)])) for row in rows])
            if names == "full":
                table.add_column(header, overflow="fold", width=min(natural, room))
            else:
                table.add_column(header, no_wrap=True, overflow="ellipsis", width=min(natural, room))
        else:
            # Never cut: a width the fitting could not give folds rather than loses digits.
            table.add_column(header, justify=column.justify, overflow="fold", width=size)
    if layout.dropped:
        table.note = (f"not shown at {width} columns: {', '.join(layout.dropped)} "
                      f"(wider COLUMNS or --format json show them)")
    for row in rows:
        cells = []
        for cell in row:
            if isinstance(cell, tuple):
                text, style = cell
                cells.append(Text(text, style=style if style and tty else ""))
            else:
                cells.append(Text(str(cell)))
        table.add_row(*cells)
    return table


def tsv_cell(value) -> str:
    """A TSV cell: text as one line (spillway.untrusted.visible: a tab, a line
    break or a control character from a binary is shown as an escape)."""
    if value is None:
        return ""
    kind = type(value)
    if kind is int:             # (a number's digits need no escape: most cells of a large table)
        return str(value)
    if kind is bool:
        return "true" if value else "false"
    return visible(str(value))


# TSV rows made into text at once, a column at a time (render.tsv's documents list up to 240,000 rows):
# pieces of about 600 KB for check's rows (8,192 rows at once, 5 MB, cost a third more: the cache).
_TSV_ROWS_AT_ONCE = 1024
_TSV_BOOLS = {True: "true", False: "false"}.__getitem__


def tsv_column(values: Sequence, known_visible: set[str]) -> Sequence[str]:
    """Cells of one column as tsv_cell makes each, a column of one kind at once: text
    not in ``known_visible`` tested by untrusted.each_visible, once each (a name recurs
    once per target; those found unchanged join ``known_visible``), and each cell made
    visible only when some may change; numbers and booleans without a call per cell."""
    kinds = set(map(type, values))
    if kinds == {str}:
        unseen = set(values).difference(known_visible)
        if each_visible(unseen):
            known_visible.update(unseen)
            return values
        return [visible(v) for v in values]
    if kinds == {int}:
        texts = {value: str(value) for value in set(values)}     # (a column holds few numbers, often)
        return list(map(texts.__getitem__, values))
    if kinds == {bool}:
        return list(map(_TSV_BOOLS, values))
    return [tsv_cell(v) for v in values]


def tsv(header: Sequence[str], rows: Iterable[Sequence], order: Sequence[int] | None = None,
        columns: Sequence[Sequence] = ()) -> Iterator[bytes]:
    """The header line, then a line per row, each cell tsv_cell's, as UTF-8 in pieces
    (untrusted.utf8_shown; a document of 100 MB is never one string).  The cells of
    rows of one length are made a column at a time (check --format tsv on
    librocsparse1 6.4.3: 182,546 rows, 1.6 million cells, a call of tsv_cell each took
    about 1 CPU-s).  ``columns``: rows given a column each, before ``rows`` (check's
    findings: no tuple per row).  ``order``: the rows' items to show, in this order
    (default: all, as they are)."""
    yield utf8_shown("\t".join(header) + "\n")
    known_visible: set[str] = set()     # text each_visible found unchanged, for the pieces after
    shown_columns = columns if order is None or not columns else [columns[i] for i in order]
    for start in range(0, len(columns[0]) if columns else 0, _TSV_ROWS_AT_ONCE):
        stop = start + _TSV_ROWS_AT_ONCE
        yield utf8_shown(_tsv_lines([column[start:stop] for column in shown_columns], known_visible))
    rows = iter(rows)
    while chunk := list(islice(rows, _TSV_ROWS_AT_ONCE)):
        if len(set(map(len, chunk))) == 1 and len(chunk[0]):
            picked = list(zip(*chunk))
            yield utf8_shown(_tsv_lines(picked if order is None else [picked[i] for i in order], known_visible))
        else:
            cells = chunk if order is None else [[row[i] for i in order] for row in chunk]
            yield utf8_shown("\n".join("\t".join([tsv_cell(v) for v in row]) for row in cells) + "\n")


def _tsv_lines(columns: Sequence[Sequence], known_visible: set[str]) -> str:
    """Lines of TSV, one per row of ``columns`` (of one length), each ending in a line
    break: every cell and separator put in its place in one list by slices, then joined
    once (a tuple and a string per line cost 0.1 CPU-s of check's 182,546)."""
    width, count = len(columns), len(columns[0])
    parts: list = [""] * (2 * width * count)
    for index, column in enumerate(columns):
        parts[2 * index::2 * width] = tsv_column(column, known_visible)
        parts[2 * index + 1::2 * width] = ("\t" if index < width - 1 else "\n",) * count
    return "".join(parts)


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
