"""spillway compare: classification checked against llvm-readelf, the summary
sentence, terminal / markdown / JSON output, sides given as reports or
baselines, and --fail-on-worse."""

from __future__ import annotations

import jsonschema
import orjson
import pytest

from support.gate_fixtures import (TARGET, assert_one_line_error, builds, gfx1100_occupancy, load_json,  # noqa: F401
                                   oracle, record, run_cli)
from spillway.gate.compare import classify, compare
from spillway.render.markdown import compare_markdown as markdown
from spillway.gate.kernels import aggregate
from spillway.resources.names import demangle
from spillway.schemas import schema_for


def oracle_classes(new: dict, old: dict) -> dict[str, set[str]]:
    """The classification, computed from llvm-readelf's figures alone."""
    out = {"spills_or_scratch_worse": set(), "occupancy_worse": set(), "worse": set(), "better": set(),
           "mixed": set(), "same": set()}
    for name in set(new) & set(old):
        a, b = old[name], new[name]
        worse = b.scratch > a.scratch or (b.dynamic_stack and not a.dynamic_stack) or b.spills > a.spills \
            or b.occupancy < a.occupancy
        better = b.scratch < a.scratch or (a.dynamic_stack and not b.dynamic_stack) or b.spills < a.spills \
            or b.occupancy > a.occupancy
        if b.scratch > a.scratch or b.spills > a.spills or (b.dynamic_stack and not a.dynamic_stack):
            out["spills_or_scratch_worse"].add(name)
        if b.occupancy < a.occupancy:
            out["occupancy_worse"].add(name)
        out["mixed" if worse and better else "worse" if worse else "better" if better else "same"].add(name)
    return out


@pytest.mark.parametrize("direction", ["upgrade", "downgrade"])
def test_counts_match_llvm_readelf(builds, capsys, tmp_path, direction):
    new_bin, old_bin = (builds.new, builds.old) if direction == "upgrade" else (builds.old, builds.new)
    new, old = oracle(new_bin, builds.work), oracle(old_bin, builds.work)
    expected = oracle_classes(new, old)
    out = tmp_path / "compare.json"
    run = run_cli(capsys, "compare", new_bin, "--against", old_bin, "--format", "json", "-o", out)
    assert run.status == 0, run.err
    document = load_json(out)
    jsonschema.validate(document, schema_for("compare"))
    summary = document["summary"]
    for key, names in expected.items():
        assert summary[key] == len(names), key
        if key in ("worse", "better", "mixed", "same"):
            assert {k["key"] for k in document["kernels"] if k["status"] == key} == names, key
    assert summary["compared"] == len(set(new) & set(old))
    assert {k["key"] for k in document["added"]} == set(new) - set(old)
    assert {k["key"] for k in document["removed"]} == set(old) - set(new)
    for kernel in document["kernels"]:
        figures = new[kernel["key"]]
        assert kernel["new"]["scratch"] == figures.scratch
        assert kernel["new"]["vgpr_spills"] == figures.vgpr_spills
        assert kernel["new"]["occupancy"] == figures.occupancy
        assert kernel["name"] == demangle(kernel["key"])
    if direction == "upgrade":
        # clang-22 against clang-15: the spills go away, occupancy drops for the kernels that now hold
        # their data in VGPRs (topk<32>: 272 B of scratch for 136 VGPRs).
        assert summary["spills_or_scratch_worse"] == 0
        assert "_Z4topkILi32EEvPKfiPfPi" in expected["mixed"]
        assert summary["added"] == 2 and summary["added_using_scratch"] == 1
    else:
        assert summary["spills_or_scratch_worse"] >= 4
        assert summary["removed"] == 2
    # The sentence, on every format.
    c = summary
    plural = lambda n, one, many: one if n == 1 else many  # noqa: E731
    start = (f"{c['spills_or_scratch_worse']} kernel{plural(c['spills_or_scratch_worse'], '', 's')} "
             f"{plural(c['spills_or_scratch_worse'], 'has', 'have')} new or larger spills or scratch, "
             f"{c['occupancy_worse']} kernel{plural(c['occupancy_worse'], '', 's')} "
             f"{plural(c['occupancy_worse'], 'has', 'have')} less occupancy, "
             f"{c['better']} kernel{plural(c['better'], '', 's')} {plural(c['better'], 'is', 'are')} better")
    assert document["sentence"].startswith(start)
    table = run_cli(capsys, "compare", new_bin, "--against", old_bin)
    assert table.out.strip().splitlines()[-1] == document["sentence"]
    md = run_cli(capsys, "compare", new_bin, "--against", old_bin, "--format", "markdown")
    assert document["sentence"] in md.out.splitlines()


# A row of the kernel table (the totals' largest changes are rows too: "| scratch (B/lane) | worse | ...").
KERNEL_ROW = ("| worse |", "| better |", "| mixed |", "| same |")


def test_markdown_table(builds, capsys):
    run = run_cli(capsys, "compare", builds.new, "--against", builds.old, "--format", "markdown")
    assert run.status == 0
    lines = run.out.splitlines()
    header = lines.index("| | kernel | target | VGPRs | spilled VGPRs | scratch B/lane | occupancy | next step |")
    assert lines[header + 1] == "|---|---|---|--:|--:|--:|--:|---|"
    rows = [l for l in lines[header + 2:] if l.startswith("| ")]
    old, new = oracle(builds.old, builds.work), oracle(builds.new, builds.work)
    changed = oracle_classes(new, old)
    assert len(rows) == len(changed["worse"] | changed["better"] | changed["mixed"])
    topk = next(r for r in rows if "`topk<32>`" in r)           # short names, as in every table
    cells = [c.strip() for c in topk.strip("|").split(" | ")]
    was, now = old["_Z4topkILi32EEvPKfiPfPi"], new["_Z4topkILi32EEvPKfiPfPi"]
    # The next step by the fixture's gfx1100 formula (which matches clang's remarks): the most VGPRs
    # that still give one more wave, and the waves they give.
    at_most = max(v for v in range(1, now.vgprs) if gfx1100_occupancy(v, now.lds, now.max_workgroup) > now.occupancy)
    assert cells == ["mixed", "`topk<32>`", f"`{TARGET}`", f"{was.vgprs} -> {now.vgprs}",
                     "0", "272 -> 0", f"16 -> {now.occupancy}",
                     f"VGPRs {was.vgprs} -> {now.vgprs}, {now.occupancy} waves; {at_most} or fewer for "
                     f"{gfx1100_occupancy(at_most, now.lds, now.max_workgroup)}"]
    assert all(r.count(" | ") == 7 for r in rows)
    assert "2 kernels only in the new build, worst first:" in lines      # short sections stay open
    assert "- `extra_private_table` (`gfx1100`): " in run.out
    full = run_cli(capsys, "compare", builds.new, "--against", builds.old, "--format", "markdown", "--names", "full")
    assert "`void topk<32>(float const*, int, float*, int*)`" in full.out
    # --all adds the unchanged kernels; --limit cuts the table.
    everything = run_cli(capsys, "compare", builds.new, "--against", builds.old, "--format", "markdown", "--all")
    assert len([l for l in everything.out.splitlines() if l.startswith(KERNEL_ROW)]) == len(set(old) & set(new))
    limited = run_cli(capsys, "compare", builds.new, "--against", builds.old, "--format", "markdown", "--limit", "2")
    assert len([l for l in limited.out.splitlines() if l.startswith(KERNEL_ROW)]) == 2
    assert (f"... and {len(rows) - 2} more not shown (--limit; `--format json` lists every kernel)."
            in limited.out.splitlines())


def test_markdown_escapes_pipes_and_backticks():
    old = aggregate([record("_Z1fv", scratch=0)])
    old[("gfx1100", "_Z1fv")].name = "void f<a | b>(int)"
    new = aggregate([record("_Z1fv", scratch=16)])
    new[("gfx1100", "_Z1fv")].name = "void f<a | b>(`x`)"
    text = markdown(compare(new, old, ["new|.so"], ["old.so"]), names="full")
    row = next(l for l in text.splitlines() if l.startswith("| worse"))
    assert "`` void f<a \\| b>(`x`) ``" in row
    assert row.replace("\\|", "").count("|") == 9
    assert "`new\\|.so`" in text


def test_sides_from_report_json_and_baseline(builds, capsys, tmp_path):
    reference = run_cli(capsys, "compare", builds.new, "--against", builds.old, "--format", "json")
    report = tmp_path / "old-report.json"
    assert run_cli(capsys, "report", builds.old, "--all", "--json", "-o", report).status == 0
    baseline = tmp_path / "old-baseline.json"
    # --record-all: every kernel's recorded values, so this side is the whole build.
    assert run_cli(capsys, "baseline", "write", builds.old, "-o", baseline, "--note", "clang-15",
                   "--record-all").status == 0
    expected = orjson.loads(reference.out)
    for side in (report, baseline):
        run = run_cli(capsys, "compare", builds.new, "--against", side, "--format", "json")
        assert run.status == 0, run.err
        document = orjson.loads(run.out)
        assert document["summary"] == expected["summary"]
        assert document["kernels"] == expected["kernels"]
        assert document["old"] == [str(side)]


def test_fail_on_worse(builds, capsys):
    # clang-15 against clang-22: larger spills and scratch.
    run = run_cli(capsys, "compare", builds.old, "--against", builds.new, "--fail-on-worse")
    assert run.status == 1
    # clang-22 against clang-15: no spill got worse, but occupancy did (mixed kernels), and a new
    # kernel arrives with scratch.
    run = run_cli(capsys, "compare", builds.new, "--against", builds.old, "--fail-on-worse")
    assert run.status == 1
    assert run_cli(capsys, "compare", builds.new, "--against", builds.new, "--fail-on-worse").status == 0
    same = run_cli(capsys, "compare", builds.new, "--against", builds.new_library, "--format", "json")
    assert orjson.loads(same.out)["summary"]["same"] == len(oracle(builds.new, builds.work))


def test_classify_rules():
    def r(**kw):
        return aggregate([record("_Z1fv", **kw)])[("gfx1100", "_Z1fv")].resources
    assert classify(r(scratch=0), r(scratch=16)) == (["scratch"], [])
    assert classify(r(scratch=16), r(scratch=0)) == ([], ["scratch"])
    assert classify(r(vgpr_spills=2), r(sgpr_spills=3)) == (["spills"], [])
    assert classify(r(dynamic_stack=False), r(dynamic_stack=True)) == (["scratch"], [])
    assert classify(r(occupancy=16), r(occupancy=10)) == (["occupancy"], [])
    assert classify(r(scratch=272, occupancy=16), r(scratch=0, occupancy=10)) == (["occupancy"], ["scratch"])
    assert classify(r(occupancy=None), r(occupancy=10)) == ([], [])
    assert classify(r(vgprs=10), r(vgprs=100)) == ([], [])


def test_sentence_grammar():
    old = aggregate([record("_Z1av", scratch=16), record("_Z1bv", occupancy=16), record("_Z1cv")])
    new = aggregate([record("_Z1av", scratch=0), record("_Z1bv", occupancy=8), record("_Z1dv")])
    assert compare(new, old).sentence() == (
        "0 kernels have new or larger spills or scratch, 1 kernel has less occupancy, 1 kernel is better, "
        "0 unchanged, 1 only in the new build, 1 only in the old build.")


def test_errors(builds, capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_one_line_error(run_cli(capsys, "compare", builds.new, "--against", empty), "no kernels found")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "something/else"}')
    assert_one_line_error(run_cli(capsys, "compare", bad, "--against", builds.old),
                          "not a spillway report or baseline")
    newer = tmp_path / "newer.json"
    newer.write_text('{"schema": "spillway.baseline/9"}')
    assert_one_line_error(run_cli(capsys, "compare", builds.new, "--against", newer), "newer than")
    run = run_cli(capsys, "compare", builds.new)
    assert run.status == 2 and "--against" in run.err
