"""spillway's JSON, read and written: every JSON document or record spillway
writes is encoded here, so a change to how text is escaped is made in this
module alone; and what it reads is decoded here, but for what report JSON's
readers need of their own (report.report_input: ijson's events for layouts
not spillway's, the head's members in pairs).

- Encoding: orjson (compact, or ``indent``: two spaces, as orjson's
  OPT_INDENT_2 writes it), and for records given as a ``record_layout``
  struct, msgspec, which encodes them in C without a dict per record; both
  write the same bytes for the same values (UTF-8, the same escapes).
- Paths that are not UTF-8: Linux paths are bytes, and Python decodes the
  ones that are not UTF-8 with ``surrogateescape`` (PEP 383): byte 0xXX
  becomes U+DCXX.  Such a string is written as the escape ``\\udcXX`` (valid
  JSON text, RFC 8259 section 7), so the exact bytes come back
  (``os.fsencode(json.loads(...))``).  orjson and msgspec refuse lone
  surrogates, so those documents go through the standard library's json,
  only then; ``loads`` reads the escapes back the same way.
- Safe in a log (issue 30): every text written is passed through
  untrusted.json_log_safe -- the first ``#`` of ``##[`` and DEL, C1,
  bidirectional controls and line separators as ``\\uXXXX`` escapes, so a
  document printed to a CI log commands nothing, and parses back exactly.
- Streaming: ``document_chunks`` writes an object whose lists hold hundreds
  of thousands of records in pieces, one record per line.
- Published schemas: ``published_schema`` gives each JSON schema of
  docs/schemas/ (made from a pydantic model by the module of its document)
  the same dialect and ``$id``.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

import msgspec
import orjson

from spillway.untrusted import json_log_safe

JSONDecodeError = orjson.JSONDecodeError        # (a ValueError) what ``loads`` raises for text that is not JSON

_INDENTED = orjson.OPT_INDENT_2


def dumps(document, *, indent: bool = False, sort_keys: bool = False) -> bytes:
    """``document`` as JSON: compact, or with ``indent`` two spaces per level
    and a line per member (no newline at the end); keys sorted with
    ``sort_keys``.  Undecodable path bytes (U+DC80-U+DCFF) are ``\\udcXX``."""
    option = (_INDENTED if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return json_log_safe(orjson.dumps(document, option=option))
    except TypeError as exc:
        if "surrogates" not in str(exc):
            raise
    text = json.dumps(document, ensure_ascii=False, indent=2 if indent else None, sort_keys=sort_keys,
                      separators=(",", ": ") if indent else (",", ":"))
    # Lone surrogates only occur inside JSON strings; backslashreplace writes
    # each as the JSON escape \udcXX.
    return json_log_safe(text.encode("utf-8", "backslashreplace"))


def record_layout(name: str, fields: Iterable[str]) -> type:
    """A record type with these members, in this order, for ``encode_record``:
    ``layout(*values)`` is encoded as the object ``{field: value, ...}``."""
    return msgspec.defstruct(name, list(fields), gc=False)


_encode = msgspec.json.Encoder().encode


def encode_record(record) -> bytes:
    """A ``record_layout`` record (or any value ``dumps`` takes) as compact
    JSON, the bytes ``dumps`` writes for the same object (members in the
    layout's order, no spaces)."""
    try:
        return json_log_safe(_encode(record))
    except UnicodeEncodeError:          # a path that is not UTF-8: the escapes, as dumps writes them
        if isinstance(record, msgspec.Struct):
            record = msgspec.structs.asdict(record)
        return dumps(record)


def loads(data: bytes | str) -> Any:
    """The value of a JSON text; JSONDecodeError when it is not one.  Escapes
    of lone surrogates (``\\udcXX``: paths that are not UTF-8) are read back
    as such."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "surrogate" not in str(exc):
            raise
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            raise exc from None


def document_chunks(head: dict, lists: dict[str, Iterable], per_chunk: int = 2048) -> Iterator[bytes]:
    """A JSON object written in pieces: ``head``'s members indented as
    ``dumps(indent=True)`` writes them, then each of ``lists`` (name ->
    records, read lazily) with one record per line, so a document of hundreds
    of thousands of records is never built whole, as objects or as text."""
    text = dumps(head, indent=True)
    pending = text[:-2] if head else b"{"           # the head without its closing "\n}"
    separator = b",\n" if head else b"\n"
    for name, records in lists.items():
        pending += separator + b"  " + dumps(name) + b": ["
        separator = b",\n"
        batch: list[bytes] = []
        opened = False
        for record in records:
            batch.append(b"    " + dumps(record))
            if len(batch) >= per_chunk:
                yield pending + (b",\n" if opened else b"\n") + b",\n".join(batch)
                pending, batch, opened = b"", [], True
        if batch:
            pending += (b",\n" if opened else b"\n") + b",\n".join(batch)
            opened = True
        pending += b"\n  ]" if opened else b"]"
    yield pending + b"\n}\n"


# Every published JSON schema's dialect, and where its $id points (the file of docs/schemas/ named after it).
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID_BASE = "https://spillway.dev/schemas/"


def published_schema(model, file_name: str) -> dict:
    """A pydantic model's JSON schema as spillway publishes it: fields by their
    alias (``schema``), then ``$schema`` and the ``$id`` of ``file_name``
    (``check-3.json``)."""
    schema = model.model_json_schema(by_alias=True)
    schema["$schema"] = JSON_SCHEMA_DIALECT
    schema["$id"] = SCHEMA_ID_BASE + file_name
    return schema
