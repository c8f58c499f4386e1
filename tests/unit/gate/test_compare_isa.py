"""`spillway compare --isa`: what each kernel's machine code did between two
builds, checked against llvm-objdump's figures of the two builds
(tests/data/isa/expected.json: gfx90a kernels.cpp built by clang 22 and by
clang 19), from binaries and from report --isa JSON, in every format; without
--isa nothing changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from support.gate_fixtures import assert_one_line_error, run_cli
from spillway.schemas import schema_for

DATA = Path(__file__).resolve().parents[2] / "data" / "isa"
EXPECTED = json.loads((DATA / "expected.json").read_text())["fixtures"]
NEW, OLD = "gfx90a.clang22.co", "gfx90a.clang19.co"


def kernels_of(fixture: str) -> dict[str, dict]:
    return {name: k for name, k in EXPECTED[fixture]["functions"].items() if k["kind"] == "kernel"}


def oracle_code(found: dict) -> dict:
    """What compare shows of one side, from objdump's figures."""
    return {"code_sha256": [found["code_sha256"]],
            "scratch_bytes": found["scratch_load_bytes"] + found["scratch_store_bytes"],
            "scratch_in_loops": found["scratch_in_loops"], "agpr_copies": found["agpr_writes"] + found["agpr_reads"],
            "complete": found["status"] == "complete"}


@pytest.fixture(scope="module")
def sides(tmp_path_factory) -> tuple[Path, Path]:
    # Each build in a folder of its own, under the same file name (kernels are matched by target and key).
    work = tmp_path_factory.mktemp("builds")
    for side, fixture in (("new", NEW), ("old", OLD)):
        (work / side).mkdir()
        shutil.copy(DATA / "co" / fixture, work / side / "kernels.co")
    return work / "new" / "kernels.co", work / "old" / "kernels.co"


def compare_json(capsys, new, old, *more) -> dict:
    run = run_cli(capsys, "compare", new, "--against", old, "--json", *more)
    assert run.status == 0, run.err
    return json.loads(run.out)


def test_verdicts_and_figures_equal_llvm_objdump(capsys, sides):
    document = compare_json(capsys, *sides, "--isa")
    jsonschema.validate(document, schema_for("compare"))
    new, old = kernels_of(NEW), kernels_of(OLD)
    both = sorted(set(new) & set(old))
    assert sorted(k["name"] for k in document["kernels"]) == both
    verdicts = {}
    for diff in document["kernels"]:
        name, code = diff["name"], diff["code"]
        assert code["old"] == oracle_code(old[name]) and code["new"] == oracle_code(new[name]), name
        identical = old[name]["code_sha256"] == new[name]["code_sha256"]
        expected = "identical code" if identical else \
            "same figures, code changed" if diff["status"] == "same" else "code changed"
        assert code["verdict"] == expected, name
        moved = old[name]["scratch_in_loops"] == 0 < new[name]["scratch_in_loops"]
        assert ("spills moved into a loop" in code["notes"]) == moved, name
        verdicts[name] = code["verdict"]
    # the two builds exercise every verdict but "not read", and a spill moving into a loop
    assert set(verdicts.values()) == {"identical code", "same figures, code changed", "code changed"}
    assert "spills moved into a loop" in document["kernels"][[d["name"] for d in document["kernels"]]
                                                            .index("spill_in_loop")]["code"]["notes"]
    counts = document["summary"]["code"]
    assert counts == {"identical": list(verdicts.values()).count("identical code"),
                      "same_figures_code_changed": list(verdicts.values()).count("same figures, code changed"),
                      "changed": list(verdicts.values()).count("code changed"), "not_read": 0}
    assert f"Code: {counts['identical']} identical, " in document["sentence"]


def test_a_build_against_itself_is_identical_code(capsys, sides):
    document = compare_json(capsys, sides[0], sides[0], "--isa")
    assert {d["code"]["verdict"] for d in document["kernels"]} == {"identical code"}
    assert all(d["code"]["notes"] == [] for d in document["kernels"])


def test_report_json_written_with_isa_gives_the_same_comparison(capsys, sides, tmp_path):
    reports = []
    for side, path in zip(("new", "old"), sides):
        out = tmp_path / f"{side}.json"
        assert run_cli(capsys, "report", "--isa", "--json", "-o", out, path).status == 0
        reports.append(out)
    from_binaries = compare_json(capsys, *sides, "--isa")
    from_reports = compare_json(capsys, *reports, "--isa")
    assert from_reports["kernels"] == from_binaries["kernels"]
    assert from_reports["summary"] == from_binaries["summary"]
    # a report written without --isa: its side's code is not read
    plain = tmp_path / "plain.json"
    assert run_cli(capsys, "report", "--json", "-o", plain, sides[1]).status == 0
    mixed = compare_json(capsys, reports[0], plain, "--isa")
    assert {d["code"]["verdict"] for d in mixed["kernels"]} == {"code not read"}
    assert all(d["code"]["old"] is None and d["code"]["new"] is not None for d in mixed["kernels"])
    assert "not read on both sides" in mixed["sentence"]


def test_a_baseline_side_has_no_code(capsys, sides, tmp_path):
    baseline = tmp_path / "baseline.json"
    assert run_cli(capsys, "baseline", "write", sides[1], "-o", baseline, "--note", "old").status == 0
    document = compare_json(capsys, sides[0], baseline, "--isa")
    assert {d["code"]["verdict"] for d in document["kernels"]} == {"code not read"}


def test_without_isa_nothing_changes(capsys, sides):
    document = compare_json(capsys, *sides)
    assert "code" not in document["summary"] and all("code" not in d for d in document["kernels"])
    assert "Code:" not in document["sentence"]
    with_isa = compare_json(capsys, *sides, "--isa")

    def without_code(diff: dict) -> dict:
        # --isa: the code object, and the machine code's figures in each side's resources
        out = {k: v for k, v in diff.items() if k != "code"}
        for side in ("old", "new"):
            out[side] = {k: v for k, v in diff[side].items() if k not in ("loop_scratch", "agpr_copies")}
        return out

    assert [without_code(d) for d in with_isa["kernels"]] == document["kernels"]
    assert with_isa["sentence"].startswith(document["sentence"] + " Code: ")
    run = run_cli(capsys, "compare", *sides[:1], "--against", sides[1], "--format", "tsv")
    assert run.out.splitlines()[0].split("\t")[-1] == "next_step"
    run = run_cli(capsys, "compare", *sides[:1], "--against", sides[1])
    assert "code" not in run.out.lower().replace("kernels.co", "")


def test_tsv_markdown_and_table(capsys, sides, monkeypatch):
    document = compare_json(capsys, *sides, "--isa", "--all")
    by_name = {d["name"]: d for d in document["kernels"]}
    run = run_cli(capsys, "compare", sides[0], "--against", sides[1], "--isa", "--all", "--format", "tsv")
    header, *rows = [line.split("\t") for line in run.out.splitlines()]
    assert header[header.index("next_step") + 1:] == ["code", "code_notes", "old_code_sha256", "new_code_sha256",
                                                      "old_code_scratch_bytes", "new_code_scratch_bytes",
                                                      "old_scratch_in_loops", "new_scratch_in_loops",
                                                      "old_agpr_copies", "new_agpr_copies"]
    for row in rows:
        cells = dict(zip(header, row))
        if cells["status"] in ("added", "removed"):
            assert cells["code"] == ""
            continue
        code = by_name[cells["name"]]["code"]
        assert cells["code"] == code["verdict"] and cells["code_notes"] == ",".join(code["notes"])
        for side in ("old", "new"):
            assert cells[f"{side}_code_sha256"] == ",".join(code[side]["code_sha256"])
            assert int(cells[f"{side}_code_scratch_bytes"]) == code[side]["scratch_bytes"]
            assert int(cells[f"{side}_scratch_in_loops"]) == code[side]["scratch_in_loops"]
            assert int(cells[f"{side}_agpr_copies"]) == code[side]["agpr_copies"]
    loop = by_name["spill_in_loop"]["code"]
    words = (f"code changed (spills moved into a loop): scratch B {loop['old']['scratch_bytes']} -> "
             f"{loop['new']['scratch_bytes']}, in loops 0 -> {loop['new']['scratch_in_loops']}")
    run = run_cli(capsys, "compare", sides[0], "--against", sides[1], "--isa", "--format", "markdown")
    assert "| next step | code |" in run.out
    assert any(line.startswith("| worse | `spill_in_loop`") and line.endswith(f"| {words} |")
               for line in run.out.splitlines())
    # the table: a code column when it fits, else a line per kernel
    monkeypatch.setenv("COLUMNS", "250")
    wide = run_cli(capsys, "compare", sides[0], "--against", sides[1], "--isa").out
    header = next(line for line in wide.splitlines() if " kernel " in line and " target " in line)
    assert " code " in header and "code changed (spills moved into a loop)" in wide
    monkeypatch.setenv("COLUMNS", "100")
    narrow = run_cli(capsys, "compare", sides[0], "--against", sides[1], "--isa").out
    assert f"code: spill_in_loop [{by_name['spill_in_loop']['target']}]: {words}" in narrow


def test_a_bad_isa_object_in_report_json(capsys, sides, tmp_path):
    out = tmp_path / "new.json"
    assert run_cli(capsys, "report", "--isa", "--json", "-o", out, sides[0]).status == 0
    document = json.loads(out.read_text())
    document["kernels"][1]["isa"]["scratch_in_loops"] = "many"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    run = run_cli(capsys, "compare", bad, "--against", sides[1], "--isa")
    assert_one_line_error(run, "kernel 1: isa is", "scratch_in_loops (count)")


def test_mix_verdicts_equal_llvm_objdump(capsys, sides):
    """code.mix: the classes that changed between clang 19 and clang 22, and
    the verdict, from objdump's mixes (expected.json's ``mix``)."""
    from spillway.gate.code_change import mix_change

    document = compare_json(capsys, *sides, "--isa")
    new, old = kernels_of(NEW), kernels_of(OLD)
    verdicts = set()
    for diff in document["kernels"]:
        name = diff["name"]
        expected = mix_change(old[name]["mix"], new[name]["mix"]).as_dict()
        assert diff["code"]["mix"] == expected, name
        changed = {c["class"] for c in expected["changed"]}
        assert (expected["verdict"] in ("arithmetic changed", "matrix and memory work identical, spill traffic and "
                                        "ALU changed")) == bool(changed & {"valu", "salu", "vmem", "smem", "lds",
                                                                           "matrix"}), name
        verdicts.add(expected["verdict"])
        assert diff["code"]["lines"] is None          # no line table on either side
    assert {"identical mix", "arithmetic changed", "matrix and memory work identical, spill traffic and ALU changed"} \
        <= verdicts
    assert "with the same matrix and memory work and only spill traffic and ALU changed" in document["sentence"]


def test_an_older_report_has_no_mix(capsys, sides, tmp_path):
    """A spillway.report/3 side (isa objects without mix): code.mix is null."""
    out = tmp_path / "new.json"
    assert run_cli(capsys, "report", "--isa", "--json", "-o", out, sides[0]).status == 0
    document = json.loads(out.read_text())
    document["schema"] = "spillway.report/3"
    for kernel in document["kernels"]:
        del kernel["isa"]["mix"]
    out.write_text(json.dumps(document))
    compared = compare_json(capsys, out, sides[1], "--isa")
    assert all(d["code"]["mix"] is None for d in compared["kernels"])


def _with_lines(record: dict, lines: list[tuple[str, int, int]], more: int = 0) -> None:
    record["isa"]["source_lines"] = {
        "status": "placed", "comp_dir": "/build", "more": more,
        "top": [{"file": file, "line": line, "load_bytes": 0, "store_bytes": loop, "loop_load_bytes": 0,
                 "loop_store_bytes": loop, "innermost_load_bytes": 0, "innermost_store_bytes": loop, "accesses": 1,
                 "inferred": 0, "agpr_copies": 0, "agpr_spill_copies": 0} for file, line, loop in lines]}


def test_lines_that_gained_or_lost_scratch(capsys, sides, tmp_path):
    """Two reports whose spill_in_loop records carry source lines (files under
    their comp_dir, as a line table joins them): compare names the lines that
    gained and lost scratch bytes in loops, relative to the comp_dir."""
    reports = []
    for side, path, lines in (("new", sides[0], [("/build/k.hip", 142, 36), ("/build/k.hip", 90, 8)]),
                              ("old", sides[1], [("/build/k.hip", 90, 16), ("/elsewhere/h.h", 7, 4)])):
        out = tmp_path / f"{side}.json"
        assert run_cli(capsys, "report", "--isa", "--json", "-o", out, path).status == 0
        document = json.loads(out.read_text())
        for kernel in document["kernels"]:
            if kernel["name"] == "spill_in_loop":
                _with_lines(kernel, lines)
        out.write_text(json.dumps(document))
        reports.append(out)
    compared = compare_json(capsys, *reports, "--isa")
    jsonschema.validate(compared, schema_for("compare"))
    diff = next(d for d in compared["kernels"] if d["name"] == "spill_in_loop")
    assert diff["code"]["lines"] == {
        "gained": [{"file": "k.hip", "line": 142, "old_loop_bytes": 0, "new_loop_bytes": 36}],
        "lost": [{"file": "k.hip", "line": 90, "old_loop_bytes": 16, "new_loop_bytes": 8},
                 {"file": "/elsewhere/h.h", "line": 7, "old_loop_bytes": 4, "new_loop_bytes": 0}],
        "more_gained": 0, "more_lost": 0}
    assert all(d["code"]["lines"] is None for d in compared["kernels"] if d["name"] != "spill_in_loop")
