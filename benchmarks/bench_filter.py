#!/usr/bin/env python3
"""Benchmark: a FILTER and --target choose the kernels before any machine code
is decoded (issue 37, item 2).  On a large library (librocsparse1 7.2.4):

    python3 benchmarks/bench_filter.py LIB [--filter PATTERN] [--target gfx90a] [--runs N]
        [--checkout DIR ...] [--json FILE]

times, in fresh processes (CPU-s of the process and its workers, wall, peak
RSS of the process tree, as bench_scale.py measures them):

- ``report LIB``                    the unfiltered default table (the read a filter is held to)
- ``report LIB FILTER``             a filter, no machine code
- ``report LIB FILTER --isa``       a filter, the matching kernels' code decoded
- the last two with ``--target T``

and checks the issue's goals: ``report LIB FILTER --isa`` at most 1.3x the
CPU of ``report LIB FILTER`` (with and without --target), and a filter at most
1.5x the CPU of the unfiltered read.  Exit 1 when a goal is missed.

``--checkout DIR`` (repeatable) runs each command with ``DIR/checker`` first on
PYTHONPATH (another commit's worktree: old against new, in turn: each round
runs every checkout once before the next round); without it, the spillway
that ``python3 -m spillway`` imports.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bench_scale import _use_bytecode, run   # (benchmarks/ is on the path: the script's own folder)

ISA_OVER_FILTER = 1.3
FILTER_OVER_UNFILTERED = 1.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library")
    parser.add_argument("--filter", default="*gtsv_nopivot_strided_batch*")   # 120 kernels per target of 7.2.4
    parser.add_argument("--target", default="gfx90a")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--checkout", action="append", default=[],
                        help="a worktree whose checker/ is put first on PYTHONPATH (repeat: in turn)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    library = str(Path(args.library).resolve())
    commands = {
        "unfiltered": ["report", library],
        "filter": ["report", library, args.filter],
        "filter_isa": ["report", library, args.filter, "--isa"],
        "filter_target": ["report", library, args.filter, "--target", args.target],
        "filter_target_isa": ["report", library, args.filter, "--target", args.target, "--isa"],
    }
    checkouts = [str(Path(c).resolve()) for c in args.checkout] or [""]
    import tempfile

    results: dict = {"library": library, "filter": args.filter, "target": args.target, "cores": os.cpu_count(),
                     "checkouts": {}}
    with tempfile.TemporaryDirectory() as work:
        _use_bytecode(Path(work) / "pycache")
        base_path = os.environ.get("PYTHONPATH", "")
        figures: dict[str, dict[str, list[dict]]] = {c: {name: [] for name in commands} for c in checkouts}
        for _round in range(args.runs):
            for name, arguments in commands.items():
                for checkout in checkouts:      # old and new in turn, command by command
                    if checkout:
                        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (f"{checkout}/checker", base_path) if p)
                    found = run([sys.executable, "-m", "spillway", *arguments])
                    figures[checkout][name].append(found)
                    print(f"{checkout or 'spillway'}: {' '.join(arguments[:1] + arguments[2:])}: "
                          f"{found['cpu_s']:.1f} CPU-s, {found['wall_s']:.1f} s wall, "
                          f"{found['tree_rss_mb']:.0f} MB, exit {found['status']}, load {found['load']}",
                          flush=True)
        os.environ["PYTHONPATH"] = base_path
    missed = [f"{checkout or 'spillway'}: {name} exited {r['status']}: {r['stderr_tail'].strip()}"
              for checkout in checkouts for name, runs in figures[checkout].items() for r in runs if r["status"]]
    for checkout in checkouts:
        cpu = {name: min(r["cpu_s"] for r in runs) for name, runs in figures[checkout].items()}
        ratios = {"isa_over_filter": cpu["filter_isa"] / cpu["filter"],
                  "isa_over_filter_target": cpu["filter_target_isa"] / cpu["filter_target"],
                  "filter_over_unfiltered": cpu["filter"] / cpu["unfiltered"]}
        results["checkouts"][checkout or "spillway"] = {"best_cpu_s": cpu, "ratios": ratios,
                                                        "runs": figures[checkout]}
        print(f"{checkout or 'spillway'}: best CPU-s {cpu}; ratios "
              + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
        if checkout == checkouts[-1]:
            if ratios["isa_over_filter"] > ISA_OVER_FILTER or ratios["isa_over_filter_target"] > ISA_OVER_FILTER:
                missed.append(f"--isa costs more than {ISA_OVER_FILTER}x the filtered read")
            if ratios["filter_over_unfiltered"] > FILTER_OVER_UNFILTERED:
                missed.append(f"a filter costs more than {FILTER_OVER_UNFILTERED}x the unfiltered read")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    for line in missed:
        print(f"goal missed ({checkouts[-1] or 'spillway'}): {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
