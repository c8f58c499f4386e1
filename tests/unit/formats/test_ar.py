"""ar archives: every number read from a member header is checked before use,
and the walk over members always advances.

Synthetic archives with one field edited at a time (the member size, the BSD
``#1/N`` name length, the GNU ``/N`` long-name index), each refused with an
error that names the field and its offset; real archives written by GNU ar
and llvm-ar (GNU and BSD formats) read as ``ar t`` lists them; and a
168-byte archive that once made ``report`` loop forever, run as a user would
with a timeout."""

from __future__ import annotations

import itertools
import shutil
import subprocess
import sys
import zipfile

import pytest

from spillway.errors import InputError
from spillway.formats import bundles, offload_binary
from spillway.formats.ar import iter_ar_members
from spillway.formats.walk import advance

SPILLWAY = [sys.executable, "-m", "spillway"]
MAGIC = b"!<arch>\n"
# A bound no honest walk reaches on these small inputs: a walker that re-yields
# members without advancing would run into it.
ITERATION_BOUND = 1000


def header(name: str | bytes, size: int | str | bytes) -> bytes:
    name = name if isinstance(name, bytes) else name.encode("latin-1")
    size = size if isinstance(size, bytes) else str(size).encode()
    out = name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"644".ljust(8) + size.ljust(10) + b"`\n"
    assert len(out) == 60
    return out


def member(name: str | bytes, data: bytes, size: int | str | bytes | None = None) -> bytes:
    out = header(name, len(data) if size is None else size) + data
    return out + b"\n" if len(out) % 2 else out


def walk(data: bytes) -> list[tuple[str, bytes, int]]:
    """The members, pulled at most ITERATION_BOUND times."""
    found = list(itertools.islice(iter_ar_members(memoryview(data), "t.a"), ITERATION_BOUND))
    assert len(found) < ITERATION_BOUND, "the walk did not end"
    return [(name, bytes(body), offset) for name, body, offset in found]


def refused(data: bytes, *fragments: str) -> InputError:
    with pytest.raises(InputError) as caught:
        walk(data)
    text = str(caught.value)
    assert "\n" not in text
    for fragment in fragments:
        assert fragment in text, (fragment, text)
    return caught.value


def test_gnu_and_bsd_members_are_read():
    long_name = "a_member_name_longer_than_sixteen.o"
    table = (long_name + "/\n").encode()
    archive = (MAGIC + member("/", b"\0\0\0\0") + member("//", table) + member("short.o/", b"abc")
               + member("/0", b"xyz") + member("#1/12", b"bsd_name.o\0\0" + b"body"))
    assert [(name, body) for name, body, _ in walk(archive)] == [
        ("short.o", b"abc"), (long_name, b"xyz"), ("bsd_name.o", b"body")]
    # Offsets are of each member's data in the archive (after a BSD name).
    for name, body, offset in walk(archive):
        assert archive[offset:offset + len(body)] == body


# The member size field: only digits padded with spaces, as ar writes it.
@pytest.mark.parametrize("field", ["-61", "-60", "-1", "+4", " 4", "4_0", "0x4", "", "4 4", "٤"])
def test_member_size_field_accepts_only_what_ar_writes(field):
    data = MAGIC + header("a.o/", field.encode("utf-8")[:10]) + b"abcd"
    error = refused(data, "bad member size field")
    assert error.offset == 8 + 48          # the field itself


@pytest.mark.parametrize("size", [5, 6, 10**9, 9_999_999_999])
def test_member_size_past_the_end(size):
    error = refused(MAGIC + header("a.o/", size) + b"abcd", "runs past the end of the archive")
    assert error.offset == 8 + 48


def test_zero_sized_members_advance():
    data = MAGIC + member("a.o/", b"") * 5
    assert [(n, b) for n, b, _ in walk(data)] == [("a.o", b"")] * 5


@pytest.mark.parametrize("raw, message", [
    ("#1/-5", "bad BSD member name length"), ("#1/+5", "bad BSD member name length"),
    ("#1/5_0", "bad BSD member name length"), ("#1/x", "bad BSD member name length"),
    ("#1/", "bad BSD member name length"), ("#1/99", "longer than its member"),
    ("#1/5", "longer than its member"),
])
def test_bsd_name_length(raw, message):
    error = refused(MAGIC + member(raw, b"abcd") + member("b.o/", b"1234"), message)
    assert error.offset == 8


@pytest.mark.parametrize("raw, table, message", [
    ("/40", b"x.o/\n", "past the // member"),
    ("/5", b"x.o/\n", "past the // member"),
    ("/0", None, "no // member before it"),
    ("/1_0", b"x.o/\n" * 4, "bad long-name index"),
    ("/1x", b"x.o/\n", "bad long-name index"),
    (b"/\xb2", b"x.o/\n", "bad long-name index"),     # Latin-1 superscript two: str.isdigit() says yes
])
def test_long_name_index(raw, table, message):
    prefix = MAGIC + (member("//", table) if table is not None else b"")
    error = refused(prefix + member(raw, b"abcd"), message)
    assert error.offset == len(prefix)


def test_the_168_byte_archive_that_hung():
    data = MAGIC + member("a.txt/", b"hello world, not an object file at all!\n") + header("b.o/", "-61")
    assert len(data) == 168
    refused(data, "bad member size field '-61", "ar archive")


def test_advance_refuses_a_walk_that_stands_still():
    assert advance(8, 68, container="x") == 68
    for following in (8, 7, 0, -52):
        with pytest.raises(InputError, match="would not advance"):
            advance(8, following, container="x", what="member")


def test_bundle_walk_refuses_a_length_that_does_not_advance(monkeypatch):
    """walk_lazy's lengths come from checked headers; if one ever gave 0 the
    walk would stand still: advance() ends it instead (counted here)."""
    calls = []

    def zero_length(data, **_):
        calls.append(1)
        assert len(calls) < ITERATION_BOUND, "the walk did not end"
        return [], 0
    monkeypatch.setattr(bundles, "parse_uncompressed", zero_length)
    with pytest.raises(InputError, match="would not advance"):
        bundles.walk_lazy(memoryview(bundles.UNCOMPRESSED_MAGIC + b"\0" * 40))
    assert len(calls) == 1


def test_offload_section_walk_refuses_a_record_that_does_not_advance(monkeypatch):
    calls = []

    def zero_size(data, base, **_):
        calls.append(1)
        assert len(calls) < ITERATION_BOUND, "the walk did not end"
        return [], 0
    monkeypatch.setattr(offload_binary, "parse_record", zero_size)
    with pytest.raises(InputError, match="would not advance"):
        offload_binary.parse_section(memoryview(offload_binary.MAGIC + b"\1" * 60))
    assert len(calls) == 1


# -- real archives, and the command line ---------------------------------------------

def _tool(*names: str) -> str:
    for name in names:
        if shutil.which(name):
            return name
    pytest.skip(f"none of {names} installed (scripts/install-test-deps.sh installs them)")


@pytest.mark.parametrize("tool, fmt", [("ar", None), ("llvm-ar-22", "gnu"), ("llvm-ar-22", "bsd")])
def test_real_archives_read_as_ar_lists_them(tmp_path, tool, fmt):
    program = _tool(tool)
    names = ["a.o", "a_member_name_longer_than_sixteen_bytes.o", "odd.o", "e.o"]
    for index, name in enumerate(names):
        (tmp_path / name).write_bytes(b"x" * (index * 7 + 1))
    command = [program, "rc" + ("S" if tool == "ar" else "")] + ([f"--format={fmt}"] if fmt else [])
    subprocess.run([*command, "lib.a", *names], cwd=tmp_path, check=True)
    listed = subprocess.run([program, "t", "lib.a"], cwd=tmp_path, check=True, capture_output=True,
                            text=True).stdout.split()
    data = (tmp_path / "lib.a").read_bytes()
    got = walk(data)
    assert [name for name, _, _ in got] == listed == names
    assert [body for _, body, _ in got] == [(tmp_path / n).read_bytes() for n in names]


def _run_with_timeout(*args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([*SPILLWAY, *args], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"spillway {' '.join(args)} did not end within 60 s (the walk loops)")


def _hang_archive() -> bytes:
    return MAGIC + member("a.txt/", b"hello world, not an object file at all!\n") + header("b.o/", "-61")


def test_hang_archive_gives_one_line_on_the_command_line(tmp_path):
    path = tmp_path / "libhang.a"
    path.write_bytes(_hang_archive())
    result = _run_with_timeout("report", "--all", str(path))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0] == (f"spillway: error: {path}: ar archive at offset 0x9c: bad member size field "
                        f"'-61       ': ar writes decimal digits padded with spaces")


def test_hang_archive_inside_a_wheel(tmp_path):
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("pkg/lib/libhang.a", _hang_archive())
    result = _run_with_timeout("report", "--all", str(wheel))
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "bad member size field '-61" in result.stderr and "libhang.a" in result.stderr
