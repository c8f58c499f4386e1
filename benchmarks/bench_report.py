#!/usr/bin/env python3
"""Benchmark: a full JSON report of a large ROCm library, against the
pipeline of LLVM tools a user would otherwise run.

    python3 benchmarks/bench_report.py [LIBRARY] [--runs N] [--skip-llvm]

Defaults to Debian's librocsparse0 (1.2 GB, 111 bundles, 88,137 kernels).
Also times the two pipelines of LLVM tools a user would otherwise run.
Targets (2-core machine): spillway <= 3 s wall, peak RSS well below the file
size.  Each run is a fresh process, timed with os.wait4 for its own RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1"
# clang-offload-bundler-22 refuses librocsparse's gfx906:xnack- entries
# ("invalid bundle id read from the bundle"); the clang-19 one reads them all.
BUNDLER = "clang-offload-bundler-19"


def timed(command: list[str], **kwargs) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in bytes and exit status of one process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, **kwargs)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    return elapsed, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)


def llvm_pipeline(library: Path, work: Path) -> float:
    """llvm-objdump --offloading extracts every bundle entry, then
    llvm-readelf --notes prints each code object's metadata."""
    started = time.perf_counter()
    link = work / library.name
    link.symlink_to(library)
    subprocess.run(["llvm-objdump-22", "--offloading", str(link)], cwd=work, check=True,
                   stdout=subprocess.DEVNULL)
    objects = [p for p in work.iterdir() if p.name.startswith(library.name + ".") and "amdgcn" in p.name]
    for start in range(0, len(objects), 64):
        subprocess.run(["llvm-readelf-22", "--notes", *map(str, objects[start:start + 64])], check=True,
                       stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def bundler_pipeline(library: Path, work: Path) -> float:
    """The original in-house way: llvm-objcopy dumps .hip_fatbin, each
    bundle (one per translation unit) goes through clang-offload-bundler
    --list and --unbundle per target, then llvm-readelf --notes reads every
    code object.  Only cutting the section into bundles uses spillway (the
    bundle boundaries, which the original script found the same way)."""
    from spillway.formats.bundles import walk_lazy
    started = time.perf_counter()
    fatbin = work / "fatbin.bin"
    subprocess.run(["llvm-objcopy-22", f"--dump-section=.hip_fatbin={fatbin}", str(library), str(work / "discard")],
                   check=True, stdout=subprocess.DEVNULL)
    (work / "discard").unlink()
    data = fatbin.read_bytes()
    objects = []
    for bundle in walk_lazy(memoryview(data)):
        path = work / f"bundle{bundle.index}.bin"
        path.write_bytes(data[bundle.offset:bundle.offset + bundle.size])
        listed = subprocess.run([BUNDLER, "--list", "--type=o", f"--input={path}"],
                                check=True, capture_output=True, text=True).stdout.split()
        for number, entry_id in enumerate(e for e in listed if not e.startswith("host-")):
            output = work / f"bundle{bundle.index}.{number}.co"
            subprocess.run([BUNDLER, "--unbundle", "--type=o", f"--input={path}",
                            f"--output={output}", f"--targets={entry_id}"], check=True)
            objects.append(output)
        path.unlink()
    for start in range(0, len(objects), 64):
        subprocess.run(["llvm-readelf-22", "--notes", *map(str, objects[start:start + 64])], check=True,
                       stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library", nargs="?", default=DEFAULT)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-llvm", action="store_true", help="do not time the LLVM tool pipeline")
    args = parser.parse_args()
    library = Path(args.library).resolve()
    if not library.exists():
        print(f"{library} not found (apt-get install librocsparse0)", file=sys.stderr)
        return 2
    size = library.stat().st_size
    results = {"library": str(library), "size_bytes": size, "cores": os.cpu_count(), "runs": []}
    with tempfile.TemporaryDirectory() as temporary:
        output = Path(temporary) / "report.json"
        for _ in range(args.runs):
            elapsed, rss, status = timed([sys.executable, "-m", "spillway", "report", "--json", "-o", str(output),
                                          str(library)])
            if status != 0:
                print(f"spillway exited {status}", file=sys.stderr)
                return 1
            results["runs"].append({"seconds": round(elapsed, 3), "peak_rss_bytes": rss})
        document = json.loads(output.read_text())
        results["kernels"] = len(document["kernels"])
        results["bundles"] = sum(f["bundles"] for f in document["files"])
        results["json_bytes"] = output.stat().st_size
    best = min(r["seconds"] for r in results["runs"])
    median = statistics.median(r["seconds"] for r in results["runs"])
    peak = max(r["peak_rss_bytes"] for r in results["runs"])
    print(f"{library.name}: {size / 1e9:.2f} GB, {results['bundles']} bundles, {results['kernels']} kernels")
    print(f"spillway report --json: best {best:.2f} s, median {median:.2f} s over {args.runs} runs; "
          f"peak RSS {peak / 1e6:.0f} MB ({peak / size:.0%} of the file)")
    if not args.skip_llvm and shutil.which("llvm-objdump-22") and shutil.which("llvm-readelf-22"):
        with tempfile.TemporaryDirectory() as work:
            pipeline = llvm_pipeline(library, Path(work))
        results["llvm_pipeline_seconds"] = round(pipeline, 2)
        print(f"llvm-objdump --offloading + llvm-readelf --notes: {pipeline:.1f} s "
              f"({pipeline / best:.1f}x spillway's best)")
    if not args.skip_llvm and all(shutil.which(t) for t in ("llvm-objcopy-22", BUNDLER,
                                                              "llvm-readelf-22")):
        with tempfile.TemporaryDirectory() as work:
            pipeline = bundler_pipeline(library, Path(work))
        results["bundler_pipeline_seconds"] = round(pipeline, 2)
        print(f"llvm-objcopy + clang-offload-bundler + llvm-readelf --notes: {pipeline:.1f} s "
              f"({pipeline / best:.1f}x spillway's best)")
    out_dir = Path(__file__).parent / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / f"{library.name}.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
