"""The recorded command line (.GCC.command.line): the section parser and the
code-generation flags on synthetic bytes, and on objects clang 22 built here
with -frecord-command-line (tests/data/command_line, build.sh), against
llvm-readelf's dump of the section."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spillway.formats import codeobject
from spillway.formats.command_line import (code_generation_flags, flag_changes, parse_section,
                                            split_arguments)
from spillway.report.reader import ReadOptions, read_report

DATA = Path(__file__).resolve().parents[2] / "data" / "command_line"


def test_section_strings_in_order_empty_and_repeated_ones_dropped():
    data = b"\0clang -O3 -c a.hip\0clang -O2 -c b.hip\0clang -O3 -c a.hip\0\0"
    assert parse_section(data) == ["clang -O3 -c a.hip", "clang -O2 -c b.hip"]
    assert parse_section(memoryview(data)) == parse_section(data)
    assert parse_section(b"") == []
    assert parse_section(b"\0\0") == []
    # Not UTF-8: replaced, never an error (it is text to show and compare).
    assert parse_section(b"\0clang -D\xffX\0") == ["clang -D\ufffdX"]
    # No terminating NUL (a truncated section): the last string still counts.
    assert parse_section(b"\0clang -O1") == ["clang -O1"]


def test_arguments_split_on_unescaped_spaces():
    assert split_arguments("clang -O3  -c a.hip") == ["clang", "-O3", "-c", "a.hip"]
    assert split_arguments(r"clang -I my\ dir -DX=a\\b") == ["clang", "-I", "my dir", r"-DX=a\b"]
    assert split_arguments("clang \\ ") == ["clang", " "]
    assert split_arguments("clang x\\") == ["clang", "x\\"]
    assert split_arguments("") == []


def test_code_generation_flags_leave_out_places_inputs_and_targets():
    line = ("/usr/lib/llvm-22/bin/clang --driver-mode=g++ -x hip -std=c++17 -I /src/include -Iother "
            "-isystem /sys -O3 -cuid=spw_k -frecord-command-line -mllvm -amdgpu-num-vgpr=64 -DN=4 "
            "-c k.hip -o k.o -MD -MF k.d --offload-arch=gfx1151 -mcpu=gfx1151 -flto-partitions=8")
    assert code_generation_flags([line]) == [
        "--driver-mode=g++", "-x hip", "-std=c++17", "-O3", "-mllvm -amdgpu-num-vgpr=64", "-DN=4",
        "-flto-partitions=8"]
    # Per target only the target differs: one set of flags for the build.
    other = line.replace("-mcpu=gfx1151", "-mcpu=gfx90a")
    assert code_generation_flags([line, other]) == code_generation_flags([line])
    # A flag only one translation unit has is a flag of the build.
    assert code_generation_flags([line, line.replace("-O3", "-O3 -foffload-lto=full")])[-1] == "-foffload-lto=full"
    # An option that wants a value but ends the line: nothing is made up.
    assert code_generation_flags(["clang -O2 -mllvm"]) == ["-O2"]
    assert code_generation_flags([]) == []


def test_flag_changes():
    assert flag_changes(["-O3", "-x hip"], ["-O3", "-x hip", "-foffload-lto"]) == (["-foffload-lto"], [])
    assert flag_changes(["-O3", "-foffload-lto"], ["-O2"]) == (["-O2"], ["-O3", "-foffload-lto"])
    assert flag_changes(["-O3"], ["-O3"]) == ([], [])


def _dumped(path: Path) -> list[str]:
    """llvm-readelf -p's strings: lines `[  offset] text`."""
    return [m.group(1) for m in re.finditer(r"^\s*\[\s*[0-9a-f]+\]\s(.*)$", path.read_text(), re.M)]


def test_fixture_section_matches_llvm_readelf(tmp_path):
    """recorded.o's gfx1151 code object, as llvm-readelf-22 dumped its section
    when build.sh made it (recorded.txt), and live when LLVM 22's tools are here."""
    document = read_report([str(DATA / "recorded.o")], ReadOptions())
    lines = document["files"][0]["command_lines"]
    expected = _dumped(DATA / "recorded.txt")
    assert len(expected) == 1 and "-mcpu=gfx1151" in expected[0]
    assert lines[0] == expected[0]
    assert lines[1] == expected[0].replace("-mcpu=gfx1151", "-mcpu=gfx90a")
    assert len(lines) == 2
    tools = ("llvm-objcopy-22", "clang-offload-bundler-22", "llvm-readelf-22")
    if not all(shutil.which(tool) for tool in tools):
        pytest.skip("LLVM 22's tools are not here (the committed dump was checked above)")
    fatbin, co = tmp_path / "fatbin", tmp_path / "gfx90a.co"
    subprocess.run(["llvm-objcopy-22", f"--dump-section=.hip_fatbin={fatbin}", str(DATA / "recorded.o"),
                    str(tmp_path / "copy.o")], check=True)
    subprocess.run(["clang-offload-bundler-22", "--unbundle", "--type=o", f"--input={fatbin}",
                    "--targets=hipv4-amdgcn-amd-amdhsa--gfx90a", f"--output={co}"], check=True)
    dump = subprocess.run(["llvm-readelf-22", "-p", ".GCC.command.line", str(co)], check=True,
                          capture_output=True, text=True).stdout
    (tmp_path / "dump.txt").write_text(dump)
    assert _dumped(tmp_path / "dump.txt") == [lines[1]]
    assert codeobject.parse(co.read_bytes()).command_lines == (lines[1],)


def test_fixture_flags_and_files_without_a_record():
    recorded = read_report([str(DATA / "recorded.o")], ReadOptions())["files"][0]["command_lines"]
    lto = read_report([str(DATA / "recorded-lto.o")], ReadOptions())["files"][0]["command_lines"]
    assert flag_changes(code_generation_flags(recorded), code_generation_flags(lto)) == (["-foffload-lto=full"], [])
    plain = read_report([str(DATA / "plain.o")], ReadOptions())["files"][0]
    assert "command_lines" not in plain      # outputs of binaries without one stay as they were
