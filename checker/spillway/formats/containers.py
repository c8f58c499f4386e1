"""Where device code lives: host ELF files, ``ar`` archives, wheels, bundle
files, bare code objects and directories.

``scan`` turns one path into the device images it holds (AMDGPU code
objects, still unparsed) plus what it saw on the way: bitcode-only entries
and members without device code.  Files are mapped, not read.
"""

from __future__ import annotations

import lzma
import mmap
import os
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass, field

from spillway.formats import bundles, embedded, kpack, offload_binary
from spillway.formats.ar import AR_MAGIC, THIN_AR_MAGIC, iter_ar_members
from spillway.formats.codeobject import is_amdgpu_elf
from spillway.formats.elf import SHT_NOBITS, ElfImage, is_elf64_le
from spillway.errors import InputError, NoDeviceCode
from spillway import paths

ZIP_MAGIC = b"PK\x03\x04"
RDC_SECTION_PREFIX = "__CLANG_OFFLOAD_BUNDLE__"
MAX_NESTING = 4


@dataclass(frozen=True)
class DeviceImage:
    """An AMDGPU code object found somewhere, not yet parsed."""

    file: str                 # display path; archive members as lib.a(k.o), wheel entries as x.whl!lib/y.so
    container: str            # how it was found, for messages
    bundle_index: int | None  # index of the bundle in its .hip_fatbin (one per translation unit)
    entry_id: str
    payload: memoryview
    offset: int | None        # of the payload in the file, when it is stored uncompressed
    image_offset: int | None = None  # of a code object embedded as data, in its host file (--scan-embedded)
    archive: str | None = None       # the .kpack archive it came from


@dataclass(frozen=True)
class PendingImages:
    """A compressed bundle found by the scan and not yet inflated: its code
    objects are inflated and parsed later, one at a time, by ``expand`` (in
    whichever worker reads it), so a library's decompressed size is never
    held in memory at once."""

    file: str
    container: str            # the bundle stream it is in (".hip_fatbin", "bundle file")
    bundle: bundles.PendingBundle
    max_decompressed: int
    verify_hash: bool = False

    @property
    def payload(self) -> memoryview:     # the compressed bytes (progress counts them)
        return self.bundle.data

    @property
    def bundle_index(self) -> int:
        return self.bundle.index


@dataclass
class ScanResult:
    images: list[DeviceImage | PendingImages] = field(default_factory=list)  # pending: compressed, read later
    bitcode_only: list[str] = field(default_factory=list)      # "file: where"
    skipped: list[str] = field(default_factory=list)           # members without device code
    bundles: int = 0
    spirv_entries: int = 0
    kind: str = "unknown"     # what the top-level path was
    files_read: int = 0
    embedded_not_read: int = 0   # code objects embedded as data in files without offload sections
    embedded_files: int = 0      # ... and how many files hold them
    kpack_read: set = field(default_factory=set)   # (archive realpath, key, arch) read through a host binary

    def merge(self, other: "ScanResult") -> None:
        self.images.extend(other.images)
        self.bitcode_only.extend(other.bitcode_only)
        self.skipped.extend(other.skipped)
        self.bundles += other.bundles
        self.spirv_entries += other.spirv_entries
        self.files_read += other.files_read
        self.embedded_not_read += other.embedded_not_read
        self.embedded_files += other.embedded_files
        self.kpack_read |= other.kpack_read

    @property
    def has_device_code(self) -> bool:
        return bool(self.images or self.bitcode_only)


# Bounded decompression (besides the per-member cap, max_decompressed): what
# one input file may inflate to in total is at least MIN_INPUT_ALLOWANCE and
# at most DEFAULT_MAX_INFLATION times its size (librocsparse1 7.2.4 inflates
# 5.3 times, 406 MB to 2.1 GB); what one run may inflate to is capped too.
DEFAULT_MAX_INFLATION = 64
MIN_INPUT_ALLOWANCE = 256 << 20
DEFAULT_MAX_DECOMPRESSED_TOTAL = 64 << 30
# Kernels one run (one side of a comparison) may read: each costs about 1.5 KB over the process
# tree, and a 5.7 MB wheel can list a million (6 bytes each, deflated; 22-30 s and 1.4-6.5 GB).
# Twice the largest library measured: librocsparse1 7.2.4, 249,970 kernels in 406 MB (the whole
# librocblas5 7.2.4 package: 227,238; the densest real file, a Tensile .co: 670 bytes per kernel).
DEFAULT_MAX_KERNELS = 500_000


class DecompressionBudget:
    """Counts the bytes a run inflates (or will inflate: compressed bundles
    are charged their declared size when found, before anything is inflated),
    per input file and per run, and the kernels the run reads
    (charge_kernels), and refuses amplification."""

    def __init__(self, max_inflation: float = DEFAULT_MAX_INFLATION,
                 max_total: int = DEFAULT_MAX_DECOMPRESSED_TOTAL, max_kernels: int = DEFAULT_MAX_KERNELS):
        self.max_inflation = max_inflation
        self.max_total = max_total
        self.max_kernels = max_kernels
        self.kernels = 0
        self.total = 0
        self.file = ""
        self.file_size = 0
        self.file_total = 0

    def begin_file(self, name: str, size: int) -> None:
        self.file, self.file_size, self.file_total = name, size, 0

    def file_limit(self) -> int:
        return max(MIN_INPUT_ALLOWANCE, int(min(self.max_inflation * self.file_size, 1 << 62)))

    def charge(self, size: int, name: str, container: str) -> None:
        self.file_total += size
        self.total += size
        limit = self.file_limit()
        if self.file_total > limit:
            raise InputError(f"its compressed contents declare {self.file_total} bytes in total, more than "
                             f"the {limit} allowed for a {self.file_size}-byte input ({self.max_inflation:g} "
                             f"times its size, at least {MIN_INPUT_ALLOWANCE >> 20} MiB); --max-inflation "
                             f"RATIO raises it", file=name, container=container)
        if self.total > self.max_total:
            raise InputError(f"this run's compressed inputs declare {self.total} bytes in total, more than "
                             f"the limit {self.max_total} (--max-decompressed-total SIZE raises it)",
                             file=name, container=container)

    def charge_kernels(self, count: int, name: str) -> None:
        self.kernels += count
        if self.kernels > self.max_kernels:
            raise too_many_kernels(self.max_kernels, name)


def too_many_kernels(limit: int, name: str, container: str | None = None) -> InputError:
    return InputError(f"more than {limit} kernels in this run (the largest ROCm library measured holds "
                      f"249,970); --max-kernels N raises the limit", file=name, container=container)


@dataclass(frozen=True)
class ScanOptions:
    max_decompressed: int = bundles.DEFAULT_MAX_DECOMPRESSED
    scan_embedded: bool = False   # look for code objects embedded as data in host sections
    kpack_archives: tuple[str, ...] = ()   # .kpack files or folders for split host binaries (--kpack)
    budget: DecompressionBudget | None = None   # totals per input and per run; None: per-member cap only
    verify_hashes: bool = False   # check each compressed bundle's MD5 (--verify-hashes; LLVM does not)


def _is_bitcode(payload: memoryview) -> bool:
    return bytes(payload[:4]) in bundles.BITCODE_MAGICS


def _map_file(path: str) -> memoryview:
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return memoryview(b"")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    return memoryview(mapped)


# -- bundle streams ---------------------------------------------------------

def _scan_bundle_stream(data: memoryview, name: str, base: int | None, container: str,
                        options: ScanOptions) -> ScanResult:
    result = ScanResult()
    found = bundles.walk_lazy(data, max_decompressed=options.max_decompressed, container=container)
    result.bundles += len(found)
    for bundle in found:
        if isinstance(bundle, bundles.PendingBundle):
            if options.budget is not None:
                options.budget.charge(bundle.header.uncompressed_size, name, f"{container} bundle {bundle.index}")
            result.images.append(PendingImages(name, container, bundle, options.max_decompressed,
                                                options.verify_hashes))
            continue
        _add_entries(result, bundle.entries, bundle.index, name, container,
                     None if base is None else base)
    return result


def _add_entries(result: ScanResult, entries, bundle_index: int, name: str, container: str,
                 base: int | None) -> None:
    """Sort a bundle's entries into images, bitcode-only entries and SPIR-V;
    ``base`` is where the bundle's payload offsets start in the file (None:
    inflated, no file offset)."""
    for entry in entries:
        if entry.is_host or not entry.payload.nbytes:
            continue
        if entry.triple.startswith("spirv"):
            result.spirv_entries += 1
            continue
        if not entry.is_amdgcn:
            continue
        where = f"{container} bundle {bundle_index} entry {entry.entry_id}"
        if _is_bitcode(entry.payload):
            result.bitcode_only.append(f"{name}: {where}")
            continue
        offset = None if base is None else base + entry.offset
        result.images.append(DeviceImage(name, where, bundle_index, entry.entry_id, entry.payload, offset))


def expand(pending: PendingImages, result: ScanResult):
    """Inflate a pending bundle as a stream and yield its code objects one at
    a time (each dropped once the caller moves on); SPIR-V and bitcode-only
    entries are counted into ``result``.  Raises InputError (with the file
    and where in it) for a corrupt bundle; exhaust the iterator, as its size
    and hash are checked at the end."""
    bundle = pending.bundle

    def wanted(kind: str, triple: str) -> bool:
        if kind == "host":
            return False
        if triple.startswith("spirv"):
            result.spirv_entries += 1
            return False
        return triple.startswith("amdgcn")

    try:
        for entry in bundles.iter_compressed_entries(bundle, wanted, verify_hash=pending.verify_hash):
            found = ScanResult()
            _add_entries(found, (entry,), bundle.index, pending.file, pending.container, None)
            result.bitcode_only.extend(found.bitcode_only)
            yield from found.images
    except InputError as exc:
        exc.within(f"{pending.container} bundle {bundle.index}", bundle.offset, rebase=False)
        exc.file = exc.file or pending.file
        raise


# -- host ELF files ---------------------------------------------------------

def _scan_host_elf(data: memoryview, name: str, options: ScanOptions, path: str | None = None) -> ScanResult:
    result = ScanResult()
    if not is_elf64_le(data):
        # ROCm's hosts are x86-64 and aarch64 (64-bit little-endian): a 32-bit or big-endian ELF holds no HIP code.
        raise NoDeviceCode("a 32-bit or big-endian ELF (HIP device code is only in 64-bit little-endian hosts)",
                           file=name)
    try:
        sections = [(s.name, s.type, s.offset, s.size) for s in ElfImage(data, file=name, container="ELF").sections]
    except (struct.error, ValueError, IndexError, OverflowError) as exc:
        raise InputError(f"corrupt ELF structure ({exc})", file=name, container="ELF") from None

    # A binary split by rocm-kpack: .hip_fatbin is NOBITS or zeroed (bar
    # unaligned edges), the device code is in .kpack archives.
    split = {n: (o, s) for n, t, o, s in sections if n in (kpack.REF_SECTION, kpack.WRAPPER_SECTION)
             and t != SHT_NOBITS}
    if split:
        _scan_split_binary(data, name, path, split, options, result)
    kpacked = kpack.REF_SECTION in split      # its .hip_fatbin holds no bundles any more
    for section_name, section_type, offset, size in sections:
        if section_type == SHT_NOBITS or size == 0:
            continue
        is_fatbin = section_name == ".hip_fatbin"
        if is_fatbin and kpacked:
            continue
        is_rdc = section_name.startswith(RDC_SECTION_PREFIX)
        is_offloading = (section_type == offload_binary.SHT_LLVM_OFFLOADING
                         or section_name.startswith(offload_binary.SECTION_NAME))
        if not (is_fatbin or is_rdc or is_offloading):
            continue
        if offset + size > len(data):
            raise InputError(f"section {section_name} (offset {offset:#x}, size {size}) runs past the "
                             f"end of the file ({len(data)} bytes)", file=name, container="ELF",
                             offset=offset)
        content = data[offset:offset + size]
        if is_fatbin:
            try:
                result.merge(_scan_bundle_stream(content, name, offset, ".hip_fatbin", options))
            except InputError as exc:
                # Offsets inside the section become file offsets.
                exc.offset = None if exc.offset is None else exc.offset + offset
                exc.file = name
                raise
        elif is_rdc:
            entry_id = section_name[len(RDC_SECTION_PREFIX):]
            kind, triple, _target = bundles.split_entry_id(entry_id)
            if kind == "host" or not triple.startswith("amdgcn"):
                continue
            where = f"section {section_name}"
            if _is_bitcode(content):
                result.bitcode_only.append(f"{name}: {where}")
            elif is_amdgpu_elf(content):
                result.images.append(DeviceImage(name, where, None, entry_id, content, offset))
        else:
            _scan_offload_binaries(content, name, offset, section_name, options, result)
    if options.scan_embedded or not result.has_device_code:
        _scan_embedded(data, name, options, result)
    return result


def _scan_split_binary(data: memoryview, name: str, path: str | None, sections: dict, options: ScanOptions,
                       result: ScanResult) -> None:
    """HIPK wrappers and a .rocm_kpack_ref marker: read the code objects from
    the archives (records keep file = this binary, plus the archive)."""
    def content(section: str) -> tuple[memoryview, int]:
        offset, size = sections[section]
        if offset + size > len(data):
            raise InputError(f"section {section} (offset {offset:#x}, size {size}) runs past the end of the "
                             f"file ({len(data)} bytes)", file=name, container="ELF", offset=offset)
        return data[offset:offset + size], offset

    try:
        wrappers = []
        if kpack.WRAPPER_SECTION in sections:
            raw, offset = content(kpack.WRAPPER_SECTION)
            if kpack.REF_SECTION not in sections:     # an ordinary binary: only look for HIPK magics
                raw = raw[:len(raw) - len(raw) % 24]
            wrappers = kpack.parse_wrappers(raw, offset)
        hipk = {index for magic, index in wrappers if magic == kpack.HIPK}
        if kpack.REF_SECTION not in sections:
            if hipk:
                raise InputError(f"{len(hipk)} HIPK wrappers (kpack'd binary) but no {kpack.REF_SECTION} section "
                                 "saying where its archives are", container=f"section {kpack.WRAPPER_SECTION}",
                                 offset=sections[kpack.WRAPPER_SECTION][0])
            return
        reference = kpack.parse_reference(*content(kpack.REF_SECTION))
    except InputError as exc:
        exc.file = name
        raise
    found = kpack.read_for_binary(reference, hipk, path, name, options.kpack_archives, _map_file,
                                  max_decompressed=options.max_decompressed)
    for image in found:
        entry = image.entry
        where = f"kpack archive {image.archive} entry {entry.key} {entry.arch}"
        result.images.append(DeviceImage(name, where, entry.index, f"hipv4-amdgcn-amd-amdhsa--{entry.arch}",
                                         image.payload, image.offset, archive=image.archive))
        result.kpack_read.add((os.path.realpath(image.archive), entry.key, entry.arch))


def _kpack_images(found: list, result: ScanResult) -> None:
    """Code objects read from archives on their own: file = archive!binary."""
    for image in found:
        entry = image.entry
        where = f"kpack archive entry {entry.key} {entry.arch}"
        result.images.append(DeviceImage(f"{image.archive}!{entry.binary}", where, entry.index,
                                         f"hipv4-amdgcn-amd-amdhsa--{entry.arch}", image.payload, image.offset,
                                         archive=image.archive))


def _scan_offload_binaries(content: memoryview, name: str, offset: int, container: str,
                           options: ScanOptions, result: ScanResult) -> None:
    """OffloadBinary records (v1-v3) of a .llvm.offloading section or a raw file."""
    try:
        images = offload_binary.parse_section(content, max_decompressed=options.max_decompressed)
    except InputError as exc:
        exc.within(container, offset)
        exc.file = name
        raise
    for image in images:
        where = f"{container} record at {offset + image.offset:#x} entry {image.entry_index} ({image.arch or '?'})"
        if not offload_binary.is_amdgpu_triple(image.triple) or image.metadata_only:
            continue
        image_at = None if image.image_offset is None else offset + image.image_offset
        if image.image_kind == "bitcode" or _is_bitcode(image.image):
            result.bitcode_only.append(f"{name}: {where}")
        elif is_amdgpu_elf(image.image):
            result.images.append(DeviceImage(name, where, None, f"{image.triple}-{image.arch}",
                                             image.image, image_at))
        elif bundles.is_bundle_start(image.image):     # a fatbinary image: an offload bundle, walked by its sizes
            try:
                result.merge(_scan_bundle_stream(image.image, name, image_at, where, options))
            except InputError as exc:
                if image_at is not None and exc.offset is not None:
                    exc.offset += image_at
                exc.file = name
                raise


def _scan_embedded(data: memoryview, name: str, options: ScanOptions, result: ScanResult) -> None:
    """Code objects kept as data in host sections: read with --scan-embedded;
    without it, counted so that "no device code" can say they are there."""
    if bytes(data[4:6]) != b"\x02\x01":   # only 64-bit little-endian hosts
        return
    try:
        found = embedded.find_images(data)
    except InputError as exc:
        exc.file = name
        raise
    if not found:
        return
    if not options.scan_embedded:
        result.embedded_not_read += len(found)
        result.embedded_files += 1
        return
    for image in found:
        where = f"section {image.section} embedded code object at {image.offset:#x}"
        result.images.append(DeviceImage(name, where, None, "", image.payload, image.offset,
                                         image_offset=image.offset))


# -- archives: spillway.formats.ar -------------------------------------------


# -- wheels -----------------------------------------------------------------

def iter_zip_members(path: str, data: memoryview, name: str, options: ScanOptions):
    """Yield (member name, member data) of a zip file; stored members are not copied."""
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.filename:   # zipfile's is_dir() would fail with an IndexError
                    raise InputError("member with an empty name", file=name, container="zip",
                                     offset=info.header_offset)
                if info.is_dir():
                    continue
                if info.compress_type == zipfile.ZIP_STORED:
                    header = bytes(data[info.header_offset:info.header_offset + 30])
                    if len(header) < 30 or header[:4] != ZIP_MAGIC:
                        raise InputError(f"bad local header for {info.filename}", file=name,
                                         container="zip", offset=info.header_offset)
                    name_len, extra_len = struct.unpack_from("<HH", header, 26)
                    start = info.header_offset + 30 + name_len + extra_len
                    if start + info.compress_size > len(data):
                        raise InputError(f"{info.filename} runs past the end", file=name,
                                         container="zip", offset=info.header_offset)
                    yield info.filename, data[start:start + info.compress_size]
                else:
                    if info.file_size > options.max_decompressed:
                        raise InputError(f"{info.filename} declares {info.file_size} bytes, above the "
                                         f"cap {options.max_decompressed}", file=name, container="zip",
                                         offset=info.header_offset)
                    if options.budget is not None:
                        options.budget.charge(info.file_size, name, f"zip member {info.filename}")
                    with archive.open(info) as member:
                        content = member.read(options.max_decompressed + 1)
                    if len(content) > options.max_decompressed:
                        raise InputError(f"{info.filename} inflates past the cap", file=name,
                                         container="zip", offset=info.header_offset)
                    if options.budget is not None and len(content) > info.file_size:
                        options.budget.charge(len(content) - info.file_size, name,
                                              f"zip member {info.filename}")
                    yield info.filename, memoryview(content)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError,
            zlib.error, lzma.LZMAError, RuntimeError, ValueError, IndexError, struct.error) as exc:
        # zlib/lzma: a corrupt deflated member; RuntimeError: an encrypted one;
        # ValueError: names that do not decode, negative offsets.
        raise InputError(f"corrupt zip file ({exc})", file=name, container="zip") from None


# -- dispatch ---------------------------------------------------------------

def classify(data: memoryview) -> str | None:
    head = bytes(data[:24])
    if head.startswith(b"\x7fELF"):
        return "code object" if is_amdgpu_elf(data) else "ELF"
    if head.startswith(AR_MAGIC) or head.startswith(THIN_AR_MAGIC):
        return "ar archive"
    if head == bundles.UNCOMPRESSED_MAGIC or head.startswith(bundles.COMPRESSED_MAGIC):
        return "offload bundle"
    if head.startswith(ZIP_MAGIC):
        return "zip"
    if head.startswith(offload_binary.MAGIC):
        return "OffloadBinary"
    if head.startswith(kpack.MAGIC):
        return "kpack archive"
    return None


def scan_buffer(data: memoryview, name: str, options: ScanOptions, *, path: str | None = None,
                depth: int = 0) -> ScanResult:
    """Scan one file's bytes.  Raises NoDeviceCode when nothing is there."""
    kind = classify(data)
    if kind is None:
        raise NoDeviceCode("not an ELF file, archive, wheel or offload bundle", file=name)
    result = ScanResult(files_read=1, kind=kind)
    if depth == 0 and options.budget is not None:
        options.budget.begin_file(name, len(data))
    if kind == "code object":
        result.images.append(DeviceImage(name, "code object", None, "", data, 0))
    elif kind == "offload bundle":
        try:
            result.merge(_scan_bundle_stream(data, name, 0, "bundle file", options))
        except InputError as exc:
            exc.file = exc.file or name
            raise
    elif kind == "ELF":
        result.merge(_scan_host_elf(data, name, options, path))
    elif kind == "OffloadBinary":      # llvm-offload-binary / clang-offload-packager output
        _scan_offload_binaries(data, name, 0, "OffloadBinary file", options, result)
    elif kind == "kpack archive":
        _kpack_images(kpack.read_archive(name, lambda _: data, max_decompressed=options.max_decompressed), result)
    elif kind in ("ar archive", "zip"):
        if depth >= MAX_NESTING:
            raise InputError("archives nested too deeply", file=name, container=kind)
        if kind == "ar archive":
            members = ((f"{name}({member})", body) for member, body, _ in iter_ar_members(data, name))
        else:
            if path is None:
                raise NoDeviceCode("zip file inside an archive is not read", file=name)
            members = ((f"{name}!{member}", body) for member, body in iter_zip_members(path, data, name, options))
        result.files_read = 0
        for member_name, body in members:
            try:
                result.merge(scan_buffer(body, member_name, options, depth=depth + 1))
            except NoDeviceCode as exc:
                result.skipped.append(member_name)
                result.files_read += 1
                _count_embedded(result, exc)
    if not result.has_device_code and kind == "ELF" and result.embedded_not_read:
        raise embedded.EmbeddedImagesNotRead(result.embedded_not_read, file=name, container=kind)
    if not result.has_device_code and kind in ("ELF",):
        raise NoDeviceCode("holds no device code (no .hip_fatbin, offload bundle sections or "
                           ".llvm.offloading)", file=name, container=kind)
    return result


def _scan_kpack_files(paths: list[str], options: ScanOptions, result: ScanResult) -> None:
    """A folder's archives, each code object once: those a host binary of the
    folder already read are skipped.  Manifests are checked against their
    archives but add nothing (their archives are in the folder too)."""
    for path in paths:
        if path.endswith(kpack.MANIFEST_SUFFIX):
            kpack.read_manifest(path, _map_file, max_decompressed=options.max_decompressed)
        else:
            _kpack_images(kpack.read_archive(path, _map_file, max_decompressed=options.max_decompressed,
                                             skip=frozenset(result.kpack_read)), result)
        result.files_read += 1


def _count_embedded(result: ScanResult, skipped: NoDeviceCode) -> None:
    """A skipped member that holds code objects as data (not read without
    --scan-embedded) still counts towards the message that names the option."""
    if isinstance(skipped, embedded.EmbeddedImagesNotRead):
        result.embedded_not_read += skipped.count
        result.embedded_files += 1


def scan_path(path: str, options: ScanOptions = ScanOptions(), *, display: str | None = None) -> ScanResult:
    """Scan a file or directory named by the user."""
    name = display or path
    if path == paths.STDIN:
        path = paths.spooled_stdin()
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=name) from None
    paths.refuse_special(info.st_mode, name)
    if stat.S_ISDIR(info.st_mode):
        result = ScanResult(kind="directory")
        archives = []     # .kpack and .kpm files: read after the host binaries that may use them
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for file_name in sorted(files):
                member = os.path.join(root, file_name)
                try:
                    if not stat.S_ISREG(os.lstat(member).st_mode):
                        continue
                    if file_name.endswith((kpack.ARCHIVE_SUFFIX, kpack.MANIFEST_SUFFIX)):
                        archives.append(member)
                        continue
                    result.merge(scan_path(member, options))
                except NoDeviceCode as exc:
                    result.skipped.append(member)
                    result.files_read += 1
                    _count_embedded(result, exc)
        _scan_kpack_files(archives, options, result)
        return result
    if path.endswith(kpack.MANIFEST_SUFFIX):
        result = ScanResult(files_read=1, kind="kpack manifest")
        _kpack_images(kpack.read_manifest(path, _map_file, max_decompressed=options.max_decompressed), result)
        return result
    try:
        data = _map_file(path)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=name) from None
    except ValueError as exc:
        raise InputError(f"cannot map: {exc}", file=name) from None
    return scan_buffer(data, name, options, path=path)
