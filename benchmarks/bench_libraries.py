#!/usr/bin/env python3
"""Benchmark: `spillway report --all --json` on today's ROCm libraries (issue 9),
beside the LLVM-tools pipeline on the same input.

    python3 benchmarks/bench_libraries.py [PACKAGE_DIR ...] [--runs N] [--llvm] [--json FILE]

PACKAGE_DIR defaults to every package scripts/fetch-rocm-libraries.sh
unpacked under $SPILLWAY_FIXTURES (default /var/cache/spillway-fixtures):
experimental librocsparse1 7.2.4, experimental librocblas5 7.2.4 (the whole
package folder, Tensile .co/.hsaco files included) and sid librocsparse1
6.4.3.  Each run is a fresh process; wall time with perf_counter; memory two
ways: peak RSS from os.wait4 (the largest single process of the tree, what
/usr/bin/time -v reports and what issue 9's figures are), and the peak of
the summed PSS of the whole process tree (worker processes included, shared
pages counted once), sampled every 50 ms from /proc.  A goal counts as met
only if both are under it.  The machine is shared and noisy: compare ratios
and medians.

The LLVM-tools figure is, by default, the time stored in the committed oracle
expectation (tests/data/oracle/, measured by scripts/generate-oracle.py when
it was written, one core); --llvm reruns that pipeline here (0.5-6 minutes
per library, by the machine's load).

Goals from issue 9 (2 cores): librocsparse1 7.2.4 <= 4 s and <= 600 MB;
librocblas5 7.2.4 folder <= 8 s and <= 800 MB; librocsparse1 6.4.3 <= 4 s
and <= 600 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support import llvm_pipeline  # noqa: E402
from support.oracle_expectations import expectation_path, load  # noqa: E402
from proctree import tree_pss  # noqa: E402  (benchmarks/ is on the path: the script's own folder)

FIXTURES = Path(os.environ.get("SPILLWAY_FIXTURES", "/var/cache/spillway-fixtures"))
GOALS = {  # package name prefix and version prefix -> (seconds, bytes)
    ("librocsparse1", "7.2.4"): (4.0, 600e6),
    ("librocblas5", "7.2.4"): (8.0, 800e6),
    ("librocsparse1", "6.4.3"): (4.0, 600e6),
}


def timed(command: list[str]) -> tuple[float, int, int, int]:
    """Wall seconds, peak RSS in bytes (os.wait4: the largest single process
    of the tree, as /usr/bin/time reports it), peak summed PSS of the whole
    process tree (worker processes included, shared pages counted once;
    sampled every 50 ms) and the exit status."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tree_peak = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        tree_peak = max(tree_peak, tree_pss(process.pid))
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    process.stderr.close()
    return elapsed, usage.ru_maxrss * 1024, tree_peak, os.waitstatus_to_exitcode(status)


def json_arguments(out: Path) -> list[str]:
    """`--json FILE` (schema 1 CLI) or `--json -o FILE` (the newer one)."""
    help_text = subprocess.run([sys.executable, "-m", "spillway", "report", "--help"],
                               capture_output=True, text=True).stdout
    if "--output" in help_text or " -o " in help_text:
        return ["--json", "-o", str(out)]
    return ["--json", str(out)]


def spillway_runs(package_dir: Path, runs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="spillway-bench-") as work:
        out = Path(work) / "report.json"
        command = [sys.executable, "-m", "spillway", "report", "--all", *json_arguments(out), str(package_dir)]
        walls, rss, pss = [], [], []
        for _ in range(runs):
            wall, peak, tree, status = timed(command)
            if status != 0:
                raise SystemExit(f"bench_libraries: {' '.join(command)} exited {status}")
            walls.append(wall)
            rss.append(peak)
            pss.append(tree)
        with open(out, "rb") as handle:
            kernels = _count_kernels(handle)
        size = out.stat().st_size
    return {"wall_s": walls, "median_s": statistics.median(walls), "peak_rss_bytes": max(rss),
            "peak_tree_pss_bytes": max(pss),
            "json_bytes": size, "kernels": kernels}


def _count_kernels(handle) -> int:
    """Kernel records in a report without loading it: every record has one
    "bundle_index" key (schema 1 and 2)."""
    count, tail = 0, b""
    needle = b'"bundle_index"'
    while chunk := handle.read(1 << 24):
        data = tail + chunk
        count += data.count(needle)
        tail = data[-(len(needle) - 1):]
    return count


def llvm_figure(package_dir: Path, rerun: bool) -> dict:
    if rerun:
        with tempfile.TemporaryDirectory(prefix="spillway-bench-llvm-") as work:
            started = time.perf_counter()
            files = llvm_pipeline.read_tree(package_dir, Path(work))
            seconds = time.perf_counter() - started
        return {"seconds": seconds, "kernels": sum(f.kernels for f in files), "source": "measured now"}
    package = package_dir.name.split("_", 1)[0]
    sha = (package_dir / ".sha256").read_text().strip()
    path = expectation_path(REPO / "tests" / "data" / "oracle", package, sha)
    if not path.exists():
        return {"seconds": None, "kernels": None, "source": f"{path.name} missing"}
    document = load(path)
    return {"seconds": document.get("pipeline_seconds"), "kernels": len(document["kernels"]),
            "source": path.name}


def goal_for(package_dir: Path):
    package, _, version = package_dir.name.partition("_")
    for (name, prefix), goal in GOALS.items():
        if package == name and version.startswith(prefix):
            return goal
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--llvm", action="store_true", help="rerun the LLVM-tools pipeline (slow)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    packages = args.packages or sorted(p for p in FIXTURES.glob("*_*") if (p / ".sha256").is_file())
    if not packages:
        print(f"bench_libraries: nothing under {FIXTURES}; run scripts/fetch-rocm-libraries.sh", file=sys.stderr)
        return 2
    results = {}
    for package_dir in packages:
        ours = spillway_runs(package_dir, args.runs)
        llvm = llvm_figure(package_dir, args.llvm)
        goal = goal_for(package_dir)
        results[package_dir.name] = {"spillway": ours, "llvm_tools": llvm,
                                     "goal": {"seconds": goal[0], "bytes": goal[1]} if goal else None}
        line = (f"{package_dir.name}: spillway median {ours['median_s']:.2f} s "
                f"(runs {', '.join(f'{w:.2f}' for w in ours['wall_s'])}), peak RSS "
                f"{ours['peak_rss_bytes'] / 1e6:.0f} MB (whole process tree, PSS: "
                f"{ours['peak_tree_pss_bytes'] / 1e6:.0f} MB), {ours['kernels']} kernel records, "
                f"JSON {ours['json_bytes'] / 1e6:.0f} MB")
        if llvm["seconds"]:
            line += (f"; LLVM tools {llvm['seconds']:.0f} s ({llvm['source']}), {llvm['kernels']} records, "
                     f"ratio {llvm['seconds'] / ours['median_s']:.0f}x")
        if goal:
            met = ours["median_s"] <= goal[0] and max(ours["peak_rss_bytes"], ours["peak_tree_pss_bytes"]) <= goal[1]
            line += f"; goal <= {goal[0]:.0f} s, <= {goal[1] / 1e6:.0f} MB: {'met' if met else 'NOT met'}"
        print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
