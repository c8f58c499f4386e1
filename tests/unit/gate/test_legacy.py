"""check-kernel-resources: the original script's four command lines, mapped
onto spillway with spillway's exit statuses."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from support.gate_fixtures import builds, load_json, oracle, run_cli  # noqa: F401
from spillway.cli.legacy import main as legacy_main
from spillway.cli.legacy import translate


@pytest.mark.parametrize("argv, expected", [
    (["lib.so", "--baseline", "b.json"], None),   # checked separately: needs the file
    (["new.so", "--compare", "old.so"], ["compare", "new.so", "--against", "old.so"]),
    (["lib.so", "--report"], ["report", "lib.so"]),
    (["lib.so", "--report", "gemm"], ["report", "lib.so", "gemm"]),
    (["lib.so", "--write-baseline", "b.json", "--note", "clang-22"],
     ["baseline", "write", "lib.so", "-o", "b.json", "--note", "clang-22"]),
])
def test_translation(argv, expected):
    if expected is None:
        assert translate(argv) == ["check", "lib.so", "--baseline", "b.json"]
    else:
        assert translate(argv) == expected


@pytest.mark.parametrize("argv", [
    [],
    ["lib.so"],                                                 # no mode
    ["lib.so", "--baseline", "b.json", "--compare", "old.so"],  # two modes
    ["lib.so", "--write-baseline", "b.json"],                   # no --note
    ["lib.so", "--baseline", "b.json", "--note", "x"],          # --note without --write-baseline
    ["lib.so", "--frobnicate"],
])
def test_misuse_exits_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        translate(argv)
    assert exc.value.code == 2
    assert "check-kernel-resources" in capsys.readouterr().err


def test_end_to_end(builds, capsys, tmp_path):
    baseline = tmp_path / "baseline.json"
    run = run_cli(capsys, builds.new, "--write-baseline", baseline, "--note", "clang-22 gfx1100",
                  entry=legacy_main)
    assert run.status == 0, run.err
    document = load_json(baseline)
    assert document["note"] == "clang-22 gfx1100" and document["gate"] == ["scratch"]

    run = run_cli(capsys, builds.new, "--baseline", baseline, entry=legacy_main)
    assert run.status == 0
    assert run.out.strip().splitlines()[-1].startswith("OK: ")

    run = run_cli(capsys, builds.old, "--baseline", baseline, entry=legacy_main)
    assert run.status == 1
    assert "over baseline: topk<32> [gfx1100]: scratch 272 B/lane" in run.out     # short names
    assert run.out.strip().splitlines()[-1].startswith("FAIL: ")

    run = run_cli(capsys, builds.new, "--compare", builds.old, entry=legacy_main)
    assert run.status == 0
    assert "less occupancy" in run.out.strip().splitlines()[-1]

    run = run_cli(capsys, builds.old, "--report", "topk", entry=legacy_main)
    assert run.status == 0
    assert "topk<32>" in run.out and "gemm_i8" not in run.out

    run = run_cli(capsys, builds.old, "--report", entry=legacy_main)
    expected = [k for k in oracle(builds.old, builds.work).values() if k.scratch or k.dynamic_stack]
    assert f"{len(expected)} kernels using scratch" in run.out

    run = run_cli(capsys, builds.old, "--baseline", tmp_path / "missing.json", entry=legacy_main)
    assert run.status == 2 and "missing.json: no such file; write it with: spillway baseline write" in run.err


def test_old_style_baseline_file_gets_a_hint(builds, capsys, tmp_path):
    old_style = tmp_path / "ignored-kernels.txt"
    old_style.write_text("topk<32>\nbyte_histogram\n")
    run = run_cli(capsys, builds.old, "--baseline", old_style, entry=legacy_main)
    assert run.status == 2
    assert run.err.strip() == (f"check-kernel-resources: error: {old_style} is not a spillway baseline; "
                               f"write one once with: check-kernel-resources {builds.old} --write-baseline "
                               f"{old_style} --note TEXT")


def test_console_script_is_installed(builds, tmp_path):
    """The entry point pyproject declares, run as CMake would run it."""
    script = shutil.which("check-kernel-resources")
    command = [script] if script else [sys.executable, "-c",
                                       "import sys; from spillway.cli.legacy import main; sys.exit(main())"]
    baseline = tmp_path / "b.json"
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
    done = subprocess.run([*command, str(builds.new), "--write-baseline", str(baseline), "--note", "n"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*command, str(builds.old), "--baseline", str(baseline)], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout.strip().splitlines()[-1].startswith("FAIL: ")
    done = subprocess.run([*command, str(builds.old)], capture_output=True, text=True)
    assert done.returncode == 2 and "usage: check-kernel-resources" in done.stderr
