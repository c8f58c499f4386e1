"""compare's totals (gate.totals): sums per metric over the matched kernels,
per side for the others, the largest changes per metric; in the JSON
(spillway.compare/3, validated), the table and the Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from spillway.gate.compare import compare
from spillway.gate.kernels import KernelUsage, Resources
from spillway.render.markdown import compare_markdown
from spillway.gate.totals import TOP, totals
from spillway.schemas import schema_for
from support.gate_fixtures import run_cli

OCCUPANCY = Path(__file__).resolve().parents[2] / "data" / "occupancy"


def usage(key: str, scratch=0, spills=0, vgprs=8, occupancy=8, dynamic_stack=False, target="gfx90a") -> KernelUsage:
    return KernelUsage(target, key, key, Resources(scratch=scratch, dynamic_stack=dynamic_stack, vgpr_spills=spills,
                                                   sgpr_spills=0, vgprs=vgprs, agprs=0, sgprs=10, lds=0,
                                                   occupancy=occupancy))


def side(*usages: KernelUsage) -> dict:
    return {(u.target, u.key): u for u in usages}


def test_sums_over_matched_kernels_and_per_side():
    old = side(usage("a", scratch=16, vgprs=40, occupancy=8), usage("b", spills=3, vgprs=64, occupancy=6),
               usage("gone", scratch=100, vgprs=7), usage("c", vgprs=None, occupancy=None))
    new = side(usage("a", scratch=0, vgprs=48, occupancy=6), usage("b", spills=5, vgprs=64, occupancy=7),
               usage("new1", scratch=32, spills=2, vgprs=9), usage("new2", dynamic_stack=True, vgprs=1),
               usage("c", vgprs=12, occupancy=None))
    t = compare(new, old).totals()
    assert t.matched == 3
    assert (t.metric("scratch").old, t.metric("scratch").new, t.metric("scratch").kernels) == (16, 0, 3)
    assert (t.metric("spills").old, t.metric("spills").new) == (3, 5)
    # c's VGPRs are unknown on the old side: not in the sums, and said so.
    assert (t.metric("vgprs").old, t.metric("vgprs").new, t.metric("vgprs").kernels) == (104, 112, 2)
    assert (t.losing_waves, t.gaining_waves) == (1, 1)
    assert (t.added.kernels, t.added.scratch, t.added.spills, t.added.vgprs, t.added.using_scratch,
            t.added.dynamic_stack) == (2, 32, 2, 10, 2, 1)
    assert (t.removed.kernels, t.removed.scratch, t.removed.vgprs) == (1, 100, 7)
    top = {r.metric: r for r in t.top}
    assert [d.key for d in top["scratch"].improvements] == ["a"] and not top["scratch"].regressions
    assert [d.key for d in top["occupancy"].regressions] == ["a"]
    assert [d.key for d in top["occupancy"].improvements] == ["b"]
    assert [d.key for d in top["vgprs"].regressions] == ["a"]


def test_top_lists_hold_the_largest_changes_first_at_most_ten():
    old = side(*(usage(f"k{i:02}", scratch=0) for i in range(25)))
    new = side(*(usage(f"k{i:02}", scratch=4 * (i % 13)) for i in range(25)))
    t = totals(compare(new, old).kernels, [], [])
    (scratch,) = [r for r in t.top if r.metric == "scratch"]
    assert len(scratch.regressions) == TOP
    changes = [d.new.scratch for d in scratch.regressions]
    assert changes == sorted(changes, reverse=True) and changes[0] == 48
    # 48 B: k12 only; 44 B: k11 and k24, by name.
    assert [d.key for d in scratch.regressions[:3]] == ["k12", "k11", "k24"]
    assert scratch.improvements == ()


def test_compare_json_totals_equal_the_sums_of_its_own_rows(capsys):
    new = sorted(str(p) for p in (OCCUPANCY / "clang-24").glob("*.ccob"))
    old = sorted(str(p) for p in (OCCUPANCY / "clang-23").glob("*.ccob"))
    done = run_cli(capsys, "compare", *new, "--against", *old, "--json")
    document = json.loads(done.out)
    jsonschema.validate(document, schema_for("compare"))
    assert document["schema"] == "spillway.compare/6"
    t = document["totals"]
    rows = document["kernels"]
    assert t["matched"]["kernels"] == len(rows) == document["summary"]["compared"]
    for metric, figure in (("scratch", lambda r: r["scratch"]), ("vgprs", lambda r: r["vgprs"]),
                           ("spills", lambda r: r["vgpr_spills"] + r["sgpr_spills"]),
                           ("occupancy", lambda r: r["occupancy"])):
        known = [(figure(k["old"]), figure(k["new"])) for k in rows
                 if figure(k["old"]) is not None and figure(k["new"]) is not None]
        assert t["matched"][metric] == {"kernels": len(known), "old": sum(o for o, _ in known),
                                        "new": sum(n for _, n in known)}
    losing = sum(1 for k in rows if None not in (k["old"]["occupancy"], k["new"]["occupancy"])
                 and k["new"]["occupancy"] < k["old"]["occupancy"])
    assert t["matched"]["losing_waves"] == losing == document["summary"]["occupancy_worse"] > 0
    assert t["added"]["kernels"] == len(document["added"])
    assert t["added"]["vgprs"] == sum(k["resources"]["vgprs"] or 0 for k in document["added"])
    worst = t["top"]["occupancy"]["regressions"]
    assert 0 < len(worst) <= TOP
    drops = [k["old"] - k["new"] for k in worst]
    assert drops == sorted(drops, reverse=True)
    largest = max(k["old"]["occupancy"] - k["new"]["occupancy"] for k in rows
                  if None not in (k["old"]["occupancy"], k["new"]["occupancy"]))
    assert drops[0] == largest
    # The table and the Markdown lead with them.
    table = run_cli(capsys, "compare", *new, "--against", *old).out
    assert table.index("totals over") < table.index("worse ")
    assert f"{losing} kernels lose waves" in table
    text = compare_markdown(compare({}, {}), False)
    assert "| totals over 0 kernels in both builds |" in text
