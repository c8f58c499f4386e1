"""One way to ask for an output on every subcommand, and the rules that keep
outputs from destroying anything.

Every subcommand that prints a document takes ``--format FORMAT`` (the
formats it has), ``--json`` (a plain flag: ``--format json``), ``-o/--output
FILE`` and ``--force``.  Before anything is read, every file the run will
write is claimed:

- a file that is an input of the same run (a binary, a report, a baseline, a
  file inside an input directory) is never written: exit 2, one line;
- an existing file is replaced only when spillway wrote it (a JSON document
  whose schema is ``spillway.*``, or the marker spillway puts in its JUnit,
  Markdown, HTML and text files, or a TSV with one of spillway's header lines), or
  with ``--force``;
- the same file is not claimed twice in one run (``-o x --junit x``).

Files are written atomically (spillway.atomic).
"""

from __future__ import annotations

import argparse
import os
import re

from spillway.errors import UsageError
from spillway.paths import regular_file_head

FORMAT_HELP = {
    "table": "a table for a terminal",
    "text": "plain text for a terminal or a file",
    "json": "the versioned JSON document",
    "markdown": "Markdown for a pull request",
    "junit": "JUnit XML",
    "github": "GitHub Actions annotations, and the Markdown job summary appended to $GITHUB_STEP_SUMMARY "
              "(and written to -o FILE)",
    "tsv": "tab-separated values for scripts",
    "github-matrix": "GitHub Actions' strategy.matrix (one line of JSON)",
    "html": "one self-contained HTML page (charts, a sortable and filterable table; works offline)",
    "sarif": "SARIF 2.1.0 for GitHub code scanning (one run per gated build, a result per failing kernel "
             "and metric)",
}

# The first line of the Markdown and text files spillway writes, and the
# comment after the XML declaration of its JUnit files.
MARKER = "spillway"
_MARKDOWN_MARK = re.compile(rb"\A(\xef\xbb\xbf)?(<!-- spillway[ :]|\*\*spillway (matrix|compare|check)\*\*)")
# HTML pages: the doctype first (a comment before it puts browsers in quirks mode), the marker next.
_HTML_MARK = re.compile(rb"\A(\xef\xbb\xbf)?<!DOCTYPE html>\r?\n<!-- spillway[ :]")
_TEXT_MARK = re.compile(rb"\A# spillway ")
_XML_MARK = re.compile(rb"\A<\?xml[^>]*\?>\s*<!-- spillway[ :]")
_JSON_MARK = re.compile(rb'\A\s*\{\s*("schema"\s*:\s*"spillway\.[a-z-]+/[0-9]+"'
                        rb'|"\$id"\s*:\s*"https://spillway\.dev/schemas/)')
# SARIF logs whose first run is spillway's (gate.sarif writes the tool first).
_SARIF_MARK = re.compile(rb'\A\{\s*"\$schema"\s*:\s*"[^"]*sarif[^"]*",\s*"version"\s*:\s*"2\.1\.0",'
                         rb'\s*"runs"\s*:\s*\[\s*\{\s*"tool"\s*:\s*\{\s*"driver"\s*:\s*\{\s*"name"\s*:\s*"spillway"')
# Writing a document (atomically, or to standard output) is render.emit's; the header
# lines of the TSV files spillway writes are render.tsv's.
from spillway.render.emit import markdown_marker, text_marker, write, write_text, write_to  # noqa: E402,F401
from spillway.render.tsv import TSV_HEADERS  # noqa: E402


def add_output_options(parser: argparse.ArgumentParser, formats: tuple[str, ...], *,
                       default: str = "table", github_auto: bool = False, output_help: str | None = None):
    """--format, --json, -o/--output, --force, in the same words everywhere."""
    choices = "; ".join(f"{f}: {FORMAT_HELP[f]}" for f in formats)
    auto = "; github when GITHUB_ACTIONS=true and no format is asked for" if github_auto else ""
    group = parser.add_argument_group("output")
    group.add_argument("--format", choices=formats, default=None, metavar="FORMAT",
                       help=f"what to print: {choices} (default: {default}{auto})")
    if "json" in formats:
        group.add_argument("--json", action="store_true",
                           help="same as --format json (a flag: write to a file with -o FILE)")
    group.add_argument("-o", "--output", metavar="FILE",
                       help=output_help or "write the document to FILE (atomically) instead of stdout")
    group.add_argument("--force", action="store_true",
                       help="replace an existing FILE that spillway did not write (never an input of the run)")
    parser.set_defaults(output_formats=formats, output_default=default, github_auto=github_auto)
    return group


def chosen_format(args) -> str:
    formats = args.output_formats
    asked = args.format
    if getattr(args, "json", False):
        if asked not in (None, "json"):
            raise UsageError(f"--json and --format {asked} ask for two formats: give one")
        asked = "json"
    if asked is None:
        if args.github_auto and "github" in formats and os.environ.get("GITHUB_ACTIONS") == "true":
            return "github"
        return args.output_default
    return asked


def is_spillway_file(path: str) -> bool:
    """Was this existing file written by spillway?"""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    if any(mark.match(head) for mark in (_JSON_MARK, _SARIF_MARK, _MARKDOWN_MARK, _HTML_MARK, _TEXT_MARK, _XML_MARK)):
        return True
    first = head.split(b"\n", 1)[0].rstrip(b"\r")
    return first in TSV_HEADERS


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


class Outputs:
    """The files one run writes, checked against its inputs before any is read."""

    def __init__(self, inputs: list[str], force: bool = False):
        self.force = force
        self.inputs: list[tuple[str, str]] = []     # (as given, real path)
        for path in inputs:
            if path and path != "-":
                self.inputs.append((path, _real(path)))
        self.claimed: dict[str, str] = {}           # real path -> option

    def input_named(self, path: str) -> tuple[str, str] | None:
        """(the input, "is" or "is inside") when this path is an input or lies
        in an input directory."""
        real = _real(path)
        exists = os.path.exists(path)
        for given, input_real in self.inputs:
            if real == input_real:
                return given, "is"
            if exists and os.path.exists(given):
                try:
                    if os.path.samefile(path, given):
                        return given, "is"
                except OSError:
                    pass
            if exists and os.path.isdir(input_real) and real.startswith(input_real.rstrip(os.sep) + os.sep):
                return given, "is inside"
        return None

    def claim(self, path: str | None, option: str, *, routine: bool = False) -> str | None:
        """Check that ``path`` may be written; ``routine`` files (the baseline
        of `baseline write`) are replaced without --force when spillway
        wrote them, as any output, but are checked by their owner."""
        if path is None or path == "-":
            return path
        named = self.input_named(path)
        if named is not None:
            given, relation = named
            raise UsageError(f"{option} {path}: {relation} the input {given} of this run; refusing to write over "
                             f"it (choose another file)")
        real = _real(path)
        if real in self.claimed:
            raise UsageError(f"{option} {path}: already written by {self.claimed[real]} in this run; give "
                             f"each output its own file")
        if os.path.isdir(path):
            raise UsageError(f"{option} {path}: is a directory; give a file name")
        if os.path.exists(path) and not os.path.isfile(path):
            raise UsageError(f"{option} {path}: is not a regular file (a FIFO, device or socket); give a file name")
        if os.path.exists(path) and not routine and not self.force and not is_spillway_file(path):
            raise UsageError(f"{option} {path}: exists and was not written by spillway; choose another file, or "
                             f"pass --force to replace it")
        self.claimed[real] = option
        return path


# -- old-style `--json FILE` --------------------------------------------------------------

# Names after an old-style --json that were meant as the output file.
OUTPUT_SUFFIXES = (".json", ".xml", ".md", ".txt", ".tsv", ".out", ".html")
_PATH_SUFFIX = re.compile(r"\.[A-Za-z][A-Za-z0-9_-]{0,9}$")


def looks_like_path(text: str) -> bool:
    """A slash or a file suffix (``out.json``, ``lib.so``): meant as a file, not a filter."""
    return "/" in text or bool(_PATH_SUFFIX.search(text))


def schema_of(path: str) -> str | None:
    """``spillway.report`` for a spillway report, ... (without the version), else None."""
    head = regular_file_head(path, 256)
    match = re.match(rb'\A\s*\{\s*"schema"\s*:\s*"(spillway\.[a-z-]+)/', head) if head is not None else None
    return match.group(1).decode() if match else None


def old_style_json(argv: list[str]) -> None:
    """``--json FILE`` used to name the output: say how to write it now,
    unless FILE is an input of the run (then it is read, and nothing is
    written over it)."""
    command = next((a for a in argv if not a.startswith("-")), "")
    for index, token in enumerate(argv):
        if token == "--markdown" or token.startswith("--markdown="):
            name = token.split("=", 1)[1] if "=" in token else (argv[index + 1] if index + 1 < len(argv) else "FILE")
            raise UsageError(f"--markdown FILE is now --format markdown -o {name}")
        if token.startswith("--json="):
            name = token.split("=", 1)[1]
            raise UsageError(f"--json is a flag now: write the JSON to a file with --json -o {name}")
        if token != "--json" or index + 1 >= len(argv):
            continue
        name = argv[index + 1]
        if name.startswith("-") or name == "":
            continue
        if not os.path.exists(name):
            # A missing out.json was meant as the output; a missing lib.so is a missing input
            # (reported as such when it is read).
            if name.lower().endswith(OUTPUT_SUFFIXES):
                raise UsageError(f"--json is a flag now: write the JSON to a file with --json -o {name}")
            continue
        schema = schema_of(name)
        readable = {"spillway.report"} if command != "report" else set()
        if command in ("compare",):
            readable.add("spillway.baseline")
        if schema is not None and schema not in readable:
            named_again = name in argv[:index] + argv[index + 2:]
            what = "an input of this run" if named_again else "an earlier output, not an input"
            raise UsageError(f"--json is a flag now: {name} is {what}; write the JSON to a file with "
                             f"--json -o FILE")


def add_table_options(parser: argparse.ArgumentParser, *, limit: bool = True) -> None:
    """--names and --limit, in the same words everywhere."""
    from spillway.render.grid import DEFAULT_LIMIT

    group = parser.add_argument_group("tables")
    group.add_argument("--names", choices=("short", "full"), default="short",
                       help="kernel names in tables: short (no return type or parameters, deep template "
                            "arguments elided; default) or full (the whole demangled signature)")
    if limit:
        group.add_argument("--limit", type=_limit, default=DEFAULT_LIMIT, metavar="N",
                           help=f"show at most N rows in tables (default {DEFAULT_LIMIT}; 0: all); JSON and TSV "
                                f"are always complete")


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (all) or more")
    return value
