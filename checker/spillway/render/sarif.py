"""SARIF 2.1.0 for GitHub code scanning: ``check``, ``compare`` and ``matrix
run`` with ``--format sarif``.

One run per gated build (a check, a comparison, each matrix cell), each with
its own ``automationDetails.id``: GitHub refuses an upload holding several
runs of one tool and category.  One result per failing kernel and metric,
located at the kernel's line in the baseline file (the line ``baseline
write`` wrote for its key), or at the baseline file's first line for a
kernel the baseline lacks; a check's result of a kernel whose binary has a
line table points at its source line instead (gate.source_location), the
baseline's line kept as a related location.  GitHub's upload limits (20 runs, 25,000 results
a run, 10 MB gzipped) are held here: more runs is a usage error, a run with
more results keeps the first 25,000 and says how many it left out.

The rules are the gate's metrics (gate.metrics); the message is the
finding's sentence (Finding.message) and the command that accepts it.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Sequence

from spillway import __version__, json_codec
from spillway.errors import UsageError
from spillway.gate.check import CheckResult, Finding, RemovalCommands, RemovedTarget
from spillway.gate.compare import Comparison, KernelDiff, uses_scratch
from spillway.gate.metrics import METRICS
from spillway.render.models import CheckModel, CompareModel
from spillway.resources.names import table_name
from spillway.untrusted import visible      # message texts are for people: a name as one line

if TYPE_CHECKING:
    from spillway.gate.failure_code import FailureCode

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/spillway-amdgpu/"
# GitHub's limits for one upload (docs: "SARIF support for code scanning").
MAX_RUNS = 20
MAX_RESULTS_PER_RUN = 25_000
MAX_GZIPPED_BYTES = 10 * 1024 * 1024
# compare's criteria, as rules of their own (a comparison has no allowance).
_COMPARE_RULES = {
    "scratch": "more scratch bytes per lane than the old build (private_segment_fixed_size), or a dynamic stack",
    "spills": "more spilled registers than the old build (vgpr_spill_count + sgpr_spill_count)",
    "occupancy": "fewer waves per SIMD than the old build",
    "added-with-scratch": "a kernel only in the new build that uses scratch or spills registers",
}
# A check's removals, as rules of their own (listed in a run only when it has such a result).
_REMOVAL_RULES = {
    "removed": ("BaselineKernelNoLongerBuilt", "a kernel the baseline has that the build no longer builds"),
    "removed-target": ("TargetNoLongerBuilt", "a target the baseline was written from, or the build declares, "
                                              "with no kernel in the build"),
}


@dataclass(frozen=True)
class Location:
    """Where a result points: a file of the repository (as given on the
    command line, relative to the working folder) and a 1-based line."""

    path: str
    line: int = 1


def kernel_lines(baseline: bytes) -> dict[tuple[str, str], int]:
    """(target, key) -> the 1-based line of a baseline file that holds it.

    Every version writes one kernel a line: ``{"key": ..., "targets": [...]}``
    (version 3) or ``{"target": ..., "key": ...}`` (versions 1 and 2).  Lines
    that are not a kernel object are passed over."""
    found: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(baseline.splitlines(), start=1):
        text = raw.strip().rstrip(b",")
        if not (text.startswith(b"{") and text.endswith(b"}") and b'"key"' in text):
            continue
        try:
            line = json_codec.loads(text)
        except json_codec.JSONDecodeError:
            continue
        key = line.get("key") if isinstance(line, dict) else None
        if not isinstance(key, str):
            continue
        targets = line.get("targets")
        if isinstance(targets, list):
            for entry in targets:
                if isinstance(entry, dict) and isinstance(entry.get("target"), str):
                    found.setdefault((entry["target"], key), number)
        elif isinstance(line.get("target"), str):
            found.setdefault((line["target"], key), number)
    return found


def repository_path(path: str) -> str:
    """A path as SARIF's artifactLocation.uri: relative to the working folder
    (the repository's root in CI), with forward slashes."""
    if os.path.isabs(path):
        relative = os.path.relpath(path)
        path = relative if not relative.startswith("..") else path
    return path.replace(os.sep, "/")


def _fingerprint(*parts: str) -> str:
    # Stable across runs and line moves: GitHub matches alerts between uploads on it.
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _location(where: Location, uri: Optional[str] = None) -> dict:
    """``uri``: repository_path(where.path) when worked out already (a run's results all point into one
    baseline)."""
    return {"physicalLocation": {"artifactLocation": {"uri": repository_path(where.path) if uri is None else uri,
                                                      "uriBaseId": "%SRCROOT%"},
                                 "region": {"startLine": where.line}}}


def _source_location(source) -> dict:
    """A kernel's source line (gate.source_location.SourceLocation; its path already relative to the
    source root)."""
    region = {"startLine": source.line}
    if source.column:
        region["startColumn"] = source.column
    return {"physicalLocation": {"artifactLocation": {"uri": source.path, "uriBaseId": "%SRCROOT%"},
                                 "region": region}}


def _check_rules() -> list[dict]:
    return [{"id": name, "name": f"KernelOver{name.capitalize()}Allowance",
             "shortDescription": {"text": f"{name} over the baseline's allowance"},
             "fullDescription": {"text": f"{metric.description}: {'at least' if metric.floor else 'at most'} "
                                         f"the allowance the baseline file gives the kernel"},
             "defaultConfiguration": {"level": "error"},
             "properties": {"tags": ["performance", "amdgpu"]}}
            for name, metric in METRICS.items()]


def _run(category: str, rules: list[dict], results: list[dict], properties: dict) -> dict:
    left_out = max(0, len(results) - MAX_RESULTS_PER_RUN)
    run: dict = {
        "tool": {"driver": {"name": "spillway", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFORMATION_URI, "rules": rules}},
        "automationDetails": {"id": f"{category}/"},
        "columnKind": "unicodeCodePoints",
        "results": results[:MAX_RESULTS_PER_RUN],
        "properties": properties,
    }
    if left_out:
        run["invocations"] = [{"executionSuccessful": True, "toolExecutionNotifications": [
            {"level": "warning", "message": {"text": f"{left_out} more results left out: GitHub takes at most "
                                                     f"{MAX_RESULTS_PER_RUN} a run (the JSON format has them all)"}}]}]
    return run


def _rule_index(rules: list[dict]) -> dict[str, int]:
    return {rule["id"]: i for i, rule in enumerate(rules)}


def check_run(result: CheckResult, baseline: bytes, category: str,
              accept: Callable[[Finding], str], removals: Optional[RemovalCommands] = None,
              code: Optional[Mapping[tuple[str, str], FailureCode]] = None) -> dict:
    """One run: a result per failing kernel and metric of a check, and per kernel and
    target no longer built.  ``baseline``: the baseline file's bytes (for the kernels'
    lines); ``accept``: the command that accepts a finding (``removals``: a removal);
    ``code``: the failing kernels' machine code by (target, key)."""
    return findings_run(result.failures, result.baseline_path, baseline, category, accept,
                        {"baseline": repository_path(result.baseline_path), "gate": list(result.gate),
                         "kernels": result.kernels, "summary": result.summary()},
                        result.vanished, result.removed_targets, removals, result.sources, code)


def findings_run(failures: Sequence[Finding], baseline_path: str, baseline: bytes, category: str,
                 accept: Callable[[Finding], str], properties: dict,
                 vanished: Sequence[tuple[str, str, str]] = (), removed_targets: Sequence[RemovedTarget] = (),
                 removals: Optional[RemovalCommands] = None, sources: Optional[dict] = None,
                 code: Optional[Mapping[tuple[str, str], FailureCode]] = None) -> dict:
    """One run over failing findings (a check's, or a matrix cell's check document's) and
    the kernels (target, key, name) and targets no longer built.  ``sources``: (target, key)
    -> gate.source_location.SourceLocation: a finding of such a kernel points at its source
    line (the baseline's line becomes a related location).  ``code``: (target, key) ->
    gate.failure_code.FailureCode: its sentence in the message, its figures in the
    result's ``code`` property."""
    rules = _check_rules()
    if vanished or removed_targets:
        rules += [{"id": rule, "name": name, "shortDescription": {"text": text}, "fullDescription": {"text": text},
                   "defaultConfiguration": {"level": "error"}, "properties": {"tags": ["amdgpu"]}}
                  for rule, (name, text) in _REMOVAL_RULES.items()]
    index = _rule_index(rules)
    lines = kernel_lines(baseline)
    baseline_uri = repository_path(baseline_path)
    results = []
    for finding in failures:
        line = 1 if finding.new_kernel else lines.get((finding.target, finding.key), 1)
        source = (sources or {}).get((finding.target, finding.key))
        where = {"locations": [_location(Location(baseline_path, line), baseline_uri)]} if source is None else {
            "locations": [_source_location(source)],
            "relatedLocations": [dict(_location(Location(baseline_path, line), baseline_uri), id=0,
                                      message={"text": "the kernel's allowance in the baseline"})]}
        figures = code.get((finding.target, finding.key)) if code else None
        result_properties: dict[str, object] = {"target": finding.target, "key": finding.key,
                                                "kernel": finding.name, "metric": finding.metric,
                                                "allowed": finding.allowed, "actual": finding.actual,
                                                "new_kernel": finding.new_kernel,
                                                "dynamic_stack": finding.dynamic_stack}
        if figures is not None:
            result_properties["code"] = figures.as_dict()
        results.append({
            "ruleId": finding.metric, "ruleIndex": index[finding.metric], "level": "error",
            "message": {"text": f"{finding.line(quote=visible)}. "
                                + (f"{figures.text(prefix='Machine code: ', quote=visible)}. "
                                   if figures is not None else "")
                                + f"Intended? accept with: {accept(finding)}"},
            **where,
            "partialFingerprints": {"spillwayKernelMetric/v1": _fingerprint(finding.target, finding.key,
                                                                            finding.metric)},
            "properties": result_properties,
        })
    for target in removed_targets:
        command = f" Removed on purpose? accept with: {removals.target(target)}" if removals else ""
        results.append({
            "ruleId": "removed-target", "ruleIndex": index["removed-target"], "level": "error",
            "message": {"text": f"{target.line(visible)}.{command}"},
            "locations": [_location(Location(baseline_path, _target_line(baseline, target.target)), baseline_uri)],
            "partialFingerprints": {"spillwayKernelMetric/v1": _fingerprint(target.target, "", "removed-target")},
            "properties": {"target": target.target, "kernels_written_from": target.kernels,
                           "declared": target.declared},
        })
    for target_id, key, name in vanished:
        command = f" Removed on purpose? accept with: {removals.kernel(key)}" if removals else ""
        results.append({
            "ruleId": "removed", "ruleIndex": index["removed"], "level": "error",
            "message": {"text": f"{visible(table_name(name))} [{visible(target_id)}]: in the baseline, no longer "
                                f"built.{command}"},
            "locations": [_location(Location(baseline_path, lines.get((target_id, key), 1)), baseline_uri)],
            "partialFingerprints": {"spillwayKernelMetric/v1": _fingerprint(target_id, key, "removed")},
            "properties": {"target": target_id, "key": key, "kernel": name},
        })
    return _run(category, rules, results, properties)


def _target_line(baseline: bytes, target: str) -> int:
    """The line of a baseline that records how many kernels it was written from on
    ``target`` (``"gfx1151": 66`` in kernels_written_from), else 1."""
    needle = b'"' + target.encode() + b'":'
    for number, raw in enumerate(baseline.splitlines(), start=1):
        if raw.strip().startswith(needle):
            return number
    return 1


def _compare_rules() -> list[dict]:
    return [{"id": name, "name": "KernelGotWorse" if name != "added-with-scratch" else "AddedKernelUsesScratch",
             "shortDescription": {"text": text.split(" (")[0]}, "fullDescription": {"text": text},
             "defaultConfiguration": {"level": "warning"}, "properties": {"tags": ["performance", "amdgpu"]}}
            for name, text in _COMPARE_RULES.items()]


def _compare_message(diff: KernelDiff, criterion: str) -> str:
    old, new = diff.old, diff.new
    if criterion == "scratch":
        change = f"scratch {old.scratch} -> {new.scratch} B/lane" + (
            ", dynamic stack" if new.dynamic_stack and not old.dynamic_stack else "")
    elif criterion == "spills":
        change = f"spilled registers {old.spills} -> {new.spills}"
    else:
        change = f"occupancy {old.occupancy} -> {new.occupancy} waves/SIMD"
    return f"{visible(table_name(diff.name))} [{visible(diff.target)}]: {change}"


def compare_run(comparison: Comparison, where: Callable[[str, str], Location], category: str) -> dict:
    """One run: a result per kernel and criterion that got worse (worse or
    mixed kernels), and per kernel only in the new build that uses scratch
    (what ``--fail-on-worse`` fails on).  ``where(target, key)``: its location."""
    rules = _compare_rules()
    index = _rule_index(rules)
    results = []
    for diff in comparison.kernels:
        for criterion in diff.worse:
            results.append({
                "ruleId": criterion, "ruleIndex": index[criterion], "level": "warning",
                "message": {"text": _compare_message(diff, criterion)},
                "locations": [_location(where(diff.target, diff.key))],
                "partialFingerprints": {"spillwayKernelMetric/v1": _fingerprint(diff.target, diff.key, criterion)},
                "properties": {"target": diff.target, "key": diff.key, "kernel": diff.name, "status": diff.status},
            })
    for kernel in comparison.only_new:
        if uses_scratch(kernel.resources):
            results.append({
                "ruleId": "added-with-scratch", "ruleIndex": index["added-with-scratch"], "level": "warning",
                "message": {"text": f"{visible(table_name(kernel.name))} [{visible(kernel.target)}]: only in the "
                                    f"new build, "
                                    f"scratch {kernel.resources.scratch} B/lane"
                                    + (" + dynamic stack" if kernel.resources.dynamic_stack else "")
                                    + f", {kernel.resources.spills} spilled registers"},
                "locations": [_location(where(kernel.target, kernel.key))],
                "partialFingerprints": {"spillwayKernelMetric/v1": _fingerprint(kernel.target, kernel.key,
                                                                                "added-with-scratch")},
                "properties": {"target": kernel.target, "key": kernel.key, "kernel": kernel.name},
            })
    for unrecorded in comparison.not_in_baseline:
        kernel, r = unrecorded.usage, unrecorded.usage.resources
        for criterion in unrecorded.worse:
            results.append({
                "ruleId": criterion, "ruleIndex": index[criterion], "level": "warning",
                "message": {"text": f"{visible(table_name(kernel.name))} [{visible(kernel.target)}]: not in the "
                                    f"baseline, held to zero: "
                                    + (f"scratch {r.scratch} B/lane" + (" + dynamic stack" if r.dynamic_stack else "")
                                       if criterion == "scratch" else f"{r.spills} spilled registers")},
                "locations": [_location(where(kernel.target, kernel.key))],
                "partialFingerprints": {"spillwayKernelMetric/v1": _fingerprint(kernel.target, kernel.key,
                                                                                criterion)},
                "properties": {"target": kernel.target, "key": kernel.key, "kernel": kernel.name,
                               "status": "not in the baseline"},
            })
    return _run(category, rules, results, {"sentence": comparison.sentence()})


def document(runs: Sequence[dict]) -> bytes:
    """The SARIF log: the runs in the order given, within GitHub's limits."""
    if len(runs) > MAX_RUNS:
        raise UsageError(f"--format sarif: {len(runs)} runs, GitHub takes at most {MAX_RUNS} in one upload; "
                         f"name fewer cells and write several files")
    categories = [run["automationDetails"]["id"] for run in runs]
    duplicated = sorted({c for c in categories if categories.count(c) > 1})
    if duplicated:
        raise UsageError(f"--format sarif: two runs share the category {duplicated[0]!r} (GitHub refuses the upload)")
    # (json_codec: a path that is not UTF-8 stays exact, as \udcXX escapes)
    data = json_codec.dumps({"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": list(runs)},
                            indent=True) + b"\n"
    size = len(gzip.compress(data, compresslevel=6, mtime=0))
    if size > MAX_GZIPPED_BYTES:
        raise UsageError(f"--format sarif: {size} bytes gzipped, over GitHub's {MAX_GZIPPED_BYTES} bytes; "
                         f"check fewer kernels or cells per upload")
    return data


def category_for(*parts: Optional[str]) -> str:
    """``spillway/check/<baseline stem>``: a run's automationDetails.id without its trailing slash."""
    words = [p for p in parts if p]
    return "/".join(["spillway", *words])


# -- each model's log (render.emit: --format sarif) ---------------------------------------------------------

def document_of(model) -> bytes:
    """The SARIF log of a check (one run, located in the baseline read with it) or a comparison."""
    if isinstance(model, CheckModel):
        category = category_for("check", Path(model.result.baseline_path).stem)
        return document([check_run(model.result, model.baseline, category, model.commands.accept,
                                   model.commands.removals(), model.code)])
    if isinstance(model, CompareModel):
        return document([compare_log_run(model)])
    raise TypeError(f"no SARIF for {type(model).__name__}")


def compare_log_run(model: CompareModel) -> dict:
    """Results located at the kernel's line of a baseline file given as a side
    (OLD first), else at that baseline's first line, else at the first NEW path
    (the first side's path that is not standard input).  The baselines' lines
    are those read with the sides (gate.reading): no file is opened again."""
    from spillway.paths import STDIN

    located: dict[tuple[str, str], Location] = {}
    baselines = []
    for path, data in model.baselines:
        if path == STDIN:               # no file to point at
            continue
        baselines.append(path)
        for kernel, line in kernel_lines(data).items():
            located.setdefault(kernel, Location(path, line))
    named = [p for p in model.new + model.against if p != STDIN]
    fallback = Location(baselines[0] if baselines else named[0] if named else STDIN)
    return compare_run(model.comparison, lambda target, key: located.get((target, key), fallback),
                       category_for("compare"))


def matrix_log(checks, baselines) -> bytes:
    """``matrix run --format sarif``: one run per checked cell (a passing cell's
    empty run closes its fixed alerts), located in the cell's baseline file (its
    path from the matrix's root: the repository's, as code scanning resolves it;
    ``baselines``: each checked cell's baseline bytes by cell name, as the command read them)."""
    from spillway.matrix import cell_commands

    runs = []
    for c in checks:
        if c.verdict not in ("pass", "fail"):
            continue
        lines = baselines[c.cell.name]

        def accept(finding: Finding, c=c) -> str:
            return cell_commands.accept_command(c, [finding.key])

        runs.append(findings_run(
            [Finding.from_document(f) for f in c.failures], c.cell.baseline, lines,
            category_for("matrix", c.cell.name), accept,
            {"cell": c.cell.name, "baseline": c.cell.baseline, "summary": c.reason},
            c.removed, c.removed_targets, cell_commands.removal_commands(c)))
    return document(runs)
