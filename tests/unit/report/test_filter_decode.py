"""``report PATH FILTER --isa`` chooses the kernels before any machine code is
decoded (issue 37: a filter decoded every kernel of every code object, then
filtered): only code objects holding a match are decoded, and only the
matching kernels' words; their isa objects are those of the unfiltered read.
The filter itself tests each distinct name once (resources.names.NameFilter)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from spillway.cli import main
from spillway.resources.names import name_matches

DATA = Path(__file__).resolve().parents[2] / "data"
# Two code objects with different kernels: the ISA fixtures' gfx1100 build and the occupancy corpus' gfx90a.
INPUTS = (DATA / "isa" / "co" / "gfx1100.clang22.co", DATA / "occupancy" / "clang-24" / "gfx90a.ccob")


def _report(capsys, *argv) -> dict:
    assert main(["report", *map(str, INPUTS), *argv, "--json"]) == 0
    return orjson.loads(capsys.readouterr().out)


@pytest.fixture
def decoded(monkeypatch):
    """What the code evidence decodes: code objects opened, instruction words decoded."""
    from spillway.isa import vector
    from spillway.report import code_evidence

    seen = {"code_objects": 0, "words": 0}
    ranges, decode_words = code_evidence.kernel_ranges, vector._decode_words

    def counted_ranges(payload, *args, **kwargs):
        seen["code_objects"] += 1
        return ranges(payload, *args, **kwargs)

    def counted_words(words, *args, **kwargs):
        seen["words"] += len(words)
        return decode_words(words, *args, **kwargs)

    monkeypatch.setattr(code_evidence, "kernel_ranges", counted_ranges)
    monkeypatch.setattr(vector, "_decode_words", counted_words)
    return seen


def _words_of(records: list[dict]) -> int:
    """The instruction words of these kernels (their functions' sizes / 4)."""
    from spillway.formats.containers import PendingImages, ScanResult, expand, scan_path
    from spillway.isa.evidence import kernel_ranges

    total = 0
    for file in {r["file"] for r in records}:
        symbols = {r["symbol"].removesuffix(".kd") for r in records if r["file"] == file}
        for unit in scan_path(file).images:       # (a .ccob is a compressed bundle: its code object inflated)
            for image in (expand(unit, ScanResult()) if isinstance(unit, PendingImages) else (unit,)):
                _section, ranges = kernel_ranges(image.payload)
                total += sum(found.size // 4 for found in ranges if found.name in symbols)
    return total


@pytest.mark.parametrize("pattern", ["spill_*", "image_loads", "*PRIVATE*"])
def test_only_the_matching_kernels_code_is_decoded(capsys, decoded, pattern):
    every = _report(capsys, "--all", "--isa")
    assert decoded["code_objects"] == 2 and decoded["words"] >= _words_of(every["kernels"])
    expected = [k for k in every["kernels"] if name_matches(pattern, k["name"])]
    assert expected and len({k["file"] for k in expected}) == 1, "a pattern of one code object's kernels"
    decoded.update(code_objects=0, words=0)
    filtered = _report(capsys, pattern, "--isa")
    assert filtered["kernels"] == expected          # each with the isa object of the unfiltered read
    # Only the matching kernels' words (not their code object's other kernels').
    assert decoded == {"code_objects": 1, "words": _words_of(expected)}


def test_target_and_filter_choose_before_decoding(capsys, decoded):
    # spill_* matches on gfx1100 only; --target gfx90a leaves that code object unread, and of the other
    # only the three occ_l4096 kernels are decoded.
    document = _report(capsys, "occ_l4096_*", "--isa", "--target", "gfx90a")
    assert sorted(k["name"] for k in document["kernels"]) == ["occ_l4096_w1024", "occ_l4096_w256", "occ_l4096_w64"]
    assert all(k["isa"]["status"] == "complete" for k in document["kernels"])
    assert decoded == {"code_objects": 1, "words": _words_of(document["kernels"])}


def test_name_filter_tests_each_name_once(monkeypatch):
    from spillway.resources import names
    from spillway.resources.names import NameFilter

    calls = []
    short = names.short_name
    monkeypatch.setattr(names, "short_name", lambda text: calls.append(text) or short(text))
    matches = NameFilter("rms*")
    kernel = "void rmsnorm<256>(float*)"
    assert [matches(kernel) for _ in range(5)] == [True] * 5
    assert [matches("void other<1>(int)") for _ in range(5)] == [False] * 5
    # The full name matched "rms*"? No (it starts with "void"): the short name was worked out once per name.
    assert len(calls) == 2
    assert NameFilter("RMSNORM<256")(kernel) and not NameFilter("norm<257")(kernel)
    assert NameFilter("*float[*]*")(kernel)
