"""Report JSON read back by ``check``, ``compare`` and ``baseline write``:
validated record by record as it is read, in memory that does not grow with
the document (a librocsparse1 7.2.4 report is 544 MB; issues 9 and 14).

Two readers give the same records:

- **spillway's own layout** (``report.reader.report_json`` and
  ``json_chunks``): members pretty-printed like orjson's OPT_INDENT_2, the line
  ``  "kernels": [``, one record per line (``    {...},``), ``  ]`` and ``}``, or
  ``  ],`` and more members (report_json writes ``files`` after the kernels:
  it knows them only at the end).  Each record line is parsed alone with
  orjson (``json_codec.loads``: the standard library for lines holding the
  ``\\udcXX`` escapes of paths that are not UTF-8).  The members before and
  after are parsed as objects of their own, and the frame around the lines is
  checked, so what this reader accepts is exactly a JSON document whose
  kernels are those lines.  The schema must come before the kernels here;
  ``files`` and the rest are checked when the document has been read.
- **any other layout of valid JSON** (pretty-printed by ``jq .``, one line,
  members in another order: ``jq -S`` puts ``schema`` after ``kernels``):
  ijson (yajl2_c) in two passes over the file.  The first reads the whole
  document for its syntax and collects every top-level member but
  ``kernels``, so the schema and ``files`` are known wherever they stand; the
  second yields the kernel records one at a time.  ijson's C backend cannot
  return lone surrogates (it raises UnicodeDecodeError on ``\\udcXX``), so such
  a document is read by ijson's pure-Python backend instead: same events,
  slower.

A document that leaves spillway's layout part-way through is read again from
its start by the general reader, and what the caller built from the first
records is dropped (``ReportJson.read`` calls ``consume`` again).  Nothing is
returned before the document has been read to its end: a truncated or
malformed document is an InputError (one line, exit 2), and no record before
the damage is gated as if the document were complete.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any, Callable, Final, Iterator, TypeVar

from spillway.constants import READABLE_REPORT_SCHEMAS
from spillway.errors import InputError
from spillway.json_codec import loads as json_loads
from spillway.report.fields import GATED_FIELDS

if TYPE_CHECKING:  # pragma: no cover
    from typing import BinaryIO

T = TypeVar("T")

# -- one record ---------------------------------------------------------------

# Fields every record read back must have (what the gate and compare use).
REPORT_FIELDS: Final = GATED_FIELDS

# What each report field read back may hold (the report schema's types):
# "count" is a non-negative int that is not a bool.
RECORD_TYPES: Final = {
    "target": "string", "key": "string", "name": "string",
    "private_segment_fixed_size": "count", "uses_dynamic_stack": "boolean",
    "vgpr_spill_count": "count", "sgpr_spill_count": "count", "vgpr_count": "count",
    "agpr_count": "count or null", "sgpr_count": "count", "group_segment_fixed_size": "count",
    "occupancy": "count or null", "compiler": "string or null",
    "code_object_version": "count or null", "file": "string", "bundle_index": "count or null",
    "symbol": "string", "wavefront_size": "count", "max_flat_workgroup_size": "count",
    "workgroup_processor_mode": "boolean or null", "occupancy_limit": "string or null",
    "scratch_cause": "string or null", "occupancy_model": "string or null",
    "occupancy_next": "object or null", "image_offset": "count or null",
    "archive": "string or null", "isa": "object or null"}

# What compare reads of a record's isa object (report --isa) and the kinds they must be.
ISA_TYPES: Final = {"code_sha256": "string", "scratch_load_bytes": "count", "scratch_store_bytes": "count",
                    "scratch_in_loops": "count", "agpr_writes": "count", "agpr_reads": "count",
                    "status": "string"}

# occupancy_next's resources, in the order it lists them.
NEED_ORDER: Final = ("vgpr", "agpr", "sgpr", "lds", "workgroup")


def type_ok(value, kind: str) -> bool:
    if value is None and kind.endswith(" or null"):
        return True
    kind = kind.removesuffix(" or null")
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 63


def shown(value) -> str:
    """A value for one line of text (at most 40 characters)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# The Python types each kind admits: a JSON parser returns exactly these (a bool
# is no count, though bool subclasses int; a count is also below 2**63).
_KIND_TYPES: Final = {"string": (str,), "boolean": (bool,), "object": (dict,), "count": (int,)}
_ADMITS: Final = {name: frozenset(_KIND_TYPES[kind.removesuffix(" or null")]
                                  + ((type(None),) if kind.endswith(" or null") else ()))
                  for name, kind in RECORD_TYPES.items()}
_REQUIRED: Final = frozenset(REPORT_FIELDS)
_COUNT_END: Final = 1 << 63


# Record shapes (field names and value types, in order) found sound already, with
# what reads their counts: spillway's own records come in a handful of shapes, so
# most records need one look-up and a range check (not one test per field).
_SOUND_SHAPES: dict[tuple, Callable[[dict], tuple]] = {}
_SHAPES_KEPT: Final = 1024


def check_record(record: Any, index: int, file: str) -> None:
    """InputError naming the kernel (its index in the kernels list) and the field
    when a record lacks a field the gate uses or a field has the wrong type."""
    if type(record) is dict:
        counts = _SOUND_SHAPES.get((tuple(record), tuple(map(type, record.values()))))
        if counts is not None:
            values = counts(record)
            if min(values) >= 0 and max(values) < _COUNT_END:
                step = record.get("occupancy_next")
                isa = record.get("isa")
                if (step is None or next_step_ok(step)) and (isa is None or isa_ok(isa)):
                    return
    _check_each_field(record, index, file)


def _check_each_field(record: Any, index: int, file: str) -> None:
    if type(record) is not dict or not record.keys() >= _REQUIRED:
        missing = [f for f in REPORT_FIELDS if not isinstance(record, dict) or f not in record]
        raise InputError(f"kernel {index} lacks {', '.join(missing)}", file=file)
    counts = []
    for name, value in record.items():
        admitted = _ADMITS.get(name)
        if admitted is None:
            continue            # a field spillway does not read back
        kind = type(value)
        if kind not in admitted or (kind is int and not 0 <= value < _COUNT_END):
            raise InputError(f"kernel {index}: {name} is {shown(value)}, not a {RECORD_TYPES[name]}", file=file)
        if kind is int:
            counts.append(name)
    step = record.get("occupancy_next")
    if step is not None and not next_step_ok(step):
        raise InputError(f"kernel {index}: occupancy_next is {shown(step)}, not "
                         f"{{\"waves\": N, \"needs\": [{{\"resource\": {'|'.join(NEED_ORDER)}, \"at_most\": N}}]}}",
                         file=file)
    isa = record.get("isa")
    if isa is not None and not isa_ok(isa):
        if isa.get("pressure") is not None and all(name in isa and type_ok(isa[name], kind)
                                                   for name, kind in ISA_TYPES.items()):
            raise InputError(f"kernel {index}: isa.pressure is {shown(isa['pressure'])}, not report --pressure's "
                             f"object (status, vgprs, agprs and sgprs with peak and offset, at_vgpr_peak)",
                             file=file)
        wanted = ", ".join(f"{name} ({kind})" for name, kind in ISA_TYPES.items())
        raise InputError(f"kernel {index}: isa is {shown(isa)}, not an object with {wanted}", file=file)
    if len(_SOUND_SHAPES) < _SHAPES_KEPT:
        _SOUND_SHAPES[(tuple(record), tuple(map(type, record.values())))] = _reader(counts)


def _reader(names: list[str]) -> Callable[[dict], tuple]:
    """What reads the named fields of a record as a tuple (never empty)."""
    if len(names) >= 2:
        return itemgetter(*names)
    if names:
        name = names[0]
        return lambda record: (record[name],)
    return lambda record: (0,)


def isa_ok(isa: dict) -> bool:
    """The members of report --isa's object that compare reads, of their kinds (``pressure``, of report
    --pressure, only when present: an object pressure_ok accepts, or null)."""
    return (all(name in isa and type_ok(isa[name], kind) for name, kind in ISA_TYPES.items())
            and (isa.get("pressure") is None or pressure_ok(isa["pressure"])))


def _source_ok(source: Any) -> bool:
    return source is None or (isinstance(source, dict) and type_ok(source.get("file"), "string")
                              and type_ok(source.get("line"), "count") and type_ok(source.get("column"), "count")
                              and type_ok(source.get("inferred"), "boolean"))


def _group_ok(group: Any) -> bool:
    if not isinstance(group, dict) or not type_ok(group.get("count"), "count") \
            or not type_ok(group.get("from_entry"), "boolean"):
        return False
    by, at, sources = group.get("defined_by"), group.get("defined_at"), group.get("defined_source")
    return (isinstance(by, list) and isinstance(at, list) and isinstance(sources, list)
            and len(by) == len(at) == len(sources) and all(type_ok(m, "string") for m in by)
            and all(type_ok(o, "count") for o in at) and all(_source_ok(s) for s in sources))


def pressure_ok(pressure: Any) -> bool:
    """What compare reads of report --pressure's ``pressure`` object: the status, each file's peak and
    offset, the curve, what holds the peak summed by origin, the scratch access offsets (version 6), and at
    the VGPR peak its source line, largest group and loop (version 6) (null: none)."""
    if not isinstance(pressure, dict) or not type_ok(pressure.get("status"), "string"):
        return False
    for name in ("vgprs", "agprs", "sgprs"):
        peak = pressure.get(name)
        if not isinstance(peak, dict) or not type_ok(peak.get("peak"), "count") \
                or not type_ok(peak.get("offset"), "count or null"):
            return False
    curve = pressure.get("vgpr_curve", [])
    if not isinstance(curve, list) or not all(type_ok(v, "count") for v in curve) \
            or not type_ok(pressure.get("code_bytes", 0), "count"):
        return False
    origins = pressure.get("vgpr_peak_origins", [])
    offsets = pressure.get("scratch_offsets", [])
    if not isinstance(origins, list) or not all(_origin_ok(found) for found in origins) \
            or not isinstance(offsets, list) or not all(type_ok(at, "count") for at in offsets):
        return False
    held = pressure.get("at_vgpr_peak")
    if held is None:
        return True
    groups = held.get("groups") if isinstance(held, dict) else None
    return (isinstance(groups, list) and "source" in held and _source_ok(held["source"])
            and all(_group_ok(group) for group in groups[:1]) and _loop_ok(held.get("loop")))


def _origin_ok(found: Any) -> bool:
    return (isinstance(found, dict) and type_ok(found.get("count"), "count")
            and type_ok(found.get("defined_by"), "string") and "source" in found and _source_ok(found["source"]))


def _loop_ok(loop: Any) -> bool:
    """at_vgpr_peak.loop (version 6; absent before): null, or its offsets and lines."""
    return loop is None or (isinstance(loop, dict) and type_ok(loop.get("start"), "count")
                            and type_ok(loop.get("end"), "count") and "head" in loop and "back_branch" in loop
                            and _source_ok(loop["head"]) and _source_ok(loop["back_branch"]))


def next_step_ok(step: dict) -> bool:
    """The report schema's OccupancyNext: waves, and a list of needs."""
    needs = step.get("needs")
    return (set(step) == {"waves", "needs"} and type_ok(step["waves"], "count") and isinstance(needs, list)
            and all(isinstance(n, dict) and set(n) == {"resource", "at_most"}
                    and n["resource"] in NEED_ORDER and type_ok(n["at_most"], "count")
                    for n in needs))


def check_head(head: dict, kernels: str | None, file: str) -> list[dict]:
    """The document-level members of a report (every top-level member but the
    kernels; ``kernels`` is the JSON type of its kernels member, None when it
    has none).  Returns its ``files`` entries."""
    from spillway import __version__

    schema = head.get("schema")
    if schema not in READABLE_REPORT_SCHEMAS:
        if isinstance(schema, str) and schema.startswith("spillway.report/"):
            raise InputError(f"report schema {schema} is not one this spillway ({__version__}) reads "
                             f"({', '.join(READABLE_REPORT_SCHEMAS)})", file=file)
        raise InputError(f"not a spillway report or baseline (schema {shown(schema)})", file=file)
    if kernels != "array":
        raise InputError("report has no kernels list", file=file)
    if "kernels.item" in head:
        # ijson names the kernels list's records "kernels.item": a member of that name would
        # be read as one of them by the general reader.
        raise InputError("not a spillway report (a top-level member is named 'kernels.item')", file=file)
    files = head.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
        raise InputError(f"report files is {shown(files)}, not a list of objects", file=file)
    return files


# -- the document ---------------------------------------------------------------

# spillway's layout (report.reader.report_json and json_chunks; baseline.render
# writes the same frame): members before the kernels, the kernels one per line,
# and members after them (report_json writes files there, known only at the end).
_OPEN: Final = b"{\n"
_KERNELS: Final = b'  "kernels": [\n'
_KERNELS_EMPTY: Final = b'  "kernels": []\n'          # and the document ends
_KERNELS_EMPTY_MORE: Final = b'  "kernels": [],\n'    # and members follow
_KERNELS_LINES: Final = (_KERNELS, _KERNELS_EMPTY, _KERNELS_EMPTY_MORE)
_CLOSE: Final = b"  ]\n"
_CLOSE_MORE: Final = b"  ],\n"
_END: Final = b"}\n"
_INDENT: Final = b"    "
_HEAD_LIMIT: Final = 64 << 20      # bytes of head before the kernels line: beyond, the general reader
_LINE_LIMIT: Final = 64 << 20      # bytes of one record line: beyond, the general reader
_BUFFER: Final = 1 << 20
_CHUNK: Final = 1 << 16            # ijson's read size
_JSON_TYPES: Final = {"start_array": "array", "start_map": "object", "string": "string", "number": "number",
                      "boolean": "boolean", "null": "null"}


class _NotOwnLayout(Exception):
    """The document left spillway's one-record-per-line layout: read it again
    with the general reader."""


class _Surrogates(Exception):
    """ijson's C backend met a ``\\udcXX`` escape it cannot return."""


class ReportJson:
    """A report (or baseline) JSON document being read.  ``head`` holds every
    top-level member but the kernels; ``read`` streams the kernel records.

    ``path`` is what to open (paths.readable: standard input's copy for ``-``),
    ``file`` the name errors give."""

    def __init__(self, path: str, file: str):
        self.path = path
        self.file = file
        self.head: dict = {}
        self.kernels: str | None = None      # the JSON type of the kernels member (None: there is none)
        self.files: list[dict] = []          # the report's files entries, once read has begun
        self.layout = "lines"                # or "general"
        self._backend: Any = None            # general: the ijson backend
        own = self._own_head()
        if own is None:
            self._scan()
        else:
            self.head = own[0]
            self.kernels = "array"

    def read(self, consume: Callable[[Iterator[dict]], T]) -> T:
        """``consume(records)`` over every kernel record, each checked by
        check_record before it is yielded, once the head passed check_head.
        ``consume`` is called a second time (from the first record) when the
        document leaves spillway's layout part-way: it must start afresh each
        time.  Its result is returned once the document has been read to its end."""
        if self.layout == "lines":
            try:
                return consume(self._own_records())
            except _NotOwnLayout:
                self._scan()
        return consume(self._general_records())

    def _open(self) -> "BinaryIO":
        try:
            return open(self.path, "rb", buffering=_BUFFER)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", file=self.file) from None

    def _cannot_read(self, exc: OSError) -> InputError:
        return InputError(f"cannot read: {exc.strerror}", file=self.file)

    # -- spillway's layout -------------------------------------------------------

    def _own_head(self) -> tuple[dict, bytes] | None:
        """(members before the kernels, the kernels line) when the document
        starts in spillway's layout; None otherwise."""
        lines: list[bytes] = []
        size = 0
        with self._open() as handle:
            try:
                if handle.readline(len(_OPEN)) != _OPEN:
                    return None
                while True:
                    line = handle.readline(_HEAD_LIMIT)
                    if line in _KERNELS_LINES:
                        break
                    size += len(line)
                    if not line.endswith(b"\n") or size > _HEAD_LIMIT:
                        return None
                    lines.append(line)
                # A first record over several lines (jq ., json.dumps(indent=2)): not this layout.
                first = handle.readline(_LINE_LIMIT) if line == _KERNELS else b""
            except OSError as exc:
                raise self._cannot_read(exc) from None
        if first.startswith(_INDENT + b"{") and not first.rstrip(b",\n").endswith(b"}"):
            return None
        if not lines:
            return {}, line
        text = b"".join(lines).rstrip()
        if not text.endswith(b","):
            return None
        head = _own_head_members(b"{\n" + text[:-1] + b"\n}")
        return None if head is None else (head, line)

    def _own_records(self) -> Iterator[dict]:
        if self.head.get("schema") not in READABLE_REPORT_SCHEMAS:
            # The schema may follow the kernels (spillway writes it first): the general
            # reader finds every member, and gives the error if there is one.
            raise _NotOwnLayout
        with self._open() as handle:
            try:
                yield from self._own_lines(handle)
            except OSError as exc:
                raise self._cannot_read(exc) from None

    def _own_lines(self, handle: "BinaryIO") -> Iterator[dict]:
        readline = handle.readline
        while True:                     # past the head, read already
            line = readline(_HEAD_LIMIT)
            if line in _KERNELS_LINES:
                break
            if not line:                # it was there when the head was read: the file changed
                raise InputError("changed while it was read", file=self.file)
        index = 0
        closing = line                  # for an empty list: what its line says follows
        if line == _KERNELS:
            more = True                 # the line before ended with a comma (or opened the list)
            while more:
                line = readline(_LINE_LIMIT)
                if line in (_CLOSE, _CLOSE_MORE):
                    if index:           # "...},\n  ]": a trailing comma; let the general reader say where
                        raise _NotOwnLayout
                    closing = line
                    break
                if not line.endswith(b"\n"):
                    if len(line) >= _LINE_LIMIT:
                        raise _NotOwnLayout
                    raise self._truncated(index, "inside the kernels list")
                if not line.startswith(_INDENT):
                    raise _NotOwnLayout
                end = len(line) - 1
                more = line[end - 1] == 0x2C          # a comma: another record follows
                try:
                    record = json_loads(line[len(_INDENT):end - more])
                except ValueError:
                    raise _NotOwnLayout from None
                check_record(record, index, self.file)
                yield record
                index += 1
            else:
                closing = readline(len(_CLOSE_MORE))
                if closing not in (_CLOSE, _CLOSE_MORE):
                    self._expect(closing, _CLOSE, index)
        if closing in (_CLOSE_MORE, _KERNELS_EMPTY_MORE):
            self._members_after(handle.read(_HEAD_LIMIT + 1), index)
        else:
            tail = handle.read(len(_END) + 1)
            if tail != b"}":
                self._expect(tail, _END, index)
        self.files = check_head(self.head, self.kernels, self.file)

    def _members_after(self, text: bytes, index: int) -> None:
        """The members after the kernels list, to the end of the document."""
        if not text.strip():
            raise self._truncated(index, "after the kernels list")
        if len(text) > _HEAD_LIMIT:
            raise _NotOwnLayout
        after = _own_head_members(b"{\n" + text)
        if after is None or after.keys() & self.head.keys():
            raise _NotOwnLayout     # not JSON, or a member twice: the general reader says which
        self.head = {**self.head, **after}

    def _expect(self, found: bytes, expected: bytes, index: int) -> None:
        if found == expected:
            return
        if len(found) < len(expected) and expected.startswith(found):
            raise self._truncated(index, "before its closing brackets")
        raise _NotOwnLayout

    def _truncated(self, index: int, where: str) -> InputError:
        return InputError(f"not valid JSON: the document ends {where}, after {index} complete kernel "
                          f"record{'s' if index != 1 else ''} (truncated?)", file=self.file)

    # -- any layout --------------------------------------------------------------

    def _scan(self) -> None:
        """First pass of the general reader: the whole document's syntax, and
        every top-level member but the kernels."""
        import ijson

        self.layout = "general"
        try:
            self._backend = ijson.get_backend("yajl2_c")
        except ImportError:         # pragma: no cover - the wheels ship the C backend
            self._backend = ijson.get_backend("python")
        try:
            self.head, self.kernels = self._scan_with_backend()
        except _Surrogates:
            self._backend = ijson.get_backend("python")
            self.head, self.kernels = self._scan_with_backend()

    def _scan_with_backend(self) -> tuple[dict, str | None]:
        with self._open() as handle:
            try:
                return self._scan_events(iter(self._backend.parse(_NewlineAtEnd(handle), use_float=True,
                                                                  buf_size=_CHUNK)))
            except Exception as exc:   # ijson's errors, decoding, reading: each becomes one line
                raise self._json_error(exc, handle) from None

    def _json_error(self, exc: Exception, handle: "BinaryIO") -> Exception:
        import ijson

        if isinstance(exc, (InputError, _Surrogates)):
            return exc
        if isinstance(exc, UnicodeDecodeError) and self._backend.backend_name == "yajl2_c":
            return _Surrogates()
        if isinstance(exc, OSError):
            return self._cannot_read(exc)
        where = f"at or before byte {_position(handle)}"
        if isinstance(exc, UnicodeDecodeError):
            return InputError(f"not valid JSON: not UTF-8 text ({exc.reason}, {where})", file=self.file)
        if isinstance(exc, RecursionError):
            return InputError(f"not valid JSON for spillway: nested too deeply ({where})", file=self.file)
        if isinstance(exc, (ijson.JSONError, ValueError)):   # ijson's pure-Python backend raises json's too
            reason = _reason(exc)
            if "premature EOF" in reason or "Incomplete" in reason:
                reason += ", truncated?"
            return InputError(f"not valid JSON: {reason} ({where})", file=self.file)
        return exc

    def _scan_events(self, events: Iterator[tuple[str, str, Any]]) -> tuple[dict, str | None]:
        from ijson.common import ObjectBuilder

        first = next(events, None)
        if first is None or first[1] != "start_map":
            raise InputError("not a spillway report or baseline (the document is not a JSON object)",
                             file=self.file)
        head: dict = {}
        kernels: str | None = None
        seen: set[str] = set()
        for _prefix, event, key in events:
            if event == "end_map":
                break
            # A map_key: one top-level member follows.
            if key in seen:
                raise InputError(f"not valid JSON for spillway: the top-level member {shown(key)} appears "
                                 f"twice", file=self.file)
            seen.add(key)
            prefix, event, value = next(events)
            if key == "kernels":
                kernels = _JSON_TYPES[event]
                if event == "start_array":
                    for prefix, event, value in events:    # the records: read by the second pass
                        if prefix == "kernels" and event == "end_array":
                            break
                    continue
            if event in ("start_map", "start_array"):
                builder = ObjectBuilder()
                builder.event(event, value)
                depth = 1
                for prefix, event, value in events:
                    builder.event(event, value)
                    if event in ("start_map", "start_array"):
                        depth += 1
                    elif event in ("end_map", "end_array"):
                        depth -= 1
                        if not depth:
                            break
                value = builder.value
            if key != "kernels":
                head[key] = value
        for _ in events:       # the parser raises on anything but white space after the document
            pass
        return head, kernels

    def _general_records(self) -> Iterator[dict]:
        self.files = check_head(self.head, self.kernels, self.file)
        with self._open() as handle:
            index = 0
            try:
                for record in self._backend.items(_NewlineAtEnd(handle), "kernels.item", use_float=True,
                                                  buf_size=_CHUNK):
                    check_record(record, index, self.file)
                    yield record
                    index += 1
            except Exception as exc:   # the first pass read it whole: the file changed since
                raise self._json_error(exc, handle) from None


class _NewlineAtEnd:
    """A file that reads one newline more at its end, in its last chunk.  yajl
    (ijson's C backend) takes a string left open after the document at the end
    of the input (``{} "``) for complete; a newline in that string, in the same
    chunk, makes it the error it is, and after a complete document it is white
    space.  (Reads one chunk ahead to know which chunk is the last.)"""

    def __init__(self, handle: "BinaryIO"):
        self.handle = handle
        self.ahead: bytes | None = None
        self.ended = False

    def read(self, size: int = -1) -> bytes:
        if size == 0:                   # ijson's probe for bytes or text
            return b""
        data = self.handle.read(size) if self.ahead is None else self.ahead
        if self.ended:
            self.ahead = b""
            return data
        self.ahead = self.handle.read(size) if data else b""
        if not self.ahead:
            self.ended = True
            return data + b"\n"
        return data


def _own_head_members(text: bytes) -> dict | None:
    """The head of spillway's layout as an object: None when it is not one, or
    names a member twice or names the kernels (the general reader says which).
    The standard library's json: it gives every object's pairs, and reads the
    \\udcXX escapes of paths that are not UTF-8; the head is small."""
    import json

    repeated: list[bool] = []        # per object, innermost first: the head's own is last

    def pairs(items: list[tuple[str, Any]]) -> dict:
        found = dict(items)
        repeated.append(len(found) != len(items))
        return found

    try:
        head = json.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None
    if not isinstance(head, dict) or repeated[-1] or "kernels" in head:
        return None
    return head


def _reason(exc: Exception) -> str:
    """The first line of an ijson error (yajl's repeat the text with a caret below)."""
    text = str(exc).strip()
    if text.startswith(("b'", 'b"')):
        text = text[2:].replace("\\n", "\n")
    return text.splitlines()[0].strip() if text else type(exc).__name__


def _position(handle: "BinaryIO") -> int:
    try:
        return handle.tell()
    except (OSError, ValueError):
        return 0


def open_report(path: str, file: str | None = None) -> ReportJson:
    """Open a JSON document named on the command line (``-``: standard input)
    for reading as a report: its head is read (spillway's layout) or the whole
    document is checked (any other layout).  InputError when it cannot be read
    or is not valid JSON."""
    from spillway.paths import readable

    return ReportJson(readable(path), file or path)
