"""The gate: metrics, per-kernel worst-case usage, and checking a build against
a baseline.

Metrics are named the same everywhere (``--gate``, baseline files, check and
compare output):

=========  ===========================================  =========
metric     value                                        direction
=========  ===========================================  =========
scratch    ``private_segment_fixed_size`` (bytes/lane)  ceiling
spills     ``vgpr_spill_count + sgpr_spill_count``      ceiling
occupancy  waves per SIMD (``occupancy``)               floor
vgprs      ``vgpr_count``                               ceiling
lds        ``group_segment_fixed_size`` (bytes)         ceiling
=========  ===========================================  =========

``spills`` is one number, the spilled VGPRs plus the spilled SGPRs, so a
compiler that trades one kind for the other does not fail the gate; the two
counts are recorded separately in baselines and shown separately by compare.
The ``scratch`` metric also covers the dynamic stack: a kernel that starts
using one fails unless its allowance says ``dynamic_stack: true``.

A kernel is identified by (target, key), key being the reader's stable
mangled name.  When the same kernel appears several times (one instance per
translation unit or bundle, or the same library read twice) its worst value
of each resource counts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Callable, Final, Iterable, Literal, Optional

from pydantic import ConfigDict, Field

from spillway import __version__
from spillway.errors import InputError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from spillway.gate.baseline import Baseline
    from spillway.report.reader import ReadOptions

CHECK_SCHEMA: Final = "spillway.check/2"

MetricName = Literal["scratch", "spills", "occupancy", "vgprs", "lds"]
Kernel = tuple[str, str]        # (target, key)


# -- resources of one kernel ---------------------------------------------------

@dataclass(frozen=True, slots=True)
class Resources:
    """The figures spillway gates and compares, for one kernel on one target:
    the one definition of a kernel's resource record.  Baselines store it as
    ``recorded`` and compare documents as ``old``/``new``/``resources``; their
    JSON schemas are generated from this class (pydantic reads the
    annotations), so the three cannot drift apart."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    scratch: Annotated[int, Field(ge=0, description="private_segment_fixed_size, bytes per lane")]
    dynamic_stack: Annotated[bool, Field(description="uses_dynamic_stack")]
    vgpr_spills: Annotated[int, Field(ge=0, description="vgpr_spill_count")]
    sgpr_spills: Annotated[int, Field(ge=0, description="sgpr_spill_count")]
    vgprs: Annotated[int, Field(ge=0, description="vgpr_count")]
    agprs: Annotated[Optional[int], Field(description="agpr_count; null on targets without AGPRs")]
    sgprs: Annotated[int, Field(ge=0, description="sgpr_count")]
    lds: Annotated[int, Field(ge=0, description="group_segment_fixed_size, bytes per work-group")]
    occupancy: Annotated[Optional[int], Field(description="Waves per SIMD; null for an unknown target")]

    @property
    def spills(self) -> int:
        return self.vgpr_spills + self.sgpr_spills

    @classmethod
    def from_record(cls, record: dict) -> "Resources":
        return cls(record["private_segment_fixed_size"], bool(record["uses_dynamic_stack"]),
                   record["vgpr_spill_count"], record["sgpr_spill_count"], record["vgpr_count"],
                   record["agpr_count"], record["sgpr_count"], record["group_segment_fixed_size"],
                   record["occupancy"])

    def worst(self, other: "Resources") -> "Resources":
        """Each resource at its worse value of the two."""
        return Resources(max(self.scratch, other.scratch), self.dynamic_stack or other.dynamic_stack,
                         max(self.vgpr_spills, other.vgpr_spills), max(self.sgpr_spills, other.sgpr_spills),
                         max(self.vgprs, other.vgprs), _max_optional(self.agprs, other.agprs),
                         max(self.sgprs, other.sgprs), max(self.lds, other.lds),
                         _min_optional(self.occupancy, other.occupancy))

    def as_dict(self) -> dict:
        return {"scratch": self.scratch, "dynamic_stack": self.dynamic_stack,
                "vgpr_spills": self.vgpr_spills, "sgpr_spills": self.sgpr_spills, "vgprs": self.vgprs,
                "agprs": self.agprs, "sgprs": self.sgprs, "lds": self.lds, "occupancy": self.occupancy}


def _max_optional(a, b):
    return b if a is None else a if b is None else max(a, b)


def _min_optional(a, b):
    return b if a is None else a if b is None else min(a, b)


@dataclass(slots=True)
class KernelUsage:
    target: str
    key: str
    name: str
    resources: Resources
    instances: int = 1


def aggregate_rows(rows: Iterable[tuple], usage: dict[Kernel, KernelUsage] | None = None
                   ) -> dict[Kernel, KernelUsage]:
    """Like ``aggregate``, from the reader's compact rows (KernelTable.rows,
    FIELDS order), without a dict per kernel."""
    from spillway.report.reader import FIELDS

    usage = {} if usage is None else usage
    at = FIELDS.index
    target_at, key_at, name_at = at("target"), at("key"), at("name")
    picks = tuple(at(f) for f in ("private_segment_fixed_size", "uses_dynamic_stack", "vgpr_spill_count",
                                  "sgpr_spill_count", "vgpr_count", "agpr_count", "sgpr_count",
                                  "group_segment_fixed_size", "occupancy"))
    scratch_at, dynamic_at, vspill_at, sspill_at, vgpr_at, agpr_at, sgpr_at, lds_at, occupancy_at = picks
    get = usage.get
    for row in rows:
        ident = (row[target_at], row[key_at])
        resources = Resources(row[scratch_at], bool(row[dynamic_at]), row[vspill_at], row[sspill_at],
                              row[vgpr_at], row[agpr_at], row[sgpr_at], row[lds_at], row[occupancy_at])
        seen = get(ident)
        if seen is None:
            usage[ident] = KernelUsage(ident[0], ident[1], row[name_at], resources)
        else:
            if seen.resources != resources:
                seen.resources = seen.resources.worst(resources)
            seen.instances += 1
    return usage


def aggregate(records: Iterable[dict]) -> dict[Kernel, KernelUsage]:
    """Report records -> one KernelUsage per (target, key), worst values."""
    usage: dict[Kernel, KernelUsage] = {}
    for record in records:
        ident = (record["target"], record["key"])
        resources = Resources.from_record(record)
        seen = usage.get(ident)
        if seen is None:
            usage[ident] = KernelUsage(record["target"], record["key"], record["name"], resources)
        else:
            seen.resources = seen.resources.worst(resources)
            seen.instances += 1
    return usage


# -- metrics -------------------------------------------------------------------

@dataclass(frozen=True)
class Metric:
    name: str
    floor: bool                               # occupancy: the allowance is a minimum
    value: Callable[[Resources], Optional[int]]
    unit: str
    description: str
    new_kernel_allowance: Optional[int]       # what a kernel absent from the baseline is held to

    def within(self, actual: Optional[int], allowed: Optional[int]) -> bool:
        if actual is None or allowed is None:
            return True
        return actual >= allowed if self.floor else actual <= allowed

    def format(self, value: Optional[int]) -> str:
        if value is None:
            return "?"
        return f"{value} {self.unit}" if self.unit else str(value)


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("scratch", False, lambda r: r.scratch, "B/lane",
           "scratch bytes per lane (private_segment_fixed_size); a dynamic stack fails unless allowed", 0),
    Metric("spills", False, lambda r: r.spills, "spilled registers",
           "spilled VGPRs + spilled SGPRs (vgpr_spill_count + sgpr_spill_count)", 0),
    Metric("occupancy", True, lambda r: r.occupancy, "waves/SIMD",
           "waves per SIMD, a floor", None),
    Metric("vgprs", False, lambda r: r.vgprs, "VGPRs", "VGPRs per work-item (vgpr_count)", None),
    Metric("lds", False, lambda r: r.lds, "B", "static LDS bytes per work-group (group_segment_fixed_size)",
           None),
)}
DEFAULT_GATE: tuple[str, ...] = ("scratch",)
# Gates that hold every kernel to a figure of its own (not to zero when it is
# absent): a baseline for them records every kernel (baseline write --record-all).
ALL_KERNEL_GATES: tuple[str, ...] = ("occupancy", "vgprs", "lds")


def parse_metrics(text: str) -> tuple[str, ...]:
    """``scratch,spills`` -> ("scratch", "spills") in METRICS order; UsageError otherwise."""
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in METRICS]
    if unknown or not names:
        what = f"unknown metric {', '.join(map(repr, unknown))}" if unknown else "no metric given"
        raise UsageError(f"{what} in --gate {text!r}; valid metrics: {', '.join(METRICS)}")
    return tuple(m for m in METRICS if m in names)


def metrics_help() -> str:
    return "comma-separated metrics: " + ", ".join(METRICS)


# -- reading what to gate or compare -------------------------------------------

@dataclass
class Inputs:
    """Kernels read from binaries, spillway report JSON files and (where the
    caller allows it) baseline files' recorded values."""

    records: list[dict] = field(default_factory=list)      # records of report JSON files read back
    files: list[dict] = field(default_factory=list)        # report "files" entries
    sources: list[str] = field(default_factory=list)       # the user-named paths
    usage: dict[Kernel, KernelUsage] = field(default_factory=dict)
    # What baselines record about where their kernels came from, gathered as
    # the records go by (binaries' records are not kept: a library has 250,000).
    compilers: set[str] = field(default_factory=set)
    code_object_versions: set[int] = field(default_factory=set)
    occupancy_models: set[str] = field(default_factory=set)

    def note_records(self, records: Iterable[dict]) -> None:
        for record in records:
            compiler, version = record.get("compiler"), record.get("code_object_version")
            if isinstance(compiler, str) and compiler:
                self.compilers.add(compiler)
            if isinstance(version, int) and not isinstance(version, bool):
                self.code_object_versions.add(version)
            self.occupancy_models.add(record.get("occupancy_model") or "llvm22")

    def note_rows(self, rows: list[tuple]) -> None:
        from spillway.report.reader import FIELDS

        for at, found in ((FIELDS.index("compiler"), self.compilers),
                          (FIELDS.index("code_object_version"), self.code_object_versions),
                          (FIELDS.index("occupancy_model"), self.occupancy_models)):
            found.update({row[at] for row in rows} - {None, ""})

    def kernels_written_from(self) -> dict[str, int]:
        """Distinct kernels (target, key) per target."""
        counts: dict[str, int] = {}
        for target, _key in self.usage:
            counts[target] = counts.get(target, 0) + 1
        return dict(sorted(counts.items()))


def sniff_json(path: str) -> bool:
    """Does this regular file (or standard input, ``-``) start (after white
    space) with a JSON object?"""
    if path == "-":
        from spillway.paths import spooled_stdin
        path = spooled_stdin()
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return head.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"{"


def target_selected(target_id: str, wanted: list[str]) -> bool:
    if not wanted:
        return True
    return any(w == target_id or w == target_id.split(":", 1)[0] for w in wanted)


def read_sources(paths: list[str], options: "ReadOptions",
                 read_binaries: Callable[[list[str], "ReadOptions"], dict] | None = None, *,
                 allow_baseline: bool = False, side: str = "") -> Inputs:
    """Read binaries (with ``read_binaries``, by default the reader) and JSON
    documents named on the command line; raise InputError when nothing
    yields a kernel."""
    import orjson

    from spillway.gate.baseline import BASELINE_PREFIX, baseline_usage, parse_baseline
    from spillway.report.reader import read_report

    from spillway.paths import loads as json_loads, readable

    read_binaries = read_binaries or read_report

    inputs = Inputs(sources=list(paths))
    binaries = [p for p in paths if not sniff_json(p)]
    documents = [p for p in paths if sniff_json(p)]
    baseline_usage_parts: list[dict[Kernel, KernelUsage]] = []
    for path in documents:
        try:
            with open(readable(path), "rb") as handle:
                data = handle.read()
            document = json_loads(data)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", file=path) from None
        except orjson.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc}", file=path) from None
        schema = document.get("schema") if isinstance(document, dict) else None
        if isinstance(schema, str) and schema.startswith(BASELINE_PREFIX):
            if not allow_baseline:
                raise InputError("is a baseline file, not a build; pass it with --baseline", file=path)
            baseline = parse_baseline(document, path)
            part = {k: u for k, u in baseline_usage(baseline).items()
                    if target_selected(u.target, options.targets)}
            baseline_usage_parts.append(part)
            continue
        # One occupancy model for every side: figures from a report follow the one asked for.
        from spillway.resources.occupancy import apply_model
        inputs.records.extend(apply_model(r, getattr(options, "occupancy_model", "llvm23"))
                              for r in _report_records(document, path, options.targets))
        files = document.get("files", [])
        if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
            raise InputError(f"report files is {_shown(files)}, not a list of objects", file=path)
        inputs.files.extend(files)
    inputs.note_records(inputs.records)
    inputs.usage = aggregate(inputs.records)
    if binaries:
        from spillway.report.reader import KernelTable

        document = read_binaries(binaries, options)
        kernels = document["kernels"]
        inputs.files.extend(document["files"])
        if isinstance(kernels, KernelTable):
            inputs.note_rows(kernels.rows)
            aggregate_rows(kernels.rows, inputs.usage)
        else:
            inputs.note_records(kernels)
            for ident, usage in aggregate(kernels).items():
                _merge(inputs.usage, ident, usage)
        del document, kernels
    for part in baseline_usage_parts:
        for ident, usage in part.items():
            _merge(inputs.usage, ident, usage)
    if not inputs.usage:
        where = f"{side}: " if side else ""
        raise InputError(f"{where}no kernels found in {', '.join(paths)}"
                         + (" for the selected targets" if options.targets else ""))
    return inputs


def _merge(usage: dict[Kernel, KernelUsage], ident: Kernel, more: KernelUsage) -> None:
    seen = usage.get(ident)
    if seen is None:
        usage[ident] = more
    else:
        seen.resources = seen.resources.worst(more.resources)
        seen.instances += more.instances


REPORT_FIELDS = ("target", "key", "name", "private_segment_fixed_size", "uses_dynamic_stack",
                 "vgpr_spill_count", "sgpr_spill_count", "vgpr_count", "agpr_count", "sgpr_count",
                 "group_segment_fixed_size", "occupancy")


def _report_records(document, path: str, targets: list[str]) -> list[dict]:
    from spillway.report.record import SCHEMA as REPORT_SCHEMA

    schema = document.get("schema") if isinstance(document, dict) else None
    if schema != REPORT_SCHEMA:
        if isinstance(schema, str) and schema.startswith("spillway.report/"):
            raise InputError(f"report schema {schema} is not one this spillway ({__version__}) reads "
                             f"({REPORT_SCHEMA})", file=path)
        raise InputError(f"not a spillway report or baseline (schema {schema!r})", file=path)
    kernels = document.get("kernels")
    if not isinstance(kernels, list):
        raise InputError("report has no kernels list", file=path)
    out = []
    for index, record in enumerate(kernels):
        if not isinstance(record, dict) or any(f not in record for f in REPORT_FIELDS):
            missing = [f for f in REPORT_FIELDS if not isinstance(record, dict) or f not in record]
            raise InputError(f"kernel {index} lacks {', '.join(missing)}", file=path)
        _check_record_types(record, index, path)
        if target_selected(record["target"], targets):
            out.append(record)
    return out


# What each report field read back may hold (the report schema's types):
# "count" is a non-negative int that is not a bool.
_RECORD_TYPES = {"target": "string", "key": "string", "name": "string",
                 "private_segment_fixed_size": "count", "uses_dynamic_stack": "boolean",
                 "vgpr_spill_count": "count", "sgpr_spill_count": "count", "vgpr_count": "count",
                 "agpr_count": "count or null", "sgpr_count": "count", "group_segment_fixed_size": "count",
                 "occupancy": "count or null", "compiler": "string or null",
                 "code_object_version": "count or null", "file": "string", "bundle_index": "count or null",
                 "symbol": "string", "wavefront_size": "count", "max_flat_workgroup_size": "count",
                 "workgroup_processor_mode": "boolean or null", "occupancy_limit": "string or null",
                 "scratch_cause": "string or null", "occupancy_model": "string or null",
                 "occupancy_next": "object or null", "image_offset": "count or null",
                 "archive": "string or null"}


def _type_ok(value, kind: str) -> bool:
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


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_record_types(record: dict, index: int, path: str) -> None:
    """One line naming the kernel and the field when a field has the wrong type."""
    for name, kind in _RECORD_TYPES.items():
        if name in record and not _type_ok(record[name], kind):
            raise InputError(f"kernel {index}: {name} is {_shown(record[name])}, not a {kind}", file=path)


# -- checking ------------------------------------------------------------------

@dataclass
class Finding:
    """One kernel and metric: within or over its allowance."""

    target: str
    key: str
    name: str
    metric: str
    allowed: Optional[int]
    actual: Optional[int]
    passed: bool
    new_kernel: bool = False
    dynamic_stack: bool = False      # scratch: the kernel uses a dynamic stack it was not allowed

    def message(self) -> str:
        """``scratch 272 B/lane, allowed at most 0 B/lane (kernel not in the baseline)``"""
        metric = METRICS[self.metric]
        actual = metric.format(self.actual) + (" + dynamic stack" if self.dynamic_stack else "")
        if self.allowed is None:
            allowed = "no allowance"
        else:
            allowed = f"allowed {'at least' if metric.floor else 'at most'} {metric.format(self.allowed)}"
        text = f"{self.metric} {actual}, {allowed}"
        if self.new_kernel:
            text += " (kernel not in the baseline)"
        return text


@dataclass
class CheckResult:
    baseline_path: str
    gate: tuple[str, ...]
    kernels: int
    findings: list[Finding]                # every kernel x metric, sorted
    vanished: list[tuple[str, str, str]]   # (target, key, name) in the baseline, not in the build
    new_kernels: list[tuple[str, str, str]]

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.passed]

    @property
    def failed_kernels(self) -> int:
        return len({(f.target, f.key) for f in self.failures})

    def by_metric(self) -> dict[str, int]:
        counts: dict[str, set] = {}
        for f in self.failures:
            counts.setdefault(f.metric, set()).add((f.target, f.key))
        return {m: len(counts[m]) for m in METRICS if m in counts}

    @property
    def passed(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        plural = "s" if self.kernels != 1 else ""
        if self.passed:
            text = f"OK: {self.kernels} kernel{plural} within baseline"
        else:
            detail = ", ".join(f"{m}: {n}" for m, n in self.by_metric().items())
            text = f"FAIL: {self.failed_kernels} of {self.kernels} kernel{plural} over their baseline ({detail})"
        extras = []
        if self.new_kernels:
            extras.append(f"{len(self.new_kernels)} not in the baseline")
        if self.vanished:
            extras.append(f"{len(self.vanished)} baseline kernel{'s' if len(self.vanished) != 1 else ''} "
                          f"no longer built")
        return text + (f"; {', '.join(extras)}" if extras else "")

    def counts(self) -> dict[str, object]:
        """``summary`` of the v2 document: counts only (the text is ``sentence``)."""
        return {"kernels": self.kernels, "failed_kernels": self.failed_kernels,
                "failures": len(self.failures), "by_metric": self.by_metric(),
                "added": len(self.new_kernels), "removed": len(self.vanished)}

    def to_json(self) -> dict:
        return {
            "schema": CHECK_SCHEMA,
            "spillway_version": __version__,
            "baseline": self.baseline_path,
            "gate": list(self.gate),
            "passed": self.passed,
            "summary": self.counts(),
            "sentence": self.summary(),
            "failures": [{"target": f.target, "key": f.key, "name": f.name, "metric": f.metric,
                          "allowed": f.allowed, "actual": f.actual, "new_kernel": f.new_kernel,
                          "dynamic_stack": f.dynamic_stack} for f in self.failures],
            "added": [{"target": t, "key": k, "name": n} for t, k, n in self.new_kernels],
            "removed": [{"target": t, "key": k, "name": n} for t, k, n in self.vanished],
        }


def check(usage: dict[Kernel, KernelUsage], baseline: "Baseline", gate: Iterable[str],
          targets: list[str] | None = None, baseline_path: str = "") -> CheckResult:
    """Hold every kernel of ``usage`` to its allowance in ``baseline``.

    A metric the baseline does not gate (``check --gate`` asked for more) is
    held to the value recorded when the baseline was written.  Kernels absent
    from the baseline are held to ``new_kernel_allowance`` (zero scratch, no
    dynamic stack, zero spills; other metrics unconstrained).
    """
    gate = tuple(m for m in METRICS if m in set(gate))
    every_kernel = baseline.records_every_kernel
    if not every_kernel:
        refuse_partial_baseline(baseline, gate, baseline_path)
    entries = {(e.target, e.key): e for e in baseline.kernels}
    findings: list[Finding] = []
    new_kernels = []
    for ident in sorted(usage, key=lambda i: (i[0], usage[i].name, i[1])):
        kernel = usage[ident]
        entry = entries.get(ident)
        if entry is None and every_kernel:
            # In a baseline of the non-zero kernels only, absence is the norm, not news.
            new_kernels.append((kernel.target, kernel.key, kernel.name))
        for name in gate:
            metric = METRICS[name]
            actual = metric.value(kernel.resources)
            if entry is None:
                allowed = metric.new_kernel_allowance
                dynamic_allowed = False
            else:
                allowed = getattr(entry.allow, name)
                if allowed is None:
                    allowed = getattr(entry.recorded, name)
                dynamic_allowed = bool(entry.allow.dynamic_stack) or (
                    entry.allow.scratch is None and entry.recorded.dynamic_stack)
            dynamic_over = name == "scratch" and kernel.resources.dynamic_stack and not dynamic_allowed
            passed = metric.within(actual, allowed) and not dynamic_over
            findings.append(Finding(kernel.target, kernel.key, kernel.name, name, allowed, actual, passed,
                                    new_kernel=entry is None, dynamic_stack=dynamic_over))
    wanted = targets or []
    vanished = sorted(((e.target, e.key, e.name) for ident, e in entries.items()
                       if ident not in usage and target_selected(e.target, wanted)),
                      key=lambda v: (v[0], v[2], v[1]))
    return CheckResult(baseline_path, gate, len(usage), findings, vanished, new_kernels)


def refuse_partial_baseline(baseline: "Baseline", gate: tuple[str, ...], path: str) -> None:
    """A baseline written without --record-all holds only the kernels its own
    gate found non-zero: checking another metric against it would hold every
    omitted kernel to zero (or to nothing).  UsageError (exit 2), one line
    with the command that rewrites it."""
    missing = [m for m in gate if m in ALL_KERNEL_GATES or m not in baseline.gate]
    if not missing:
        return
    wanted = [m for m in METRICS if m in set(baseline.gate) | set(gate)]
    sources = " ".join(f.path for f in baseline.provenance.files) or "BUILD"
    raise UsageError(f"{path or 'baseline'}: records only the kernels its gate ({','.join(baseline.gate)}) finds "
                     f"non-zero, so it cannot check {','.join(missing)}; rewrite it with: spillway baseline "
                     f"write {sources} -o {path or 'BASELINE'} --gate {','.join(wanted)}")


# -- published schema of `spillway check --json` -------------------------------

def json_schema() -> dict:
    """The JSON schema of ``check --json``.  The pydantic models are built here,
    on demand, so that every run of the CLI does not pay for importing pydantic."""
    from pydantic import BaseModel, ConfigDict, Field

    class CheckFailure(BaseModel):
        model_config = ConfigDict(extra="forbid")

        target: str
        key: str = Field(description="Stable mangled key")
        name: str = Field(description="Demangled name")
        metric: MetricName
        allowed: Optional[int] = Field(description="Allowance (a floor for occupancy)")
        actual: Optional[int]
        new_kernel: bool = Field(description="The kernel is not in the baseline and was held to zero "
                                             "scratch and spills")
        dynamic_stack: bool = Field(description="scratch: the kernel uses a dynamic stack the baseline "
                                                "does not allow")


    class KernelRef(BaseModel):
        model_config = ConfigDict(extra="forbid")

        target: str
        key: str
        name: str


    class CheckCounts(BaseModel):
        model_config = ConfigDict(extra="forbid")

        kernels: int = Field(description="Distinct (target, key) kernels checked")
        failed_kernels: int = Field(description="Kernels over their allowance in at least one metric")
        failures: int = Field(description="(kernel, metric) pairs over their allowance")
        by_metric: dict[str, int] = Field(description="Failing kernels per metric")
        added: int = Field(description="Kernels not in the baseline")
        removed: int = Field(description="Baseline kernels no longer built")


    class CheckDocument(BaseModel):
        model_config = ConfigDict(extra="forbid")

        schema_: Literal["spillway.check/2"] = Field(CHECK_SCHEMA, alias="schema")
        spillway_version: str
        baseline: str = Field(description="Path of the baseline file")
        gate: list[MetricName] = Field(description="Metrics checked")
        passed: bool
        summary: CheckCounts = Field(description="Counts")
        sentence: str = Field(description="The verdict as one sentence")
        failures: list[CheckFailure]
        added: list[KernelRef] = Field(description="Kernels not in the baseline (held to zero scratch and "
                                                   "spills)")
        removed: list[KernelRef] = Field(description="Baseline kernels no longer built (a note, not a failure)")

    schema = CheckDocument.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://spillway.dev/schemas/check-2.json"
    return schema
