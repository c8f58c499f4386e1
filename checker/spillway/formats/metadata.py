"""NT_AMDGPU_METADATA: the msgpack map in an AMDGPU code object's notes that
describes every kernel (code object V3 and later).  Key names are LLVM's
(AMDGPUUsage, "Code Object V3/V4/V5 Metadata")."""

from __future__ import annotations

import struct
from operator import itemgetter
from typing import Annotated, Any, Literal, NamedTuple, NoReturn

import msgpack
import msgspec

from spillway.errors import InputError
from spillway.formats.elfstream import MemoryStream
from spillway.formats.walk import advance

NT_AMDGPU_METADATA = 32
AMDGPU_NOTE_NAME = b"AMDGPU"


class KernelMetadata(NamedTuple):
    """Resource fields of one kernel, named as in the metadata (without the dot)."""

    name: str
    symbol: str
    vgpr_count: int
    agpr_count: int | None
    sgpr_count: int
    vgpr_spill_count: int
    sgpr_spill_count: int
    private_segment_fixed_size: int
    uses_dynamic_stack: bool
    group_segment_fixed_size: int
    wavefront_size: int
    max_flat_workgroup_size: int
    workgroup_processor_mode: bool | None


def iter_notes(data: bytes | memoryview):
    """Yield (name, type, desc) for each record of an ELF note section."""
    position, size = 0, len(data)
    while position + 12 <= size:
        namesz, descsz, note_type = struct.unpack_from("<III", data, position)
        name_start = position + 12
        desc_start = name_start + ((namesz + 3) & ~3)
        desc_end = desc_start + descsz
        if desc_end > size:
            raise InputError(f"note record (name size {namesz}, desc size {descsz}) runs past the "
                             f"note section ({size} bytes)", offset=position)
        name = bytes(data[name_start:name_start + namesz]).rstrip(b"\0")
        yield name, note_type, data[desc_start:desc_end], position
        position = advance(position, desc_start + ((descsz + 3) & ~3), container="note section",
                           what="note record")


# Keys are read as bytes (msgpack raw mode): decoding every string of the
# argument lists is a third of the time on large libraries.
_COUNTS = (b".vgpr_count", b".agpr_count", b".sgpr_count", b".vgpr_spill_count", b".sgpr_spill_count",
           b".private_segment_fixed_size", b".group_segment_fixed_size", b".wavefront_size",
           b".max_flat_workgroup_size")
_REQUIRED = {b".vgpr_count", b".sgpr_count", b".private_segment_fixed_size",
             b".group_segment_fixed_size", b".wavefront_size", b".max_flat_workgroup_size"}


def _text(value, what: str) -> str:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"metadata {what} is not UTF-8") from None
    if isinstance(value, str):
        return value
    raise InputError(f"metadata {what} is {value!r}, not a string")


def _flag(kernel: dict, key: bytes, where: str) -> bool | None:
    value = kernel.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise InputError(f"kernel {where}: metadata {key.decode()} is {value!r}, not a boolean")


def kernel_count(desc: bytes | memoryview) -> int | None:
    """The length of the note's ``amdhsa.kernels`` array, read without
    decoding the kernels (read in pieces: the note is not copied whole
    unless a key before it is that large); None when the note does not say
    (no such key, malformed: the full decode names the problem)."""
    unpacker = msgpack.Unpacker(MemoryStream(desc), raw=True, strict_map_key=False, read_size=1 << 16,
                                max_buffer_size=max(len(desc), 1 << 16))
    try:
        for _ in range(unpacker.read_map_header()):
            if unpacker.unpack() == b"amdhsa.kernels":
                return unpacker.read_array_header()
            unpacker.skip()
    except Exception:  # msgpack raises many types for bad input
        return None
    return None


def decode(desc: bytes | memoryview) -> dict:
    """Decode the msgpack document; any malformation is an InputError."""
    try:
        document = msgpack.unpackb(desc, raw=True, use_list=False, strict_map_key=False)
    except Exception as exc:  # msgpack raises many types for bad input
        raise InputError(f"malformed msgpack metadata ({type(exc).__name__}: {exc})") from None
    if not isinstance(document, dict):
        raise InputError("metadata is not a msgpack map")
    return document


# What decode_resources keeps of a kernel's map: what kernels_from reads.
_KERNEL_KEYS = frozenset((b".name", b".symbol", b".uses_dynamic_stack", b".workgroup_processor_mode") + _COUNTS)
_TOP_KEYS = frozenset((b"amdhsa.kernels", b"amdhsa.target"))


def _wrong_type(exc: ValueError) -> bool:
    return "Unexpected type" in str(exc)


def decode_resources(desc: bytes | memoryview) -> dict:
    """``decode`` restricted to what ``kernels_from`` and ``target_of`` read:
    the same document for them, but the parts nobody reads (argument lists,
    most of a note's bytes) are skipped by msgpack without being built, which
    halves the time on ROCm libraries.  Malformations are the same InputErrors
    as ``decode``'s (a trailing byte, a truncated note, a top level that is
    not a map); a kernel entry or list of the wrong type is kept as it is, for
    kernels_from to name."""
    unpacker = msgpack.Unpacker(raw=True, use_list=False, strict_map_key=False,
                                max_buffer_size=max(len(desc), 1))
    unpacker.feed(desc)
    document: dict = {}
    try:
        try:
            count = unpacker.read_map_header()
        except ValueError as exc:
            if _wrong_type(exc):
                unpacker.unpack()           # a whole object of another type: say so, as decode does
                raise InputError("metadata is not a msgpack map") from None
            raise
        unpack, skip = unpacker.unpack, unpacker.skip
        for _ in range(count):
            key = unpack()
            if key not in _TOP_KEYS:        # (hashed: an unhashable key is malformed, as for decode)
                skip()
                continue
            if key != b"amdhsa.kernels":
                document[key] = unpacker.unpack()
                continue
            try:
                entries = unpacker.read_array_header()
            except ValueError as exc:
                if not _wrong_type(exc):
                    raise
                document[key] = unpacker.unpack()     # not a list: kernels_from says so
                continue
            kernels = []
            for _ in range(entries):
                try:
                    fields = unpacker.read_map_header()
                except ValueError as exc:
                    if not _wrong_type(exc):
                        raise
                    kernels.append(unpacker.unpack())  # not a map: kernels_from says so
                    continue
                kernel = {}
                for _ in range(fields):
                    name = unpack()
                    # (``in`` hashes the key: an unhashable one is malformed, as for decode)
                    if name in _KERNEL_KEYS:
                        kernel[name] = unpack()
                    else:
                        skip()
                kernels.append(kernel)
            document[key] = tuple(kernels)
        if unpacker.tell() != len(desc):
            raise msgpack.ExtraData(None, b"")
    except InputError:
        raise
    except Exception as exc:  # msgpack raises many types for bad input
        raise InputError(f"malformed msgpack metadata ({type(exc).__name__}: {exc})") from None
    return document


def target_of(document: dict) -> str | None:
    value = document.get(b"amdhsa.target")
    return None if value is None else _text(value, "amdhsa.target")


_INT_OR_NONE = frozenset((int, type(None)))
_REQUIRED_INDEXES = tuple(i for i, key in enumerate(_COUNTS) if key in _REQUIRED)
_required_of = itemgetter(*_REQUIRED_INDEXES)


def _not_a_count(name: str, counts: tuple) -> NoReturn:
    bad, value = next((k, v) for k, v in zip(_COUNTS, counts)
                      if v is not None and (v.__class__ is not int or v < 0))
    raise InputError(f"kernel {name}: metadata {bad.decode()} is {value!r}, not a count")


def kernels_from(document: dict) -> list[KernelMetadata]:
    """Kernel records of a metadata document.  Written for speed: this runs
    for every kernel of libraries with tens of thousands of them."""
    kernels = document.get(b"amdhsa.kernels", ())
    if not isinstance(kernels, (list, tuple)):
        raise InputError("metadata amdhsa.kernels is not a list")
    out: list[KernelMetadata] = []
    append = out.append
    for index, kernel in enumerate(kernels):
        if kernel.__class__ is not dict:
            raise InputError(f"metadata amdhsa.kernels[{index}] is not a map")
        get = kernel.get
        name = get(b".name")
        # Names are ASCII manglings; a stray byte must not abort the report.
        name = name.decode("utf-8", "replace") if name.__class__ is bytes else \
            _text(name, f"amdhsa.kernels[{index}].name")
        symbol = get(b".symbol", b"")
        symbol = symbol.decode("utf-8", "replace") if symbol.__class__ is bytes else \
            _text(symbol, f"amdhsa.kernels[{index}].symbol")
        counts: tuple[Any, ...] = tuple(map(get, _COUNTS))   # checked below: ints (or None where optional)
        if not _INT_OR_NONE.issuperset(map(type, counts)):
            _not_a_count(name, counts)
        if None in _required_of(counts):
            missing = next(i for i in _REQUIRED_INDEXES if counts[i] is None)
            raise InputError(f"kernel {name}: metadata lacks {_COUNTS[missing].decode()}")
        vgpr, agpr, sgpr, vspill, sspill, private, group, wave, max_wg = counts
        # (the bitwise or of integers is negative when one of them is)
        if vgpr | sgpr | private | group | max_wg | (agpr or 0) | (vspill or 0) | (sspill or 0) < 0:
            _not_a_count(name, counts)
        if wave != 32 and wave != 64:
            raise InputError(f"kernel {name}: wavefront size {wave} is neither 32 nor 64")
        dynamic = get(b".uses_dynamic_stack")
        wgp = get(b".workgroup_processor_mode")
        if dynamic is None:
            dynamic = False
        elif dynamic.__class__ is not bool:
            dynamic = bool(_flag(kernel, b".uses_dynamic_stack", name))
        if wgp is not None and wgp.__class__ is not bool:
            # LLVM writes the mode as an integer 0 or 1
            wgp = (wgp == 1) if wgp.__class__ is int and (wgp == 0 or wgp == 1) else \
                _flag(kernel, b".workgroup_processor_mode", name)
        append(KernelMetadata(name, symbol, vgpr, agpr, sgpr, vspill or 0, sspill or 0, private,
                              dynamic, group, wave, max_wg, wgp))
    return out


# -- the fast path -----------------------------------------------------------
#
# msgspec decodes a note straight into typed structs in C, skipping the keys
# nobody reads (argument lists: most of a note's bytes) without building them:
# a third of the time of decode_resources + kernels_from on ROCm libraries.
# It accepts only what the exact path reads the same way (string keys, UTF-8
# strings, non-negative integer counts, wave size 32 or 64, boolean flags or
# the 0/1 integers LLVM writes; a key given twice: the last one, as a dict
# keeps it).  Anything else -- a malformed note, a wrong type, a missing
# field -- is refused, and the caller reads the note again on the exact path,
# which gives the one-line error naming the field.

_Count = Annotated[int, msgspec.Meta(ge=0)]


def _key(name: str, default: Any = msgspec.NODEFAULT) -> Any:
    return msgspec.field(name=name, default=default)


class _Kernel(msgspec.Struct, gc=False):
    name: str = _key(".name")
    vgpr_count: _Count = _key(".vgpr_count")
    sgpr_count: _Count = _key(".sgpr_count")
    private_segment_fixed_size: _Count = _key(".private_segment_fixed_size")
    group_segment_fixed_size: _Count = _key(".group_segment_fixed_size")
    wavefront_size: Literal[32, 64] = _key(".wavefront_size")
    max_flat_workgroup_size: _Count = _key(".max_flat_workgroup_size")
    symbol: str = _key(".symbol", "")
    agpr_count: _Count | None = _key(".agpr_count", None)
    vgpr_spill_count: _Count = _key(".vgpr_spill_count", 0)
    sgpr_spill_count: _Count = _key(".sgpr_spill_count", 0)
    uses_dynamic_stack: bool = _key(".uses_dynamic_stack", False)
    workgroup_processor_mode: Literal[0, 1] | bool | None = _key(".workgroup_processor_mode", None)


class _Document(msgspec.Struct, gc=False):
    kernels: list[_Kernel] = msgspec.field(name="amdhsa.kernels", default_factory=list)
    target: str | None = _key("amdhsa.target", None)


_decoder = msgspec.msgpack.Decoder(_Document)
_AS_FLAG = {0: False, 1: True, None: None}      # (True and False look up as 1 and 0)


class NoteResources(NamedTuple):
    """What ``kernels_from`` and ``target_of`` give for one note."""

    kernels: list[KernelMetadata]
    target: str | None


def read_fast(desc: bytes | memoryview) -> NoteResources | None:
    """The kernels and target of a metadata note, or None when the fast
    decoder refuses it (then ``decode_resources`` + ``kernels_from`` read it
    and say what is wrong)."""
    try:
        document = _decoder.decode(desc)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    flag = _AS_FLAG
    return NoteResources([KernelMetadata(k.name, k.symbol, k.vgpr_count, k.agpr_count, k.sgpr_count,
                                         k.vgpr_spill_count, k.sgpr_spill_count, k.private_segment_fixed_size,
                                         k.uses_dynamic_stack, k.group_segment_fixed_size, k.wavefront_size,
                                         k.max_flat_workgroup_size, flag[k.workgroup_processor_mode])
                          for k in document.kernels], document.target)
