"""A Tensile-like code object: several kernels compiled device-only into
separate objects and linked into one with ``ld.lld-22 -shared``, which leaves
one NT_AMDGPU_METADATA note per kernel (tests/data/tensile/, built by its
build.sh from kernels.hip).  spillway must report every kernel of every note,
every field equal to what llvm-readelf --notes shows.  (spillway at 294ea35
read only the first note: 1 kernel per file here, which these tests catch by
the record counts.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support import llvm_pipeline, oracles
from support.oracle_expectations import as_row, assert_same_kernels, report_rows, run_report

from conftest import DATA

TENSILE = DATA / "tensile"
CODE_OBJECTS = sorted(TENSILE.glob("tensile_*.hsaco"))
KERNELS_PER_OBJECT = 5        # kernels.hip, KERNEL 0..4


def note_count(code_object: Path) -> int:
    text = subprocess.run([oracles.tool("llvm-readelf"), "--notes", str(code_object)], check=True,
                          capture_output=True, text=True).stdout
    return text.count("NT_AMDGPU_METADATA")


def spillway_rows(paths: list[Path], tmp_path: Path) -> list[tuple]:
    out = tmp_path / "report.json"
    run_report(paths, out)
    return report_rows(out, TENSILE)[1]


def test_fixture_is_multi_note():
    assert [p.name for p in CODE_OBJECTS] == ["tensile_gfx1100.hsaco", "tensile_gfx90a.hsaco"]
    for code_object in CODE_OBJECTS:
        assert note_count(code_object) == KERNELS_PER_OBJECT
        documents = oracles.readelf_documents(code_object)
        assert [len(d["amdhsa.kernels"]) for d in documents] == [1] * KERNELS_PER_OBJECT


@pytest.mark.parametrize("code_object", CODE_OBJECTS, ids=lambda p: p.name)
def test_every_kernel_of_every_note_matches_llvm_readelf(code_object, tmp_path):
    """Oracle: support.oracles (PyYAML over every document llvm-readelf prints)."""
    expected = []
    for record in oracles.expected_records(code_object):
        comments = oracles.readelf_comment(code_object)
        expected.append(as_row({**record, "file": code_object.name, "bundle_index": None,
                                "compiler": "; ".join(dict.fromkeys(
                                    c for c in comments if not c.startswith("Linker:")))}))
    assert len(expected) == KERNELS_PER_OBJECT
    assert len({row[5] for row in expected}) == KERNELS_PER_OBJECT      # five distinct symbols
    assert_same_kernels(spillway_rows([code_object], tmp_path), expected)


def test_resources_differ_between_kernels():
    """The fixture exercises what the report shows: LDS, scratch, spills."""
    records = {r["symbol"]: r for r in oracles.expected_records(TENSILE / "tensile_gfx90a.hsaco")}
    assert records["tensile_lds_tile"]["group_segment_fixed_size"] == 8192
    assert records["tensile_private"]["private_segment_fixed_size"] > 0
    assert records["tensile_pressure"]["vgpr_spill_count"] > 0
    assert records["_ZN7tensile5scaleILi64EEEvPff"]["max_flat_workgroup_size"] == 64
    wave32 = oracles.expected_records(TENSILE / "tensile_gfx1100.hsaco")
    assert {r["wavefront_size"] for r in wave32} == {32}
    assert all(r["workgroup_processor_mode"] is not None for r in wave32)


def test_compressed_bundle_matches_the_llvm_pipeline(tmp_path):
    """The same two code objects in one CCOB v3 bundle, as Tensile's .co
    files are: clang-offload-bundler-22 unbundles it, llvm-readelf reads it."""
    bundle = TENSILE / "tensile_bundle.co"
    assert bundle.read_bytes()[:4] == b"CCOB"
    found = llvm_pipeline.read_file(bundle, bundle.name, tmp_path)
    assert (found.kind, found.bundles, found.code_objects) == ("bundle", 1, 2)
    assert found.kernels == 2 * KERNELS_PER_OBJECT
    assert_same_kernels(spillway_rows([bundle], tmp_path), [as_row(r) for r in found.records])


def test_fast_metadata_reader_agrees_with_pyyaml():
    """llvm_pipeline.scalar_document (used to make the library oracle
    affordable) reads the same scalars as PyYAML from every document."""
    for code_object in CODE_OBJECTS:
        text = subprocess.run([oracles.tool("llvm-readelf"), "--notes", str(code_object)], check=True,
                              capture_output=True, text=True).stdout
        fast = llvm_pipeline.parse_readelf("ABI Version: 4\nFlags: 0x0, gfx0\n" + text)
        full = oracles.readelf_documents(code_object)
        assert len(fast.documents) == len(full) == KERNELS_PER_OBJECT
        for quick, reference in zip(fast.documents, full):
            assert quick == scalars(reference)


def scalars(document: dict) -> dict:
    """The scalar keys of a document and of each kernel in it."""
    out = {k: v for k, v in document.items() if not isinstance(v, (list, dict))}
    out["amdhsa.kernels"] = [{k: v for k, v in kernel.items() if not isinstance(v, (list, dict))}
                             for kernel in document.get("amdhsa.kernels", [])]
    return out
