"""The one format dispatch (issue 33): ``emit(model, format, output, view)``
writes a model's document in the format asked for, to a file (atomically) or
to standard output, and puts on the terminal what a command shows beside a
document written elsewhere.  Every command of spillway.cli ends with it.

What goes where:

- ``table`` (``text`` for spillway code): drawn on standard output, or
  written to ``-o FILE`` after spillway's text marker; a check and a
  comparison written to a file are drawn on the terminal too;
- ``json``, ``markdown``, ``tsv``, ``junit``, ``sarif``, ``html``: the
  document (render.json, .markdown, .tsv, .junit, .sarif, .html) to the
  output; when that is a file, the terminal gets a check's verdict (its
  table form) or a comparison's sentence;
- ``github``: render.github's annotations (printed here, outside any
  stop-commands bracket) and job summary (appended here to
  ``$GITHUB_STEP_SUMMARY``), then the table;
- a matrix run's model (``matrix run``, ``matrix collect``): its verdicts,
  the cells side by side in the format, its failures (``matrix_run``);
- a baseline write's model: the baseline file (its ``json`` document), then
  what the write did on the terminal.

render/ reads no input and writes nothing but through this module
(tests/unit/test_import_layers.py holds it to that).

Text for people goes through spillway.untrusted in each renderer; the bytes
written here are the documents' (``write``: undecodable path bytes shown as
``\\xNN``), never inside a GitHub stop-commands bracket.
"""

from __future__ import annotations

import gc
import io
import os
import sys
import time
from typing import Callable, Iterable, Mapping

from spillway import atomic, untrusted
from spillway.errors import UsageError
from spillway.render import github
from spillway.render.models import (BaselineWriteModel, CheckModel, CodeModel, CompareModel, MatrixRunModel,
                                    MatrixSummaryModel, ReportModel, View)


def markdown_marker(what: str) -> str:
    return f"<!-- spillway {what}: written by spillway; safe to overwrite with spillway -->\n"


def text_marker(what: str) -> str:
    return f"# spillway {what}\n"


def emit(model, fmt: str, output: str | None, view: View = View(), *, also: bool = False) -> None:
    """Draw ``model`` in ``fmt`` to ``output`` (None or '-': standard output);
    ``also``: a second document beside the command's own output (check --junit
    FILE), the file only, nothing on the terminal."""
    from spillway.render import grid, table

    to_file = output not in (None, "-")
    if isinstance(model, MatrixRunModel):
        matrix_run(model, fmt, output, view)
        return
    if isinstance(model, ReportModel) and fmt == "json" and model.write_json is not None:
        write_to(output, *model.write_json)     # (written while it is read, by the reader's workers)
        return
    if fmt == "github":
        # The job summary (appended to $GITHUB_STEP_SUMMARY; the document of -o FILE), one
        # annotation per failing kernel and metric (at most MAX_ANNOTATIONS), then the table.
        from spillway.render import markdown

        summary = markdown.document(model, view)
        append_step_summary(summary)
        if to_file:
            write(output, markdown_marker(model.title) + summary)
        print_annotations(github.annotations_of(model, view))
        table.draw(model, grid.console(), view)
        return
    if fmt == "text":
        from spillway.render.code import document as code_text

        assert isinstance(model, CodeModel)
        write_text(output, code_text(model, view), text_marker(model.title))
        return
    if fmt == "table":
        if to_file:
            buffer = io.StringIO()
            table.draw(model, grid.console(buffer), view)
            write(output, text_marker(model.title) + buffer.getvalue())
        else:
            table.draw(model, grid.console(), view)
    else:
        # A document is made of many small objects and no reference cycles: the collector's
        # passes over the whole model meanwhile (a check of librocsparse1 6.4.3 listing 178,610
        # kernels in TSV or JUnit: a tuple each, and more) are spared, as the reader spares them.
        collecting = gc.isenabled()
        gc.disable()
        try:
            write(output, document(model, fmt, view))
        finally:
            if collecting:
                gc.enable()
    if (to_file or isinstance(model, BaselineWriteModel)) and not also:
        beside_file(model, fmt, view)


def matrix_run(model: MatrixRunModel, fmt: str, output: str | None, view: View) -> None:
    """``matrix run`` and ``collect``: each cell's verdict first (on standard
    error when the document goes to standard output), the cells side by side in
    ``fmt`` (json, markdown, html: with the verdicts; the table: only where the
    cells differ unless --all), GitHub's annotations and job summary, SARIF's
    runs, then each failing cell's failures and how long the run took."""
    from spillway.render import grid, sarif, table

    checks = list(model.checks)
    to_file = output not in (None, "-")
    console = grid.lines_console(stderr=fmt in ("json", "markdown", "sarif", "html") and not to_file)
    table.print_verdicts(console, checks)
    summary = model.summary
    side_by_side = View(view.names, 0, view.everything, view.differing)
    if summary is not None and summary.cells:
        if fmt in ("json", "markdown", "html"):
            verdicts = tuple({"cell": c.cell.name, "verdict": c.verdict, "reason": c.reason} for c in checks)
            emit(MatrixSummaryModel(summary, verdicts), fmt, output, View(view.names, 0, False, view.differing))
            if to_file:
                emit(MatrixSummaryModel(summary), "table", None, side_by_side)
                grid.say(console, f"wrote {output}")
        elif fmt != "sarif" or to_file:      # (sarif to standard output: the log is all it holds)
            emit(MatrixSummaryModel(summary), "table", output if fmt == "table" else None, side_by_side)
            if fmt == "table" and to_file:
                grid.say(console, f"wrote {output}")
    if fmt == "github":
        text, notes, side_by_side_markdown = github.matrix_run(checks, summary, view.differing)
        append_step_summary(text)
        print_annotations(notes)
        if to_file and side_by_side_markdown is not None:
            write(output, markdown_marker("matrix summary") + side_by_side_markdown)
    elif fmt == "sarif":
        write(output, sarif.matrix_log(checks, model.baselines))
        if to_file:
            grid.say(console, f"wrote {output}")
    table.print_details(console, checks)
    grid.say(console, f"matrix {model.command}: {time.monotonic() - model.started:.1f} s")


def document(model, fmt: str, view: View) -> str | bytes | Iterable[bytes]:
    """The document of ``model`` in ``fmt`` (json, markdown, tsv, junit, sarif, html; a
    matrix list's github-matrix)."""
    if fmt == "json":
        from spillway.render import json

        return json.document(model, view)
    if fmt == "markdown":
        from spillway.render import markdown

        return markdown_marker(model.title) + markdown.document(model, view)
    if fmt == "tsv":
        from spillway.render import tsv

        return tsv.document(model, view)
    if fmt == "junit":
        from spillway.render import junit

        return junit.document_of(model)
    if fmt == "sarif":
        from spillway.render import sarif

        return sarif.document_of(model)
    if fmt == "html":
        from spillway.render import html

        return html.document(model, view)
    if fmt == "github-matrix":
        from spillway.matrix.ci import job_matrix

        return job_matrix([cell for cell, _availability, _baseline in model.rows])
    raise UsageError(f"--format {fmt}: not a format of this command")


def beside_file(model, fmt: str, view: View) -> None:
    """What the terminal shows when the document went to a file: a check's
    verdict (its table form), a comparison's table (``table``) or sentence, what
    a baseline write did."""
    from spillway.render import grid, table

    if isinstance(model, BaselineWriteModel):
        table.print_baseline_write(model)
    elif isinstance(model, CheckModel) or (isinstance(model, CompareModel) and fmt == "table"):
        table.draw(model, grid.console(), view)
    elif isinstance(model, CompareModel):
        print(model.comparison.sentence(), flush=True)


def write_to(path: str | None, produce: Callable[[int], None], chunks: Callable[[], Iterable[bytes]]) -> None:
    """``write`` for a producer that writes to a file descriptor itself: the
    claimed file's (atomically) or standard output's, for None or '-'.
    ``chunks`` gives the same bytes in pieces, for a standard output that has
    no descriptor (closed, or captured)."""
    if path is None or path == "-":
        try:
            fd = sys.stdout.fileno()
        except (OSError, ValueError, AttributeError):
            write(path, chunks())     # type: ignore[arg-type]  # pieces, as write takes them
            return
        untrusted.close_brackets()    # a document is never inside a stop-commands bracket
        sys.stdout.flush()
        produce(fd)
        return
    try:
        atomic.write_with(path, produce)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def write(path: str | None, data: str | bytes | Iterable[bytes]) -> None:
    """Write to a claimed file atomically, or to stdout for None or '-'.
    Text is UTF-8, a path's undecodable bytes (U+DC80-U+DCFF, surrogateescape)
    shown as ``\\xNN`` as on the terminal (untrusted.utf8_shown): documents that must
    keep them exact (JSON, SARIF) write them as JSON escapes themselves (json_codec.dumps)."""
    if isinstance(data, str):
        data = untrusted.utf8_shown(data)
    chunks = (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data   # or pieces of it
    if path is None or path == "-":
        untrusted.close_brackets()    # a document is never inside a stop-commands bracket
        for chunk in chunks:
            sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        return
    try:
        atomic.write_chunks(path, chunks)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def write_text(path: str | None, text: str, marker: str = "") -> None:
    """Text for people (``spillway code``'s listing): to a claimed file
    (after ``marker``), or through standard output's text stream, which holds
    it to the rules of a log line and brackets it under GitHub Actions
    (spillway.untrusted)."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write(path, (marker + text).encode())


# -- GitHub: the annotations on standard output, the job summary appended ----------------------------------

def print_annotations(annotations: Iterable[github.Annotation], limit: int = github.MAX_ANNOTATIONS) -> None:
    """The annotations on standard output, each as spillway's own workflow
    command (untrusted.command: outside any stop-commands bracket), then the
    line counting those left out."""
    for line in github.annotation_lines(annotations, limit):
        if line.startswith("::"):
            untrusted.command(line)
        else:
            print(line, flush=True)




def append_step_summary(markdown: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Append to $GITHUB_STEP_SUMMARY, within what GitHub keeps of it
    (github.capped_summary: the file stays under github.STEP_SUMMARY_LIMIT with
    github.STEP_SUMMARY_ROOM to spare); the path written, or None when unset."""
    environ = os.environ if environ is None else environ
    path = environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    try:
        held = os.path.getsize(path) if os.path.isfile(path) else 0
    except OSError:
        held = 0
    markdown = markdown if markdown.endswith("\n") else markdown + "\n"
    markdown = github.capped_summary(markdown, max(0, github.STEP_SUMMARY_LIMIT - github.STEP_SUMMARY_ROOM - held))
    try:
        with open(path, "ab") as handle:
            handle.write(untrusted.utf8_shown(markdown))        # (paths not UTF-8: \\xNN)
    except OSError as exc:
        raise UsageError(f"cannot append to GITHUB_STEP_SUMMARY {path}: {exc.strerror}") from None
    return path
