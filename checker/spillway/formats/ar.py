"""``ar`` archives (static libraries): GNU and BSD member headers.

Layout (one 60-byte header per member, members 2-aligned after the 8-byte
magic ``!<arch>\\n``)::

    offset  size  field
         0    16  name: "foo.o/" (GNU), "/N" (GNU: offset N in the "//" member),
                  "#1/N" (BSD: an N-byte name follows the header, inside the member),
                  "/" or "/SYM64/" or "__.SYMDEF" (symbol tables), "//" (GNU long names)
        16    12  date        (not read)
        28     6  uid         (not read)
        34     6  gid         (not read)
        40     8  mode        (not read)
        48    10  size        decimal, left-aligned, padded with spaces
        58     2  "`\\n"

Every number read from a header is decimal digits padded with spaces on the
right, which is all any ``ar`` writes.  Python's ``int()`` would also take a
sign, surrounding blanks and ``_`` separators (``-61`` once sent the walk back
over the same member forever), so the fields are matched first and only then
converted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from spillway.errors import InputError
from spillway.formats.walk import advance

AR_MAGIC = b"!<arch>\n"
THIN_AR_MAGIC = b"!<thin>\n"
HEADER_SIZE = 60
CONTAINER = "ar archive"

_NAME, _SIZE, _TERMINATOR = slice(0, 16), slice(48, 58), slice(58, 60)
_SIZE_OFFSET = 48
_DECIMAL_FIELD = re.compile(rb"[0-9]+ *")       # the whole field: digits, then spaces
_BSD_NAME = re.compile(rb"#1/([0-9]+) *")       # "#1/N", N the length of the name after the header
_GNU_LONG_NAME = re.compile(rb"/([0-9]+) *")    # "/N", N an offset in the "//" member
_SYMBOL_TABLES = ("/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED")


def decimal_field(raw: bytes, what: str, *, file: str | None, offset: int) -> int:
    """The value of a header's decimal field, or the input error naming it."""
    if _DECIMAL_FIELD.fullmatch(raw) is None:
        raise InputError(f"bad {what} field {raw.decode('latin-1')!r}: ar writes decimal digits "
                         f"padded with spaces", file=file, container=CONTAINER, offset=offset)
    return int(raw)


def iter_ar_members(data: memoryview, name: str) -> Iterator[tuple[str, memoryview, int]]:
    """Yield (member name, member data, offset of the data) for each member of
    a GNU or BSD archive; symbol tables and the long-name table are not yielded."""
    if bytes(data[:8]) == THIN_AR_MAGIC:
        raise InputError("thin archive: its members are separate files, pass those instead",
                         file=name, container=CONTAINER, offset=0)
    position = len(AR_MAGIC)
    long_names: bytes | None = None
    size = len(data)
    while position < size:
        if position + HEADER_SIZE > size:
            rest = bytes(data[position:])
            if not any(rest) or rest == b"\n":
                break
            raise InputError("truncated member header", file=name, container=CONTAINER, offset=position)
        header = bytes(data[position:position + HEADER_SIZE])
        if header[_TERMINATOR] != b"`\n":
            raise InputError("bad member header terminator", file=name, container=CONTAINER,
                             offset=position + _TERMINATOR.start)
        member_size = decimal_field(header[_SIZE], "member size", file=name, offset=position + _SIZE_OFFSET)
        start = position + HEADER_SIZE
        if member_size > size - start:
            raise InputError(f"member of {member_size} bytes runs past the end of the archive "
                             f"({size - start} bytes left)", file=name, container=CONTAINER,
                             offset=position + _SIZE_OFFSET)
        body = data[start:start + member_size]
        raw_name = header[_NAME]
        text_name = raw_name.decode("latin-1").rstrip()
        member_name: str | None
        if text_name.startswith("#1/"):
            member_name, name_length = _bsd_name(raw_name, body, name, position)
            body = body[name_length:]
            start += name_length
        elif text_name == "//":
            long_names = bytes(body)
            member_name = None
        elif text_name in _SYMBOL_TABLES:
            member_name = None
        elif text_name[1:2].isdigit() and text_name.startswith("/"):
            member_name = _long_name(raw_name, long_names, name, position)
        else:
            member_name = text_name.rstrip("/")
        if member_name is not None:
            yield member_name, body, start
        following = position + HEADER_SIZE + member_size
        position = advance(position, following + (following & 1), container=CONTAINER, file=name)


def _bsd_name(raw_name: bytes, body: memoryview, file: str, position: int) -> tuple[str, int]:
    """A BSD member's name, stored at the start of its data, and its length."""
    match = _BSD_NAME.fullmatch(raw_name)
    if match is None:
        raise InputError(f"bad BSD member name length {raw_name.decode('latin-1').rstrip()!r}: ar writes "
                         f"#1/ and decimal digits", file=file, container=CONTAINER, offset=position)
    length = int(match.group(1))
    if length > len(body):
        raise InputError(f"BSD member name of {length} bytes is longer than its member ({len(body)} bytes)",
                         file=file, container=CONTAINER, offset=position)
    return bytes(body[:length]).rstrip(b"\0").decode("utf-8", "replace"), length


def _long_name(raw_name: bytes, long_names: bytes | None, file: str, position: int) -> str:
    """A GNU member's name from the "//" table: "/N" is the offset N in it."""
    match = _GNU_LONG_NAME.fullmatch(raw_name)
    if match is None:
        raise InputError(f"bad long-name index {raw_name.decode('latin-1').rstrip()!r}: ar writes / and "
                         f"decimal digits", file=file, container=CONTAINER, offset=position)
    index = int(match.group(1))
    if long_names is None:
        raise InputError(f"long-name index {index} with no // member before it", file=file,
                         container=CONTAINER, offset=position)
    if index >= len(long_names):
        raise InputError(f"long-name index {index} is past the // member ({len(long_names)} bytes)",
                         file=file, container=CONTAINER, offset=position)
    end = long_names.find(b"\n", index)
    return long_names[index:end if end >= 0 else None].decode("utf-8", "replace").rstrip("/")
