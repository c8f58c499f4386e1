"""Baseline files: per-compiler allowances for every kernel, committed by the
user and read by ``spillway check``.

Format (``spillway.baseline/3``; versions 1 and 2 are still read, and written
as version 3 when updated; ``spillway schema baseline`` prints the JSON
schema).  Version 4 is version 3 with the machine code's figures
(``loop_scratch``, ``agpr_copies``: gate.metrics.CODE_GATES) recorded and
gated: a baseline is written as version 4 only when it records them, so a
spillway that reads only version 3 refuses it rather than misreading it::

    {
      "schema": "spillway.baseline/3",
      "note": "clang-22, release build",
      "gate": ["scratch"],
      "provenance": {...compilers, code object versions, targets, files + SHA-256,
                     spillway version, creation time...},
      "occupancy_model": "llvm23",
      "record_all": false,
      "kernels_written_from": {"gfx1100": 17129, "gfx90a": 17129},
      "kernels": [
        {"key":"_Z4topkILi32EEvPKfiPfPi","targets":[{"target":"gfx1100","scratch":272,"vgprs":61,"sgprs":24,
         "occupancy":16},{"target":"gfx90a","scratch":280,"vgprs":64,"agprs":0,"sgprs":30,"occupancy":8}]},
        ...
      ]
    }

One line per kernel key, sorted by key, its targets sorted within the line:
a toolchain update's diff shows one line per kernel that changed.  Each
target holds the figures recorded when the baseline was written (the worst
seen), fields at their default left out (zero scratch, spills and LDS, no
dynamic stack, null AGPRs and occupancy).  The allowance of each gated
metric is the recorded figure (a dynamic stack is allowed when one was
recorded), unless the target has an ``allow`` object: then that holds the
allowances (an update that kept an allowance lower than the new figure, see
``build``), with ``reason`` saying why one was raised.  Occupancy is a floor,
the other metrics ceilings (gate.metrics.METRICS); ``check --gate`` holds
metrics the baseline does not gate to the recorded figures, and ``compare``
uses the recorded figures as one side.

The demangled name is not stored: it is the key demangled
(resources.names.demangle), with versioned inline namespaces in their
normalized spelling (``rocprim::ROCPRIM_NS::``).  On librocsparse 7.2.4 the
names were 3.4 MB of the 5.9 MB version-2 file and would still be 0.8 MB
once per key, more than the rest of the version-3 file; the tables' short
name (resources.names.table_name) is lossy (16 of its 712 keys share one
with another key) and takes 0.2 ms per key to make.

Version 1 and 2 files hold one line per (target, key) with the demangled
name, ``allow`` and the full ``recorded`` figures; they are read into the
same entries (``Baseline.kernels``), so check, compare and updates do not
know which version a file was.

The same input gives the same bytes: ``provenance.created`` is taken from
SOURCE_DATE_EPOCH when set, otherwise kept from the existing file when
nothing else changed, otherwise the current time (UTC, seconds).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import operator
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Final, Iterator, Literal, Mapping, Optional, Sequence, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from spillway import __version__, atomic
from spillway import json_codec
from spillway.paths import readable
from spillway.report.record import PATH_ENCODING
from spillway.errors import InputError, UsageError
from spillway.gate.kernels import Inputs, Kernel, KernelUsage, Resources
from spillway.gate.metrics import ALL_KERNEL_GATES, METRICS, MetricName, needs_code, refuse_without_code
from spillway.resources.occupancy import UNNAMED_MODEL
from spillway.resources.targets import target_selected
from spillway.resources.names import demangle, display_key, short_name
from spillway.json_codec import published_schema

SCHEMA: Final = "spillway.baseline/3"
SCHEMA_V4: Final = "spillway.baseline/4"   # version 3 with the machine code's figures (written only with them)
SCHEMA_V5: Final = "spillway.baseline/5"   # version 3 or 4 with provenance.backend (written only with one)
SCHEMA_V2: Final = "spillway.baseline/2"   # committed by users: read, never written
SCHEMA_V1: Final = "spillway.baseline/1"
BASELINE_PREFIX = "spillway.baseline/"
SCHEMA_VERSION = 5
READ_SCHEMAS: Final = (SCHEMA_V5, SCHEMA_V4, SCHEMA, SCHEMA_V2, SCHEMA_V1)


class Allowance(BaseModel):
    """What a kernel may use.  Only gated metrics are present."""

    model_config = ConfigDict(extra="forbid")

    scratch: Optional[int] = Field(None, ge=0, description="Most scratch bytes per lane "
                                                           "(private_segment_fixed_size)")
    dynamic_stack: Optional[bool] = Field(None, description="With scratch: true when the kernel may use a "
                                                            "dynamic stack (absent means it may not)")
    spills: Optional[int] = Field(None, ge=0, description="Most spilled registers: vgpr_spill_count + "
                                                          "sgpr_spill_count")
    occupancy: Optional[int] = Field(None, ge=0, description="Fewest waves per SIMD (a floor)")
    vgprs: Optional[int] = Field(None, ge=0, description="Most VGPRs (vgpr_count)")
    lds: Optional[int] = Field(None, ge=0, description="Most static LDS bytes (group_segment_fixed_size)")
    loop_scratch: Optional[int] = Field(None, ge=0, description="Most scratch accesses inside loops (machine "
                                                                "code; version 4)")
    agpr_copies: Optional[int] = Field(None, ge=0, description="Most v_accvgpr_write + v_accvgpr_read "
                                                               "instructions (machine code; version 4)")


# The values recorded when the baseline was written: the one resource record
# (gate.kernels.Resources), validated and published by pydantic from its annotations.
Recorded = Resources

class Entry(BaseModel):
    """One kernel on one target: what every version is read into (and the
    line of a version 1 or 2 file)."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(description="Target ID, e.g. gfx90a:xnack-")
    key: str = Field(description="Stable mangled key (versioned inline namespaces normalized)")
    name: str = Field(description="Demangled name, for readers")
    allow: Allowance
    recorded: Recorded
    reason: Optional[str] = Field(None, description="Why an allowance was raised (baseline write --allow "
                                                    "PATTERN --reason TEXT)")


class SourceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="As named on the command line" + PATH_ENCODING)
    sha256: str = Field(pattern="^[0-9a-f]{64}$", description="SHA-256 of the file; for a directory, of the "
                                                              "sorted list of its files' paths and SHA-256")


class WheelProvenance(BaseModel):
    """The Python wheel a back end's library came from."""

    model_config = ConfigDict(extra="forbid")

    package: str = Field(description="Package on the Python package index (rocm-bindings-compiler)")
    version: str = Field(description="Its version (10.0.0.0.1.2)")
    file: str = Field(description="The wheel's file name")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="The wheel's SHA-256, as pinned in cells.toml")


class BackendProvenance(BaseModel):
    """The code generator of a build whose front end is another compiler (a
    matrix cell with a back end: AMD's LLVM from a wheel).  The code objects'
    .comment names only the front end and the linker, so it is recorded here
    (version 5)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The cells file's [backends] table")
    rocm: str = Field(description="The back end's ROCm release")
    llvm_version: str = Field(description="AMD LLVM version, as the library names itself (23.0.0git)")
    llvm_commit: str = Field(pattern=r"^[0-9a-f]{40}$", description="The llvm-project commit the library names")
    library_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the library")
    front_end: str = Field(description="The front end's --version line (it produced the device IR)")
    dropped_attributes: list[str] = Field(description="Attributes the front end wrote that the back end's reader "
                                                      "does not know, removed from the device IR")
    wheel: WheelProvenance


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spillway_version: str
    created: str = Field(description="UTC, ISO 8601; SOURCE_DATE_EPOCH when set; kept from the previous "
                                     "file when nothing else changed")
    compilers: list[str] = Field(description="Producers from the code objects' .comment")
    code_object_versions: list[int]
    targets: list[str]
    files: list[SourceFile]
    flags: Optional[list[str]] = Field(
        None, description="Code-generation flags of the build it was written from: a matrix cell's flags, "
                          "--flags, or those of the command lines the compiler recorded in the code objects "
                          "(-frecord-command-line); check warns when a build's differ. Absent: not known")
    backend: Optional[BackendProvenance] = Field(
        None, description="The code generator when it is not the front end (version 5 only): AMD's LLVM from a "
                          "wheel behind an upstream clang")


class Removal(BaseModel):
    """A kernel, or a whole target, the baseline had and the build no longer
    builds, whose removal was accepted (baseline write --allow-removed KEY,
    --allow-removed-target TARGET, with --reason)."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(description="Target ID")
    key: Optional[str] = Field(None, description="The kernel's stable key; absent: every kernel of the target "
                                                 "(the target is no longer built)")
    reason: str = Field(min_length=1, description="Why it was removed")


class _Header(BaseModel):
    """What every version holds before its kernels."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(alias="schema")
    note: str
    gate: list[MetricName] = Field(min_length=1, description="Metrics this baseline gates (check --gate "
                                                             "overrides)")
    provenance: Provenance
    occupancy_model: Optional[Literal["llvm22", "llvm23", "llvm24", "producer"]] = Field(
        None, description="The occupancy model the recorded figures follow (producer: per code object, the "
                          "producing LLVM's); check applies it unless told otherwise; absent: llvm22")
    record_all: Optional[bool] = Field(
        None, description="true: every kernel read is recorded; false: only kernels whose gated metrics are "
                          "non-zero (kernels absent are held to zero); absent (version 1 files): every kernel")
    kernels_written_from: Optional[dict[str, int]] = Field(
        None, description="Per target, the number of distinct kernels (target, key) the baseline was written "
                          "from, recorded or not")
    removed: Optional[list[Removal]] = Field(
        None, description="Kernels and targets no longer built whose removal was accepted, with why (check fails "
                          "on a baseline kernel or target the build no longer has until then); sorted by target "
                          "and key; absent when there is none")


class Baseline(_Header):
    """A baseline of any version as spillway works with it: one entry per
    (target, key).  Also the model of version 1 and 2 files."""

    schema_: Literal["spillway.baseline/1", "spillway.baseline/2", "spillway.baseline/3",
                     "spillway.baseline/4", "spillway.baseline/5"] = Field(SCHEMA, alias="schema")
    kernels: list[Entry] = Field(description="Sorted by (target, key), unique")

    @property
    def records_every_kernel(self) -> bool:
        return self.record_all is not False

    def targets_built(self) -> set[str]:
        """The targets the build it was written from had (and every build it is held to
        must have): ``kernels_written_from``'s, else (versions 1 and 2 files without it)
        the provenance's; with those of its kernels."""
        found = set(self.kernels_written_from) if self.kernels_written_from else set(self.provenance.targets)
        return found | {e.target for e in self.kernels}


# -- version 3: one line per key ------------------------------------------------

# Resources fields a version-3 target leaves out at these values; the others
# (vgprs, sgprs) are always written.
FIGURE_DEFAULTS: Final[dict[str, object]] = {"scratch": 0, "dynamic_stack": False, "vgpr_spills": 0,
                                             "sgpr_spills": 0, "agprs": None, "lds": 0, "occupancy": None,
                                             "loop_scratch": None, "agpr_copies": None}
FIGURES: Final = tuple(f.name for f in dataclasses.fields(Resources))
_REQUIRED = object()
_FIGURE_FIELDS: Final = tuple((name, FIGURE_DEFAULTS.get(name, _REQUIRED)) for name in FIGURES)


def _target_figures_model() -> Any:
    """The version-3 target object: the Resources fields with their annotations
    (types, bounds, descriptions: one definition of the record), defaults
    where FIGURE_DEFAULTS has one, then ``allow`` and ``reason``."""
    hints = get_type_hints(Resources, include_extras=True)
    fields: dict[str, Any] = {"target": (str, Field(description="Target ID, e.g. gfx90a:xnack-"))}
    for name, default in _FIGURE_FIELDS:
        fields[name] = (hints[name], ... if default is _REQUIRED else default)
    fields["allow"] = (Optional[Allowance], Field(
        None, description="The allowances, when they are not the recorded figures of the gated metrics"))
    fields["reason"] = (Optional[str], Field(
        None, description="Why an allowance was raised (baseline write --allow PATTERN --reason TEXT)"))
    return create_model("TargetFigures", __config__=ConfigDict(extra="forbid"),
                        __doc__="One target of a kernel: the recorded figures (worst seen), at their defaults "
                                "when absent", **fields)


TargetFigures = _target_figures_model()


class KernelLine(BaseModel):
    """One kernel key and its targets: one line of a version-3 file."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="Stable mangled key (versioned inline namespaces normalized); the demangled "
                                 "name is derived from it")
    targets: list[TargetFigures] = Field(  # type: ignore[valid-type]  # a model made by create_model
        min_length=1, description="Sorted by target ID, unique")


class BaselineDocument(_Header):
    """A version-3, -4 or -5 baseline file (``spillway schema baseline`` publishes its schema):
    version 4 records the machine code's figures (loop_scratch, agpr_copies), version 3 never does;
    version 5 records a back end (provenance.backend), and may record the machine code's figures."""

    schema_: Literal["spillway.baseline/3", "spillway.baseline/4", "spillway.baseline/5"] = Field(SCHEMA,
                                                                                                  alias="schema")
    record_all: bool = Field(description="true: every kernel read is recorded; false: only kernels whose gated "
                                         "metrics are non-zero (kernels absent are held to zero)")
    kernels_written_from: dict[str, int] = Field(
        description="Per target, the number of distinct kernels (target, key) the baseline was written from, "
                    "recorded or not")
    kernels: list[KernelLine] = Field(description="One line per kernel key, sorted by key, unique")


def implied_allowance(gate: Sequence[str], recorded: Resources) -> dict[str, Any]:
    """The allowances a version-3 target without ``allow`` has: each gated
    metric at its recorded figure, and a dynamic stack when scratch is gated
    and one was recorded (as ``Allowance.model_dump(exclude_none=True)``)."""
    out: dict[str, Any] = {}
    for name in gate:
        value = METRICS[name].value(recorded)
        if value is not None:
            out[name] = value
    if "scratch" in gate and recorded.dynamic_stack:
        out["dynamic_stack"] = True
    return out


def _shared_allowance(allowances: dict[tuple, Allowance], values: Mapping[str, Any]) -> Allowance:
    """The one Allowance of these values in ``allowances`` (made on first use):
    a library's kernels share few distinct allowances, as they share their
    Resources (a record-all baseline of librocsparse1 7.2.4: 239,806 entries)."""
    ident = tuple(values.items())
    allow = allowances.get(ident)
    if allow is None:
        allow = allowances[ident] = Allowance(**values)
    return allow


def _allowance_dict(allow: Allowance) -> dict[str, object]:
    """The allowance without absent fields; ``dynamic_stack: false`` means the
    same as absent."""
    out = allow.model_dump(exclude_none=True)
    if out.get("dynamic_stack") is False:
        del out["dynamic_stack"]
    return out


def _expanded(document: dict, path: str) -> Baseline:
    """A version-3 document (parsed JSON) as entries, one per (target, key).

    Validated line by line (KernelLine) and expanded as it goes, so only one
    line's models exist at a time; the entries share their Resources and
    Allowance objects (a record-all baseline of librocsparse has 239,806
    entries but far fewer distinct figures), then are validated as a whole by
    pydantic-core, which keeps those instances.  InputError names what is
    wrong, as ``kernels.N.targets.M.field``."""
    lines = document.get("kernels")
    head = dict(document)
    if isinstance(lines, list):
        head["kernels"] = []            # validated below, line by line
    header = _validated_model(BaselineDocument, head, path)
    gate = list(header.gate)
    # Recorded figures -> their Resources and the allowance they imply, each made once.
    figures: dict[tuple, tuple[Resources, Allowance]] = {}
    allowances: dict[tuple, Allowance] = {}
    values_of = operator.attrgetter(*FIGURES)
    entries: list[dict[str, Any]] = []
    for index, raw in enumerate(lines or ()):
        try:
            line = KernelLine.model_validate(raw)
        except ValidationError as exc:
            raise _invalid(exc, path, f"kernels.{index}.") from None
        name = demangle(line.key)
        target: Any                     # a TargetFigures (made by create_model)
        for target in line.targets:
            values = values_of(target)
            known = figures.get(values)
            if known is None:
                recorded = Resources(*values)
                known = figures[values] = (recorded, _shared_allowance(allowances, implied_allowance(gate, recorded)))
            recorded, implied = known
            allow = implied if target.allow is None else target.allow
            entries.append({"target": target.target, "key": line.key, "name": name, "recorded": recorded,
                            "allow": allow, "reason": target.reason})
    entries.sort(key=lambda e: (e["target"], e["key"]))
    fields = {name: getattr(header, name) for name in _Header.model_fields}
    fields["schema"] = fields.pop("schema_")
    return _validated_model(Baseline, {**fields, "kernels": entries}, path)


def _validated_model(model, document: dict, path: str):
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise _invalid(exc, path) from None


def _invalid(exc: ValidationError, path: str, prefix: str = "") -> InputError:
    first = exc.errors()[0]
    where = prefix + ".".join(str(p) for p in first["loc"]) or "document"
    more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
    return InputError(f"invalid baseline: {where}: {first['msg']}{more}", file=path)


def json_schema() -> dict:
    return published_schema(BaselineDocument, "baseline-5.json")


# -- reading -------------------------------------------------------------------

def parse_baseline(document, path: str) -> Baseline:
    """A parsed JSON document -> Baseline, or InputError naming what is wrong."""
    schema = document.get("schema") if isinstance(document, dict) else None
    if not (isinstance(schema, str) and schema.startswith(BASELINE_PREFIX)):
        raise InputError(f"not a spillway baseline (schema {schema!r}, expected {SCHEMA}); write one with "
                         f"'spillway baseline write'", file=path)
    if schema not in READ_SCHEMAS:
        version = schema[len(BASELINE_PREFIX):]
        newer = version.isdigit() and int(version) > SCHEMA_VERSION
        raise InputError(f"baseline schema {schema} is {'newer than' if newer else 'not'} what this "
                         f"spillway {__version__} reads ({', '.join(READ_SCHEMAS)})"
                         + ("; upgrade spillway" if newer else ""), file=path)
    if schema in (SCHEMA, SCHEMA_V4, SCHEMA_V5):
        baseline = _validated(path, lambda: _expanded(document, path))
        if (schema == SCHEMA_V5) != (baseline.provenance.backend is not None):
            raise InputError(f"invalid baseline: provenance.backend is {'missing' if schema == SCHEMA_V5 else 'set'} "
                             f"in a {schema} file (version 5 records a back end, 3 and 4 never do)", file=path)
        return baseline
    return _validated(path, lambda: Baseline.model_validate(document))


def _validated(path: str, validate) -> Baseline:
    try:
        baseline = validate()
    except ValidationError as exc:
        raise _invalid(exc, path) from None
    seen: set[Kernel] = set()
    for entry in baseline.kernels:
        ident = (entry.target, entry.key)
        if ident in seen:
            raise InputError(f"invalid baseline: kernel {entry.key} on {entry.target} is listed twice", file=path)
        seen.add(ident)
    return baseline


def load_baseline(path: str) -> Baseline:
    return read_baseline(path)[0]


def read_baseline(path: str) -> tuple[Baseline, bytes]:
    """The baseline file at ``path``, and its bytes as read (check's SARIF locates
    each kernel at its line in them: the file is read once)."""
    try:
        with open(readable(path), "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise InputError(f"cannot read baseline: {exc.strerror}", file=path) from None
    return parse_baseline_bytes(data, path), data


def parse_baseline_bytes(data: bytes, path: str) -> Baseline:
    if _SCHEMA_FIELD.search(data[:512]):
        # Versions 1 and 2, validated straight from the bytes by pydantic-core:
        # about a third faster than a dict first on 80,000 kernels.  (Version 3
        # is validated line by line from the parsed document.)
        try:
            return _validated(path, lambda: Baseline.model_validate_json(data))
        except InputError:
            pass   # explained below, from the parsed document
    try:
        document = json_codec.loads(data)
    except json_codec.JSONDecodeError as exc:
        raise InputError(f"not a spillway baseline: not valid JSON ({exc})", file=path) from None
    return parse_baseline(document, path)


# What version 1 and 2 files start with; other spellings take the general path.
_SCHEMA_FIELD = re.compile(rb'\A\{\s*"schema":\s*"spillway\.baseline/[12]"')


def recorded_model(baseline: Baseline) -> str:
    """The occupancy model a baseline's figures follow (a version-1 file names none)."""
    return baseline.occupancy_model or UNNAMED_MODEL


def baseline_usage(baseline: Baseline) -> dict[Kernel, KernelUsage]:
    """The recorded values as kernel usage (compare accepts a baseline as a side)."""
    return {(e.target, e.key): KernelUsage(e.target, e.key, e.name, e.recorded) for e in baseline.kernels}


# -- writing -------------------------------------------------------------------

def render(baseline: Baseline) -> bytes:
    """Deterministic version-3 bytes: a pretty header, then one kernel key per
    line.  The entries' names are not written (they are the keys demangled)."""
    head = baseline.model_dump(by_alias=True, exclude={"kernels"})
    # An updated version 1 or 2 baseline is written as version 3; one recording the machine code as 4.
    head["schema"] = SCHEMA_V4 if _records_code(baseline) else SCHEMA
    if baseline.provenance.backend is not None:    # a back end: version 5 (with or without the code's figures)
        head["schema"] = SCHEMA_V5
    else:
        del head["provenance"]["backend"]
    if head["provenance"]["flags"] is None:   # not known: left out, as files before it were written
        del head["provenance"]["flags"]
    if not head["removed"]:                   # none accepted: left out, as files before it were written
        del head["removed"]
    else:                                     # a target's removal has no key
        head["removed"] = [{k: v for k, v in r.items() if v is not None} for r in head["removed"]]
    if head["record_all"] is None:   # version 1: every kernel read was recorded
        head["record_all"] = True
        written_from: dict[str, int] = {}
        for entry in baseline.kernels:
            written_from[entry.target] = written_from.get(entry.target, 0) + 1
        head["kernels_written_from"] = dict(sorted(written_from.items()))
    text = json_codec.dumps(head, indent=True)
    assert text.endswith(b"\n}")
    gate = list(baseline.gate)
    lines: list[bytes] = []
    entries = sorted(baseline.kernels, key=lambda e: (e.key, e.target))
    at = 0
    while at < len(entries):
        key = entries[at].key
        targets = []
        while at < len(entries) and entries[at].key == key:
            targets.append(_target_dict(entries[at], gate))
            at += 1
        lines.append(json_codec.dumps({"key": key, "targets": targets}))
    body = b'  "kernels": [\n' + b",\n".join(b"    " + line for line in lines) + b"\n  ]" if lines \
        else b'  "kernels": []'
    return text[:-2] + b",\n" + body + b"\n}\n"


def _records_code(baseline: Baseline) -> bool:
    return needs_code(baseline.gate) or any(e.recorded.loop_scratch is not None or e.recorded.agpr_copies is not None
                                            for e in baseline.kernels)


def _target_dict(entry: Entry, gate: Sequence[str]) -> dict:
    out: dict[str, object] = {"target": entry.target}
    recorded = entry.recorded
    for name, default in _FIGURE_FIELDS:
        value = getattr(recorded, name)
        if default is _REQUIRED or (value is not None if default is None else value != default):
            out[name] = value
    allow = _allowance_dict(entry.allow)
    if allow != implied_allowance(gate, recorded):
        out["allow"] = allow
    if entry.reason is not None:
        out["reason"] = entry.reason
    return out


def write_baseline(path: str, baseline: Baseline) -> None:
    try:
        atomic.write_bytes(path, render(baseline))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


# -- building and updating -------------------------------------------------------

def sha256_path(path: str) -> str:
    """SHA-256 of a file; of a directory, of 'relative path NUL sha256 LF' per file, sorted."""
    if os.path.isdir(path):
        return _directory_digest(path, {full: sha256_path(full) for full in _files_under(path)})
    digest = hashlib.sha256()
    for block in _file_blocks(path):
        digest.update(block)
    return digest.hexdigest()


def _file_blocks(path: str) -> Iterator[bytes]:
    """A file's bytes, a MiB at a time; an InputError when it cannot be read."""
    try:
        with open(readable(path), "rb") as handle:
            yield from iter(lambda: handle.read(1 << 20), b"")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None


def _files_under(path: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            if os.path.isfile(full):
                found.append(full)
    return found


def _directory_digest(path: str, digests: Mapping[str, str]) -> str:
    """sha256_path of a directory, from its files' digests (by full path)."""
    lines = [f"{os.path.relpath(full, path)}\0{digest}\n" for full, digest in digests.items()]
    return hashlib.sha256("".join(sorted(lines)).encode("utf-8", "surrogateescape")).hexdigest()


class SourceHasher:
    """sha256_path of the inputs, worked out a piece at a time while they are
    read: ``advance`` hashes the next few megabytes, and is called as each
    batch of rows comes back from the reader's workers, when the parent
    process would only wait (librocsparse1 7.2.4's 406 MB took 0.4 s after the
    read).  Standard input, and a path that cannot be read, are left out:
    build hashes them, and says what is wrong."""

    STEP = 4 << 20      # bytes per advance (about 4 ms)

    def __init__(self, paths: Sequence[str]):
        from spillway.paths import STDIN

        # input -> its files (None: the input is a file), standard input left out (the reader spools it)
        self._roots = {path: _files_under(path) if os.path.isdir(path) else None
                       for path in dict.fromkeys(paths) if path != STDIN}
        self._queue = [file for path, files in self._roots.items()
                       for file in (files if files is not None else [path])]
        self._queue.reverse()           # (popped from the end)
        self._files: dict[str, str | None] = {}   # file -> digest (None: could not be read)
        self._current: tuple[str, Iterator[bytes], Any] | None = None     # (file, its blocks, hash)

    def advance(self, size: int = STEP) -> None:
        while size > 0:
            if self._current is None:
                if not self._queue:
                    return
                file = self._queue.pop()
                self._current = (file, _file_blocks(file), hashlib.sha256())
            file, blocks, digest = self._current
            try:
                block = next(blocks, None)
            except InputError:
                self._files[file], self._current = None, None
                continue
            if block is None:
                self._files[file], self._current = digest.hexdigest(), None
                continue
            digest.update(block)
            size -= len(block)

    def digests(self) -> dict[str, str]:
        """Every input's digest that could be worked out (the rest hashed now)."""
        while self._queue or self._current is not None:
            self.advance(1 << 30)
        out: dict[str, str] = {}
        for path, files in self._roots.items():
            members = files if files is not None else [path]
            known = {file: digest for file in members if (digest := self._files.get(file))}
            if len(known) == len(members):
                out[path] = known[path] if files is None else _directory_digest(path, known)
        return out


def created_now() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None and epoch.strip():
        try:
            moment = datetime.fromtimestamp(int(epoch), timezone.utc)
        except (ValueError, OverflowError, OSError):
            raise UsageError(f"SOURCE_DATE_EPOCH is not a Unix time: {epoch!r}") from None
    else:
        moment = datetime.now(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def pattern_matches(pattern: str, key: str, name: str) -> bool:
    """--allow and --allow-removed patterns: a glob when they contain * ? [,
    else an exact name; tried against the kernel's stable key, its demangled
    name, the demangled name without versioned namespaces and the short name
    (no return type, no parameters: ``topk<32>``)."""
    shown = display_key(name)
    candidates = (key, name, shown, short_name(shown))
    if any(c in pattern for c in "*?["):
        return any(fnmatch.fnmatchcase(c, pattern) for c in candidates)
    return pattern in candidates


@dataclass(frozen=True)
class Allow:
    """One ``--allow PATTERN`` (pattern_matches) or ``--allow-key KEY`` (the
    stable key itself, character for character: what every printed accept
    command uses, since a kernel named ``*kernel*`` is also a glob), with its
    reason."""

    text: str
    reason: str
    exact_key: bool = False
    given_as: Optional[str] = None     # the option that gave it (--allow-removed-key ...); None: --allow[-key]

    def matches(self, usage: KernelUsage) -> bool:
        return self.matches_key(usage.key, usage.name)

    def matches_key(self, key: str, name: str) -> bool:
        return key == self.text if self.exact_key else pattern_matches(self.text, key, name)

    @property
    def option(self) -> str:
        return self.given_as or ("--allow-key" if self.exact_key else "--allow")


@dataclass
class Change:
    target: str
    key: str
    name: str
    metric: str             # a metric name, or "dynamic_stack"
    old: object
    new: object


@dataclass
class UpdateResult:
    baseline: Baseline
    updated: bool                                          # an existing baseline was updated
    tightened: list[Change] = field(default_factory=list)
    raised: list[Change] = field(default_factory=list)     # went up because --allow said so
    refused: list[Change] = field(default_factory=list)    # would go up; kept at the old value
    added: list[Kernel] = field(default_factory=list)
    removed: list[tuple[str, str, str]] = field(default_factory=list)     # gone, removal accepted
    removed_targets: list[str] = field(default_factory=list)              # gone whole, removal accepted
    # Gone from the build without --allow-removed: kept, so check keeps failing on them.
    kept_removed: list[tuple[str, str, str]] = field(default_factory=list)
    kept_targets: list[tuple[str, Optional[int]]] = field(default_factory=list)   # (target, kernels written from)
    kept_other_targets: int = 0

    @property
    def kept(self) -> bool:
        """Something would have gone up or away without --allow / --allow-removed (exit 1)."""
        return bool(self.refused or self.kept_removed or self.kept_targets)


def needs_every_kernel(gate) -> bool:
    return any(m in ALL_KERNEL_GATES for m in gate)


def recorded_by_default(resources: Resources, gate: tuple[str, ...]) -> bool:
    """Is the kernel in a baseline written without --record-all: does it use
    what a gated metric holds to zero (scratch or a dynamic stack, spills)?"""
    return (("scratch" in gate and (resources.scratch > 0 or resources.dynamic_stack))
            or ("spills" in gate and resources.vgpr_spills + resources.sgpr_spills > 0)
            or ("loop_scratch" in gate and bool(resources.loop_scratch))
            or ("agpr_copies" in gate and bool(resources.agpr_copies)))


def build(inputs: Inputs, *, note: str | None, gate: tuple[str, ...], previous: Baseline | None = None,
          allows: Sequence[Allow] = (), targets: list[str] | None = None,
          record_all: bool = False, digests: Mapping[str, str] | None = None,
          flags: list[str] | None = None, allow_removed: Sequence[Allow] = (),
          allow_removed_targets: Sequence[tuple[str, str]] = (),
          backend: BackendProvenance | None = None) -> UpdateResult:
    """A new baseline from ``inputs``, or ``previous`` updated.  ``digests``:
    sha256_path of inputs already worked out (SourceHasher); the others are
    hashed here.  ``flags``: the build's code-generation flags (None: not
    known; an update then keeps the previous baseline's).  ``backend``: the
    build's code generator when it is not the front end (a matrix cell's back
    end; None: an update keeps the previous baseline's).

    Updating: allowances that went down are tightened; an allowance that
    would go up keeps its old value (reported in ``refused``) unless one of
    ``allows`` matches the kernel, whose reason is then stored (on a
    new baseline every matched kernel gets the reason).  A kernel new to the
    baseline starts from zero scratch and zero spills, so a new kernel that
    spills needs --allow too.

    A kernel of the baseline the build no longer has, and a target it no
    longer builds at all (every kernel of it gone), are kept (``kept_removed``,
    ``kept_targets``: check keeps failing on them) unless an ``allow_removed``
    pattern matches the kernel or ``allow_removed_targets`` names the target
    (``(pattern or target, reason)``); then they are dropped and the removal
    and its reason recorded (``removed``).  Targets excluded with ``targets``
    are carried over as they were.

    Without ``record_all`` (and unless a gate needs every kernel, or the
    previous baseline recorded every kernel on purpose) only kernels whose
    gated metrics are non-zero, or whose allowance carries a reason, are
    written: the others are held to zero as absent kernels are.

    The steps: the kernels to look at (_candidates), each one's entry
    (_kernel_entry), what the build no longer has (_removals, _carried_over),
    the --allow patterns that matched nothing (_refuse_unmatched), then the
    header (_provenance, _occupancy_model, _written_from).
    """
    gate = tuple(m for m in METRICS if m in set(gate))
    refuse_without_code(inputs.usage, gate)
    record_all = bool(record_all or needs_every_kernel(gate)
                      or (previous is not None and previous.record_all is True))
    if note is None:
        if previous is None:
            raise UsageError("a new baseline needs --note TEXT (what build and compiler it describes)")
        note = previous.note
    old_entries = {(e.target, e.key): e for e in previous.kernels} if previous else {}
    result = UpdateResult(baseline=None, updated=previous is not None)  # type: ignore[arg-type]
    update = _Update(gate, previous, record_all, allows, result, record_code=needs_code(gate))
    entries: list[Entry] = []
    for ident in _candidates(inputs, gate, old_entries, record_all=record_all, allows=allows):
        entry = _kernel_entry(update, ident, inputs.usage[ident], old_entries.get(ident))
        if entry is not None:
            entries.append(entry)
    removals = _removals(inputs, previous, targets, allow_removed, allow_removed_targets, result)
    entries.extend(_carried_over(old_entries, inputs, targets, removals, result))
    _refuse_unmatched(allows, update.matched)
    provenance = _provenance(inputs, digests, flags, previous, backend)
    entries.sort(key=lambda e: (e.target, e.key))
    written_from = _written_from(inputs, targets, previous, result, entries)
    baseline = Baseline(note=note, gate=list(gate), provenance=provenance, occupancy_model=_occupancy_model(inputs),
                        record_all=record_all, kernels_written_from=dict(sorted(written_from.items())),
                        removed=removals.recorded or None, kernels=entries)
    baseline.provenance.created = _created(baseline, previous)
    result.baseline = baseline
    return result


def _candidates(inputs: Inputs, gate: tuple[str, ...], old_entries: Mapping[Kernel, Entry], *,
                record_all: bool, allows: Sequence[Allow]) -> list[Kernel]:
    """The kernels build looks at, sorted: every kernel read with --record-all or
    --allow, else only those recorded or that were."""
    if record_all or allows:
        return sorted(inputs.usage)
    # Without --allow a kernel is looked at only if it is recorded or was (a library's
    # default baseline: 5,544 of 239,806 kernels).
    return sorted(ident for ident, usage in inputs.usage.items()
                  if ident in old_entries or recorded_by_default(usage.resources, gate))


@dataclass
class _Update:
    """What settling each kernel's entry needs of the whole build, and what it
    gathers as it goes."""

    gate: tuple[str, ...]
    previous: Baseline | None           # None: a new baseline (no allowance has a history)
    record_all: bool
    allows: Sequence[Allow]
    result: UpdateResult                # what changed, kernel by kernel
    record_code: bool                   # the machine code's figures are recorded (a code metric is gated)
    matched: set[Allow] = field(default_factory=set)                   # the allows that matched a kernel
    allowances: dict[tuple, Allowance] = field(default_factory=dict)   # shared (_shared_allowance)


def _kernel_entry(update: _Update, ident: Kernel, usage: KernelUsage, prev: Entry | None) -> Entry | None:
    """One kernel's entry (``prev``: its entry in the previous baseline), its
    allowances settled (_settled_allowance); None when it is not recorded
    (then an allowance it had is tightened to zero)."""
    gate, result = update.gate, update.result
    resources = usage.resources
    if not update.record_code and (resources.loop_scratch is not None or resources.agpr_copies is not None):
        # The machine code's figures are recorded only when gated (version 4).
        resources = dataclasses.replace(resources, loop_scratch=None, agpr_copies=None)
    reasons = []
    for named in update.allows:
        if named.matches(usage):
            update.matched.add(named)
            if named.reason not in reasons:
                reasons.append(named.reason)
    if not update.record_all and not reasons and not recorded_by_default(resources, gate):
        if prev is not None:            # at zero now: tightened, then held to zero by its absence
            _tighten_to_absent(usage, prev, resources, gate, result)
        return None
    raised_before = len(result.raised)
    if update.previous is not None and prev is None:
        result.added.append(ident)
    allow = _settled_allowance(update, usage, resources, prev, may_raise=bool(reasons))
    # A reason explains an allowance that went up: kept until another replaces it.
    if reasons and (update.previous is None or len(result.raised) > raised_before):
        kept_reason: str | None = "; ".join(reasons)
    else:
        kept_reason = prev.reason if prev else None
    return Entry(target=usage.target, key=usage.key, name=usage.name,
                 allow=_shared_allowance(update.allowances, allow), recorded=resources, reason=kept_reason)


def _tighten_to_absent(usage: KernelUsage, prev: Entry, resources: Resources, gate: tuple[str, ...],
                       result: UpdateResult) -> None:
    """A kernel recorded before and at zero now: each gated allowance it had that
    differs from the new figure is tightened (the kernel is then held to zero by
    its absence)."""
    for name in gate:
        old = getattr(prev.allow, name)
        if old is not None and old != METRICS[name].value(resources):
            result.tightened.append(Change(usage.target, usage.key, usage.name, name, old,
                                           METRICS[name].value(resources)))


def _settled_allowance(update: _Update, usage: KernelUsage, resources: Resources, prev: Entry | None, *,
                       may_raise: bool) -> dict[str, object]:
    """The kernel's new allowance of each gated metric (and of a dynamic stack,
    with scratch), each settled against the old one (_settle); a kernel new to
    the baseline starts from each metric's new_kernel_allowance."""
    allow: dict[str, object] = {}
    for name in update.gate:
        metric = METRICS[name]
        old = metric.new_kernel_allowance if prev is None else getattr(prev.allow, name)
        allow[name] = _settle(update, usage, name, metric.value(resources), old, floor=metric.floor,
                              may_raise=may_raise)
    if "scratch" in update.gate:
        if prev is None:
            old_dynamic: bool | None = False
        elif prev.allow.scratch is None:
            old_dynamic = None              # scratch was not gated: no history
        else:
            old_dynamic = bool(prev.allow.dynamic_stack)
        dynamic = _settle(update, usage, "dynamic_stack", int(resources.dynamic_stack),
                          None if old_dynamic is None else int(old_dynamic), floor=False, may_raise=may_raise)
        allow["dynamic_stack"] = True if dynamic else None
    return allow


def _settle(update: _Update, usage: KernelUsage, metric: str, actual, old, *, floor: bool, may_raise: bool):
    """The new allowance given the old one (None: no history; a new baseline
    has none): the actual figure when within the old allowance (``floor``: at
    or above it; recorded as tightened when it differs) or when ``may_raise``
    (an --allow matched the kernel: recorded as raised), else the old
    allowance (recorded as refused)."""
    if update.previous is None or old is None or actual is None:
        return actual
    within = actual >= old if floor else actual <= old
    result = update.result
    if within:
        if actual != old:
            result.tightened.append(Change(usage.target, usage.key, usage.name, metric, old, actual))
        return actual
    change = Change(usage.target, usage.key, usage.name, metric, old, actual)
    if may_raise:
        result.raised.append(change)
        return actual
    result.refused.append(change)
    return old


def _carried_over(old_entries: Mapping[Kernel, Entry], inputs: Inputs, targets: list[str] | None,
                  removals: _Removals, result: UpdateResult) -> list[Entry]:
    """The previous baseline's entries the build did not read that stay: those of
    targets this run did not select (counted in ``kept_other_targets``), and
    those gone without --allow-removed (check fails on them)."""
    kept = []
    for ident, entry in old_entries.items():
        if ident in inputs.usage:
            continue
        if targets and not target_selected(entry.target, targets):
            kept.append(entry)             # a target this run did not read: carry it over
            result.kept_other_targets += 1
        elif ident in removals.kept:
            kept.append(entry)             # gone without --allow-removed: kept, check fails on it
    return kept


def _refuse_unmatched(allows: Sequence[Allow], matched: set[Allow]) -> None:
    """A UsageError naming the first --allow that matched no kernel."""
    unmatched = [named for named in allows if named not in matched]
    if unmatched:
        first = unmatched[0]
        raise UsageError(f"{first.option} {first.text!r} matches no kernel " + (
            "(the stable key, exactly)" if first.exact_key else
            "(patterns are exact names or globs matched against the stable key and the demangled name)"))


def _provenance(inputs: Inputs, digests: Mapping[str, str] | None, flags: list[str] | None,
                previous: Baseline | None, backend: BackendProvenance | None = None) -> Provenance:
    """Where the baseline comes from (its creation time set last, by _created);
    inputs whose digest ``digests`` lacks are hashed here."""
    return Provenance(
        spillway_version=__version__,
        created="",
        compilers=sorted(inputs.compilers),
        code_object_versions=sorted(inputs.code_object_versions),
        targets=sorted({u.target for u in inputs.usage.values()}),
        files=[SourceFile(path=os.path.normpath(p), sha256=(digests or {}).get(p) or sha256_path(p))
               for p in dict.fromkeys(inputs.sources)],
        flags=flags if flags is not None else (previous.provenance.flags if previous else None),
        backend=backend if backend is not None else (previous.provenance.backend if previous else None))


def _occupancy_model(inputs: Inputs) -> str | None:
    """The one occupancy model of the inputs' figures; ``producer`` when they mix
    models; None when none was read."""
    models = set(inputs.occupancy_models)
    return models.pop() if len(models) == 1 else ("producer" if models else None)


def _written_from(inputs: Inputs, targets: list[str] | None, previous: Baseline | None, result: UpdateResult,
                  entries: Sequence[Entry]) -> dict[str, int]:
    """Per target, the kernels the baseline is written from: those read, the
    previous baseline's for targets this run did not select, and for targets
    no longer built but kept, what they were written from (else their kept
    entries)."""
    written_from = inputs.kernels_written_from()
    if targets and previous is not None and previous.kernels_written_from:
        for target, count in previous.kernels_written_from.items():   # targets this run did not read
            if not target_selected(target, targets):
                written_from[target] = count
    for target, known in result.kept_targets:      # still expected: check fails until it is built or accepted
        written_from[target] = known if known is not None else sum(1 for e in entries if e.target == target)
    return written_from


@dataclass
class _Removals:
    kept: set[Kernel]                   # baseline kernels gone from the build, kept
    recorded: list[Removal]             # the baseline's accepted removals, old and new


def vanished(baseline: Baseline, usage: Mapping[Kernel, Any], targets: Sequence[str] = (),
             declared: Sequence[str] = ()) -> tuple[list[str], list[Entry]]:
    """What of ``baseline`` the build (``usage``) no longer has, among the targets
    ``targets`` selects: (the targets with no kernel built, sorted; the kernels
    gone on the other targets, in the baseline's order).  ``declared``: targets
    the build must have besides (a matrix cell's; a processor matches its
    feature variants)."""
    built = {target for target, _key in usage}
    expected = [t for t in sorted(baseline.targets_built()) if target_selected(t, list(targets))]
    gone = [t for t in expected if t not in built]
    for target in declared:
        if (target_selected(target, list(targets)) and target not in gone
                and not any(target_selected(b, [target]) for b in built)):
            gone.append(target)
    missing = set(gone)
    kernels = [e for e in baseline.kernels if (e.target, e.key) not in usage and e.target not in missing
               and target_selected(e.target, list(targets))]
    return sorted(gone), kernels


def _removals(inputs: Inputs, previous: Baseline | None, targets: list[str] | None,
              allow_removed: Sequence[Allow], allow_removed_targets: Sequence[tuple[str, str]],
              result: UpdateResult) -> _Removals:
    """What an update does with the previous baseline's kernels and targets the
    build no longer has: drops those ``allow_removed`` (patterns) and
    ``allow_removed_targets`` accept, recording why, and keeps the others
    (``result.kept_removed``, ``kept_targets``); an accept that matches nothing
    gone is a UsageError, as an --allow that matches no kernel is."""
    if previous is None:
        if allow_removed or allow_removed_targets:
            raise UsageError("--allow-removed and --allow-removed-target accept what an existing baseline has and "
                             "the build no longer builds: there is no baseline to update")
        return _Removals(set(), [])
    gone_targets, gone_kernels = vanished(previous, inputs.usage, targets or ())
    accepted_targets: dict[str, str] = {}
    for target, reason in allow_removed_targets:
        matching = [t for t in gone_targets if target_selected(t, [target])]
        if not matching:
            raise UsageError(f"--allow-removed-target {target!r}: the baseline has no such target that the build "
                             f"no longer builds (gone: {', '.join(gone_targets) or 'none'})")
        for found in matching:
            accepted_targets.setdefault(found, reason)
    written_from = previous.kernels_written_from or {}
    for target in gone_targets:
        if target in accepted_targets:
            result.removed_targets.append(target)
        else:
            result.kept_targets.append((target, written_from.get(target)))
    kept: set[Kernel] = {(e.target, e.key) for e in previous.kernels
                         if e.target in gone_targets and e.target not in accepted_targets}
    recorded = {(r.target, r.key): r for r in previous.removed or ()}
    matched: set[Allow] = set()
    for entry in gone_kernels:
        accepting = [named for named in allow_removed if named.matches_key(entry.key, entry.name)]
        reasons = [named.reason for named in accepting]
        matched.update(accepting)
        if reasons:
            result.removed.append((entry.target, entry.key, entry.name))
            recorded[(entry.target, entry.key)] = Removal(target=entry.target, key=entry.key,
                                                          reason="; ".join(dict.fromkeys(reasons)))
        else:
            result.kept_removed.append((entry.target, entry.key, entry.name))
            kept.add((entry.target, entry.key))
    unmatched = [named for named in allow_removed if named not in matched]
    if unmatched:
        first = unmatched[0]
        raise UsageError(f"{first.given_as or '--allow-removed'} {first.text!r} matches no baseline kernel the build "
                         f"no longer has " + ("(the stable key, exactly)" if first.exact_key else
                                              "(patterns are exact names or globs matched against the stable key "
                                              "and the demangled name)"))
    for target, reason in accepted_targets.items():
        # The target's kernels go with it (recorded once, for the target).
        recorded = {k: r for k, r in recorded.items() if k[0] != target}
        recorded[(target, None)] = Removal(target=target, reason=reason)
    # A removal recorded before whose kernel or target is built again is no longer one.
    built = {target for target, _key in inputs.usage}
    recorded = {k: r for k, r in recorded.items()
                if not (k in inputs.usage or (k[1] is None and k[0] in built))}
    return _Removals(kept, [recorded[k] for k in sorted(recorded, key=lambda k: (k[0], k[1] or ""))])


def update_summary(result: UpdateResult, shown: str, quote: Callable[[str], str] = lambda text: text) -> str:
    """The one line that says what a write or an update did (``shown``: the file;
    ``quote``: how the sink shows a target, which comes from the binary)."""
    count = len(result.baseline.kernels)
    summary = f"{'updated' if result.updated else 'wrote'} {shown}: {count} kernel{'s' if count != 1 else ''}, " \
              f"gate {','.join(result.baseline.gate)}"
    if not result.baseline.records_every_kernel:
        read = sum((result.baseline.kernels_written_from or {}).values())
        summary += f", of {read} read (the rest are at zero; --record-all records every kernel)"
    if result.updated:
        details = [f"{len(result.tightened)} allowances tightened", f"{len(result.raised)} loosened with --allow",
                   f"{len(result.added)} kernels added", f"{len(result.removed)} removed"]
        if result.removed_targets:
            details.append(f"target{'s' if len(result.removed_targets) != 1 else ''} "
                           f"{', '.join(quote(t) for t in result.removed_targets)} removed")
        if result.refused:
            details.append(f"{len(result.refused)} kept because they would go up without --allow")
        if result.kept_removed or result.kept_targets:
            kept = [f"{len(result.kept_removed)} kernel{'s' if len(result.kept_removed) != 1 else ''}"] \
                if result.kept_removed else []
            kept += [f"target {quote(target)}" for target, _ in result.kept_targets]
            details.append(f"{' and '.join(kept)} no longer built kept without --allow-removed")
        if result.kept_other_targets:
            details.append(f"{result.kept_other_targets} kept for targets not read")
        summary += " (" + ", ".join(details) + ")"
    return summary


def _created(baseline: Baseline, previous: Baseline | None) -> str:
    """SOURCE_DATE_EPOCH; else the previous time when nothing else changed; else now."""
    if os.environ.get("SOURCE_DATE_EPOCH", "").strip():
        return created_now()
    if previous is not None:
        # Shallow: only the provenance differs (a deep copy of 80,000 kernels took 10 s).
        provenance = baseline.provenance.model_copy(update={"created": previous.provenance.created})
        candidate = baseline.model_copy(update={"provenance": provenance})
        if render(candidate) == render(previous):
            return previous.provenance.created
    return created_now()
