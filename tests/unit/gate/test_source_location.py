"""check failures at the kernel's source line (gate.source_location, issue
32): the file relative to the source root, the check JSON's ``source`` and
SARIF's physicalLocation (the baseline line kept as a related location), the
fall back to the baseline line without a line table, --source-root and
--lines-from.  The lines themselves against llvm-objdump -d -l:
tests/oracle/test_lines_outputs_oracle.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spillway.gate.source_location import repository_file
from support.gate_fixtures import assert_one_line_error, run_cli
from support.sarif_schema import sarif_validator

REPO = Path(__file__).resolve().parents[3]
ISA = REPO / "tests" / "data" / "isa"
WITH_LINES = ISA / "lines" / "co" / "gfx90a.clang22.dwarf5.co"     # built at /spillway (the repository there)
PLAIN = ISA / "co" / "gfx90a.clang22.co"                            # the same code without line tables
OLDER = ISA / "co" / "gfx90a.clang19.co"


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> Path:
    """A baseline of the clang 19 build: clang 22's build spills more in five kernels."""
    path = tmp_path_factory.mktemp("base") / "base.json"
    from spillway.cli import main
    assert main(["baseline", "write", str(OLDER), "-o", str(path), "--note", "clang 19"]) == 0
    return path


def check(capsys, *argv):
    return run_cli(capsys, "check", *argv)


def test_repository_file(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.hip").write_text("")
    root = str(tmp_path)
    assert repository_file(f"{root}/src/k.hip", "/elsewhere", root) == "src/k.hip"          # under the root
    assert repository_file(f"{root}/src/../src/k.hip", "", root) == "src/k.hip"
    assert repository_file("/build/src/k.hip", "/build", root) == "src/k.hip"              # under comp_dir
    assert repository_file("/__w/app/app/src/k.hip", "/tmp/obj", root) == "src/k.hip"      # another checkout
    assert repository_file("/opt/rocm/include/hip/hip_runtime.h", "/build", root) is None  # not in the repository
    assert repository_file("/build/src/missing.hip", "/build", root) is None
    assert repository_file("/build/../../etc/passwd", "/build", root) is None


def test_json_and_sarif_point_at_the_source_line(capsys, baseline, monkeypatch):
    monkeypatch.chdir(REPO)
    run = check(capsys, WITH_LINES, "--baseline", baseline, "--format", "json")
    assert run.status == 1, run.err
    failures = json.loads(run.out)["failures"]
    sources = {f["name"]: f["source"] for f in failures}
    # The two stores at the head of the innermost loop's body are line 0 in the table with no earlier line in
    # their block: they take its first line, 88 (issue 41), which ties line 90's innermost-loop bytes and
    # comes first.
    assert sources["spill_in_loop"] == {"file": "tests/data/isa/kernels.cpp", "line": 88, "column": 17,
                                        "inferred": True, "chosen_by": "the line with the most scratch traffic"}
    assert len(sources) == len(failures) == 5
    source_text = (REPO / "tests" / "data" / "isa" / "kernels.cpp").read_text().splitlines()
    assert "float w = b[o * m + j];" in source_text[88 - 1]
    for name, source in sources.items():
        if name != "spill_in_loop":
            assert "for (int i = 0;" in source_text[source["line"] - 1], name      # each a loop writing v[] or p[]
    run = check(capsys, WITH_LINES, "--baseline", baseline, "--format", "sarif")
    document = json.loads(run.out)
    sarif_validator().validate(document)
    results = document["runs"][0]["results"]
    for result in results:
        source = sources[result["properties"]["kernel"]]
        location = result["locations"][0]["physicalLocation"]
        assert location == {"artifactLocation": {"uri": source["file"], "uriBaseId": "%SRCROOT%"},
                            "region": {"startLine": source["line"], "startColumn": source["column"]}}
        related = result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert related.endswith("base.json")


def test_without_a_line_table_the_baseline_line_as_before(capsys, baseline, monkeypatch):
    monkeypatch.chdir(REPO)
    run = check(capsys, PLAIN, "--baseline", baseline, "--format", "json")
    assert run.status == 1 and all("source" not in f for f in json.loads(run.out)["failures"])
    run = check(capsys, PLAIN, "--baseline", baseline, "--format", "sarif")
    for result in json.loads(run.out)["runs"][0]["results"]:
        assert "relatedLocations" not in result
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("base.json")


def test_a_line_table_that_does_not_read_keeps_the_gate_and_the_baseline_line(capsys, baseline, monkeypatch,
                                                                               tmp_path):
    """The gate's verdict does not hang on debug information: a malformed .debug_line (Debian's
    librocsparse1 6.4.3 once read as one: its sections are zlib-compressed) leaves check at exit 1
    with its failures at the baseline's lines, not exit 2."""
    from elftools.elf.elffile import ELFFile

    data = bytearray(WITH_LINES.read_bytes())
    with open(WITH_LINES, "rb") as handle:
        at = ELFFile(handle).get_section_by_name(".debug_line")["sh_offset"]
    data[at:at + 4] = (0xFFFFFFF5).to_bytes(4, "little")         # a reserved unit length
    broken = tmp_path / "broken.co"
    broken.write_bytes(bytes(data))
    monkeypatch.chdir(REPO)
    for fmt in ("json", "sarif"):
        run = check(capsys, broken, "--baseline", baseline, "--format", fmt)
        assert run.status == 1, run.err
    run = check(capsys, broken, "--baseline", baseline, "--format", "json")
    failures = json.loads(run.out)["failures"]
    assert len(failures) == 5 and all("source" not in f for f in failures)


def test_a_debug_twin_gives_the_lines(capsys, baseline, monkeypatch):
    monkeypatch.chdir(REPO)
    run = check(capsys, PLAIN, "--baseline", baseline, "--format", "json", "--lines-from", WITH_LINES)
    from_twin = {f["name"]: f.get("source") for f in json.loads(run.out)["failures"]}
    run = check(capsys, WITH_LINES, "--baseline", baseline, "--format", "json")
    assert from_twin == {f["name"]: f.get("source") for f in json.loads(run.out)["failures"]}


def test_source_root(capsys, baseline, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)              # nothing of the repository here: no location
    run = check(capsys, WITH_LINES, "--baseline", baseline, "--format", "json")
    assert all("source" not in f for f in json.loads(run.out)["failures"])
    run = check(capsys, WITH_LINES, "--baseline", baseline, "--format", "json", "--source-root", REPO / "tests")
    assert {f["source"]["file"] for f in json.loads(run.out)["failures"]} == {"data/isa/kernels.cpp"}
    assert_one_line_error(check(capsys, WITH_LINES, "--baseline", baseline, "--format", "json", "--source-root",
                                tmp_path / "missing"), "--source-root", "not a directory")
