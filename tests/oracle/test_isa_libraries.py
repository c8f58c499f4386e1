"""The ISA-evidence oracle and spillway's decoder on Debian's ROCm 7.2.4
libraries (issue 23): librocsparse1 and the whole librocblas5 folder.

The oracle's rows for a fixed sample of their code objects are committed
(tests/data/isa/libraries/, keyed by the .deb's SHA-256; which code objects:
support/isa_libraries.py; written by scripts/generate-isa-library-oracle.py),
because llvm-objdump over the whole sample takes minutes.  Here:

* the sample cut now is the one committed (same files, bundles, targets);
* the oracle rerun live on every LIVE_EVERY-th sampled code object gives
  exactly the committed rows (all of them with SPILLWAY_ORACLE_FULL=1);
* spillway's decoder gives every committed function's fields and its
  boundary digest (and class digest, when it reports classes).
"""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

from support import isa_decoder, isa_libraries
from support.rocm_packages import locate

PACKAGES = ("librocsparse1-7.2.4", "librocblas5-7.2.4")
LIVE_EVERY = 10

pytestmark = pytest.mark.oracle


def _key(row: dict) -> tuple:
    return (row["file"], row["bundle_index"], row["entry"])


@pytest.fixture(scope="module", params=PACKAGES)
def library(request, tmp_path_factory):
    """(package, committed document, sampled code objects)."""
    package = locate(request.param)
    path = isa_libraries.expectation_path(package.root.name.split("_", 1)[0], package.sha256)
    if not path.is_file():
        message = f"{path} missing: run scripts/generate-isa-library-oracle.py {package.root}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    document = isa_libraries.load(path)
    assert document["sha256"] == package.sha256
    sampled = isa_libraries.sample(package.root, tmp_path_factory.mktemp(request.param))
    return package, document, sampled


def _committed(document: dict) -> dict[tuple, list[dict]]:
    by_object: dict[tuple, list[dict]] = defaultdict(list)
    for row in isa_libraries.rows(document):
        by_object[_key(row)].append(row)
    return by_object


def test_sample_is_the_committed_one(library):
    _, document, sampled = library
    assert document["every"] == isa_libraries.EVERY
    assert document["tensile_files"] == isa_libraries.tensile_files_in(sampled)
    assert sorted((one.file, one.bundle_index or 0, one.entry) for one in sampled) == \
        sorted((f, b or 0, e) for f, b, e in _committed(document))


def test_live_oracle_matches_committed_rows(library):
    _, document, sampled = library
    committed = _committed(document)
    every = 1 if os.environ.get("SPILLWAY_ORACLE_FULL") else LIVE_EVERY
    checked = 0
    for one in sampled[::every]:
        rows, _ = isa_libraries.rows_of(one)
        got = [dict(zip(isa_libraries.ROW_FIELDS, row)) for row in rows]
        assert got, f"{one.file} bundle {one.bundle_index}: no functions"
        want = committed[_key(got[0])]
        assert got == want, f"{one.file} bundle {one.bundle_index} {got[0]['target']}: the oracle now differs"
        checked += len(got)
    assert checked > 100


def test_decoder_matches_library_oracle(library):
    entry = isa_decoder.entry_point()
    _, document, sampled = library
    committed = _committed(document)
    failures, checked = [], 0
    for one in sampled:
        functions = isa_decoder.functions_in(one.path)
        rows = committed.get((one.file, one.bundle_index, one.entry))
        assert rows, f"{one.file} bundle {one.bundle_index} {one.entry}: not in the committed sample"
        for want in rows:
            target = want["target"]
            section, start, size, psb = functions[want["symbol"]]
            got = isa_decoder.decode(entry, section, start, size, target, psb)
            bounds, classes = isa_decoder.digests(isa_decoder.lengths(got), isa_decoder.classes(got))
            differ = isa_decoder.differences(want, got)
            if bounds != want["boundaries"]:
                differ["boundaries"] = (want["boundaries"], bounds)
            if classes is not None and classes != want["classes"]:
                differ["classes"] = (want["classes"], classes)
            if differ:
                failures.append(f"{one.file} bundle {one.bundle_index} {target} {want['symbol']}: {differ}")
            checked += 1
    assert not failures, f"{len(failures)} of {checked} functions differ, e.g.\n  " + "\n  ".join(failures[:8])
    assert checked == len(document["rows"])
