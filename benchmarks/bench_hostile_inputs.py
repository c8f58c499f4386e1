#!/usr/bin/env python3
"""Benchmark: what small hostile inputs cost (issue 30) -- time, CPU and peak
RSS of the whole process tree, per command, on inputs built here with
tests/support/synthetic_elf.py (nothing downloaded, no compiler):

    python3 benchmarks/bench_hostile_inputs.py [--only kpack,kernels] [--kernels N]
        [--per-object N] [--runs N] [--json FILE]

- ``kpack``: a 3 KB host object whose .rocm_kpack_ref marker holds 48 search
  paths made of ``@GFXARCH@`` components, absolute and climbing out with
  ``..`` (``/@GFXARCH@/@GFXARCH@/...``): spillway used to glob each one over
  the file system (37-42 s in the issue).  Timed: ``report`` on it.
- ``kernels``: a wheel holding ``--kernels`` tiny kernels (default 1,000,000),
  ``--per-object`` per code object (default 100,000), the code objects
  deflated (a few MB).  Timed: ``report`` (the default table), ``report
  --all --json -o FILE``, ``baseline write``, ``check`` against that
  baseline.

Each command is a fresh process (run: wall, CPU of the tree, the largest
process's ru_maxrss, and the tree's summed RSS and PSS sampled every 20 ms).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from bench_scale import spillway, _use_bytecode   # noqa: E402  (benchmarks/ is on the path)
from proctree import tree, pss, rss  # noqa: E402
from support import synthetic_elf  # noqa: E402


def run(command: list[str]) -> dict:
    """One process: wall, CPU of the tree, the largest process's ru_maxrss,
    and the tree's peak summed RSS and PSS (sampled every 20 ms; RSS counts
    pages the forked workers share with the parent in each of them, PSS
    shares them out)."""
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = {"rss": 0, "pss": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            pids = tree(process.pid)
            peak["rss"] = max(peak["rss"], sum(rss(p) for p in pids))
            peak["pss"] = max(peak["pss"], sum(pss(p) for p in pids))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = process.stderr.read() if process.stderr else b""
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    return {"wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "max_process_rss_mb": round(usage.ru_maxrss / 1024, 1), "tree_rss_mb": round(peak["rss"] / 1e6, 1),
            "tree_pss_mb": round(peak["pss"] / 1e6, 1), "status": os.waitstatus_to_exitcode(status),
            "load": round(load_before, 1), "stderr_tail": stderr.decode("utf-8", "replace")[-300:]}

GLOB_PATHS = 48


def kpack_marker_paths() -> list[str]:
    """48 search paths: 1 to 6 @GFXARCH@ levels under /, under ../ x 12,
    under ~, with and without a .kpack suffix."""
    paths = []
    for depth in range(1, 7):
        levels = "/".join(["@GFXARCH@"] * depth)
        for root in ("/", "../" * 12, "~/", "/usr/"):
            for suffix in ("", ".kpack"):
                paths.append(root + levels + suffix)
    return paths[:GLOB_PATHS]


def write_kpack_case(work: Path, folder: str, paths: list[str]) -> Path:
    path = work / folder / "lib" / "libhostile.so"
    path.parent.mkdir(parents=True)
    path.write_bytes(synthetic_elf.kpack_host("lib/libhostile.so", paths))
    return path


def write_kernels_wheel(work: Path, kernels: int, per_object: int) -> Path:
    """The wheel, written by a forked process: building a million kernels'
    metadata takes this process to gigabytes, and a child forked later
    inherits that peak as its ru_maxrss."""
    wheel = work / "many_kernels-1.0-py3-none-linux_x86_64.whl"
    writer = multiprocessing.get_context("fork").Process(target=_write_wheel, args=(wheel, kernels, per_object))
    writer.start()
    writer.join()
    if writer.exitcode != 0:
        raise SystemExit(f"writing {wheel} failed")
    return wheel


def _write_wheel(wheel: Path, kernels: int, per_object: int) -> None:
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for number, start in enumerate(range(0, kernels, per_object)):
            count = min(per_object, kernels - start)
            names = synthetic_elf.many_kernels(count, prefix=f"o{number:04d}_k")
            archive.writestr(f"many_kernels/lib/kernels_{number:04d}.co", synthetic_elf.code_object(names))


def _line(figures: dict) -> str:
    return (f"{figures['wall_s']:.2f} s wall, {figures['cpu_s']:.2f} CPU-s, tree {figures['tree_rss_mb']:.0f} MB RSS "
            f"{figures['tree_pss_mb']:.0f} MB PSS (largest process {figures['max_process_rss_mb']:.0f} MB), "
            f"exit {figures['status']}, "
            f"load {figures['load']}")


def timed(name: str, command: list[str], runs: int, results: dict) -> None:
    best = None
    for _ in range(runs):
        figures = run(command)
        if best is None or figures["wall_s"] < best["wall_s"]:
            best = figures
    assert best is not None
    results[name] = best
    print(f"{name}: {_line(best)}")
    if best["status"] not in (0, 1):
        print(f"    {best['stderr_tail'].strip()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="kpack,kernels")
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--per-object", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--extra", default="", help="more spillway options for every command (shell words)")
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    extra = args.extra.split()
    results: dict = {}
    with tempfile.TemporaryDirectory() as work:
        work_dir = Path(work)
        _use_bytecode(work_dir / "pycache")
        if "kpack" in wanted:
            host = write_kpack_case(work_dir, "globs", kpack_marker_paths())
            print(f"kpack marker: {host.stat().st_size} bytes, {GLOB_PATHS} search paths")
            timed("kpack_report", spillway("report", str(host), *extra), args.runs, results)
            results["kpack_bytes"] = host.stat().st_size
            followed = write_kpack_case(work_dir, "followed", [f"{'../' * 16}.kpack/x{n}_@GFXARCH@.kpack"
                                                               for n in range(16)])
            timed("kpack_report_followed", spillway("report", str(followed), *extra), args.runs, results)
        if "kernels" in wanted:
            wheel = write_kernels_wheel(work_dir, args.kernels, args.per_object)
            print(f"wheel: {wheel.stat().st_size / 1e6:.1f} MB, {args.kernels} kernels, "
                  f"{args.per_object} per code object")
            results["wheel_bytes"] = wheel.stat().st_size
            timed("report", spillway("report", str(wheel), *extra), args.runs, results)
            out = work_dir / "report.json"
            timed("report_all_json", spillway("report", "--all", "--json", "-o", str(out), str(wheel), *extra),
                  args.runs, results)
            baseline = work_dir / "baseline.json"
            timed("baseline_write", spillway("baseline", "write", str(wheel), "-o", str(baseline), "--note", "bench",
                                             "--record-all", *extra), args.runs, results)
            timed("check", spillway("check", str(wheel), "--baseline", str(baseline), *extra), args.runs, results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
