"""``spillway code CO '*' --all`` costs per code object, not per kernel (issue
37: 4,032 kernels of one gfx908 code object of librocsparse1 6.4.3 took more
than 13 CPU-minutes): the line table is read once per code object, and the
kernels are decoded together by the vectorized path, never again one by one by
the plain-Python decoder; the document is the same as one kernel at a time
gives (each kernel named alone).  On the line-table fixtures (tests/data/isa/lines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spillway.cli import main

LINES = Path(__file__).resolve().parents[2] / "data" / "isa" / "lines" / "co"
OBJECTS = [LINES / "gfx1100.clang22.dwarf5.co", LINES / "gfx906.clang22.dwarf4.co"]


@pytest.fixture
def counted(monkeypatch):
    """Line tables read and kernels listed by the plain-Python path."""
    from spillway.isa import listing, source_lines

    seen = {"line_tables": 0, "plain_listings": 0}
    read, plain = source_lines.read_lines, listing.kernel_listing

    def counted_read(*args, **kwargs):
        seen["line_tables"] += 1
        return read(*args, **kwargs)

    def counted_plain(*args, **kwargs):
        seen["plain_listings"] += 1
        return plain(*args, **kwargs)

    monkeypatch.setattr(source_lines, "read_lines", counted_read)
    monkeypatch.setattr(listing, "kernel_listing", counted_plain)
    return seen


def _code(capsys, *argv) -> dict:
    assert main(["code", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_kernel_of_two_code_objects_reads_each_line_table_once(capsys, counted):
    document = _code(capsys, *OBJECTS, "*", "--all")
    kernels = document["kernels"]
    assert len(kernels) >= 20 and len({k["file"] for k in kernels}) == 2
    assert any(k["source_lines"]["by_line"] for k in kernels), "the fixtures place scratch at lines"
    assert counted == {"line_tables": 2, "plain_listings": 0}
    # The same kernels, each named alone (one per code object): the same objects.
    for kernel in kernels[:6] + kernels[-6:]:
        alone = _code(capsys, kernel["file"], kernel["symbol"].removesuffix(".kd"))["kernels"]
        assert alone == [kernel]
