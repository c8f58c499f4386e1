"""--max-kernels (issue 30, point 6): a 5.7 MB wheel listed a million kernels
(22-30 s, up to 6.5 GB over the process tree).  A run that reads more kernels
than the limit is one line and exit 2: a code object is refused before its
kernels are decoded, a task of a worker and the run's total as they come.
Inputs: code objects written by tests/support/synthetic_elf.py."""

from __future__ import annotations

import zipfile

import pytest

from spillway.errors import InputError
from spillway.formats import codeobject, metadata
from spillway.formats.containers import DEFAULT_MAX_KERNELS
from spillway.report.reader import ReadOptions, read_path
from support import synthetic_elf
from support.gate_fixtures import assert_one_line_error, run_cli


def _co(path, count: int, prefix: str = "k"):
    path.write_bytes(synthetic_elf.code_object(synthetic_elf.many_kernels(count, prefix)))
    return path


def test_kernel_count_reads_the_array_length_without_decoding():
    note = synthetic_elf.msgpack.packb({"amdhsa.target": "amdgcn-amd-amdhsa--gfx90a",
                                        "amdhsa.kernels": [synthetic_elf.kernel_metadata(f"k{n}") for n in range(7)]})
    assert metadata.kernel_count(note) == 7
    assert metadata.kernel_count(b"\xc1") is None and metadata.kernel_count(synthetic_elf.msgpack.packb([1])) is None
    assert metadata.kernel_count(synthetic_elf.msgpack.packb({"amdhsa.target": "x"})) is None


def test_a_code_object_over_the_limit_is_refused_before_its_kernels_are_decoded(tmp_path, monkeypatch):
    data = synthetic_elf.code_object(synthetic_elf.many_kernels(10))
    assert len(codeobject.parse(data, max_kernels=10).kernels) == 10

    def refuse(*_):
        raise AssertionError("decoded")
    monkeypatch.setattr(metadata, "read_fast", refuse)
    with pytest.raises(InputError, match="its metadata lists 10 kernels, more than the 9"):
        codeobject.parse(data, max_kernels=9)


@pytest.mark.parametrize("json_output", [False, True])
def test_the_run_total_is_limited(tmp_path, capsys, json_output):
    one = _co(tmp_path / "one.co", 6, "a")
    two = _co(tmp_path / "two.co", 6, "b")
    out = ["--json"] if json_output else []
    assert run_cli(capsys, "report", str(one), str(two), "--max-kernels", "12", *out).status == 0
    # across inputs: the second path's kernels go over
    assert_one_line_error(run_cli(capsys, "report", str(one), str(two), "--max-kernels", "11", *out), str(two),
                   "more than 11 kernels in this run", "--max-kernels N")
    # inside one input: a folder's code objects, parsed as one task
    folder = tmp_path / "folder"
    folder.mkdir()
    for n in range(3):
        _co(folder / f"{n}.co", 4, f"c{n}_")
    assert_one_line_error(run_cli(capsys, "report", str(folder), "--max-kernels", "10", *out), str(folder / "2.co"),
                   "more than 10 kernels in this run")         # (named by the task: the code object over)


def test_a_wheel_over_the_limit(tmp_path, capsys):
    wheel = tmp_path / "w-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("w/k.co", synthetic_elf.code_object(synthetic_elf.many_kernels(20)))
    assert len(read_path(str(wheel), ReadOptions(max_kernels=20))[1]) == 20
    with pytest.raises(InputError, match="lists 20 kernels, more than the 19"):
        read_path(str(wheel), ReadOptions(max_kernels=19))
    baseline = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", str(wheel), "-o", str(baseline), "--note", "n").status == 0
    for command in (["check", str(wheel), "--baseline", str(baseline)],
                    ["baseline", "write", str(wheel), "-o", str(tmp_path / "c.json"), "--note", "n"],
                    ["compare", str(wheel), "--against", str(wheel)]):
        assert_one_line_error(run_cli(capsys, *command, "--max-kernels", "19"), "lists 20 kernels, more than the 19")


def test_the_default_is_twice_the_largest_library_measured(capsys):
    assert DEFAULT_MAX_KERNELS == 500_000 and ReadOptions().max_kernels == DEFAULT_MAX_KERNELS
    result = run_cli(capsys, "report", "x.co", "--max-kernels", "0")
    assert result.status == 2 and "--max-kernels: count must be positive: '0'" in result.err
