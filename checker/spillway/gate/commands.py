"""The commands the gate's outputs tell the user to run: the one that accepts
failures (``spillway baseline write ... --allow-key KEY --reason TEXT``) and
the one that writes a missing baseline, worded here once for `check`,
`baseline write` and the matrix.

Kernel names and paths come from the binaries, so each word is quoted to be
pasted into a shell exactly and printed safely: ``--allow-key`` matches the
stable key character for character (``--allow`` would read ``*kernel*`` as a
glob and accept ``victim_kernel`` too), and a word holding a character a
terminal, a CI log or the shell would act on gets ANSI-C quoting (shell_word).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterable, Optional

if TYPE_CHECKING:
    from spillway.gate.check import CheckResult, Finding, RemovalCommands

Quote = Callable[[str], str]


def _whole(word: str) -> str:
    return word
# Kernels named with --allow-key in the one "accept all" command.
ACCEPT_ALL_MAX = 10
# Set (by the CMake module) to another command that writes the baseline.
WRITE_BASELINE_ENV = "SPILLWAY_WRITE_BASELINE"

# Escapes bash, zsh and ksh read in $'...' (dash has no $'...': paste into bash).
_NAMED_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shell_word(text: str, quote: Quote = shlex.quote) -> str:
    """``quote(text)``, unless the word holds a single quote, ``##[`` or a character
    that is not printable (C0 and C1 controls, newline, DEL, bidi and other
    formatting characters, undecodable bytes U+DC80-U+DCFF): then
    ``$'...'`` with each of them as a visible escape -- ``\\n``, ``\\'``,
    ``\\\\``, and ``\\xHH`` for the UTF-8 bytes of the others (the raw byte
    for an undecodable one), so the shell passes back the exact bytes
    whatever its locale, and nothing reaches the terminal raw."""
    if text.isprintable() and "'" not in text and "##[" not in text:
        return quote(text)
    out = []
    for character in text:
        code = ord(character)
        if character == "#":
            # (a GitHub runner acts on ##[ anywhere in a log line: spillway.untrusted)
            out.append("\\x23")
        elif character in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[character])
        elif 0xDC80 <= code <= 0xDCFF:                     # surrogateescape: the byte itself
            out.append(f"\\x{code - 0xDC00:02x}")
        elif character.isprintable():
            out.append(character)
        else:
            out.append("".join(f"\\x{byte:02x}" for byte in character.encode("utf-8", "surrogatepass")))
    return "$'" + "".join(out) + "'"


def accept_command(paths: Iterable[str], baseline: str, keys: Iterable[str], *, gate: Optional[str] = None,
                   targets: Optional[str] = None, quote: Quote = shlex.quote, word: Quote = _whole) -> str:
    """``spillway baseline write PATH... -o BASELINE [--gate G] [--target T]
    --allow-key KEY... --reason TEXT``, each word quoted by shell_word; ``word``:
    how a line output shows a word (untrusted.shown cuts one from a binary), whole by default."""
    words = ["spillway", "baseline", "write", *paths, "-o", baseline]
    if gate:
        words += ["--gate", gate]
    if targets is not None:
        words += ["--target", targets]
    for key in keys:
        words += ["--allow-key", key]
    return " ".join(shell_word(word(w), quote) for w in words) + " --reason TEXT"


def write_command(paths: Iterable[str], baseline: str) -> str:
    """``spillway baseline write PATH... -o BASELINE --note TEXT``."""
    return " ".join(shell_word(w) for w in ["spillway", "baseline", "write", *paths, "-o", baseline]) \
        + " --note TEXT"


def quote_every_path(text: str) -> str:
    """What `baseline write` quotes with: like shlex.quote, but also every
    word with a character other than a letter, a digit or ``_.-`` (a path
    with a /).  Its messages have always quoted this way; shlex.quote would
    change their bytes for every such path, so it stays (issue 24)."""
    return text if all(c.isalnum() or c in "_.-" for c in text) else "'" + text.replace("'", "'\\''") + "'"


def accept_removed_command(paths: Iterable[str], baseline: str, keys: Iterable[str] = (),
                           removed_targets: Iterable[str] = (), *, targets: Optional[str] = None,
                           quote: Quote = shlex.quote, word: Quote = _whole) -> str:
    """``spillway baseline write PATH... -o BASELINE [--target T] --allow-removed-key KEY...
    --allow-removed-target TARGET... --reason TEXT``: accepts that baseline kernels (by their
    stable key, exactly, as accept_command), or whole targets, are no longer built (issue 31)."""
    words = _removal_head(paths, baseline, targets)
    for key in keys:
        words += ["--allow-removed-key", key]
    for target in removed_targets:
        words += ["--allow-removed-target", target]
    return _shell_words(words, quote, word) + " --reason TEXT"


def _removal_head(paths: Iterable[str], baseline: str, targets: Optional[str]) -> list[str]:
    """The words of accept_removed_command before what it accepts."""
    return ["spillway", "baseline", "write", *paths, "-o", baseline] + (["--target", targets] if targets is not None
                                                                          else [])


def _shell_words(words: Iterable[str], quote: Quote = shlex.quote, word: Quote = _whole) -> str:
    """``words`` as a command line: each quoted by shell_word, after ``word``."""
    return " ".join(shell_word(word(w), quote) for w in words)


@dataclass(frozen=True)
class CheckCommands:
    """The commands that accept a check's failures and removals, or write its
    missing baseline: ``paths`` and ``baseline`` as the check was given them,
    the baseline's gate, the --target subset; ``word``: how each word is shown
    (``shown_by``: a line output's, which cuts a 4 MiB key), whole by default."""

    paths: tuple[str, ...]
    baseline: str
    baseline_gate: tuple[str, ...]
    targets: tuple[str, ...]
    word: Quote = field(default=_whole, compare=False)

    def shown_by(self, word: Quote) -> "CheckCommands":
        """The same commands, each word shown by ``word`` (a sink's: untrusted.shown)."""
        return replace(self, word=word)

    def _accept(self, keys: list[str], extra_metrics: set[str]) -> str:
        gate = [m for m in self.baseline_gate] + sorted(extra_metrics - set(self.baseline_gate))
        return accept_command(self.paths, self.baseline, keys,
                              gate=",".join(gate) if set(gate) != set(self.baseline_gate) else None,
                              targets=",".join(self.targets) if self.targets else None, word=self.word)

    def accept(self, finding: Finding) -> str:
        return self._accept([finding.key], {finding.metric})

    def accept_all(self, result: CheckResult) -> tuple[str, int]:
        keys = list(dict.fromkeys(f.key for f in result.failures))
        return (self._accept(keys[:ACCEPT_ALL_MAX], {f.metric for f in result.failures}),
                max(0, len(keys) - ACCEPT_ALL_MAX))

    def _removed(self, keys: list[str], targets: list[str]) -> str:
        return accept_removed_command(self.paths, self.baseline, keys, targets,
                                      targets=",".join(self.targets) if self.targets else None, word=self.word)

    def removals(self) -> RemovalCommands:
        """The commands that accept kernels and targets no longer built."""
        from spillway.gate.check import RemovalCommands

        def every(result: CheckResult) -> tuple[str, int]:
            keys = list(dict.fromkeys(key for _target, key, _name in result.vanished))
            return (self._removed(keys[:ACCEPT_ALL_MAX], [t.target for t in result.removed_targets]),
                    max(0, len(keys) - ACCEPT_ALL_MAX))

        # One kernel's: the words before its key quoted once (a check listing 3,931 kernels no longer
        # built quoted the paths again for each).
        head = _shell_words(_removal_head(self.paths, self.baseline, ",".join(self.targets) if self.targets else None),
                            word=self.word)

        def kernel(key: str) -> str:
            return f"{head} {_shell_words(['--allow-removed-key', key], word=self.word)} --reason TEXT"

        return RemovalCommands(kernel, lambda target: self._removed([], [target.target]), every)

    def write_missing(self) -> str:
        text = write_command(self.paths, self.baseline)
        other = os.environ.get(WRITE_BASELINE_ENV)
        return f"{text}" + (f" (or: {other})" if other else "")
