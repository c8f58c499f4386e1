"""Every output byte-identical (issues 24 and 33: HTML pages, SARIF and the
machine code too), on the large inputs: librocsparse1
7.2.4 against 6.4.3 (unpacked by scripts/fetch-rocm-libraries.sh) and the
matrix's builds (<cell>/libengine.so of the tests' one build of the local
matrix, tests/support/one_machine_run.py, as the main job makes them), against
tests/data/golden/rocm.json and matrix.json (scripts/record-golden.py rocm,
matrix).  Skipped where the inputs are not here, failed under CI."""

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


def test_matrix_outputs_are_the_recorded_bytes(one_machine_run, tmp_path):
    build = tmp_path / "build"
    shutil.copytree(one_machine_run.outputs, build)
    cells = golden.built_cells(build)
    recorded = golden.load_records("matrix")["matrix"]
    wanted = recorded["check"]["argv"][7:]      # matrix check --no-build --build-dir .. --root . CELL...
    if cells != wanted:
        missing(f"the matrix outputs were recorded with cells {' '.join(wanted)} built; the local matrix "
                f"run built {' '.join(cells) or 'none'} ({one_machine_run.root_unavailable or 'see its log'})")
    work = tmp_path / golden.MATRIX_WORK
    golden.assert_same_outputs(recorded, golden.run_scenario(golden.matrix_scenario(cells), work, checkout=tmp_path))
