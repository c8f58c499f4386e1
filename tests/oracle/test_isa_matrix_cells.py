"""Truth (b) of issue 23: every kernel of every cell of the matrix (the
one-machine run's libengine.so per cell, tests/support/one_machine_run.py)
has the isa object llvm-objdump -d -z gives (tests/support/isa_oracle.py, the
newest LLVM that decodes the target).  The code objects are cut out of the
library by LLVM's own tools (llvm-readelf's section table and
clang-offload-bundler: tests/support/llvm_pipeline.py), never by spillway."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spillway.report.code_evidence import ISA_FIELDS
from support import isa_oracle, llvm_pipeline

pytestmark = pytest.mark.oracle

# The oracle's names for the isa object's members, where they differ.
RENAMED = {"scratch_without_width": "scratch_unsized"}
COMPARED = [f for f in ISA_FIELDS if f != "loop_spans"]     # loop_spans: counted as loops by the oracle


def spillway_isa(library: Path) -> dict[tuple[str, str], list[dict]]:
    """(processor, symbol) -> the isa objects of report --all --isa --json."""
    done = subprocess.run([sys.executable, "-m", "spillway", "report", "--all", "--isa", "--json", str(library)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    found: dict[tuple[str, str], list[dict]] = {}
    for kernel in json.loads(done.stdout)["kernels"]:
        found.setdefault((kernel["target"].split(":")[0], kernel["symbol"]), []).append(
            {f: kernel["isa"][f] for f in COMPARED})
    return found


def cell_bundler(cell: str) -> str | None:
    """The cell compiler's own clang-offload-bundler (bookworm's clang-N cells)."""
    found = re.fullmatch(r"clang-(\d+)", cell)
    return shutil.which(f"clang-offload-bundler-{found.group(1)}") if found else None


def unbundle(bundle_file: Path, work: Path, cell: str) -> list[tuple[str, Path]]:
    """LLVM 22's bundler, or the cell's own where LLVM 22 refuses the bundle:
    clang 15 and 16 name the host entry ``host-x86_64-unknown-linux``, which
    LLVM 22 lists but will not unbundle ("invalid bundle id")."""
    try:
        return llvm_pipeline.unbundle(bundle_file, work)
    except subprocess.CalledProcessError as error:
        own = cell_bundler(cell)
        if own is None or b"invalid bundle id" not in (error.stderr or b""):
            raise
        return llvm_pipeline.unbundle(bundle_file, work, bundler=own)


def code_objects(library: Path, work: Path, cell: str) -> list[Path]:
    """The cell's library's code objects, cut by LLVM's tools (the cell's own bundler where LLVM 22's
    refuses: ``unbundle``)."""
    return llvm_pipeline.library_code_objects(library, work, lambda bundle, out: unbundle(bundle, out, cell))


def objdump_isa(library: Path, work: Path, cell: str) -> dict[tuple[str, str], list[dict]]:
    found: dict[tuple[str, str], list[dict]] = {}
    for code_object in code_objects(library, work, cell):
        read = isa_oracle.read_code_object(code_object)
        for function in read.functions:
            fields = function.fields()
            if fields["kind"] == "kernel":
                found.setdefault((read.target, function.symbol), []).append(
                    {f: fields[RENAMED.get(f, f)] for f in COMPARED})
    return found


def test_every_kernel_of_every_cell_equals_objdump(one_machine_run, tmp_path):
    cells = sorted(p.parent for p in Path(one_machine_run.outputs).glob("*/libengine.so"))
    assert len(cells) >= 6, cells
    checked = 0
    for cell in cells:
        work = tmp_path / cell.name
        work.mkdir()
        ours, oracle = spillway_isa(cell / "libengine.so"), objdump_isa(cell / "libengine.so", work, cell.name)
        assert sorted(ours) == sorted(oracle), cell.name
        for key, expected in oracle.items():
            assert sorted(map(json.dumps, ours[key])) == sorted(map(json.dumps, expected)), (cell.name, key)
        # the engine's 22 kernels on 2 targets (clang 15, 16) or 3 (the others)
        assert sum(map(len, oracle.values())) >= 44, cell.name
        checked += sum(map(len, oracle.values()))
    print(f"{checked} kernels in {len(cells)} cells equal llvm-objdump's figures")
