"""Code-generation flags in baselines and the gate: `baseline write` records
the flags of the command lines clang recorded (-frecord-command-line) or
--flags; `check` warns when a build's differ from its baseline's (one line
naming what was added and removed) and fails with --strict-flags.  On the
objects clang 22 built here (tests/data/command_line/build.sh): recorded.o,
recorded-lto.o (the same with -foffload-lto) and plain.o (no command line
recorded)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data" / "command_line"


def spillway(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spillway", *argv], capture_output=True, text=True)


def _write(tmp_path: Path, binary: str, *extra: str) -> Path:
    path = tmp_path / f"{binary}.json"
    result = spillway("baseline", "write", str(DATA / binary), "-o", str(path), "--note", "fixture", *extra)
    assert result.returncode == 0, result.stderr
    return path


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "code-generation flags differ" in line]


def test_baseline_records_the_recorded_flags_and_check_warns_on_added_ones(tmp_path):
    baseline = _write(tmp_path, "recorded.o")
    flags = json.loads(baseline.read_text())["provenance"]["flags"]
    # What the command line holds besides places, inputs and the target (per target it differs only there).
    assert flags == ["--driver-mode=g++", "-x hip", "-std=c++17", "--no-offload-inc", "--no-offloadlib", "-O3",
                     "-flto-partitions=8"]
    same = spillway("check", str(DATA / "recorded.o"), "--baseline", str(baseline), "--strict-flags")
    assert same.returncode == 0 and not _warnings(same.stderr), same.stderr

    warned = spillway("check", str(DATA / "recorded-lto.o"), "--baseline", str(baseline))
    assert warned.returncode == 0, warned.stdout + warned.stderr
    assert "OK: 2 kernels within baseline" in warned.stdout
    (line,) = _warnings(warned.stderr)
    assert line.startswith("spillway: warning: code-generation flags differ from the baseline's: "
                           "added -foffload-lto=full (")
    assert "removed" not in line

    strict = spillway("check", str(DATA / "recorded-lto.o"), "--baseline", str(baseline), "--strict-flags")
    assert strict.returncode == 1
    (line,) = _warnings(strict.stderr)
    assert line.startswith("spillway: error: ") and line.endswith("[--strict-flags]")


def test_the_other_way_round_names_the_removed_flag(tmp_path):
    baseline = _write(tmp_path, "recorded-lto.o")
    result = spillway("check", str(DATA / "recorded.o"), "--baseline", str(baseline), "--strict-flags")
    assert result.returncode == 1
    (line,) = _warnings(result.stderr)
    assert ": removed -foffload-lto=full (" in line and "added" not in line


def test_unknown_flags_are_not_compared_and_not_written(tmp_path):
    plain = _write(tmp_path, "plain.o")
    document = json.loads(plain.read_text())
    assert "flags" not in document["provenance"]        # not known: left out, as before
    # A baseline without flags, or a build without them: nothing to compare, even when strict.
    for binary, baseline in (("recorded-lto.o", plain), ("plain.o", _write(tmp_path, "recorded.o"))):
        result = spillway("check", str(DATA / binary), "--baseline", str(baseline), "--strict-flags")
        assert result.returncode == 0 and not _warnings(result.stderr), result.stderr
    # An update without known flags keeps the ones recorded before.
    kept = _write(tmp_path, "recorded.o")
    assert spillway("baseline", "write", str(DATA / "plain.o"), "-o", str(kept)).returncode == 0
    assert json.loads(kept.read_text())["provenance"]["flags"][-1] == "-flto-partitions=8"


def test_declared_flags(tmp_path):
    # (--flags=...: a value that starts with a dash needs the = for argparse)
    baseline = _write(tmp_path, "plain.o", "--flags=-O3 -mllvm -amdgpu-num-vgpr=64 -I /here kernels.hip")
    assert json.loads(baseline.read_text())["provenance"]["flags"] == ["-O3", "-mllvm -amdgpu-num-vgpr=64"]
    result = spillway("check", str(DATA / "plain.o"), "--baseline", str(baseline), "--flags=-O2",
                      "--strict-flags")
    assert result.returncode == 1
    (line,) = _warnings(result.stderr)
    assert "added -O2; removed -O3 -mllvm -amdgpu-num-vgpr=64 (" in line
    bad = spillway("check", str(DATA / "plain.o"), "--baseline", str(baseline), "--flags=-O2 '")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--flags" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_documents_stay_the_same_with_the_warning(tmp_path):
    """The warning goes to stderr: a check's JSON is the same bytes either way."""
    baseline = _write(tmp_path, "recorded.o")
    warned = spillway("check", str(DATA / "recorded-lto.o"), "--baseline", str(baseline), "--format", "json")
    quiet = spillway("check", str(DATA / "recorded-lto.o"), "--baseline", str(baseline), "--format", "json",
                     "--flags=" + " ".join(json.loads(baseline.read_text())["provenance"]["flags"]))
    assert _warnings(warned.stderr) and not _warnings(quiet.stderr)
    assert warned.stdout == quiet.stdout and json.loads(warned.stdout)["passed"]


def test_a_report_json_carries_the_recorded_flags_to_check(tmp_path):
    """check reads a build's report JSON as it reads the build: its files' command_lines."""
    baseline = _write(tmp_path, "recorded.o")
    report = tmp_path / "lto-report.json"
    assert spillway("report", "--json", "-o", str(report), str(DATA / "recorded-lto.o")).returncode == 0
    assert json.loads(report.read_text())["files"][0]["command_lines"]
    result = spillway("check", str(report), "--baseline", str(baseline), "--strict-flags")
    assert result.returncode == 1
    (line,) = _warnings(result.stderr)
    assert "added -foffload-lto=full (" in line
