"""ROCm kpack: device code split out of host binaries into ``.kpack`` archives.

Facts from ROCm/TheRock ``docs/rfcs/RFC0008-Multi-Arch-Packaging.md`` and
ROCm/rocm-kpack's documents (``docs/multi_arch_packaging_with_kpack.md``,
``docs/tutorial_split_artifacts.md``), checked against archives its splitter
(``python/rocm_kpack/tools/split_artifacts.py``) wrote here; this reader is
written from those facts, not from its code.

* Archive: 16-byte header (``KPAK``, u32 version 1, u64 offset of the table
  of contents), blobs from offset 64, then the TOC: a msgpack map with
  ``format_version``, ``group_name``, ``gfx_arch_family``, ``gfx_arches``,
  ``compression_scheme`` and ``toc`` = {binary key: {arch: {"type": "hsaco",
  "ordinal": n, "original_size": bytes}}}.  The binary key is the host
  binary's ``kernel_name`` plus ``#<code object index>`` (the index of its
  translation unit's bundle).  Scheme ``none``: ``blobs`` = [{"offset",
  "size"}] by ordinal, offsets from the file start.  Scheme
  ``zstd-per-kernel``: ``zstd_offset``/``zstd_size`` delimit u32 count, then
  per kernel a u32 frame size and one zstd frame.
* Split host binary: ``.hip_fatbin`` is NOBITS or zeroed, the
  ``.hipFatBinSegment`` wrappers say ``HIPK`` instead of ``HIPF`` (their last
  field holds the code object index), and ``.rocm_kpack_ref`` holds a msgpack
  map {"kernel_name": str, "kpack_search_paths": [str]}; search paths are
  relative to the binary's folder and ``@GFXARCH@`` stands for the
  architecture.  What the tools write: ``("../" * depth) + ".kpack/" +
  group + "_@GFXARCH@.kpack"``, depth being the binary's below the install
  prefix (rocm-kpack ``artifact_splitter.py``, ``packing_visitor.py``
  ``_compute_kpack_search_pattern``; the runtime's ``loader.cpp`` replaces
  @GFXARCH@ by each architecture the device asks for, never a wildcard).
* Manifest ``.kpm``: msgpack {"format_version": 1, "component_name",
  "prefix", "kpack_files": {arch: {"file", "size", "kernel_count"}}}, files
  next to the manifest.

The parsers are pure functions over memoryviews; ``find_archives`` is the one
place that looks at the file system.  msgpack is decoded by msgspec, which
checks every length against the bytes left before it builds anything.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

import msgspec

from spillway.errors import InputError
from spillway.formats.walk import advance
from spillway.formats import bundles
from spillway.resources.targets import MACH_TO_PROCESSOR

MAGIC = b"KPAK"
HEADER_SIZE = 16
SUPPORTED_VERSION = 1
REF_SECTION = ".rocm_kpack_ref"
WRAPPER_SECTION = ".hipFatBinSegment"
# u32 magics as stored (little-endian): 0x48495046 ("HIPF") reads FPIH, 0x4B504948 ("HIPK") reads HIPK
HIPF, HIPK = b"FPIH", b"HIPK"
GFXARCH = "@GFXARCH@"
ARCHIVE_SUFFIX = ".kpack"
MANIFEST_SUFFIX = ".kpm"
SCHEMES = ("none", "zstd-per-kernel")

# A marker's search paths come from the binary, so they are untrusted: each
# must be a relative path to a .kpack file in the form the tools write (see
# search_path_refusal), and @GFXARCH@ is replaced by each processor LLVM
# names, as the runtime replaces it by the device's: no wildcard, so at most
# MAX_SEARCH_PATHS x len(ARCHITECTURES) = 16 x 64 = 1,024 files are looked
# at (a stat each).  Real markers hold one or two paths, climbing one to a
# few folders (ROCm wheels: lib/ or lib/<library>/).
MAX_SEARCH_PATHS = 16
MAX_PARENT_STEPS = 16
MAX_SEARCH_PATH_LENGTH = 1024
ARCHITECTURES = tuple(sorted(name for name in MACH_TO_PROCESSOR.values() if name.startswith("gfx")))


@dataclass(frozen=True)
class Entry:
    key: str                 # TOC key, e.g. stage/lib/libfoo.so#0
    binary: str              # the key without #index
    index: int | None        # code object (translation unit) index
    arch: str
    ordinal: int
    original_size: int


@dataclass
class Archive:
    version: int
    group_name: str
    gfx_arch_family: str
    gfx_arches: list[str]
    scheme: str
    entries: list[Entry]
    blobs: list[tuple[int, int]]          # (offset, size) per ordinal, in the file

    def for_binary(self, kernel_name: str) -> list[Entry]:
        return [entry for entry in self.entries if entry.binary == kernel_name]


@dataclass(frozen=True)
class Reference:
    kernel_name: str
    search_paths: list[str]


@dataclass(frozen=True)
class ManifestFile:
    arch: str
    file: str
    size: int
    kernel_count: int


@dataclass
class Manifest:
    component_name: str
    prefix: str
    files: list[ManifestFile] = field(default_factory=list)


_DECODER = msgspec.msgpack.Decoder()


def _unpack(data: memoryview | bytes, what: str, container: str, offset: int):
    try:
        return _DECODER.decode(data)
    except msgspec.DecodeError as exc:
        reason = str(exc).replace("MessagePack data is malformed: ", "")
        if reason.startswith("trailing characters"):
            raise InputError(f"{what}: bytes after the msgpack document", container=container,
                             offset=offset) from None
        raise InputError(f"{what} is not valid msgpack ({reason[:1].lower() + reason[1:]})", container=container,
                         offset=offset) from None
    except RecursionError:
        raise InputError(f"{what} is not valid msgpack (nested deeper than the decoder reads)",
                         container=container, offset=offset) from None


def _int(value, what: str, container: str, offset: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(f"{what} is {value!r}, not a size", container=container, offset=offset)
    return value


def _str(value, what: str, container: str, offset: int) -> str:
    if not isinstance(value, str):
        raise InputError(f"{what} is {type(value).__name__}, not a string", container=container, offset=offset)
    return value


def split_key(key: str) -> tuple[str, int | None]:
    binary, hash_sign, index = key.rpartition("#")
    if hash_sign and index.isdigit():
        return binary, int(index)
    return key, None


# -- archives -----------------------------------------------------------------------------------

_ARCHIVE = "kpack archive"                         # how errors name the archive, and its TOC
_TOC = f"{_ARCHIVE} table of contents"


def parse_archive(data: memoryview) -> Archive:
    """Header, TOC and blob table of a .kpack file; every blob is checked to
    lie between the header and the TOC.  Raises InputError."""
    container = _ARCHIVE
    if len(data) < HEADER_SIZE:
        raise InputError(f"truncated header ({len(data)} bytes)", container=container, offset=0)
    magic, version, toc_at = struct.unpack_from("<4sIQ", data, 0)
    if magic != MAGIC:
        raise InputError(f"bad magic {magic!r}", container=container, offset=0)
    if version != SUPPORTED_VERSION:
        raise InputError(f"unsupported kpack version {version} (spillway reads 1)", container=container, offset=4)
    if toc_at < HEADER_SIZE or toc_at >= len(data):
        raise InputError(f"table of contents offset {toc_at:#x} outside the archive ({len(data)} bytes)",
                         container=container, offset=8)
    toc = _unpack(data[toc_at:], "table of contents", container, toc_at)
    where = _TOC
    if not isinstance(toc, dict):
        raise InputError("table of contents is not a map", container=where, offset=toc_at)
    scheme = toc.get("compression_scheme")
    if scheme not in SCHEMES:
        raise InputError(f"unknown compression_scheme {scheme!r} (spillway reads {', '.join(SCHEMES)})",
                         container=where, offset=toc_at)
    if toc.get("format_version", version) != SUPPORTED_VERSION:
        raise InputError(f"format_version {toc.get('format_version')!r}", container=where, offset=toc_at)
    table = toc.get("toc")
    if not isinstance(table, dict):
        raise InputError("no \"toc\" map", container=where, offset=toc_at)
    blobs = _blobs(data, toc, scheme, toc_at)
    entries = _entries(table, blobs, scheme, toc_at)
    arches = toc.get("gfx_arches") or []
    return Archive(version, str(toc.get("group_name", "")), str(toc.get("gfx_arch_family", "")),
                   [a for a in arches if isinstance(a, str)] if isinstance(arches, list) else [],
                   scheme, entries, blobs)


def _blobs(data: memoryview, toc: dict, scheme: str, toc_at: int) -> list[tuple[int, int]]:
    """(offset, size) of each blob the TOC lists (scheme none), or of each zstd
    frame of its one zstd blob; each between the header and the TOC."""
    container, where = _ARCHIVE, _TOC

    def inside(offset: int, size: int, what: str) -> None:
        if offset < HEADER_SIZE or offset + size > toc_at:
            raise InputError(f"{what} (offset {offset:#x}, size {size}) points outside the archive's data "
                             f"({HEADER_SIZE:#x}..{toc_at:#x})", container=where, offset=toc_at)

    blobs: list[tuple[int, int]] = []
    if scheme == "none":
        raw = toc.get("blobs")
        if not isinstance(raw, list):
            raise InputError("scheme none without a \"blobs\" list", container=where, offset=toc_at)
        for number, blob in enumerate(raw):
            if not isinstance(blob, dict):
                raise InputError(f"blob {number} is not a map", container=where, offset=toc_at)
            offset = _int(blob.get("offset"), f"blob {number} offset", where, toc_at)
            size = _int(blob.get("size"), f"blob {number} size", where, toc_at)
            inside(offset, size, f"blob {number}")
            blobs.append((offset, size))
        return blobs
    start = _int(toc.get("zstd_offset"), "zstd_offset", where, toc_at)
    size = _int(toc.get("zstd_size"), "zstd_size", where, toc_at)
    inside(start, size, "zstd blob")
    if size < 4:
        raise InputError(f"zstd blob of {size} bytes has no frame count", container=container, offset=start)
    (count,) = struct.unpack_from("<I", data, start)
    position, end = start + 4, start + size
    for number in range(count):
        if position + 4 > end:
            raise InputError(f"zstd blob claims {count} frames, frame {number} runs past its end",
                             container=container, offset=position)
        (frame_size,) = struct.unpack_from("<I", data, position)
        if position + 4 + frame_size > end:
            raise InputError(f"frame {number} ({frame_size} bytes) runs past the zstd blob "
                             f"(ends at {end:#x})", container=container, offset=position)
        blobs.append((position + 4, frame_size))
        position = advance(position, position + 4 + frame_size, container=container, what="frame")
    return blobs


def _entries(table: dict, blobs: list[tuple[int, int]], scheme: str, toc_at: int) -> list[Entry]:
    """The TOC's map of binary keys to architectures, an Entry each, its
    ordinal among ``blobs``."""
    where = _TOC
    entries = []
    for key, arches in table.items():
        key = _str(key, "binary key", where, toc_at)
        if not isinstance(arches, dict):
            raise InputError(f"entry {key!r} is not a map of architectures", container=where, offset=toc_at)
        binary, index = split_key(key)
        for arch, item in arches.items():
            arch = _str(arch, f"architecture of {key!r}", where, toc_at)
            if not isinstance(item, dict):
                raise InputError(f"{key!r} {arch} is not a map", container=where, offset=toc_at)
            ordinal = _int(item.get("ordinal"), f"{key!r} {arch} ordinal", where, toc_at)
            if ordinal >= len(blobs):
                raise InputError(f"{key!r} {arch}: ordinal {ordinal} points outside the {len(blobs)} blobs",
                                 container=where, offset=toc_at)
            original = item.get("original_size")
            original = blobs[ordinal][1] if original is None and scheme == "none" else original
            original = _int(original, f"{key!r} {arch} original_size", where, toc_at)
            entries.append(Entry(key, binary, index, arch, ordinal, original))
    return entries


def code_object(data: memoryview, archive: Archive, entry: Entry, *, max_decompressed: int
                ) -> tuple[memoryview, int | None]:
    """One entry's code object and its offset in the archive (None when it
    was inflated).  Sizes are checked against the TOC."""
    offset, size = archive.blobs[entry.ordinal]
    where = f"kpack archive entry {entry.key} {entry.arch}"
    if archive.scheme == "none":
        if size != entry.original_size:
            raise InputError(f"blob is {size} bytes, the table of contents says {entry.original_size}",
                             container=where, offset=offset)
        return data[offset:offset + size], offset
    if entry.original_size > max_decompressed:
        raise InputError(f"original_size {entry.original_size} is above the cap {max_decompressed}",
                         container=where, offset=offset)
    try:
        out, _ = bundles.inflate_zstd(data[offset:offset + size], entry.original_size, "zstd frame",
                                      need_end=False)
    except InputError as exc:
        raise exc.within(where, offset) from None
    if len(out) != entry.original_size:
        raise InputError(f"zstd frame inflates to {len(out)} bytes, the table of contents says "
                         f"{entry.original_size}", container=where, offset=offset)
    return memoryview(out), None


# -- split host binaries ------------------------------------------------------------------------

def parse_reference(data: memoryview, offset: int) -> Reference:
    container = f"section {REF_SECTION}"
    marker = _unpack(data, "marker", container, offset)
    if not isinstance(marker, dict):
        raise InputError("marker is not a map", container=container, offset=offset)
    kernel_name = _str(marker.get("kernel_name"), "kernel_name", container, offset)
    paths = marker.get("kpack_search_paths")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise InputError("kpack_search_paths is not a list of strings", container=container, offset=offset)
    return Reference(kernel_name, paths)


def marker_refusal(reference: Reference) -> str | None:
    """Why the marker's search paths are not followed (the first refused
    one, or too many of them), or None."""
    paths = reference.search_paths
    if len(paths) > MAX_SEARCH_PATHS:
        return f"{len(paths)} kpack search paths, more than the {MAX_SEARCH_PATHS} spillway follows"
    for path in paths:
        refusal = search_path_refusal(path)
        if refusal:
            return f"kpack search path {path[:200]!r}{'...' if len(path) > 200 else ''} refused: {refusal}"
    return None


def search_path_refusal(path: str) -> str | None:
    """Why a marker's search path is not followed, or None: it must be
    relative (no /, ~ or backslash), printable, without glob characters, name
    a .kpack file, hold @GFXARCH@ at most once, and climb only at its start
    (at most MAX_PARENT_STEPS ``..``) and then only into a ``.kpack`` folder,
    as the tools write it (``../../.kpack/blas_lib_@GFXARCH@.kpack``)."""
    if not path:
        return "empty"
    if len(path) > MAX_SEARCH_PATH_LENGTH:
        return f"longer than {MAX_SEARCH_PATH_LENGTH} characters"
    if not path.isprintable():
        return "holds a control or formatting character"
    if path.startswith("/"):
        return "an absolute path"
    for character, what in (("~", "a ~ (home folder)"), ("\\", "a backslash"), ("*", "a glob character *"),
                            ("?", "a glob character ?"), ("[", "a glob character ["), ("]", "a glob character ]")):
        if character in path:
            return f"holds {what}"
    if path.count(GFXARCH) > 1:
        return f"holds {GFXARCH} more than once"
    parts = [part for part in path.split("/") if part not in ("", ".")]
    climbs = 0
    while climbs < len(parts) and parts[climbs] == "..":
        climbs += 1
    if ".." in parts[climbs:]:
        return "climbs with .. after a folder name"
    if climbs > MAX_PARENT_STEPS:
        return f"climbs {climbs} folders (at most {MAX_PARENT_STEPS})"
    if climbs and (len(parts) < climbs + 2 or parts[climbs] != ".kpack"):
        return "climbs with .. into a folder other than .kpack"
    if not parts or not parts[-1].endswith(ARCHIVE_SUFFIX) or parts[-1] == ARCHIVE_SUFFIX:
        return f"does not name a {ARCHIVE_SUFFIX} file"
    return None


def parse_wrappers(data: memoryview, offset: int) -> list[tuple[bytes, int]]:
    """(magic, code object index) of each 24-byte __CudaFatBinaryWrapper."""
    if len(data) % 24:
        raise InputError(f"{len(data)} bytes is not a whole number of 24-byte wrappers",
                         container=f"section {WRAPPER_SECTION}", offset=offset)
    return [(magic, index & 0xFFFFFFFF) for magic, _version, _pointer, index in
            struct.iter_unpack("<4sIQQ", data)]


def search_patterns(reference: Reference, host_path: str) -> list[str]:
    """Where the runtime would look, relative to the binary's folder (the
    paths were checked by parse_reference)."""
    base = os.path.dirname(host_path)
    return [os.path.normpath(os.path.join(base, p)) for p in reference.search_paths]


def candidates(pattern: str) -> list[str]:
    """The files a search pattern names: @GFXARCH@ replaced by each known
    processor (ARCHITECTURES), as the runtime replaces it by the device's."""
    if GFXARCH not in pattern:
        return [pattern]
    return [pattern.replace(GFXARCH, arch) for arch in ARCHITECTURES]


def find_archives(patterns: list[str], extra: tuple[str, ...] = ()) -> list[str]:
    """Archives the patterns name (candidates), then the archives named on
    the command line (files, .kpm manifests for the archives they list, or
    folders searched for *.kpack).  Sorted per pattern, without duplicates."""
    found: list[str] = []
    for pattern in patterns:
        found.extend(sorted(path for path in candidates(pattern) if os.path.isfile(path)))
    for path in extra:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(ARCHIVE_SUFFIX))
        elif path.endswith(MANIFEST_SUFFIX):
            try:
                with open(path, "rb") as handle:
                    manifest = parse_manifest(memoryview(handle.read()))
            except OSError as exc:
                raise InputError(f"cannot read: {exc.strerror}", file=path) from None
            except InputError as exc:
                exc.file = path
                raise
            found.extend(os.path.join(os.path.dirname(path), item.file) for item in manifest.files)
        else:
            found.append(path)
    seen, out = set(), []
    for path in found:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            out.append(path)
    return out


# -- manifests ----------------------------------------------------------------------------------

def parse_manifest(data: memoryview) -> Manifest:
    container = "kpack manifest"
    document = _unpack(data, "manifest", container, 0)
    if not isinstance(document, dict):
        raise InputError("manifest is not a map", container=container, offset=0)
    if document.get("format_version") != 1:
        raise InputError(f"format_version {document.get('format_version')!r} (spillway reads 1)",
                         container=container, offset=0)
    files = document.get("kpack_files")
    if not isinstance(files, dict):
        raise InputError("no \"kpack_files\" map", container=container, offset=0)
    manifest = Manifest(str(document.get("component_name", "")), str(document.get("prefix", "")))
    for arch, item in files.items():
        arch = _str(arch, "architecture", container, 0)
        if not isinstance(item, dict):
            raise InputError(f"kpack_files[{arch!r}] is not a map", container=container, offset=0)
        name = _str(item.get("file"), f"kpack_files[{arch!r}].file", container, 0)
        parts = name.replace("\\", "/").split("/")
        if os.path.isabs(name) or ".." in parts or not name:
            raise InputError(f"kpack_files[{arch!r}] names {name!r}, outside the manifest's folder",
                             container=container, offset=0)
        manifest.files.append(ManifestFile(arch, name, _int(item.get("size"), f"{arch} size", container, 0),
                                           _int(item.get("kernel_count"), f"{arch} kernel_count", container, 0)))
    return manifest


def check_manifest_file(item: ManifestFile, archive: Archive, actual_size: int) -> None:
    """The manifest's size and kernel count for one architecture must be the
    archive's (raises InputError naming the manifest entry)."""
    container = f"kpack manifest entry {item.arch}"
    if actual_size != item.size:
        raise InputError(f"{item.file} is {actual_size} bytes, the manifest says {item.size}",
                         container=container)
    count = sum(1 for entry in archive.entries if entry.arch == item.arch)
    if count != item.kernel_count:
        raise InputError(f"{item.file} holds {count} code objects for {item.arch}, the manifest says "
                         f"{item.kernel_count}", container=container)


# -- reading archives for a caller that owns the file system ------------------------------------

@dataclass(frozen=True)
class KpackImage:
    archive: str             # path of the .kpack file
    entry: Entry
    payload: memoryview
    offset: int | None       # in the archive, when stored uncompressed


def _load_archive(path: str, load, display: str | None = None) -> tuple[memoryview, Archive]:
    try:
        data = load(path)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=display or path) from None
    try:
        return data, parse_archive(data)
    except InputError as exc:
        exc.file = display or path
        raise


def _images(path: str, data: memoryview, archive: Archive, entries: list[Entry], max_decompressed: int
            ) -> list[KpackImage]:
    out = []
    for entry in entries:
        try:
            payload, offset = code_object(data, archive, entry, max_decompressed=max_decompressed)
        except InputError as exc:
            exc.file = path
            raise
        out.append(KpackImage(path, entry, payload, offset))
    return out


def read_archive(path: str, load, *, max_decompressed: int, display: str | None = None,
                 skip: frozenset = frozenset()) -> list[KpackImage]:
    """Every code object of one archive, except (realpath, key, arch) in ``skip``."""
    data, archive = _load_archive(path, load, display)
    real = os.path.realpath(path)
    wanted = [e for e in archive.entries if (real, e.key, e.arch) not in skip]
    return _images(display or path, data, archive, wanted, max_decompressed)


def read_for_binary(reference: Reference, indexes: set[int], host_path: str | None, host_name: str,
                    extra: tuple[str, ...], load, *, max_decompressed: int) -> list[KpackImage]:
    """The code objects of a split host binary, from the archives its
    search paths lead to (or the ones named on the command line).  No
    archive, or no code object for this binary in them: InputError naming
    what was looked for.  A marker with a refused search path
    (marker_refusal) is InputError before any file is looked at, or not
    followed at all when archives are named (``extra``: --kpack)."""
    container = f"section {REF_SECTION}"
    refusal = marker_refusal(reference)
    if refusal and not extra:
        raise InputError(f"split binary (kpack): {refusal}; name its archives with --kpack", file=host_name,
                         container=container)
    patterns = search_patterns(reference, host_path) if host_path and not refusal else []
    archives = find_archives(patterns, extra)
    looked = patterns + list(extra)
    if not archives:
        where = ", ".join(looked) if looked else "nothing (the binary is inside an archive, so its search " \
                                                 "paths have no folder)"
        raise InputError(f"split binary (kpack): its device code for {reference.kernel_name!r} is in .kpack "
                         f"archives and none was found; looked for {where}; name them with --kpack",
                         file=host_name, container=container)
    out = []
    for path in archives:
        data, archive = _load_archive(path, load)
        entries = [e for e in archive.for_binary(reference.kernel_name)
                   if not indexes or e.index is None or e.index in indexes]
        out.extend(_images(path, data, archive, entries, max_decompressed))
    if not out:
        raise InputError(f"split binary (kpack): the archives found ({', '.join(archives)}) hold no code "
                         f"objects for {reference.kernel_name!r}", file=host_name, container=container)
    return out


def read_manifest(path: str, load, *, max_decompressed: int) -> list[KpackImage]:
    """The archives a .kpm manifest lists (next to it), checked against its
    sizes and kernel counts; the code objects of each listed architecture."""
    try:
        manifest = parse_manifest(load(path))
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None
    except InputError as exc:
        exc.file = path
        raise
    folder = os.path.dirname(path)
    loaded: dict[str, tuple[memoryview, Archive]] = {}
    out = []
    for item in manifest.files:
        archive_path = os.path.join(folder, item.file)
        if not os.path.isfile(archive_path):
            raise InputError(f"lists {item.file} for {item.arch}, which is not there (looked for {archive_path})",
                             file=path, container="kpack manifest")
        if archive_path not in loaded:
            loaded[archive_path] = _load_archive(archive_path, load)
        data, archive = loaded[archive_path]
        try:
            check_manifest_file(item, archive, len(data))
        except InputError as exc:
            exc.file = path
            raise
        out.extend(_images(archive_path, data, archive, [e for e in archive.entries if e.arch == item.arch],
                           max_decompressed))
    return out
