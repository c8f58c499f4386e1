#!/usr/bin/env python3
"""Write the ISA-evidence oracle's rows for a sample of an unpacked Debian
ROCm package (tests/support/isa_libraries.py says which code objects and
what a row holds) to tests/data/isa/libraries/<package>-<sha256[:16]>.json.gz.

    python3 scripts/generate-isa-library-oracle.py [--jobs N] PACKAGE_ROOT...

PACKAGE_ROOT: a folder scripts/fetch-rocm-libraries.sh unpacked under
/var/cache/spillway-fixtures (it holds the .deb's SHA-256 in .sha256), e.g.
/var/cache/spillway-fixtures/librocsparse1_7.2.4-1~exp1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support import isa_libraries  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("roots", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for root in args.roots:
        sha_file = root / ".sha256"
        if not sha_file.is_file():
            print(f"{root}: no .sha256 (not unpacked by scripts/fetch-rocm-libraries.sh)", file=sys.stderr)
            return 2
        sha256 = sha_file.read_text().strip()
        package = root.name.split("_", 1)[0]
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as work:
            sampled = isa_libraries.sample(root, Path(work))
            with ThreadPoolExecutor(args.jobs) as pool:
                results = list(pool.map(isa_libraries.rows_of, sampled))
        rows: list[list] = []
        seconds: dict[str, float] = {}
        for one, (found, cpu) in zip(sampled, results):
            rows.extend(found)
            seconds[one.file] = seconds.get(one.file, 0.0) + cpu
        out = isa_libraries.expectation_path(package, sha256)
        isa_libraries.write(out, isa_libraries.encode(package, sha256, rows, seconds,
                                                      isa_libraries.tensile_files_in(sampled)))
        print(f"{out.relative_to(REPO)}: {len(sampled)} code objects, {len(rows)} functions, "
              f"{time.perf_counter() - started:.0f} s wall, LLVM tools {sum(seconds.values()):.0f} CPU-s, "
              f"{out.stat().st_size} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
