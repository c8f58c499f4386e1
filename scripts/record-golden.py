#!/usr/bin/env python3
"""Record the golden outputs (tests/support/golden.py) into tests/data/golden/TIER.json.

    scripts/record-golden.py fast            # committed fixtures, tests/data/isa's code objects (1-2 minutes)
    scripts/record-golden.py rocm            # librocsparse1 7.2.4 against 6.4.3 (about 6 CPU-minutes)
    scripts/record-golden.py matrix          # the matrix's builds under build/ (run scripts/main-job.sh first)

Run from any folder; uses this checkout's package.  Record only from a
checkout whose outputs are the reference (issue 24: before a restructuring),
and check the diff: a changed record is a changed output.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support import golden  # noqa: E402


def scenarios(tier: str) -> list[golden.Scenario]:
    if tier == "fast":
        return [s for s in golden.SCENARIOS if s.tier == "fast"]
    if tier == "rocm":
        from support.rocm_packages import locate
        new, old = locate("librocsparse1-7.2.4"), locate("librocsparse1-6.4.3")
        return [golden.rocm_scenario(new.host_library(), old.host_library())]
    cells = golden.built_cells(REPO / "build")
    if not cells:
        sys.exit("record-golden: no cell is built under build/ (run scripts/main-job.sh)")
    return [golden.matrix_scenario(cells)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tier", choices=("fast", "rocm", "matrix"))
    args = parser.parse_args()
    records = {}
    for scenario in scenarios(args.tier):
        if args.tier == "matrix":
            work = REPO / golden.MATRIX_WORK
            shutil.rmtree(work, ignore_errors=True)
            records[scenario.name] = golden.run_scenario(scenario, work)
        else:
            with tempfile.TemporaryDirectory(prefix="spillway-golden-") as folder:
                records[scenario.name] = golden.run_scenario(scenario, Path(folder))
    golden.dump_records(args.tier, records)
    count = sum(len(steps) for steps in records.values())
    print(f"record-golden: {count} steps of {args.tier} in {golden.record_path(args.tier).relative_to(REPO)}")


if __name__ == "__main__":
    main()
