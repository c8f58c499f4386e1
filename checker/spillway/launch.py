"""The ``spillway`` console script's entry point ([project.scripts] in
pyproject.toml) and ``python3 -m spillway``'s.

Ctrl-C must give one line and exit status 130 from the first moment the
command is ours.  Importing the CLI (argparse, rich, orjson, msgspec, zstandard,
the subcommand modules) takes a good part of a second, and a KeyboardInterrupt
raised inside an import prints a traceback; raised inside a compiled
extension's initialisation (orjson's, measured) it can even crash the
interpreter with SIGSEGV.  So this module, which imports only ``os``, ``sys``
(already loaded by the interpreter's start-up) and the built-in ``_signal``,
installs a SIGINT handler before anything else of spillway is imported:

- before :func:`main` has started (the rest of the console script) and
  inside an import (any frame of ``importlib._bootstrap``), it writes
  ``spillway: interrupted`` and leaves at once with 130: there is nothing to
  unwind (writes go through spillway.atomic, which a kill cannot tear);
- anywhere else it raises KeyboardInterrupt as Python's own handler does, so
  ``spillway.cli.main`` answers it (130, one line) after ``with`` blocks and
  worker pools have been closed.

What no entry module can cover: a SIGINT during the interpreter's own start-up
(its standard streams, ``site`` and the .pth files, before the console
script's first line runs) is handled by the interpreter, which prints "Fatal
Python error: init_..." and a traceback; and one in the few milliseconds
between the console script's first line and the handler below (finding and
compiling the ``spillway`` package and this module) is Python's
KeyboardInterrupt.  tests/faults/test_fault_sigint_early.py sweeps both.
"""

# No "from __future__" and no signal.py (its enums cost a millisecond): the
# C module behind it installs the handler as early as this file can.
import _signal as signal
import os
import sys

INTERRUPTED = "spillway: interrupted"
EXIT_INTERRUPTED = 130


def _leave_at_once() -> None:
    try:
        os.write(2, INTERRUPTED.encode() + b"\n")
    except OSError:
        pass
    os._exit(EXIT_INTERRUPTED)


def _in_import(frame) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


_running = False   # main() has started


def on_sigint(signum, frame) -> None:
    if not _running or _in_import(frame):   # the console script's own lines, or an import
        _leave_at_once()
    raise KeyboardInterrupt


# At import: the console script imports this module before anything else of ours.
signal.signal(signal.SIGINT, on_sigint)


def main() -> int:
    global _running
    _running = True
    try:
        from spillway.cli import main as cli_main
        status = cli_main()
    except KeyboardInterrupt:   # outside cli.main's own try (its import, or its last return)
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    # Done, output flushed: a SIGINT while the interpreter shuts down (atexit
    # handlers) also gives the one line, not an "Exception ignored" traceback.
    signal.signal(signal.SIGINT, lambda signum, frame: _leave_at_once())
    return status
