"""NT_AMDGPU_METADATA: the msgpack map in an AMDGPU code object's notes that
describes every kernel (code object V3 and later).  Key names are LLVM's
(AMDGPUUsage, "Code Object V3/V4/V5 Metadata")."""

from __future__ import annotations

import struct
from functools import partial
from operator import is_not
from typing import NamedTuple

import msgpack

from spillway.errors import InputError

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
        position = desc_start + ((descsz + 3) & ~3)


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


def decode(desc: bytes | memoryview) -> dict:
    """Decode the msgpack document; any malformation is an InputError."""
    try:
        document = msgpack.unpackb(desc, raw=True, use_list=False, strict_map_key=False)
    except Exception as exc:  # msgpack raises many types for bad input
        raise InputError(f"malformed msgpack metadata ({type(exc).__name__}: {exc})") from None
    if not isinstance(document, dict):
        raise InputError("metadata is not a msgpack map")
    return document


def target_of(document: dict) -> str | None:
    value = document.get(b"amdhsa.target")
    return None if value is None else _text(value, "amdhsa.target")


_INT_OR_NONE = frozenset((int, type(None)))
_IS_NOT_NONE = partial(is_not, None)
_REQUIRED_INDEXES = tuple(i for i, key in enumerate(_COUNTS) if key in _REQUIRED)


def kernels_from(document: dict) -> list[KernelMetadata]:
    """Kernel records of a metadata document.  Written for speed: this runs
    for every kernel of libraries with tens of thousands of them."""
    kernels = document.get(b"amdhsa.kernels", ())
    if not isinstance(kernels, (list, tuple)):
        raise InputError("metadata amdhsa.kernels is not a list")
    out = []
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
        counts = tuple(map(get, _COUNTS))
        if not _INT_OR_NONE.issuperset(map(type, counts)) or min(filter(_IS_NOT_NONE, counts), default=0) < 0:
            bad = next(k for k, v in zip(_COUNTS, counts) if v is not None and (v.__class__ is not int or v < 0))
            raise InputError(f"kernel {name}: metadata {bad.decode()} is {get(bad)!r}, not a count")
        for required in _REQUIRED_INDEXES:
            if counts[required] is None:
                raise InputError(f"kernel {name}: metadata lacks {_COUNTS[required].decode()}")
        vgpr, agpr, sgpr, vspill, sspill, private, group, wave, max_wg = counts
        if wave != 32 and wave != 64:
            raise InputError(f"kernel {name}: wavefront size {wave} is neither 32 nor 64")
        dynamic = get(b".uses_dynamic_stack")
        wgp = get(b".workgroup_processor_mode")
        if dynamic.__class__ is not bool:
            dynamic = bool(_flag(kernel, b".uses_dynamic_stack", name))
        if wgp is not None and wgp.__class__ is not bool:
            wgp = _flag(kernel, b".workgroup_processor_mode", name)
        append(KernelMetadata(name, symbol, vgpr, agpr, sgpr, vspill or 0, sspill or 0, private,
                              dynamic, group, wave, max_wg, wgp))
    return out
