"""Every output byte-identical (issue 24), on the large inputs: librocsparse1
7.2.4 against 6.4.3 (unpacked by scripts/fetch-rocm-libraries.sh) and the
matrix's builds (build/<cell>/libengine.so, made by scripts/main-job.sh),
against tests/data/golden/rocm.json and matrix.json (scripts/record-golden.py
rocm, matrix).  Skipped where the inputs are not here, failed under CI."""

from __future__ import annotations

import shutil

import pytest

from support import golden
from support.rocm_packages import locate, missing

pytestmark = pytest.mark.oracle


def test_rocm_library_outputs_are_the_recorded_bytes(tmp_path):
    new, old = locate("librocsparse1-7.2.4"), locate("librocsparse1-6.4.3")
    scenario = golden.rocm_scenario(new.host_library(), old.host_library())
    golden.assert_same_outputs(golden.load_records("rocm")[scenario.name], golden.run_scenario(scenario, tmp_path))


def test_matrix_outputs_are_the_recorded_bytes():
    cells = golden.built_cells(golden.REPO / "build")
    recorded = golden.load_records("matrix")["matrix"]
    wanted = recorded["check"]["argv"][7:]      # matrix check --no-build --build-dir .. --root . CELL...
    if cells != wanted:
        missing(f"the matrix outputs were recorded with cells {' '.join(wanted)} built; build/ holds "
                f"{' '.join(cells) or 'none'} (run scripts/main-job.sh)")
    work = golden.REPO / golden.MATRIX_WORK
    shutil.rmtree(work, ignore_errors=True)
    golden.assert_same_outputs(recorded, golden.run_scenario(golden.matrix_scenario(cells), work))
