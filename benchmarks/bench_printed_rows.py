#!/usr/bin/env python3
"""Time what the default ``report`` table adds for the machine code of the
rows it prints (issue 23: within 0.5 s of the report without it, on
librocsparse1 7.2.4): the library read once as ``report`` does, then the
printed rows' code objects read again and their kernels decoded
(report.kernel_code.printed_rows_evidence, the reading the report command
hands the table's model), REPEAT times; prints each run's wall and
CPU seconds and the best.

    PYTHONPATH=checker python3 benchmarks/bench_printed_rows.py LIBRARY [--limit 50] [--repeat 3]

The first run pays for importing numpy and loading the opcode tables, as a
``spillway report`` run does; later runs show the rest.  Run it on a quiet
host: on 2 shared cores the figures double.
"""

from __future__ import annotations

import argparse
import sys
import time

from spillway.cli.report import SORT_KEYS, select
from spillway.report.kernel_code import printed_rows_evidence
from spillway.report.reader import ReadOptions, read_report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    options = ReadOptions(require_kernels=True)
    started = time.perf_counter()
    document = read_report([args.library], options, compact=True)
    rows = sorted(select(document["kernels"], None, False), key=SORT_KEYS["scratch"])[:args.limit]
    print(f"read: {time.perf_counter() - started:.2f} s wall, {len(rows)} rows printed")
    best = None
    for run in range(args.repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        found = printed_rows_evidence([args.library], options, rows)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        best = wall if best is None else min(best, wall)
        missing = sum(row["isa"] is None for row in found)
        print(f"run {run + 1}: {wall:.2f} s wall, {cpu:.2f} s CPU ({missing} rows without code)")
    print(f"best: {best:.2f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
