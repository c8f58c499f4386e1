"""SIGINT in the first few hundred milliseconds of a run, through the
installed command: exit 130 and the one line ``spillway: interrupted`` (or a
clean exit when the run finished first), never a Python traceback and never a
crash, wherever the signal lands (spillway.launch installs the handler before
anything heavy is imported).

What no entry module can close:
- the interpreter's own start-up, before the console script's first line
  runs: before it has installed its handler the signal kills the process
  silently (-SIGINT, nothing printed); while it sets up ``__main__`` it
  prints "python: failed to set __main__.__loader__" (exit 1); while it sets up its standard streams
  and while ``site`` runs the .pth files it prints "Fatal Python error:
  init_sys_streams" / "init_import_site" and a traceback through its own
  frozen modules;
- the console script's own import lines (pip writes ``import re``, ``import
  sys``, ``from spillway.launch import main``) until launch.py's handler is in
  place, about 2 ms: Python's KeyboardInterrupt traceback through the import
  machinery alone, or through the ``spillway`` package's ``__init__.py`` (a
  docstring and ``__version__``) while it is loaded.
The tests allow exactly these, check that such a traceback has no frame of
spillway's past the handler, and count each outcome (printed with -s)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

import pytest

from faultkit import CODE_OBJECT, REPO, spillway

LAUNCH = REPO / "checker" / "spillway" / "launch.py"
PACKAGE = REPO / "checker" / "spillway" / "__init__.py"   # a docstring and __version__: no handler yet

DELAYS_MS = [i * 2.5 for i in range(121)]      # 0 to 300 ms after spawn, 121 points


def _outcome(command: list[str], delay_ms: float, env: dict | None = None) -> tuple[int, str]:
    process = subprocess.Popen([*command, "report", str(CODE_OBJECT)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
    time.sleep(delay_ms / 1000)
    try:
        process.send_signal(signal.SIGINT)
    except ProcessLookupError:
        pass
    _, stderr = process.communicate(timeout=60)
    return process.returncode, stderr.decode("utf-8", "backslashreplace")


def _classify(status: int, stderr: str, allow_site: bool) -> str:
    lines = stderr.strip().splitlines()
    if status == 130:
        assert lines == ["spillway: interrupted"], stderr
        return "interrupted"
    if status == 1 and lines and lines[0].startswith("Fatal Python error: init_"):
        # The interpreter's own initialisation (its standard streams, or site
        # and the .pth files): no frame of spillway's or of the console script.
        # (It usually ends in KeyboardInterrupt; during the set-up of io the
        # interpreter has been seen to end in "TypeError: expected a message
        # argument" instead.)
        assert "spillway" not in stderr, stderr
        if "init_import_site" in lines[0]:
            assert allow_site, stderr
            return "interpreter start-up (site)"
        return "interpreter start-up (before site)"
    if status == 1 and lines == ["KeyboardInterrupt"]:
        # The interpreter, before the script runs (no frame at all): rare.
        return "interpreter start-up (before the script)"
    if status == 1 and lines and lines[-1].endswith("failed to set __main__.__loader__"):
        # The interpreter, while it sets up __main__ for the script (pymain_run_file:
        # the import of the loader is interrupted), before the script's first line: rare.
        assert "spillway" not in stderr, stderr
        return "interpreter start-up (before the script)"
    if status == -signal.SIGINT and stderr == "":   # before the interpreter installed its handler
        return "killed before the interpreter's handler"
    if status in (-signal.SIGINT, 0) and "Traceback" in stderr and _before_our_handler(stderr):
        # Python's KeyboardInterrupt while the console script imports
        # spillway.launch, before its handler is in place (-SIGINT), or inside
        # a weak-reference callback of the import machinery there, which
        # Python reports as ignored before the run goes on (exit 0).
        return "console script, before spillway's handler"
    if status == 0:
        assert "Traceback" not in stderr and "Fatal" not in stderr, stderr
        return "finished"
    pytest.fail(f"exit {status}: {stderr[-2000:]}")


FRAME = re.compile(r'^  File "([^"]+)", line (\d+), in (\S+)\n(?:    (.*)\n)?', re.M)
STDLIB = sysconfig.get_path("stdlib") + "/"
HANDLER_LINE = next(number for number, line in enumerate(LAUNCH.read_text().splitlines(), 1)
                    if line.startswith("signal.signal("))


def _before_our_handler(stderr: str) -> bool:
    """Every frame of the traceback is the import machinery, the standard
    library (modules the console script imports), one of the console
    script's import lines (pip writes ``import re``, ``import sys``,
    ``from spillway.launch import main``), or launch.py before its handler."""
    frames = FRAME.findall(stderr)
    if not frames or not stderr.rstrip().rstrip(":").endswith("KeyboardInterrupt"):
        return False
    for filename, line, function, source in frames:
        if filename.startswith("<frozen "):   # the import machinery, os, stat, codecs...
            continue
        if filename.startswith(STDLIB) and "site-packages" not in filename:   # re, enum (the script's own)
            continue
        if filename == "<string>":   # what the standard library evaluates (collections.namedtuple)
            continue
        if filename == str(LAUNCH) and function == "<module>" and int(line) <= HANDLER_LINE:
            continue
        if filename == str(PACKAGE) and function == "<module>":   # (line 0: while it is loaded)
            continue
        if Path(filename).name == "spillway" and function == "<module>" and \
                (line == "0" or source.startswith(("import ", "from "))):   # 0: before its first line
            continue
        return False
    return True


def _sweep(command: list[str], allow_site: bool, env: dict | None = None) -> Counter:
    seen: Counter = Counter()
    for delay in DELAYS_MS:
        seen[_classify(*_outcome(command, delay, env), allow_site=allow_site)] += 1
    # The sweep reached spillway's own code (not only the interpreter's start-up).
    assert seen["interrupted"] >= 10, seen
    return seen


def test_early_sigint_through_the_installed_command():
    seen = _sweep(spillway(), allow_site=True)
    print(dict(seen))


def _console_script() -> Path:
    script = Path(sysconfig.get_path("scripts")) / "spillway"
    if not script.is_file():
        pytest.skip(f"no console script at {script}")
    assert "spillway.launch" in script.read_text(), "reinstall: pip install -e . (the entry point moved)"
    return script


def test_early_sigint_without_site():
    """The same console script without site (-S), so that the sweep lands
    more often on the script itself: the one line, the interpreter's stream
    set-up, or the script's own import lines before spillway.launch's handler
    (under -S the script's ``import re`` is one of them), nothing else."""
    paths = [str(REPO / "checker"), sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    seen = _sweep([sys.executable, "-S", str(_console_script())], allow_site=False, env=env)
    assert seen["interpreter start-up (site)"] == 0
    print(dict(seen))
