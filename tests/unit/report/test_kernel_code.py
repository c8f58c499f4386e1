"""report.kernel_code: a few records' code found again after a selection,
in plain code objects and in a compressed (CCOB) bundle."""

from __future__ import annotations

from pathlib import Path

from spillway.isa.evidence import evidence
from spillway.report.kernel_code import each_kernel_code, evidence_of_kernels
from spillway.report.reader import ReadOptions, read_report

DATA = Path(__file__).resolve().parents[2] / "data"
CO = DATA / "isa" / "co"
CCOB = DATA / "occupancy" / "clang-23" / "gfx90a.ccob"


def _records(paths: list[str]) -> list[dict]:
    return list(read_report(paths, ReadOptions(), compact=True)["kernels"])


def test_found_again_in_code_objects_and_equal_to_evidence():
    paths = [str(CO / "gfx90a.clang22.co"), str(CO / "gfx1100.clang22.co")]
    records = [r for r in _records(paths) if r["name"] in ("spill_in_loop", "agpr_spill")]
    assert len(records) == 3        # agpr_spill is built for gfx90a only

    def figures(record, section, found, target):
        assert target == record["target"] and found.name == record["symbol"].removesuffix(".kd")
        return evidence(section, found.start, found.size, target, bool(found.private_segment_buffer))

    codes = each_kernel_code(paths, ReadOptions(), records, figures)
    assert all(code is not None and code.status == "complete" for code in codes)
    by_kernel = {(r["target"], r["name"]): c for r, c in zip(records, codes)}
    assert by_kernel[("gfx90a", "agpr_spill")].agpr_writes > 0
    assert by_kernel[("gfx1100", "spill_in_loop")].scratch_in_loops > 0


def test_found_again_in_a_compressed_bundle():
    records = _records([str(CCOB)])
    chosen = records[:: max(1, len(records) // 5)]
    sizes = each_kernel_code([str(CCOB)], ReadOptions(), chosen, lambda r, s, found, t: found.size)
    assert all(size for size in sizes)


def test_a_record_not_there_is_none():
    path = str(CO / "gfx90a.clang22.co")
    record = dict(_records([path])[0])
    assert each_kernel_code([path], ReadOptions(), [dict(record, target="gfx942")], lambda *a: 1) == [None]
    assert each_kernel_code([path], ReadOptions(), [dict(record, bundle_index=3)], lambda *a: 1) == [None]


def test_evidence_of_kernels_by_target_and_key():
    paths = [str(CO / "gfx90a.clang22.co"), str(CO / "gfx90a.clang22.co")]
    found = evidence_of_kernels(paths, ReadOptions(), {("gfx90a", "spill_in_loop"), ("gfx90a", "missing")})
    assert list(found) == [("gfx90a", "spill_in_loop")]
    assert len(found[("gfx90a", "spill_in_loop")]) == 2          # one per instance
