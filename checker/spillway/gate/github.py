"""GitHub Actions output (``--format github``): workflow-command annotations
and the job summary.

One ``::error file=...,title=...::message`` line per failing kernel and
metric.  GitHub shows at most ten error annotations per step, so at most
MAX_ANNOTATIONS are printed, then one plain line counting the rest.  The
job summary is Markdown appended to the file named by
``$GITHUB_STEP_SUMMARY`` (GitHub's protocol: append, do not replace).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Optional

from spillway.resources.names import table_name

if TYPE_CHECKING:
    from spillway.gate.check import CheckResult, Finding, RemovalCommands
    from spillway.gate.compare import Comparison

MAX_ANNOTATIONS = 10


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Annotation:
    file: str
    title: str
    message: str
    level: str = "error"

    def line(self) -> str:
        props = []
        if self.file:
            props.append(f"file={_property(self.file)}")
        props.append(f"title={_property(self.title)}")
        return f"::{self.level} {','.join(props)}::{_data(self.message)}"


def annotation_lines(annotations: Iterable[Annotation], limit: int = MAX_ANNOTATIONS) -> list[str]:
    items = list(annotations)
    lines = [a.line() for a in items[:limit]]
    rest = len(items) - limit
    if rest > 0:
        lines.append(f"spillway: {rest} more failing kernel metric{'s' if rest != 1 else ''} not annotated "
                     f"(GitHub shows {limit} per step); every one is in the job summary and in --format json")
    return lines


def append_step_summary(markdown: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Append to $GITHUB_STEP_SUMMARY; the path written, or None when unset."""
    environ = os.environ if environ is None else environ
    path = environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    try:
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as handle:   # (paths not UTF-8)
            handle.write(markdown if markdown.endswith("\n") else markdown + "\n")
    except OSError as exc:
        from spillway.errors import UsageError
        raise UsageError(f"cannot append to GITHUB_STEP_SUMMARY {path}: {exc.strerror}") from None
    return path


def check_annotations(result: CheckResult, file: str, accept: Callable[[Finding], str],
                      names: str = "short", removals: Optional[RemovalCommands] = None) -> list[Annotation]:
    out = []
    for f in result.failures:
        title = f"spillway check: {table_name(f.name, names)} [{f.target}] over baseline ({f.metric})"
        out.append(Annotation(file, title, f"{f.message()}. Accept with: {accept(f)}"))
    out += removal_annotations(result, file, "spillway check", names, removals)
    return out


def removal_annotations(result: CheckResult, file: str, title: str, names: str = "short",
                        removals: Optional[RemovalCommands] = None) -> list[Annotation]:
    """One annotation per target and per baseline kernel no longer built (check, a matrix cell)."""
    out = []
    for target in result.removed_targets:
        command = f". Accept with: {removals.target(target)}" if removals else ""
        out.append(Annotation(file, f"{title}: target {target.target} no longer built", target.line() + command))
    for target_id, key, name in result.vanished:
        command = f". Accept with: {removals.kernel(key)}" if removals else ""
        out.append(Annotation(file, f"{title}: {table_name(name, names)} [{target_id}] no longer built",
                              f"in the baseline, not in the build{command}"))
    return out


def compare_annotations(comparison: Comparison, file: str, against: list[str], names: str = "short",
                        level: str = "warning") -> list[Annotation]:
    """One annotation per worse metric of a kernel on both sides, and one per
    kernel only in NEW that arrives with scratch."""
    from spillway.gate.compare import uses_scratch
    from spillway.gate.wording import diff_next_step

    notes = []
    for diff in comparison.kernels:
        if diff.worse:
            title = f"spillway compare: {table_name(diff.name, names)} [{diff.target}] {diff.status}"
            for metric in diff.worse:
                old, new = getattr(diff.old, metric), getattr(diff.new, metric)
                step = diff_next_step(diff) if metric == "occupancy" else ""
                notes.append(Annotation(file, f"{title} ({metric})", f"{metric}: {old} -> {new} against "
                                                                        f"{', '.join(against)}"
                                        + (f" ({step})" if step else "")))
    for usage in comparison.only_new:
        if uses_scratch(usage.resources):
            r = usage.resources
            notes.append(Annotation(file, f"spillway compare: {table_name(usage.name, names)} "
                                          f"[{usage.target}] added with scratch",
                                    f"new kernel uses {r.scratch} B/lane scratch and {r.spills} spilled registers"))
    return [Annotation(a.file, a.title, a.message, level) for a in notes]
