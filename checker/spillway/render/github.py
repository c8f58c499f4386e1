"""GitHub Actions output (``--format github``): workflow-command annotations
and the job summary.

One ``::error file=...,title=...::message`` line per failing kernel and
metric.  GitHub shows at most ten error annotations per step, so at most
MAX_ANNOTATIONS are printed, then one plain line counting the rest.  The
job summary is Markdown appended to the file named by
``$GITHUB_STEP_SUMMARY`` (GitHub's protocol: append, do not replace).
This module words them; render.emit prints the annotations and appends the
summary (append_step_summary).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Optional

from spillway import untrusted
from spillway.render import name_shown
from spillway.untrusted import command_word, shown

if TYPE_CHECKING:
    from spillway.gate.check import CheckResult, Finding, RemovalCommands
    from spillway.gate.compare import Comparison

MAX_ANNOTATIONS = 10


# GitHub stores at most 1 MiB of step summary per step (the runner refuses a larger file:
# "$GITHUB_STEP_SUMMARY upload aborted, supports content up to a size of 1024k"); what spillway
# appends stays under it with room for what the step's other commands append.
STEP_SUMMARY_LIMIT = 1 << 20
STEP_SUMMARY_ROOM = 16 << 10


@dataclass(frozen=True)
class Annotation:
    file: str
    title: str
    message: str
    level: str = "error"

    def line(self) -> str:
        """The workflow command (spillway.untrusted: the runner's escapes over
        text held to a log line's rules, cut to GitHub's limits)."""
        return untrusted.annotation(self.level, self.message, file=self.file, title=self.title)


def annotation_lines(annotations: Iterable[Annotation], limit: int = MAX_ANNOTATIONS) -> list[str]:
    items = list(annotations)
    lines = [a.line() for a in items[:limit]]
    rest = len(items) - limit
    if rest > 0:
        lines.append(f"spillway: {rest} more failing kernel metric{'s' if rest != 1 else ''} not annotated "
                     f"(GitHub shows {limit} per step); every one is in the job summary and in --format json")
    return lines


def capped_summary(markdown: str, room: int) -> str:
    """``markdown`` in at most ``room`` bytes of UTF-8: whole lines, the code
    fences and ``<details>`` left open closed again, and a line counting the
    lines left out."""
    data = markdown.encode("utf-8", "surrogateescape")
    if len(data) <= room:
        return markdown
    lines = markdown.split("\n")
    kept: list[str] = []
    used = 1024                       # the closing lines and the count
    fence = ""                        # the open code fence
    folded = 0                        # <details> open
    for line in lines:
        size = len(line.encode("utf-8", "surrogateescape")) + 1
        if used + size > room:
            break
        kept.append(line)
        used += size
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and set(stripped) == {"`"}:
                fence = ""
        elif stripped.startswith("```"):
            fence = stripped[:len(stripped) - len(stripped.lstrip("`"))]
        elif stripped.startswith("<details>"):
            folded += 1
        elif stripped == "</details>":
            folded -= 1
    left = len(lines) - len(kept)
    tail = ([fence] if fence else []) + [""] + ["</details>", ""] * max(0, folded)
    tail.append(f"... and {left} more line{'s' if left != 1 else ''} not shown (GitHub keeps at most 1 MiB "
                f"of job summary per step; `--format json` lists every kernel).")
    return "\n".join(kept + tail) + "\n"


def check_annotations(result: CheckResult, file: str, accept: Callable[[Finding], str],
                      names: str = "short", removals: Optional[RemovalCommands] = None) -> list[Annotation]:
    out = []
    for f in result.failures:
        title = f"spillway check: {name_shown(f.name, names)} [{shown(f.target)}] over baseline ({f.metric})"
        out.append(Annotation(file, title, f"{f.message()}. Accept with: {accept(f)}"))
    out += removal_annotations(result, file, "spillway check", names, removals)
    return out


def removal_annotations(result: CheckResult, file: str, title: str, names: str = "short",
                        removals: Optional[RemovalCommands] = None) -> list[Annotation]:
    """One annotation per target and per baseline kernel no longer built (check, a matrix cell)."""
    out = []
    for target in result.removed_targets:
        command = f". Accept with: {removals.target(target)}" if removals else ""
        out.append(Annotation(file, f"{title}: target {shown(target.target)} no longer built",
                              target.line(shown) + command))
    for target_id, key, name in result.vanished:
        command = f". Accept with: {removals.kernel(key)}" if removals else ""
        out.append(Annotation(file, f"{title}: {name_shown(name, names)} [{shown(target_id)}] no longer built",
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
            title = f"spillway compare: {name_shown(diff.name, names)} [{shown(diff.target)}] {diff.status}"
            for metric in diff.worse:
                old, new = getattr(diff.old, metric), getattr(diff.new, metric)
                step = diff_next_step(diff) if metric == "occupancy" else ""
                notes.append(Annotation(file, f"{title} ({metric})", f"{metric}: {old} -> {new} against "
                                                                        f"{', '.join(against)}"
                                        + (f" ({step})" if step else "")))
    for usage in comparison.only_new:
        if uses_scratch(usage.resources):
            r = usage.resources
            notes.append(Annotation(file, f"spillway compare: {name_shown(usage.name, names)} "
                                          f"[{shown(usage.target)}] added with scratch",
                                    f"new kernel uses {r.scratch} B/lane scratch and {r.spills} spilled registers"))
    for unrecorded in comparison.not_in_baseline:
        if unrecorded.worse:
            usage, r = unrecorded.usage, unrecorded.usage.resources
            notes.append(Annotation(file, f"spillway compare: {name_shown(usage.name, names)} [{shown(usage.target)}] "
                                          f"not in the baseline ({', '.join(unrecorded.worse)})",
                                    f"not in the baseline, held to zero: {r.scratch} B/lane scratch"
                                    + (" + dynamic stack" if r.dynamic_stack else "")
                                    + f", {r.spills} spilled registers"))
    return [Annotation(a.file, a.title, a.message, level) for a in notes]


# -- each model's annotations and job summary (render.emit: --format github) --------------------------------

def annotations_of(model, view) -> list[Annotation]:
    """A check's annotations (each failing kernel and metric, each removal), or a
    comparison's (each worse metric, each kernel added with scratch)."""
    from spillway.paths import STDIN
    from spillway.render.models import CheckModel, CompareModel

    if isinstance(model, CheckModel):
        commands = model.commands.shown_by(command_word)
        return check_annotations(model.result, model.result.baseline_path, commands.accept, view.names,
                                 commands.removals())
    if isinstance(model, CompareModel):
        # Annotations name the first NEW path that is a file name (standard input is none).
        file = next((p for p in model.new if p != STDIN), "")
        return compare_annotations(model.comparison, file, list(model.against), view.names, model.level)
    raise TypeError(f"no GitHub output for {type(model).__name__}")


def matrix_run(checks, summary, differing: bool) -> tuple[str, list[Annotation], Optional[str]]:
    """``matrix run --format github``: the job summary (each cell's verdict, then
    the side-by-side table), one annotation per failing kernel and metric (at
    most ten are printed), and the table's Markdown alone (for ``-o FILE``;
    None when no cell was built).  render.emit appends and prints them."""
    from spillway.matrix import cell_commands
    from spillway.render.markdown import summary_markdown

    notes = []
    lines = ["**spillway matrix run**", ""]
    for c in checks:
        # (a reason holds what the cell's artifact says: the cell's own words, targets, a build's
        # error; downloaded, so the attacker's)
        lines.append(f"- {untrusted.markdown_code(c.cell.name)}: {c.verdict.upper()} "
                     f"{untrusted.markdown_text(shown(c.reason, untrusted.SENTENCE_LIMIT), untrusted.SENTENCE_LIMIT)}")
        if c.verdict == "error":
            notes.append(Annotation(c.cell.baseline, f"spillway matrix: {c.cell.name} not checked",
                                    shown(c.reason, untrusted.SENTENCE_LIMIT)))
        for f in c.failures:
            text = cell_commands.failure_text(f, shown)
            command = cell_commands.accept_command(c, [f['key']], command_word)
            notes.append(Annotation(c.cell.baseline, f"spillway matrix: {c.cell.name}: {text}",
                                    f"{text}; accept with: {command}"))
        if c.removed or c.removed_targets:
            notes += removal_annotations(cell_commands.removal_result(c), c.cell.baseline,
                                         f"spillway matrix: {c.cell.name}",
                                         removals=cell_commands.removal_commands(c, command_word))
    lines.append("")
    if summary is not None and summary.cells:
        lines.append(summary_markdown(summary, differing))
    table = summary_markdown(summary, differing) if summary is not None and summary.cells else None
    return "\n".join(lines), notes, table
