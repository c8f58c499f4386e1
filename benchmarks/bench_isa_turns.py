#!/usr/bin/env python3
"""Benchmark: ``report --all --isa --json -o FILE`` of two checkouts in turn
(issue 37, item 1: at 264a917 it cost 1.4-1.8x the CPU it did at 4221669).

    python3 benchmarks/bench_isa_turns.py LIB --old DIR --new DIR [--runs N] [--json FILE]

DIR is a worktree (``git worktree add --detach DIR 4221669``); each run puts
``DIR/checker`` first on PYTHONPATH.  The two run in turn, old then new, N
pairs (fresh processes; CPU-s of the process and its workers, wall, peak RSS
of the process tree, as bench_scale.py measures them).  The claim is a ratio
on one machine at one time: the median of the new runs' CPU-s at or below
the old's (exit 1 otherwise), with the median of the paired ratios beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench_scale import _use_bytecode, run   # (benchmarks/ is on the path: the script's own folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library")
    parser.add_argument("--old", required=True, help="worktree of the old commit")
    parser.add_argument("--new", required=True, help="worktree of the new commit")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    library = str(Path(args.library).resolve())
    sides = {"old": str(Path(args.old).resolve()), "new": str(Path(args.new).resolve())}
    base_path = os.environ.get("PYTHONPATH", "")
    figures: dict[str, list[dict]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        for side, checkout in sides.items():     # each side's bytecode, compiled once before the timed runs
            os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (f"{checkout}/checker", base_path) if p)
            _use_bytecode(folder / f"pycache-{side}")
        for _round in range(args.runs):
            for side, checkout in sides.items():
                os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (f"{checkout}/checker", base_path) if p)
                os.environ["PYTHONPYCACHEPREFIX"] = str(folder / f"pycache-{side}")
                out = folder / "report.json"
                out.unlink(missing_ok=True)
                found = run([sys.executable, "-m", "spillway", "report", "--all", "--isa", "--json", "-o", str(out),
                             library])
                found["json_bytes"] = out.stat().st_size if out.exists() else None
                figures[side].append(found)
                print(f"{side} ({checkout}): {found['cpu_s']:.1f} CPU-s, {found['wall_s']:.1f} s wall, "
                      f"{found['tree_rss_mb']:.0f} MB (tree), exit {found['status']}, load {found['load']}",
                      flush=True)
        os.environ["PYTHONPATH"] = base_path
    cpu = {side: statistics.median(r["cpu_s"] for r in runs) for side, runs in figures.items()}
    wall = {side: statistics.median(r["wall_s"] for r in runs) for side, runs in figures.items()}
    paired = statistics.median(n["cpu_s"] / o["cpu_s"] for o, n in zip(figures["old"], figures["new"]))
    print(f"median CPU-s: old {cpu['old']:.1f}, new {cpu['new']:.1f} (ratio {cpu['new'] / cpu['old']:.2f}, median "
          f"of paired ratios {paired:.2f}); median wall: old {wall['old']:.1f} s, new {wall['new']:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"library": library, "sides": sides, "runs": figures,
                                               "median_cpu_s": cpu, "median_wall_s": wall,
                                               "median_paired_ratio": paired}, indent=2) + "\n")
    failed = [side for side, runs in figures.items() if any(r["status"] for r in runs)]
    if failed or cpu["new"] > cpu["old"]:
        print("goal missed: " + (f"runs failed ({', '.join(failed)})" if failed else
                                 "new costs more CPU than old"))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
