"""Report JSON read back in bounded memory (issues 9 and 14): the memory
read_sources allocates while reading a report does not grow with the report's
size, in spillway's own layout, pretty-printed (the general reader) and as one
line.  The reports here hold a few distinct kernels many times over (one per
file, as a library built for many targets does), so what must stay is small and
what a whole-document read holds (the bytes, then a dict per record) is not.
Timings are benchmarks' business (benchmarks/bench_scale.py), not these tests'."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from spillway import __version__
from spillway.constants import REPORT_SCHEMA
from spillway.gate.reading import read_sources
from spillway.report.report_input import open_report
from spillway.report.reader import KernelTable, ReadOptions, json_chunks
from support.gate_fixtures import record

RECORDS = 6000
FILE = "/opt/rocm/lib/" + "x" * 1500 + "/librocsparse.so"     # long paths make each record about 2 KB


def kernels() -> list[dict]:
    symbols = [f"_Z{len(n)}{n}Pfi" for n in ("csrmv", "bsrmm", "gemvt", "spmv_adaptive")]
    return [record(symbols[i % 4], scratch=16 * (i % 3), vgprs=32 + i % 7, file=f"{FILE}.{i}",
                   target=("gfx1100", "gfx90a")[i // 4 % 2]) for i in range(RECORDS)]


def document(records: list[dict]) -> dict:
    return {"schema": REPORT_SCHEMA, "spillway_version": __version__, "occupancy_model": "llvm23",
            "files": [], "kernels": records}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("memory")
    records = kernels()
    table = KernelTable()
    table.extend(records)
    written = {"own": b"".join(json_chunks(dict(document([]), kernels=table))),
               "pretty": json.dumps(document(records), indent=2).encode(),
               "one-line": json.dumps(document(records), separators=(",", ":")).encode()}
    paths = {}
    for name, data in written.items():
        paths[name] = folder / f"{name}.json"
        paths[name].write_bytes(data)
    return paths


def peak_while(read) -> int:
    """Peak bytes traced by tracemalloc above what was allocated before ``read``."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        result = read()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result is not None
    return peak - before


@pytest.mark.parametrize("layout", ["own", "pretty", "one-line"])
def test_reading_a_report_does_not_hold_it(reports, layout):
    path = reports[layout]
    size = path.stat().st_size
    assert size > 12 << 20
    assert open_report(str(path)).layout == ("lines" if layout == "own" else "general")
    peak = peak_while(lambda: read_sources([str(path)], ReadOptions(occupancy_model="llvm23")))
    # The file is 12-17 MB; the reader keeps a 1 MiB read buffer, one record and 8 kernels.
    assert peak < 4 << 20, (layout, size, peak)
    inputs = read_sources([str(path)], ReadOptions(occupancy_model="llvm23"))
    assert len(inputs.usage) == 8 and sum(u.instances for u in inputs.usage.values()) == RECORDS


def test_the_bound_does_not_grow_with_the_report(tmp_path, reports):
    """Four times the records: the same peak (within a read buffer's size)."""
    records = kernels() * 4
    table = KernelTable()
    table.extend(records)
    bigger = tmp_path / "bigger.json"
    bigger.write_bytes(b"".join(json_chunks(dict(document([]), kernels=table))))
    options = ReadOptions(occupancy_model="llvm23")
    small = peak_while(lambda: read_sources([str(reports["own"])], options))
    large = peak_while(lambda: read_sources([str(bigger)], options))
    assert bigger.stat().st_size > 4 * reports["own"].stat().st_size - (1 << 20)
    assert large < small + (1 << 20), (small, large)
