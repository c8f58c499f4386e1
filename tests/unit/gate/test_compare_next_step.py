"""spillway compare shows each kernel's next step ("VGPRs 96 -> 121, 10 waves;
120 or fewer for 12") from the new side's occupancy_next, and the check and
compare documents name the occupancy model they used.

Real builds: tests/data/compare_next_step.hip compiled device-only for gfx1100
by bookworm's clang-22 with -Rpass-analysis=kernel-resource-usage, an old and
a new variant (more VGPRs, and more LDS for two_limits), then the variants at
the next step and one above it, whose remarks are the oracle: with every need
at its ``at_most`` clang prints ``waves``, one above a need it prints the
kernel's current figure.  llvm-readelf --notes gives the figures the llvm23
model is checked on.
"""

from __future__ import annotations

import jsonschema
import orjson
import pytest

from spillway.gate.kernels import Resources, aggregate, aggregate_rows, worse_next
from spillway.gate.compare import compare
from spillway.render.markdown import compare_markdown as markdown
from spillway.gate.wording import next_step
from spillway.report.reader import KernelTable
from spillway.resources.occupancy import compute
from spillway.schemas import schema_for
from support.gate_fixtures import DATA, assert_one_line_error, load_json, record, run_cli, write_report
from support.oracles import readelf_metadata
from support.toolchains import parse_remarks

SOURCE = DATA / "compare_next_step.hip"
TARGET = "gfx1100"
OLD = {"STEP_TOP": "v95", "TWO_TOP": "v95", "TWO_LDS": "16384"}
NEW = {"STEP_TOP": "v120", "TWO_TOP": "v120", "TWO_LDS": "24000"}
OCCUPANCY = "Occupancy [waves/SIMD]"


def build(builder, figures: dict[str, str]):
    """(code object, remarks by kernel) of one variant."""
    code_object, stderr = builder.remarks(22, SOURCE, TARGET, *(f"-D{k}={v}" for k, v in sorted(figures.items())))
    return code_object, parse_remarks(stderr)


@pytest.fixture(scope="module")
def sides(builder):
    return build(builder, OLD), build(builder, NEW)


def compare_json(capsys, new, old, *extra) -> dict:
    run = run_cli(capsys, "compare", new, "--against", old, "--format", "json", *extra)
    assert run.status == 0, run.err
    document = orjson.loads(run.out)
    jsonschema.validate(document, schema_for("compare"))
    return document


def step_figures(row: dict) -> dict[str, str]:
    """The source's macros that put each kernel at its next step."""
    figures = dict(NEW)
    for kernel, top in (("vgpr_step", "STEP_TOP"), ("two_limits", "TWO_TOP")):
        needs = {n["resource"]: n["at_most"] for n in row[kernel]["occupancy_next"]["needs"]}
        figures[top] = f"v{needs['vgpr'] - 1}"           # clobbering vN makes vgpr_count N + 1
        if kernel == "two_limits":
            figures["TWO_LDS"] = str(needs["lds"])
    return figures


def test_next_step_agrees_with_the_remarks_under_llvm22(builder, capsys, sides, monkeypatch):
    (old, old_remarks), (new, new_remarks) = sides
    document = compare_json(capsys, new, old, "--occupancy-model", "llvm22")
    assert document["occupancy_model"] == "llvm22"
    rows = {k["key"]: k for k in document["kernels"]}
    for name, row in rows.items():
        assert row["old"]["occupancy"] == int(old_remarks[name][OCCUPANCY])
        assert row["new"]["occupancy"] == int(new_remarks[name][OCCUPANCY])
        assert row["new"]["vgprs"] == int(new_remarks[name]["VGPRs"])
    # The row carries the reader's record, under the same model.
    report = run_cli(capsys, "report", new, "--all", "--format", "json", "--occupancy-model", "llvm22")
    records = {r["key"]: r for r in orjson.loads(report.out)["kernels"]}
    assert {k: r["occupancy_next"] for k, r in rows.items()} == {k: r["occupancy_next"] for k, r in records.items()}
    assert rows["steady"]["occupancy_next"] is None and rows["steady"]["new"]["occupancy"] == 16
    assert [n["resource"] for n in rows["vgpr_step"]["occupancy_next"]["needs"]] == ["vgpr"]
    assert [n["resource"] for n in rows["two_limits"]["occupancy_next"]["needs"]] == ["vgpr", "lds"]

    # Oracle: at the next step clang prints `waves` ...
    at_step = step_figures(rows)
    _, remarks = build(builder, at_step)
    for name in ("vgpr_step", "two_limits"):
        step = rows[name]["occupancy_next"]
        assert int(remarks[name]["VGPRs"]) == step["needs"][0]["at_most"]
        assert int(remarks[name][OCCUPANCY]) == step["waves"] > rows[name]["new"]["occupancy"], name
    # ... and one above any need, the kernel's current figure (two_limits needs both).
    vgpr_above = dict(at_step, STEP_TOP=f"v{int(at_step['STEP_TOP'][1:]) + 1}",
                      TWO_TOP=f"v{int(at_step['TWO_TOP'][1:]) + 1}")
    lds_above = dict(at_step, TWO_LDS=str(int(at_step["TWO_LDS"]) + 1))
    for figures, kernels in ((vgpr_above, ("vgpr_step", "two_limits")), (lds_above, ("two_limits",))):
        _, remarks = build(builder, figures)
        for name in kernels:
            assert int(remarks[name][OCCUPANCY]) == rows[name]["new"]["occupancy"], (name, figures)

    # The text shows it as the issue asks, from those figures.
    vgpr_step, two = rows["vgpr_step"], rows["two_limits"]
    (need,) = vgpr_step["occupancy_next"]["needs"]
    expected_step = (f"VGPRs {vgpr_step['old']['vgprs']} -> {vgpr_step['new']['vgprs']}, "
                     f"{vgpr_step['new']['occupancy']} waves; {need['at_most']} or fewer for "
                     f"{vgpr_step['occupancy_next']['waves']}")
    vgprs, lds = two["occupancy_next"]["needs"]
    expected_two = (f"VGPRs {two['old']['vgprs']} -> {two['new']['vgprs']}, LDS {two['old']['lds']} -> "
                    f"{two['new']['lds']} B, {two['new']['occupancy']} waves; {vgprs['at_most']} or fewer VGPRs "
                    f"and {lds['at_most']} or fewer B of LDS for {two['occupancy_next']['waves']}")
    md = run_cli(capsys, "compare", new, "--against", old, "--format", "markdown", "--occupancy-model", "llvm22")
    lines = md.out.splitlines()
    assert "| | kernel | target | VGPRs | spilled VGPRs | scratch B/lane | occupancy | next step |" in lines
    rows_md = [line for line in lines if line.startswith(("| worse |", "| better |", "| mixed |", "| same |"))]
    assert next(line for line in rows_md if "`vgpr_step`" in line).endswith(f"| {expected_step} |")
    assert next(line for line in rows_md if "`two_limits`" in line).endswith(f"| {expected_two} |")
    monkeypatch.setenv("COLUMNS", "250")                # room for the next-step column
    wide = run_cli(capsys, "compare", new, "--against", old, "--occupancy-model", "llvm22")
    row = next(line for line in wide.out.splitlines() if "vgpr_step" in line and not line.startswith("  "))
    assert row.rstrip().endswith(expected_step.replace(" -> ", " → "))
    verdict = wide.out.splitlines()[0]                 # the verdict and the counts lead, then the totals
    header = next(line for line in wide.out.splitlines() if "kernel" in line and "target" in line)
    assert verdict == wide.out.strip().splitlines()[-1] and "less occupancy" in verdict
    assert "next step" in header and "next step:" not in wide.out
    monkeypatch.setenv("COLUMNS", "80")                 # too narrow: one line per changed kernel instead
    narrow = run_cli(capsys, "compare", new, "--against", old, "--occupancy-model", "llvm22")
    assert all(len(line) <= 80 for line in narrow.out.splitlines() if "gfx1100" in line and "step" not in line)
    assert f"next step: vgpr_step [{TARGET}]: {expected_step}" in narrow.out.splitlines()
    assert f"next step: two_limits [{TARGET}]: {expected_two}" in narrow.out.splitlines()
    assert "steady" not in narrow.out


@pytest.mark.parametrize("model", ["llvm23", "llvm24"])
def test_next_step_is_the_models_on_llvm_readelfs_figures(capsys, sides, model):
    """Under another model the row carries that model's next step, computed from
    the figures llvm-readelf prints."""
    (old, _), (new, _) = sides
    document = compare_json(capsys, new, old, "--occupancy-model", model)
    assert document["occupancy_model"] == model
    rows = {k["key"]: k for k in document["kernels"]}
    kernels = {k[".name"]: k for k in readelf_metadata(new)["amdhsa.kernels"]}
    assert set(kernels) == set(rows)
    for name, kernel in kernels.items():
        occupancy = compute(TARGET, vgpr_count=kernel[".vgpr_count"], sgpr_count=kernel[".sgpr_count"],
                            group_segment_fixed_size=kernel[".group_segment_fixed_size"],
                            wavefront_size=kernel[".wavefront_size"],
                            max_flat_workgroup_size=kernel[".max_flat_workgroup_size"],
                            workgroup_processor_mode=kernel.get(".workgroup_processor_mode", 1) != 0, model=model)
        assert rows[name]["new"]["occupancy"] == occupancy.waves_per_simd
        assert rows[name]["occupancy_next"] == occupancy.next, name
    text = markdown(compare(aggregate(_records(capsys, new, model)), aggregate(_records(capsys, old, model))))
    step = rows["vgpr_step"]["occupancy_next"]
    assert f"; {step['needs'][0]['at_most']} or fewer for {step['waves']} |" in text


def _records(capsys, path, model) -> list[dict]:
    run = run_cli(capsys, "report", path, "--all", "--format", "json", "--occupancy-model", model)
    return orjson.loads(run.out)["kernels"]


def test_producer_follows_clang_22(capsys, sides):
    (old, _), (new, _) = sides
    producer = compare_json(capsys, new, old, "--occupancy-model", "producer")
    llvm22 = compare_json(capsys, new, old, "--occupancy-model", "llvm22")
    assert producer["occupancy_model"] == "producer"
    assert producer["kernels"] == llvm22["kernels"]
    assert compare_json(capsys, new, old)["occupancy_model"] == "llvm23"       # the default


def test_a_baseline_side_shows_no_next_step_of_its_own(capsys, sides, tmp_path, monkeypatch):
    """A baseline keeps no wave size or work-group bound: as the new side it has
    no next step (and says none); as the old side, the new build's is shown."""
    (old, _), (new, _) = sides
    new_baseline, old_baseline = tmp_path / "new-baseline.json", tmp_path / "old-baseline.json"
    for side, path in ((new, new_baseline), (old, old_baseline)):
        assert run_cli(capsys, "baseline", "write", side, "-o", path, "--note", "n", "--record-all",
                       "--occupancy-model", "llvm22").status == 0
    document = compare_json(capsys, new_baseline, old, "--occupancy-model", "llvm22")
    assert document["summary"]["occupancy_worse"] == 2
    assert all(k["occupancy_next"] is None for k in document["kernels"])
    md = run_cli(capsys, "compare", new_baseline, "--against", old, "--format", "markdown")
    assert all(line.endswith("| 16 -> 10 |  |") for line in md.out.splitlines() if line.startswith("| worse"))
    monkeypatch.setenv("COLUMNS", "250")
    text = run_cli(capsys, "compare", new_baseline, "--against", old)
    assert "next step" not in text.out and "or fewer" not in text.out
    # The new side a binary, the old one a baseline: the new build's step, the baseline's recorded figures.
    against_binary = compare_json(capsys, new, old, "--occupancy-model", "llvm22")
    against_baseline = compare_json(capsys, new, old_baseline, "--occupancy-model", "llvm22")
    assert against_baseline["kernels"] == against_binary["kernels"]
    row = next(k for k in against_baseline["kernels"] if k["key"] == "vgpr_step")
    (need,) = row["occupancy_next"]["needs"]
    shown = (f"VGPRs {row['old']['vgprs']} → {row['new']['vgprs']}, {row['new']['occupancy']} waves; "
             f"{need['at_most']} or fewer for {row['occupancy_next']['waves']}")
    assert shown in run_cli(capsys, "compare", new, "--against", old_baseline, "--occupancy-model", "llvm22").out


def test_added_kernels_show_their_next_step(capsys, tmp_path):
    step = {"waves": 12, "needs": [{"resource": "vgpr", "at_most": 120}]}
    new = write_report(tmp_path / "new.json", [_with_step(record("_Z1fv", vgprs=121, occupancy=10), step)])
    old = write_report(tmp_path / "old.json", [record("_Z1gv")])
    document = compare_json(capsys, new, old)
    assert document["added"][0]["occupancy_next"] == step and document["removed"][0]["occupancy_next"] is None
    md = run_cli(capsys, "compare", new, "--against", old, "--format", "markdown")
    assert "occupancy 10; VGPRs 121, 10 waves; 120 or fewer for 12" in md.out
    text = run_cli(capsys, "compare", new, "--against", old)
    assert "0 B/lane scratch; VGPRs 121, 10 waves; 120 or fewer for 12" in text.out


def _with_step(values: dict, step) -> dict:
    values.update(occupancy_next=step, occupancy_limit="vgpr")
    return values


# -- next steps of several instances ------------------------------------------------------

def test_instances_merge_their_next_steps():
    vgpr = {"waves": 12, "needs": [{"resource": "vgpr", "at_most": 120}]}
    lds = {"waves": 11, "needs": [{"resource": "lds", "at_most": 20000}]}
    tighter = {"waves": 12, "needs": [{"resource": "vgpr", "at_most": 96}]}
    assert worse_next(10, vgpr, 10, lds) == {"waves": 11, "needs": [{"resource": "vgpr", "at_most": 120},
                                                                    {"resource": "lds", "at_most": 20000}]}
    assert worse_next(10, lds, 10, vgpr) == worse_next(10, vgpr, 10, lds)
    assert worse_next(10, vgpr, 10, tighter) == tighter
    assert worse_next(8, lds, 10, vgpr) == lds          # the lower instance's
    assert worse_next(10, vgpr, 8, None) is None
    assert worse_next(10, vgpr, 10, None) is None       # nothing known raises the other one
    assert worse_next(None, None, 10, vgpr) == vgpr     # an unknown figure yields, as in Resources.worst
    records = [_with_step(record("_Z1fv", vgprs=121, occupancy=10, file="a.o"), vgpr),
               _with_step(record("_Z1fv", lds=24000, occupancy=10, file="b.o"), lds),
               _with_step(record("_Z1fv", occupancy=16, file="c.o"), None)]
    table = KernelTable()
    table.extend(records)
    from_records, from_rows = aggregate(records), aggregate_rows(table.rows)
    assert from_records[(TARGET, "_Z1fv")].occupancy_next == from_rows[(TARGET, "_Z1fv")].occupancy_next == \
        worse_next(10, vgpr, 10, lds)
    assert from_rows[(TARGET, "_Z1fv")].instances == 3


def test_next_step_text():
    r = Resources(0, False, 0, 0, 121, None, 90, 24000, 6)
    was = Resources(0, False, 0, 0, 96, None, 70, 4100, 8)
    assert next_step(r, None) == "" and next_step(r, {"waves": 7, "needs": []}) == ""
    assert next_step(r, {"waves": 7, "needs": [{"resource": "sgpr", "at_most": 80}]}, was) == \
        "SGPRs 70 -> 90, 6 waves; 80 or fewer for 7"
    assert next_step(r, {"waves": 7, "needs": [{"resource": "lds", "at_most": 16384}]}, was) == \
        "LDS 4100 -> 24000 B, 6 waves; 16384 or fewer B of LDS for 7"
    assert next_step(r, {"waves": 8, "needs": [{"resource": "workgroup", "at_most": 128},
                                               {"resource": "lds", "at_most": 16000}]}) == \
        ("work-group size, LDS 24000 B, 6 waves; 128 or fewer threads per work-group and 16000 or fewer B of "
         "LDS for 8")
    one = Resources(0, False, 0, 0, 256, 256, 16, 0, 1)
    assert next_step(one, {"waves": 2, "needs": [{"resource": "agpr", "at_most": 128}]}, one) == \
        "AGPRs 256, 1 wave; 128 or fewer for 2"
    assert next_step(Resources(0, False, 0, 0, 1, None, 1, 0, None), {"waves": 2, "needs": []}) == ""


@pytest.mark.parametrize("step, fragment", [
    ({"waves": 7}, "occupancy_next is"),
    ({"waves": 7, "needs": [{"resource": "vgprs", "at_most": 96}]}, "occupancy_next is"),
    ({"waves": "7", "needs": []}, "occupancy_next is"),
    ({"waves": 7, "needs": [{"resource": "vgpr", "at_most": -1}]}, "kernel 0: occupancy_next"),
])
def test_a_malformed_next_step_is_one_line(capsys, tmp_path, step, fragment):
    bad = write_report(tmp_path / "bad.json", [_with_step(record("_Z1fv"), step)])
    good = write_report(tmp_path / "good.json", [record("_Z1fv")])
    assert_one_line_error(run_cli(capsys, "compare", bad, "--against", good), fragment, str(bad))


# -- the model the documents name ----------------------------------------------------------

def test_check_document_names_the_model(capsys, sides, tmp_path):
    (old, _), (new, _) = sides
    baseline = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", old, "-o", baseline, "--note", "n", "--gate", "scratch,occupancy",
                   "--occupancy-model", "llvm24").status == 0
    written = load_json(baseline)
    assert written["occupancy_model"] == "llvm24"
    junit = tmp_path / "junit.xml"
    run = run_cli(capsys, "check", new, "--baseline", baseline, "--format", "json", "--junit", junit)
    document = orjson.loads(run.out)
    jsonschema.validate(document, schema_for("check"))
    assert run.status == 1 and document["occupancy_model"] == "llvm24"        # the baseline's
    assert '<property name="occupancy_model" value="llvm24" />' in junit.read_text()
    run = run_cli(capsys, "check", new, "--baseline", baseline, "--format", "json", "--occupancy-model", "llvm22")
    assert orjson.loads(run.out)["occupancy_model"] == "llvm22"                  # told otherwise
    # A version-1 baseline (as checks/baselines/ holds) names no model: llvm22.
    v1 = tmp_path / "v1.json"
    v1.write_bytes(orjson.dumps(_version_1_baseline(capsys, old)))
    run = run_cli(capsys, "check", new, "--baseline", v1, "--format", "json")
    document = orjson.loads(run.out)
    jsonschema.validate(document, schema_for("check"))
    assert run.status == 1 and document["occupancy_model"] == "llvm22"
    assert {f["actual"] for f in document["failures"]} == {10}


def _version_1_baseline(capsys, build) -> dict:
    """A spillway.baseline/1 file, as version 1 wrote them, gating scratch and occupancy."""
    kernels = []
    for r in _records(capsys, build, "llvm22"):
        recorded = Resources.from_record(r).as_dict()
        kernels.append({"target": r["target"], "key": r["key"], "name": r["name"],
                        "allow": {"scratch": recorded["scratch"], "occupancy": recorded["occupancy"]},
                        "recorded": recorded})
    return {"schema": "spillway.baseline/1", "note": "n", "gate": ["scratch", "occupancy"],
            "provenance": {"spillway_version": "0.1.0", "created": "2026-12-01T00:00:00Z",
                           "compilers": ["Debian clang version 22"], "code_object_versions": [6],
                           "targets": [TARGET], "files": [{"path": str(build), "sha256": "0" * 64}]},
            "kernels": kernels}


def test_check_result_follows_the_baseline_unless_told(capsys, sides, tmp_path):
    from spillway.gate.baseline import load_baseline
    from spillway.gate.check import check

    (old, _), _ = sides
    baseline = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", old, "-o", baseline, "--note", "n", "--record-all",
                   "--occupancy-model", "llvm23").status == 0
    loaded = load_baseline(str(baseline))
    usage = aggregate(_records(capsys, old, "llvm23"))
    assert check(usage, loaded, ["scratch"]).occupancy_model == "llvm23"
    assert check(usage, loaded, ["scratch"], occupancy_model="producer").to_json()["occupancy_model"] == "producer"
    loaded.occupancy_model = None
    assert check(usage, loaded, ["scratch"]).occupancy_model == "llvm22"


def test_github_annotations_carry_the_next_step(capsys, sides, tmp_path, monkeypatch):
    (old, _), (new, _) = sides
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    document = compare_json(capsys, new, old)
    row = next(k for k in document["kernels"] if k["key"] == "vgpr_step")
    (need,) = row["occupancy_next"]["needs"]
    run = run_cli(capsys, "compare", new, "--against", old, "--format", "github")
    (line,) = [line for line in run.out.splitlines() if line.startswith("::warning ") and "vgpr_step" in line]
    assert line.endswith(f"occupancy: {row['old']['occupancy']} -> {row['new']['occupancy']} against {old} "
                         f"(VGPRs {row['old']['vgprs']} -> {row['new']['vgprs']}, {row['new']['occupancy']} waves; "
                         f"{need['at_most']} or fewer for {row['occupancy_next']['waves']})")
    assert "| next step |" in (tmp_path / "summary.md").read_text()
