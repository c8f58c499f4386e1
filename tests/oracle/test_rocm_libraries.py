"""spillway against LLVM's own tools on Debian's builds of today's ROCm
libraries (issue 9): experimental librocsparse1 7.2.4 (CCOB v3), sid
librocsparse1 6.4.3 and the whole experimental librocblas5 7.2.4 package
folder (librocblas.so plus Tensile's multi-note .co/.hsaco files).

The packages are fetched by the set-up step (scripts/fetch-rocm-libraries.sh),
never committed.  The LLVM-tools pipeline (support.llvm_pipeline: bundles cut
from their own headers, clang-offload-bundler-22, llvm-readelf-22 --notes,
every metadata document) takes from half a minute to 6 minutes per library,
by the machine's load, so its output is
committed once per package file (tests/data/oracle/, keyed by the .deb's
SHA-256, written by scripts/generate-oracle.py):

* test_report_matches_committed_oracle: spillway's full report, every field
  of every kernel record, as a multiset (equal counts, not only equal sets);
* test_pipeline_sample_matches_committed_oracle: the pipeline rerun here on a
  fixed sample (every 16th bundle of each host library, every Tensile file of
  one target) must give exactly the committed rows for that sample, so the
  committed expectations stay honest;
* test_pipeline_whole_package_matches_committed_oracle (marker oracle_full,
  only with SPILLWAY_ORACLE_FULL=1): the whole pipeline again.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from support import llvm_pipeline
from support.oracle_expectations import (as_row, assert_same_kernels, demangled, load, report_rows, rows,
                                         run_report, same_demangling)

SAMPLE_EVERY = 16            # every 16th bundle of a host library
SAMPLE_TENSILE_TARGET = "gfx1030"    # every Tensile file of this target (16 .co, 55 .hsaco)
# 2,294 metadata notes in one code object (issue 9)
MANY_NOTES = "TensileLibrary_Type_HH_HPA_ExperimentalGrid_Contraction_l_Ailk_Bjlk_Cijk_Dijk_gfx90a.co"
FILE = llvm_pipeline.KERNEL_FIELDS.index("file")
BUNDLE = llvm_pipeline.KERNEL_FIELDS.index("bundle_index")

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def expectations() -> dict:
    return {}


def expected(rocm_package, cache: dict) -> dict:
    if rocm_package.name not in cache:
        document = load(rocm_package.expectation)
        assert document["sha256"] == rocm_package.sha256
        cache[rocm_package.name] = document
    return cache[rocm_package.name]


def test_report_matches_committed_oracle(rocm_package, expectations, tmp_path):
    document = expected(rocm_package, expectations)
    out = tmp_path / "report.json"
    run_report([rocm_package.root], out)
    names: dict[str, set] = {}
    other, got = report_rows(out, rocm_package.root, names)
    want = rows(document)
    assert len(got) == len(want), f"spillway {len(got)} kernel records, LLVM tools {len(want)}"
    assert_same_kernels(got, want)
    files = other["files"]
    assert sum(f["kernels"] for f in files) == len(want)
    assert sum(f["code_objects"] for f in files) == sum(f["code_objects"] for f in document["files"])
    assert sum(f["bundles"] for f in files) == sum(f["bundles"] for f in document["files"])
    per_file = Counter(row[FILE] for row in got)
    assert per_file == {f["path"]: f["kernels"] for f in document["files"] if f["kernels"]}
    # name: one per symbol, as GNU c++filt reads it (see oracle_expectations.demangled)
    assert all(len(spelled) == 1 for spelled in names.values())
    reference = demangled(sorted(names))
    wrong = [(symbol, spelled, reference[symbol]) for symbol, (spelled,) in names.items()
             if not same_demangling(spelled, reference[symbol])]
    assert not wrong, f"{len(wrong)} names differ from c++filt, e.g. {wrong[:3]}"


def in_sample(path: str) -> bool:
    stem = Path(path).stem
    return "/rocblas/" not in path or stem.endswith(("_" + SAMPLE_TENSILE_TARGET, "-" + SAMPLE_TENSILE_TARGET))


def test_pipeline_sample_matches_committed_oracle(rocm_package, expectations, tmp_path):
    document = expected(rocm_package, expectations)
    kinds = {f["path"]: f["kind"] for f in document["files"]}
    live = llvm_pipeline.read_tree(rocm_package.root, tmp_path, every=SAMPLE_EVERY, jobs=os.cpu_count() or 1,
                                   only=in_sample)
    assert live, "the sample is empty"
    for found in live:
        assert kinds.get(found.path) == found.kind, found.path
        committed = next(f for f in document["files"] if f["path"] == found.path)
        assert found.bundles == committed["bundles"], found.path
    got = [as_row(r) for found in live for r in found.records]
    sampled = {found.path for found in live}
    want = [row for row in rows(document) if row[FILE] in sampled
            and (kinds[row[FILE]] != "host" or row[BUNDLE] % SAMPLE_EVERY == 0)]
    assert len(got) > 1000
    assert_same_kernels(got, want, what="LLVM tools now", oracle="committed expectation")
    # the sample covers every kind of file the package has
    assert {found.kind for found in live} == set(kinds.values())


@pytest.mark.oracle_full
@pytest.mark.skipif(not os.environ.get("SPILLWAY_ORACLE_FULL"),
                    reason="0.5-6 minutes per library: set SPILLWAY_ORACLE_FULL=1")
def test_pipeline_whole_package_matches_committed_oracle(rocm_package, expectations, tmp_path):
    document = expected(rocm_package, expectations)
    live = llvm_pipeline.read_tree(rocm_package.root, tmp_path, jobs=os.cpu_count() or 1)
    assert_same_kernels([as_row(r) for found in live for r in found.records], rows(document),
                        what="LLVM tools now", oracle="committed expectation")


def test_fast_metadata_reader_agrees_with_pyyaml_on_real_documents(rocm_package, tmp_path):
    """The committed expectations were read with llvm_pipeline.scalar_document
    (PyYAML takes an hour per library); on real documents of each package,
    the first bundle of its host library and (rocBLAS) a 2,294-note Tensile
    file, it must read exactly what PyYAML reads."""
    import subprocess

    from support import oracles
    host = rocm_package.host_library()
    (offset, size), = llvm_pipeline.offload_sections(host)
    with open(host, "rb") as handle:
        handle.seek(offset)
        head = handle.read(min(size, 64 << 20))
    first = llvm_pipeline.cut_bundles_prefix(head)
    bundle_file = tmp_path / "bundle0.bin"
    bundle_file.write_bytes(head[:first.size])
    objects = [path for _, path in llvm_pipeline.unbundle(bundle_file, tmp_path)]
    tensile = sorted(rocm_package.root.rglob(MANY_NOTES))
    for co in tensile:
        objects += [path for _, path in llvm_pipeline.unbundle(co, tmp_path)]
    documents = 0
    for code_object in objects:
        text = subprocess.run([oracles.tool("llvm-readelf"), "-h", "--notes", str(code_object)], check=True,
                              capture_output=True, text=True).stdout
        fast = llvm_pipeline.parse_readelf(text).documents
        full = llvm_pipeline.parse_readelf(text, full_yaml=True).documents
        assert len(fast) == len(full) > 0
        for quick, reference in zip(fast, full):
            assert quick == scalars(reference)
        documents += len(full)
    assert documents >= len(objects) > 0
    if "rocblas" in rocm_package.name:
        assert len(tensile) == 1 and documents >= 2294 + len(objects) - 1


def scalars(document: dict) -> dict:
    out = {k: v for k, v in document.items() if not isinstance(v, (list, dict))}
    out["amdhsa.kernels"] = [{k: v for k, v in kernel.items() if not isinstance(v, (list, dict))}
                             for kernel in document.get("amdhsa.kernels", [])]
    return out


def test_tensile_file_with_2294_notes(tmp_path):
    """Issue 9's own case: one Tensile code object, one metadata note per
    kernel; spillway at 294ea35 reported 1 kernel here and exited 0."""
    import subprocess

    from support import oracles
    from support.rocm_packages import locate
    package = locate("librocblas5-7.2.4")
    path, = package.root.rglob(MANY_NOTES)
    live = llvm_pipeline.read_file(path, path.name, tmp_path)
    assert (live.kind, live.bundles, live.code_objects, live.kernels) == ("bundle", 1, 1, 2294)
    (_, code_object), = llvm_pipeline.unbundle(path, tmp_path)
    notes = subprocess.run([oracles.tool("llvm-readelf"), "--notes", str(code_object)], check=True,
                           capture_output=True, text=True).stdout.count("NT_AMDGPU_METADATA")
    assert notes == 2294
    out = tmp_path / "report.json"
    run_report([path], out)
    assert_same_kernels(report_rows(out, path.parent)[1], [as_row(r) for r in live.records])
