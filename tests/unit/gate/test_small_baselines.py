"""Small baselines (issue 9): by default a baseline records only the kernels
whose gated metrics are non-zero, plus per target the number of kernels it
was written from; --record-all keeps every kernel, and the occupancy, vgprs
and lds gates always need every kernel."""

from __future__ import annotations

import jsonschema
import pytest

from support.gate_fixtures import load_json, record, run_cli, write_report

from spillway.gate.baseline import FIGURE_DEFAULTS, Recorded, build, load_baseline, render
from spillway.gate.kernels import Inputs, Resources, aggregate, aggregate_rows
from spillway.report.reader import FIELDS, KernelTable
from spillway.schemas import schema_for

TOPK = "_Z4topkILi32EEvPKfiPfPi"
SILU = "_Z8silu_mulPKfS0_Pfi"
NORM = "_Z7rmsnormILi16384ELi128ELi128EEvPKDhS1_PDhf"
SGPRS = "_Z5sgprsPi"
DYN = "_Z4dynsPi"


@pytest.fixture
def build_report(tmp_path):
    return write_report(tmp_path / "build.json", [
        record(TOPK, scratch=272),
        record(SILU),                                         # clean: not recorded by default
        record(NORM, target="gfx90a", vgprs=128),             # clean on another target
        record(SGPRS, sgpr_spills=3),                         # spills without scratch
        record(DYN, dynamic_stack=True),
    ])


def keys(path) -> list[tuple[str, str]]:
    """(target, key) of every entry, as spillway reads the file (sorted by target, then key)."""
    return [(e.target, e.key) for e in load_baseline(str(path)).kernels]


def test_default_records_what_the_gate_finds_non_zero(tmp_path, capsys, epoch, build_report):
    out = tmp_path / "b.json"
    run = run_cli(capsys, "baseline", "write", build_report, "-o", out, "--note", "n")
    assert run.status == 0, run.err
    assert "2 kernels" in run.out and "of 5 read" in run.out and "--record-all" in run.out
    document = load_json(out)
    jsonschema.validate(document, schema_for("baseline"))
    assert keys(out) == [("gfx1100", DYN), ("gfx1100", TOPK)]        # scratch gate: scratch or dynamic stack
    assert document["record_all"] is False
    assert document["kernels_written_from"] == {"gfx1100": 4, "gfx90a": 1}
    assert run_cli(capsys, "check", build_report, "--baseline", out).status == 0
    # With spills gated too, the kernel that spills SGPRs without scratch is recorded.
    both = tmp_path / "both.json"
    assert run_cli(capsys, "baseline", "write", build_report, "-o", both, "--note", "n",
                   "--gate", "scratch,spills").status == 0
    assert keys(both) == [("gfx1100", DYN), ("gfx1100", TOPK), ("gfx1100", SGPRS)]
    run = run_cli(capsys, "check", build_report, "--baseline", both)
    assert run.status == 0, run.out
    assert "not in the baseline" not in run.out        # absence is the norm in a small baseline


def test_absent_kernels_are_held_to_zero(tmp_path, capsys, epoch, build_report):
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", build_report, "-o", out, "--note", "n").status == 0
    grown = write_report(tmp_path / "grown.json", [record(TOPK, scratch=272), record(SILU, scratch=16)])
    run = run_cli(capsys, "check", grown, "--baseline", out)
    assert run.status == 1
    assert "silu_mul" in run.out and "scratch 16 B/lane, allowed at most 0 B/lane" in run.out


@pytest.mark.parametrize("gate", ["occupancy", "vgprs", "lds", "scratch,lds"])
def test_gates_that_need_every_kernel_record_every_kernel(tmp_path, capsys, epoch, build_report, gate):
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", build_report, "-o", out, "--note", "n", "--gate", gate).status == 0
    assert len(keys(out)) == 5 and load_json(out)["record_all"] is True


def test_record_all_keeps_every_kernel_and_updates_keep_it(tmp_path, capsys, epoch, build_report):
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", build_report, "-o", out, "--note", "n", "--record-all").status == 0
    assert len(keys(out)) == 5 and load_json(out)["record_all"] is True
    assert run_cli(capsys, "baseline", "write", build_report, "-o", out).status == 0
    assert len(keys(out)) == 5, "an update keeps a baseline of every kernel"


@pytest.mark.parametrize("gate", ["occupancy", "vgprs", "lds", "spills"])
def test_check_with_a_gate_the_small_baseline_cannot_answer_is_exit_2(tmp_path, capsys, epoch, build_report,
                                                                        gate):
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", build_report, "-o", out, "--note", "n").status == 0
    run = run_cli(capsys, "check", build_report, "--baseline", out, "--gate", gate)
    assert run.status == 2 and "Traceback" not in run.err
    (line,) = [line for line in run.err.splitlines() if line.startswith("spillway: error:")]
    assert "cannot check" in line and "rewrite it with: spillway baseline write" in line
    wanted = ",".join(m for m in ("scratch", "spills", "occupancy", "vgprs", "lds") if m in ("scratch", gate))
    assert line.endswith(f"--gate {wanted}")


def test_a_tightened_kernel_leaves_a_small_baseline(tmp_path, capsys, epoch):
    report = write_report(tmp_path / "r.json", [record(TOPK, scratch=272), record(SILU, scratch=32)])
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", report, "-o", out, "--note", "n").status == 0
    write_report(report, [record(TOPK, scratch=272), record(SILU)])
    run = run_cli(capsys, "baseline", "write", report, "-o", out)
    assert run.status == 0, run.err
    assert "1 allowances tightened" in run.out
    assert keys(out) == [("gfx1100", TOPK)]
    # and the kernel is held to zero from then on
    write_report(report, [record(TOPK, scratch=272), record(SILU, scratch=8)])
    assert run_cli(capsys, "check", report, "--baseline", out).status == 1


def test_version_1_baselines_record_every_kernel(tmp_path, capsys, epoch, build_report):
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", build_report, "-o", out, "--note", "n", "--record-all").status == 0
    document = load_baseline(str(out)).model_dump(by_alias=True)     # the version 1 layout: one line per entry
    document["schema"] = "spillway.baseline/1"
    del document["record_all"], document["kernels_written_from"], document["occupancy_model"]
    baseline = load_baseline_from(tmp_path, document)
    assert baseline.records_every_kernel and baseline.record_all is None
    assert len(baseline.kernels) == 5


def load_baseline_from(tmp_path, document):
    import orjson

    path = tmp_path / "v1.json"
    path.write_bytes(orjson.dumps(document))
    return load_baseline(str(path))


# -- one resource record ----------------------------------------------------------------

def test_one_resource_record_everywhere():
    """gate.Resources is what baselines record and compare documents hold:
    the published schemas are generated from it (a version-3 baseline target
    is its fields, with defaults, beside target, allow and reason)."""
    assert Recorded is Resources
    baseline_schema = schema_for("baseline")
    compare_schema = schema_for("compare")
    fields = {"scratch", "dynamic_stack", "vgpr_spills", "sgpr_spills", "vgprs", "agprs", "sgprs", "lds",
              "occupancy", "loop_scratch", "agpr_copies"}
    resources = compare_schema["$defs"]["Resources"]
    assert set(resources["properties"]) == fields
    assert resources == schema_for("matrix-summary")["$defs"]["Resources"]
    assert resources["additionalProperties"] is False
    figures = baseline_schema["$defs"]["TargetFigures"]
    assert list(figures["properties"]) == ["target", *resources["properties"], "allow", "reason"]
    for name, spec in resources["properties"].items():
        # (the machine code's figures default to null in Resources itself)
        assert {k: v for k, v in figures["properties"][name].items() if k != "default"} == \
            {k: v for k, v in spec.items() if k != "default"}, name
    assert set(figures["required"]) == {"target"} | set(resources["required"]) - set(FIGURE_DEFAULTS)
    assert figures["additionalProperties"] is False


def test_rows_and_records_aggregate_alike():
    records = [record(TOPK, scratch=100, vgprs=70, file="a.o"), record(TOPK, scratch=272, vgprs=61, file="b.o"),
               record(SILU, sgpr_spills=2)]
    table = KernelTable()
    table.extend(records)
    from_rows = aggregate_rows(table.rows)
    from_records = aggregate(records)
    assert {k: (u.resources, u.instances, u.name) for k, u in from_rows.items()} == \
        {k: (u.resources, u.instances, u.name) for k, u in from_records.items()}
    assert from_rows[("gfx1100", TOPK)].resources.scratch == 272
    assert from_rows[("gfx1100", TOPK)].resources.vgprs == 70
    assert FIELDS.index("target") < len(FIELDS)


def test_build_from_inputs_directly(epoch):
    inputs = Inputs(sources=[])
    inputs.usage = aggregate([record(TOPK, scratch=272), record(SILU)])
    inputs.note_records([record(TOPK, scratch=272)])
    result = build(inputs, note="n", gate=("scratch",))
    assert [e.key for e in result.baseline.kernels] == [TOPK]
    assert result.baseline.kernels_written_from == {"gfx1100": 2}
    assert result.baseline.provenance.compilers == ["clang version 22"]
    assert isinstance(result.baseline.kernels[0].recorded, Resources)
    assert b'"record_all": false' in render(result.baseline)


def test_kernels_share_their_allowances(tmp_path, epoch):
    """A record-all baseline of a library holds an entry per kernel but few
    distinct figures: entries share their Allowance objects as they share their
    Resources, when written and when read back (memory: 819 -> 562 MB on
    librocsparse1 7.2.4)."""
    records = [record(f"_Z1{chr(97 + i % 26)}{i}v", scratch=16 * (i % 3), vgprs=32 + i % 2,
                      target=("gfx1100", "gfx90a")[i % 2]) for i in range(600)]
    inputs = Inputs(sources=[])
    inputs.usage = aggregate(records)
    inputs.note_records(records)
    baseline = build(inputs, note="n", gate=("scratch", "vgprs"), record_all=True).baseline
    path = tmp_path / "all.json"
    path.write_bytes(render(baseline))
    for loaded in (baseline, load_baseline(str(path))):
        assert len(loaded.kernels) == 600
        distinct = {e.allow.model_dump_json() for e in loaded.kernels}
        assert len({id(e.allow) for e in loaded.kernels}) == len(distinct) == 6
        assert {(e.allow.scratch, e.allow.vgprs) for e in loaded.kernels} == {
            (16 * a, 32 + b) for a in range(3) for b in range(2)}


# -- compare at scale -----------------------------------------------------------------

def test_markdown_fits_a_pull_request_comment_and_counts_what_it_leaves_out():
    from spillway.gate.compare import compare
    from spillway.render.markdown import MARKDOWN_BUDGET, compare_markdown as markdown

    long_name = "_ZN7rocprim6detail11sort_kernelILj256ELj" + "Li1E" * 40 + "EEvPi"
    old_records, new_records = [], []
    for index in range(3000):
        symbol = f"_Z{len(f'k{index}')}k{index}Pi"
        old_records.append(record(symbol, scratch=index % 7 * 16))
        new_records.append(record(symbol, scratch=index % 5 * 16))
    new_records += [record(f"_Z{len(f'n{i}')}n{i}Pi", scratch=i) for i in range(2000)]
    old_records += [record(long_name.replace("Pi", f"{i}Pi"), scratch=0) for i in range(2000)]
    comparison = compare(aggregate(new_records), aggregate(old_records), ["new.so"], ["old.so"])
    text = markdown(comparison)
    assert len(text) < MARKDOWN_BUDGET < 65_536
    assert text.count("<details>") == text.count("</details>") == 4     # with the largest changes per metric
    assert "more not shown (to fit a pull-request comment" in text
    assert comparison.sentence() in text
    # worst first: the largest new scratch leads its section
    added = text.split("only in the new build, worst first")[1]
    assert added.index("n1999") < added.index("n1998")
    limited = markdown(comparison, limit=5)
    assert "... and 1995 more not shown (--limit" in limited
    assert len(markdown(compare(aggregate(new_records[:3]), aggregate(old_records[:3])))) < 2000
