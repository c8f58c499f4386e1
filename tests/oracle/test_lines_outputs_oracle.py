"""Every source line spillway prints (issue 32) against LLVM's own tools, on
the line-table fixtures of every generation (tests/data/isa/lines/):

* ``spillway code --json``: each scratch access's and AGPR copy's ``source``
  (file, line, column, inferred) and each loop's ``head``/``back_branch``
  are the lines tests/support/lines_oracle.py gives from
  ``llvm-dwarfdump-22 --debug-line``'s rows and ``llvm-objdump -d -l``'s
  instructions, with the file and line objdump -l shows there;
* ``spillway code``'s text: every ``+0x..  kind  FILE:LINE[:COL]`` line of
  its source-line section names the same place (FILE relative to the
  compile unit's directory);
* its ``by_line`` and ``report --isa``'s ``source_lines.top``: the scratch
  bytes per lane, loads and stores, in loops and innermost loops, accesses,
  inferred ones, AGPR copies per line, summed from objdump's instructions by
  the oracle's own rules (tests/support/isa_oracle.py: which instructions
  are scratch accesses, their widths, the loop spans).
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

import pytest

from spillway.cli import main
from support import isa_oracle, lines_oracle

DATA = Path(__file__).resolve().parents[1] / "data" / "isa" / "lines" / "co"
FIXTURES = sorted(DATA.iterdir())
_LOCATION = re.compile(r"^    \+0x([0-9a-f]+)\s+.*?  (no line|(\S+?):(\d+)(?::(\d+))?( \(inferred\))?)$")


@functools.lru_cache(maxsize=None)
def oracle(path: Path) -> dict:
    """Per kernel: its start, {address: (file, line, column, inferred) or
    None} of every instruction, and its per-line traffic (lines_oracle)."""
    shown = lines_oracle.objdump_lines(lines_oracle.objdump_argv(path), path)
    by_address = {found.insn.address: found for found in shown}
    sequences = lines_oracle.sequences(lines_oracle.dwarfdump_rows(path)[0])
    insns = [s.insn for s in shown]
    functions = {f.name: f for f in isa_oracle.read_functions(path)}
    starts = {f.start: f.name for f in functions.values()}
    out = {}
    for name, function in functions.items():
        if function.kind != "kernel":
            continue
        expected = lines_oracle.expected_lines(sequences, insns, function.start, function.start + function.size)
        places = lines_oracle.places(expected, by_address)
        evidence = isa_oracle.evidence(function, insns, starts)
        psb = {int(q[2:q.index(":")]) for q in evidence.private_segment_buffer}
        out[name] = {"start": function.start, "places": places,
                     "traffic": lines_oracle.line_traffic(function, insns, places, psb)}
    return out


def _ours(capsys, *argv) -> tuple[int, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert status == 0, err
    return status, out


FIGURES = lines_oracle.TRAFFIC_FIELDS


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_code_json_places_every_access_copy_and_loop_as_llvm(capsys, path):
    want = oracle(path)
    _status, out = _ours(capsys, "code", path, "*", "--all", "--json")
    document = json.loads(out)
    placed = 0
    for kernel in document["kernels"]:
        name = kernel["symbol"].removesuffix(".kd")
        theirs = want[name]
        start = theirs["start"]
        assert kernel["source_lines"]["status"] == "placed"
        for instruction in kernel["instructions"]:
            if instruction["kind"] not in ("scratch_load", "scratch_store", "agpr_write", "agpr_read"):
                assert instruction["source"] is None
                continue
            expected = theirs["places"][start + instruction["offset"]]
            got = instruction["source"]
            assert (None if got is None else (got["file"], got["line"], got["column"], got["inferred"])) == \
                expected, (name, hex(instruction["offset"]))
            placed += got is not None
        for loop in kernel["loops"]:
            for member, offset in (("head", loop["start"]), ("back_branch", loop["end"])):
                got = loop[member]
                assert (None if got is None else (got["file"], got["line"], got["column"], got["inferred"])) == \
                    theirs["places"][start + offset], (name, member, hex(offset))
        # by_line: every line's figures are the oracle's sums
        rows = {(row["file"], row["line"]): [row[f] for f in FIGURES] for row in kernel["source_lines"]["by_line"]}
        assert rows == theirs["traffic"], name
    assert placed or path.name.startswith("headers."), path.name


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_code_text_prints_the_same_places(capsys, path):
    want = oracle(path)
    _status, out = _ours(capsys, "code", path, "*", "--all")
    printed = 0
    for block in out.split("\n\n"):
        lines = block.splitlines()
        name = lines[2].split("symbol ", 1)[1]
        theirs = want[name]
        comp_dir = next((line.split("paths under ", 1)[1].rstrip("):") for line in lines
                         if line.startswith("  source lines (from")), None)
        assert comp_dir is not None, name
        section = lines[lines.index(next(line for line in lines if line.startswith("  source lines (from"))) + 1:]
        for line in section:
            found = _LOCATION.match(line)
            if not found:
                continue
            expected = theirs["places"][theirs["start"] + int(found.group(1), 16)]
            if found.group(2) == "no line":
                assert expected is None, (name, line)
            else:
                file = found.group(3) if found.group(3).startswith("/") else f"{comp_dir}/{found.group(3)}"
                assert expected is not None, (name, line)
                assert (file, int(found.group(4)), int(found.group(5) or 0), bool(found.group(6))) == expected, \
                    (name, line)
            printed += 1
    assert printed or path.name.startswith("headers."), path.name


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_report_isa_top_lines_are_the_oracles(capsys, path):
    want = oracle(path)
    _status, out = _ours(capsys, "report", path, "--all", "--isa", "--json")
    for record in json.loads(out)["kernels"]:
        theirs = want[record["symbol"].removesuffix(".kd")]["traffic"]
        lines = record["isa"]["source_lines"]
        assert lines["status"] == "placed"
        top, more = lines_oracle.top_loop_lines(theirs, 8)
        assert [(row["file"], row["line"], [row[f] for f in FIGURES]) for row in lines["top"]] == \
            [(key[0], key[1], figures) for key, figures in top], record["name"]
        assert lines["more"] == more
