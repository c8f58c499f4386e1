"""The check: every kernel of a build held to its allowance in a baseline
(gate.metrics: what each metric measures and which way it holds), and every
kernel and target of the baseline still built, into one CheckResult: the
model every rendering of ``spillway check`` reads.

A baseline kernel the build no longer has, and a target the baseline was
written from (``kernels_written_from``; a matrix cell's declared targets too)
that has no kernel in the build, fail the check (issue 31: a build whose
gfx1151 code vanished passed) until ``baseline write --allow-removed KEY`` or
``--allow-removed-target TARGET`` records the removal and why.  A baseline
written without --record-all names only the kernels it records: the others
are counted per target, and a target with fewer kernels than it was written
from is a note (``fewer_kernels``), as the kernels gone cannot be named."""

from __future__ import annotations

import gc
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import TYPE_CHECKING, Callable, Final, Iterable, Mapping, Optional

from spillway import __version__
from spillway.errors import UsageError
from spillway.gate.kernels import Kernel, KernelUsage
from spillway.gate.metrics import ALL_KERNEL_GATES, CODE_GATES, METRICS, refuse_without_code
from spillway.resources.occupancy import UNNAMED_MODEL
from spillway.resources.targets import target_selected

if TYPE_CHECKING:  # pragma: no cover
    from spillway.gate.baseline import Baseline
    from spillway.gate.failure_code import FailureCode

# How a sink shows a string from a binary inside spillway's own words (spillway.untrusted: shown,
# markdown_code, visible): the wordings below take one, and carry the text raw by default.
Quote = Callable[[str], str]


def raw(text: str) -> str:
    return text


# version 2 with removed_targets and fewer_kernels; removals fail; 4: a failure's code.vgpr_peak (--pressure)
CHECK_SCHEMA: Final = "spillway.check/4"


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

    @classmethod
    def from_document(cls, failure: dict) -> "Finding":
        """A failing finding of a spillway.check/2 document (one of its ``failures``)."""
        return cls(target=failure["target"], key=failure["key"], name=failure["name"], metric=failure["metric"],
                   allowed=failure["allowed"], actual=failure["actual"], passed=False,
                   new_kernel=bool(failure.get("new_kernel")), dynamic_stack=bool(failure.get("dynamic_stack")))

    def line(self, names: str = "short", quote: Quote = raw) -> str:
        """The one wording of a finding with its kernel, for check, the matrix and SARIF:
        ``topk<32> [gfx1100]: scratch 272 B/lane, allowed at most 0 B/lane``; ``quote``:
        how the sink shows the name and target (they come from the binary: raw here)."""
        from spillway.resources.names import table_name
        return f"{quote(table_name(self.name, names))} [{quote(self.target)}]: {self.message()}"

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


@dataclass(frozen=True)
class RemovedTarget:
    """A target the build has no kernel for: one the baseline was written from
    (``kernels``: how many kernels it had there, None when not known), or one
    the build declares (a matrix cell's targets in cells.toml)."""

    target: str
    kernels: Optional[int] = None
    declared: bool = False           # the build declares it (a matrix cell)
    in_baseline: bool = True         # the baseline was written from it

    def line(self, quote: Quote = raw) -> str:
        """``target gfx1151: no kernel built for it (the baseline was written from 66 kernels on it)``"""
        return f"target {quote(self.target)}: {self.reason()}"

    def reason(self) -> str:
        """``no kernel built for it (the baseline was written from 66 kernels on it)``: spillway's words only."""
        why = []
        if self.in_baseline:
            why.append(f"the baseline was written from {self.kernels} kernel{'s' if self.kernels != 1 else ''} on it"
                       if self.kernels else "the baseline has it")
        if self.declared:
            why.append("the cell declares it in cells.toml")
        return f"no kernel built for it ({'; '.join(why)})"


@dataclass(frozen=True)
class FewerKernels:
    """A baseline written without --record-all, and a target the build has
    fewer kernels on than the baseline was written from (a note: kernels at
    zero are not recorded, so those gone cannot be named)."""

    target: str
    built: int
    written_from: int
    unnamed: int          # at least this many gone that the baseline does not record (those it records are named)

    def line(self, quote: Quote = raw) -> str:
        return (f"{quote(self.target)}: {self.built} kernels built, the baseline was written from "
                f"{self.written_from}: at least {self.unnamed} of the kernels it does not record (its gate found "
                f"them at zero) "
                f"{'are' if self.unnamed != 1 else 'is'} no longer built (a baseline written with --record-all "
                f"names and gates each)")


@dataclass(frozen=True)
class RemovalCommands:
    """The commands that accept what a check found no longer built (``baseline
    write ... --allow-removed KEY`` / ``--allow-removed-target TARGET``), worded by
    the caller (gate.commands.CheckCommands, a matrix cell)."""

    kernel: Callable[[str], str]                           # a key -> its command
    target: Callable[[RemovedTarget], str]                 # a removed target -> its command (or what to do)
    every: Callable[["CheckResult"], tuple[str, int]]      # (one command for all, kernels left out of it)


@dataclass
class CheckResult:
    baseline_path: str
    gate: tuple[str, ...]
    kernels: int
    findings: Sequence[Finding]            # every kernel x metric, sorted
    # (target, key, name) in the baseline, not in the build (a failure; those of removed targets are not listed)
    vanished: list[tuple[str, str, str]]
    new_kernels: list[tuple[str, str, str]]
    # The occupancy model the build was read with: the baseline's unless overridden (version 1: llvm22).
    occupancy_model: str = UNNAMED_MODEL
    # The findings that did not pass, in the same order (None: taken from ``findings``).
    failing: Optional[list[Finding]] = None
    removed_targets: list[RemovedTarget] = field(default_factory=list)    # a failure each
    fewer_kernels: list[FewerKernels] = field(default_factory=list)       # notes
    # (target, key) -> gate.source_location.SourceLocation of failing kernels whose binaries have line
    # tables (read by spillway check after the check; json and sarif point at them).
    sources: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.failing is None:
            self.failing = [f for f in self.findings if not f.passed]

    def finding_rows(self) -> Iterable[tuple]:
        """Every finding as a tuple of its fields (target, key, name, metric, allowed,
        actual, passed, new_kernel, dynamic_stack: Finding's order), in ``findings``' order,
        without an object per kernel where the check made none."""
        if isinstance(self.findings, _Findings):
            return self.findings.rows()
        return map(_fields, self.findings)

    def finding_columns(self) -> tuple[Sequence, ...]:
        """Every finding's fields a column each (``finding_rows``' fields, in its order):
        what a listing of every kernel makes its lines of, a column at a time."""
        if isinstance(self.findings, _Findings):
            return self.findings.columns()
        rows = list(map(_fields, self.findings))
        return tuple(zip(*rows)) if rows else ((),) * len(Finding.__slots__)

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
        return not self.failures and not self.vanished and not self.removed_targets

    def summary(self, quote: Quote = raw) -> str:
        plural = "s" if self.kernels != 1 else ""
        failing = []
        if self.failures:
            detail = ", ".join(f"{m}: {n}" for m, n in self.by_metric().items())
            failing.append(f"{self.failed_kernels} of {self.kernels} kernel{plural} over their baseline ({detail})")
        if self.removed_targets:
            names = ", ".join(quote(t.target) for t in self.removed_targets)
            failing.append(f"target{'s' if len(self.removed_targets) != 1 else ''} {names} no longer built")
        if self.vanished:
            failing.append(f"{len(self.vanished)} baseline kernel{'s' if len(self.vanished) != 1 else ''} "
                           f"no longer built")
        text = "FAIL: " + "; ".join(failing) if failing else f"OK: {self.kernels} kernel{plural} within baseline"
        if self.new_kernels:
            text += f"; {len(self.new_kernels)} not in the baseline"
        return text

    def counts(self) -> dict[str, object]:
        """``summary`` of the document: counts only (the text is ``sentence``)."""
        return {"kernels": self.kernels, "failed_kernels": self.failed_kernels,
                "failures": len(self.failures), "by_metric": self.by_metric(),
                "added": len(self.new_kernels), "removed": len(self.vanished),
                "removed_targets": len(self.removed_targets)}

    def _failure_json(self, f: Finding, code: Optional[Mapping[tuple[str, str], "FailureCode"]]) -> dict:
        found: dict[str, object] = {"target": f.target, "key": f.key, "name": f.name, "metric": f.metric,
                                    "allowed": f.allowed, "actual": f.actual, "new_kernel": f.new_kernel,
                                    "dynamic_stack": f.dynamic_stack}
        source = self.sources.get((f.target, f.key))
        if source is not None:
            found["source"] = source.as_dict()
        figures = code.get((f.target, f.key)) if code else None
        if figures is not None:
            found["code"] = figures.as_dict()
        return found

    def to_json(self, code: Optional[Mapping[tuple[str, str], "FailureCode"]] = None) -> dict:
        """The spillway.check/4 document; ``code``: the failing kernels' machine code by
        (target, key) (gate.failure_code), each failure's ``code`` member."""
        return {
            "schema": CHECK_SCHEMA,
            "spillway_version": __version__,
            "occupancy_model": self.occupancy_model,
            "baseline": self.baseline_path,
            "gate": list(self.gate),
            "passed": self.passed,
            "summary": self.counts(),
            "sentence": self.summary(),
            "failures": [self._failure_json(f, code) for f in self.failures],
            "added": [{"target": t, "key": k, "name": n} for t, k, n in self.new_kernels],
            "removed": [{"target": t, "key": k, "name": n} for t, k, n in self.vanished],
            "removed_targets": [{"target": t.target, "kernels_written_from": t.kernels, "declared": t.declared,
                                 "in_baseline": t.in_baseline} for t in self.removed_targets],
            "fewer_kernels": [{"target": f.target, "built": f.built, "written_from": f.written_from,
                               "unnamed": f.unnamed} for f in self.fewer_kernels],
        }


def check(usage: dict[Kernel, KernelUsage], baseline: "Baseline", gate: Iterable[str],
          targets: list[str] | None = None, baseline_path: str = "",
          occupancy_model: Optional[str] = None, declared_targets: Sequence[str] = ()) -> CheckResult:
    """Hold every kernel of ``usage`` to its allowance in ``baseline``.

    ``occupancy_model`` is the model ``usage`` was read with (--occupancy-model);
    None: the baseline's, which is what callers read with unless told otherwise
    (a version-1 baseline names none: llvm22).  The document names it.

    A metric the baseline does not gate (``check --gate`` asked for more) is
    held to the value recorded when the baseline was written.  Kernels absent
    from the baseline are held to ``new_kernel_allowance`` (zero scratch, no
    dynamic stack, zero spills; other metrics unconstrained).

    Every baseline kernel and every target the baseline was written from, and
    each of ``declared_targets`` (a matrix cell's), must still be built, among
    the targets ``targets`` selects (checking a subset says nothing of the others).
    """
    gate = tuple(m for m in METRICS if m in set(gate))
    refuse_without_code(usage, gate)
    every_kernel = baseline.records_every_kernel
    if not every_kernel:
        refuse_partial_baseline(baseline, gate, baseline_path)
    refuse_without_recorded_code(baseline, gate, baseline_path)
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
    removed_targets, vanished, fewer = _removals(usage, baseline, targets or [], declared_targets)

    def every_column() -> tuple[Sequence, ...]:
        # Every finding, a column per field (Finding.__slots__' order): TSV and JUnit list all
        # 178,610 kernels of librocsparse1 6.4.3 and need no object per kernel (made one each, the
        # findings took 0.66 CPU-s).  Made without a Python step per kernel (map, zip and sorted
        # run in C: a loop making a tuple per kernel and another per finding took 0.25 CPU-s).
        # Nothing here makes a reference cycle: the collector's passes are spared, as
        # gate.kernels spares them.
        collecting = gc.isenabled()
        gc.disable()
        try:
            idents = list(usage)
            kernels = list(usage.values())
            resources = list(map(_RESOURCES, kernels))
            # A kernel's findings after its target, key and name: an absent kernel's worked out
            # once per Resources object (shared, as above: 30,422 of 178,610), a recorded one's
            # against its entry.
            shared = dict(zip(map(id, resources), resources))
            absent_tails = {address: _absent_figures(figures, absent_rules) for address, figures in shared.items()}
            recorded_tails = {ident: [_fields(f)[3:] for f in _kernel_findings(ident, usage[ident], entry, gate,
                                                                             absent_rules)]
                              for ident, entry in entries.items() if ident in usage}
            tails = map(recorded_tails.get, idents, map(absent_tails.__getitem__, map(id, resources)))
            # (target, key) is unique: the findings after them are never compared.
            order = sorted(zip(map(_TARGET, idents), map(_NAME, kernels), map(_KEY, idents), tails))
            if not order or not gate:               # (no kernel, or no gated metric: no finding)
                return ((),) * len(Finding.__slots__)
            # (every kernel has a finding per gated metric)
            targets, names, keys, kernel_tails = zip(*order)
            if len(gate) == 1:
                return (targets, keys, names, *zip(*map(_FIRST, kernel_tails)))
            counts = list(map(len, kernel_tails))
            return (*(list(chain.from_iterable(map(repeat, column, counts))) for column in (targets, keys, names)),
                    *zip(*chain.from_iterable(kernel_tails)))
        finally:
            if collecting:
                gc.enable()

    return CheckResult(baseline_path, gate, len(usage), _Findings(every_column), vanished, new_kernels,
                       occupancy_model or baseline.occupancy_model or UNNAMED_MODEL, failing, removed_targets, fewer)


def _removals(usage: dict[Kernel, KernelUsage], baseline: "Baseline", wanted: list[str],
              declared: Sequence[str]) -> tuple[list[RemovedTarget], list[tuple[str, str, str]], list[FewerKernels]]:
    """What the build no longer has: targets, the kernels on the others, and (a baseline
    of the non-zero kernels only) the targets with fewer kernels than it was written from."""
    from spillway.gate.baseline import vanished as missing

    gone, kernels = missing(baseline, usage, wanted, declared)
    written_from = baseline.kernels_written_from or {}
    of_baseline = baseline.targets_built()
    removed_targets = [RemovedTarget(t, written_from.get(t) if t in of_baseline else None,
                                     any(target_selected(t, [d]) for d in declared), t in of_baseline) for t in gone]
    vanished = sorted(((e.target, e.key, e.name) for e in kernels), key=lambda v: (v[0], v[2], v[1]))
    fewer = []
    if not baseline.records_every_kernel and written_from:
        built: dict[str, int] = {}
        for target, _key in usage:
            built[target] = built.get(target, 0) + 1
        named: dict[str, int] = {}
        for target, _key, _name in vanished:
            named[target] = named.get(target, 0) + 1
        fewer = [FewerKernels(target, built[target], count, count - built[target] - named.get(target, 0))
                 for target, count in sorted(written_from.items())
                 if target in built and count - built[target] - named.get(target, 0) > 0
                 and target_selected(target, wanted)]
    return removed_targets, vanished, fewer


def _kernel_findings(ident: Kernel, kernel: KernelUsage, entry, gate: tuple[str, ...],
                     absent_rules: list) -> list[Finding]:
    """A kernel's findings, one per gated metric, against its baseline entry
    (None: absent from the baseline, held to the new-kernel allowances)."""
    target, key = ident
    resources = kernel.resources
    if entry is None:
        return [Finding(target, key, kernel.name, *figures) for figures in _absent_figures(resources, absent_rules)]
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


def _absent_figures(resources, absent_rules: list) -> list[tuple]:
    """A kernel absent from the baseline, held to the new-kernel allowances: for each
    gated metric, its finding's fields from ``metric`` on (metric, allowed, actual,
    passed, new_kernel, dynamic_stack)."""
    figures = []
    for name, value, within, allowed in absent_rules:
        actual = value(resources)
        dynamic_over = name == "scratch" and resources.dynamic_stack
        figures.append((name, allowed, actual, within(actual, allowed) and not dynamic_over, True, dynamic_over))
    return figures


# (the fields every_column takes, in C: a kernel's resources and name, an ident's target and key, a tail)
_RESOURCES = attrgetter("resources")
_NAME = attrgetter("name")
_TARGET = itemgetter(0)
_KEY = itemgetter(1)
_FIRST = itemgetter(0)


def _fields(finding: Finding) -> tuple:
    """A finding's fields as a tuple, in Finding.__slots__' order (Finding(*fields) is it again)."""
    return (finding.target, finding.key, finding.name, finding.metric, finding.allowed, finding.actual,
            finding.passed, finding.new_kernel, finding.dynamic_stack)


class _Findings(Sequence):
    """Every finding of a check, made on first use (in order): a column per
    field (``columns``: all a listing of every kernel needs), as tuples of
    their fields (``rows``), as Finding objects when asked."""

    def __init__(self, make: Callable[[], tuple[Sequence, ...]]):
        self._make: Callable[[], tuple[Sequence, ...]] | None = make
        self._columns: tuple[Sequence, ...] = ()
        self._rows: list[tuple] | None = None
        self._findings: list[Finding] | None = None

    def columns(self) -> tuple[Sequence, ...]:
        if self._make is not None:
            self._columns, self._make = self._make(), None
        return self._columns

    def rows(self) -> list[tuple]:
        if self._rows is None:
            self._rows = list(zip(*self.columns()))
        return self._rows

    def _all(self) -> list[Finding]:
        if self._findings is None:
            self._findings = [Finding(*row) for row in self.rows()]
        return self._findings

    def __len__(self) -> int:
        return len(self.columns()[0])

    def __getitem__(self, index):
        return self._all()[index]

    def __iter__(self):
        return iter(self._all())


def refuse_without_recorded_code(baseline: "Baseline", gate: tuple[str, ...], path: str) -> None:
    """A machine-code gate the baseline does not gate has no recorded figure
    to hold kernels to: UsageError (exit 2) with the command that rewrites it."""
    missing = [m for m in gate if m in CODE_GATES and m not in baseline.gate]
    if not missing:
        return
    raise UsageError(f"{path or 'baseline'}: records no {','.join(missing)} (its gate: {','.join(baseline.gate)}), "
                     f"so it cannot check it; rewrite it with: {_rewrite_command(baseline, gate, path)}")


def refuse_partial_baseline(baseline: "Baseline", gate: tuple[str, ...], path: str) -> None:
    """A baseline written without --record-all holds only the kernels its own
    gate found non-zero: checking another metric against it would hold every
    omitted kernel to zero (or to nothing).  UsageError (exit 2), one line
    with the command that rewrites it."""
    missing = [m for m in gate if m in ALL_KERNEL_GATES or m not in baseline.gate]
    if not missing:
        return
    raise UsageError(f"{path or 'baseline'}: records only the kernels its gate ({','.join(baseline.gate)}) finds "
                     f"non-zero, so it cannot check {','.join(missing)}; rewrite it with: "
                     f"{_rewrite_command(baseline, gate, path)}")


def _rewrite_command(baseline: "Baseline", gate: tuple[str, ...], path: str) -> str:
    """The `baseline write` that records what both the baseline's gate and ``gate`` need."""
    wanted = [m for m in METRICS if m in set(baseline.gate) | set(gate)]
    sources = " ".join(f.path for f in baseline.provenance.files) or "BUILD"
    return f"spillway baseline write {sources} -o {path or 'BASELINE'} --gate {','.join(wanted)}"
