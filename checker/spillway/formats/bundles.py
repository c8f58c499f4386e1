"""Clang offload bundles: uncompressed ``__CLANG_OFFLOAD_BUNDLE__`` and ``CCOB``.

A bundle stream (a ``.hip_fatbin`` section or a bundle file) holds bundles back
to back, each possibly followed by zero padding.  Bundles are walked by their
size fields, never by searching for magic strings: ``CCOB`` can occur inside a
compressed payload.  See amdgpu-binaries.md sections 1.1 and 2.
"""

from __future__ import annotations

import hashlib
import mmap
import struct
import zlib
from dataclasses import dataclass, field
from functools import lru_cache

import zstandard

from spillway.errors import InputError
from spillway.formats.walk import advance

UNCOMPRESSED_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")  # raw and wrapper bitcode

# Default cap on what one compressed bundle may inflate to.  Large libraries
# hold bundles of a few hundred MiB at most; a header that claims more is
# almost certainly corrupt or hostile.
DEFAULT_MAX_DECOMPRESSED = 4 << 30

_METHODS = {0: "zlib", 1: "zstd"}
_CCOB_HEADER_SIZE = {1: 20, 2: 24, 3: 32}


@dataclass(frozen=True)
class BundleEntry:
    """One entry of a bundle: an offload kind, a triple and a payload."""

    entry_id: str
    kind: str                # hip, hipv4, openmp, host, ...
    triple: str              # amdgcn-amd-amdhsa-
    target_id: str           # gfx90a:xnack- (may be empty)
    payload: memoryview
    offset: int              # of the payload inside the (uncompressed) bundle

    @property
    def is_host(self) -> bool:
        return self.kind == "host"

    @property
    def is_amdgcn(self) -> bool:
        return self.triple.startswith("amdgcn")


@dataclass(frozen=True)
class Bundle:
    """A bundle found in a stream, with where it was and how it was stored."""

    index: int
    offset: int              # inside the stream
    size: int                # bytes it occupies in the stream (compressed size if compressed)
    compression: str | None  # None, "zlib" or "zstd"
    ccob_version: int | None
    entries: list[BundleEntry] = field(default_factory=list)


def split_entry_id(entry_id: str) -> tuple[str, str, str]:
    """Split ``<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]``.

    Only the first five dashes separate fields, as the bundler does: target
    IDs such as ``gfx90a:xnack-`` or ``gfx9-4-generic`` contain dashes.
    """
    parts = entry_id.split("-", 5)
    kind = parts[0]
    triple = "-".join(parts[1:5])
    target_id = parts[5] if len(parts) > 5 else ""
    return kind, triple, target_id


def is_bundle_start(data: memoryview | bytes, offset: int = 0) -> bool:
    head = bytes(data[offset:offset + len(UNCOMPRESSED_MAGIC)])
    return head.startswith(UNCOMPRESSED_MAGIC) or head.startswith(COMPRESSED_MAGIC)


def parse_uncompressed(data: memoryview, *, container: str = "offload bundle") -> tuple[list[BundleEntry], int]:
    """Parse one uncompressed bundle at the start of ``data``.

    Returns the entries and the bundle's end (the bundle has no size field:
    its end is the furthest entry end).
    """
    size = len(data)
    if size < 32 or bytes(data[:24]) != UNCOMPRESSED_MAGIC:
        raise InputError("not an offload bundle (bad magic)", container=container, offset=0)
    (count,) = struct.unpack_from("<Q", data, 24)
    # Each descriptor takes at least 24 bytes; anything more is a lying header.
    if count > (size - 32) // 24:
        raise InputError(f"bundle header claims {count} entries, more than fit in {size} bytes",
                         container=container, offset=24)
    position = 32
    end = position
    raw_entries = []
    for _ in range(count):
        if position + 24 > size:
            raise InputError("truncated entry descriptor", container=container, offset=position)
        entry_offset, entry_size, id_len = struct.unpack_from("<QQQ", data, position)
        position += 24
        if id_len > 4096 or position + id_len > size:
            raise InputError(f"entry ID length {id_len} runs past the data", container=container,
                             offset=position - 8)
        try:
            entry_id = bytes(data[position:position + id_len]).decode("ascii")
        except UnicodeDecodeError:
            raise InputError("entry ID is not ASCII", container=container, offset=position) from None
        position += id_len
        if entry_offset + entry_size > size:
            raise InputError(f"entry {entry_id!r} (offset {entry_offset:#x}, size {entry_size}) "
                             f"runs past the end of the data ({size} bytes)",
                             container=container, offset=position - id_len - 24)
        raw_entries.append((entry_id, entry_offset, entry_size))
        end = max(end, entry_offset + entry_size)
    end = max(end, position)
    entries = []
    for entry_id, entry_offset, entry_size in raw_entries:
        kind, triple, target_id = split_entry_id(entry_id)
        entries.append(BundleEntry(entry_id, kind, triple, target_id,
                                   data[entry_offset:entry_offset + entry_size], entry_offset))
    return entries, end


@dataclass(frozen=True)
class CompressedHeader:
    version: int
    method: str
    header_size: int
    total_size: int | None      # whole bundle incl. header; None for v1
    uncompressed_size: int
    hash: int


def parse_compressed_header(data: memoryview, *, container: str = "CCOB bundle") -> CompressedHeader:
    if len(data) < 8 or bytes(data[:4]) != COMPRESSED_MAGIC:
        raise InputError("not a compressed bundle (bad magic)", container=container, offset=0)
    version, method_code = struct.unpack_from("<HH", data, 4)
    if version not in _CCOB_HEADER_SIZE:
        raise InputError(f"unknown compressed bundle version {version}", container=container, offset=4)
    if method_code not in _METHODS:
        raise InputError(f"unknown compression method {method_code}", container=container, offset=6)
    header_size = _CCOB_HEADER_SIZE[version]
    if len(data) < header_size:
        raise InputError(f"truncated CCOB v{version} header", container=container, offset=0)
    if version == 1:
        uncompressed_size, digest = struct.unpack_from("<IQ", data, 8)
        total_size = None
    elif version == 2:
        total_size, uncompressed_size, digest = struct.unpack_from("<IIQ", data, 8)
    else:
        total_size, uncompressed_size, digest = struct.unpack_from("<QQQ", data, 8)
    if total_size is not None:
        if total_size < header_size:
            raise InputError(f"total size {total_size} is smaller than the header",
                             container=container, offset=8)
        if total_size > len(data):
            raise InputError(f"total size {total_size} runs past the end of the data ({len(data)} bytes)",
                             container=container, offset=8)
    return CompressedHeader(version, _METHODS[method_code], header_size, total_size,
                            uncompressed_size, digest)


def inflate_zlib(payload: memoryview, limit: int, container: str) -> tuple[bytes, int]:
    """Inflate a zlib stream without producing more than ``limit`` bytes.

    Returns the output and how many input bytes the stream used.
    """
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(payload, limit + 1)
    except zlib.error as exc:
        raise InputError(f"zlib stream is corrupt ({exc})", container=container) from None
    if len(out) > limit:
        raise InputError(f"zlib stream inflates past {limit} bytes", container=container)
    if not inflater.eof:
        raise InputError("zlib stream is truncated", container=container)
    return out, len(payload) - len(inflater.unused_data)


def inflate_zstd(payload: memoryview, limit: int, container: str, *, need_end: bool) -> tuple[bytes, int]:
    """Inflate one zstd frame without producing more than ``limit`` bytes."""
    try:
        params = zstandard.get_frame_parameters(payload)
    except zstandard.ZstdError as exc:
        raise InputError(f"zstd frame header is corrupt ({exc})", container=container) from None
    if params.content_size not in (zstandard.CONTENTSIZE_UNKNOWN, zstandard.CONTENTSIZE_ERROR) \
            and params.content_size > limit:
        raise InputError(f"zstd frame declares {params.content_size} bytes, above the limit {limit}",
                         container=container)
    decompressor = zstandard.ZstdDecompressor()
    if not need_end:
        try:
            with decompressor.stream_reader(payload, read_across_frames=False) as reader:
                out = reader.read(limit + 1)
                while len(out) <= limit:
                    more = reader.read(limit + 1 - len(out))
                    if not more:
                        break
                    out += more
        except zstandard.ZstdError as exc:
            raise InputError(f"zstd stream is corrupt ({exc})", container=container) from None
        if len(out) > limit:
            raise InputError(f"zstd stream inflates past {limit} bytes", container=container)
        return out, len(payload)
    # CCOB v1 has no size field: feed small pieces so one piece cannot blow
    # past the limit by much, and learn where the frame ends from unused_data.
    inflater = decompressor.decompressobj()
    pieces, produced, used = [], 0, 0
    step = 1024
    try:
        while used < len(payload) and not inflater.eof:
            chunk = payload[used:used + step]
            piece = inflater.decompress(chunk)
            produced += len(piece)
            if produced > limit:
                raise InputError(f"zstd stream inflates past {limit} bytes", container=container)
            pieces.append(piece)
            used += len(chunk) - len(inflater.unused_data)
    except zstandard.ZstdError as exc:
        raise InputError(f"zstd stream is corrupt ({exc})", container=container) from None
    if not inflater.eof:
        raise InputError("zstd stream is truncated", container=container)
    return b"".join(pieces), used


def decompress(data: memoryview, *, max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
               container: str = "CCOB bundle", verify_hash: bool = True) -> tuple[CompressedHeader, bytes, int]:
    """Decompress the ``CCOB`` bundle at the start of ``data``.

    Returns the header, the uncompressed bundle and the number of bytes the
    compressed bundle occupies.  Checks the declared size against the real
    one and, with ``verify_hash``, the stored hash (first 8 bytes of the MD5
    of the output).
    """
    header = parse_compressed_header(data, container=container)
    where = f"{container} v{header.version} ({header.method})"
    if header.uncompressed_size > max_decompressed:
        raise InputError(f"declared uncompressed size {header.uncompressed_size} exceeds the cap "
                         f"{max_decompressed} (--max-decompressed)", container=where, offset=0)
    end = header.total_size if header.total_size is not None else len(data)
    payload = data[header.header_size:end]
    limit = header.uncompressed_size
    if header.method == "zlib":
        out, used = inflate_zlib(payload, limit, where)
    else:
        out, used = inflate_zstd(payload, limit, where, need_end=header.total_size is None)
    if len(out) != header.uncompressed_size:
        raise InputError(f"declared uncompressed size {header.uncompressed_size} but the stream "
                         f"holds {len(out)} bytes", container=where, offset=0)
    if verify_hash:
        digest = int.from_bytes(hashlib.md5(out).digest()[:8], "little")
        if digest != header.hash:
            raise InputError(f"hash mismatch: header says {header.hash:#018x}, content hashes to "
                             f"{digest:#018x}", container=where, offset=header.header_size - 8)
    occupied = header.total_size if header.total_size is not None else header.header_size + used
    return header, out, occupied


def _skip_zeros(data: memoryview, position: int) -> int:
    """Return the first non-zero position at or after ``position``."""
    size = len(data)
    while position < size:
        chunk = bytes(data[position:position + 65536])
        stripped = chunk.lstrip(b"\0")
        if stripped:
            return position + len(chunk) - len(stripped)
        position += len(chunk)
    return size


def _shift(entry: BundleEntry, by: int) -> BundleEntry:
    return BundleEntry(entry.entry_id, entry.kind, entry.triple, entry.target_id, entry.payload,
                       entry.offset + by)


# -- lazy walking and streaming inflation ------------------------------------
#
# A large library holds hundreds of compressed bundles that inflate to GBs.
# ``walk_lazy`` finds them from their headers without inflating anything;
# ``iter_compressed_entries`` later inflates one bundle as a stream and hands
# out one entry at a time, so memory is bounded by the largest code object,
# not by the bundle or the library.

@dataclass(frozen=True)
class PendingBundle:
    """A compressed bundle found in a stream, not yet inflated."""

    index: int
    offset: int              # inside the stream
    size: int                # compressed bytes it occupies
    header: CompressedHeader
    data: memoryview         # the whole compressed bundle, header included


def _measure_v1(data: memoryview, header: CompressedHeader, max_decompressed: int, container: str) -> int:
    """CCOB v1 has no total size: inflate once, keeping nothing, to find where
    the compressed stream ends.  Returns the bytes the bundle occupies."""
    payload = data[header.header_size:]
    limit = header.uncompressed_size
    produced = 0
    step = 1 << 16
    if header.method == "zlib":
        inflater = zlib.decompressobj()
        used = 0
        try:
            while used < len(payload) and not inflater.eof:
                chunk = payload[used:used + step]
                produced += len(inflater.decompress(chunk, limit + 1 - produced))
                while inflater.unconsumed_tail and produced <= limit:
                    produced += len(inflater.decompress(inflater.unconsumed_tail, limit + 1 - produced))
                if produced > limit:
                    break
                used += len(chunk) - len(inflater.unused_data)
        except zlib.error as exc:
            raise InputError(f"zlib stream is corrupt ({exc})", container=container) from None
    else:
        inflater = zstandard.ZstdDecompressor().decompressobj()  # type: ignore[assignment]  # the same protocol
        used = 0
        try:
            while used < len(payload) and not inflater.eof:
                chunk = payload[used:used + 1024]
                produced += len(inflater.decompress(chunk))
                if produced > limit:
                    break
                used += len(chunk) - len(inflater.unused_data)
        except zstandard.ZstdError as exc:
            raise InputError(f"zstd stream is corrupt ({exc})", container=container) from None
    if produced > limit:
        raise InputError(f"{header.method} stream inflates past the declared {limit} bytes", container=container)
    if not inflater.eof:
        raise InputError(f"{header.method} stream is truncated", container=container)
    return header.header_size + used


def walk_lazy(data: memoryview, *, max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
              container: str = ".hip_fatbin") -> list[Bundle | PendingBundle]:
    """Walk a stream of bundles separated by zero padding, leaving compressed
    bundles compressed (``PendingBundle``): only their headers are read and
    checked (a declared size above ``max_decompressed`` is refused here)."""
    found: list[Bundle | PendingBundle] = []
    position = _skip_zeros(data, 0)
    size = len(data)
    while position < size:
        head = bytes(data[position:position + 24])
        if head == UNCOMPRESSED_MAGIC:
            try:
                entries, length = parse_uncompressed(data[position:])
            except InputError as exc:
                raise exc.within(container, position) from None
            found.append(Bundle(len(found), position, length, None, None,
                                [_shift(e, position) for e in entries]))
        elif head.startswith(COMPRESSED_MAGIC):
            rest = data[position:]
            try:
                header = parse_compressed_header(rest)
                where = f"CCOB bundle v{header.version} ({header.method})"
                if header.uncompressed_size > max_decompressed:
                    raise InputError(f"declared uncompressed size {header.uncompressed_size} exceeds the cap "
                                     f"{max_decompressed} (--max-decompressed)", container=where, offset=0)
                if header.total_size is not None:
                    length = header.total_size
                else:
                    length = _measure_v1(rest, header, max_decompressed, where)
            except InputError as exc:
                raise exc.within(container, position) from None
            found.append(PendingBundle(len(found), position, length, header, rest[:length]))
        else:
            raise InputError(f"expected an offload bundle, found bytes {head[:8].hex()}",
                             container=container, offset=position)
        position = _skip_zeros(data, advance(position, position + length, container=container, what="bundle"))
    return found


_IDLE_ZSTD: list = []     # decompressors whose stream has ended, for the next one
# A decompressor keeps its stream's window buffer while idle: one kept after a
# 128 MiB window (rocBLAS 7.2.4's largest bundles) held 128 MiB per worker
# through every later bundle, so only small windows are worth keeping.
_KEPT_WINDOW = 8 << 20


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    """A zstd decompressor no stream is using: a new one per stream costs a
    fresh window buffer (page faults) for each of a library's hundreds of
    bundles.  Given back by a stream read to its end, dropped by any other."""
    return _IDLE_ZSTD.pop() if _IDLE_ZSTD else zstandard.ZstdDecompressor()


def _give_back(decompressor: zstandard.ZstdDecompressor, window: int) -> None:
    """Keep ``decompressor`` for the next stream, if the window buffer it holds
    (``window`` bytes; 0 after a one-call inflate, which uses none) is small."""
    if len(_IDLE_ZSTD) < 4 and window <= _KEPT_WINDOW:
        _IDLE_ZSTD.append(decompressor)


# Large outputs go to memory of their own backed by transparent huge pages: glibc
# maps every block above 32 MiB afresh, and faulting it in 4 KiB pages cost about
# 0.5 CPU-s per GB inflated (librocsparse1 7.2.4's bundles of 16 MiB and more are
# 1.2 of its 2.1 GB; zstd alone over that library: 1.29 -> 0.83-0.87 CPU-s).  The
# mapping is the entries' buffer and goes when the last of them does.
_HUGE_PAGES_FROM = 16 << 20


@lru_cache(maxsize=1)
def _huge_pages() -> bool:
    """Whether this kernel gives a private mapping huge pages when asked
    (transparent huge pages "always" or "madvise")."""
    if not hasattr(mmap, "MADV_HUGEPAGE"):
        return False
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled", encoding="ascii") as setting:
            return huge_pages_allowed(setting.read())
    except (OSError, UnicodeDecodeError):
        return False


def huge_pages_allowed(setting: str) -> bool:
    """The transparent huge pages setting (``always [madvise] never``, the
    chosen one in brackets) lets a mapping that asks have them."""
    return "[always]" in setting or "[madvise]" in setting


def _inflate_into_huge_pages(decompressor: zstandard.ZstdDecompressor, payload: memoryview,
                             size: int) -> tuple[mmap.mmap, int] | None:
    """The frame inflated into a new private mapping of ``size`` bytes, and
    how many bytes it held.  zstd decodes a whole single-segment frame
    straight into a buffer this large, with no window of its own.  None when
    no mapping can be made (then the heap it is)."""
    try:
        out = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (OSError, OverflowError, ValueError):
        return None
    try:
        out.madvise(mmap.MADV_HUGEPAGE)
    except OSError:
        pass             # small pages then
    reader = decompressor.stream_reader(payload, read_across_frames=False)
    with memoryview(out) as view:
        filled = 0
        while filled < size:
            got = reader.readinto(view[filled:])
            if not got:
                break
            filled += got
    reader.close()
    return out, filled


class _InflatedWhole:
    """The reads of ``_InflateStream`` over a zstd frame inflated in one call.

    For a single-segment frame (the bundler's: window size = content size) a
    stream needs a window as large as the whole output *and* a copy of each
    entry it hands out, so a one-call inflate into one buffer, with entries as
    views of it, holds half as much: rocBLAS 7.2.4's largest Tensile file
    inflates to 104 MB."""

    def __init__(self, payload: memoryview, header: CompressedHeader, where: str, verify_hash: bool):
        self.where = where
        self.limit = header.uncompressed_size
        self.produced = 0
        try:
            decompressor = _zstd_decompressor()
            out: bytes | mmap.mmap
            mapped = _inflate_into_huge_pages(decompressor, payload, self.limit) \
                if self.limit >= _HUGE_PAGES_FROM and _huge_pages() else None
            if mapped is not None:
                out, produced = mapped
            else:
                out = decompressor.decompress(payload, max_output_size=self.limit)
                produced = len(out)
        except zstandard.ZstdError as exc:
            raise InputError(f"zstd stream is corrupt ({exc})", container=where) from None
        _give_back(decompressor, 0)
        if produced != self.limit:
            raise InputError(f"declared uncompressed size {self.limit} but the stream holds {produced} bytes",
                             container=where, offset=0)
        self.data = memoryview(out)
        self.digest = int.from_bytes(hashlib.md5(out).digest()[:8], "little") if verify_hash else None

    def read(self, size: int) -> memoryview:
        if self.produced + size > self.limit:
            raise InputError(f"bundle entries run past the declared uncompressed size {self.limit}",
                             container=self.where)
        piece = self.data[self.produced:self.produced + size]
        self.produced += size
        return piece

    def skip(self, size: int) -> None:
        self.read(size)

    def finish(self, expected_hash: int, hash_offset: int) -> None:
        if self.digest is not None and self.digest != expected_hash:
            raise InputError(f"hash mismatch: header says {expected_hash:#018x}, content hashes to "
                             f"{self.digest:#018x}", container=self.where, offset=hash_offset)


def _inflater(payload: memoryview, header: CompressedHeader, where: str,
              verify_hash: bool) -> "_InflateStream | _InflatedWhole":
    """A stream, or the whole output when the frame's window would be the
    whole output anyway (single segment)."""
    if header.method != "zstd":
        return _InflateStream(payload, header, where, verify_hash)
    try:
        params = zstandard.get_frame_parameters(payload)
    except zstandard.ZstdError as exc:
        raise InputError(f"zstd frame header is corrupt ({exc})", container=where) from None
    if params.content_size in (zstandard.CONTENTSIZE_UNKNOWN, zstandard.CONTENTSIZE_ERROR):
        return _InflateStream(payload, header, where, verify_hash, params.window_size)
    if params.content_size != header.uncompressed_size:
        raise InputError(f"declared uncompressed size {header.uncompressed_size} but the zstd frame declares "
                         f"{params.content_size} bytes", container=where, offset=0)
    if params.window_size >= params.content_size:
        return _InflatedWhole(payload, header, where, verify_hash)
    return _InflateStream(payload, header, where, verify_hash, params.window_size)


class _InflateStream:
    """Sequential reads from a compressed payload, with the size of everything
    produced (and, when asked, its MD5) kept for the final check.  ``window``:
    a zstd frame's window size (its header checked by _inflater)."""

    def __init__(self, payload: memoryview, header: CompressedHeader, where: str, verify_hash: bool = False,
                 window: int = 0):
        self.where = where
        self.limit = header.uncompressed_size
        self.produced = 0
        self.md5 = hashlib.md5() if verify_hash else None
        self.method = header.method
        if header.method == "zstd":
            self._decompressor = _zstd_decompressor()
            self._window = window
            self._reader = self._decompressor.stream_reader(payload, read_across_frames=False)
        else:
            self._zlib = zlib.decompressobj()
            self._input = payload
            self._used = 0
            self._pending = b""

    def _zlib_read(self, size: int) -> bytes:
        pieces, got = [], 0
        if self._pending:
            piece, self._pending = self._pending[:size], self._pending[size:]
            pieces.append(piece)
            got = len(piece)
        while got < size and not self._zlib.eof:
            if self._zlib.unconsumed_tail:
                source = self._zlib.unconsumed_tail
            elif self._used < len(self._input):
                source = self._input[self._used:self._used + (1 << 20)]  # type: ignore[assignment]  # bytes-like
                self._used += len(source)
            else:
                break
            piece = self._zlib.decompress(source, size - got)
            pieces.append(piece)
            got += len(piece)
        return b"".join(pieces)

    def read(self, size: int) -> bytes:
        """Exactly ``size`` bytes, or an InputError when the stream ends first."""
        if self.produced + size > self.limit:
            raise InputError(f"bundle entries run past the declared uncompressed size {self.limit}",
                             container=self.where)
        try:
            if self.method == "zstd":
                out = self._reader.read(size)
                while len(out) < size:
                    more = self._reader.read(size - len(out))
                    if not more:
                        break
                    out += more
            else:
                out = self._zlib_read(size)
        except (zstandard.ZstdError, zlib.error) as exc:
            raise InputError(f"{self.method} stream is corrupt ({exc})", container=self.where) from None
        if len(out) != size:
            raise InputError(f"declared uncompressed size {self.limit} but the stream holds "
                             f"{self.produced + len(out)} bytes", container=self.where, offset=0)
        self.produced += size
        if self.md5 is not None:
            self.md5.update(out)
        return out

    def skip(self, size: int) -> None:
        while size > 0:
            step = min(size, 1 << 22)
            self.read(step)
            size -= step

    def finish(self, expected_hash: int, hash_offset: int) -> None:
        """Read what is left, then check the size and (when asked) the hash."""
        self.skip(self.limit - self.produced)
        try:
            if self.method == "zstd":
                extra = self._reader.read(1)
            else:
                extra = self._zlib_read(1)
                if not extra and not self._zlib.eof:
                    raise InputError("zlib stream is truncated", container=self.where)
        except (zstandard.ZstdError, zlib.error) as exc:
            raise InputError(f"{self.method} stream is corrupt ({exc})", container=self.where) from None
        if extra:
            raise InputError(f"declared uncompressed size {self.limit} but the stream holds more",
                             container=self.where, offset=0)
        if self.method == "zstd":
            _give_back(self._decompressor, self._window)
        if self.md5 is None:
            return
        digest = int.from_bytes(self.md5.digest()[:8], "little")
        if digest != expected_hash:
            raise InputError(f"hash mismatch: header says {expected_hash:#018x}, content hashes to "
                             f"{digest:#018x}", container=self.where, offset=hash_offset)


def iter_compressed_entries(pending: PendingBundle, wanted=lambda kind, triple: True, *,
                            verify_hash: bool = False):
    """Inflate ``pending`` as a stream; yield its entries one at a time, each
    with its own payload (a fresh ``bytes``), in the order they are stored.
    Entries ``wanted`` rejects are skipped, not kept.  The size (and, with
    ``verify_hash``, the hash) is checked once the stream has been read to its
    end, so a caller must exhaust the iterator (a bad hash is raised after
    the entries).

    The hash is not checked by default, as LLVM does not: clang-offload-bundler
    and llvm/Object/OffloadBundle recompute it only in verbose mode, and only
    to print whether it matches.  It is the MD5 of every inflated byte, a
    third of the time spent on a compressed ROCm library; the exact
    decompressed size is always checked, and zlib carries its own checksum.

    Bundles whose entries overlap or are out of order (the bundler never
    writes them) are inflated whole, within the declared size."""
    header = pending.header
    where = f"CCOB bundle v{header.version} ({header.method})"
    payload = pending.data[header.header_size:pending.size]
    stream = _inflater(payload, header, where, verify_hash)
    inner = "inflated bundle"
    head = stream.read(min(32, header.uncompressed_size))
    if len(head) < 32 or head[:24] != UNCOMPRESSED_MAGIC:
        raise InputError("not an offload bundle (bad magic)", container=f"{where} > {inner}", offset=0)
    (count,) = struct.unpack_from("<Q", head, 24)
    size = header.uncompressed_size
    if count > (size - 32) // 24:
        raise InputError(f"bundle header claims {count} entries, more than fit in {size} bytes",
                         container=f"{where} > {inner}", offset=24)
    raw = []
    for _ in range(count):
        position = stream.produced
        entry_offset, entry_size, id_len = struct.unpack("<QQQ", stream.read(24))
        if id_len > 4096 or stream.produced + id_len > size:
            raise InputError(f"entry ID length {id_len} runs past the data", container=f"{where} > {inner}",
                             offset=position + 16)
        try:
            entry_id = bytes(stream.read(id_len)).decode("ascii")
        except UnicodeDecodeError:
            raise InputError("entry ID is not ASCII", container=f"{where} > {inner}",
                             offset=position + 24) from None
        if entry_offset + entry_size > size:
            raise InputError(f"entry {entry_id!r} (offset {entry_offset:#x}, size {entry_size}) runs past "
                             f"the end of the data ({size} bytes)", container=f"{where} > {inner}",
                             offset=position)
        raw.append((entry_offset, entry_size, entry_id))
    ordered = sorted(raw)
    sequential = all(ordered[i][0] + ordered[i][1] <= ordered[i + 1][0] for i in range(len(ordered) - 1)) \
        and (not ordered or ordered[0][0] >= stream.produced)
    if sequential:
        for entry_offset, entry_size, entry_id in ordered:
            kind, triple, target_id = split_entry_id(entry_id)
            if not entry_size or not wanted(kind, triple):
                continue
            stream.skip(entry_offset - stream.produced)
            body = stream.read(entry_size)
            yield BundleEntry(entry_id, kind, triple, target_id, memoryview(body), entry_offset)
            del body
        stream.finish(header.hash, header.header_size - 8)
        return
    # Overlapping or unordered entries: inflate the rest whole.
    rest = stream.read(size - stream.produced)
    stream.finish(header.hash, header.header_size - 8)
    if isinstance(stream, _InflatedWhole):
        whole = stream.data
    else:
        table = b"".join(struct.pack("<QQQ", o, s, len(i)) + i.encode() for o, s, i in raw)
        whole = memoryview(bytes(head) + table + bytes(rest))
    for entry_offset, entry_size, entry_id in raw:
        kind, triple, target_id = split_entry_id(entry_id)
        if entry_size and wanted(kind, triple):
            yield BundleEntry(entry_id, kind, triple, target_id, whole[entry_offset:entry_offset + entry_size],
                              entry_offset)
