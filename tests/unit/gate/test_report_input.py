"""Report JSON read back by check, compare and baseline write (report.report_input):
streamed record by record in spillway's own layout (one kernel per line) and in
any other layout of valid JSON (ijson), with the same one-line errors; truncated
or malformed documents are refused whole; paths that are not UTF-8 come back
byte for byte.  Memory bounds: test_report_input_memory.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spillway import __version__
from spillway.constants import REPORT_SCHEMA
from spillway.errors import InputError
from spillway.report import report_input
from spillway.gate.reading import read_sources
from spillway.report.report_input import RECORD_TYPES, open_report
from spillway.json_codec import dumps
from spillway.report.reader import FIELDS, KernelTable, ReadOptions, json_chunks, read_path
from support.gate_fixtures import assert_one_line_error, record, run_cli

TOPK = "_Z4topkILi32EEvPKfPii"
SILU = "_Z4siluPfS_i"
TENSILE = Path(__file__).parents[2] / "data" / "tensile" / "tensile_bundle.co"
ODD_PATH = os.fsdecode(b"/build/k\xff\xfe.so")          # a path that is not UTF-8


def records() -> list[dict]:
    return [record(TOPK, scratch=272, file="a.so"), record(SILU, vgprs=70, file="a.so"),
            record(TOPK, scratch=16, target="gfx90a", file="b.so"), record(SILU, target="gfx90a", file=ODD_PATH)]


def head(kernels: list[dict]) -> dict:
    files = sorted({r["file"] for r in kernels})
    return {"schema": REPORT_SCHEMA, "spillway_version": __version__, "occupancy_model": "llvm23",
            "files": [{"path": f, "kind": "ELF", "bundles": 1, "code_objects": 1,
                       "kernels": sum(r["file"] == f for r in kernels), "bitcode_only": [],
                       "skipped_without_device_code": 0, "spirv_entries": 0} for f in files]}


def own(kernels: list[dict], document: dict | None = None) -> bytes:
    """What `spillway report --json` writes (report.reader.json_chunks)."""
    table = KernelTable()
    table.extend(kernels)
    return b"".join(json_chunks(dict(document or head(kernels), kernels=table)))


def own_files_after(kernels: list[dict]) -> bytes:
    """What report.reader.report_json writes (`spillway report --json` reading as it
    writes): files after the kernels, as they are known only at the end."""
    top = dumps({k: v for k, v in head(kernels).items() if k != "files"}, indent=True)
    lines = b",\n".join(b"    " + dumps(k) for k in kernels)
    tail = dumps({"files": head(kernels)["files"]}, indent=True)[1:]
    if not kernels:
        return top[:-2] + b',\n  "kernels": [],' + tail + b"\n"
    return top[:-2] + b',\n  "kernels": [\n' + lines + b"\n  ]," + tail + b"\n"


def own_by_hand(kernels: list, document: dict | None = None) -> bytes:
    """spillway's layout around records of any shape (json_chunks keeps FIELDS only)."""
    top = json.dumps(document or head(records()), indent=2).encode()
    lines = b",\n".join(b"    " + json.dumps(k, separators=(",", ":")).encode() for k in kernels)
    return top[:-2] + b',\n  "kernels": [\n' + lines + b"\n  ]\n}\n"


def record_lines(data: bytes) -> list[int]:
    """Indexes of the record lines of a document in spillway's layout (split on newlines)."""
    lines = data.split(b"\n")
    start = lines.index(b'  "kernels": [')
    return [i for i, line in enumerate(lines) if i > start and line.startswith(b"    ")]


# Other layouts of the same document: json.dumps writes \udcXX for the odd path.
LAYOUTS = {
    "own": own,
    "own-files-after": own_files_after,
    "indent2": lambda k: json.dumps(dict(head(k), kernels=k), indent=2).encode(),
    "one-line": lambda k: json.dumps(dict(head(k), kernels=k)).encode(),
    "sorted-keys": lambda k: json.dumps(dict(head(k), kernels=k), indent=4, sort_keys=True).encode(),
    "kernels-first": lambda k: json.dumps({"kernels": k, **head(k)}, indent=1).encode(),
    "crlf-tabs": lambda k: json.dumps(dict(head(k), kernels=k), indent="\t").replace("\n", "\r\n").encode(),
}


def write(tmp_path: Path, data: bytes, name: str = "report.json") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def read(path: str, **options):
    return read_sources([path], ReadOptions(occupancy_model="llvm23", **options))


def usage_of(inputs) -> dict:
    return {ident: (u.name, u.resources, u.instances, u.occupancy_next) for ident, u in inputs.usage.items()}


def collect(path: str) -> tuple[report_input.ReportJson, list[dict], int]:
    """The records read_sources would see, and how many times consume ran."""
    document = open_report(path)
    calls = [0]

    def consume(stream):
        calls[0] += 1
        return list(stream)

    return document, document.read(consume), calls[0]


# -- every layout reads the same ---------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_gives_the_same_records(tmp_path, layout):
    kernels = records()
    path = write(tmp_path, LAYOUTS[layout](kernels))
    document, got, calls = collect(path)
    assert got == kernels and calls == 1
    assert document.layout == ("lines" if layout.startswith("own") else "general")
    assert got == collect(write(tmp_path, own_by_hand(kernels), "by-hand.json"))[1]
    assert document.files == head(kernels)["files"]
    # A path that is not UTF-8 comes back byte for byte, in the records and in files.
    assert os.fsencode(got[3]["file"]) == b"/build/k\xff\xfe.so"
    assert b"/build/k\xff\xfe.so" in {os.fsencode(f["path"]) for f in document.files}
    expected = usage_of(read(write(tmp_path, own(kernels), "own.json")))
    assert usage_of(read(path)) == expected and len(expected) == 4


def test_the_real_writer_is_read_line_by_line(tmp_path, capsys):
    """What `spillway report --all --json` writes on a real bundle is the fast layout."""
    out = tmp_path / "r.json"
    assert run_cli(capsys, "report", "--all", "--json", "-o", out, TENSILE).status == 0
    document, got, calls = collect(str(out))
    assert document.layout == "lines" and calls == 1
    _file, expected = read_path(str(TENSILE), ReadOptions())
    assert got == list(expected) and len(got) == 10


def test_an_empty_kernels_list(tmp_path):
    for data in (own([], head([])), own_files_after([]), json.dumps(dict(head([]), kernels=[])).encode(),
                 b'{\n  "schema": "spillway.report/2",\n  "kernels": [\n  ]\n}\n'):
        path = write(tmp_path, data)
        assert collect(path)[1] == []
        with pytest.raises(InputError, match="no kernels found"):
            read(path)
        # The matrix's side-by-side view shows such a cell as an empty column.
        assert read_sources([path], ReadOptions(occupancy_model="llvm23"), allow_empty=True).usage == {}


@pytest.mark.parametrize("version", ["spillway.report/2", "spillway.report/3", "spillway.report/5"])
def test_an_older_report_is_still_read(tmp_path, version):
    """spillway.report/2 and /3 differ from /4 only in the isa objects (the
    derived figures of /3, the instruction mix and source lines of /4): check
    and compare read them, by the fast path and the general one."""
    kernels = records()
    older = dict(head(kernels), schema=version)
    for data in (own(kernels, older), json.dumps(dict(older, kernels=kernels)).encode()):
        document, got, _ = collect(write(tmp_path, data))
        assert got == kernels and document.head["schema"] == version


def test_a_report_of_an_unknown_version_is_refused(tmp_path):
    kernels = records()
    newer = dict(head(kernels), schema="spillway.report/7")
    with pytest.raises(InputError, match="report schema spillway.report/7 is not one this spillway"):
        collect(write(tmp_path, json.dumps(dict(newer, kernels=kernels)).encode()))


def test_members_after_the_kernels(tmp_path):
    """jq -S puts schema after kernels: the schema, files and model are known
    before any record is used."""
    kernels = records()
    tail_first = {"kernels": kernels, "files": head(kernels)["files"], "schema": REPORT_SCHEMA}
    path = write(tmp_path, json.dumps(tail_first, indent=2).encode())
    document, got, _ = collect(path)
    assert got == kernels and document.head["schema"] == REPORT_SCHEMA and document.files
    # A wrong schema written last is the error, not the records' shape.
    wrong = dict(tail_first, schema="spillway.report/9")
    with pytest.raises(InputError, match=r"report schema spillway.report/9 is not one this spillway"):
        read(write(tmp_path, json.dumps(wrong).encode(), "wrong.json"))
    baseline_last = {"kernels": [{"target": "gfx1100", "key": TOPK}], "schema": "spillway.baseline/3"}
    with pytest.raises(InputError, match="is a baseline file, not a build"):
        read(write(tmp_path, json.dumps(baseline_last).encode(), "baseline.json"))


def test_a_document_that_leaves_the_layout_part_way_is_read_again(tmp_path):
    """Spillway's head and first lines, then a record over several lines: the
    general reader starts over, and consume's first, partial result is dropped."""
    kernels = records()
    data = own(kernels)
    lines = data.split(b"\n")
    spread = json.dumps(kernels[2], indent=2).replace("\n", "\n    ").encode()
    third = record_lines(data)[2]
    lines[third] = b"    " + spread + b","
    path = write(tmp_path, b"\n".join(lines))
    document, got, calls = collect(path)
    assert got == kernels and calls == 2 and document.layout == "general"
    assert usage_of(read(path)) == usage_of(read(write(tmp_path, data, "own.json")))


def test_a_record_line_over_the_limit_goes_to_the_general_reader(tmp_path, monkeypatch):
    long = record("_Z" + "4long" * 10 + "v", file="x" * 5000)
    monkeypatch.setattr(report_input, "_LINE_LIMIT", 4096)
    document, got, calls = collect(write(tmp_path, own([records()[0], long])))
    assert got == [records()[0], long] and calls == 2 and document.layout == "general"


def test_a_huge_single_line(tmp_path):
    """One line of 3 MB holding a 1 MB name: read by the general reader."""
    symbol = "_Z" + str(1 << 20) + "x" * (1 << 20) + "v"
    big = dict(record(TOPK), name="n" * (1 << 20), key=symbol, symbol=symbol)
    path = write(tmp_path, orjson.dumps(dict(head([big]), kernels=[big, dict(big, target="gfx90a")])))
    assert Path(path).read_bytes().count(b"\n") == 0
    inputs = read(path)
    assert {ident[0] for ident in inputs.usage} == {"gfx1100", "gfx90a"}
    assert len(next(iter(inputs.usage.values())).name) == 1 << 20


# -- damage: one line, nothing used -------------------------------------------------

def _cuts(data: bytes) -> list[int]:
    """Where to cut a document: inside the head, at the kernels line, inside and
    between records, before the closing brackets, before the last byte."""
    kernels_at = data.index(b'  "kernels": [')
    first = data.index(b"\n    {", kernels_at) + 1
    second = data.index(b"\n    {", first) + 1
    close = data.index(b"\n  ]", first)
    return [1, 20, kernels_at + 5, first, first + 40, second, second + 1, close, close + 1, close + 4,
            len(data) - 2]


@pytest.mark.parametrize("layout", ["own", "own-files-after", "indent2", "one-line", "kernels-first"])
def test_a_truncated_document_is_refused(tmp_path, layout):
    data = LAYOUTS[layout](records())
    cuts = [1, len(data) // 3, len(data) // 2, len(data) - 1]
    if layout.startswith("own"):
        cuts = _cuts(data) + [len(data) - 30, len(data) - 3]
    assert collect(write(tmp_path, data.rstrip(b"\n"), "no-newline.json"))[1] == records()
    for cut in cuts:
        path = write(tmp_path, data[:cut])
        if not data[:cut].lstrip().startswith(b"{"):
            continue
        with pytest.raises(InputError) as caught:
            read(path)
        assert "not valid JSON" in str(caught.value) and path in str(caught.value), (cut, str(caught.value))
        assert "\n" not in str(caught.value)


def test_truncation_in_spillways_layout_names_what_was_read(tmp_path):
    data = own(records())
    second = data.index(b"\n    {", data.index(b"\n    {", data.index(b'  "kernels": [')) + 1) + 1
    with pytest.raises(InputError, match=r"ends inside the kernels list, after 1 complete kernel record "
                                         r"\(truncated\?\)"):
        read(write(tmp_path, data[:second]))
    with pytest.raises(InputError, match=r"ends before its closing brackets, after 4 complete kernel records"):
        read(write(tmp_path, data[:data.rindex(b"  ]")]))


def test_a_truncated_document_is_never_gated(tmp_path, capsys):
    """check on a report cut after some records: exit 2, one line, no verdict."""
    kernels = [record(f"_Z1k{i}v", scratch=16 * i) for i in range(50)]
    data = own(kernels)
    baseline = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", write(tmp_path, data, "full.json"), "-o", baseline,
                   "--note", "n").status == 0
    cut = write(tmp_path, data[:len(data) // 2], "cut.json")
    run = run_cli(capsys, "check", cut, "--baseline", baseline)
    assert_one_line_error(run, "cut.json", "truncated")
    assert "OK" not in run.out + run.err and "FAIL" not in run.out + run.err
    assert_one_line_error(run_cli(capsys, "compare", cut, "--against", baseline), "cut.json", "truncated")


@pytest.mark.parametrize("damage, said", [
    (lambda d: d + b"x", "trailing garbage|Additional data"),
    (lambda d: d.replace(b'"bundle_index":0', b'"bundle_index":0,,', 1), "not valid JSON"),
    (lambda d: d.replace(b"}\n  ]", b"},\n  ]"), "not valid JSON"),
    (lambda d: d.replace(b'"target":"gfx90a"', b'"target":"gfx90a\xff"', 1), "not valid JSON"),
    (lambda d: d.replace(b'  "files"', b'  "schema": "spillway.report/2",\n  "files"'), "appears twice"),
    (lambda d: d.replace(b'  "files"', b'  "kernels.item": {},\n  "files"'), "kernels.item"),
])
def test_malformed_documents(tmp_path, damage, said):
    data = damage(own(records()))
    with pytest.raises(InputError, match=said):
        read(write(tmp_path, data))


@pytest.mark.parametrize("tail", [b'"', b' "x}', b'\n"\\', b"x", b"{}"])
@pytest.mark.parametrize("layout", ["own", "one-line"])
def test_anything_after_the_document_is_refused(tmp_path, layout, tail):
    """yajl takes a string left open after the document at the end of the input
    for complete (ReportJson reads a newline more); the rest is trailing garbage."""
    plain = [dict(r, file="c.so") if r["file"] == ODD_PATH else r for r in records()]
    path = write(tmp_path, LAYOUTS[layout](plain) + tail)
    with pytest.raises(InputError, match="not valid JSON: parse error: trailing garbage"):
        read(path)


# -- wrong types at each level -------------------------------------------------------

def _with(document_changes: dict | None = None, record_changes: dict | None = None, at: int = 2) -> dict:
    kernels = records()
    if record_changes:
        kernels[at] = {**kernels[at], **record_changes}
    return {**head(records()), "kernels": kernels, **(document_changes or {})}


BAD_DOCUMENTS = [
    ({"schema": 3}, "not a spillway report or baseline (schema 3)"),
    ({"schema": None}, "not a spillway report or baseline (schema None)"),
    ({"schema": "spillway.report/1"}, "report schema spillway.report/1 is not one this spillway"),
    ({"kernels": {"a": 1}}, "report has no kernels list"),
    ({"kernels": 7}, "report has no kernels list"),
    ({"kernels": None}, "report has no kernels list"),
    ({"files": 3}, "report files is 3, not a list of objects"),
    ({"files": [1]}, "report files is [1], not a list of objects"),
    ({"files": {"path": "a"}}, "report files is {'path': 'a'}, not a list of objects"),
]


@pytest.mark.parametrize("layout", ["own", "general"])
@pytest.mark.parametrize("changes, said", BAD_DOCUMENTS, ids=[s for _, s in BAD_DOCUMENTS])
def test_document_members_of_the_wrong_type(tmp_path, layout, changes, said):
    document = _with(changes)
    if layout == "own" and isinstance(document["kernels"], list):
        data = own(document["kernels"], {k: v for k, v in document.items() if k != "kernels"})
    else:
        data = json.dumps(document, indent=2).encode()
    with pytest.raises(InputError, match=said.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        read(write(tmp_path, data))


def test_no_kernels_member(tmp_path):
    with pytest.raises(InputError, match="report has no kernels list"):
        read(write(tmp_path, json.dumps(head([])).encode()))


WRONG_VALUES = {"string": 7, "count": "8", "boolean": "no", "object": [1], "count or null": 1.5,
                "string or null": ["x"], "boolean or null": 0, "object or null": "x"}
BAD_RECORDS = [(name, WRONG_VALUES[kind]) for name, kind in RECORD_TYPES.items()] + [
    ("vgpr_count", True), ("sgpr_spill_count", -1), ("private_segment_fixed_size", 1 << 63),
    ("agpr_count", 2.0), ("occupancy", "4")]


@pytest.mark.parametrize("layout", ["own", "general"])
@pytest.mark.parametrize("name, value", BAD_RECORDS, ids=[f"{n}={v!r}" for n, v in BAD_RECORDS])
def test_record_fields_of_the_wrong_type(tmp_path, layout, name, value):
    """The same one line as the whole-document reader gave: file, kernel index, field."""
    document = _with(record_changes={name: value})
    data = own_by_hand(document["kernels"]) if layout == "own" else json.dumps(document, indent=2).encode()
    path = write(tmp_path, data)
    assert open_report(path).layout == ("lines" if layout == "own" else "general")
    with pytest.raises(InputError) as caught:
        read(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: kernel 2: {name} is "), text
    assert f"not a {RECORD_TYPES.get(name, 'count')}" in text and "\n" not in text


@pytest.mark.parametrize("layout", ["own", "general"])
@pytest.mark.parametrize("kernel, said", [
    (5, "kernel 1 lacks target, key, name, private_segment_fixed_size"),
    ([1, 2], "kernel 1 lacks target"),
    (None, "kernel 1 lacks target"),
    ({"target": "gfx1100"}, "kernel 1 lacks key, name, private_segment_fixed_size"),
    ("text", "kernel 1 lacks target"),
])
def test_records_that_are_not_records(tmp_path, layout, kernel, said):
    kernels: list = records()
    kernels[1] = kernel
    if layout == "own":
        data = own_by_hand(kernels)
    else:
        data = json.dumps(dict(head(records()), kernels=kernels), indent=2).encode()
    with pytest.raises(InputError, match=said):
        read(write(tmp_path, data))


@pytest.mark.parametrize("step", [
    {"waves": 3}, {"waves": 3, "needs": "vgpr"}, {"waves": -1, "needs": []},
    {"waves": 3, "needs": [{"resource": "ram", "at_most": 3}]},
    {"waves": 3, "needs": [{"resource": "vgpr", "at_most": "3"}]},
    {"waves": 3, "needs": [{"resource": "vgpr", "at_most": 3, "more": 1}]},
])
def test_occupancy_next_of_the_wrong_shape(tmp_path, step):
    for data in (own_by_hand(_with(record_changes={"occupancy_next": step})["kernels"]),
                 json.dumps(_with(record_changes={"occupancy_next": step})).encode()):
        with pytest.raises(InputError, match="kernel 2: occupancy_next is"):
            read(write(tmp_path, data))


def test_a_sound_shape_seen_before_is_still_range_checked(tmp_path):
    """check_record remembers the shapes it found sound: a negative count in a
    record of a known shape is still refused, and an unknown shape gets the full check."""
    good = records()
    read(write(tmp_path, own(good), "good.json"))
    negative = [*good[:3], dict(good[3], vgpr_count=-3)]
    with pytest.raises(InputError, match="kernel 3: vgpr_count is -3, not a count"):
        read(write(tmp_path, own_by_hand(negative)))
    reordered = [*good[:3], dict(reversed(list(dict(good[3], lds_extra=1).items())))]
    assert collect(write(tmp_path, own_by_hand(reordered), "reordered.json"))[1][3]["lds_extra"] == 1
    shuffled = [*good[:3], dict(reversed(list(dict(good[3], sgpr_count="9").items())))]
    with pytest.raises(InputError, match="kernel 3: sgpr_count is '9', not a count"):
        read(write(tmp_path, own_by_hand(shuffled)))


def test_records_are_checked_whatever_their_target(tmp_path):
    """--target keeps some kernels, but every record is checked."""
    bad = _with(record_changes={"vgpr_count": "8"}, at=2)       # a gfx90a record
    path = write(tmp_path, own_by_hand(bad["kernels"]))
    with pytest.raises(InputError, match="kernel 2: vgpr_count"):
        read(path, targets=["gfx1100"])
    good = read(write(tmp_path, own(records()), "good.json"), targets=["gfx1100"])
    assert {ident[0] for ident in good.usage} == {"gfx1100"}


def test_not_an_object(tmp_path):
    for data in (b"{", b"{}", b"{\n}", b'{"schema": "spillway.report/2", "kernels": [}'):
        with pytest.raises(InputError):
            read(write(tmp_path, data))


# -- through the command line -------------------------------------------------------

def test_check_and_compare_read_every_layout_alike(tmp_path, capsys):
    kernels = records()
    baseline = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", write(tmp_path, own(kernels), "own.json"), "-o", baseline,
                   "--note", "n", "--gate", "scratch,vgprs").status == 0
    outputs = set()
    for layout, writer in LAYOUTS.items():
        path = write(tmp_path, writer(kernels), f"{layout}.json")
        run = run_cli(capsys, "check", path, "--baseline", baseline, "--json")
        assert run.status == 0, run.err
        outputs.add(orjson.dumps(dict(orjson.loads(run.out), baseline="")))
        compared = run_cli(capsys, "compare", path, "--against", write(tmp_path, own(kernels), "old.json"),
                           "--format", "json")
        assert compared.status == 0 and orjson.loads(compared.out)["summary"]["worse"] == 0, compared.out
    assert len(outputs) == 1


def test_standard_input(tmp_path, capsys, monkeypatch):
    """`-` names standard input: spooled once, read by both passes of the general reader."""
    import io
    import sys

    from spillway import paths

    data = LAYOUTS["sorted-keys"](records())
    monkeypatch.setattr(paths, "_STDIN_FILE", None)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    inputs = read("-")
    assert usage_of(inputs) == usage_of(read(write(tmp_path, own(records()))))


# -- differential: any damage to spillway's layout, against the standard library's json ---------

def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _oracle(data: bytes) -> list[dict] | None:
    """The records the standard library's json finds in ``data`` when it is a
    sound report (None when it is not JSON, repeats a top-level member, or fails
    check_head / check_record)."""
    repeated: list[bool] = []

    def pairs(items):
        found = dict(items)
        repeated.append(len(found) != len(items))
        return found

    try:
        document = json.loads(data, object_pairs_hook=pairs, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict) or repeated[-1]:
        return None
    kernels = document.get("kernels")
    kind = {list: "array", dict: "object", str: "string", bool: "boolean", type(None): "null"}.get(
        type(kernels), "number") if "kernels" in document else None
    try:
        report_input.check_head({k: v for k, v in document.items() if k != "kernels"}, kind, "x")
        for index, kernel in enumerate(kernels):
            report_input.check_record(kernel, index, "x")
    except InputError:
        return None
    return kernels


SIGNIFICANT = [b",", b"}", b"]", b"{", b"[", b"\n", b'"', b"\\", b" ", b"0", b"-", b"\xff", b"\\udcff", b"  ]\n"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.sampled_from(["cut", "drop", "insert", "replace"]), st.floats(0, 1),
                                st.integers(1, 6), st.sampled_from(SIGNIFICANT)), min_size=1, max_size=3),
       odd=st.booleans(), files_after=st.booleans())
def test_damage_reads_as_the_standard_library_says(tmp_path, edits, odd, files_after):
    """Whatever the damage, the streamed readers accept exactly the documents the
    standard library reads as a sound report, with the same records; every other
    document is one InputError.  ``odd``: a path that is not UTF-8 (the general
    reader then runs on ijson's Python backend, else on yajl2_c)."""
    kernels = records() if odd else [dict(r, file="c.so") if r["file"] == ODD_PATH else r for r in records()]
    data = bytearray(own_files_after(kernels) if files_after else own(kernels))
    for edit, where, length, text in edits:
        at = int(where * len(data))
        if edit == "cut":
            del data[at:]
        elif edit == "drop":
            del data[at:at + length]
        elif edit == "insert":
            data[at:at] = text
        else:
            data[at:at + len(text)] = text
    if not bytes(data).lstrip(b" \t\r\n\xef\xbb\xbf").startswith(b"{"):
        return                      # not taken for JSON at all (sniff_json): read as a binary
    path = tmp_path / "damaged.json"
    path.write_bytes(bytes(data))
    expected = _oracle(bytes(data))
    try:
        got = collect(str(path))[1]
    except InputError as exc:
        assert expected is None, (bytes(data), str(exc))
        assert "\n" not in str(exc)
        return
    assert got == expected, bytes(data)
