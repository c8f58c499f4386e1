#!/usr/bin/env python3
"""Count the places spillway gives source lines in a library (issue 41):
every kernel's scratch accesses, AGPR copies, loop heads and back branches
(report.library_lines, the model ``spillway code`` and ``check`` use), how
many take an inferred line and how many have none.

    PYTHONPATH=checker scripts/count-source-lines.py LIBRARY... [--json]

librocsparse1 7.2.4 takes about 4 CPU-minutes, 6.4.3 about 4-6.  Run it with
another checkout's PYTHONPATH to compare two versions of the rule.
"""

from __future__ import annotations

import argparse
import collections
import json
import time

from spillway.isa.source_lines import PLACED
from spillway.report.library_lines import library_lines


def count(path: str) -> dict[str, int]:
    counts: collections.Counter[str] = collections.Counter()
    for kernel in library_lines([path]):
        lines = kernel.lines
        counts["kernels"] += 1
        if lines.status != PLACED:
            counts["kernels without lines"] += 1
            continue
        for kind, sources in (("scratch access", [p.source for p in lines.scratch]),
                              ("AGPR copy", [p.source for p in lines.agpr_copies]),
                              ("loop head", [loop.head for loop in lines.loops]),
                              ("back branch", [loop.back_branch for loop in lines.loops])):
            for source in sources:
                counts["placements"] += 1
                counts[kind] += 1
                if source is None:
                    counts["no line"] += 1
                    counts[f"{kind}: no line"] += 1
                elif source.inferred:
                    counts["inferred"] += 1
    return dict(sorted(counts.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for path in args.paths:
        started = time.process_time()
        found = count(path)
        if args.json:
            print(json.dumps({"path": path, **found}))
        else:
            print(f"{path} ({time.process_time() - started:.0f} CPU-s):")
            for name, value in found.items():
                print(f"  {name}: {value:,}")


if __name__ == "__main__":
    main()
