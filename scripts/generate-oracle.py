#!/usr/bin/env python3
"""Write the committed oracle expectations for ROCm libraries built by others.

Runs the LLVM-tools pipeline (tests/support/llvm_pipeline.py: bundles cut from
their own headers, clang-offload-bundler-22, llvm-readelf-22 --notes, every
metadata document; never spillway's walker) once over a package unpacked by
scripts/fetch-rocm-libraries.sh and writes

    tests/data/oracle/<package>-<first 16 hex digits of the .deb's SHA-256>.json.gz

a compact gzip JSON document (our own derived data, no third-party bytes):
every kernel record as a row of the report's field values, strings through
one table.  tests/oracle/ compares spillway's report against it and reruns the
pipeline on a sample.  52 s on one core for librocsparse1 7.2.4 on a quiet host (373 s
on a busy one); run it niced:

    nice -n 10 scripts/generate-oracle.py /var/cache/spillway-fixtures/librocsparse1_7.2.4-1~exp1
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support import llvm_pipeline  # noqa: E402
from support.oracle_expectations import encode, expectation_path  # noqa: E402


def tool_versions() -> dict[str, str]:
    out = {}
    for name in ("clang-offload-bundler", "llvm-readelf"):
        text = subprocess.run([llvm_pipeline.tool(name), "--version"], capture_output=True, text=True).stdout
        out[name] = " ".join(line.strip() for line in text.splitlines() if "version" in line.lower())[:200]
    return out


def generate(package_dir: Path, out_dir: Path, jobs: int) -> Path:
    sha256 = (package_dir / ".sha256").read_text().strip()
    suite = (package_dir / ".suite").read_text().strip() if (package_dir / ".suite").exists() else ""
    package, version = package_dir.name.split("_", 1)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="spillway-oracle-") as work:
        files = llvm_pipeline.read_tree(package_dir, Path(work), jobs=jobs)
    seconds = time.monotonic() - started
    document = encode(files, package=package, version=version, suite=suite, sha256=sha256,
                      tools=tool_versions(), pipeline_seconds=round(seconds, 1))
    target = expectation_path(out_dir, package, sha256)
    out_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=target.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0,
                                                         filename="") as handle:
            handle.write(json.dumps(document, separators=(",", ":")).encode())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise
    kernels = sum(f.kernels for f in files)
    print(f"{package} {version}: {len(files)} files, {sum(f.bundles for f in files)} bundles, "
          f"{sum(f.code_objects for f in files)} code objects, {kernels} kernel records "
          f"in {seconds:.0f} s -> {target} ({target.stat().st_size} bytes)", flush=True)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="+", type=Path, help="folders unpacked by fetch-rocm-libraries.sh")
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "oracle")
    parser.add_argument("--jobs", type=int, default=1, help="bundles unbundled at once (default 1)")
    args = parser.parse_args()
    for package_dir in args.packages:
        if not (package_dir / ".sha256").is_file():
            print(f"generate-oracle: {package_dir}: no .sha256 (not unpacked by fetch-rocm-libraries.sh)",
                  file=sys.stderr)
            return 2
    for package_dir in args.packages:
        generate(package_dir, args.out, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
