#!/usr/bin/env python3
"""Benchmark: spillway at production scale (issue 9) -- `report --all --json`
(with -o FILE, an atomic write that waits for the disk, and to standard output
redirected to a file), `baseline write`, `check` and `compare` on large ROCm
libraries, with time, CPU and memory per command.

    python3 benchmarks/bench_scale.py LIB [--old OLD_LIB] [--runs N] [--json FILE]
        [--only report,baseline,check,check_junit,compare,report_json,report_isa]

LIB is a file or a folder (rocBLAS: the whole package folder).  With --old,
`compare LIB --against OLD_LIB` is timed too (markdown and terminal).
`check_junit` times `check --format junit -o FILE` (a test case per kernel and
gated metric).
`report_json` (with `report`) times `check` and `compare` given the report JSON
that `report --all --json` wrote (streamed record by record: report.report_input),
as written and pretty-printed by `jq .` (the general reader), when jq is installed.
`report_isa` times `report --all --isa --json -o FILE` (every kernel's machine
code decoded too; issue 23's goal on librocsparse1 7.2.4: <= 20 s, <= 40 CPU-s,
<= 800 MB).

Each command is a fresh process, and each writes a new output file (the last
run's is removed first, untimed).  Per run it records:
- wall seconds (perf_counter);
- CPU seconds, user + system, of the process and its workers (os.wait4);
- peak RSS of the largest single process (ru_maxrss from os.wait4: the
  number /usr/bin/time prints);
- peak RSS of the whole process tree (the parent plus its forked workers,
  sampled from /proc every 20 ms): the honest figure when workers run, as
  the issue's goals are for the command, not for one of its processes.
  Mapped file pages a process touched count in its RSS.

The machine is shared (8 agents on 2 cores): report best-of-N wall time and
the CPU seconds beside it, and the load average seen during the runs.

Bytecode: an installed spillway runs from compiled bytecode (pip compiles it),
but this sandbox sets PYTHONDONTWRITEBYTECODE=1, so a checkout's every run
would compile spillway from source again (importing the CLI's modules: 0.13 s more).
The commands therefore run with PYTHONPYCACHEPREFIX in the temporary folder,
filled once before the first timed run by importing every spillway module;
``--source-only`` runs them as the environment says instead.

Goals (issue 9, 2 cores): report librocsparse1 7.2.4 <= 4 s, <= 600 MB;
rocBLAS 7.2.4 folder <= 8 s, <= 800 MB; librocsparse1 6.4.3 <= 4 s, <= 600 MB;
bookworm librocsparse0 <= 2 s, <= 400 MB; on librocsparse1 7.2.4 a default
baseline <= 2 MB, baseline write and check each <= 6 s, <= 800 MB; compare
6.4.3 against 7.2.4 <= 12 s, <= 1 GB, Markdown < 65,536 characters.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from proctree import tree_rss   # (benchmarks/ is on the path: the script's own folder)


def run(command: list[str], stdout=subprocess.DEVNULL) -> dict:
    """One process: wall, CPU, max single-process RSS, peak tree RSS, status."""
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(process.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    return {"wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "max_process_rss_mb": round(usage.ru_maxrss / 1024, 1), "tree_rss_mb": round(peak[0] / 1e6, 1),
            "status": os.waitstatus_to_exitcode(status), "load": round(load_before, 1),
            "stderr_tail": stderr.decode("utf-8", "replace")[-300:]}


def best(runs: list[dict]) -> dict:
    fastest = min(runs, key=lambda r: r["wall_s"])
    return {"best_wall_s": fastest["wall_s"], "best_cpu_s": min(r["cpu_s"] for r in runs),
            "max_process_rss_mb": max(r["max_process_rss_mb"] for r in runs),
            "tree_rss_mb": max(r["tree_rss_mb"] for r in runs), "status": fastest["status"],
            "loads": [r["load"] for r in runs], "runs": runs}


def spillway(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "spillway", *arguments]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library")
    parser.add_argument("--old", help="older build of the same library, for compare")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="report,baseline,check,compare",
                        help="comma-separated steps: report, baseline, check, check_junit, compare, report_json, "
                             "report_isa")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--source-only", action="store_true",
                        help="no bytecode cache: with PYTHONDONTWRITEBYTECODE, each run compiles from source")
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    library = str(Path(args.library).resolve())
    results: dict = {"library": library, "cores": os.cpu_count(), "bytecode": not args.source_only}
    with tempfile.TemporaryDirectory() as work:
        work_dir = Path(work)
        if not args.source_only:
            _use_bytecode(work_dir / "pycache")
        if "report" in wanted:
            out = work_dir / "report.json"
            runs = []
            for _ in range(args.runs):
                # Each run writes a new file, as the baseline runs do: replacing the last run's
                # half gigabyte would time the filesystem freeing it (0.44-0.46 s here).
                out.unlink(missing_ok=True)
                runs.append(run(spillway("report", "--all", "--json", "-o", str(out), library)))
            results["report"] = best(runs)
            results["report"]["json_bytes"] = out.stat().st_size if out.exists() else None
            print(f"report --all --json -o FILE: {_line(results['report'])}, "
                  f"{_mb(results['report']['json_bytes'])} JSON")
            # The same to standard output, as `report --all --json > FILE` writes it: no atomic
            # replace, so no fsync waiting for the disk (the -o figure's difference).
            piped = work_dir / "report-stdout.json"
            runs = []
            for _ in range(args.runs):
                piped.unlink(missing_ok=True)
                with open(piped, "wb") as handle:
                    runs.append(run(spillway("report", "--all", "--json", library), stdout=handle))
            results["report_stdout"] = best(runs)
            print(f"report --all --json > FILE: {_line(results['report_stdout'])}")
            piped.unlink()
        if "report_isa" in wanted:
            out = work_dir / "report-isa.json"
            runs = []
            for _ in range(args.runs):
                out.unlink(missing_ok=True)
                runs.append(run(spillway("report", "--all", "--isa", "--json", "-o", str(out), library)))
            results["report_isa"] = best(runs)
            results["report_isa"]["json_bytes"] = out.stat().st_size if out.exists() else None
            print(f"report --all --isa --json -o FILE: {_line(results['report_isa'])}, "
                  f"{_mb(results['report_isa']['json_bytes'])} JSON")
            out.unlink(missing_ok=True)
        baseline = work_dir / "baseline.json"
        if wanted & {"baseline", "check", "check_junit"}:
            runs = []
            for _ in range(args.runs if "baseline" in wanted else 1):
                baseline.unlink(missing_ok=True)
                runs.append(run(spillway("baseline", "write", library, "-o", str(baseline),
                                         "--note", "benchmark")))
            results["baseline_write"] = best(runs)
            results["baseline_write"]["baseline_bytes"] = baseline.stat().st_size if baseline.exists() else None
            print(f"baseline write: {_line(results['baseline_write'])}, baseline "
                  f"{_mb(results['baseline_write']['baseline_bytes'])}")
        if "check" in wanted and baseline.exists():
            runs = [run(spillway("check", library, "--baseline", str(baseline))) for _ in range(args.runs)]
            results["check"] = best(runs)
            print(f"check (same build): {_line(results['check'])}, exit {results['check']['status']}")
        if "check_junit" in wanted and baseline.exists():
            # Every kernel a test case (the baseline's gate: 239,806 on librocsparse1 7.2.4).
            junit = work_dir / "check.xml"
            runs = []
            for _ in range(args.runs):
                junit.unlink(missing_ok=True)
                runs.append(run(spillway("check", library, "--baseline", str(baseline), "--format", "junit",
                                         "-o", str(junit))))
            results["check_junit"] = best(runs)
            results["check_junit"]["junit_bytes"] = junit.stat().st_size if junit.exists() else None
            print(f"check --format junit -o FILE: {_line(results['check_junit'])}, "
                  f"{_mb(results['check_junit']['junit_bytes'])} XML")
            junit.unlink(missing_ok=True)
        if "report_json" in wanted and (work_dir / "report.json").exists():
            results["report_json"] = _report_json_inputs(work_dir, baseline, args.runs)
        if "compare" in wanted and args.old:
            old = str(Path(args.old).resolve())
            runs = [run(spillway("compare", library, "--against", old)) for _ in range(args.runs)]
            results["compare_terminal"] = best(runs)
            with open(work_dir / "terminal.txt", "wb") as handle:
                run(spillway("compare", library, "--against", old), stdout=handle)
            results["compare_terminal"]["lines"] = (work_dir / "terminal.txt").read_bytes().count(b"\n")
            print(f"compare (terminal): {_line(results['compare_terminal'])}, "
                  f"{results['compare_terminal']['lines']} lines")
            markdown = work_dir / "compare.md"
            runs = [run(spillway("compare", library, "--against", old, "--format", "markdown", "-o",
                                 str(markdown)))]
            results["compare_markdown"] = best(runs)
            text = markdown.read_text() if markdown.exists() else ""
            results["compare_markdown"]["characters"] = len(text)
            print(f"compare --format markdown: {_line(results['compare_markdown'])}, {len(text)} characters")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def _use_bytecode(prefix: Path) -> None:
    """Let the commands (children: they inherit the environment) write and read
    compiled bytecode under ``prefix``, and fill it: every spillway module imported
    once (with their dependencies)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    subprocess.run([sys.executable, "-c", "import importlib, pkgutil, spillway\n"
                    "for m in pkgutil.walk_packages(spillway.__path__, 'spillway.'):\n"
                    "    if m.name != 'spillway.__main__':   # (that one runs the command line)\n"
                    "        importlib.import_module(m.name)"], check=True)


def _report_json_inputs(work_dir: Path, baseline: Path, runs: int) -> dict:
    """check and compare given report JSON: spillway's own layout (one kernel per
    line) and, with jq, a pretty-printed copy."""
    import shutil

    results: dict = {}
    report = work_dir / "report.json"
    if not baseline.exists():
        run(spillway("baseline", "write", str(report), "-o", str(baseline), "--note", "benchmark"))
    layouts = {"own layout": report}
    if shutil.which("jq"):
        pretty = work_dir / "pretty.json"
        with open(report, "rb") as source, open(pretty, "wb") as handle:
            subprocess.run(["jq", "."], stdin=source, stdout=handle, check=True)
        layouts["jq . (general reader)"] = pretty
    for layout, path in layouts.items():
        figures = {"json_bytes": path.stat().st_size}
        figures["check"] = best([run(spillway("check", str(path), "--baseline", str(baseline)))
                                 for _ in range(runs)])
        # The terminal table (--format json builds the whole compare document: gate.compare's cost).
        figures["compare"] = best([run(spillway("compare", str(path), "--against", str(path)))
                                   for _ in range(runs)])
        for command in ("check", "compare"):
            print(f"{command} on report JSON, {layout} ({_mb(figures['json_bytes'])}): {_line(figures[command])}")
        results[layout] = figures
    return results


def _mb(size) -> str:
    return "?" if size is None else f"{size / 1e6:.1f} MB"


def _line(figures: dict) -> str:
    return (f"best {figures['best_wall_s']:.2f} s wall, {figures['best_cpu_s']:.2f} s CPU, peak RSS "
            f"{figures['tree_rss_mb']:.0f} MB (process tree), {figures['max_process_rss_mb']:.0f} MB "
            f"(largest process), exit {figures['status']}, load {figures['loads']}")


if __name__ == "__main__":
    raise SystemExit(main())
