"""`spillway report --isa`: each kernel's isa object equals llvm-objdump's
figures (tests/data/isa/expected.json, recorded by tests/support/isa_oracle.py
from llvm-objdump -d -z on the fixtures built by tests/data/isa/build.sh), in
every output format; bad code stops only its own kernel."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from spillway.cli import main
from spillway.report.code_evidence import ISA_FIELDS, code_objects_evidence
from spillway.report.reader import ReadOptions, read_report, report_json
from spillway.report.record import Report, json_schema

DATA = Path(__file__).resolve().parents[2] / "data" / "isa"
EXPECTED = json.loads((DATA / "expected.json").read_text())["fixtures"]
# expected.json's names for the isa object's members, where they differ.
RENAMED = {"scratch_without_width": "scratch_unsized"}
# Members expected.json records for every kernel (loop_spans: counted there as loops).
COMPARED = [f for f in ISA_FIELDS if f != "loop_spans"]


def recorded(fixture: str) -> dict[str, dict]:
    """expected.json's kernels of a fixture, in the isa object's terms."""
    return {name: {f: found[RENAMED.get(f, f)] for f in COMPARED}
            for name, found in EXPECTED[fixture]["functions"].items() if found["kind"] == "kernel"}


def test_every_fixture_kernel_equals_llvm_objdump():
    paths = [str(DATA / "co" / name) for name in sorted(EXPECTED)]
    document = read_report(paths, ReadOptions(isa=True))
    seen = 0
    for name in sorted(EXPECTED):
        kernels = [k for k in document["kernels"] if k["file"].endswith("/" + name)]
        expected = recorded(name)
        assert sorted(k["symbol"] for k in kernels) == sorted(expected), name
        for kernel in kernels:
            assert {f: kernel["isa"][f] for f in COMPARED} == expected[kernel["symbol"]], (name, kernel["symbol"])
            assert len(kernel["isa"]["loop_spans"]) == kernel["isa"]["loops"]
            seen += 1
    assert seen >= 25 * 10
    # the fixtures hold every kind of evidence somewhere
    isa = [k["isa"] for k in document["kernels"]]
    for member in ("scratch_loads", "scratch_in_loops", "agpr_writes", "agpr_reads", "matrix_ops", "calls",
                   "flat_ops", "lds_ops"):
        assert any(found[member] for found in isa), member
    assert any(found["scratch_without_width"] for found in isa)


def test_plain_python_path_equals_numpy_path():
    pytest.importorskip("numpy")
    from spillway.formats import codeobject

    for name in ("gfx906.clang22.co", "gfx90a.clang22.co", "gfx1100.clang22.co", "gfx1250.clang24.co"):
        payload = (DATA / "co" / name).read_bytes()
        code = codeobject.parse(payload)
        assert code_objects_evidence(payload, code.kernels, code.target_id, use_numpy=False) == \
            code_objects_evidence(payload, code.kernels, code.target_id), name
    # with the live registers: the scratch access offsets listed again by the plain path (isa.listing), kept
    # by evidence_many on the numpy path; the peaks' loops
    for name in ("gfx906.clang22.co", "gfx90a.clang22.co"):
        payload = (DATA / "co" / name).read_bytes()
        code = codeobject.parse(payload)
        plain = code_objects_evidence(payload, code.kernels, code.target_id, use_numpy=False, pressure=True)
        assert plain == code_objects_evidence(payload, code.kernels, code.target_id, pressure=True), name
        assert any(found["pressure"]["scratch_offsets"] for found in plain), name


def test_streamed_json_equals_the_document_and_its_schema():
    paths = [str(DATA / "co" / "gfx90a.clang22.co"), str(DATA / "co" / "gfx1201.clang22.co")]
    streamed = json.loads(b"".join(report_json(paths, ReadOptions(isa=True))))
    jsonschema.validate(streamed, json_schema())
    Report.model_validate(streamed)
    document = read_report(paths, ReadOptions(isa=True))
    assert streamed["kernels"] == document["kernels"]
    assert list(streamed["kernels"][0])[-1] == "isa"
    assert list(streamed["kernels"][0]["isa"]) == [*ISA_FIELDS, "mix"]     # no line table: no source_lines
    plain = json.loads(b"".join(report_json(paths, ReadOptions())))
    assert [{k: v for k, v in r.items() if k != "isa"} for r in streamed["kernels"]] == plain["kernels"]
    assert not any("isa" in r for r in plain["kernels"])


def cli(capsys, *args) -> tuple[int, str]:
    status = main(list(args))
    out, _err = capsys.readouterr()
    return status, out


def test_cli_json(capsys):
    status, out = cli(capsys, "report", "--isa", "--json", str(DATA / "co" / "gfx908.clang22.co"))
    assert status == 0
    document = json.loads(out)
    jsonschema.validate(document, json_schema())
    expected = recorded("gfx908.clang22.co")
    assert {k["symbol"]: {f: k["isa"][f] for f in COMPARED} for k in document["kernels"]} == expected
    # with a FILTER the document is built in the parent (not streamed): the same objects
    status, out = cli(capsys, "report", "--isa", "--json", str(DATA / "co" / "gfx908.clang22.co"), "agpr_spill")
    assert json.loads(out)["kernels"][0]["isa"] == \
        next(k["isa"] for k in document["kernels"] if k["symbol"] == "agpr_spill")


def test_cli_tsv(capsys):
    path = str(DATA / "co" / "gfx90a.clang22.co")
    status, out = cli(capsys, "report", "--isa", "--all", "--format", "tsv", path)
    assert status == 0
    header, *rows = [line.split("\t") for line in out.splitlines()]
    expected = recorded("gfx90a.clang22.co")
    assert header[-len(ISA_FIELDS):] == list(ISA_FIELDS)
    assert len(rows) == len(expected)
    for row in rows:
        cells = dict(zip(header, row))
        found = expected[cells["symbol"]]
        for member in COMPARED:
            if member == "scratch_without_width":
                assert cells[member] == ",".join(f"{m}:{n}" for m, n in found[member].items())
            elif member in ("code_sha256", "status"):
                assert cells[member] == found[member]
            else:
                assert int(cells[member]) == found[member], (cells["symbol"], member)
        assert len(cells["loop_spans"].split(",")) == found["loops"] if found["loops"] else cells["loop_spans"] == ""
    # without --isa: the columns of today
    status, out = cli(capsys, "report", "--all", "--format", "tsv", path)
    assert out.splitlines()[0].split("\t")[-1] == "symbol"


def test_cli_table(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    path = str(DATA / "co" / "gfx90a.clang22.co")
    status, out = cli(capsys, "report", "--isa", "--all", path, "agpr_spill")
    assert status == 0
    lines = out.splitlines()
    header = lines[0]
    for column in ("code scratch B", "in loops", "AGPR copies", "code"):
        assert column in header
    found = recorded("gfx90a.clang22.co")["agpr_spill"]
    row = lines[1].split()
    copies = found["agpr_writes"] + found["agpr_reads"]
    assert copies > 0
    assert found["code_sha256"][:8] in row
    scratch = found["scratch_load_bytes"] + found["scratch_store_bytes"]
    at = row.index(found["code_sha256"][:8])
    assert row[at - 3:at] == [str(scratch), str(found["scratch_in_loops"]), str(copies)]
    status, plain = cli(capsys, "report", "--all", path, "agpr_spill")
    # Without --isa: the printed rows' code in two columns and a line (no code hash, no scratch bytes).
    assert "code scratch B" not in plain and found["code_sha256"][:8] not in plain
    assert "waves/SIMD in loops AGPR copies" in plain.splitlines()[0]
    accesses = found["scratch_loads"] + found["scratch_stores"]
    assert plain.splitlines()[1].split()[10:12] == [f"{found['scratch_in_loops']}/{accesses}", str(copies)]
    assert f"{copies} AGPR copies (1 kernel)" in plain.splitlines()[-1]


# -- bad code ---------------------------------------------------------------------------------

def _symbols(data: bytes):
    """(offset of each STT_FUNC .symtab entry, its name) of an ELF."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, _entsize in sections:
        if kind != 2:
            continue
        strings = sections[link]
        for at in range(offset, offset + size, 24):
            name_at, info = struct.unpack_from("<IB", data, at)
            if info & 0xF == 2:
                start = strings[4] + name_at
                yield at, data[start:data.index(b"\0", start)].decode()


def _with_symbol(data: bytes, name: str, size: int) -> bytes:
    """The ELF with the st_size of symbol ``name`` changed."""
    out = bytearray(data)
    for at, found in _symbols(data):
        if found == name:
            struct.pack_into("<Q", out, at + 16, size)
            return bytes(out)
    raise AssertionError(f"no symbol {name}")


@pytest.mark.parametrize("size, status", [
    (0, "size 0"),
    (1 << 20, "outside the code section"),
])
def test_bad_symbol_sizes_stop_only_that_kernel(tmp_path, size, status):
    good = (DATA / "co" / "gfx90a.clang22.co").read_bytes()
    bad = tmp_path / "bad.co"
    bad.write_bytes(_with_symbol(good, "spill_in_loop", size))
    run = subprocess.run([sys.executable, "-m", "spillway", "report", "--isa", "--json", str(bad)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    kernels = {k["symbol"]: k["isa"] for k in json.loads(run.stdout)["kernels"]}
    assert status in kernels["spill_in_loop"]["status"]
    assert kernels["spill_in_loop"]["instructions"] == 0
    others = recorded("gfx90a.clang22.co")
    del others["spill_in_loop"]
    assert {name: {f: kernels[name][f] for f in COMPARED} for name in others} == others


def test_truncated_kernel_code_says_where(tmp_path):
    good = (DATA / "co" / "gfx90a.clang22.co").read_bytes()
    size = recorded("gfx90a.clang22.co")["matrix"]["code_bytes"]
    bad = tmp_path / "bad.co"
    # the symbol ends 2 bytes into its last instruction's second half or literal: a cut instruction
    bad.write_bytes(_with_symbol(good, "matrix", size - 2))
    document = read_report([str(bad)], ReadOptions(isa=True))
    found = next(k["isa"] for k in document["kernels"] if k["symbol"] == "matrix")
    assert found["status"] != "complete" and "+0x" in found["status"], found["status"]
    assert found["code_bytes"] == size - 2
    assert 0 < found["instructions"] <= recorded("gfx90a.clang22.co")["matrix"]["instructions"]


def test_a_kernel_without_its_symbol(tmp_path):
    from spillway.formats import codeobject

    payload = (DATA / "co" / "gfx90a.clang22.co").read_bytes()
    code = codeobject.parse(payload)
    renamed = [k._replace(symbol="not_there.kd", name="not_there") if k.symbol == "matrix.kd" else k
               for k in code.kernels]
    found = code_objects_evidence(payload, renamed, code.target_id)
    missing = [f for k, f in zip(renamed, found) if k.name == "not_there"]
    assert len(missing) == 1 and missing[0]["status"].startswith("no STT_FUNC symbol not_there")
    assert all(f["status"] == "complete" for k, f in zip(renamed, found) if k.name != "not_there")


def test_a_code_object_whose_text_runs_past_its_end():
    from spillway.formats import codeobject

    payload = (DATA / "co" / "gfx90a.clang22.co").read_bytes()
    code = codeobject.parse(payload)
    # cut the file inside .text: the metadata (notes come first) still parses
    found = code_objects_evidence(payload[:0x1000], code.kernels, code.target_id)
    assert all(f["status"].startswith("code not read: ") for f in found), found[0]["status"]


def test_a_path_that_is_not_utf8_keeps_its_isa_objects(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    name = b"k\xff.co"
    (folder / name.decode("utf-8", "surrogateescape")).write_bytes((DATA / "co" / "gfx1100.clang22.co").read_bytes())
    streamed = json.loads(b"".join(report_json([str(folder)], ReadOptions(isa=True))))
    expected = recorded("gfx1100.clang22.co")
    assert {k["symbol"]: {f: k["isa"][f] for f in COMPARED} for k in streamed["kernels"]} == expected
    assert all(k["file"].endswith("k\udcff.co") for k in streamed["kernels"])


@pytest.mark.parametrize("fixture", ["gfx906.clang22.co", "gfx90a.clang22.co", "gfx1201.clang22.co"])
def test_mutated_code_objects_never_raise(fixture):
    """Random bytes changed anywhere (section headers, symbols, code) or the
    file cut short: every kernel still gets an isa object with a status, and
    the numpy and plain paths agree."""
    import random

    from spillway.formats import codeobject

    good = (DATA / "co" / fixture).read_bytes()
    code = codeobject.parse(good)
    rng = random.Random(fixture)
    for trial in range(60):
        bad = bytearray(good)
        for _ in range(rng.choice([1, 4, 32])):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        if trial % 5 == 0:
            del bad[rng.randrange(64, len(bad)):]
        found = code_objects_evidence(bytes(bad), code.kernels, code.target_id)
        assert len(found) == len(code.kernels)
        assert all(isinstance(f["status"], str) and f["status"] for f in found)
        assert found == code_objects_evidence(bytes(bad), code.kernels, code.target_id, use_numpy=False), trial
