"""The one rule every walk over a container's members obeys: it advances.

A walker computes the next member's position from numbers the input declares
(a size, a length, a padding rule).  If those numbers put the next position at
or before the current one, the walk would visit the same bytes again, forever
(a 168-byte ``ar`` archive whose size field read ``-61`` once did exactly
that).  Every walker in ``spillway.formats`` hands its next position to
:func:`advance`, which refuses it as an input error instead.
"""

from __future__ import annotations

from spillway.errors import InputError


def advance(current: int, following: int, *, container: str, what: str = "member",
            file: str | None = None) -> int:
    """Return ``following`` if it lies after ``current``; otherwise raise the
    input error that names the container and the offset of the member whose
    numbers point backwards (or nowhere)."""
    if following <= current:
        raise InputError(f"the {what} at {current:#x} gives the next position {following:#x}, "
                         f"not past its own: the walk would not advance", file=file,
                         container=container, offset=current)
    return following
