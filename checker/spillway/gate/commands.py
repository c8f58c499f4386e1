"""The commands the gate's outputs tell the user to run: the one that accepts
failures (``spillway baseline write ... --allow KEY --reason TEXT``) and the
one that writes a missing baseline, worded here once for `check`,
`baseline write` and the matrix."""

from __future__ import annotations

import shlex
from typing import Callable, Iterable, Optional

Quote = Callable[[str], str]


def accept_command(paths: Iterable[str], baseline: str, keys: Iterable[str], *, gate: Optional[str] = None,
                   targets: Optional[str] = None, quote: Quote = shlex.quote) -> str:
    """``spillway baseline write PATH... -o BASELINE [--gate G] [--target T]
    --allow KEY... --reason TEXT``, each word quoted for a POSIX shell."""
    words = ["spillway", "baseline", "write", *paths, "-o", baseline]
    if gate:
        words += ["--gate", gate]
    if targets is not None:
        words += ["--target", targets]
    for key in keys:
        words += ["--allow", key]
    return " ".join(quote(w) for w in words) + " --reason TEXT"


def write_command(paths: Iterable[str], baseline: str) -> str:
    """``spillway baseline write PATH... -o BASELINE --note TEXT``."""
    return " ".join(shlex.quote(w) for w in ["spillway", "baseline", "write", *paths, "-o", baseline]) \
        + " --note TEXT"


def quote_every_path(text: str) -> str:
    """What `baseline write` quotes with: like shlex.quote, but also every
    word with a character other than a letter, a digit or ``_.-`` (a path
    with a /).  Its messages have always quoted this way; shlex.quote would
    change their bytes for every such path, so it stays (issue 24)."""
    return text if all(c.isalnum() or c in "_.-" for c in text) else "'" + text.replace("'", "'\\''") + "'"


def accept_removed_command(paths: Iterable[str], baseline: str, keys: Iterable[str] = (),
                           removed_targets: Iterable[str] = (), *, targets: Optional[str] = None,
                           quote: Quote = shlex.quote) -> str:
    """``spillway baseline write PATH... -o BASELINE [--target T] --allow-removed KEY...
    --allow-removed-target TARGET... --reason TEXT``: accepts that baseline kernels, or
    whole targets, are no longer built (issue 31)."""
    words = ["spillway", "baseline", "write", *paths, "-o", baseline]
    if targets is not None:
        words += ["--target", targets]
    for key in keys:
        words += ["--allow-removed", key]
    for target in removed_targets:
        words += ["--allow-removed-target", target]
    return " ".join(quote(w) for w in words) + " --reason TEXT"
