"""Baseline versions: spillway writes spillway.baseline/3 (one line per
kernel key, per-target figures with defaults left out, an ``allow`` object
only where the allowances are not the recorded figures, no names) and still
reads versions 1 and 2 (one line per (target, key)) into the same entries,
so check, compare and updates give the same answers whichever version a
file is."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from support.gate_fixtures import load_json, record, run_cli, write_report

from spillway.errors import InputError
from spillway.gate.baseline import (FIGURES, SCHEMA, SCHEMA_V1, SCHEMA_V2, SCHEMA_V5, Allowance, Baseline, Entry,
                                    Provenance, build, implied_allowance, load_baseline, parse_baseline, render)
from spillway.gate.kernels import Inputs, Resources, aggregate
from spillway.resources.names import demangle
from spillway.schemas import schema_for

REPO = Path(__file__).resolve().parents[3]
TOPK = "_Z4topkILi32EEvPKfiPfPi"
SILU = "_Z8silu_mulPKfS0_Pfi"
NORM = "_Z7rmsnormILi16384ELi128ELi128EEvPKDhS1_PDhf"
ROCPRIM = "_ZN7rocprim17ROCPRIM_300400_NS6detail11sort_kernelILj256EEEvPi"


def semantics(baseline: Baseline) -> dict:
    """What a baseline means, version aside: per (target, key) the allowances
    (a false dynamic stack is an absent one), recorded figures and reason."""
    out = {}
    for e in baseline.kernels:
        allow = e.allow.model_dump(exclude_none=True)
        if allow.get("dynamic_stack") is False:
            del allow["dynamic_stack"]
        out[(e.target, e.key)] = (allow, e.recorded, e.reason)
    return out


def legacy(path: Path, schema: str, to: Path) -> Path:
    """The baseline at ``path`` written in the layout of version 1 or 2: one
    line per (target, key) with name, allow and the full recorded figures."""
    document = load_baseline(str(path)).model_dump(by_alias=True)
    document["schema"] = schema
    for entry in document["kernels"]:
        entry["allow"] = {k: v for k, v in entry["allow"].items() if v is not None}
        if entry["reason"] is None:
            del entry["reason"]
    if schema == SCHEMA_V1:
        del document["record_all"], document["kernels_written_from"]     # (occupancy_model: kept, as later 1s have it)
    to.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    return to


@pytest.fixture
def builds(tmp_path):
    """A build with kernels on two targets, and a perturbed one: topk grew,
    rmsnorm shrank, silu_mul now spills, one kernel is gone, one is new."""
    base = write_report(tmp_path / "base.json", [
        record(TOPK, scratch=272, vgprs=61), record(TOPK, target="gfx90a", scratch=280, vgprs=64),
        record(NORM, scratch=360, vgpr_spills=115, vgprs=128, occupancy=10, lds=128),
        record(SILU, vgprs=10), record(SILU, target="gfx90a", dynamic_stack=True),
        record(ROCPRIM, scratch=64), record("_Z4gonePi", scratch=8),
    ])
    perturbed = write_report(tmp_path / "perturbed.json", [
        record(TOPK, scratch=300, vgprs=61), record(TOPK, target="gfx90a", scratch=280, vgprs=64),
        record(NORM, scratch=200, vgpr_spills=115, vgprs=128, occupancy=8, lds=128),
        record(SILU, vgprs=10, vgpr_spills=4), record(SILU, target="gfx90a", dynamic_stack=True),
        record(ROCPRIM.replace("300400", "300500"), scratch=64), record("_Z3newPi", scratch=16),
    ])
    return base, perturbed


def check_document(capsys, build: Path, baseline: Path, *options: str) -> tuple[int, dict]:
    out = baseline.with_name(baseline.stem + "-check.json")
    run = run_cli(capsys, "check", build, "--baseline", baseline, "--json", "-o", out, *options)
    assert run.status in (0, 1), run.err
    document = load_json(out)
    del document["baseline"]
    return run.status, document


# -- the version 3 layout ------------------------------------------------------------------

def test_one_line_per_key_with_its_targets(tmp_path, capsys, epoch, builds):
    base, _ = builds
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", base, "-o", out, "--note", "n", "--gate", "scratch,spills").status == 0
    text = out.read_text()
    document = load_json(out)
    jsonschema.validate(document, schema_for("baseline"))
    assert document["schema"] == SCHEMA == "spillway.baseline/3"
    assert document["record_all"] is False and document["kernels_written_from"] == {"gfx1100": 5, "gfx90a": 2}
    lines = text.splitlines()
    body = lines[lines.index('  "kernels": [') + 1:lines.index("  ]")]
    assert len(body) == len(document["kernels"]) == 5          # topk, rmsnorm, silu_mul (gfx90a), rocprim, gone
    assert [orjson.loads(line.strip().rstrip(",")) for line in body] == document["kernels"]
    assert [line["key"] for line in document["kernels"]] == sorted(line["key"] for line in document["kernels"])
    topk = next(line for line in document["kernels"] if line["key"] == TOPK)
    assert topk == {"key": TOPK, "targets": [
        {"target": "gfx1100", "scratch": 272, "vgprs": 61, "sgprs": 16, "occupancy": 16},
        {"target": "gfx90a", "scratch": 280, "vgprs": 64, "sgprs": 16, "occupancy": 16}]}
    silu = next(line for line in document["kernels"] if line["key"] == SILU)
    assert silu["targets"] == [{"target": "gfx90a", "dynamic_stack": True, "vgprs": 32, "sgprs": 16,
                                "occupancy": 16}]
    # The key is stored normalized; the name is the key demangled.
    assert '"name"' not in text and "ROCPRIM_300400_NS" not in text
    rocprim = next(e for e in load_baseline(str(out)).kernels if "rocprim" in e.key)
    assert rocprim.key == "_ZN7rocprim10ROCPRIM_NS6detail11sort_kernelILj256EEEvPi"
    assert rocprim.name == demangle(rocprim.key) == "void rocprim::ROCPRIM_NS::detail::sort_kernel<256u>(int*)"


def test_record_all_uses_the_same_layout(tmp_path, capsys, epoch, builds):
    base, _ = builds
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", base, "-o", out, "--note", "n", "--record-all").status == 0
    document = load_json(out)
    jsonschema.validate(document, schema_for("baseline"))
    assert document["record_all"] is True and len(document["kernels"]) == 5
    assert sum(len(line["targets"]) for line in document["kernels"]) == 7
    assert len(load_baseline(str(out)).kernels) == 7
    assert run_cli(capsys, "check", base, "--baseline", out, "--gate", "scratch,vgprs").status == 0


def test_figures_left_out_are_their_defaults():
    """Every field a target leaves out reads back as Resources' figure at its
    default, and every figure that differs is written."""
    recorded = Resources(scratch=0, dynamic_stack=False, vgpr_spills=0, sgpr_spills=0, vgprs=0, agprs=None,
                         sgprs=0, lds=0, occupancy=None)
    busy = Resources(scratch=8, dynamic_stack=True, vgpr_spills=1, sgpr_spills=2, vgprs=3, agprs=0, sgprs=4,
                     lds=5, occupancy=6, loop_scratch=7, agpr_copies=0)
    baseline = _baseline([_entry("gfx90a", TOPK, recorded, {"lds": 0}), _entry("gfx90a", SILU, busy, {"lds": 5})],
                         gate=["lds"])
    lines = {line["key"]: line["targets"][0] for line in _lines(render(baseline))}
    assert lines[TOPK] == {"target": "gfx90a", "vgprs": 0, "sgprs": 0}
    assert lines[SILU] == {"target": "gfx90a", **dict(zip(FIGURES, _values(busy)))}
    # No allowance at all is not the recorded figure: written as an empty allow object.
    empty = _baseline([_entry("gfx90a", TOPK, recorded, {})], gate=["lds"])
    assert _lines(render(empty))[0]["targets"][0]["allow"] == {}
    # The machine code's figures recorded: version 4; none: version 3.
    assert b'"schema": "spillway.baseline/4"' in render(baseline)
    assert b'"schema": "spillway.baseline/3"' in render(empty)
    assert semantics(_reload(empty)) == semantics(empty)
    assert semantics(_reload(baseline)) == semantics(baseline)


# -- versions 1 and 2 are read into the same entries ---------------------------------------

@pytest.mark.parametrize("schema", [SCHEMA_V1, SCHEMA_V2])
def test_older_versions_check_alike(tmp_path, capsys, epoch, builds, schema):
    """The same baseline as version 1, 2 or 3 gives the same check on the build
    it was written from (pass) and on a perturbed build (the same failures)."""
    base, perturbed = builds
    v3 = tmp_path / "v3.json"
    assert run_cli(capsys, "baseline", "write", base, "-o", v3, "--note", "n", "--gate", "scratch,spills",
                   "--record-all").status == 0
    old = legacy(v3, schema, tmp_path / "old.json")
    assert load_json(old)["schema"] == schema and "targets" not in load_json(old)["kernels"][0]
    assert semantics(load_baseline(str(old))) == semantics(load_baseline(str(v3)))
    for side in (base, perturbed):
        assert check_document(capsys, side, old) == check_document(capsys, side, v3)
    status, document = check_document(capsys, perturbed, v3)
    assert status == 1
    failing = {(f["key"], f["target"], f["metric"]) for f in document["failures"]}
    assert failing == {(TOPK, "gfx1100", "scratch"), (SILU, "gfx1100", "spills"), ("_Z3newPi", "gfx1100", "scratch")}
    assert [k["key"] for k in document["removed"]] == ["_Z4gonePi"]
    assert check_document(capsys, base, v3)[0] == 0


@pytest.mark.parametrize("schema", [SCHEMA_V1, SCHEMA_V2])
def test_older_versions_update_to_version_3(tmp_path, capsys, epoch, builds, schema):
    """baseline write onto a version 1 or 2 file: tightened, refused and
    --allow'ed as before, written as version 3 with the same allowances."""
    base, perturbed = builds
    v3 = tmp_path / "v3.json"
    assert run_cli(capsys, "baseline", "write", base, "-o", v3, "--note", "first", "--gate",
                   "scratch,spills").status == 0
    old = legacy(v3, schema, tmp_path / "old.json")
    run = run_cli(capsys, "baseline", "write", perturbed, "-o", old)
    assert run.status == 1, run.err                              # topk and silu_mul would go up
    assert "kept scratch allowance of void topk<32>" in run.err and "kept spills allowance of silu_mul" in run.err
    assert "kept gone(int*) [gfx1100]: no longer built; accept its removal with: " in run.err
    again = run_cli(capsys, "baseline", "write", perturbed, "-o", v3)
    assert again.status == 1
    assert load_json(old)["schema"] == SCHEMA and load_json(old)["note"] == "first"
    assert semantics(load_baseline(str(old))) == semantics(load_baseline(str(v3)))
    entries = {(e.target, e.key): e for e in load_baseline(str(old)).kernels}
    assert entries[("gfx1100", TOPK)].allow.scratch == 272 and entries[("gfx1100", TOPK)].recorded.scratch == 300
    assert entries[("gfx1100", NORM)].allow.scratch == 200                     # tightened
    assert ("gfx1100", "_Z4gonePi") in entries                # no longer built: kept until its removal is accepted
    # In the file: an allow object exactly where an allowance was kept below the new figure.
    kept = {(line["key"], t["target"]): t["allow"] for line in load_json(old)["kernels"] for t in line["targets"]
            if "allow" in t}
    assert kept == {(TOPK, "gfx1100"): {"scratch": 272, "spills": 0}, (SILU, "gfx1100"): {"scratch": 0, "spills": 0},
                    ("_Z3newPi", "gfx1100"): {"scratch": 0, "spills": 0}}
    assert run_cli(capsys, "baseline", "write", perturbed, "-o", old, "--allow", "topk*", "--allow", "silu_mul",
                   "--allow", "new", "--allow-removed", "gone", "--reason", "accepted").status == 0
    assert all("allow" not in t for line in load_json(old)["kernels"] for t in line["targets"])
    assert {t.get("reason") for line in load_json(old)["kernels"] for t in line["targets"]} == {"accepted", None}
    assert load_json(old)["removed"] == [{"target": "gfx1100", "key": "_Z4gonePi", "reason": "accepted"}]
    assert run_cli(capsys, "check", perturbed, "--baseline", old).status == 0


def test_committed_version_1_baselines_read_and_rewrite_alike():
    """checks/baselines/ are version 1 (the matrix reads them as they are):
    read, rendered as version 3, read again, they mean the same.  A cell's
    baseline written since (clang-22-offload-lto, clang-22-lines) is version 3, one of a cell on
    AMD's LLVM (rocm-*-amd-llvm*) version 5 (its back end recorded), and each renders to its own
    bytes."""
    paths = sorted((REPO / "checks" / "baselines").glob("*.json"))
    version_1 = []
    for path in paths:
        baseline = load_baseline(str(path))
        if baseline.schema_ in (SCHEMA, SCHEMA_V5):
            assert render(baseline) == path.read_bytes(), path
            assert (baseline.schema_ == SCHEMA_V5) == (baseline.provenance.backend is not None), path
            continue
        assert baseline.schema_ == SCHEMA_V1, path
        version_1.append(path)
    assert len(version_1) >= 7, version_1
    for path in version_1:
        baseline = load_baseline(str(path))
        rendered = render(baseline)
        document = orjson.loads(rendered)
        jsonschema.validate(document, schema_for("baseline"))
        assert document["record_all"] is (baseline.record_all is not False)
        again = parse_baseline(document, str(path))
        assert semantics(again) == semantics(baseline), path
        assert render(again) == rendered, path
        assert len(rendered) < path.stat().st_size, path
        names = {e.key: e.name for e in baseline.kernels}
        assert all(demangle(e.key) == names[e.key] or "_NS" in e.key for e in again.kernels), path


def test_compare_against_a_baseline_of_any_version(tmp_path, capsys, epoch, builds):
    base, perturbed = builds
    v3 = tmp_path / "v3.json"
    assert run_cli(capsys, "baseline", "write", base, "-o", v3, "--note", "n", "--record-all").status == 0
    v2 = legacy(v3, SCHEMA_V2, tmp_path / "v2.json")
    documents = []
    for side in (v2, v3):
        out = tmp_path / f"compare-{side.stem}.json"
        run = run_cli(capsys, "compare", perturbed, "--against", side, "--json", "-o", out)
        assert run.status == 0, run.err
        document = load_json(out)
        document.pop("old_sources", None)
        documents.append({k: v for k, v in document.items() if "source" not in k and k != "old"})
    assert documents[0]["kernels"] == documents[1]["kernels"]
    assert documents[0]["summary"] == documents[1]["summary"]


def test_carried_over_targets_keep_allowances_of_another_gate(tmp_path, capsys, epoch, builds):
    """An update that reads one target and changes the gate keeps the other
    target's entries as they were: their allowances are not the new gate's
    recorded figures, so they are written as allow objects and read back."""
    base, _ = builds
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", base, "-o", out, "--note", "n", "--record-all").status == 0
    before = semantics(load_baseline(str(out)))
    assert run_cli(capsys, "baseline", "write", base, "-o", out, "--gate", "vgprs", "--target", "gfx1100").status == 0
    after = semantics(load_baseline(str(out)))
    assert after[("gfx90a", TOPK)] == before[("gfx90a", TOPK)] and after[("gfx90a", TOPK)][0] == {"scratch": 280}
    assert after[("gfx1100", TOPK)][0] == {"vgprs": 61}
    gfx90a = [t for line in load_json(out)["kernels"] for t in line["targets"] if t["target"] == "gfx90a"]
    assert {orjson.dumps(t["allow"]) for t in gfx90a} == {b'{"scratch":280}', b'{"scratch":0,"dynamic_stack":true}'}


def test_hand_formatted_version_3_reads_the_same(tmp_path, capsys, epoch, builds):
    base, _ = builds
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", base, "-o", out, "--note", "n").status == 0
    document = load_json(out)
    pretty = tmp_path / "pretty.json"
    pretty.write_bytes(b"\n  " + orjson.dumps({"note": document["note"], **document}, option=orjson.OPT_INDENT_2))
    assert semantics(load_baseline(str(pretty))) == semantics(load_baseline(str(out)))
    assert run_cli(capsys, "check", base, "--baseline", pretty).status == 0


# -- render and load: a fixed point -----------------------------------------------------------

_FIGURE = st.integers(min_value=0, max_value=70000)
_RESOURCES = st.builds(Resources, scratch=_FIGURE, dynamic_stack=st.booleans(), vgpr_spills=_FIGURE,
                       sgpr_spills=_FIGURE, vgprs=_FIGURE, agprs=st.none() | _FIGURE, sgprs=_FIGURE, lds=_FIGURE,
                       occupancy=st.none() | st.integers(min_value=0, max_value=20))
_GATES = st.lists(st.sampled_from(["scratch", "spills", "occupancy", "vgprs", "lds"]), min_size=1, unique=True)
_KEYS = st.sampled_from([TOPK, SILU, NORM, "_ZN7rocprim10ROCPRIM_NS6detail11sort_kernelILj256EEEvPi", "plain_c",
                         "weird \"quoted\" \\ key", "_Z1kv"])
_TARGETS = st.sampled_from(["gfx1100", "gfx90a:xnack-", "gfx942", "gfx803"])


@st.composite
def _baselines(draw):
    gate = draw(_GATES)
    idents = draw(st.lists(st.tuples(_TARGETS, _KEYS), unique=True, max_size=12))
    entries = []
    for target, key in idents:
        recorded = draw(_RESOURCES)
        if draw(st.booleans()):
            allow = implied_allowance(gate, recorded)                    # as written from a build
        else:                                                            # kept, or carried over from another gate
            allow = draw(st.dictionaries(st.sampled_from(["scratch", "spills", "occupancy", "vgprs", "lds"]),
                                         _FIGURE))
            if draw(st.booleans()):
                allow["dynamic_stack"] = draw(st.booleans())
        reason = draw(st.none() | st.text(max_size=20))
        entries.append(_entry(target, key, recorded, allow, reason))
    return _baseline(entries, gate=gate, record_all=draw(st.booleans()))


@pytest.fixture(scope="module")
def validator():
    return jsonschema.Draft202012Validator(schema_for("baseline"))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(baseline=_baselines())
def test_render_then_load_means_the_same(validator, baseline):
    again = _reload(baseline)
    assert semantics(again) == semantics(baseline)
    assert all(e.name == demangle(e.key) for e in again.kernels)
    assert render(again) == render(baseline)
    validator.validate(orjson.loads(render(baseline)))


def test_build_from_inputs_round_trips(epoch):
    inputs = Inputs(sources=[])
    inputs.usage = aggregate([record(TOPK, scratch=272), record(SILU), record(NORM, target="gfx90a", scratch=4)])
    result = build(inputs, note="n", gate=("scratch",))
    again = _reload(result.baseline)
    assert semantics(again) == semantics(result.baseline)
    assert [(e.target, e.key) for e in again.kernels] == [(e.target, e.key) for e in result.baseline.kernels]


# -- helpers ----------------------------------------------------------------------------------

def _entry(target: str, key: str, recorded: Resources, allow: dict, reason: str | None = None) -> Entry:
    return Entry(target=target, key=key, name=demangle(key), allow=Allowance(**allow), recorded=recorded,
                 reason=reason)


def _baseline(entries: list[Entry], gate: list[str], record_all: bool = True) -> Baseline:
    provenance = Provenance(spillway_version="0", created="2023-11-14T22:13:20Z", compilers=[],
                            code_object_versions=[6], targets=sorted({e.target for e in entries}), files=[])
    written_from: dict[str, int] = {}
    for e in entries:
        written_from[e.target] = written_from.get(e.target, 0) + 1
    return Baseline(note="n", gate=gate, provenance=provenance, occupancy_model="llvm23", record_all=record_all,
                    kernels_written_from=written_from, kernels=sorted(entries, key=lambda e: (e.target, e.key)))


def _reload(baseline: Baseline) -> Baseline:
    return parse_baseline(orjson.loads(render(baseline)), "b.json")


def _lines(data: bytes) -> list[dict]:
    return orjson.loads(data)["kernels"]


def _values(resources: Resources) -> list:
    return [getattr(resources, name) for name in FIGURES]


def test_version_5_records_a_back_end_and_only_version_5_may(tmp_path):
    """A baseline with provenance.backend (a cell on AMD's LLVM) is written as
    version 5 and read back; a backend in a version 3 file, or a version 5
    file without one, is refused with one line."""
    path = REPO / "checks" / "baselines" / "rocm-10.0-amd-llvm23.json"
    baseline = load_baseline(str(path))
    assert baseline.schema_ == SCHEMA_V5 and baseline.provenance.backend is not None
    document = orjson.loads(render(baseline))
    jsonschema.validate(document, schema_for("baseline"))
    assert document["provenance"]["backend"]["llvm_version"] == "23.0.0git"
    wrong = dict(document, schema=SCHEMA)
    with pytest.raises(InputError, match="provenance.backend is set in a spillway.baseline/3 file"):
        parse_baseline(wrong, "x.json")
    del document["provenance"]["backend"]
    with pytest.raises(InputError, match="provenance.backend is missing in a spillway.baseline/5 file"):
        parse_baseline(document, "x.json")
    extra = orjson.loads(render(baseline))
    extra["provenance"]["backend"]["colour"] = "blue"
    with pytest.raises(InputError, match="colour"):
        parse_baseline(extra, "x.json")
