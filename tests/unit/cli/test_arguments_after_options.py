"""Paths and a FILTER after options (``spillway report LIB --isa FILTER``,
``check A --baseline B C``): argparse ends a ``nargs="+"`` positional at the
first option and refused what came after it; they join the command's paths,
in order.  What is not a path (an unknown option) stays a usage error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.gate_fixtures import run_cli

ISA = Path(__file__).resolve().parents[3] / "tests" / "data" / "isa" / "co"
NEW, OLD = ISA / "gfx90a.clang22.co", ISA / "gfx90a.clang19.co"


@pytest.mark.parametrize("argv", [
    ["report", NEW, "--format", "json", "spill_in_loop"],
    ["report", "--format", "json", NEW, "spill_in_loop"],
    ["report", NEW, "--target", "gfx90a", "--format", "json", "spill_in_loop"],
])
def test_a_filter_after_options_filters(capsys, argv):
    run = run_cli(capsys, *argv)
    assert run.status == 0, run.err
    assert [k["name"] for k in json.loads(run.out)["kernels"]] == ["spill_in_loop"]


def test_paths_after_options_are_read(capsys):
    both = run_cli(capsys, "report", NEW, "--format", "json", OLD)
    assert both.status == 0, both.err
    assert {k["file"] for k in json.loads(both.out)["kernels"]} == {str(NEW), str(OLD)}
    run = run_cli(capsys, "code", NEW, "--json", "spill_in_loop")
    assert run.status == 0 and json.loads(run.out)["kernels"][0]["name"] == "spill_in_loop"


def test_an_unknown_option_is_still_a_usage_error(capsys):
    run = run_cli(capsys, "report", NEW, "--format", "json", "spill_in_loop", "--bogus")
    assert run.status == 2 and "unrecognized arguments: spill_in_loop --bogus" in run.err
    run = run_cli(capsys, "schema", "report", "extra")
    assert run.status == 2 and "unrecognized arguments: extra" in run.err
