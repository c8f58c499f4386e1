"""``spillway matrix``: build the repository's kernels and engine with every
toolchain cell of ``matrix/cells.toml``, gate each build against its own
baseline, and compare cells.

Exit status of build, check, baseline and run: 0 when every cell worked on
passed; 1 when a cell failed to build, is over its baseline or could not be
checked; 2 on usage errors (bad cells file, unknown cell); 3 when nothing
failed but a required cell was skipped because its toolchain is missing.  A
cell is required when it is named on the command line (or --local is given);
with no cell named, the local (Debian) cells are required and the others
(built through Nix) are reported as skipped without failing the run.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

from spillway.constants import MATRIX_DEFAULT_JOBS
from spillway.errors import UsageError
from spillway.cli.common import dump_json, stdout_console, write_output


def _imports() -> None:
    """Bind the heavy modules (pydantic through spillway.matrix, rich) only
    when a matrix command runs: building the parser must stay cheap, as
    every `spillway report` builds it."""
    global mx, Console, escape, Table
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from spillway import matrix as mx


def _heavy(run):
    @functools.wraps(run)
    def wrapper(args) -> int:
        _imports()
        return run(args)
    return wrapper


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "matrix", help="build, gate and compare the toolchain matrix (matrix/cells.toml)",
        description=__doc__.split("\n\n", 1)[0].replace("``", ""),
        epilog="Exit status (build, check, baseline, run): 0 pass; 1 a cell failed to build or is over its "
               "baseline; 2 usage error; 3 a required cell was skipped (its toolchain is missing). Named cells "
               "(or --local) are required; with no names only the local Debian cells are.")
    commands = parser.add_subparsers(dest="matrix_command", metavar="ACTION")
    commands.required = True

    def common(sub, cells: bool = True, jobs: bool = True) -> None:
        sub.add_argument("--cells", metavar="FILE", help="the cells file (default: matrix/cells.toml in this "
                                                         "folder or a parent)")
        sub.add_argument("--root", metavar="DIR", help="where sources, recipe and baselines are (default: the "
                                                       "folder holding matrix/)")
        sub.add_argument("--build-dir", metavar="DIR", help="where builds go (default: ROOT/build)")
        if cells:
            sub.add_argument("cells_named", nargs="*", metavar="CELL", help="cells (default: all)")
            sub.add_argument("--local", action="store_true",
                             help="all local (Debian) cells, each required like a named one")
        if jobs:
            sub.add_argument("-j", "--jobs", type=int, default=MATRIX_DEFAULT_JOBS, metavar="N",
                             help=f"compiler processes at once (default {MATRIX_DEFAULT_JOBS})")

    listing = commands.add_parser("list", help="cells, and whether each toolchain is available here")
    common(listing, cells=False, jobs=False)
    listing.add_argument("--json", action="store_true", help="JSON instead of a table")
    listing.set_defaults(run=_heavy(run_list))

    build = commands.add_parser("build", help="build cells into BUILD/<cell>/ (parallel, incremental)")
    common(build)
    build.set_defaults(run=_heavy(run_build))

    check = commands.add_parser("check", help="build if needed, then gate each cell against its baseline")
    common(check)
    _check_options(check)
    check.set_defaults(run=_heavy(run_check))

    compare = commands.add_parser(
        "compare", help="compare two cells, or summarize cells side by side",
        description="With two cells A B: spillway's comparison of B against A, kernels matched by stable key "
                    "and target (gfx11 targets are one row). With no cell, one, or more than two (or "
                    "--summary): every built cell side by side, per kernel.")
    common(compare, jobs=False)
    compare.add_argument("--summary", action="store_true", help="side-by-side view even for two cells")
    compare.add_argument("--format", choices=("table", "markdown", "json"), default="table")
    compare.add_argument("-o", "--output", default="-", metavar="FILE", help="write to FILE")
    compare.add_argument("--all", action="store_true", help="A B: also list unchanged kernels")
    compare.add_argument("--differing", action="store_true", help="summary: only rows where cells differ")
    compare.add_argument("--fail-on-worse", action="store_true", help="A B: exit 1 when B is worse somewhere")
    compare.set_defaults(run=_heavy(run_compare))

    baseline = commands.add_parser("baseline", help="build, then write each cell's baseline "
                                                    "(spillway baseline write)")
    common(baseline)
    baseline.add_argument("--fresh", action="store_true",
                          help="start the baseline over instead of updating it (updates only tighten)")
    baseline.set_defaults(run=_heavy(run_baseline))

    run = commands.add_parser("run", help="the main job: build, check every cell, print the comparison")
    common(run)
    _check_options(run)
    run.add_argument("--markdown", metavar="FILE", help="also write the comparison as Markdown (for a PR)")
    run.add_argument("--differing", action="store_true", help="only rows where cells differ")
    run.set_defaults(run=_heavy(run_run))


def _check_options(sub) -> None:
    sub.add_argument("--no-build", action="store_true", help="check what is built; do not build first")
    sub.add_argument("--gate", metavar="METRICS", help="override the baselines' gated metrics")
    sub.add_argument("--junit-dir", metavar="DIR", help="write DIR/<cell>.xml (JUnit) per checked cell")


# -- shared pieces ---------------------------------------------------------------------

def _err() -> Console:
    return Console(stderr=True) if sys.stderr.isatty() else Console(stderr=True, width=200,
                                                                    color_system=None, soft_wrap=True)


def _load(args) -> tuple[mx.Matrix, Path]:
    matrix = mx.load(args.cells, args.root)
    build_dir = Path(args.build_dir).resolve() if args.build_dir else matrix.root / "build"
    if getattr(args, "jobs", 1) < 1:
        raise UsageError("--jobs must be at least 1")
    return matrix, build_dir


class Progress:
    """Build progress on stderr: bars on a terminal, one line per step otherwise."""

    def __init__(self, matrix: mx.Matrix):
        self.total = len(matrix.engine.sources) + 1
        self.console = _err()
        self.live = self.console.is_terminal
        self.tasks: dict[str, int] = {}
        self.bar = None
        if self.live:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bars, TextColumn, TimeElapsedColumn
            self.bar = Bars(TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("{task.fields[status]}"), console=self.console)

    def __enter__(self):
        if self.bar:
            self.bar.start()
        return self

    def __exit__(self, *exc):
        if self.bar:
            self.bar.stop()

    def __call__(self, cell: mx.Cell, event: str, step) -> None:
        if self.bar:
            self._bars(cell, event, step)
        elif event in ("done", "failed") and step is not None:
            verb = {"compile": "compiled", "link": "linked"}[step.kind]
            if event == "failed":
                verb = f"FAILED to {step.kind}"
            self.console.print(escape(f"[{cell.name}] {verb} {step.label} ({step.seconds:.1f} s)"),
                               highlight=False)

    def _bars(self, cell, event, step) -> None:
        if event == "planned":
            self.tasks[cell.name] = self.bar.add_task(cell.name, total=self.total, status="")
            return
        task = self.tasks.get(cell.name)
        if task is None:
            return
        if event == "start":
            self.bar.update(task, status=f"{'compiling' if step.kind == 'compile' else 'linking'} {step.label}")
        elif event in ("fresh", "done", "failed"):
            self.bar.advance(task)
            if event == "failed":
                self.bar.update(task, status=f"[red]failed: {escape(step.label)}[/]")
        elif event == "finished":
            self.bar.update(task, completed=self.total)


def _build(matrix: mx.Matrix, build_dir: Path, cells: list[mx.Cell], jobs: int) -> list[mx.CellBuild]:
    with Progress(matrix) as progress:
        return mx.Builder(matrix, build_dir, jobs, progress).build(cells)


def _selected(args, matrix: mx.Matrix) -> tuple[list[mx.Cell], set[str]]:
    cells, explicit = matrix.select(args.cells_named, args.local)
    return cells, mx.required_cells(cells, explicit)


def _print_builds(console: Console, builds: list[mx.CellBuild], matrix: mx.Matrix) -> None:
    for b in builds:
        name = b.cell.name
        if b.status == "skipped":
            console.print(escape(f"SKIPPED  {name}: {b.reason}"), highlight=False)
        elif b.status == "failed":
            log = f" (log: {_rel(b.log, matrix)})" if b.log else ""
            console.print(escape(f"FAILED   {name}: {b.reason}{log}"), highlight=False)
        else:
            what = f"{b.compiled} of {b.objects} objects compiled" if b.status == "built" else "up to date"
            console.print(escape(f"{b.status.upper():<8} {name}: {_rel(b.library, matrix)} ({what}, "
                                 f"{b.seconds:.1f} s)"), highlight=False)


def _rel(path: Path | None, matrix: mx.Matrix) -> str:
    if path is None:
        return "-"
    try:
        return str(path.relative_to(matrix.root))
    except ValueError:
        return str(path)


# -- list ----------------------------------------------------------------------------------

def run_list(args) -> int:
    matrix, _ = _load(args)
    rows = []
    for cell in matrix.cells.values():
        availability = mx.probe(cell)
        rows.append((cell, availability, matrix.resolve(cell.baseline).is_file()))
    if args.json:
        document = {"cells_file": str(matrix.path), "cells": [
            {"name": c.name, "description": c.description, "toolchain": c.toolchain(), "source": c.source,
             "local": c.local, "cxx": c.cxx, "targets": c.targets, "available": a.available,
             "reason": a.reason, "compiler": a.version, "baseline": c.baseline, "baseline_exists": present}
            for c, a, present in rows]}
        write_output("-", dump_json(document))
        return 0
    table = Table(title=f"cells of {_rel(matrix.path, matrix)}", title_justify="left")
    table.add_column("cell", no_wrap=True)
    table.add_column("toolchain")
    table.add_column("from")
    table.add_column("targets")
    table.add_column("baseline")
    table.add_column("available here", overflow="fold", ratio=1)
    for cell, availability, present in rows:
        status = f"yes: {availability.version}" if availability.available else f"no: {availability.reason}"
        table.add_row(escape(cell.name), escape(cell.toolchain()), cell.source, " ".join(cell.targets),
                      "yes" if present else "missing", escape(status))
    console = stdout_console()
    console.print(table)
    available = sum(1 for _, a, _ in rows if a.available)
    console.print(f"{available} of {len(rows)} cells available here", highlight=False)
    return 0


# -- build ---------------------------------------------------------------------------------

def run_build(args) -> int:
    matrix, build_dir = _load(args)
    cells, required = _selected(args, matrix)
    start = time.monotonic()
    builds = _build(matrix, build_dir, cells, args.jobs)
    console = stdout_console()
    _print_builds(console, builds, matrix)
    counts = {s: sum(1 for b in builds if b.status == s) for s in ("built", "up to date", "failed", "skipped")}
    console.print(f"matrix build: {counts['built']} built, {counts['up to date']} up to date, "
                  f"{counts['failed']} failed, {counts['skipped']} skipped in {time.monotonic() - start:.1f} s",
                  highlight=False)
    return mx.build_exit_status(builds, required)


# -- check ---------------------------------------------------------------------------------

def _checks(args, matrix: mx.Matrix, build_dir: Path) -> tuple[list[mx.CellCheck], list[mx.CellBuild]]:
    cells, required = _selected(args, matrix)
    if args.no_build:
        builds = []
        for cell in cells:
            availability = mx.probe(cell)
            library = mx.library_path(matrix, build_dir, cell)
            if library.is_file():
                builds.append(mx.CellBuild(cell, "up to date", library=library, version=availability.version))
            elif not availability.available:
                builds.append(mx.CellBuild(cell, "skipped", availability.reason))
            else:
                builds.append(mx.CellBuild(cell, "failed", f"not built (no {_rel(library, matrix)}; "
                                                            f"run spillway matrix build {cell.name})"))
    else:
        builds = _build(matrix, build_dir, cells, args.jobs)
    checks = []
    junit_dir = Path(args.junit_dir) if args.junit_dir else None
    if junit_dir:
        junit_dir.mkdir(parents=True, exist_ok=True)
    for build in builds:
        junit = junit_dir / f"{build.cell.name}.xml" if junit_dir and build.status not in ("skipped", "failed") else None
        result = mx.check_cell(matrix, build_dir, build, args.gate, junit)
        result.required = build.cell.name in required
        checks.append(result)
    return checks, builds


def _print_checks(console: Console, checks: list[mx.CellCheck]) -> None:
    width = max(len(c.cell.name) for c in checks) if checks else 0
    for c in checks:
        name = c.cell.name.ljust(width)
        if c.verdict == "pass":
            console.print(escape(f"PASS     {name}  {c.reason}"), highlight=False)
        elif c.verdict == "fail":
            console.print(escape(f"FAIL     {name}  {c.reason}"), highlight=False, style="red")
            for f in c.failures[:20]:
                console.print(escape(f"           over baseline: {_failure(f)}"), highlight=False)
            if len(c.failures) > 20:
                console.print(f"           ... and {len(c.failures) - 20} more ({c.report})", highlight=False)
        elif c.verdict == "error":
            console.print(escape(f"ERROR    {name}  {c.reason}"), highlight=False, style="red")
        else:
            note = " (required here: the run does not pass)" if c.required else ""
            console.print(escape(f"SKIPPED  {name}  skipped: {c.reason}{note}"), highlight=False, style="yellow")
    counts = {v: sum(1 for c in checks if c.verdict == v) for v in ("pass", "fail", "error", "skipped")}
    console.print(f"matrix check: {counts['pass']} cells passed, {counts['fail']} over baseline, "
                  f"{counts['error']} errors, {counts['skipped']} skipped", highlight=False)


def _failure(f: dict) -> str:
    """One over-baseline finding of spillway.check/1, with a readable name."""
    name = mx.short_name(f["name"])   # spillway.check/1 names are demangled already
    allowed = "-" if f.get("allowed") is None else f["allowed"]
    extra = " (not in the baseline)" if f.get("new_kernel") else ""
    if f["metric"] == "occupancy":
        return f"{name} [{f['target']}]: occupancy {f['actual']} < floor {allowed}{extra}"
    return f"{name} [{f['target']}]: {f['metric']} {f['actual']} > allowed {allowed}{extra}"


def run_check(args) -> int:
    matrix, build_dir = _load(args)
    checks, _ = _checks(args, matrix, build_dir)
    _print_checks(stdout_console(), checks)
    return mx.exit_status(checks)


# -- compare -------------------------------------------------------------------------------

def run_compare(args) -> int:
    matrix, build_dir = _load(args)
    named = [matrix.cell(n) for n in args.cells_named]
    if len(named) == 2 and not args.summary:
        return _compare_two(args, matrix, build_dir, named[0], named[1])
    cells = named or (list(matrix.cells.values()) if not args.local
                      else [c for c in matrix.cells.values() if c.local])
    summary = mx.summarize(matrix, build_dir, cells)
    missing = [c.name for c in cells if c not in summary.cells]
    if named and missing:
        raise UsageError(f"not built: {', '.join(missing)} (run spillway matrix build {' '.join(missing)})")
    if not summary.cells:
        raise UsageError("no cell is built (run spillway matrix build)")
    _emit_summary(args.format, args.output, summary, args.differing)
    return 0


def _emit_summary(fmt: str, output: str, summary: mx.Summary, differing: bool) -> None:
    if fmt == "json":
        write_output(output, dump_json(mx.summary_json(summary)))
    elif fmt == "markdown":
        write_output(output, mx.summary_markdown(summary, differing).encode())
    elif output != "-":
        import io
        buffer = io.StringIO()
        Console(width=240, color_system=None, file=buffer).print(mx.summary_table(summary, differing))
        write_output(output, buffer.getvalue().encode())
    else:
        stdout_console().print(mx.summary_table(summary, differing))


def _compare_two(args, matrix: mx.Matrix, build_dir: Path, old: mx.Cell, new: mx.Cell) -> int:
    from spillway.gate.compare import markdown, table
    comparison = mx.compare_cells(matrix, build_dir, old, new)
    status = 1 if args.fail_on_worse and comparison.has_worse else 0
    if args.format == "json":
        write_output(args.output, dump_json(comparison.to_json()))
    elif args.format == "markdown":
        write_output(args.output, markdown(comparison, args.all).encode())
    else:
        import io
        buffer = io.StringIO()
        console = stdout_console() if args.output == "-" else Console(width=240, color_system=None, file=buffer)
        grid, shown, _ = table(comparison, args.all)
        console.print(escape(f"{new.name} ({new.toolchain()}) against {old.name} ({old.toolchain()}); "
                             f"gfx11 rows: {new.name} built "
                             f"{' '.join(t for t in new.targets if t.startswith('gfx11')) or '-'}, {old.name} built "
                             f"{' '.join(t for t in old.targets if t.startswith('gfx11')) or '-'}"), highlight=False)
        if shown:
            console.print(grid)
        console.print(escape(comparison.sentence()), highlight=False)
        if args.output != "-":
            write_output(args.output, buffer.getvalue().encode())
    return status


# -- baseline ------------------------------------------------------------------------------

def run_baseline(args) -> int:
    matrix, build_dir = _load(args)
    cells, required = _selected(args, matrix)
    builds = _build(matrix, build_dir, cells, args.jobs)
    console = stdout_console()
    status = mx.EXIT_OK
    wrote = 0
    for build in builds:
        if build.status == "skipped":
            console.print(escape(f"SKIPPED  {build.cell.name}: {build.reason}"), highlight=False)
            if build.cell.name in required:
                status = max(status, mx.EXIT_SKIPPED) if status != mx.EXIT_FAILED else status
            continue
        if build.status == "failed":
            console.print(escape(f"FAILED   {build.cell.name}: {build.reason}"), highlight=False)
            status = mx.EXIT_FAILED
            continue
        code, text = mx.write_baseline(matrix, build_dir, build, fresh=args.fresh)
        wrote += 1
        for line in text.splitlines():
            console.print(escape(f"{build.cell.name}: {line}"), highlight=False)
        if code != 0:
            status = mx.EXIT_FAILED
    if not wrote and status == mx.EXIT_OK:
        status = mx.EXIT_SKIPPED
    return status


# -- run: the main job -------------------------------------------------------------------------

def run_run(args) -> int:
    matrix, build_dir = _load(args)
    start = time.monotonic()
    checks, builds = _checks(args, matrix, build_dir)
    console = stdout_console()
    built = [b.cell for b in builds if b.status in ("built", "up to date")]
    if built:
        summary = mx.summarize(matrix, build_dir, built)
        if summary.cells:
            _emit_summary("table", "-", summary, args.differing)
            if args.markdown:
                write_output(args.markdown, mx.summary_markdown(summary, args.differing).encode())
                console.print(f"wrote {args.markdown}", highlight=False)
    _print_checks(console, checks)
    console.print(f"matrix run: {time.monotonic() - start:.1f} s", highlight=False)
    return mx.exit_status(checks)
