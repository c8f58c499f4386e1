"""``report PATH FILTER --isa`` chooses the kernels before any machine code is
decoded (issue 37: a filter decoded every kernel of every code object, then
filtered): only code objects holding a match are decoded, and only the
matching kernels' code; their isa objects are those of the unfiltered read.
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
    """What the code evidence decodes: code objects opened, kernels decoded."""
    from spillway.report import code_evidence

    seen = {"code_objects": 0, "kernels": 0}
    ranges, many = code_evidence.kernel_ranges, code_evidence._vector.evidence_many

    def counted_ranges(payload, *args, **kwargs):
        seen["code_objects"] += 1
        return ranges(payload, *args, **kwargs)

    def counted_many(code, batch, *args, **kwargs):
        seen["kernels"] += len(batch)
        return many(code, batch, *args, **kwargs)

    monkeypatch.setattr(code_evidence, "kernel_ranges", counted_ranges)
    monkeypatch.setattr(code_evidence._vector, "evidence_many", counted_many)
    return seen


@pytest.mark.parametrize("pattern", ["spill_*", "image_loads", "*PRIVATE*"])
def test_only_the_matching_kernels_code_is_decoded(capsys, decoded, pattern):
    every = _report(capsys, "--all", "--isa")
    assert decoded == {"code_objects": 2, "kernels": len(every["kernels"])}
    expected = [k for k in every["kernels"] if name_matches(pattern, k["name"])]
    assert expected and len({k["file"] for k in expected}) == 1, "a pattern of one code object's kernels"
    decoded.update(code_objects=0, kernels=0)
    filtered = _report(capsys, pattern, "--isa")
    assert filtered["kernels"] == expected          # each with the isa object of the unfiltered read
    assert decoded == {"code_objects": 1, "kernels": len(expected)}


def test_target_and_filter_choose_before_decoding(capsys, decoded):
    # spill_* matches on gfx1100 only; --target gfx90a leaves that code object unread, and of the other
    # only the three occ_l4096 kernels are decoded.
    document = _report(capsys, "occ_l4096_*", "--isa", "--target", "gfx90a")
    assert sorted(k["name"] for k in document["kernels"]) == ["occ_l4096_w1024", "occ_l4096_w256", "occ_l4096_w64"]
    assert all(k["isa"]["status"] == "complete" for k in document["kernels"])
    assert decoded == {"code_objects": 1, "kernels": 3}


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
