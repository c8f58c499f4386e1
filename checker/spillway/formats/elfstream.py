"""A read-only file-like view of a memoryview, so pyelftools can parse ELF
images that live inside a mapped file or an inflated bundle without copying
them whole."""

from __future__ import annotations

import io


class MemoryStream(io.RawIOBase):
    def __init__(self, data: memoryview | bytes):
        super().__init__()
        self._data = memoryview(data)
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            self._position = offset
        elif whence == io.SEEK_CUR:
            self._position += offset
        else:
            self._position = len(self._data) + offset
        return self._position

    def tell(self) -> int:
        return self._position

    def read(self, size: int = -1) -> bytes:
        start = self._position
        end = len(self._data) if size is None or size < 0 else min(start + size, len(self._data))
        if start >= end:
            return b""
        self._position = end
        return bytes(self._data[start:end])

    def readinto(self, buffer) -> int:
        chunk = self.read(len(buffer))
        buffer[:len(chunk)] = chunk
        return len(chunk)
