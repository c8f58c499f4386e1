"""The per-command tables: report, check, compare, the matrix's and what
baseline write did, each laid out by the grid toolkit (render.grid: the
console, Column, fit, grid, the kernel name's labels).
"""

from __future__ import annotations

from functools import singledispatch
from typing import TYPE_CHECKING, Any, Callable, Optional

from spillway.render.models import (BaselineWriteModel, BisectModel, CacheModel, CheckModel, CompareModel,
                                    HistoryModel, MatrixListModel, MatrixPairModel, MatrixSummaryModel, ReportModel,
                                    View)

from spillway.render import name_shown
from spillway.render.grid import (Column, KernelName, console, default_console, grid, limited, say, short_files,
                                  terminal_text)
from spillway.untrusted import SENTENCE_LIMIT, command_word, shown

if TYPE_CHECKING:   # the gate imports pydantic: only when a check or a comparison is drawn
    from spillway.gate.check import CheckResult, Finding, RemovalCommands
    from spillway.gate.compare import Comparison
    from spillway.gate.failure_code import FailureCode
    from spillway.gate.totals import Totals
    from spillway.matrix.gating import CellCheck
    from spillway.matrix.summary import Summary

# -- check and compare (gate.check's CheckResult, gate.compare's Comparison) -----------------------------
CODE = "code"
# The header of compare's next-step column (the CLI lists the steps itself when it did not fit).
NEXT_STEP = "next step"


def compare_table(comparison: Comparison, everything: bool = False, limit: int = 0, console=None, names: str = "short"):
    """(rich table fitting ``console``, rows shown, rows hidden by ``limit``)."""
    from spillway.gate.compare import selected
    from spillway.gate.wording import cells, code_text, diff_next_step


    console = console or default_console()
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
    from spillway.gate.wording import actual_text, allowed_text


    failures, hidden = limited(result.failures, limit)
    if failures and console.is_terminal:
        columns = [Column("kernel", name=True), Column("target"), Column("metric"), Column("allowed", "right"),
                   Column("actual", "right"), Column("note")]
        rows = [[KernelName(f.name), f.target, f.metric, allowed_text(f), actual_text(f),
                 "not in baseline" if f.new_kernel else ""] for f in failures]
        console.print(grid(console, columns, rows, names=names, title="over baseline"))
        for kernel, name in dict.fromkeys(((f.target, f.key), f.name) for f in failures):
            if code and kernel in code:
                say(console, f"{name_shown(name, names)} [{shown(kernel[0])}]: {code[kernel].text(quote=shown)}",
                    soft_wrap=True)
    else:
        for f in failures:
            found = code.get((f.target, f.key)) if code else None
            say(console, f"over baseline: {f.line(names, shown)}; " + (f"{found.text(quote=shown)}; " if found else "")
                + f"accept with: {accept(f)}", soft_wrap=True)
    if hidden:
        say(console, f"... and {hidden} more over baseline (--limit 0 shows all)")
    if result.failures:
        command, more = accept_all(result)
        say(console, f"Intended? Accept {'these' if len(result.failures) > 1 else 'it'} with: {command}"
            + (f" (and --allow for {more} more kernels: see --format json)" if more else ""), soft_wrap=True)
    print_removed(result, console, limit=limit, names=names, removals=removals)
    for note in result.fewer_kernels:
        say(console, f"note: {note.line(shown)}", soft_wrap=True)
    say(console, result.summary(shown), soft_wrap=True)


def print_removed(result: CheckResult, console, *, limit: int, names: str,
                  removals: Optional[RemovalCommands], indent: str = "") -> None:
    """The targets and the kernels of a check no longer built, a line each (with
    the command that accepts its removal when piped), then the command that accepts
    them all (check, and each cell of the matrix)."""

    piped = not console.is_terminal
    for target in result.removed_targets:
        command = f"; accept with: {removals.target(target)}" if removals and piped else ""
        say(console, f"{indent}no longer built: {target.line(shown)}{command}", soft_wrap=True)
    gone, hidden = limited(result.vanished, limit)
    for target_id, key, name in gone:
        command = f"; accept with: {removals.kernel(key)}" if removals and piped else ""
        say(console, f"{indent}no longer built: {name_shown(name, names)} [{shown(target_id)}]: in the baseline, not "
                     f"in the build{command}", soft_wrap=True)
    if hidden:
        say(console, f"{indent}... and {hidden} more no longer built (--limit 0 shows all)")
    if removals and (result.vanished or any(t.in_baseline for t in result.removed_targets)):
        command, more = removals.every(result)
        say(console, f"{indent}Removed on purpose? Accept the removal with: {command}"
            + (f" (and --allow-removed-key for {more} more kernels: see --format json)" if more else ""),
            soft_wrap=True)


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
    from spillway.gate.compare import selected
    from spillway.gate.wording import next_step


    budget = line_budget(limit)
    totals = comparison.totals()
    rows, hidden = selected(comparison, everything, limit)
    over_zero = [k.usage for k in comparison.not_in_baseline if k.worse]
    groups = [(title, group) for title, group in (("added (only in the new build)", comparison.only_new),
                                                  ("removed (only in the old build)", comparison.only_old),
                                                  ("not in the baseline, over its zero scratch or spills",
                                                   over_zero))
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
        say(console, comparison.sentence(), soft_wrap=True)
    print_totals(totals, console, names)
    if shown_rows:
        console.print(grid)
    left = len(rows) + hidden - shown_rows
    if left:
        say(console, f"... and {left} more (--limit 0 shows all).")
    for line in _note_lines(comparison, rows[:shown_rows], grid, names):
        say(console, line, soft_wrap=True)
    for (title, group), show in zip(groups, shown_groups):
        say(console, f"{len(group)} kernel{'s' if len(group) != 1 else ''} {title}:")
        for usage in group[:show]:
            r = usage.resources
            step = next_step(r, usage.occupancy_next)
            say(console, f"  {name_shown(usage.name, names)} [{shown(usage.target)}]: {r.vgprs} VGPRs, "
                         f"{r.spills} spilled, {r.scratch}{'+dyn' if r.dynamic_stack else ''} B/lane scratch"
                         + (f"; {step}" if step else ""), soft_wrap=True)
        if show < len(group):
            say(console, f"  ... and {len(group) - show} more (--limit 0 shows all)")
    say(console, comparison.sentence(), soft_wrap=True)


def _note_lines(comparison: Comparison, rows: list, grid, names: str) -> list[str]:
    """What the table's left-out columns would have shown: the next step of each row
    whose occupancy changed, and each row's code (compare --isa), one line each."""
    from spillway.gate.wording import code_detail, code_text, diff_next_step, peak_text

    lines: list[str] = []
    if not rows:
        return lines
    if NEXT_STEP in grid.layout.dropped:
        for diff in rows:
            step = diff_next_step(diff)
            if step and diff.old.occupancy != diff.new.occupancy:
                lines.append(f"next step: {name_shown(diff.name, names)} [{shown(diff.target)}]: {step}")
    if comparison.code and CODE in grid.layout.dropped:
        for diff in rows:
            lines.append(f"code: {name_shown(diff.name, names)} [{shown(diff.target)}]: {code_text(diff)}")
    if comparison.code:
        # The mix and the source lines never fit a cell: a line each, for the rows shown.
        for diff in rows:
            detail = code_detail(diff)
            if detail:
                lines.append(f"mix: {name_shown(diff.name, names)} [{shown(diff.target)}]: {detail}")
        # Where the VGPR peak moved (compare --pressure): a line for each row shown whose peak changed.
        for diff in rows:
            moved = peak_text(diff, shown)
            if moved:
                lines.append(f"peak: {name_shown(diff.name, names)} [{shown(diff.target)}]: {moved}")
    return lines


# Largest changes the terminal shows per metric and direction (JSON and Markdown list gate.totals.TOP).
TOP_SHOWN = 3


def print_totals(t: Totals, console, names: str = "short") -> None:
    """The totals over the matched kernels, the sums of the one-side kernels,
    and the few largest changes per metric."""
    from spillway.gate.totals import FIGURES, METRIC_LABELS, side_line, total_lines

    if not t.matched and not t.added.kernels and not t.removed.kernels:
        return
    if t.matched:
        say(console, f"totals over {t.matched:,} kernel{'s' if t.matched != 1 else ''} in both builds, old -> new:")
        for line in total_lines(t):
            say(console, f"  {line}", soft_wrap=True)
    for label, side in (("only in the new build", t.added), ("only in the old build", t.removed)):
        if side.kernels:
            head, _, rest = side_line(label, side).partition(": ")
            for line in _wrapped_items(f"  {head}: ", rest.split(", "), "", console.width):
                say(console, line)       # (rich folds only an item wider than the line)
    for ranked in t.top:
        figure = FIGURES[ranked.metric]
        for direction, diffs in (("worse", ranked.regressions), ("better", ranked.improvements)):
            if diffs:
                items = [f"{name_shown(d.name, names)} [{shown(d.target)}] {figure(d.old)} -> {figure(d.new)}"
                         for d in diffs[:TOP_SHOWN]]
                more = f"(+{len(diffs) - TOP_SHOWN} more in --format markdown/json)" if len(diffs) > TOP_SHOWN else ""
                # Wrapped at the console's width between items, never inside one (a name and its figures
                # stay on one line).
                for line in _wrapped_items(f"  largest {METRIC_LABELS[ranked.metric]} {direction}: ", items, more,
                                           console.width):
                    say(console, line)


def _wrapped_items(head: str, items: list[str], tail: str, width: int, indent: str = "    ") -> list[str]:
    """``head`` then ``items`` joined by ", " (and ``tail``), filled to
    ``width`` columns, breaking only between items; continuation lines
    indented.  The first item stays beside ``head``; an item wider than a
    line gets a line of its own (the terminal wraps it)."""
    from rich.cells import cell_len

    words = [item + ("," if number < len(items) - 1 else "") for number, item in enumerate(items)]
    if tail:
        words.append(tail)
    lines, line = [], head.rstrip()
    for number, word in enumerate(words):
        if number == 0 or cell_len(line) + 1 + cell_len(word) <= width:
            line = f"{line} {word}"
        else:
            lines.append(line)
            line = indent + word
    lines.append(line)
    return lines


# -- the matrix's cells side by side (matrix.summary's Summary) ------------------------------------------

# The terminal table's figures, one sub-row each: (label, the figure's text of a kernel's Resources).
FIGURE_ROWS = (
    ("VGPRs", lambda r: str(r.vgprs)),
    ("spills", lambda r: str(r.spills)),
    ("scratch", lambda r: f"{r.scratch}+dyn" if r.dynamic_stack else str(r.scratch)),
    ("waves", lambda r: "?" if r.occupancy is None else str(r.occupancy)),
)


def summary_table(summary: Summary, differing_only: bool = False, console=None, names: str = "short",
                  everything: bool = False):
    """The side-by-side table, fitting ``console`` (render.grid.grid): one
    column per cell, a kernel and target per group of lines, one line per
    figure.  By default only the figures in which the cells differ, of the
    kernels where they differ (``everything``: every figure of every
    kernel): eight cells' four figures side by side are 160 columns, a figure
    a line fits 120 with the cells' names as headers (folded at ``-``), and
    80 with the cells numbered and a legend line.  ``differing_only`` is the
    default here (kept for the other renderings' flag)."""
    console = console or default_console()
    columns = [Column("kernel", name=True), Column("target"), Column("")]
    columns += [Column(cell.name, "right", short=str(number)) for number, cell in enumerate(summary.cells, 1)]
    rows = []
    same = 0
    for row in summary.rows:
        values = [summary.value(cell.name, row) for cell in summary.cells]
        shown = []
        for label, text in FIGURE_ROWS:
            texts = [None if r is None else text(r) for r in values]
            if everything or len(set(texts) - {None}) > 1:
                shown.append((label, text, texts))
        if not shown:
            same += 1
            continue
        for index, (label, text, texts) in enumerate(shown):
            cells = [("-", "") if t is None else (t, "red" if label in ("spills", "scratch") and t != "0" else "")
                     for t in texts]
            rows.append([KernelName(row[2]) if index == 0 else "", row[0] if index == 0 else "", label, *cells])
    what = "every figure" if everything else "the figures in which the cells differ"
    table = grid(console, columns, rows, names=names, header_lines=3,
                 title=f"per kernel and target, {what}: VGPRs, spilled registers, scratch bytes per lane, "
                       f"waves per SIMD (occupancy model {summary.occupancy_model}; - not built)")
    return table, len(summary.rows) - same, same


def print_summary(console, summary: Summary, names: str = "short", everything: bool = False) -> None:
    """The table, then how many kernels it leaves out."""
    if len(summary.cells) < 2 and not everything:
        say(console, f"one cell built ({', '.join(c.name for c in summary.cells)}): nothing to set side by side "
                     f"(--all shows its {len(summary.rows)} kernel rows)")
        return
    table, differing, same = summary_table(summary, console=console, names=names, everything=everything)
    if differing:
        console.print(table)
    kernels = len(summary.rows)
    if everything:
        say(console, f"{kernels} kernel rows; the cells differ in {differing}")
    else:
        say(console, f"{differing} of {kernels} kernel rows differ between the cells; {same} are the same in "
                     f"every cell that built them (--all shows every kernel and figure)")


# -- the matrix's cell checks (matrix.gating's CellCheck: matrix check, run, collect) ---------------------

# Failures listed per failing cell; the rest are counted (all of them are in the cell's check.json).
FAILURES_SHOWN = 20


def print_checks(console, checks: list[CellCheck]) -> None:
    """``matrix check``: each cell's verdict line with its failures under it, then the counts."""
    width = max(len(c.cell.name) for c in checks) if checks else 0
    for c in checks:
        _verdict(console, c, width)
        _details(console, c)
    _counts(console, checks)


def print_verdicts(console, checks: list[CellCheck]) -> None:
    """The main job's first lines: one line per cell, its verdict and why, then the counts."""
    width = max(len(c.cell.name) for c in checks) if checks else 0
    for c in checks:
        _verdict(console, c, width)
    _counts(console, checks)


def print_details(console, checks: list[CellCheck]) -> None:
    """After the verdicts (and what changed): each failing cell's failures and
    the command that accepts them, and the flags warnings."""
    for c in checks:
        if c.failures or c.removed or c.removed_targets or (
                c.flags_warning and not c.reason.endswith("[--strict-flags]")):
            say(console, f"{c.cell.name}:")
            _details(console, c)


def _verdict(console, c: CellCheck, width: int) -> None:
    name = c.cell.name.ljust(width)
    reason = shown(c.reason, SENTENCE_LIMIT)        # (a downloaded artifact's, with matrix collect)
    if c.verdict == "pass":
        say(console, f"PASS     {name}  {reason}")
    elif c.verdict == "fail":
        say(console, f"FAIL     {name}  {reason}", style="red")
    elif c.verdict == "error":
        say(console, f"ERROR    {name}  {reason}", style="red")
    elif c.verdict == "skipped":
        note = " (required here: the run does not pass)" if c.required else ""
        say(console, f"SKIPPED  {name}  skipped: {reason}{note}", style="yellow")


def _details(console, c: CellCheck) -> None:
    from spillway.matrix.cell_commands import accept_command, failure_text, removal_commands, removal_result
    if c.verdict == "fail":
        for f in c.failures[:FAILURES_SHOWN]:
            say(console, f"           over baseline: {failure_text(f, shown)}")
        if len(c.failures) > FAILURES_SHOWN:
            say(console, f"           ... and {len(c.failures) - FAILURES_SHOWN} more ({c.report})")
        keys = list(dict.fromkeys(f["key"] for f in c.failures))
        if keys:
            say(console, f"           intended? accept with: {accept_command(c, keys, command_word)}", soft_wrap=True)
        if c.removed or c.removed_targets:
            print_removed(removal_result(c), console, limit=FAILURES_SHOWN, names="short",
                          removals=removal_commands(c, command_word), indent="           ")
    if c.flags_warning and not c.reason.endswith("[--strict-flags]"):
        say(console, f"           warning: {shown(c.flags_warning)} (--strict-flags fails on it)", style="yellow",
            soft_wrap=True)


def _counts(console, checks: list[CellCheck]) -> None:
    counts = {v: sum(1 for c in checks if c.verdict == v) for v in ("pass", "fail", "error", "skipped")}
    console.print(f"matrix check: {counts['pass']} cells passed, {counts['fail']} over baseline, "
                  f"{counts['error']} errors, {counts['skipped']} skipped", highlight=False)


# -- the report (render.models.ReportModel: the records read, those the table shows) ------------------------

# The file column, shortened only when the kernel names would get less than NAME_ROOM.
FILE_MIN = 16
# --isa: hex digits of a kernel's code SHA-256 the table shows; what it shows for code not read.
CODE_PREFIX = 8
NOT_READ = "not read"


def evidence_cells(isa: dict) -> list[str]:
    """A printed row's code without --isa: scratch accesses in loops of all of them, AGPR copies
    ("!": the decoder stopped early, the figures cover what it read)."""
    complete = "" if isa["status"] == "complete" else "!"
    accesses = isa["scratch_loads"] + isa["scratch_stores"]
    return [f"{isa['scratch_in_loops']}/{accesses}{complete}", f"{isa['agpr_writes'] + isa['agpr_reads']}{complete}"]


def evidence_line(kernels: list[dict], width: int) -> str:
    """The code of the printed rows in a line, or in lines of at most ``width`` (kept when narrow
    outputs drop the columns; never cut)."""
    read = [k["isa"] for k in kernels if k.get("isa") is not None]
    accesses = sum(i["scratch_loads"] + i["scratch_stores"] for i in read)
    in_loops = sum(i["scratch_in_loops"] for i in read)
    looping = sum(1 for i in read if i["scratch_in_loops"])
    copies = sum(i["agpr_writes"] + i["agpr_reads"] for i in read)
    copying = sum(1 for i in read if i["agpr_writes"] + i["agpr_reads"])
    stopped = sum(1 for i in read if i["status"] != "complete") + len(kernels) - len(read)
    parts = ["code of the row:" if len(kernels) == 1 else f"code of the {len(kernels)} rows:",
             f"{in_loops} of {accesses} scratch accesses in loops ({looping} {_kernels(looping)}),",
             f"{copies} AGPR copies ({copying} {_kernels(copying)})"]
    if stopped:
        parts[-1] += ";"
        parts.append(f"{stopped} not read to the end (!)")
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 1 + len(part) <= width:
            lines[-1] += " " + part
        else:
            lines.append("  " + part)
    return "\n".join(lines)


def _kernels(count: int) -> str:
    return "kernel" if count == 1 else "kernels"


# The count column of rows that stand for several identical records (the same kernel in several bundles).
COPIES = "×"


def kernel_rows(kernels: list[dict], files: dict[str, str] | None = None, isa: bool = False,
                pressure: bool = False) -> tuple[list, list]:
    """(columns, rows) of the report table, one row per record, in order;
    ``pressure`` (--pressure): the live registers' peaks too."""
    from spillway.resources.occupancy import next_step_text

    columns = [Column("kernel", name=True), Column("target"), Column("VGPRs", "right"),
               Column("AGPRs", "right", drop=2), Column("SGPRs", "right", drop=4), Column("spills V/S", "right"),
               Column("scratch B/lane", "right"), Column("cause", drop=2), Column("LDS B", "right", drop=3),
               Column("waves/SIMD", "right"), Column("bound", drop=1), Column("next step", drop=1)]
    if files:
        # A path: labelled as names are (never two files alike) when the figures need the room.
        columns.insert(0, Column("file", elide=True, min_width=FILE_MIN))
    if isa:
        # From the machine code: scratch bytes per lane moved (loads+stores), scratch accesses in
        # loops, AGPR copies (v_accvgpr_write + read), the code's SHA-256 prefix ("not read" when none
        # was read: a note under the table says why); "!" marks a kernel whose code was not read to
        # the end (its status in --json or --format tsv).
        columns[-2:-2] = [Column("code scratch B", "right", drop=3), Column("in loops", "right", drop=3),
                          Column("AGPR copies", "right", drop=3), Column("code", drop=2)]
    if pressure:
        # The most VGPRs/AGPRs/SGPRs live at once in the machine code (isa.liveness); "!" a kernel read
        # partly (a call, an indirect branch...: its status in --json), "?" one not read.
        columns[-2:-2] = [Column("live V/A/S", "right", drop=2)]
    rows = []
    for k in kernels:
        occupancy = "?" if k["occupancy"] is None else str(k["occupancy"])
        scratch = str(k["private_segment_fixed_size"]) + ("+dyn" if k["uses_dynamic_stack"] else "")
        row = [KernelName(k["name"]), k["target"], str(k["vgpr_count"]),
               "-" if k["agpr_count"] is None else str(k["agpr_count"]),
               str(k["sgpr_count"]), f"{k['vgpr_spill_count']}/{k['sgpr_spill_count']}",
               scratch, k["scratch_cause"], str(k["group_segment_fixed_size"]), occupancy,
               k["occupancy_limit"] if k["occupancy"] is not None else "",
               next_step_text(k.get("occupancy_next"))]
        if isa:
            found = k["isa"]
            complete = "" if found["status"] == "complete" else "!"
            row[-2:-2] = [f"{found['scratch_load_bytes'] + found['scratch_store_bytes']}{complete}",
                          str(found["scratch_in_loops"]), str(found["agpr_writes"] + found["agpr_reads"]),
                          found["code_sha256"][:CODE_PREFIX] or NOT_READ]
        if pressure:
            row[-2:-2] = [live_cell(k["isa"].get("pressure"))]
        if files:
            row.insert(0, files.get(k["file"], k["file"]))
        rows.append(row)
    return columns, rows


def live_cell(pressure: dict | None) -> str:
    """report --pressure's table cell: peaks as V/A/S, "!" when read partly, "?" when not read."""
    from spillway.isa.liveness import NOT_READ as NOT_READ_PRESSURE

    if pressure is None or pressure["status"].startswith(NOT_READ_PRESSURE):
        return "?"
    mark = "" if pressure["status"] == "complete" else "!"
    return f"{pressure['vgprs']['peak']}/{pressure['agprs']['peak']}/{pressure['sgprs']['peak']}{mark}"


def row_key(row: list) -> tuple:
    """What must be equal for two rows to be one (merge_copies)."""
    return tuple(cell.full if isinstance(cell, KernelName) else cell for cell in row)


def merge_copies(columns: list, rows: list, keys: list[tuple] | None = None) -> tuple[list, list, int]:
    """One row per distinct row: rows whose every cell is equal (the kernel's
    full demangled name, its target, its file when the table shows files, and
    every figure the table has, those a narrow output leaves out included)
    are one row, counted in a ``×`` column after the target (shown only when
    some row stands for several records).  The same kernel in several bundles
    of one library is then one row.  ``keys``: each row's row_key, when the
    caller has them.  (columns, rows, rows merged away)."""
    counts: dict[tuple, int] = {}
    first: dict[tuple, list] = {}
    for row, k in zip(rows, keys if keys is not None else map(row_key, rows)):
        counts[k] = counts.get(k, 0) + 1
        first.setdefault(k, row)
    if len(first) == len(rows):
        return columns, rows, 0
    at = next(i for i, c in enumerate(columns) if c.header == "target") + 1
    merged = []
    for k, row in first.items():
        merged.append(row[:at] + [f"×{counts[k]}" if counts[k] > 1 else ""] + row[at:])
    return columns[:at] + [Column(COPIES, "right")] + columns[at:], merged, len(rows) - len(first)


def kernel_table(console, columns: list, rows: list, keys: list[tuple], names: str = "short", limit: int = 0):
    """(the report table, rows shown, rows hidden by ``limit``, records merged
    into other rows) of kernel_rows' ``columns`` and ``rows`` (``keys``: their
    row_key): identical records are one row (merge_copies)."""
    columns, rows, merged = merge_copies(columns, rows, keys)
    shown, hidden = limited(rows, limit)
    return grid(console, columns, shown, names=names), len(shown), hidden, merged


def with_printed_evidence(code_of: Callable[[list[dict]], list[dict]], kernels: list[dict], columns: list,
                          rows: list, keys: list[tuple], limit: int, cells: bool) -> list[dict]:
    """The code of the records the table prints (``code_of``: the model's,
    which the command reads), and (``cells``) add
    its two columns to kernel_rows' ``columns`` and ``rows`` and their
    values to the rows' ``keys``, in place ("?" for records not decoded).
    The printed rows are the first ``limit`` distinct rows (merge_copies' rule
    on the figures alone); every record of each is decoded.  Returns the first
    record of each printed row, with its ``isa`` (for evidence_line)."""
    printed: dict[tuple, None] = {}
    for key in keys:
        if key not in printed and not (limit and 0 < limit <= len(printed)):
            printed[key] = None
    chosen = [i for i, key in enumerate(keys) if key in printed]
    decoded = code_of([kernels[i] for i in chosen])
    firsts: dict[tuple, dict] = {}
    for i, record in zip(chosen, decoded):
        firsts.setdefault(keys[i], record)
    if cells:
        # Scratch accesses in loops of all of them, AGPR copies; left out on narrow outputs and with
        # full names (which take the room), where the line under the table keeps their totals.
        columns[-2:-2] = [Column("in loops", "right", drop=3), Column("AGPR copies", "right", drop=2)]
        found = dict(zip(chosen, decoded))
        for i, row in enumerate(rows):
            isa = found[i]["isa"] if i in found else None
            added = ["?", "?"] if isa is None else evidence_cells(isa)
            row[-2:-2] = added
            keys[i] = keys[i][:-2] + tuple(added) + keys[i][-2:]
    return list(firsts.values())


def report_table(model: ReportModel, console_, view: View) -> None:
    """The report's table on ``console_``: the kernels shown, the summary line, the
    merged records' note and the code of the printed rows (decoded here, only theirs)."""
    document, kernels, pattern = model.document, model.kernels, model.pattern
    total = len(document["kernels"])
    inputs = sorted({k["file"] for k in document["kernels"]})
    files = short_files(inputs) if len(inputs) > 1 else None
    columns, rows = kernel_rows(kernels, files, model.isa, model.pressure)
    keys = [row_key(row) for row in rows]
    evidence = bool(kernels) and not model.isa
    printed: list[dict] = []
    if evidence:
        printed = with_printed_evidence(model.code_of, kernels, columns, rows, keys, view.limit,
                                        cells=view.names != "full")
    table, shown, hidden, merged = kernel_table(console_, columns, rows, keys, view.names, view.limit)
    if shown:
        console_.print(table)
    skipped = sum(f["skipped_without_device_code"] for f in document["files"])
    bitcode = sum(len(f["bitcode_only"]) for f in document["files"])
    what = "kernels" if view.everything else "kernels using scratch"
    summary = f"{len(kernels)} {what}" + (f" matching {pattern!r}" if pattern else "") + \
              f" of {total} kernels read"
    if hidden:
        summary += f" ({shown} shown; --limit 0 shows all)"
    if skipped:
        summary += f"; {skipped} files without device code skipped"
    if bitcode:
        summary += f"; {bitcode} bitcode-only entries (resource usage exists after the device link)"
    say(console_, summary, soft_wrap=True)
    if merged:
        say(console_, f"{COPIES}N: N identical records (the same kernel, target and figures in several code "
                      f"objects) in one row; {merged:,} records merged (--format json lists each)")
    if evidence and printed:
        for line in evidence_line(printed, console_.width).split("\n"):      # (wrapped: counts only)
            say(console_, line, soft_wrap=True)
    if model.isa and shown:
        for line in unread_lines(kernels):
            say(console_, line, soft_wrap=True)


def unread_lines(kernels: list[dict]) -> list[str]:
    """--isa: why the code of the kernels whose code cell says "not read" was not read, one line per
    status (their count and first kernel; the status and name come from the binary: cut here, made
    safe by ``say``)."""
    by_status: dict[str, list[dict]] = {}
    for k in kernels:
        if k.get("isa") is not None and not k["isa"]["code_sha256"]:
            by_status.setdefault(k["isa"]["status"], []).append(k)
    return [f"code not read ({len(found)} {_kernels(len(found))}, first {shown(found[0]['name'])} "
            f"({shown(found[0]['target'])})): {shown(status)}" for status, found in by_status.items()]


# -- each model drawn (render.emit: --format table, and the terminal beside a document) --------------------

@singledispatch
def draw(model, console_, view) -> None:
    raise TypeError(f"no table for {type(model).__name__}")


@draw.register
def _(model: HistoryModel, console_, view: View) -> None:
    from spillway.render.history import history_text

    console_.out(history_text(model.document).rstrip("\n"), highlight=False)


@draw.register
def _(model: BisectModel, console_, view: View) -> None:
    from spillway.render.history import bisect_text

    console_.out(bisect_text(model.document).rstrip("\n"), highlight=False)
    if model.compare is not None:
        say(console_, "")
        say(console_, model.compare_heading, soft_wrap=True)
        draw(model.compare, console_, view)


@draw.register
def _(model: CacheModel, console_, view: View) -> None:
    from spillway.render.history import cache_text

    console_.out(cache_text(model.document, model.location_set).rstrip("\n"), highlight=False)


@draw.register
def _(model: ReportModel, console_, view: View) -> None:
    report_table(model, console_, view)


@draw.register
def _(model: CheckModel, console_, view: View) -> None:
    commands = model.commands.shown_by(command_word)
    print_check(model.result, console_, limit=view.limit, names=view.names, accept=commands.accept,
                accept_all=commands.accept_all, code=dict(model.code) if model.code else None,
                removals=commands.removals())


@draw.register
def _(model: CompareModel, console_, view: View) -> None:
    print_compare(model.comparison, console_, everything=view.everything, limit=view.limit, names=view.names)


@draw.register
def _(model: MatrixPairModel, console_, view: View) -> None:
    old, new, comparison = model.old, model.new, model.comparison
    table, rows_shown, _ = compare_table(comparison, view.everything, console=console_, names=view.names)
    say(console_, f"{new.name} ({new.toolchain()}) against {old.name} ({old.toolchain()}); "
                  f"gfx11 rows: {new.name} built "
                  f"{' '.join(t for t in new.targets if t.startswith('gfx11')) or '-'}, {old.name} built "
                  f"{' '.join(t for t in old.targets if t.startswith('gfx11')) or '-'}")
    if rows_shown:
        console_.print(table)
    say(console_, comparison.sentence())


@draw.register
def _(model: MatrixSummaryModel, console_, view: View) -> None:
    print_summary(console_, model.summary, view.names, view.everything)


@draw.register
def _(model: MatrixListModel, console_, view: View) -> None:
    from rich.table import Table

    table = Table(title=f"cells of {model.shown_file}", title_justify="left")
    table.add_column("cell", no_wrap=True)
    table.add_column("toolchain")
    table.add_column("from")
    table.add_column("targets")
    table.add_column("baseline")
    table.add_column("available here", overflow="fold", ratio=1)
    for cell, availability, present in model.rows:
        status = f"yes: {availability.version}" if availability.available else f"no: {availability.reason}"
        origin = f"{cell.source} ({cell.system})" if cell.in_root else cell.source
        if cell.backend_info is not None:     # the back end's wheel, from the package index
            origin += f" + {cell.backend_info.package} {cell.backend_info.version}"
        table.add_row(*(terminal_text(text) for text in (cell.name, cell.toolchain(), origin, " ".join(cell.targets),
                                                          "yes" if present else "missing", status)))
    console_.print(table)
    available = sum(1 for _, a, _ in model.rows if a.available)
    say(console_, f"{available} of {len(model.rows)} cells available here")


# -- baseline write (render.models.BaselineWriteModel) ---------------------------------------------------

# Changes of a kind a baseline write lists one per line; the rest are counted.
BASELINE_CHANGES_SHOWN = 20


def print_baseline_write(model: BaselineWriteModel) -> None:
    """What a baseline write did: a line on standard error per allowance kept
    (with the command that accepts it), loosened and removed, per target and
    kernel no longer built it kept (with the command that accepts the removal),
    then the one line on standard output that says what it wrote."""
    from spillway.gate.baseline import update_summary
    from spillway.gate.commands import accept_command, accept_removed_command, quote_every_path
    from spillway.gate.metrics import METRICS

    result, shown_at = model.result, BASELINE_CHANGES_SHOWN

    def accept(key: str) -> str:
        return accept_command(model.paths, model.output, [key], gate=model.gate, targets=model.targets,
                              quote=quote_every_path, word=command_word)

    def accept_removed(keys: list[str], targets: list[str]) -> str:
        return accept_removed_command(model.paths, model.output, keys, targets, targets=model.targets,
                                      quote=quote_every_path, word=command_word)

    err = console(stderr=True)
    for change in result.refused:
        metric = METRICS.get(change.metric)
        what = "floor" if metric and metric.floor else "allowance"
        say(err, f"spillway: kept {change.metric} {what} of {shown(change.name)} [{shown(change.target)}] at "
                 f"{change.old} (now {change.new}); accept with: {accept(change.key)}", soft_wrap=True)
    for change in result.raised[:shown_at]:
        say(err, f"spillway: loosened {change.metric} of {shown(change.name)} [{shown(change.target)}]: "
                 f"{change.old} -> {change.new}", soft_wrap=True)
    if len(result.raised) > shown_at:
        say(err, f"spillway: ... {len(result.raised) - shown_at} more loosened", soft_wrap=True)
    for target, _key, name in result.removed[:shown_at]:
        say(err, f"spillway: removed {shown(name)} [{shown(target)}] (no longer built; --allow-removed)",
            soft_wrap=True)
    if len(result.removed) > shown_at:
        say(err, f"spillway: ... {len(result.removed) - shown_at} more removed", soft_wrap=True)
    for target in result.removed_targets:
        say(err, f"spillway: removed target {shown(target)} (no longer built; --allow-removed-target)",
            soft_wrap=True)
    for target, count in result.kept_targets:
        written = f"; the baseline was written from {count} kernels on it" if count else ""
        say(err, f"spillway: kept target {shown(target)}: no kernel is built for it{written}; accept its removal "
                 f"with: {accept_removed([], [target])}", soft_wrap=True)
    for target, key, name in result.kept_removed[:shown_at]:
        say(err, f"spillway: kept {shown(name)} [{shown(target)}]: no longer built; accept its removal with: "
                 f"{accept_removed([key], [])}", soft_wrap=True)
    if len(result.kept_removed) > shown_at:
        keys = list(dict.fromkeys(k for _, k, _ in result.kept_removed))
        say(err, f"spillway: ... {len(result.kept_removed) - shown_at} more kept; accept them all with: "
                 f"{accept_removed(keys, [])}", soft_wrap=True)
    say(console(), update_summary(result, model.output, shown), soft_wrap=True)
