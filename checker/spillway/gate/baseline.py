"""Baseline files: per-compiler allowances for every kernel, committed by the
user and read by ``spillway check``.

Format (``spillway.baseline/2``; version 1 files are still read; ``spillway schema baseline`` prints the JSON
schema)::

    {
      "schema": "spillway.baseline/2",
      "note": "clang-22, release build",
      "gate": ["scratch"],
      "provenance": {...compilers, code object versions, targets, files + SHA-256,
                     spillway version, creation time...},
      "kernels": [
        {"target":"gfx1100","key":"_Z4topkILi32EEvPKfiPfPi","name":"void topk<32>(...)",
         "allow":{"scratch":272},"recorded":{...}},
        ...
      ]
    }

One kernel per line, sorted by (target, key), so a diff shows one line per
kernel that changed.  ``allow`` holds the allowances of the gated metrics
(occupancy is a floor, the others ceilings; see gate.py); ``recorded`` the
worst values seen when the baseline was written, which ``check --gate`` uses
for metrics the baseline does not gate and ``compare`` uses as one side.

The same input gives the same bytes: ``provenance.created`` is taken from
SOURCE_DATE_EPOCH when set, otherwise kept from the existing file when
nothing else changed, otherwise the current time (UTC, seconds).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Final, Literal, Optional, Sequence

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from spillway import __version__, atomic
from spillway.paths import dumps as json_dumps, loads as json_loads, readable
from spillway.report.record import PATH_ENCODING
from spillway.errors import InputError, UsageError
from spillway.gate.check import (ALL_KERNEL_GATES, METRICS, Inputs, Kernel, KernelUsage, MetricName, Resources,
                                 target_selected)
from spillway.resources.names import display_key, short_name

SCHEMA: Final = "spillway.baseline/2"
SCHEMA_V1: Final = "spillway.baseline/1"   # committed by users: read, never written
BASELINE_PREFIX = "spillway.baseline/"
SCHEMA_VERSION = 2


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


# The values recorded when the baseline was written: the one resource record
# (gate.check.Resources), validated and published by pydantic from its annotations.
Recorded = Resources

class Entry(BaseModel):
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


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spillway_version: str
    created: str = Field(description="UTC, ISO 8601; SOURCE_DATE_EPOCH when set; kept from the previous "
                                     "file when nothing else changed")
    compilers: list[str] = Field(description="Producers from the code objects' .comment")
    code_object_versions: list[int]
    targets: list[str]
    files: list[SourceFile]


class Baseline(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["spillway.baseline/1", "spillway.baseline/2"] = Field(SCHEMA, alias="schema")
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
    kernels: list[Entry] = Field(description="Sorted by (target, key), unique")

    @property
    def records_every_kernel(self) -> bool:
        return self.record_all is not False


def json_schema() -> dict:
    schema = Baseline.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://spillway.dev/schemas/baseline-2.json"
    return schema


# -- reading -------------------------------------------------------------------

def parse_baseline(document, path: str) -> Baseline:
    """A parsed JSON document -> Baseline, or InputError naming what is wrong."""
    schema = document.get("schema") if isinstance(document, dict) else None
    if not (isinstance(schema, str) and schema.startswith(BASELINE_PREFIX)):
        raise InputError(f"not a spillway baseline (schema {schema!r}, expected {SCHEMA}); write one with "
                         f"'spillway baseline write'", file=path)
    if schema not in (SCHEMA, SCHEMA_V1):
        version = schema[len(BASELINE_PREFIX):]
        newer = version.isdigit() and int(version) > SCHEMA_VERSION
        raise InputError(f"baseline schema {schema} is {'newer than' if newer else 'not'} what this "
                         f"spillway {__version__} reads ({SCHEMA})" + ("; upgrade spillway" if newer else ""),
                         file=path)
    return _validated(path, lambda: Baseline.model_validate(document))


def _validated(path: str, validate) -> Baseline:
    try:
        baseline = validate()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "document"
        more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        raise InputError(f"invalid baseline: {where}: {first['msg']}{more}", file=path) from None
    seen: set[Kernel] = set()
    for entry in baseline.kernels:
        ident = (entry.target, entry.key)
        if ident in seen:
            raise InputError(f"invalid baseline: kernel {entry.key} on {entry.target} is listed twice", file=path)
        seen.add(ident)
    return baseline


def load_baseline(path: str) -> Baseline:
    try:
        with open(readable(path), "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise InputError(f"cannot read baseline: {exc.strerror}", file=path) from None
    if _SCHEMA_FIELD.search(data[:512]):
        # The common case, validated straight from the bytes by pydantic-core:
        # about a third faster than a dict first on 80,000 kernels.
        try:
            return _validated(path, lambda: Baseline.model_validate_json(data))
        except InputError:
            pass   # explained below, from the parsed document
    try:
        document = json_loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not a spillway baseline: not valid JSON ({exc})", file=path) from None
    return parse_baseline(document, path)


# What render() writes first; other spellings take the general path.
_SCHEMA_FIELD = re.compile(rb'\A\{\s*"schema":\s*"spillway\.baseline/[12]"')


def baseline_usage(baseline: Baseline) -> dict[Kernel, KernelUsage]:
    """The recorded values as kernel usage (compare accepts a baseline as a side)."""
    return {(e.target, e.key): KernelUsage(e.target, e.key, e.name, e.recorded) for e in baseline.kernels}


# -- writing -------------------------------------------------------------------

def render(baseline: Baseline) -> bytes:
    """Deterministic bytes: a pretty header, then one kernel per line."""
    head = baseline.model_dump(by_alias=True, exclude={"kernels"})
    head["schema"] = SCHEMA   # an updated version-1 baseline is written as version 2
    text = json_dumps(head, option=orjson.OPT_INDENT_2)
    assert text.endswith(b"\n}")
    lines = [json_dumps(_entry_dict(e)) for e in sorted(baseline.kernels, key=lambda e: (e.target, e.key))]
    body = b'  "kernels": [\n' + b",\n".join(b"    " + line for line in lines) + b"\n  ]" if lines \
        else b'  "kernels": []'
    return text[:-2] + b",\n" + body + b"\n}\n"


def _entry_dict(entry: Entry) -> dict:
    out = {"target": entry.target, "key": entry.key, "name": entry.name,
           "allow": entry.allow.model_dump(exclude_none=True), "recorded": entry.recorded.as_dict()}
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
        lines = []
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(root, name)
                if os.path.isfile(full):
                    lines.append(f"{os.path.relpath(full, path)}\0{sha256_path(full)}\n")
        return hashlib.sha256("".join(sorted(lines)).encode("utf-8", "surrogateescape")).hexdigest()
    digest = hashlib.sha256()
    try:
        with open(readable(path), "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None
    return digest.hexdigest()


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


def pattern_matches(pattern: str, usage: KernelUsage) -> bool:
    """--allow patterns: a glob when they contain * ? [, else an exact name;
    tried against the stable key, the demangled name, the demangled name
    without versioned namespaces and the short name (no return type, no
    parameters: ``topk<32>``)."""
    shown = display_key(usage.name)
    candidates = (usage.key, usage.name, shown, short_name(shown))
    if any(c in pattern for c in "*?["):
        return any(fnmatch.fnmatchcase(c, pattern) for c in candidates)
    return pattern in candidates


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
    removed: list[tuple[str, str, str]] = field(default_factory=list)
    kept_other_targets: int = 0


def needs_every_kernel(gate) -> bool:
    return any(m in ALL_KERNEL_GATES for m in gate)


def recorded_by_default(resources: Resources, gate: tuple[str, ...]) -> bool:
    """Is the kernel in a baseline written without --record-all: does it use
    what a gated metric holds to zero (scratch or a dynamic stack, spills)?"""
    return (("scratch" in gate and (resources.scratch > 0 or resources.dynamic_stack))
            or ("spills" in gate and resources.vgpr_spills + resources.sgpr_spills > 0))


def build(inputs: Inputs, *, note: str | None, gate: tuple[str, ...], previous: Baseline | None = None,
          allows: Sequence[tuple[str, str]] = (), targets: list[str] | None = None,
          record_all: bool = False) -> UpdateResult:
    """A new baseline from ``inputs``, or ``previous`` updated.

    Updating: allowances that went down are tightened; an allowance that
    would go up keeps its old value (reported in ``refused``) unless an
    ``allows`` pattern matches the kernel, whose reason is then stored (on a
    new baseline every matched kernel gets the reason).  A kernel new to the
    baseline starts from zero scratch and zero spills, so a new kernel that
    spills needs --allow too.  Kernels gone from the build are dropped,
    except on targets excluded with ``targets``.

    Without ``record_all`` (and unless a gate needs every kernel, or the
    previous baseline recorded every kernel on purpose) only kernels whose
    gated metrics are non-zero, or whose allowance carries a reason, are
    written: the others are held to zero as absent kernels are.
    """
    gate = tuple(m for m in METRICS if m in set(gate))
    record_all = bool(record_all or needs_every_kernel(gate)
                      or (previous is not None and previous.record_all is True))
    if note is None:
        if previous is None:
            raise UsageError("a new baseline needs --note TEXT (what build and compiler it describes)")
        note = previous.note
    old_entries = {(e.target, e.key): e for e in previous.kernels} if previous else {}
    result = UpdateResult(baseline=None, updated=previous is not None)  # type: ignore[arg-type]
    matched_patterns: set[str] = set()
    entries: list[Entry] = []
    for ident in sorted(inputs.usage):
        usage = inputs.usage[ident]
        resources = usage.resources
        reasons = []
        for pattern, reason in allows:
            if pattern_matches(pattern, usage):
                matched_patterns.add(pattern)
                if reason not in reasons:
                    reasons.append(reason)
        prev = old_entries.get(ident)
        if not record_all and not reasons and not recorded_by_default(resources, gate):
            if prev is not None:            # at zero now: tightened, then held to zero by its absence
                for name in gate:
                    old = getattr(prev.allow, name)
                    if old is not None and old != METRICS[name].value(resources):
                        result.tightened.append(Change(usage.target, usage.key, usage.name, name, old,
                                                       METRICS[name].value(resources)))
            continue
        raised_before = len(result.raised)
        if previous is not None and prev is None:
            result.added.append(ident)
        allow: dict[str, object] = {}

        def settle(metric: str, actual, old, *, floor: bool = False):
            """The new allowance given the old one (None: no history)."""
            if previous is None or old is None or actual is None:
                return actual
            within = actual >= old if floor else actual <= old
            if within:
                if actual != old:
                    result.tightened.append(Change(usage.target, usage.key, usage.name, metric, old, actual))
                return actual
            change = Change(usage.target, usage.key, usage.name, metric, old, actual)
            if reasons:
                result.raised.append(change)
                return actual
            result.refused.append(change)
            return old

        for name in gate:
            metric = METRICS[name]
            if prev is None:
                old = metric.new_kernel_allowance
            else:
                old = getattr(prev.allow, name)
            allow[name] = settle(name, metric.value(resources), old, floor=metric.floor)
        if "scratch" in gate:
            if prev is None:
                old_dynamic = False
            elif prev.allow.scratch is None:
                old_dynamic = None              # scratch was not gated: no history
            else:
                old_dynamic = bool(prev.allow.dynamic_stack)
            dynamic = settle("dynamic_stack", int(resources.dynamic_stack),
                             None if old_dynamic is None else int(old_dynamic))
            allow["dynamic_stack"] = True if dynamic else None
        # A reason explains an allowance that went up: kept until another replaces it.
        if reasons and (previous is None or len(result.raised) > raised_before):
            kept_reason: str | None = "; ".join(reasons)
        else:
            kept_reason = prev.reason if prev else None
        entries.append(Entry(target=usage.target, key=usage.key, name=usage.name, allow=Allowance(**allow),
                             recorded=resources, reason=kept_reason))
    for ident, entry in old_entries.items():
        if ident in inputs.usage:
            continue
        if targets and not target_selected(entry.target, targets):
            entries.append(entry)          # a target this run did not read: carry it over
            result.kept_other_targets += 1
        else:
            result.removed.append((entry.target, entry.key, entry.name))
    unmatched = [p for p, _ in allows if p not in matched_patterns]
    if unmatched:
        raise UsageError(f"--allow {unmatched[0]!r} matches no kernel (patterns are exact names or globs "
                         f"matched against the stable key and the demangled name)")
    provenance = Provenance(
        spillway_version=__version__,
        created="",
        compilers=sorted(inputs.compilers),
        code_object_versions=sorted(inputs.code_object_versions),
        targets=sorted({u.target for u in inputs.usage.values()}),
        files=[SourceFile(path=os.path.normpath(p), sha256=sha256_path(p))
               for p in dict.fromkeys(inputs.sources)])
    entries.sort(key=lambda e: (e.target, e.key))
    models = set(inputs.occupancy_models)
    occupancy_model = models.pop() if len(models) == 1 else ("producer" if models else None)
    written_from = inputs.kernels_written_from()
    if targets and previous is not None and previous.kernels_written_from:
        for target, count in previous.kernels_written_from.items():   # targets this run did not read
            if not target_selected(target, targets):
                written_from[target] = count
    baseline = Baseline(note=note, gate=list(gate), provenance=provenance, occupancy_model=occupancy_model,
                        record_all=record_all, kernels_written_from=dict(sorted(written_from.items())),
                        kernels=entries)
    baseline.provenance.created = _created(baseline, previous)
    result.baseline = baseline
    return result


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
