"""Markdown renderings (a pull request, the GitHub job summary) of a check
and of a comparison."""

from __future__ import annotations

import re
from functools import singledispatch
from typing import TYPE_CHECKING, Callable, Optional

from spillway.gate.check import CheckResult, RemovalCommands
from spillway.gate.compare import Comparison, KernelDiff, kernels, selected
from spillway.gate.failure_code import FailureCode
from spillway.gate.kernels import KernelUsage
from spillway.gate.totals import FIGURES, METRIC_LABELS, Totals, side_line, signed
from spillway.gate.wording import (actual_text, allowed_text, cells, code_detail, code_text, diff_next_step,
                                   next_step, peak_text, scratch_text, spilled_text)
from spillway.resources.names import table_name
from spillway.untrusted import command_word, markdown_code, markdown_text, markdown_word, visible
from spillway.render.models import CheckModel, CompareModel, MatrixPairModel, MatrixSummaryModel, View

if TYPE_CHECKING:
    from spillway.matrix.summary import Summary


def check_markdown(result: CheckResult, *, limit: int = 0, names: str = "short",
                   accept_all: Optional[str] = None,
                   code: Optional[dict[tuple[str, str], FailureCode]] = None,
                   removals: Optional[RemovalCommands] = None) -> str:
    verdict = "passed" if result.passed else "failed"
    out = [f"**spillway check** against {md_code(result.baseline_path)} {verdict}: {result.summary(markdown_word)}", ""]
    failures = result.failures
    shown = failures[:limit] if limit else failures
    if shown:
        out.append("| kernel | target | metric | allowed | actual | |")
        out.append("|---|---|---|--:|--:|---|")
        for f in shown:
            note = "not in the baseline" if f.new_kernel else ""
            out.append(f"| {md_code(table_name(f.name, names))} | {md_code(f.target)} | {f.metric} | "
                       f"{allowed_text(f)} | {actual_text(f)} | {note} |")
        if len(shown) < len(failures):
            out.append("")
            out.append(f"... and {len(failures) - len(shown)} more (--limit 0 shows all).")
        out.append("")
        kernels = dict.fromkeys(((f.target, f.key), f.name) for f in shown if code and (f.target, f.key) in code)
        if code and kernels:
            out.append("Machine code of the failing kernels:")
            out.append("")
            for kernel, name in kernels:
                figures = code[kernel].text(prefix="", quote=md_code)
                out.append(f"- {md_code(table_name(name, names))} ({md_code(kernel[0])}): {figures}")
            out.append("")
    if accept_all:
        out += ["Intended? Accept with:", "", *_fenced(accept_all), ""]
    if result.removed_targets or result.vanished:
        out.append("No longer built (a failure until its removal is accepted):")
        out.append("")
        for target in result.removed_targets:
            out.append(f"- {md_code(target.target)}: {target.reason()}")
        shown_gone = result.vanished[:limit or None]
        for target_id, _key, name in shown_gone:
            out.append(f"- {md_code(table_name(name, names))} ({md_code(target_id)}): in the baseline, not in the "
                       f"build")
        if len(shown_gone) < len(result.vanished):
            out.append(f"- ... and {len(result.vanished) - len(shown_gone)} more (--limit 0 shows all).")
        out.append("")
        if removals:
            command, more = removals.every(result)
            out += ["Removed on purpose? Accept the removal with:", "", *_fenced(command), ""]
            if more:
                out += [f"(and --allow-removed-key for {more} more kernels: see --format json)", ""]
    for fewer in result.fewer_kernels:
        out += [f"Note: {fewer.line(markdown_word)}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _fenced(command: str) -> list[str]:
    """A shell command as a fenced block: one line (visible), in a fence longer than any run of
    backticks in it, so nothing in it closes the block."""
    command = visible(command)
    fence = "`" * max([3] + [len(run) + 1 for run in re.findall("`+", command)])
    return [f"{fence}sh", command, fence]


# A pull-request comment holds at most 65,536 characters (GitHub); the text
# stays under this, whatever the number of kernels (JSON is always complete).
MARKDOWN_BUDGET = 60_000
# Sections longer than this go in <details>.
OPEN_SECTION_ROWS = 20


def compare_markdown(comparison: Comparison, everything: bool = False, limit: int = 0, names: str = "short",
             budget: int = MARKDOWN_BUDGET) -> str:
    """The comparison for a pull request: the sentence, then the changed
    kernels worst first, then the kernels on one side only (worst first),
    long sections folded in <details>; rows stop at ``limit`` per section
    (0: no limit) or when the text would pass ``budget`` characters, with a
    count of what was left out."""
    rows, hidden = selected(comparison, everything, 0)
    new = ", ".join(md_code(s) for s in comparison.new_sources) or "new"
    old = ", ".join(md_code(s) for s in comparison.old_sources) or "old"
    out = [f"**spillway compare**: {new} against {old}", "", comparison.sentence(), ""]
    out += totals_markdown(comparison.totals(), names)
    used = sum(len(line) + 1 for line in out)
    sections: list[tuple[str, list[str], list, Callable]] = []    # (title, head, items, render)

    def diff_line(diff: KernelDiff) -> str:
        vgprs, spilled, scratch, occupancy = cells(diff)
        detail = code_detail(diff) if comparison.code else ""
        # (the mix's and the lines' text holds file names from the binary; the peak's quotes its own)
        moved = peak_text(diff, md_code) if comparison.code else ""
        code = (f" {code_text(diff)}{'; ' + markdown_text(detail) if detail else ''}"
                f"{'; ' + moved if moved else ''} |") if comparison.code else ""
        return (f"| {diff.status} | {md_code(table_name(diff.name, names))} | {md_code(diff.target)} "
                f"| {vgprs} | {spilled} | {scratch} | {occupancy} | {diff_next_step(diff)} |{code}")

    def usage_line(usage: KernelUsage) -> str:
        r = usage.resources
        step = next_step(r, usage.occupancy_next)
        return (f"- {md_code(table_name(usage.name, names))} ({md_code(usage.target)}): {r.vgprs} VGPRs, "
                f"{spilled_text(r)} spilled VGPRs, {scratch_text(r)} B/lane scratch, "
                f"occupancy {'?' if r.occupancy is None else r.occupancy}" + (f"; {step}" if step else ""))

    if rows:
        what = "changed kernels" if not everything else "kernels on both sides"
        head = ["| | kernel | target | VGPRs | spilled VGPRs | scratch B/lane | occupancy | next step |",
                "|---|---|---|--:|--:|--:|--:|---|"]
        if comparison.code:
            head = [head[0] + " code |", head[1] + "---|"]
        sections.append((f"{kernels(len(rows))}: {what}, worst first", head, rows, diff_line))
    for title, group in (("only in the new build", comparison.only_new),
                         ("only in the old build", comparison.only_old),
                         ("not in the baseline, over its zero scratch or spills",
                          [k.usage for k in comparison.not_in_baseline if k.worse])):
        if group:
            sections.append((f"{kernels(len(group))} {title}, worst first", [], group, usage_line))
    reserve = 400 * len(sections)            # closing tags and the "left out" line of each section
    for number, (title, head, items, render) in enumerate(sections):
        folded = len(items) > OPEN_SECTION_ROWS
        part = [f"<details><summary>{title}</summary>", ""] if folded else [f"{title}:", ""]
        part += head
        used += sum(len(line) + 1 for line in part)
        # Each section may use its share of what is left (a short one leaves the rest to the next).
        share = used + (budget - reserve - used) // (len(sections) - number)
        shown = 0
        for item in items:                   # lines are made only for the rows that fit
            if limit > 0 and shown >= limit:
                break
            line = render(item)
            if used + len(line) + 1 > share:
                break
            part.append(line)
            used += len(line) + 1
            shown += 1
        left = len(items) - shown
        tail = []
        if left:
            why = "--limit" if limit > 0 and shown >= limit else "to fit a pull-request comment"
            tail += ["", f"... and {left} more not shown ({why}; `--format json` lists every kernel)."]
        tail.append("")
        if folded:
            tail += ["</details>", ""]
        used += sum(len(line) + 1 for line in tail)
        reserve -= 400
        out += part + tail
    return "\n".join(out).rstrip("\n") + "\n"



def totals_markdown(t: Totals, names: str = "short") -> list[str]:
    """The totals table, the one-side sums, and the largest changes per metric (folded)."""
    out = [f"| totals over {kernels(t.matched)} in both builds | old | new | change |", "|---|--:|--:|--:|"]
    for m in t.metrics:
        if m.metric == "occupancy":
            continue
        unknown = f" ({t.matched - m.kernels} without the figure)" if m.kernels != t.matched else ""
        out.append(f"| {METRIC_LABELS[m.metric]}{unknown} | {m.old:,} | {m.new:,} | {signed(m.change)} |")
    out.append(f"| kernels losing waves | | | {t.losing_waves:,} |")
    out.append(f"| kernels gaining waves | | | {t.gaining_waves:,} |")
    if t.dynamic_stack_old or t.dynamic_stack_new:
        out.append(f"| kernels with a dynamic stack | {t.dynamic_stack_old:,} | {t.dynamic_stack_new:,} | "
                   f"{signed(t.dynamic_stack_new - t.dynamic_stack_old)} |")
    out.append("")
    sides = [side_line(label, side) for label, side in (("Only in the new build", t.added),
                                                          ("only in the old build", t.removed)) if side.kernels]
    if sides:
        out += ["; ".join(sides) + ".", ""]
    rows = []
    for ranked in t.top:
        for direction, diffs in (("worse", ranked.regressions), ("better", ranked.improvements)):
            for diff in diffs:
                figure = FIGURES[ranked.metric]
                rows.append(f"| {METRIC_LABELS[ranked.metric]} | {direction} | "
                            f"{md_code(table_name(diff.name, names))} | {md_code(diff.target)} | "
                            f"{figure(diff.old)} | {figure(diff.new)} |")
    if rows:
        out += ["<details><summary>Largest changes per metric (at most 10 each way)</summary>", "",
                "| metric | | kernel | target | old | new |", "|---|---|---|---|--:|--:|", *rows, "", "</details>", ""]
    return out

# -- pieces ----------------------------------------------------------------------------------------------
def md_code(text: str) -> str:
    """A code span that survives a GitHub table, whatever ``text`` holds
    (spillway.untrusted.markdown_code: one line, pipes escaped, a fence no
    backtick run in it closes, cut at MARKDOWN_NAME_LIMIT characters)."""
    return markdown_code(text)


# -- the matrix's cells side by side (matrix.summary's Summary) ------------------------------------------

def figures(r, markdown: bool = False) -> str:
    """VGPRs / spilled registers / scratch B per lane / waves per SIMD."""
    if r is None:
        return "-"
    occupancy = "?" if r.occupancy is None else str(r.occupancy)
    scratch = f"{r.scratch}+dyn" if r.dynamic_stack else str(r.scratch)
    text = f"{r.vgprs} / {r.spills} / {scratch} / {occupancy}"
    if markdown and (r.spills or r.scratch or r.dynamic_stack):
        return f"**{text}**"
    return text


def summary_markdown(summary: Summary, differing_only: bool = False) -> str:
    cells = summary.cells
    out = ["**spillway matrix**: per kernel, in each cell: VGPRs / spilled registers / scratch bytes per lane / "
           f"waves per SIMD (occupancy model {md_code(summary.occupancy_model)}; bold: spills or scratch).", ""]
    groups = ", ".join(f"{md_code(c.name)}: {' '.join(markdown_word(t) for t in summary.targets[c.name])}"
                       for c in cells)
    out.append(f"Targets built: {groups}. Rows `gfx11` hold each cell's gfx11 target.")
    out.append("")
    out.append("| kernel | target | " + " | ".join(md_code(c.name) for c in cells) + " |")
    out.append("|---|---|" + "--:|" * len(cells))
    shown = 0
    for row in summary.rows:
        if differing_only and not summary.differs(row):
            continue
        shown += 1
        values = " | ".join(figures(summary.value(c.name, row), True) for c in cells)
        out.append(f"| {md_code(table_name(row[2]))} | {markdown_word(row[0])} | {values} |")
    out.append("")
    out.append(f"{shown} of {len(summary.rows)} kernel rows"
               + (" (only rows where the cells differ)" if differing_only else "") + ".")
    return "\n".join(out) + "\n"


# -- each model's document (render.emit: --format markdown, and GitHub's job summary) --------------------

@singledispatch
def document(model, view: View) -> str:
    raise TypeError(f"no Markdown for {type(model).__name__}")


@document.register
def _(model: CheckModel, view: View) -> str:
    result, commands = model.result, model.commands.shown_by(command_word)
    accept_all = commands.accept_all(result)[0] if result.failures else None
    return check_markdown(result, limit=view.limit, names=view.names, accept_all=accept_all,
                          code=dict(model.code) if model.code else None, removals=commands.removals())


@document.register(CompareModel)
@document.register(MatrixPairModel)
def _(model, view: View) -> str:
    return compare_markdown(model.comparison, view.everything, view.limit, view.names)


@document.register
def _(model: MatrixSummaryModel, view: View) -> str:
    return summary_markdown(model.summary, view.differing)
