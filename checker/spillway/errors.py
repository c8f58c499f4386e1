"""Errors that end a run with exit status 2 and one line of text."""

from __future__ import annotations


class SpillwayError(Exception):
    """A user-facing error: printed as one line, never as a traceback."""

    exit_status = 2


class InputError(SpillwayError):
    """A file that cannot be read as what it claims to be.

    Carries where the problem is, so the one-line message names the file, the
    container being parsed and the byte offset inside that container.
    """

    def __init__(self, message: str, *, file: str | None = None,
                 container: str | None = None, offset: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.container = container
        self.offset = offset

    def within(self, container: str, base: int = 0, *, rebase: bool = True) -> "InputError":
        """Record that the error happened inside ``container`` at ``base``.

        With ``rebase`` the inner offset is in the outer container's byte
        space and is shifted by ``base``.  Without it (the inner data was
        inflated from a compressed stream) the outer position is kept in the
        container description instead.
        """
        if self.container is None:
            self.container = container
            self.offset = base + (self.offset or 0) if rebase else self.offset
        elif rebase:
            self.offset = base + (self.offset or 0)
            self.container = f"{container} > {self.container}"
        else:
            self.container = f"{container} at {base:#x} > {self.container}"
        return self

    def __str__(self) -> str:
        parts = []
        if self.file:
            parts.append(self.file)
        if self.container:
            where = self.container
            if self.offset is not None:
                where += f" at offset {self.offset:#x}"
            parts.append(where)
        elif self.offset is not None:
            parts.append(f"offset {self.offset:#x}")
        parts.append(self.message)
        return ": ".join(parts)


class NoDeviceCode(InputError):
    """A file that is readable but holds no AMDGPU device code."""


class BitcodeOnly(NoDeviceCode):
    """Device code exists but only as LLVM bitcode (RDC objects)."""

    MESSAGE = "bitcode only: resource usage exists after the device link"

    def __init__(self, **where):
        super().__init__(self.MESSAGE, **where)


class UsageError(SpillwayError):
    """Bad command-line use or a bad policy file."""
