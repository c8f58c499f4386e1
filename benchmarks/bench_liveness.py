#!/usr/bin/env python3
"""Benchmark: live registers (issue 40 item 5) -- ``spillway code`` of one
kernel of a large library, and the liveness alone over many kernels.

    python3 benchmarks/bench_liveness.py LIB --kernel NAME [--target T] [--runs N]
        [--many PATTERN] [--report] [--json FILE]

- ``code``: ``spillway code LIB NAME --target T`` as a user runs it (a fresh
  process: the library read, the kernel's code object read again, its
  liveness and what holds its peaks); the issue's goal is under 2 s on
  librocsparse1 7.2.4.
- ``many`` (with --many): ``spillway code LIB PATTERN --target T --all
  --json -o FILE``: every matching kernel's liveness, with the CPU-s per
  instruction the report prints (the cost a per-kernel ``report --isa``
  would pay; the issue's goal is +50% of ``--isa``).
- ``report`` (with --report): ``spillway report LIB --all --target T --json``
  with ``--isa`` and with ``--pressure``, in turn, each run: what the peaks
  of every kernel of the target cost over the machine code's evidence (the
  ratio of the CPU-s medians).

Figures per run as bench_scale.py measures them (wall, CPU-s of the process
tree, peak RSS), best of N, with the load average.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench_scale import _use_bytecode, best, run   # (benchmarks/ is on the path: the script's own folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library")
    parser.add_argument("--kernel", required=True, help="the kernel spillway code shows (an exact name)")
    parser.add_argument("--target", default="gfx90a")
    parser.add_argument("--many", help="a filter for the many-kernel run (e.g. '*')")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--report", action="store_true", help="time report --isa against report --pressure")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    library = str(Path(args.library).resolve())
    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        _use_bytecode(folder / "pycache")
        spillway = [sys.executable, "-m", "spillway"]
        runs = [run([*spillway, "code", library, args.kernel, "--target", args.target]) for _ in range(args.runs)]
        figures["code"] = best(runs)
        print(f"code of one kernel: {figures['code']}")
        if args.many:
            out = folder / "code.json"
            found = run([*spillway, "code", library, args.many, "--target", args.target, "--all", "--json", "-o",
                         str(out)])
            if out.exists():
                kernels = json.loads(out.read_text())["kernels"]
                instructions = sum(k["pressure"]["instructions"] for k in kernels if k["pressure"])
                found["kernels"] = len(kernels)
                found["instructions"] = instructions
                found["cpu_us_per_instruction"] = round(found["cpu_s"] / max(instructions, 1) * 1e6, 1)
            figures["many"] = found
            print(f"many kernels: {found}")
        if args.report:
            figures["report"] = report_turns(spillway, library, args.target, args.runs, folder)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


def report_turns(spillway: list[str], library: str, target: str, runs: int, folder: Path) -> dict:
    """report --isa and report --pressure of every kernel of ``target``, in turn."""
    import statistics

    timed: dict[str, list[dict]] = {"isa": [], "pressure": []}
    for _ in range(runs):
        for flag in timed:
            out = folder / f"{flag}.json"
            timed[flag].append(run([*spillway, "report", library, "--all", f"--{flag}", "--target", target, "--json",
                                    "-o", str(out), "--force"]))
            out.unlink(missing_ok=True)
    found = {flag: best(found) for flag, found in timed.items()}
    medians = {flag: statistics.median(r["cpu_s"] for r in found_runs) for flag, found_runs in timed.items()}
    found["cpu_s_medians"] = medians
    found["ratio"] = round(medians["pressure"] / medians["isa"], 2)
    print(f"report --isa / --pressure of {target}: {found}")
    return found


if __name__ == "__main__":
    sys.exit(main())
