"""The terminal renderings of a check and of a comparison: a table on a
terminal, plain lines elsewhere (report.table: widths, no colour when piped)."""

from __future__ import annotations

from typing import Callable, Optional

from spillway.gate.check import CheckResult, Finding
from spillway.gate.compare import Comparison, selected
from spillway.gate.failure_code import FailureCode
from spillway.gate.totals import FIGURES, METRIC_LABELS, Totals, side_line, total_lines
from spillway.gate.wording import actual_text, allowed_text, cells, code_text, diff_next_step, next_step
from spillway.resources.names import table_name
from spillway.untrusted import visible

# Removed kernels a check lists by name; beyond this only counted (all of them are in --json).
VANISHED_SHOWN = 20
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
                code: Optional[dict[tuple[str, str], FailureCode]] = None) -> None:
    """The check on ``console``: a table on a terminal, one line per failure
    (ending with the command that accepts it, ``accept``) elsewhere; then the
    command that accepts them all, notes and one summary line.  ``code``: the
    failing kernels' machine code by (target, key), shown with each failure
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
    if result.vanished:
        count = len(result.vanished)
        console.print(f"note: {count} kernel{'s' if count != 1 else ''} in the baseline {'are' if count != 1 else 'is'}"
                      f" no longer built (not a failure):", markup=False)
        for target, _key, name in result.vanished[:VANISHED_SHOWN]:
            console.print(visible(f"  {table_name(name, names)} [{target}]"), markup=False, soft_wrap=True)
        if count > VANISHED_SHOWN:
            console.print(f"  ... and {count - VANISHED_SHOWN} more (see --format json)", markup=False)
    console.print(result.summary(), markup=False, soft_wrap=True)


def print_compare(comparison: Comparison, console, *, everything: bool, limit: int, names: str) -> None:
    """The comparison on ``console``: the sentence, the table of changed
    kernels (``everything``: every kernel on both sides), the next steps that
    did not fit, the kernels on one side only, the sentence again."""
    from spillway.report.table import limited

    grid, shown, hidden = compare_table(comparison, everything, limit, console=console, names=names)
    listing = bool(shown) or bool(comparison.only_new) or bool(comparison.only_old)
    if listing:
        # The verdict and the counts lead; they close the listing too, for the end of a long scroll.
        console.print(comparison.sentence(), markup=False, soft_wrap=True)
    print_totals(comparison.totals(), console, names)
    if shown:
        console.print(grid)
    if hidden:
        console.print(f"... and {hidden} more (--limit 0 shows all).", markup=False)
    if shown and NEXT_STEP in grid.layout.dropped:
        # The next-step column did not fit: the steps of the kernels whose occupancy changed, one a line.
        for diff in selected(comparison, everything, limit)[0]:
            step = diff_next_step(diff)
            if step and diff.old.occupancy != diff.new.occupancy:
                console.print(visible(f"next step: {table_name(diff.name, names)} [{diff.target}]: {step}"),
                              markup=False, soft_wrap=True)
    if shown and comparison.code and CODE in grid.layout.dropped:
        # The code column did not fit: what the code of each shown kernel did, one a line.
        for diff in selected(comparison, everything, limit)[0]:
            console.print(visible(f"code: {table_name(diff.name, names)} [{diff.target}]: {code_text(diff)}"),
                          markup=False, soft_wrap=True)
    for title, group in (("added (only in the new build)", comparison.only_new),
                         ("removed (only in the old build)", comparison.only_old)):
        if group:
            console.print(f"{len(group)} kernel{'s' if len(group) != 1 else ''} {title}:", markup=False)
            listed, more = limited(group, limit)
            for usage in listed:
                r = usage.resources
                step = next_step(r, usage.occupancy_next)
                console.print(visible(f"  {table_name(usage.name, names)} [{usage.target}]: {r.vgprs} VGPRs, "
                                      f"{r.spills} spilled, {r.scratch}{'+dyn' if r.dynamic_stack else ''} B/lane "
                                      f"scratch" + (f"; {step}" if step else "")), markup=False, soft_wrap=True)
            if more:
                console.print(f"  ... and {more} more (--limit 0 shows all)", markup=False)
    console.print(comparison.sentence(), markup=False, soft_wrap=True)


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
