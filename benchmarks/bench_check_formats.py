#!/usr/bin/env python3
"""Benchmark: a failing ``check`` in every format costs about what its table
does (issue 37, item 5: librocsparse1 6.4.3 against a default baseline of
7.2.4, 627 failures: table 9.7 / 7.95 CPU-s, JSON 13.2 / 12.7, SARIF 16.6 /
10.7, up to 977 MB, as json and sarif read the binaries four times).

    python3 benchmarks/bench_check_formats.py BUILD --baseline-of OTHER [--checkout DIR ...] [--runs N]
        [--formats table,json,...] [--source-root DIR]

writes a default baseline of OTHER (untimed), then times ``check BUILD
--baseline B --format F -o FILE`` for every format check has (table, json,
markdown, junit, github, tsv, sarif, html; ``--formats`` to choose; fresh
processes; CPU-s of the process and its workers, wall, peak RSS of the
process tree, as bench_scale.py measures them), each checkout in turn, round
after round (``--runs``), the least CPU-s of each kept.  ``--source-root``:
check's (a failure points at its source line when the file the line table
names is under it; default the current directory).  The goal, for the last
checkout: every format at most 1.2x the table's CPU-s and every run under
800 MB (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_scale import _use_bytecode, run   # (benchmarks/ is on the path: the script's own folder)

FORMATS = ("table", "json", "markdown", "junit", "github", "tsv", "sarif", "html")   # check's
RATIO, RSS_MB = 1.2, 800


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--baseline-of", required=True, help="the build whose default baseline BUILD is held to")
    parser.add_argument("--checkout", action="append", default=[])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated (default: all of check's)")
    parser.add_argument("--source-root", help="check's --source-root (default: the current directory)")
    args = parser.parse_args()
    formats = [f for f in args.formats.split(",") if f]
    if "table" not in formats or not set(formats) <= set(FORMATS):
        parser.error(f"--formats: some of {','.join(FORMATS)}, table among them (the ratios are to it)")
    root = ["--source-root", args.source_root] if args.source_root else []
    checkouts = [str(Path(c).resolve()) for c in args.checkout] or [""]
    base_path = os.environ.get("PYTHONPATH", "")
    best: dict[str, dict[str, dict]] = {c: {} for c in checkouts}
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        _use_bytecode(folder / "pycache")
        baseline = folder / "base.json"
        subprocess.run([sys.executable, "-m", "spillway", "baseline", "write", args.baseline_of, "-o", str(baseline),
                        "--note", "benchmark"], check=True, stdout=subprocess.DEVNULL)
        for _round in range(args.runs):
            for fmt in formats:
                for checkout in checkouts:
                    if checkout:
                        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (f"{checkout}/checker", base_path) if p)
                    out = folder / f"check.{fmt}"
                    out.unlink(missing_ok=True)
                    found = run([sys.executable, "-m", "spillway", "check", args.build, "--baseline", str(baseline),
                                 "--format", fmt, "-o", str(out), *root])
                    os.environ["PYTHONPATH"] = base_path
                    print(f"{checkout or 'spillway'}: check --format {fmt}: {found['cpu_s']:.1f} CPU-s, "
                          f"{found['wall_s']:.1f} s wall, {found['tree_rss_mb']:.0f} MB (tree), exit "
                          f"{found['status']}, load {found['load']}", flush=True)
                    kept = best[checkout].get(fmt)
                    if kept is None or found["cpu_s"] < kept["cpu_s"]:
                        best[checkout][fmt] = found
    missed = []
    for checkout in checkouts:
        table = best[checkout]["table"]["cpu_s"]
        ratios = {fmt: best[checkout][fmt]["cpu_s"] / table for fmt in formats}
        rss = max(found["tree_rss_mb"] for found in best[checkout].values())
        print(f"{checkout or 'spillway'}: CPU-s over the table's: " + ", ".join(f"{f} {r:.2f}" for f, r in
                                                                                ratios.items())
              + f"; peak RSS {rss:.0f} MB")
        if checkout == checkouts[-1]:
            missed += [f"{fmt} costs {ratio:.2f}x the table's CPU" for fmt, ratio in ratios.items() if ratio > RATIO]
            missed += [f"{rss:.0f} MB"] if rss > RSS_MB else []
            missed += [f"{fmt} exited {found['status']}" for fmt, found in best[checkout].items()
                       if found["status"] != 1]
    for line in missed:
        print(f"goal missed: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
