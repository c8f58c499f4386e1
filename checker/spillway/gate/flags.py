"""The code-generation flags of a build and of its baseline, compared.

A build's flags are known from one of two places: the command lines its
compiler recorded in the code objects (clang ``-frecord-command-line``; the
report's ``files[].command_lines``, formats.command_line), or what the caller
declares (``--flags``; a matrix cell's ``flags``).  A baseline records the
flags of the build it was written from (``provenance.flags``), absent when
they were not known.  ``check`` compares the two when both are known: the same
kernels with other flags are other kernels (offload LTO moved an MIOpen kernel
from 0 to 356 B of scratch), and a gate that passes them silently compares
unlike with unlike."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Iterable, Optional

from spillway.errors import UsageError
from spillway.formats.command_line import code_generation_flags, flag_changes, flags_of_arguments


def recorded_flags(files: Iterable[dict]) -> Optional[list[str]]:
    """The code-generation flags the compiler recorded in a build's code
    objects (report ``files`` entries); None when none recorded a command line."""
    lines = [line for record in files for line in (record.get("command_lines") or ())]
    return code_generation_flags(lines) if lines else None


def declared_flags(text: str, option: str = "--flags") -> list[str]:
    """Flags given on the command line as one string of shell words, read as
    a recorded command line's are (``-mllvm X`` one flag, places left out)."""
    try:
        return flags_of_arguments(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"{option} {text!r}: {exc}") from None


def cell_flags(flags: Iterable[str]) -> list[str]:
    """A matrix cell's ``flags``, read as the recipe passes them (split on white
    space) and then as a recorded command line's."""
    return flags_of_arguments(word for flag in flags for word in flag.split())


def build_flags(declared: Optional[str], files: Iterable[dict]) -> Optional[list[str]]:
    """What a build's flags are: declared (``--flags``) when given, else recorded."""
    return declared_flags(declared) if declared is not None else recorded_flags(files)


@dataclass(frozen=True)
class FlagDifference:
    added: list[str]            # in the build, not in the baseline
    removed: list[str]          # in the baseline, not in the build

    def sentence(self) -> str:
        """One line naming the flags added and removed."""
        parts = []
        if self.added:
            parts.append("added " + " ".join(self.added))
        if self.removed:
            parts.append("removed " + " ".join(self.removed))
        return ("code-generation flags differ from the baseline's: " + "; ".join(parts)
                + " (the kernels may differ for that alone: rewrite the baseline from this build, or fix the flags)")


def compare(baseline_flags: Optional[list[str]], flags: Optional[list[str]]) -> Optional[FlagDifference]:
    """The difference, or None when they are the same or either side is not known."""
    if baseline_flags is None or flags is None:
        return None
    added, removed = flag_changes(baseline_flags, flags)
    return FlagDifference(added, removed) if added or removed else None
