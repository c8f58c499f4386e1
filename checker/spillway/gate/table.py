"""The terminal renderings of a check and of a comparison: a table on a
terminal, plain lines elsewhere (report.table: widths, no colour when piped)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from spillway.gate.check import CheckResult, Finding, RemovalCommands
from spillway.gate.compare import Comparison, selected
from spillway.gate.failure_code import FailureCode
from spillway.gate.totals import FIGURES, METRIC_LABELS, Totals, side_line, total_lines
from spillway.gate.wording import actual_text, allowed_text, cells, code_text, diff_next_step, next_step
from spillway.resources.names import table_name
from spillway.untrusted import visible

CODE = "code"
# The header of compare's next-step column (the CLI lists the steps itself when it did not fit).
NEXT_STEP = "next step"


def compare_table(comparison: Comparison, everything: bool = False, limit: int = 0, console=None, names: str = "short"):
    """(rich table fitting ``console``, rows shown, rows hidden by ``limit``)."""
    from spillway.report.table import Column, KernelName, console as make_console, grid

    console = console or make_console()
    rows, hidden = selected(comparison, everything, limit)
    columns = [Column(""), Column("kernel", name=True), Column("target")]
    columns += [Column(h, "right") for h in ("VGPRs", "spilled VGPRs", "scratch B/lane", "waves/SIMD")]
    style = {"worse": "red", "mixed": "yellow", "better": "green", "same": ""}
    cells_ = [[(diff.status, style[diff.status]), KernelName(diff.name), diff.target, *cells(diff, " → ")]
              for diff in rows]
    if comparison.code:
        # (compare --isa) before the next step, which is left out first
        columns.append(Column(CODE, drop=2))
        for row, diff in zip(cells_, rows):
            row.append(code_text(diff, " → "))
    steps = [diff_next_step(diff, " → ") for diff in rows]
    if any(steps):
        # Left out first on a narrow output (the CLI then lists the steps of the rows whose occupancy changed).
        columns.append(Column(NEXT_STEP, drop=1))
        for row, step in zip(cells_, steps):
            row.append(step)
    return grid(console, columns, cells_, names=names), len(rows), hidden


def print_check(result: CheckResult, console, *, limit: int, names: str, accept: Callable[[Finding], str],
                accept_all: Callable[[CheckResult], tuple[str, int]],
                code: Optional[dict[tuple[str, str], FailureCode]] = None,
                removals: Optional[RemovalCommands] = None) -> None:
    """The check on ``console``: a table on a terminal, one line per failure
    (ending with the command that accepts it, ``accept``) elsewhere; then the
    command that accepts them all; the targets and kernels no longer built
    (each with the command that accepts its removal, ``removals``, when piped)
    and the one that accepts them all; notes and one summary line.  ``code``:
    the failing kernels' machine code by (target, key), shown with each failure
    (after the table, a line per kernel)."""
    from spillway.report.table import Column, KernelName, grid, limited

    failures, hidden = limited(result.failures, limit)
    if failures and console.is_terminal:
        columns = [Column("kernel", name=True), Column("target"), Column("metric"), Column("allowed", "right"),
                   Column("actual", "right"), Column("note")]
        rows = [[KernelName(f.name), f.target, f.metric, allowed_text(f), actual_text(f),
                 "not in baseline" if f.new_kernel else ""] for f in failures]
        console.print(grid(console, columns, rows, names=names, title="over baseline"))
        for kernel, name in dict.fromkeys(((f.target, f.key), f.name) for f in failures):
            if code and kernel in code:
                console.print(visible(f"{table_name(name, names)} [{kernel[0]}]: {code[kernel].text()}"),
                              markup=False, soft_wrap=True)
    else:
        for f in failures:
            found = code.get((f.target, f.key)) if code else None
            console.print(visible(f"over baseline: {f.line(names)}; " + (f"{found.text()}; " if found else "")
                                  + f"accept with: {accept(f)}"), markup=False, soft_wrap=True)
    if hidden:
        console.print(f"... and {hidden} more over baseline (--limit 0 shows all)", markup=False)
    if result.failures:
        command, more = accept_all(result)
        console.print(visible(f"Intended? Accept {'these' if len(result.failures) > 1 else 'it'} with: {command}"
                              + (f" (and --allow for {more} more kernels: see --format json)" if more else "")),
                      markup=False, soft_wrap=True)
    print_removed(result, console, limit=limit, names=names, removals=removals)
    for note in result.fewer_kernels:
        console.print(visible(f"note: {note.line()}"), markup=False, soft_wrap=True)
    console.print(result.summary(), markup=False, soft_wrap=True)


def print_removed(result: CheckResult, console, *, limit: int, names: str,
                  removals: Optional[RemovalCommands], indent: str = "") -> None:
    """The targets and the kernels of a check no longer built, a line each (with
    the command that accepts its removal when piped), then the command that accepts
    them all (check, and each cell of the matrix)."""
    from spillway.report.table import limited

    piped = not console.is_terminal
    for target in result.removed_targets:
        command = f"; accept with: {removals.target(target)}" if removals and piped else ""
        console.print(visible(f"{indent}no longer built: {target.line()}{command}"), markup=False, soft_wrap=True)
    gone, hidden = limited(result.vanished, limit)
    for target_id, key, name in gone:
        command = f"; accept with: {removals.kernel(key)}" if removals and piped else ""
        console.print(visible(f"{indent}no longer built: {table_name(name, names)} [{target_id}]: in the baseline, not "
                              f"in the build{command}"), markup=False, soft_wrap=True)
    if hidden:
        console.print(f"{indent}... and {hidden} more no longer built (--limit 0 shows all)", markup=False)
    if removals and (result.vanished or any(t.in_baseline for t in result.removed_targets)):
        command, more = removals.every(result)
        console.print(visible(f"{indent}Removed on purpose? Accept the removal with: {command}"
                              + (f" (and --allow-removed-key for {more} more kernels: see --format json)"
                                 if more else "")),
                      markup=False, soft_wrap=True)


# compare's terminal output holds at most LINE_BUDGET lines, or LINES_PER_LIMIT per --limit row
# past the default --limit 50 (--limit 0: no limit): the sentence and the totals first, then the
# table of changed kernels, and the kernels on one side only share what is left (their counts and
# sums are in the totals).
LINE_BUDGET = 200
LINES_PER_LIMIT = 4


def line_budget(limit: int) -> Optional[int]:
    """The lines compare's terminal output may take at ``--limit`` (None: no limit)."""
    return max(LINE_BUDGET, limit * LINES_PER_LIMIT) if limit > 0 else None


def _height(console, render: Callable[[Any], None]) -> int:
    """The lines ``render(console)`` prints, rendered on a copy of ``console`` (its width and
    kind) that keeps nothing."""
    import io

    from rich.console import Console

    text = io.StringIO()
    render(Console(file=text, width=console.width, color_system=None, force_terminal=console.is_terminal,
                   soft_wrap=False, highlight=False, emoji=False))
    return text.getvalue().count("\n")


def print_compare(comparison: Comparison, console, *, everything: bool, limit: int, names: str) -> None:
    """The comparison on ``console``: the sentence, the totals, the table of changed
    kernels (``everything``: every kernel on both sides), the next steps and code that
    did not fit it, the kernels on one side only, the sentence again; within
    ``line_budget(limit)`` lines (the lists of one-side kernels shorten first, then the
    table), each list saying how many it left out."""
    from spillway.report.table import limited

    budget = line_budget(limit)
    totals = comparison.totals()
    rows, hidden = selected(comparison, everything, limit)
    groups = [(title, group) for title, group in (("added (only in the new build)", comparison.only_new),
                                                  ("removed (only in the old build)", comparison.only_old))
              if group]
    listing = bool(rows) or bool(groups)
    shown_rows, shown_groups = len(rows), [len(limited(group, limit)[0]) for _, group in groups]
    grid = None
    if budget is not None:
        # The sentence (twice when kernels are listed), the totals, the lists' headings.
        fixed = listing + 1 + _height(console, lambda c: print_totals(totals, c, names)) + len(groups)
        while True:
            table = notes = 0
            if shown_rows:
                grid, _, _ = compare_table(comparison, everything, shown_rows, console=console, names=names)
                table = _height(console, lambda c: c.print(grid))
                notes = len(_note_lines(comparison, rows[:shown_rows], grid, names))
            cut = 1 if shown_rows < len(rows) + hidden else 0
            room = budget - fixed - table - notes - cut
            # Each list gets an equal share of what is left (a short one leaves the rest to the next);
            # one that does not show every kernel takes a line to count the others.
            wanted = [min(len(group), limit) for _, group in groups]
            shown_groups = []
            for number, (want, (_, group)) in enumerate(zip(wanted, groups)):
                share = room // (len(groups) - number)
                show = want if want + (want < len(group)) <= share else max(share - 1, 0)
                shown_groups.append(show)
                room -= show + (show < len(group))
            if room >= 0 or shown_rows == 0:
                break
            shown_rows = max(shown_rows + room, 0)    # the lists are empty: the table gives up its last rows
    elif rows:
        grid, _, _ = compare_table(comparison, everything, limit, console=console, names=names)
    if listing:
        # The verdict and the counts lead; they close the listing too, for the end of a long scroll.
        console.print(comparison.sentence(), markup=False, soft_wrap=True)
    print_totals(totals, console, names)
    if shown_rows:
        console.print(grid)
    left = len(rows) + hidden - shown_rows
    if left:
        console.print(f"... and {left} more (--limit 0 shows all).", markup=False)
    for line in _note_lines(comparison, rows[:shown_rows], grid, names):
        console.print(line, markup=False, soft_wrap=True)
    for (title, group), show in zip(groups, shown_groups):
        console.print(f"{len(group)} kernel{'s' if len(group) != 1 else ''} {title}:", markup=False)
        for usage in group[:show]:
            r = usage.resources
            step = next_step(r, usage.occupancy_next)
            console.print(visible(f"  {table_name(usage.name, names)} [{usage.target}]: {r.vgprs} VGPRs, "
                                  f"{r.spills} spilled, {r.scratch}{'+dyn' if r.dynamic_stack else ''} B/lane scratch"
                                  + (f"; {step}" if step else "")), markup=False, soft_wrap=True)
        if show < len(group):
            console.print(f"  ... and {len(group) - show} more (--limit 0 shows all)", markup=False)
    console.print(comparison.sentence(), markup=False, soft_wrap=True)


def _note_lines(comparison: Comparison, rows: list, grid, names: str) -> list[str]:
    """What the table's left-out columns would have shown: the next step of each row
    whose occupancy changed, and each row's code (compare --isa), one line each."""
    lines: list[str] = []
    if not rows:
        return lines
    if NEXT_STEP in grid.layout.dropped:
        for diff in rows:
            step = diff_next_step(diff)
            if step and diff.old.occupancy != diff.new.occupancy:
                lines.append(visible(f"next step: {table_name(diff.name, names)} [{diff.target}]: {step}"))
    if comparison.code and CODE in grid.layout.dropped:
        for diff in rows:
            lines.append(visible(f"code: {table_name(diff.name, names)} [{diff.target}]: {code_text(diff)}"))
    return lines


# Largest changes the terminal shows per metric and direction (JSON and Markdown list gate.totals.TOP).
TOP_SHOWN = 3


def print_totals(t: Totals, console, names: str = "short") -> None:
    """The totals over the matched kernels, the sums of the one-side kernels,
    and the few largest changes per metric."""
    if not t.matched and not t.added.kernels and not t.removed.kernels:
        return
    if t.matched:
        console.print(f"totals over {t.matched:,} kernel{'s' if t.matched != 1 else ''} in both builds, "
                      f"old -> new:", markup=False)
        for line in total_lines(t):
            console.print(f"  {line}", markup=False, soft_wrap=True)
    for label, side in (("only in the new build", t.added), ("only in the old build", t.removed)):
        if side.kernels:
            console.print(f"  {side_line(label, side)}", markup=False, soft_wrap=True)
    for ranked in t.top:
        figure = FIGURES[ranked.metric]
        for direction, diffs in (("worse", ranked.regressions), ("better", ranked.improvements)):
            if diffs:
                listed = ", ".join(visible(f"{table_name(d.name, names)} [{d.target}] {figure(d.old)} -> "
                                           f"{figure(d.new)}") for d in diffs[:TOP_SHOWN])
                more = f" (+{len(diffs) - TOP_SHOWN} more in --format markdown/json)" if len(diffs) > TOP_SHOWN else ""
                # Wrapped at the console's width (a list of names, not a row to grep).
                console.print(f"  largest {METRIC_LABELS[ranked.metric]} {direction}: {listed}{more}",
                              markup=False)
