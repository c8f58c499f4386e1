"""Where output goes wrong, through the installed command: standard output
closed or on a full disk, a broken pipe, a read-only directory, a full disk
for -o (RLIMIT_FSIZE, and a 64 KiB tmpfs where mounting is allowed).  Each is
one line and exit 2 (a broken pipe is quiet), and nothing already there is
lost."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess

import pytest

from faultkit import CODE_OBJECT, code_object_with_kernels, one_line_error, run, spillway


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """A code object with enough kernels that its table and JSON are large."""
    path = tmp_path_factory.mktemp("many") / "many.co"
    path.write_bytes(code_object_with_kernels([{"name": f"_Z6kernelILi{i}EEvPf"} for i in range(400)]))
    return path


def test_closed_stdout(many):
    result = subprocess.run(["bash", "-c", '"$@" >&-', "-", *spillway(), "report", "--all", str(many)],
                            capture_output=True, timeout=120)
    one_line_error(result, "standard output is closed")


def test_closed_stdout_with_an_output_file_still_writes_it(many, tmp_path):
    out = tmp_path / "r.json"
    result = subprocess.run(["bash", "-c", '"$@" >&-', "-", *spillway(), "report", "--json", "-o", str(out),
                             str(many)], capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes().startswith(b"{")


@pytest.mark.parametrize("command", [["report", "--all"], ["report", "--json"]])
def test_stdout_on_a_full_disk(many, command):
    with open("/dev/full", "wb") as full:
        result = subprocess.run([*spillway(), *command, str(many)], stdout=full, stderr=subprocess.PIPE,
                                timeout=120)
    one_line_error(result, "standard output", "No space left on device")


def test_broken_pipe_is_quiet(many):
    result = subprocess.run(["bash", "-c", '"$@" | head -c 10 >/dev/null; exit ${PIPESTATUS[0]}', "-",
                             *spillway(), "report", "--all", str(many)], capture_output=True, timeout=120)
    assert result.returncode == 0
    assert result.stderr == b""


@pytest.fixture
def read_only_folder(tmp_path):
    """A directory nothing can be created in, even by root (who ignores
    permission bits): immutable (chattr +i) where the file system allows it,
    else permission bits for a non-root user."""
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copy(CODE_OBJECT, folder / "k.co")
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)],
                                                            capture_output=True).returncode != 0:
            pytest.skip("root, and no immutable directories on this file system")
        try:
            yield folder
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=False)
    else:
        os.chmod(folder, 0o555)
        try:
            yield folder
        finally:
            os.chmod(folder, 0o755)


def test_read_only_directory(read_only_folder):
    folder = read_only_folder
    result = run("baseline", "write", folder / "k.co", "-o", folder / "b.json", "--note", "n")
    line = one_line_error(result, "b.json")
    assert "not permitted" in line or "Permission denied" in line, line
    report = run("report", "--json", "-o", folder / "r.json", folder / "k.co")
    one_line_error(report, "r.json")
    assert sorted(os.listdir(folder)) == ["k.co"]


def _file_size_limit(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_full_disk_for_output_file_rlimit(many, tmp_path):
    """-o onto an existing baseline when the new one cannot be written whole:
    one line, and the old baseline is byte-identical."""
    baseline = tmp_path / "b.json"
    assert run("baseline", "write", CODE_OBJECT, "-o", baseline, "--note", "n").returncode == 0
    old = baseline.read_bytes()
    result = run("baseline", "write", many, "-o", baseline, "--allow", "*", "--reason", "r",
                 preexec_fn=_file_size_limit(4096))
    one_line_error(result, "b.json", "too large")
    assert baseline.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["b.json"]
    report = run("report", "--json", "-o", tmp_path / "r.json", many, preexec_fn=_file_size_limit(4096))
    one_line_error(report, "r.json")
    assert not (tmp_path / "r.json").exists()


@pytest.fixture
def small_filesystem(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (RLIMIT_FSIZE test covers a full disk)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.fixture(scope="module")
def larger(tmp_path_factory):
    """Kernels enough that their baseline (about 130 bytes a kernel) is over the 64 KiB tmpfs."""
    path = tmp_path_factory.mktemp("larger") / "larger.co"
    path.write_bytes(code_object_with_kernels([{"name": f"_Z6kernelILi{i}EEvPf"} for i in range(1200)]))
    return path


def test_full_disk_for_output_file_tmpfs(larger, small_filesystem):
    baseline = small_filesystem / "b.json"
    assert run("baseline", "write", CODE_OBJECT, "-o", baseline, "--note", "n").returncode == 0
    old = baseline.read_bytes()
    result = run("baseline", "write", larger, "-o", baseline, "--allow", "*", "--reason", "r")
    one_line_error(result, "b.json", "No space left on device")
    assert baseline.read_bytes() == old
    assert [p.name for p in small_filesystem.iterdir()] == ["b.json"]
