"""`report --json` is written while it is read (report.reader.report_json):
the same document as the in-memory reader's, members in the order they
become known, nothing on standard output before the first kernel, and the
parts of a large input handed on a code object at a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import DATA
from spillway.errors import InputError
from spillway.report import reader
from spillway.report.reader import ReadOptions, json_chunks, read_report, report_json
from support.formats_fixtures import one_line_error, run_cli

TENSILE = DATA / "tensile"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Two code objects of five kernels each (tests/data/tensile) and a file that is not one."""
    folder = tmp_path_factory.mktemp("streamed")
    gfx1100, gfx90a = (TENSILE / "tensile_gfx1100.hsaco"), (TENSILE / "tensile_gfx90a.hsaco")
    text = folder / "notes.txt"
    text.write_text("not a binary\n")
    return {"gfx1100": gfx1100, "gfx90a": gfx90a, "text": text, "folder": folder}


def streamed(paths, options=None) -> dict:
    return json.loads(b"".join(report_json([str(p) for p in paths], options)))


def in_memory(paths, options=None) -> dict:
    return json.loads(b"".join(json_chunks(read_report([str(p) for p in paths], options, compact=True))))


@pytest.mark.parametrize("model", ["llvm22", "llvm23", "producer"])
def test_the_streamed_document_equals_the_in_memory_one(inputs, model):
    paths = [inputs["gfx1100"], inputs["gfx90a"]]
    options = ReadOptions(occupancy_model=model)
    got, expected = streamed(paths, options), in_memory(paths, options)
    assert got == expected
    assert len(got["kernels"]) == sum(f["kernels"] for f in got["files"]) == 10
    # files is known only once the kernels are read: it comes after them
    assert list(got) == ["schema", "spillway_version", "occupancy_model", "kernels", "files"]


def test_one_kernel_per_line(inputs):
    text = b"".join(report_json([str(inputs["gfx1100"]), str(inputs["gfx90a"])])).decode()
    lines = text.splitlines()
    start = lines.index('  "kernels": [')
    records = lines[start + 1:start + 11]
    assert all(line.startswith("    {") for line in records)
    assert [json.loads(line.rstrip(",")) for line in records] == json.loads(text)["kernels"]
    assert lines[start + 11] == "  ],"


def test_pieces_come_a_code_object_at_a_time(inputs):
    """The workers hand back each code object's lines as they go, so a bundle of
    many targets never becomes one string in the worker or the parent."""
    chunks = list(report_json([str(inputs["gfx1100"]), str(inputs["gfx90a"])]))
    assert len(chunks) == 3          # head + first code object, second code object, tail
    assert json.loads(b"".join(chunks))["kernels"]


def test_no_kernels_and_on_empty(inputs, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    document = streamed([empty])
    assert document["kernels"] == [] and document["files"][0]["kind"] == "directory"

    def refuse():
        raise RuntimeError("no kernels")

    with pytest.raises(RuntimeError):
        list(report_json([str(empty)], on_empty=refuse))


def test_the_command_prints_nothing_before_an_error(inputs):
    result = run_cli("report", "--all", "--json", str(inputs["text"]))
    one_line_error(result, "notes.txt")
    assert result.stdout == ""
    # a good input first, then a bad one: the file output is atomic, so no file is left
    out = inputs["folder"] / "out.json"
    result = run_cli("report", "--all", "--json", "-o", str(out), str(inputs["gfx1100"]), str(inputs["text"]))
    one_line_error(result, "notes.txt")
    assert not out.exists()


def test_the_command_streams_the_same_document(inputs):
    result = run_cli("report", "--all", "--json", str(inputs["gfx1100"]), str(inputs["gfx90a"]))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == in_memory([inputs["gfx1100"], inputs["gfx90a"]])


def test_an_empty_selection_is_an_error_not_an_empty_document(inputs):
    result = run_cli("report", "--all", "--json", "--target", "gfx942", str(inputs["gfx1100"]))
    one_line_error(result, "no kernels found", "selected targets")
    assert result.stdout == ""


def test_streamed_report_reads_back_in_check(inputs, tmp_path):
    """check reads the streamed layout (files after kernels) as a report."""
    report = tmp_path / "r.json"
    assert run_cli("report", "--all", "--json", "-o", str(report), str(inputs["gfx1100"])).returncode == 0
    baseline = tmp_path / "b.json"
    written = run_cli("baseline", "write", str(report), "-o", str(baseline), "--note", "t")
    assert written.returncode == 0, written.stderr
    checked = subprocess.run([sys.executable, "-m", "spillway", "check", str(report), "--baseline", str(baseline)],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


# -- the workers write the kernels themselves (report.reader.write_report_json) ----------

@pytest.fixture()
def many_tasks(monkeypatch, tmp_path):
    """A folder of twelve code objects, one task each, read by the pool (the
    thresholds that keep small inputs in one process lowered)."""
    folder = tmp_path / "many"
    folder.mkdir()
    for number in range(12):
        source = TENSILE / ("tensile_gfx1100.hsaco" if number % 2 else "tensile_gfx90a.hsaco")
        (folder / f"k{number:02d}.hsaco").write_bytes(source.read_bytes())
    monkeypatch.setattr(reader, "_PARALLEL_MIN_TASKS", 2)
    monkeypatch.setattr(reader, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(reader, "_tasks", lambda units: [(i,) for i in range(len(units))])
    return folder


def _written(paths, tmp_path, options=None) -> bytes:
    out = tmp_path / "written.json"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        reader.write_report_json(fd, [str(p) for p in paths], options)
    finally:
        os.close(fd)
    return out.read_bytes()


def test_the_pool_writes_the_same_bytes_in_order(many_tasks, tmp_path):
    assert (os.cpu_count() or 1) > 1, "the pool needs two cores"
    written = _written([many_tasks], tmp_path)
    assert written == b"".join(report_json([str(many_tasks)]))
    document = json.loads(written)
    assert document == in_memory([many_tasks])
    assert len(document["kernels"]) == 60
    # in the folder's order, a code object after another
    files = [k["file"] for k in document["kernels"]]
    assert files == sorted(files)


def test_inline_writes_the_same_bytes(inputs, tmp_path):
    paths = [inputs["gfx1100"], inputs["gfx90a"]]
    assert _written(paths, tmp_path) == b"".join(report_json([str(p) for p in paths]))


def test_a_bad_code_object_stops_every_later_write(many_tasks, tmp_path):
    # a code object the scan accepts, whose metadata note is broken
    data = bytearray((many_tasks / "k05.hsaco").read_bytes())
    at = data.find(b"amdhsa.kernels")
    assert at > 0
    data[at - 1:at + 14] = b"\xc1" * 15
    (many_tasks / "k05.hsaco").write_bytes(bytes(data))
    out = tmp_path / "partial.json"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with pytest.raises(InputError, match="k05"):
        reader.write_report_json(fd, [str(many_tasks)])
    os.close(fd)
    written = out.read_bytes().decode()
    # what came before the bad task, in order, and nothing after it
    files = [json.loads(line.strip().rstrip(","))["file"] for line in written.splitlines()
             if line.startswith("    {")]
    assert files == sorted(files) and all(f.rsplit("/", 1)[1] < "k05" for f in files)
    assert len(files) == 25
    assert '"files"' not in written


def test_a_closed_pipe_is_a_broken_pipe_in_the_parent(many_tasks):
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        with pytest.raises(BrokenPipeError):
            reader.write_report_json(write_end, [str(many_tasks)])
    finally:
        os.close(write_end)


def test_the_command_through_the_pool(many_tasks, tmp_path):
    """The command line's own writer (atomic file, and standard output) with the pool."""
    from spillway.cli.common import read_options, report_json_writers
    from spillway.cli import build_parser
    from spillway.render.emit import write_to

    args = build_parser().parse_args(["report", "--all", "--json", str(many_tasks)])
    out = tmp_path / "out.json"
    write_to(str(out), *report_json_writers([str(many_tasks)], read_options(args)))
    assert out.read_bytes() == b"".join(report_json([str(many_tasks)]))
