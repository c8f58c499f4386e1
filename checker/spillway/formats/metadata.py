"""NT_AMDGPU_METADATA: the msgpack map in an AMDGPU code object's notes that
describes every kernel (code object V3 and later).  Key names are LLVM's
(AMDGPUUsage, "Code Object V3/V4/V5 Metadata")."""

from __future__ import annotations

import struct
from operator import itemgetter
from typing import Annotated, Any, Literal, NamedTuple, NoReturn

import msgspec

from spillway.errors import InputError
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


# What the exact path reads of a kernel's map, as LLVM names it.
_COUNTS = (".vgpr_count", ".agpr_count", ".sgpr_count", ".vgpr_spill_count", ".sgpr_spill_count",
           ".private_segment_fixed_size", ".group_segment_fixed_size", ".wavefront_size",
           ".max_flat_workgroup_size")
_REQUIRED = {".vgpr_count", ".sgpr_count", ".private_segment_fixed_size",
             ".group_segment_fixed_size", ".wavefront_size", ".max_flat_workgroup_size"}


def _text(value, what: str) -> str:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"metadata {what} is not UTF-8") from None
    if isinstance(value, str):
        return value
    raise InputError(f"metadata {what} is {value!r}, not a string")


def _flag(kernel: dict, key: str, where: str) -> bool | None:
    value = kernel.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise InputError(f"kernel {where}: metadata {key} is {value!r}, not a boolean")


def kernel_count(desc: bytes | memoryview) -> int | None:
    """The length of the note's ``amdhsa.kernels`` array, read without
    decoding the kernels (the top-level map's values are kept undecoded,
    msgspec.Raw, and the array's header is read from its first bytes); None
    when the note does not say (no such key, malformed: the full decode names
    the problem)."""
    try:
        top = _MAP.decode(desc)
    except (msgspec.DecodeError, RecursionError):
        return None
    raw = top.get("amdhsa.kernels")
    if raw is None:
        return None
    head = bytes(memoryview(raw)[:5])
    if head and 0x90 <= head[0] <= 0x9F:            # fixarray
        return head[0] & 0x0F
    if head[:1] == b"\xdc" and len(head) >= 3:      # array 16
        return int.from_bytes(head[1:3], "big")
    if head[:1] == b"\xdd" and len(head) >= 5:      # array 32
        return int.from_bytes(head[1:5], "big")
    return None


# -- the exact path ------------------------------------------------------------
#
# A note the fast path refuses is read again here, so that the error names
# what is wrong (or, for what the fast path does not take but LLVM's readers
# do -- a name of the bin type or not UTF-8, a key that is not a string --
# the note is read).  msgspec walks the note's structure, keeping each value
# undecoded (msgspec.Raw): a malformation anywhere is an error, the argument
# lists (most of a note's bytes) are skipped, and each value read is then
# decoded alone, so a wrong type is named with its field.

_WHOLE = msgspec.msgpack.Decoder(msgspec.Raw)      # (decoding checks the structure, not the strings)
_MAP = msgspec.msgpack.Decoder(dict[Any, msgspec.Raw])
_ARRAY = msgspec.msgpack.Decoder(list[msgspec.Raw])
_VALUE = msgspec.msgpack.Decoder()
_KERNEL_KEYS = (".name", ".symbol", ".uses_dynamic_stack", ".workgroup_processor_mode") + _COUNTS
# msgpack's str and map formats: the first byte -> the length of the header it starts
_STR_HEADERS = {**{first: 1 for first in range(0xA0, 0xC0)}, 0xD9: 2, 0xDA: 3, 0xDB: 5}
_MAP_HEADERS = {**{first: 1 for first in range(0x80, 0x90)}, 0xDE: 3, 0xDF: 5}


def _malformed(exc: Exception) -> InputError:
    if isinstance(exc, RecursionError):
        reason = "nested deeper than the decoder reads"
    else:
        reason = str(exc).replace("MessagePack data is malformed: ", "")
        reason = reason[:1].lower() + reason[1:]
    return InputError(f"malformed msgpack metadata ({reason})")


def _value(raw: msgspec.Raw | bytes):
    """A value of a note whose structure was checked, decoded; a string that
    is not UTF-8 as its bytes (a name is read from them, an error shows them)."""
    try:
        return _VALUE.decode(raw)
    except msgspec.DecodeError:         # a string in it is not UTF-8
        pass
    data = bytes(raw)
    header = _STR_HEADERS.get(data[0])
    if header is not None:
        return data[header:]
    try:
        return [_value(item) for item in _ARRAY.decode(data)]
    except msgspec.ValidationError:     # not an array: a map
        return {key: _value(item) for key, item in _map(data).items()}


def _map(raw: msgspec.Raw | bytes | memoryview) -> dict:
    """A map of a note whose structure was checked, its values undecoded (a
    key that is not UTF-8 as its bytes; keys that are arrays or maps, which
    name nothing read, left out).  ValidationError when it is not a map."""
    try:
        return _MAP.decode(raw)
    except msgspec.DecodeError:         # a key is a string that is not UTF-8, or a map
        pass
    data = bytes(raw)
    header = _MAP_HEADERS.get(data[0])
    if header is None:
        raise msgspec.ValidationError("not a map")
    count = int.from_bytes(data[1:header], "big") if header > 1 else data[0] & 0x0F
    # The members, as the array of 2 * count values they are (an array32 header before them).
    members = _ARRAY.decode(b"\xdd" + (2 * count).to_bytes(4, "big") + data[header:])
    keys = [_value(key) for key in members[::2]]
    return {key: value for key, value in zip(keys, members[1::2]) if not isinstance(key, (list, dict))}


def decode_resources(desc: bytes | memoryview) -> dict:
    """The document ``kernels_from`` and ``target_of`` read: ``amdhsa.target``
    and, of each kernel's map in ``amdhsa.kernels``, the fields they read
    (a kernel entry or list of the wrong type is kept as it is, for
    kernels_from to name).  A malformed note (a trailing byte, a truncated
    one, a byte msgpack does not use, nesting too deep, a key that cannot be
    a key) or one whose top level is not a map is an InputError."""
    try:
        _WHOLE.decode(desc)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise _malformed(exc) from None
    try:
        top = _map(desc)
    except msgspec.ValidationError:
        raise InputError("metadata is not a msgpack map") from None
    document: dict = {}
    if "amdhsa.target" in top:
        document["amdhsa.target"] = _value(top["amdhsa.target"])
    if "amdhsa.kernels" in top:
        try:
            entries = _ARRAY.decode(top["amdhsa.kernels"])
        except msgspec.ValidationError:
            document["amdhsa.kernels"] = _value(top["amdhsa.kernels"])     # not a list: kernels_from says so
            return document
        kernels: list = []
        for entry in entries:
            try:
                fields = _map(entry)
            except msgspec.ValidationError:
                kernels.append(_value(entry))                              # not a map: kernels_from says so
                continue
            kernels.append({key: _value(fields[key]) for key in _KERNEL_KEYS if key in fields})
        document["amdhsa.kernels"] = kernels
    return document


def target_of(document: dict) -> str | None:
    value = document.get("amdhsa.target")
    return None if value is None else _text(value, "amdhsa.target")


_INT_OR_NONE = frozenset((int, type(None)))
_REQUIRED_INDEXES = tuple(i for i, key in enumerate(_COUNTS) if key in _REQUIRED)
_required_of = itemgetter(*_REQUIRED_INDEXES)


def _not_a_count(name: str, counts: tuple) -> NoReturn:
    bad, value = next((k, v) for k, v in zip(_COUNTS, counts)
                      if v is not None and (v.__class__ is not int or v < 0))
    raise InputError(f"kernel {name}: metadata {bad} is {value!r}, not a count")


def kernels_from(document: dict) -> list[KernelMetadata]:
    """Kernel records of a metadata document.  Written for speed: this runs
    for every kernel of libraries with tens of thousands of them."""
    kernels = document.get("amdhsa.kernels", ())
    if not isinstance(kernels, (list, tuple)):
        raise InputError("metadata amdhsa.kernels is not a list")
    out: list[KernelMetadata] = []
    append = out.append
    for index, kernel in enumerate(kernels):
        if kernel.__class__ is not dict:
            raise InputError(f"metadata amdhsa.kernels[{index}] is not a map")
        get = kernel.get
        name = get(".name")
        # Names are ASCII manglings; a stray byte must not abort the report.
        name = name.decode("utf-8", "replace") if name.__class__ is bytes else \
            _text(name, f"amdhsa.kernels[{index}].name")
        symbol = get(".symbol", "")
        symbol = symbol.decode("utf-8", "replace") if symbol.__class__ is bytes else \
            _text(symbol, f"amdhsa.kernels[{index}].symbol")
        counts: tuple[Any, ...] = tuple(map(get, _COUNTS))   # checked below: ints (or None where optional)
        if not _INT_OR_NONE.issuperset(map(type, counts)):
            _not_a_count(name, counts)
        if None in _required_of(counts):
            missing = next(i for i in _REQUIRED_INDEXES if counts[i] is None)
            raise InputError(f"kernel {name}: metadata lacks {_COUNTS[missing]}")
        vgpr, agpr, sgpr, vspill, sspill, private, group, wave, max_wg = counts
        # (the bitwise or of integers is negative when one of them is)
        if vgpr | sgpr | private | group | max_wg | (agpr or 0) | (vspill or 0) | (sspill or 0) < 0:
            _not_a_count(name, counts)
        if wave != 32 and wave != 64:
            raise InputError(f"kernel {name}: wavefront size {wave} is neither 32 nor 64")
        dynamic = get(".uses_dynamic_stack")
        wgp = get(".workgroup_processor_mode")
        if dynamic is None:
            dynamic = False
        elif dynamic.__class__ is not bool:
            dynamic = bool(_flag(kernel, ".uses_dynamic_stack", name))
        if wgp is not None and wgp.__class__ is not bool:
            # LLVM writes the mode as an integer 0 or 1
            wgp = (wgp == 1) if wgp.__class__ is int and (wgp == 0 or wgp == 1) else \
                _flag(kernel, ".workgroup_processor_mode", name)
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
