"""Paths at the edges: ``-`` for standard input, refusing what is not a file,
and JSON that carries paths which are not UTF-8.

- ``-`` means standard input wherever spillway reads a path.  It is copied
  once, in pieces, into an unnamed temporary file (so it can be mapped, and a
  wheel read from it like any zip) and opened again through ``/proc/self/fd``.
- FIFOs, devices and sockets are refused at once (opening a FIFO blocks
  forever; a device never ends).
- Linux paths are bytes.  Python decodes the ones that are not UTF-8 with
  ``surrogateescape`` (PEP 383): byte 0xXX becomes U+DCXX.  spillway writes such
  a string into JSON with the escape ``\\udcXX`` (valid JSON text, RFC 8259
  section 7), so the exact bytes come back (``os.fsencode(json.loads(...))``);
  orjson refuses lone surrogates, so those documents go through the standard
  library's json, only then.  On a terminal the byte is shown as ``\\udcXX``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
from typing import Iterable, Iterator

import orjson

from spillway.errors import InputError, UsageError
from spillway.untrusted import json_log_safe

STDIN = "-"
_STDIN_FILE = None   # the unnamed copy of standard input, once read

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def spooled_stdin() -> str:
    """A path that opens a copy of standard input (read once per run)."""
    global _STDIN_FILE
    if _STDIN_FILE is None:
        source = sys.stdin.buffer if sys.stdin is not None else None
        if source is None:
            raise UsageError("standard input is closed (- names standard input)")
        if source.isatty():
            raise UsageError("standard input is a terminal: pipe a file into spillway for -")
        copy = tempfile.TemporaryFile(prefix=".spillway-stdin-")
        try:
            shutil.copyfileobj(source, copy, 1 << 20)
            copy.flush()
        except OSError as exc:
            copy.close()
            raise InputError(f"cannot read standard input: {exc.strerror}", file=STDIN) from None
        _STDIN_FILE = copy
    return f"/proc/self/fd/{_STDIN_FILE.fileno()}"


def readable(path: str, display: str | None = None) -> str:
    """The path to open for ``path``: standard input's copy for ``-``; an
    InputError for what does not exist or is not a file or directory."""
    if path == STDIN:
        return spooled_stdin()
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=display or path) from None
    refuse_special(info.st_mode, display or path)
    return path


def refuse_special(mode: int, name: str) -> None:
    for test, kind in _KINDS:
        if test(mode):
            raise InputError(f"is {kind}, not a file: refused (name a file or directory, or - for "
                             f"standard input)", file=name)


def dumps(document, option: int = 0) -> bytes:
    """orjson.dumps, except that strings holding undecodable path bytes
    (U+DC80-U+DCFF) are written as ``\\udcXX`` escapes instead of failing,
    and that the text is safe in a log (untrusted.json_log_safe: no ``##[``,
    no raw C1 or bidirectional control; the same document once parsed)."""
    try:
        return json_log_safe(orjson.dumps(document, option=option))
    except TypeError as exc:
        if "surrogates" not in str(exc):
            raise
    indent = 2 if option & orjson.OPT_INDENT_2 else None
    text = json.dumps(document, ensure_ascii=False, indent=indent,
                      separators=(",", ": ") if indent else (",", ":"))
    text += "\n" if option & orjson.OPT_APPEND_NEWLINE else ""
    # Lone surrogates only occur inside JSON strings; backslashreplace writes
    # each as the JSON escape \udcXX.
    return json_log_safe(text.encode("utf-8", "backslashreplace"))


def document_chunks(head: dict, lists: dict[str, Iterable], per_chunk: int = 2048) -> Iterator[bytes]:
    """A JSON object written in pieces: ``head``'s members pretty-printed as
    orjson's OPT_INDENT_2 prints them, then each of ``lists`` (name -> records,
    read lazily) with one record per line, so a document of hundreds of
    thousands of records is never built whole, as objects or as text."""
    text = dumps(head, option=orjson.OPT_INDENT_2)
    pending = text[:-2] if head else b"{"           # the head without its closing "\n}"
    separator = b",\n" if head else b"\n"
    for name, records in lists.items():
        pending += separator + b"  " + dumps(name) + b": ["
        separator = b",\n"
        batch: list[bytes] = []
        opened = False
        for record in records:
            batch.append(b"    " + dumps(record))
            if len(batch) >= per_chunk:
                yield pending + (b",\n" if opened else b"\n") + b",\n".join(batch)
                pending, batch, opened = b"", [], True
        if batch:
            pending += (b",\n" if opened else b"\n") + b",\n".join(batch)
            opened = True
        pending += b"\n  ]" if opened else b"]"
    yield pending + b"\n}\n"


def loads(data: bytes | str):
    """orjson.loads, falling back to the standard library for documents
    holding ``\\udcXX`` escapes (paths that are not UTF-8)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "surrogate" not in str(exc):
            raise
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            raise exc from None


def shown(path: str) -> str:
    """A path for one line of text: undecodable bytes as \\xXX."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
