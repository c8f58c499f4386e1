"""Paths at the edges: ``-`` for standard input, refusing what is not a file,
and paths that are not UTF-8.

- ``-`` means standard input wherever spillway reads a path.  It is copied
  once, in pieces, into an unnamed temporary file (so it can be mapped, and a
  wheel read from it like any zip) and opened again through ``/proc/self/fd``.
- FIFOs, devices and sockets are refused at once (opening a FIFO blocks
  forever; a device never ends).
- Linux paths are bytes.  Python decodes the ones that are not UTF-8 with
  ``surrogateescape`` (PEP 383): byte 0xXX becomes U+DCXX.  spillway.json_codec
  writes such a string into JSON with the escape ``\\udcXX``, so the exact
  bytes come back.  On a terminal the byte is shown as ``\\xXX`` (``shown``).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile

from spillway.errors import InputError, UsageError

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


def regular_file_head(path: str, size: int) -> bytes | None:
    """The first ``size`` bytes of a regular file, to tell what it is; None when
    ``path`` is not one (a FIFO or a device is never opened: it would block) or
    cannot be read."""
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return None


def shown(path: str) -> str:
    """A path for one line of text: undecodable bytes as \\xXX."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def relative_path(path: str, directory: str) -> str:
    """``path`` relative to ``directory`` when it is under it (a source file
    under its compile unit's DW_AT_comp_dir: the name the build's sources give
    it, the same on two builds made in other folders), else as it is."""
    if directory and path.startswith(directory.rstrip("/") + "/"):
        return path[len(directory.rstrip("/")) + 1:]
    return path
