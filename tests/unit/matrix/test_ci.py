"""The matrix in CI: `spillway matrix list --format github-matrix` (fan-out),
the artifact layout and `spillway matrix collect` (fan-in), the composite
action (action.yml) and the example workflow (docs/ci/github-workflow.yml),
validated against GitHub's schemas and run step by step on this machine.

The fan-in is held to `matrix run`: from the same libraries it must write
the same files, byte for byte (check.json, JUnit, the comparison in JSON and
Markdown, the job summary), and print the same verdicts.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from spillway import matrix as mx
from spillway.matrix.ci import JOB_FIELDS
from support.github_actions import FAKE_SHA
from support.matrix_fixtures import cell_table, committed_baseline
from support.toolchains import REPO, require

CELLS = REPO / "matrix" / "cells.toml"
WORKFLOW = REPO / "docs" / "ci" / "github-workflow.yml"
ACTION = REPO / "action.yml"


def spillway(*argv: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spillway", *argv], capture_output=True, text=True,
                          cwd=cwd or REPO, env=env)


def debian_cell(version: int, **override) -> dict:
    return dict(tomllib.loads(CELLS.read_text())["cells"][f"clang-{version}"], **override)


def cells_file(path: Path, cells: dict[str, dict], source: str = "kernels/prim_scan.hip") -> Path:
    text = ['schema = "1"', "", "[engine]", 'library = "libengine.so"', f"sources = [{json.dumps(source)}]",
            'headers = ["kernels/include", "kernels/engine"]', 'recipe = "matrix/compile.sh"', ""]
    text += [cell_table(name, **fields) for name, fields in cells.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text))
    return path


def where(cells: Path, build: Path) -> list[str]:
    return ["--cells", str(cells), "--root", str(REPO), "--build-dir", str(build)]


def one_line_error(result: subprocess.CompletedProcess, text: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], result.stderr


def verdicts(stdout: str) -> list[str]:
    """The lines of a run that must not depend on where the cells were built: not
    the timing, nor the path of the file written; nor the stop-commands brackets
    a run under GitHub Actions puts around them (fresh tokens: spillway.untrusted)."""
    return [line for line in stdout.splitlines()
            if not re.match(r"matrix (run|collect): [0-9.]+ s$|wrote /|::(stop-commands::)?[0-9a-f]{32}(::)?$",
                            line)]


def upload(build: Path, cell: str, artifacts: Path) -> Path:
    """What the example workflow's upload step stores: <artifact>/<cell>/ without objects."""
    target = artifacts / f"spillway-cell-{cell}" / cell
    shutil.copytree(build / cell, target, ignore=shutil.ignore_patterns("*.o"))
    return target


# -- fan-out -----------------------------------------------------------------------------

def test_github_matrix_has_one_job_per_cell_saying_where_it_runs(tmp_path):
    result = spillway("matrix", "list", "--local", "--format", "github-matrix")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1          # one line, as $GITHUB_OUTPUT takes it
    document = json.loads(result.stdout)
    assert list(document) == ["include"]
    matrix = mx.load(CELLS)
    local = [c for c in matrix.cells.values() if c.local]
    assert [e["cell"] for e in document["include"]] == [c.name for c in local]
    for entry, cell in zip(document["include"], local):
        assert list(entry) == list(JOB_FIELDS)
        assert entry["container"] == "debian:bookworm" and entry["runs-on"] == "ubuntu-latest"
        assert entry["artifact"] == f"spillway-cell-{cell.name}" and entry["toolchain"] == cell.toolchain()
        if cell.in_root:
            assert (entry["builder"], entry["system"], entry["container-options"]) == \
                ("debian-root", "sid-root", "--privileged")
        else:
            assert (entry["builder"], entry["system"], entry["container-options"]) == ("debian", "bookworm", "")
    every = json.loads(spillway("matrix", "list", "--format", "github-matrix").stdout)["include"]
    assert [e["cell"] for e in every] == list(matrix.cells)
    nix = next(e for e in every if e["cell"] == "rocm-7.2.3-clang22")
    assert (nix["builder"], nix["container"], nix["container-options"], nix["system"]) == ("nix", "", "", "")

    named = tmp_path / "matrix.json"
    assert spillway("matrix", "list", "clang-22", "clang-15", "--format", "github-matrix", "-o",
                    str(named)).returncode == 0
    assert [e["cell"] for e in json.loads(named.read_text())["include"]] == ["clang-22", "clang-15"]

    # spillway.matrix-list/2 is what it was: every cell, no job fields.
    import jsonschema
    from spillway.schemas import schema_for
    listing = json.loads(spillway("matrix", "list", "--json").stdout)
    jsonschema.validate(listing, schema_for("matrix-list"))
    assert listing["summary"]["cells"] == len(matrix.cells) and "include" not in listing

    nix_only = cells_file(tmp_path / "nix.toml", {"rocm-7.2.3-clang22": tomllib.loads(CELLS.read_text())["cells"][
        "rocm-7.2.3-clang22"]})
    one_line_error(spillway("matrix", "list", "--local", "--format", "github-matrix", "--cells", str(nix_only)),
                   "no cell selected: a job matrix needs at least one")
    one_line_error(spillway("matrix", "list", "clang-99", "--format", "github-matrix"), "no cell 'clang-99'")


def test_install_toolchains_takes_only_the_cells_named():
    script = REPO / "scripts" / "install-toolchains.sh"
    require("dpkg-query")
    document = tomllib.loads(CELLS.read_text())
    host = document["systems"]["bookworm"]["packages"]
    one = subprocess.run([str(script), "--check", "--cell", "clang-15"], capture_output=True, text=True)
    wanted = len(host) + len(document["cells"]["clang-15"]["packages"])
    assert re.search(rf"host: (all {wanted} packages installed|missing: )", one.stdout), one.stdout + one.stderr
    assert "sid-root" not in one.stdout + one.stderr          # no root for a bookworm cell
    root = subprocess.run([str(script), "--check", "--cell", "clang-23"], capture_output=True, text=True)
    assert re.search(rf"host: (all {len(host)} packages installed|missing: )", root.stdout), root.stdout
    assert "sid-root:" in root.stdout + root.stderr
    unknown = subprocess.run([str(script), "--check", "--cell", "clang-99"], capture_output=True, text=True)
    assert unknown.returncode != 0 and "--cell clang-99: no such cell" in unknown.stderr
    nix = subprocess.run([str(script), "--check", "--cell", "rocm-7.2.3-clang22"], capture_output=True, text=True)
    assert nix.returncode != 0 and "not a Debian cell" in nix.stderr


# -- fan-in ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """clang-19 and clang-22 on prim_scan.hip: built by `matrix run` on one
    machine, and by one `matrix check CELL` per cell as CI jobs would, each
    job's build folder uploaded as the example workflow uploads it."""
    for version in (19, 22):
        require(f"clang++-{version}")
        require(f"clang-offload-bundler-{version}")
    folder = tmp_path_factory.mktemp("ci-jobs")
    # Each cell held to its committed baseline's prim_scan kernels (what these cells build).
    scan = ("block_scan_kernel", "histogram_kernel")
    cells = cells_file(folder / "cells.toml", {
        "clang-19": debian_cell(19, baseline=committed_baseline(folder, 19, *scan)),
        "clang-22": debian_cell(22, baseline=committed_baseline(folder, 22, *scan))})
    reference = folder / "one-machine"
    run = spillway("matrix", "run", *where(cells, reference / "build"), "--format", "json",
                   "-o", str(reference / "summary.json"), "--junit-dir", str(reference / "junit"))
    assert run.returncode == 0, run.stdout + run.stderr
    artifacts = folder / "artifacts"
    for cell in ("clang-19", "clang-22"):
        job = spillway("matrix", "check", cell, *where(cells, folder / f"job-{cell}"))
        assert job.returncode == 0, job.stdout + job.stderr
        upload(folder / f"job-{cell}", cell, artifacts)
    return cells, folder, reference, run, artifacts


def _collect(cells: Path, artifacts: Path, build: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return spillway("matrix", "collect", str(artifacts), *extra, *where(cells, build), "--format", "json",
                    "-o", str(out / "summary.json"), "--junit-dir", str(out / "junit"))


def _same_files(reference: Path, out: Path, build: Path) -> None:
    assert (out / "summary.json").read_bytes() == (reference / "summary.json").read_bytes()
    for cell in ("clang-19", "clang-22"):
        assert (out / "junit" / f"{cell}.xml").read_bytes() == (reference / "junit" / f"{cell}.xml").read_bytes()
        assert (build / cell / "check.json").read_bytes() == (reference / "build" / cell / "check.json").read_bytes()
        assert (build / cell / "libengine.so").read_bytes() == \
            (reference / "build" / cell / "libengine.so").read_bytes()


def test_collect_writes_what_run_writes_from_either_download_layout(jobs, tmp_path):
    cells, _, reference, run, artifacts = jobs
    # download-artifact's default: each artifact in a folder named after it.
    out = tmp_path / "per-artifact"
    collected = _collect(cells, artifacts, out / "build", out)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert verdicts(collected.stdout) == verdicts(run.stdout)
    assert "matrix collect:" in collected.stdout
    _same_files(reference, out, out / "build")
    assert sorted(p.name for p in (out / "build").iterdir()) == ["clang-19", "clang-22"]
    # Again over the same build folder: replaced, same result.
    again = _collect(cells, artifacts, out / "build", out)
    assert again.returncode == 0 and verdicts(again.stdout) == verdicts(run.stdout)

    # merge-multiple: every <cell>/ side by side, read in place as the build folder.
    merged = tmp_path / "merged"
    for artifact in artifacts.iterdir():
        shutil.copytree(artifact, merged / "build", dirs_exist_ok=True)
    in_place = _collect(cells, merged / "build", merged / "build", merged)
    assert in_place.returncode == 0, in_place.stdout + in_place.stderr
    _same_files(reference, merged, merged / "build")


def test_collect_reports_failed_missing_and_foreign_builds(jobs, tmp_path):
    cells, folder, _, _, artifacts = jobs
    # A job whose build failed uploads build.json (status failed) and the logs.
    broken_cells = cells_file(tmp_path / "broken.toml",
                              {"clang-19": debian_cell(19, flags=["-DSPW_ROCPRIM_VERSION=not-a-number+"])})
    broken = spillway("matrix", "check", "clang-19", *where(broken_cells, tmp_path / "broken-job"))
    assert broken.returncode == mx.EXIT_FAILED
    failed = tmp_path / "failed"
    upload(tmp_path / "broken-job", "clang-19", failed)
    assert list((failed / "spillway-cell-clang-19" / "clang-19" / "obj").glob("*.log"))
    result = _collect(cells, failed, tmp_path / "b1", tmp_path / "o1", "clang-19")
    assert result.returncode == mx.EXIT_FAILED
    assert re.search(r"^ERROR +clang-19 +build failed: compile prim_scan.hip: .*error", result.stdout, re.M)

    # A cell named but uploaded by no job: skipped, and the run does not pass.
    missing = _collect(cells, failed, tmp_path / "b2", tmp_path / "o2", "clang-22")
    assert missing.returncode == mx.EXIT_SKIPPED
    assert re.search(r"^SKIPPED +clang-22 +skipped: no artifact of clang-22 in ", missing.stdout, re.M)

    # Built with other settings than this cells file has (another commit's flags): not gated.
    other_cells = cells_file(tmp_path / "other.toml", {"clang-19": debian_cell(19, flags=["-DSPW_UNUSED=1"])})
    assert spillway("matrix", "build", *where(other_cells, tmp_path / "other-job")).returncode == 0
    other = tmp_path / "other"
    upload(tmp_path / "other-job", "clang-19", other)
    foreign = _collect(cells, other, tmp_path / "b3", tmp_path / "o3", "clang-19")
    assert foreign.returncode == mx.EXIT_FAILED
    assert "does not match this cells file: it was built with SPW_FLAGS='-DSPW_UNUSED=1', cells.toml says ''" \
        in foreign.stdout

    # build.json says built, the library is not there.
    hollow = tmp_path / "hollow"
    shutil.copytree(artifacts / "spillway-cell-clang-22", hollow / "spillway-cell-clang-22")
    (hollow / "spillway-cell-clang-22" / "clang-22" / "libengine.so").unlink()
    empty = _collect(cells, hollow, tmp_path / "b4", tmp_path / "o4", "clang-22")
    assert empty.returncode == mx.EXIT_FAILED and "has no libengine.so although its build.json says built" \
        in empty.stdout
    assert "Traceback" not in result.stderr + missing.stderr + foreign.stderr + empty.stderr


def test_collect_refuses_what_is_not_the_artifact_layout(jobs, tmp_path):
    cells, _, _, _, artifacts = jobs

    def collect(folder: Path, *extra: str) -> subprocess.CompletedProcess:
        return spillway("matrix", "collect", str(folder), *where(cells, tmp_path / "build"), *extra)

    one_line_error(collect(tmp_path / "nowhere"), "not a folder")
    (tmp_path / "empty").mkdir()
    one_line_error(collect(tmp_path / "empty"), "no cell's build found")
    renamed = tmp_path / "renamed"
    shutil.copytree(artifacts / "spillway-cell-clang-19" / "clang-19", renamed / "x" / "clang-99")
    one_line_error(collect(renamed), "the build of cell 'clang-19' lies in a folder named 'clang-99'")
    unknown = tmp_path / "unknown"
    shutil.copytree(artifacts / "spillway-cell-clang-19" / "clang-19", unknown / "x" / "clang-15")
    provenance = unknown / "x" / "clang-15" / "build.json"
    provenance.write_text(provenance.read_text().replace('"cell": "clang-19"', '"cell": "clang-15"'))
    one_line_error(collect(unknown), "cell 'clang-15' is not in")
    twice = tmp_path / "twice"
    for name in ("a", "b"):
        shutil.copytree(artifacts / "spillway-cell-clang-19", twice / name)
    one_line_error(collect(twice), "cell clang-19 is in two artifacts")
    broken = tmp_path / "broken"
    shutil.copytree(artifacts / "spillway-cell-clang-19", broken / "a")
    (broken / "a" / "clang-19" / "build.json").write_text("{")
    one_line_error(collect(broken), "build.json: not valid JSON")
    inside = spillway("matrix", "collect", str(artifacts), *where(cells, artifacts / "build"))
    one_line_error(inside, "is inside the artifacts folder")
    # -o never names a file of the artifacts (inputs of the run), even with --force.
    one_line_error(collect(artifacts, "--format", "json", "--force", "-o",
                           str(artifacts / "spillway-cell-clang-19" / "clang-19" / "build.json")),
                   "is inside the input")
    assert not (tmp_path / "build").exists()


# -- the action and the workflow ---------------------------------------------------------

def _check_jsonschema() -> None:
    try:
        import check_jsonschema  # noqa: F401
    except ImportError:
        message = "check-jsonschema is not installed (pip install -e '.[test]')"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def _validate(path: Path, schema: str) -> subprocess.CompletedProcess:
    # The schemas vendored in the package: no network.
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
                          capture_output=True, text=True)


def test_the_action_and_the_workflow_follow_githubs_schemas(tmp_path):
    _check_jsonschema()
    workflow = _validate(WORKFLOW, "vendor.github-workflows")
    assert workflow.returncode == 0, workflow.stdout + workflow.stderr
    action = _validate(ACTION, "vendor.github-actions")
    assert action.returncode == 0, action.stdout + action.stderr
    # The validation can fail: a job without runs-on, a composite step without its shell.
    bad_workflow = tmp_path / "workflow.yml"
    bad_workflow.write_text(WORKFLOW.read_text().replace("    runs-on: ${{ matrix.runs-on }}\n", ""))
    assert _validate(bad_workflow, "vendor.github-workflows").returncode == 1
    bad_action = tmp_path / "action.yml"
    bad_action.write_text(ACTION.read_text().replace("      shell: bash\n", "", 1))
    assert _validate(bad_action, "vendor.github-actions").returncode == 1


def test_the_example_workflow_runs_the_matrix_as_one_machine_does(one_machine_run):
    """The workflow's steps in order (plan, one job per local cell, summary)
    with stand-ins for checkout, cache and the artifact actions, against the
    one-machine `matrix run --local` (tests/support/one_machine_run.py) made in the same workspace
    path.  That run builds every local cell once; its objects are what the
    cell jobs' cache step restores (a cache of an earlier run), so the jobs
    only link."""
    if os.environ.get("NIX_BUILD_TOP"):
        pytest.skip("needs the host: pip from the package index, the sid root")
    if one_machine_run.root_unavailable:
        pytest.skip(f"every local cell is run: {one_machine_run.root_unavailable}")
    runner, run, reference = one_machine_run.runner, one_machine_run.run, one_machine_run.outputs
    workspace = runner.workspace
    print(f"one machine: matrix run --local {one_machine_run.seconds:.1f} s")
    local = [c.name for c in mx.load(CELLS).cells.values() if c.local]
    for cell in local:     # an earlier run's cache of each cell's objects
        shutil.copytree(reference / cell / "obj", runner.caches / f"spillway-obj-{cell}@earlier" / "0")

    # -- the workflow -----------------------------------------------------------------------
    jobs = runner.run_workflow(WORKFLOW)
    for job in (job for runs in jobs.values() for job in runs):
        print(f"job {job.name}: {job.seconds:.1f} s (" +
              ", ".join(f"{s.name} {s.seconds:.1f} s" for s in job.steps if s.seconds >= 0.5) + ")")
    plan, = jobs["plan"]
    assert plan.result == "success", plan.log()
    assert plan.container == "debian:bookworm"
    listed = json.loads(plan.outputs["matrix"])
    assert [e["cell"] for e in listed["include"]] == local
    assert "reusing" not in plan.step("./ > spillway").output      # the first job installs spillway

    assert [j.matrix["cell"] for j in jobs["cell"]] == local
    for job in jobs["cell"]:
        cell = job.matrix["cell"]
        assert job.result == "success", job.log()
        assert job.name == f"{cell} ({job.matrix['toolchain']})"
        assert job.container == {"image": "debian:bookworm", "options": job.matrix["container-options"]}
        assert f"cache: restored spillway-obj-{cell}@earlier" in job.step("actions/cache").output
        assert "spillway action: reusing" in job.step("./ > spillway").output
        checked = job.step("./ > Run").output
        # Every object restored and fresh: the job only links.
        assert f"[{cell}] linked libengine.so" in checked and "compiled" not in checked, checked
        assert re.search(rf"^PASS +{re.escape(cell)} +OK:", checked, re.M), checked
        stored = runner.artifacts / f"spillway-cell-{cell}" / cell
        assert {p.name for p in stored.iterdir()} >= {"build.json", "libengine.so", "check.json", "obj"}
        assert not list(stored.rglob("*.o")) and list((stored / "obj").glob("*.log"))
        # The job passed and its key was not an exact hit: its objects are saved under this run's key.
        assert (runner.caches / f"spillway-obj-{cell}@{FAKE_SHA}" / "0").is_dir()

    summary, = jobs["summary"]
    assert summary.result == "success", summary.log()
    collected = summary.step("spillway matrix collect")
    assert verdicts(collected.output) == verdicts(run.stdout), collected.output
    stored = runner.artifacts / "spillway-matrix"
    assert (stored / "matrix-summary.md").read_bytes() == (reference / "matrix-summary.md").read_bytes()
    assert (stored / "matrix-summary.json").read_bytes() == (reference / "matrix-summary.json").read_bytes()
    assert summary.summaries == [one_machine_run.step_summary.read_text()]
    for cell in local:
        assert (stored / "junit" / f"{cell}.xml").read_bytes() == (reference / "junit" / f"{cell}.xml").read_bytes()
        assert (stored / cell / "check.json").read_bytes() == (reference / cell / "check.json").read_bytes()
        assert (workspace / "build" / cell / "libengine.so").read_bytes() == \
            (reference / cell / "libengine.so").read_bytes()
