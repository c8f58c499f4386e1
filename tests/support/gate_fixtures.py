"""Shared pieces of the gate tests (check, baseline, compare, legacy).

Real builds: tests/data/gate_kernels.hip compiled for gfx1100 by clang-15
(which caps gfx11 at 128 VGPRs and spills) and by clang-22 with -DGATE_EXTRA
(two more kernels, one of them with a private table in scratch).  The
oracle reads the same objects with LLVM's tools: llvm-objdump --offloading
extracts the code objects and llvm-readelf --notes prints their metadata.

Synthetic report records: for unit tests that need exact numbers.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from spillway import __version__
from spillway.cli import main as spillway_main
from spillway.resources.occupancy import DEFAULT_MODEL
from spillway.resources.names import demangle, stable_key
from spillway.report.reader import FIELDS
from spillway.report.record import SCHEMA as REPORT_SCHEMA
from support.oracles import extract, readelf_metadata
from support.toolchains import clang

DATA = Path(__file__).resolve().parents[1] / "data"
SOURCE = DATA / "gate_kernels.hip"
TARGET = "gfx1100"


# -- real builds -------------------------------------------------------------------

@dataclass(frozen=True)
class GateBuilds:
    old: Path          # clang-15 host object
    new: Path          # clang-22 host object, with the two extra kernels
    new_library: Path  # the same clang-22 object linked into a shared library
    work: Path


_CACHE: dict[Path, GateBuilds] = {}


def gate_builds(builder) -> GateBuilds:
    if builder.root in _CACHE:
        return _CACHE[builder.root]
    clang(15)
    clang(22)
    with ThreadPoolExecutor(2) as pool:
        old = pool.submit(builder.hip, 15, SOURCE, [TARGET])
        new = pool.submit(builder.hip, 22, SOURCE, [TARGET], "-DGATE_EXTRA")
        old, new = old.result(), new.result()
    library = builder.link(22, [new], "libgate.so", "-shared")
    work = builder.root / "gate-work"
    work.mkdir(exist_ok=True)
    _CACHE[builder.root] = GateBuilds(old, new, library, work)
    return _CACHE[builder.root]


@pytest.fixture(scope="session")
def builds(builder) -> GateBuilds:
    return gate_builds(builder)


# -- the oracle: llvm-readelf --notes ------------------------------------------------

@dataclass(frozen=True)
class OracleKernel:
    name: str
    scratch: int
    dynamic_stack: bool
    vgpr_spills: int
    sgpr_spills: int
    vgprs: int
    lds: int
    max_workgroup: int
    occupancy: int

    @property
    def spills(self) -> int:
        return self.vgpr_spills + self.sgpr_spills


def gfx1100_occupancy(vgprs: int, lds: int, max_workgroup: int) -> int:
    """toolchains-debian.md 3.5: gfx1100 wave32 in WGP mode, which matched
    every clang-16/19/22 remark: min(16, 1536 / roundup(VGPRs, 24), LDS limit)."""
    by_vgprs = min(16, 1536 // (math.ceil(max(vgprs, 1) / 24) * 24))
    if lds == 0:
        return by_vgprs
    by_lds = min(16, math.ceil((131072 // lds) * math.ceil(max_workgroup / 32) / 4))
    return min(by_vgprs, by_lds)


_ORACLE: dict[Path, dict[str, OracleKernel]] = {}


def oracle(host_object: Path, work: Path) -> dict[str, OracleKernel]:
    """Mangled name -> figures, from llvm-readelf-22 --notes of the code objects
    llvm-objdump-22 --offloading extracts from ``host_object``."""
    if host_object in _ORACLE:
        return _ORACLE[host_object]
    out: dict[str, OracleKernel] = {}
    entries = extract(host_object, work / f"oracle-{host_object.parent.name}-{host_object.name}")
    assert entries, f"llvm-objdump found no device code in {host_object}"
    for _index, entry_id, code_object in entries:
        assert entry_id.endswith(TARGET), entry_id
        for kernel in readelf_metadata(code_object)["amdhsa.kernels"]:
            vgprs = kernel[".vgpr_count"]
            lds = kernel[".group_segment_fixed_size"]
            wg = kernel[".max_flat_workgroup_size"]
            assert kernel[".wavefront_size"] == 32
            # Keyed by name: a repeated name would silently drop a record.
            assert kernel[".name"] not in out, f"{kernel['.name']} twice in {host_object}"
            out[kernel[".name"]] = OracleKernel(
                kernel[".name"], kernel[".private_segment_fixed_size"],
                bool(kernel.get(".uses_dynamic_stack", False)), kernel.get(".vgpr_spill_count", 0),
                kernel.get(".sgpr_spill_count", 0), vgprs, lds, wg, gfx1100_occupancy(vgprs, lds, wg))
    _ORACLE[host_object] = out
    return out


# -- running the CLI in-process ---------------------------------------------------------

@dataclass
class Run:
    status: int
    out: str
    err: str


def run_cli(capsys, *argv, entry=spillway_main) -> Run:
    """Run a spillway (or check-kernel-resources) command line in-process."""
    capsys.readouterr()
    try:
        status = entry([str(a) for a in argv])
    except SystemExit as exc:          # argparse usage errors
        status = exc.code
    captured = capsys.readouterr()
    return Run(status, captured.out, captured.err)


def assert_one_line_error(run: Run, *fragments: str) -> None:
    assert run.status == 2, (run.status, run.out, run.err)
    lines = run.err.strip().splitlines()
    assert len(lines) == 1, run.err
    assert "Traceback" not in run.err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


# -- synthetic kernels --------------------------------------------------------------------

def record(symbol: str, *, target: str = TARGET, scratch: int = 0, vgpr_spills: int = 0, sgpr_spills: int = 0,
           vgprs: int = 32, sgprs: int = 16, lds: int = 0, occupancy: int | None = 16,
           dynamic_stack: bool = False, file: str = "lib.so", compiler: str = "clang version 22",
           code_object_version: int = 6) -> dict:
    """A report record (spillway.report/6, as REPORT_SCHEMA) with the given figures."""
    cause = "spill" if vgpr_spills else "dynamic_stack" if dynamic_stack else "private" if scratch else "none"
    values = {
        "file": file, "bundle_index": 0, "target": target, "code_object_version": code_object_version,
        "compiler": compiler, "symbol": symbol, "name": demangle(symbol), "key": stable_key(symbol),
        "vgpr_count": vgprs, "agpr_count": None, "sgpr_count": sgprs, "vgpr_spill_count": vgpr_spills,
        "sgpr_spill_count": sgpr_spills, "private_segment_fixed_size": scratch,
        "uses_dynamic_stack": dynamic_stack, "group_segment_fixed_size": lds, "wavefront_size": 32,
        "max_flat_workgroup_size": 256, "workgroup_processor_mode": True, "occupancy": occupancy,
        "occupancy_limit": "hardware" if occupancy == 16 else "vgpr", "scratch_cause": cause,
        "image_offset": None, "archive": None, "occupancy_model": DEFAULT_MODEL, "occupancy_next": None,
    }
    return {f: values[f] for f in FIELDS}


def write_report(path: Path, records: list[dict]) -> Path:
    """A report document (REPORT_SCHEMA) holding ``records`` (usable as PATH)."""
    files = sorted({r["file"] for r in records})
    document = {"schema": REPORT_SCHEMA, "spillway_version": __version__,
                "files": [{"path": f, "kind": "ELF", "bundles": 1, "code_objects": 1,
                           "kernels": sum(1 for r in records if r["file"] == f), "bitcode_only": [],
                           "skipped_without_device_code": 0, "spirv_entries": 0} for f in files],
                "kernels": records}
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    return path


def load_json(path: Path):
    return orjson.loads(Path(path).read_bytes())
