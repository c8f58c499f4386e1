#!/usr/bin/env python3
"""Benchmark: ``spillway code CO '*' --all`` costs per code object, not per
kernel (issue 37, item 3).  The code object is taken from a library: the one
of ``--target`` (default gfx908) with the most kernels (librocsparse1 6.4.3:
bundle 54, 2,016 kernels, compressed DWARF line tables), written to a
temporary file by spillway's own container readers.

    python3 benchmarks/bench_code.py LIB [--target gfx908] [--checkout DIR ...] [--timeout S] [--runs N]

Each command is a fresh process (CPU-s of the process and its workers, wall,
peak RSS of the process tree, as bench_scale.py measures them), JSON written
to a file.  ``--checkout DIR`` (repeatable) puts ``DIR/checker`` first on
PYTHONPATH: old against new, in turn.  ``--timeout``: a run still going after
S seconds is stopped and recorded as such (the per-kernel code took more than
13 CPU-minutes).  The goal: under a minute (CPU-s) for the last checkout;
exit 1 when missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_scale import _use_bytecode, run   # (benchmarks/ is on the path: the script's own folder)

GOAL_CPU_S = 60.0


def largest_code_object(library: str, target: str, out: Path) -> tuple[int, int]:
    """Write the code object of ``target`` with the most kernels to ``out``: (kernels, bytes)."""
    from spillway.formats import codeobject
    from spillway.formats.containers import PendingImages, ScanResult, expand, scan_path

    best: tuple[int, bytes] = (0, b"")
    for unit in scan_path(library).images:
        for image in (expand(unit, ScanResult()) if isinstance(unit, PendingImages) else (unit,)):
            code = codeobject.parse(image.payload)
            if code.target_id.split(":")[0] == target and len(code.kernels) > best[0]:
                best = (len(code.kernels), bytes(image.payload))
    if not best[0]:
        raise SystemExit(f"no {target} code object in {library}")
    out.write_bytes(best[1])
    return best[0], len(best[1])


def timed(command: list[str], timeout: float) -> dict:
    """bench_scale.run, stopped after ``timeout`` seconds (recorded as timed_out)."""
    if not timeout:
        return run(command)
    started = time.perf_counter()
    with subprocess.Popen(["timeout", "--signal=KILL", str(timeout), *command], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE) as process:
        _, status, usage = os.wait4(process.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return {"wall_s": round(time.perf_counter() - started, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "max_process_rss_mb": round(usage.ru_maxrss / 1024, 1), "tree_rss_mb": None, "status": code,
            "timed_out": code in (124, 137, -9), "load": round(os.getloadavg()[0], 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library")
    parser.add_argument("--target", default="gfx908")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=0, help="stop a run after this many seconds (0: never)")
    parser.add_argument("--checkout", action="append", default=[])
    args = parser.parse_args()
    checkouts = [str(Path(c).resolve()) for c in args.checkout] or [""]
    base_path = os.environ.get("PYTHONPATH", "")
    last: list[dict] = []
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        _use_bytecode(folder / "pycache")
        code_object = folder / f"{args.target}.co"
        kernels, size = largest_code_object(args.library, args.target, code_object)
        print(f"{code_object.name}: {kernels} kernels, {size / 1e6:.1f} MB", flush=True)
        for _round in range(args.runs):
            for checkout in checkouts:
                if checkout:
                    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (f"{checkout}/checker", base_path) if p)
                out = folder / "code.json"
                out.unlink(missing_ok=True)
                command = [sys.executable, "-m", "spillway", "code", str(code_object), "*", "--all", "--format",
                           "json", "-o", str(out)]
                found = timed(command, args.timeout) if args.timeout else run(command)
                os.environ["PYTHONPATH"] = base_path
                print(f"{checkout or 'spillway'}: code CO '*' --all: {found['cpu_s']:.1f} CPU-s, "
                      f"{found['wall_s']:.1f} s wall, RSS {found.get('tree_rss_mb') or found['max_process_rss_mb']} "
                      f"MB, exit {found['status']}" + (" (stopped: timeout)" if found.get("timed_out") else "")
                      + f", load {found['load']}", flush=True)
                if checkout == checkouts[-1]:
                    last.append(found)
    best = min(r["cpu_s"] for r in last)
    if best > GOAL_CPU_S or any(r["status"] for r in last):
        print(f"goal missed: {best:.1f} CPU-s (goal: under {GOAL_CPU_S:.0f})")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
