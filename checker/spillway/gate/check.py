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
from typing import TYPE_CHECKING, Callable, Iterable, Literal, Optional

from spillway import __version__
from spillway.errors import InputError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from spillway.gate.baseline import Baseline
    from spillway.report.reader import ReadOptions

CHECK_SCHEMA = "spillway.check/1"

MetricName = Literal["scratch", "spills", "occupancy", "vgprs", "lds"]
Kernel = tuple[str, str]        # (target, key)


# -- resources of one kernel ---------------------------------------------------

@dataclass(frozen=True, slots=True)
class Resources:
    """The figures spillway gates and compares, for one kernel on one target."""

    scratch: int                 # private_segment_fixed_size, bytes per lane
    dynamic_stack: bool
    vgpr_spills: int
    sgpr_spills: int
    vgprs: int
    agprs: Optional[int]
    sgprs: int
    lds: int                     # group_segment_fixed_size, bytes per work-group
    occupancy: Optional[int]     # waves per SIMD; None for an unknown target

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

    records: list[dict] = field(default_factory=list)      # report records (binaries and reports)
    files: list[dict] = field(default_factory=list)        # report "files" entries
    sources: list[str] = field(default_factory=list)       # the user-named paths
    usage: dict[Kernel, KernelUsage] = field(default_factory=dict)


def sniff_json(path: str) -> bool:
    """Does this regular file start (after white space) with a JSON object?"""
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

    read_binaries = read_binaries or read_report

    inputs = Inputs(sources=list(paths))
    binaries = [p for p in paths if not sniff_json(p)]
    documents = [p for p in paths if sniff_json(p)]
    baseline_usage_parts: list[dict[Kernel, KernelUsage]] = []
    for path in documents:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            document = orjson.loads(data)
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
        inputs.records.extend(_report_records(document, path, options.targets))
        inputs.files.extend(document.get("files", []))
    if binaries:
        document = read_binaries(binaries, options)
        inputs.records.extend(document["kernels"])
        inputs.files.extend(document["files"])
    inputs.usage = aggregate(inputs.records)
    for part in baseline_usage_parts:
        for ident, usage in part.items():
            seen = inputs.usage.get(ident)
            if seen is None:
                inputs.usage[ident] = usage
            else:
                seen.resources = seen.resources.worst(usage.resources)
                seen.instances += usage.instances
    if not inputs.usage:
        where = f"{side}: " if side else ""
        raise InputError(f"{where}no kernels found in {', '.join(paths)}"
                         + (" for the selected targets" if options.targets else ""))
    return inputs


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
        if target_selected(record["target"], targets):
            out.append(record)
    return out


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

    def to_json(self) -> dict:
        return {
            "schema": CHECK_SCHEMA,
            "spillway_version": __version__,
            "baseline": self.baseline_path,
            "gate": list(self.gate),
            "passed": self.passed,
            "kernels": self.kernels,
            "failed_kernels": self.failed_kernels,
            "by_metric": self.by_metric(),
            "failures": [{"target": f.target, "key": f.key, "name": f.name, "metric": f.metric,
                          "allowed": f.allowed, "actual": f.actual, "new_kernel": f.new_kernel,
                          "dynamic_stack": f.dynamic_stack} for f in self.failures],
            "new_kernels": [{"target": t, "key": k, "name": n} for t, k, n in self.new_kernels],
            "vanished": [{"target": t, "key": k, "name": n} for t, k, n in self.vanished],
            "summary": self.summary(),
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
    entries = {(e.target, e.key): e for e in baseline.kernels}
    findings: list[Finding] = []
    new_kernels = []
    for ident in sorted(usage, key=lambda i: (i[0], usage[i].name, i[1])):
        kernel = usage[ident]
        entry = entries.get(ident)
        if entry is None:
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


    class CheckDocument(BaseModel):
        model_config = ConfigDict(extra="forbid")

        schema_: Literal["spillway.check/1"] = Field(CHECK_SCHEMA, alias="schema")
        spillway_version: str
        baseline: str = Field(description="Path of the baseline file")
        gate: list[MetricName] = Field(description="Metrics checked")
        passed: bool
        kernels: int = Field(description="Distinct (target, key) kernels checked")
        failed_kernels: int
        by_metric: dict[str, int] = Field(description="Failing kernels per metric")
        failures: list[CheckFailure]
        new_kernels: list[KernelRef] = Field(description="Kernels not in the baseline")
        vanished: list[KernelRef] = Field(description="Baseline kernels no longer built (a note, not a failure)")
        summary: str

    schema = CheckDocument.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://spillway.dev/schemas/check-1.json"
    return schema
