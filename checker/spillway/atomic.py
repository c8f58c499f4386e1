"""Write files so that a crash never leaves half a file behind, nor a
temporary file.

The new content is written into an unnamed file in the target's directory
(``O_TMPFILE``: a SIGKILL at any point before the last two system calls leaves
nothing behind), synced, given a name with ``linkat`` and renamed over the
target, so readers see the old file or the new one, never a mixture.  Where
the file system has no ``O_TMPFILE`` a named temporary file
``.spillway-<pid>-<random>.tmp`` is used instead; temporaries left by a killed
run (their process is gone) are removed by the next write into that directory.
Two concurrent writers each rename a complete file; the last one wins.
"""

from __future__ import annotations

import os
import re
import secrets
from typing import Callable, Iterable

TEMPORARY_PREFIX = ".spillway-"
_TEMPORARY = re.compile(r"\.spillway-(\d+)-[0-9a-z_]+(\.tmp)?\Z")


def write_bytes(path: str, data: bytes | memoryview) -> None:
    write_chunks(path, (data,))


def write_text(path: str, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_chunks(path: str, chunks: Iterable[bytes | memoryview]) -> None:
    """Write the concatenated chunks to ``path`` atomically."""
    def produce(handle: int) -> None:
        with os.fdopen(handle, "wb", closefd=False) as out:
            for chunk in chunks:
                out.write(chunk)

    write_with(path, produce)


def write_with(path: str, produce: Callable[[int], None]) -> None:
    """``path``'s new content is what ``produce`` writes to the file descriptor
    it is given (from its start, with os.write or a writer it flushes before it
    returns); the file is replaced atomically once ``produce`` returns, and not
    at all when it raises."""
    directory = os.path.dirname(os.path.abspath(path))
    remove_stale_temporaries(directory)
    mode = _mode_for(path)
    handle, temporary = _open_temporary(directory)
    try:
        produce(handle)
        os.fsync(handle)
        os.fchmod(handle, mode)
        if temporary is None:
            temporary = _link_unnamed(handle, directory)
        os.replace(temporary, path)
        temporary = None
        _sync_directory(directory)
    finally:
        os.close(handle)
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def _mode_for(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _open_temporary(directory: str) -> tuple[int, str | None]:
    """An unnamed file in ``directory`` (name None), else a named one."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag:
        try:
            return os.open(directory, flag | os.O_WRONLY | os.O_CLOEXEC, 0o600), None
        except OSError as exc:
            if exc.errno not in (_errno("EOPNOTSUPP"), _errno("EISDIR"), _errno("EINVAL"), _errno("ENOTSUP")):
                raise
    while True:
        name = os.path.join(directory, f"{TEMPORARY_PREFIX}{os.getpid()}-{secrets.token_hex(6)}.tmp")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), name
        except FileExistsError:
            continue


def _link_unnamed(handle: int, directory: str) -> str:
    """Give the unnamed file a temporary name (rename cannot take an fd)."""
    while True:
        name = os.path.join(directory, f"{TEMPORARY_PREFIX}{os.getpid()}-{secrets.token_hex(6)}.tmp")
        try:
            # A dir fd makes Python call linkat(..., AT_SYMLINK_FOLLOW) (plain
            # link() would not follow the /proc magic link); the paths are
            # absolute, so the fd itself is not used.
            anchor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.link(f"/proc/self/fd/{handle}", name, src_dir_fd=anchor, follow_symlinks=True)
            finally:
                os.close(anchor)
            return name
        except FileExistsError:
            continue


def _sync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _errno(name: str) -> int:
    import errno
    return getattr(errno, name, -1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(directory: str) -> list[str]:
    """Remove ``.spillway-<pid>-*.tmp`` files whose writing process is gone
    (killed before it could clean up); returns their paths.  (On a directory
    shared between machines a pid says nothing: the other machine's writer
    then fails with one line, and no file is lost.)"""
    removed: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.match(entry.name)
        if not match:
            continue
        pid = int(match.group(1))
        if not entry.is_file(follow_symlinks=False) or pid == os.getpid() or _alive(pid):
            continue
        try:
            os.unlink(entry.path)
            removed.append(entry.path)
        except OSError:
            pass
    return removed
