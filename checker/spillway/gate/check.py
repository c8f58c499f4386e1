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

import gc
import operator
import os
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Callable, Final, Iterable, Literal, Optional

from pydantic import ConfigDict, Field

from spillway import __version__
from spillway.errors import InputError, UsageError
from spillway.resources.targets import target_selected
from spillway.gate.report_input import NEED_ORDER   # occupancy_next's resources, as it lists them

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
    # The report record's ``occupancy_next`` under the model it was read with
    # (its worst instance's); None at the cap, when nothing raises it, and for a
    # baseline's kernels (a baseline keeps no wave size or work-group bound).
    occupancy_next: Optional[dict] = None

    def add_instance(self, resources: Resources, occupancy_next: Optional[dict], instances: int = 1) -> None:
        """Fold in another instance of the kernel: each resource at its worse value."""
        self.occupancy_next = worse_next(self.resources.occupancy, self.occupancy_next,
                                         resources.occupancy, occupancy_next)
        if self.resources != resources:
            self.resources = self.resources.worst(resources)
        self.instances += instances


def worse_next(occupancy: Optional[int], step: Optional[dict], other_occupancy: Optional[int],
               other_step: Optional[dict]) -> Optional[dict]:
    """The next step of two instances of one kernel: the lower one's; at the same
    figure, every need of both (each resource at its lower ``at_most``) for the
    smaller ``waves``, which holds for both as fewer resources never cost a wave;
    None when either instance has none (nothing known raises both)."""
    if occupancy is None or other_occupancy is None:     # as Resources.worst: an unknown figure yields
        return other_step if occupancy is None else step
    if occupancy != other_occupancy:
        return step if occupancy < other_occupancy else other_step
    if step is None or other_step is None:
        return None
    if step == other_step:
        return step
    needs: dict[str, int] = {}
    for need in (*step["needs"], *other_step["needs"]):
        resource, at_most = need["resource"], need["at_most"]
        needs[resource] = min(at_most, needs.get(resource, at_most))
    return {"waves": min(step["waves"], other_step["waves"]),
            "needs": [{"resource": r, "at_most": needs[r]} for r in NEED_ORDER if r in needs]}




# What check, baseline write and compare read of a kernel row: the reader's
# workers hand over only these fields (not file names, mangled symbols...).
GATE_ROW_FIELDS = ("target", "key", "name", "private_segment_fixed_size", "uses_dynamic_stack",
                   "vgpr_spill_count", "sgpr_spill_count", "vgpr_count", "agpr_count", "sgpr_count",
                   "group_segment_fixed_size", "occupancy", "occupancy_next", "compiler",
                   "code_object_version", "occupancy_model")


_SHARED_RESOURCES: dict[tuple, Resources] = {}


def aggregate_rows(rows: Iterable[tuple], usage: dict[Kernel, KernelUsage] | None = None,
                   fields: tuple[str, ...] | None = None) -> dict[Kernel, KernelUsage]:
    """Like ``aggregate``, from the reader's compact rows (KernelTable.rows,
    FIELDS order, or ``fields``), without a dict per kernel."""
    from spillway.report.reader import FIELDS

    usage = {} if usage is None else usage
    at = (fields or FIELDS).index
    target_at, key_at, name_at = at("target"), at("key"), at("name")
    picks = tuple(at(f) for f in ("private_segment_fixed_size", "uses_dynamic_stack", "vgpr_spill_count",
                                  "sgpr_spill_count", "vgpr_count", "agpr_count", "sgpr_count",
                                  "group_segment_fixed_size", "occupancy"))
    next_at = at("occupancy_next")
    head = operator.itemgetter(target_at, key_at, name_at, next_at)
    figures = operator.itemgetter(*picks)
    get = usage.get
    shared = _SHARED_RESOURCES
    if len(shared) > 1 << 16:
        shared.clear()
    shared_get = shared.get
    # Folding makes no reference cycles, and the collector's passes over the growing table
    # of kernels (a KernelUsage each) took 40% of the time (1.1 of 2.6 s on librocsparse1 7.2.4).
    collecting = gc.isenabled()
    gc.disable()
    try:
        for row in rows:
            target, key, name, step = head(row)
            ident = (target, key)
            # Resources are immutable, and a library's kernels have few distinct ones (35,557 of
            # 249,970 on librocsparse1 7.2.4): each is made once (a frozen dataclass costs
            # microseconds to build).
            values = figures(row)
            resources = shared_get(values)
            if resources is None:
                resources = shared[values] = Resources(values[0], bool(values[1]), *values[2:])
            seen = get(ident)
            if seen is None:
                usage[ident] = KernelUsage(target, key, name, resources, 1, step)
            else:
                seen.add_instance(resources, step)
    finally:
        if collecting:
            gc.enable()
    return usage


def aggregate(records: Iterable[dict]) -> dict[Kernel, KernelUsage]:
    """Report records -> one KernelUsage per (target, key), worst values."""
    usage: dict[Kernel, KernelUsage] = {}
    for record in records:
        ident = (record["target"], record["key"])
        resources = Resources.from_record(record)
        seen = usage.get(ident)
        if seen is None:
            usage[ident] = KernelUsage(record["target"], record["key"], record["name"], resources, 1,
                                       record.get("occupancy_next"))
        else:
            seen.add_instance(resources, record.get("occupancy_next"))
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

    files: list[dict] = field(default_factory=list)        # report "files" entries
    sources: list[str] = field(default_factory=list)       # the user-named paths
    usage: dict[Kernel, KernelUsage] = field(default_factory=dict)
    # What baselines record about where their kernels came from, gathered as
    # the records go by (no record is kept, of a binary or a report JSON read
    # back: a library has 250,000).
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

    def note_rows(self, rows: list[tuple], fields: tuple[str, ...] | None = None) -> None:
        from spillway.report.reader import FIELDS

        at = (fields or FIELDS).index
        for index, found in ((at("compiler"), self.compilers),
                             (at("code_object_version"), self.code_object_versions),
                             (at("occupancy_model"), self.occupancy_models)):
            found.update({row[index] for row in rows} - {None, ""})

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


def read_sources(paths: list[str], options: "ReadOptions",
                 read_binaries: Callable[..., dict] | None = None, *,
                 allow_baseline: bool = False, side: str = "", allow_empty: bool = False) -> Inputs:
    """Read binaries (with ``read_binaries``, by default the reader) and JSON
    documents named on the command line; raise InputError when nothing
    yields a kernel (unless ``allow_empty``: the matrix's view shows a cell
    without kernels as an empty column)."""
    from spillway.gate.baseline import BASELINE_PREFIX, baseline_usage, parse_baseline
    from spillway.gate.report_input import open_report
    from spillway.report.reader import read_report

    read_binaries = read_binaries or read_report
    # One occupancy model for every side: figures from a report follow the one asked for.
    model = getattr(options, "occupancy_model", "llvm23")

    inputs = Inputs(sources=list(paths))
    binaries = [p for p in paths if not sniff_json(p)]
    documents = [p for p in paths if sniff_json(p)]
    baseline_usage_parts: list[dict[Kernel, KernelUsage]] = []
    for path in documents:
        # Streamed: checked record by record as it is read, never loaded whole (gate.report_input).
        report = open_report(path)
        schema = report.head.get("schema")
        if isinstance(schema, str) and schema.startswith(BASELINE_PREFIX):
            if not allow_baseline:
                raise InputError("is a baseline file, not a build; pass it with --baseline", file=path)
            baseline = parse_baseline(_whole_json(report.path, path), path)
            part = {k: u for k, u in baseline_usage(baseline).items()
                    if target_selected(u.target, options.targets)}
            baseline_usage_parts.append(part)
            continue
        found = report.read(lambda records: _report_part(records, options.targets, model))
        inputs.files.extend(report.files)
        inputs.compilers |= found.compilers
        inputs.code_object_versions |= found.code_object_versions
        inputs.occupancy_models |= found.occupancy_models
        if not inputs.usage:
            inputs.usage = found.usage
        else:
            for ident, usage in found.usage.items():
                _merge(inputs.usage, ident, usage)
    if binaries:
        from spillway.report.reader import KernelTable

        def fold(rows: list[tuple], fields: tuple[str, ...] | None = GATE_ROW_FIELDS) -> None:
            # Rows are folded as the workers hand them over, never all held at once.
            inputs.note_rows(rows, fields)
            aggregate_rows(rows, inputs.usage, fields)

        document = read_binaries(binaries, options, rows_sink=fold, rows_fields=GATE_ROW_FIELDS)
        kernels = document["kernels"]
        inputs.files.extend(document["files"])
        if isinstance(kernels, KernelTable):
            fold(kernels.rows, None)        # (all of FIELDS: what a KernelTable holds)
        else:
            inputs.note_records(kernels)
            for ident, usage in aggregate(kernels).items():
                _merge(inputs.usage, ident, usage)
        del document, kernels
    for part in baseline_usage_parts:
        for ident, usage in part.items():
            _merge(inputs.usage, ident, usage)
    if not inputs.usage and not allow_empty:
        where = f"{side}: " if side else ""
        raise InputError(f"{where}no kernels found in {', '.join(paths)}"
                         + (" for the selected targets" if options.targets else ""))
    return inputs


def _merge(usage: dict[Kernel, KernelUsage], ident: Kernel, more: KernelUsage) -> None:
    seen = usage.get(ident)
    if seen is None:
        usage[ident] = more
    else:
        seen.add_instance(more.resources, more.occupancy_next, more.instances)


def _report_part(records: Iterable[dict], targets: list[str], model: str) -> Inputs:
    """The kernels of one report JSON document, aggregated as its records are
    read (checked already by gate.report_input).  A fresh part on each call:
    ReportJson.read starts over when a document leaves spillway's layout."""
    from spillway.resources.occupancy import apply_model

    part = Inputs()
    # One string per distinct name, key and target: a library's kernel is built for
    # many targets (librocsparse1 7.2.4: 239,806 kernels, 17,129 names; 297 MB of
    # names and keys when each record keeps its own copy).
    strings: dict[str, str] = {}
    share = strings.setdefault
    compilers: set[Optional[str]] = set()
    versions: set[Optional[int]] = set()
    models = part.occupancy_models

    def selected() -> Iterable[dict]:
        for record in records:
            if target_selected(record["target"], targets):
                if model == "producer" or record.get("occupancy_model") != model:
                    record = apply_model(record, model)     # (else apply_model returns it as it is)
                # As Inputs.note_records does (the types were checked: str, int or None).
                compilers.add(record.get("compiler"))
                versions.add(record.get("code_object_version"))
                models.add(record.get("occupancy_model") or "llvm22")
                for name in ("target", "key", "name"):
                    record[name] = share(record[name], record[name])
                yield record

    part.usage = aggregate(selected())
    part.compilers = {c for c in compilers if c}
    part.code_object_versions = {v for v in versions if v is not None}
    return part


def _whole_json(path: str, file: str):
    """A baseline named among a build's paths (compare), read whole (baselines
    are small by default; gate.baseline checks them)."""
    import orjson

    from spillway.paths import loads as json_loads

    try:
        with open(path, "rb") as handle:
            return json_loads(handle.read())
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=file) from None
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", file=file) from None


# -- checking ------------------------------------------------------------------

@dataclass(slots=True)
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
    findings: Sequence[Finding]            # every kernel x metric, sorted
    vanished: list[tuple[str, str, str]]   # (target, key, name) in the baseline, not in the build
    new_kernels: list[tuple[str, str, str]]
    # The occupancy model the build was read with: the baseline's unless overridden (version 1: llvm22).
    occupancy_model: str = "llvm22"
    # The findings that did not pass, in the same order (None: taken from ``findings``).
    failing: Optional[list[Finding]] = None

    def __post_init__(self) -> None:
        if self.failing is None:
            self.failing = [f for f in self.findings if not f.passed]

    @property
    def failures(self) -> list[Finding]:
        assert self.failing is not None
        return self.failing

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
            "occupancy_model": self.occupancy_model,
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
          targets: list[str] | None = None, baseline_path: str = "",
          occupancy_model: Optional[str] = None) -> CheckResult:
    """Hold every kernel of ``usage`` to its allowance in ``baseline``.

    ``occupancy_model`` is the model ``usage`` was read with (--occupancy-model);
    None: the baseline's, which is what callers read with unless told otherwise
    (a version-1 baseline names none: llvm22).  The document names it.

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
    # Kernels absent from the baseline (most, in a default baseline) are held to the
    # new-kernel allowances: the same rules for each, worked out once.
    absent_rules = [(name, METRICS[name].value, METRICS[name].within, METRICS[name].new_kernel_allowance)
                    for name in gate]
    failing: list[Finding] = []
    new_kernels = []
    # Only the findings that fail are made here: the full list (a Finding per kernel and
    # metric, 240,000 on a ROCm library, sorted) is made when an output lists every one.
    # Whether an absent kernel's resources pass, by the Resources object: kernels share
    # them (aggregate_rows), so each distinct one is tested once (35,557 of 239,806).
    absent_passes: dict[int, bool] = {}
    for ident, kernel in usage.items():
        entry = entries.get(ident)
        if entry is None:
            if every_kernel:
                # In a baseline of the non-zero kernels only, absence is the norm, not news.
                new_kernels.append((ident[0], ident[1], kernel.name))
            resources = kernel.resources
            passes = absent_passes.get(id(resources))
            if passes is None:
                passes = absent_passes[id(resources)] = all(
                    within(value(resources), allowed) and not (name == "scratch" and resources.dynamic_stack)
                    for name, value, within, allowed in absent_rules)   # (the test _kernel_findings makes)
            if passes:
                continue
        failing.extend(f for f in _kernel_findings(ident, kernel, entry, gate, absent_rules) if not f.passed)
    by_order = {name: index for index, name in enumerate(gate)}
    failing.sort(key=lambda f: (f.target, f.name, f.key, by_order[f.metric]))
    new_kernels.sort(key=lambda v: (v[0], v[2], v[1]))
    wanted = targets or []
    vanished = sorted(((e.target, e.key, e.name) for ident, e in entries.items()
                       if ident not in usage and target_selected(e.target, wanted)),
                      key=lambda v: (v[0], v[2], v[1]))

    def every_finding() -> list[Finding]:
        order = sorted((ident[0], kernel.name, ident[1], ident) for ident, kernel in usage.items())
        findings: list[Finding] = []
        for _target, _name, _key, ident in order:
            findings.extend(_kernel_findings(ident, usage[ident], entries.get(ident), gate, absent_rules))
        return findings

    return CheckResult(baseline_path, gate, len(usage), _Findings(every_finding), vanished, new_kernels,
                       occupancy_model or baseline.occupancy_model or "llvm22", failing)


def _kernel_findings(ident: Kernel, kernel: KernelUsage, entry, gate: tuple[str, ...],
                     absent_rules: list) -> list[Finding]:
    """A kernel's findings, one per gated metric, against its baseline entry
    (None: absent from the baseline, held to the new-kernel allowances)."""
    target, key = ident
    resources = kernel.resources
    if entry is None:
        found = []
        for name, value, within, allowed in absent_rules:
            actual = value(resources)
            dynamic_over = name == "scratch" and resources.dynamic_stack
            found.append(Finding(target, key, kernel.name, name, allowed, actual,
                                 within(actual, allowed) and not dynamic_over, True, dynamic_over))
        return found
    dynamic_allowed = bool(entry.allow.dynamic_stack) or (
        entry.allow.scratch is None and entry.recorded.dynamic_stack)
    found = []
    for name in gate:
        metric = METRICS[name]
        actual = metric.value(resources)
        allowed = getattr(entry.allow, name)
        if allowed is None:
            allowed = getattr(entry.recorded, name)
        dynamic_over = name == "scratch" and resources.dynamic_stack and not dynamic_allowed
        found.append(Finding(target, key, kernel.name, name, allowed, actual,
                             metric.within(actual, allowed) and not dynamic_over,
                             new_kernel=False, dynamic_stack=dynamic_over))
    return found


class _Findings(Sequence):
    """Every finding of a check, made on first use (in order)."""

    def __init__(self, make: Callable[[], list[Finding]]):
        self._make: Callable[[], list[Finding]] | None = make
        self._findings: list[Finding] = []

    def _all(self) -> list[Finding]:
        if self._make is not None:
            self._findings, self._make = self._make(), None
        return self._findings

    def __len__(self) -> int:
        return len(self._all())

    def __getitem__(self, index):
        return self._all()[index]

    def __iter__(self):
        return iter(self._all())


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

    from spillway.report.record import OccupancyModelChoice

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
        occupancy_model: OccupancyModelChoice = Field(
            description="The occupancy model the build's figures follow: the one the baseline was written with "
                        "unless --occupancy-model overrides it (a version-1 baseline names none: llvm22); "
                        "producer: per code object, the producing LLVM's")
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
