"""The Nix flake (flake.nix, nix/), run for real with `nix flake check`.

Current nixpkgs needs Nix >= 2.18 and this machine has Debian's Nix 2.8 and no
network, so the flake is evaluated with its `nixpkgs` input replaced by a
stand-in (tests/nix/nixpkgs, `--override-input nixpkgs path:...`): the same
attribute names as nixpkgs, with this machine's Debian clang++-22 as the
compiler of both Nix cells (see tests/nix/nixpkgs/pkgs.nix).  Everything else
is the real thing: the real flake.nix and nix/, the real matrix/cells.toml
read by builtins.fromTOML, the real recipe (matrix/compile.sh) building every
cell, and the real gate (spillway check, installed by the flake) against
baseline files.

Each test works in a copy of the repository (a `path:` flake, so edits in the
copy need no git) and a private Nix store under pytest's temporary folder, so
nothing touches /nix or the working tree.

Which baselines pass: the committed baselines of the two Nix cells can only be
written by their own toolchains (ROCm 7.2.3 / 10.0), which do not run here.
The stand-in compiles both cells with Debian clang 22, whose committed
baseline is checks/baselines/clang-22.json (same targets, code object
version, compression and flags, checked below), so that file is the committed
baseline the stand-in builds must pass.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from support.toolchains import require

REPO = Path(__file__).resolve().parents[3]
STANDIN = REPO / "tests" / "nix" / "nixpkgs"
SYSTEM = "x86_64-linux"
CELLS_DOCUMENT = tomllib.loads((REPO / "matrix" / "cells.toml").read_text())
CELLS = CELLS_DOCUMENT["cells"]
# The Python package's derivation: pname and version from pyproject.toml (nix/spillway.nix).
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
PACKAGE_DERIVATION = f"{PROJECT['name']}-{PROJECT['version']}"
NIX_CELLS = sorted(name for name, cell in CELLS.items() if cell["source"] in ("nixpkgs", "tarball"))
# The cells on AMD's LLVM from a wheel (cells.toml `backend`) are Nix cells too; each build of
# them costs a matrix build through AMD's O3, so the copies leave them out but in the one test
# that gates them (test_flake_check_gates_the_amd_llvm_cells).
AMD_CELLS = sorted(name for name, cell in CELLS.items() if cell.get("backend"))
STANDIN_CELL = "clang-22"          # the Debian cell whose compiler the stand-in uses
STANDIN_BASELINE = REPO / CELLS[STANDIN_CELL]["baseline"]
TIMEOUT = 1200

# Left out of the copies, as a fresh clone would not have them (.gitignore),
# plus the local matrix builds.
ANYWHERE = {".git", "__pycache__", ".pytest_cache", ".hypothesis", ".benchmarks", ".ruff_cache", "result"}
AT = {Path("."): {"build"}, Path("tests"): {".cache"}, Path("benchmarks"): {"results"}}


def _ignore(folder: str, names: list[str]) -> set[str]:
    where = Path(folder).resolve().relative_to(REPO)
    return {n for n in names if n in ANYWHERE or n.endswith(".egg-info") or n.startswith("result-")} \
        | (AT.get(where, set()) & set(names))


def _make_writable(path: Path) -> None:
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = Path(root, name)
            if not full.is_symlink():
                full.chmod(full.stat().st_mode | stat.S_IWUSR)
    path.chmod(path.stat().st_mode | stat.S_IWUSR)


def one_line(text: str) -> str:
    """Nix's error text with the "> " of quoted build-log lines removed and
    white space collapsed, so a message wrapped over lines still matches."""
    return " ".join(re.sub(r"(?m)^\s*> ?", "", text).split())


NIX_VERSIONS = ("2.8", "2.34")     # bookworm's nix-bin, and sid's in the root (install-toolchains.sh)


def nix_command(version: str, folder: Path) -> str:
    """The `nix` of that version: bookworm's on PATH, or the sid root's run
    here through the root's own dynamic loader and libraries (no chroot: its
    builds see this machine's tools, as the stand-in wants)."""
    if version == "2.8":
        found = shutil.which("nix")
        if not found:
            _missing("nix is not installed (apt-get install nix-bin; scripts/install-test-deps.sh installs it)")
        return found
    from spillway import matrix as mx
    from spillway.matrix.cells import READY_MARK
    root = mx.load(REPO / "matrix" / "cells.toml").systems["sid-root"].location()
    binary, loader = root / "usr" / "bin" / "nix", root / "usr" / "lib64" / "ld-linux-x86-64.so.2"
    if not (root / READY_MARK).is_file() or not binary.is_file():
        _missing(f"Nix {version} is in the sid root {root}, which is not made here (scripts/install-toolchains.sh)")
    run = f'exec {loader} --library-path {root}/usr/lib/x86_64-linux-gnu'
    # Run so, /proc/self/exe is the loader, through which Nix would start its
    # build hook (`nix __build-remote`, for remote builders): `nix` has no
    # hook; `nix-with-hook` names its hook (`nix-plain __build-remote`) and
    # `nix-daemon` is the daemon, for the remote-builder test.
    wrappers = {
        "nix": 'NIX_CONFIG="${NIX_CONFIG:-}\nbuild-hook ="\nexport NIX_CONFIG\n' + f'{run} {binary} "$@"',
        "nix-plain": f'{run} {binary} "$@"',
        "nix-with-hook": (f'NIX_CONFIG="${{NIX_CONFIG:-}}\nbuild-hook = {folder}/nix-plain __build-remote"\n'
                          f'export NIX_CONFIG\n{run} {binary} "$@"'),
        "nix-daemon": f'{run} {binary.parent / "nix-daemon"} "$@"',
    }
    for name, script in wrappers.items():
        (folder / name).write_text(f"#!/bin/sh\n{script}\n")
        (folder / name).chmod(0o755)
    return str(folder / "nix")


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


class Nix:
    """`nix` with a private store, state, cache and configuration."""

    def __init__(self, root: Path, command: str = "nix"):
        self.root = root
        self.command = command
        self.version = subprocess.run([command, "--version"], capture_output=True, text=True).stdout.split()[-1]
        self.release = tuple(int(part) for part in re.findall(r"\d+", self.version)[:2])   # (2, 34)
        for sub in ("home", "cache", "conf"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        self.store = f"local?store={root}/store&state={root}/state&log={root}/log"
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root / "home"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_CONFIG_HOME": str(root / "conf"),
            "NIX_CONF_DIR": str(root / "conf"),
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
            # sandbox = false: the stand-in builds with the host's tools.
            # build-users-group empty: builds run as the caller, so they can
            # read the host python (pip-installed under the caller's home).
            "NIX_CONFIG": "\n".join([
                "experimental-features = nix-command flakes",
                "substituters =",
                "sandbox = false",
                "build-users-group =",
                "use-registries = false",
                "warn-dirty = false",
                "max-jobs = 2",
            ]),
        }

    def __call__(self, project: Path, *command: str, args: tuple[str, ...] = (), cwd: Path | None = None,
                 check: bool | None = None, inputs: dict[str, Path] | None = None) -> subprocess.CompletedProcess:
        """nix COMMAND... --override-input nixpkgs path:<stand-in> [-- ARGS]."""
        argv = [self.command, "--store", self.store, *command,
                "--override-input", "nixpkgs", f"path:{project}.standin"]
        for name, path in (inputs or {}).items():
            argv += ["--override-input", name, f"path:{path}"]
        if args:
            argv += ["--", *args]
        result = subprocess.run(argv, cwd=cwd or project, env=self.env, capture_output=True, text=True,
                                timeout=TIMEOUT, check=False)
        if check is not None:
            ok = result.returncode == 0
            assert ok == check, (f"{' '.join(argv)} exited {result.returncode}\n"
                                 f"--- stdout\n{result.stdout[-6000:]}\n--- stderr\n{result.stderr[-6000:]}")
        return result


@pytest.fixture(scope="module", params=NIX_VERSIONS, ids=[f"nix-{v}" for v in NIX_VERSIONS])
def nix(request, tmp_path_factory) -> Nix:
    if os.environ.get("NIX_BUILD_TOP"):
        pytest.skip("running inside a Nix build: nix flake check cannot run nested")
    require("clang++-22")      # the stand-in's compiler for both Nix cells
    root = tmp_path_factory.mktemp(f"nix-{request.param}")
    command = nix_command(request.param, root)
    yield Nix(root, command)
    _make_writable(root)       # the store is read-only
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def workdir(nix, tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp(f"flakes-{nix.version}")


def without_cells(text: str, names: list[str]) -> str:
    """A cells file's text without these cells' tables."""
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("["):
            skipping = any(line.strip() in (f'[cells."{n}"]', f"[cells.{n}]") for n in names)
        if not skipping:
            kept.append(line)
    return "".join(kept)


def project(workdir: Path, name: str, *, baselines: str = "committed", host: dict | None = None,
            amd_llvm: bool = False) -> Path:
    """A copy of the repository at workdir/name with its stand-in nixpkgs at
    workdir/name.standin.  baselines: "committed" gives each Nix cell the
    committed baseline of the stand-in's compiler; "none" removes them.
    The AMD LLVM cells only with ``amd_llvm`` (their own committed baselines)."""
    dest = workdir / name
    try:
        shutil.copytree(REPO, dest, ignore=_ignore, symlinks=True)
    except shutil.Error as error:
        # Files that vanished while copying (a working tree others write in): as if never there.
        real = [e for e in error.args[0] if "No such file or directory" not in str(e[2])]
        if real:
            raise
    shutil.copytree(STANDIN, workdir / f"{name}.standin")
    settings = {"python3": sys.executable, "clangxx": shutil.which("clang++-22")}
    settings.update(host or {})
    (workdir / f"{name}.standin" / "host.json").write_text(json.dumps(settings))
    if not amd_llvm:
        cells = dest / "matrix" / "cells.toml"
        cells.write_text(without_cells(cells.read_text(), AMD_CELLS))
    folder = dest / "checks" / "baselines"
    for cell in NIX_CELLS:
        target = folder / f"{cell}.json"
        target.unlink(missing_ok=True)
        if baselines == "committed":
            shutil.copyfile(dest / CELLS[STANDIN_CELL]["baseline"], target)
    return dest


def ref(path: Path, attr: str = "") -> str:
    return f"path:{path}" + (f"#{attr}" if attr else "")


def quoted(name: str) -> str:
    """An attribute name with dots, as a flake attribute path takes it."""
    return f'"{name}"'


def test_stand_in_compiler_builds_what_the_nix_cells_build():
    """The committed clang-22 baseline fits the stand-in builds only while the
    Nix cells ask the compiler for the same things."""
    same = ("targets", "code_object_version", "compress", "flags", "gate")
    for cell in NIX_CELLS:
        assert {k: CELLS[cell].get(k) for k in same} == {k: CELLS[STANDIN_CELL].get(k) for k in same}, cell
    assert NIX_CELLS == ["rocm-10.0-clang23", "rocm-7.2.3-clang22"]


def kernel_count() -> int:
    """Kernels in the engine, as the committed baseline of the stand-in's compiler has them."""
    return len(json.loads(STANDIN_BASELINE.read_text())["kernels"])


def test_cells_read_the_same_in_nix_and_python(nix):
    expr = f'builtins.fromTOML (builtins.readFile {REPO / "matrix" / "cells.toml"})'
    result = subprocess.run([nix.command, "--store", nix.store, "eval", "--impure", "--json", "--expr", expr],
                            env=nix.env, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == tomllib.loads((REPO / "matrix" / "cells.toml").read_text())


# The flake's `tests` check runs the whole suite once per Nix version here,
# through the stand-in's one builder script: the Nix version changes how the
# flake is evaluated and the check scheduled, not what pytest sees.  The
# current Nix runs every test; bookworm's 2.8 runs these (about 25 s, against
# 6-7 minutes), enough to show the Nix-built package imports and works.
# .ci/run itself runs every test outside Nix.
NARROWED_SUITE = ["tests/unit/resources", "tests/unit/test_import_layers.py", "tests/unit/test_json_codec.py"]


def test_flake_check_passes_with_the_committed_baselines(nix, workdir):
    full = nix.release >= (2, 18)
    copy = project(workdir, "pass", host=None if full else {"pytestArgs": NARROWED_SUITE})
    run = nix(copy, "flake", "check", "-L", ref(copy), check=True)
    log = run.stderr
    # Nothing to warn about in the flake itself.  The lock file warning comes
    # from --override-input with no committed flake.lock; Nix 2.8 does not
    # know `lib` as a flake output (2.34 does).
    # Nix 2.34 checks only this machine's system (aarch64-linux is evaluated
    # by test_the_flake_offers_hydra_jobs_a_summary_an_overlay_and_a_dev_shell).
    expected = ["not writing modified lock file"] + (["unknown flake output 'lib'"] if nix.release < (2, 18) else
                                                     ["The check omitted these incompatible systems: aarch64-linux"])
    warnings = [line for line in log.splitlines()
                if line.startswith("warning:") and not any(text in line for text in expected)]
    assert not warnings, warnings
    for cell in NIX_CELLS:
        assert f"kernel-resources-{cell}: " in log
        assert f"spillway check lib/libengine.so --baseline checks/baselines/{cell}.json" in log
    assert log.count(f"OK: {kernel_count()} kernels within baseline") == len(NIX_CELLS), log[-4000:]
    # pytest's summary line: "=== 1846 passed, 351 skipped in 370.58s ===" (failed, errors, warnings too)
    ran = re.search(r"spillway-tests> =+ (.*) in [\d.]+s", log)
    assert ran, "the Python test suite did not run"
    counts = {word: int(number) for number, word in re.findall(r"(\d+) (\w+)", ran.group(1))}
    assert counts.get("passed", 0) >= (1500 if full else 200), counts
    assert not {"failed", "error", "errors"} & counts.keys(), counts

    # The outputs the flake promises, per system.
    names = lambda output: json.loads(nix(copy, "eval", "--json", ref(copy, f"{output}.{SYSTEM}"),
                                          "--apply", "builtins.attrNames", check=True).stdout)
    assert names("checks") == sorted([f"kernel-resources-{c}" for c in NIX_CELLS] + ["tests"])
    assert names("packages") == sorted(["default", "spillway", "matrix-summary"]
                                       + [f"{kind}-{c}" for c in NIX_CELLS for kind in
                                          ("engine", "kernels", "report", "toolchain")])
    assert names("apps") == sorted(["default"] + [f"baseline-{c}" for c in NIX_CELLS])
    assert names("devShells") == sorted(["default"] + NIX_CELLS)

    # devShells.<cell> put the cell's compiler on PATH (the stand-in's mkShell
    # writes the PATH it would give; `nix develop` needs bash builders).
    for cell in NIX_CELLS:
        run = nix(copy, "build", "--no-link", "--json", ref(copy, f"devShells.{SYSTEM}.{quoted(cell)}"), check=True)
        path = Path(json.loads(run.stdout)[0]["outputs"]["out"]).read_text()
        compiler = "rocm-7.2.3-compiler" if "7.2.3" in cell else "rocm-compiler-10.0.0"
        assert re.search(rf"/[a-z0-9]{{32}}-{compiler}/bin(:|$)", path.strip()), path

    # apps.default is the spillway CLI; report-<cell> is the cell's JSON report.
    run = nix(copy, "run", ref(copy), args=("--version",), check=True)
    assert run.stdout.strip() == "spillway 0.1.0"
    run = nix(copy, "build", "--no-link", "--json", ref(copy, quoted(f"report-{NIX_CELLS[1]}")), check=True)
    out = Path(json.loads(run.stdout)[0]["outputs"]["out"])
    report = json.loads((out / "report.json").read_text())
    assert report["schema"] == "spillway.report/6"
    assert len(report["kernels"]) == kernel_count()
    assert {k["target"].split(":")[0] for k in report["kernels"]} == set(CELLS[NIX_CELLS[1]]["targets"])


def test_missing_baselines_fail_then_the_baseline_apps_write_them(nix, workdir):
    """Each step builds only the two gates (what `nix flake check` builds for
    them): the Python test suite's check reads checks/ and would run again."""
    copy = project(workdir, "fresh", baselines="none")
    gates = [ref(copy, f"checks.{SYSTEM}.{quoted(f'kernel-resources-{cell}')}") for cell in NIX_CELLS]
    for cell, gate in zip(NIX_CELLS, gates):
        run = nix(copy, "build", "--no-link", gate, check=False)
        assert run.returncode != 0
        text = one_line(run.stderr)
        assert (f"kernel-resources-{cell}: no baseline: checks/baselines/{cell}.json is not in this flake. "
                f"A baseline can only be written where the cell's toolchain runs") in text
        assert f"""There, from the project root, run: nix run '.#"baseline-{cell}"'""" in text

    notes = {}
    for cell in NIX_CELLS:
        run = nix(copy, "run", ref(copy, quoted(f"baseline-{cell}")), check=True)
        assert f"wrote checks/baselines/{cell}.json" in run.stdout
        written = json.loads((copy / "checks" / "baselines" / f"{cell}.json").read_text())
        assert written["schema"].startswith("spillway.baseline/")
        assert written["gate"] == CELLS[cell]["gate"]
        # Written from every kernel; without record_all only those using scratch or spilling are listed.
        written_from = written.get("kernels_written_from")
        assert (sum(written_from.values()) if written_from else len(written["kernels"])) == kernel_count()
        notes[cell] = written["note"]
        assert notes[cell].startswith(f"cell {cell}: written by nix run .#baseline-{cell} from lib/libengine.so")
    # Each was built by its own cell's compiler: the tarball's clang for ROCm 10.
    assert "built with clang version 23.0.0 (spillway test stand-in" in notes["rocm-10.0-clang23"]
    assert "nixpkgs rocmPackages 7.2.3 (ROCm LLVM 22)" in notes["rocm-7.2.3-clang22"]

    run = nix(copy, "build", "--no-link", "-L", *gates, check=True)
    assert run.stderr.count(f"OK: {kernel_count()} kernels within baseline") == len(NIX_CELLS)

    # The app runs only from the project root, where it writes.
    run = nix(copy, "run", ref(copy, quoted(f"baseline-{NIX_CELLS[0]}")), cwd=copy / "checks", check=False)
    assert run.returncode == 2
    assert "run this from the project root" in run.stderr


def test_a_too_tight_baseline_fails_the_check_and_names_the_kernels(nix, workdir):
    copy = project(workdir, "tight")
    cell = "rocm-7.2.3-clang22"
    path = copy / "checks" / "baselines" / f"{cell}.json"
    baseline = json.loads(path.read_text())
    tightened = set()
    for kernel in baseline["kernels"]:
        if kernel["allow"].get("scratch", 0) > 0:
            kernel["allow"]["scratch"] -= 4
            tightened.add(f"{kernel['name']} [{kernel['target']}]")
    assert len(tightened) >= 3
    path.write_text(json.dumps(baseline, indent=1))

    run = nix(copy, "flake", "check", ref(copy), check=False)      # no -L: what a user sees
    assert run.returncode != 0
    assert f"kernel-resources-{cell} FAILED: lib/libengine.so against checks/baselines/{cell}.json" in run.stderr
    (listing,) = [l for l in run.stderr.splitlines() if "kernels over the baseline: " in l]
    assert listing.split("kernels over the baseline: ", 1)[1].split("; ") == sorted(tightened)
    assert f"FAIL: {len(tightened)} of {kernel_count()} kernels over their baseline" in run.stderr


BAD_CELLS = [
    ("rocm-7.2.3-clang22", "rocm", "7.2.2",
     ("cell rocm-7.2.3-clang22: matrix/cells.toml says ROCm 7.2.2, but the pinned nixpkgs has "
      "rocmPackages 7.2.3 (rocmPackages.clr.version).")),
    ("rocm-7.2.3-clang22", "clang", "21",
     ("cell rocm-7.2.3-clang22: matrix/cells.toml says clang 21, but the pinned nixpkgs' ROCm 7.2.3 "
      "compiler is ROCm LLVM 22")),
    ("rocm-10.0-clang23", "clang", "24",
     ("cell rocm-10.0-clang23: matrix/cells.toml says clang 24, but the ROCm 10.0 tarball pinned in "
      "nix/pins.nix ships AMD clang 23.")),
    ("rocm-10.0-clang23", "rocm", "10.1",
     ("cell rocm-10.0-clang23: matrix/cells.toml asks for ROCm 10.1, which nixpkgs does not package, "
      "and nix/pins.nix has no tarball for it (it pins: 10.0).")),
]


@pytest.mark.parametrize("cell,field,value,message", BAD_CELLS, ids=[f"{c}-{f}" for c, f, _, _ in BAD_CELLS])
def test_cells_toml_that_contradicts_the_toolchain_fails_at_evaluation(nix, workdir, cell, field, value, message):
    copy = project(workdir, f"bad-{cell}-{field}")
    cells = copy / "matrix" / "cells.toml"
    text = cells.read_text()
    header = f'[cells."{cell}"]\n'
    start = text.index(header)
    end = text.find("\n[", start + len(header))
    section = text[start:end]
    changed, count = re.subn(rf'(?m)^{field} = "[^"]*"$', f'{field} = "{value}"', section)
    assert count == 1
    cells.write_text(text[:start] + changed + text[end:])

    run = nix(copy, "flake", "check", "--no-build", ref(copy), check=False)
    assert run.returncode != 0
    assert message in one_line(run.stderr), run.stderr[-3000:]


def test_a_tarball_whose_compiler_is_not_the_pinned_one_fails_to_build(nix, workdir):
    """The build checks what the pin claims: here the stand-in tarball's
    clang says 24 and ships lib/llvm/lib/clang/24."""
    copy = project(workdir, "wrong-tarball", host={"tarballClang": "24.0.0"})
    run = nix(copy, "build", "--no-link", ref(copy, quoted("toolchain-rocm-10.0-clang23")), check=False)
    assert run.returncode != 0
    assert "therock-dist-linux-gfx1151-10.0.0.tar.gz has no lib/llvm/lib/clang/23: it is not AMD clang 23" \
        in run.stderr


def test_another_project_gets_the_same_checks_from_spillway_lib(nix, workdir):
    """tests/nix/consumer: a project with its own source, build command,
    cells and baseline folder, using spillway as a flake input."""
    spillway = project(workdir, "spillway-input")
    consumer = workdir / "consumer"
    shutil.copytree(REPO / "tests" / "nix" / "consumer", consumer)
    shutil.copytree(f"{spillway}.standin", f"{consumer}.standin")
    inputs = {"spillway": spillway}
    cell = "rocm-7.2.3-clang22"

    names = json.loads(nix(consumer, "eval", "--json", ref(consumer, f"checks.{SYSTEM}"), "--apply",
                           "builtins.attrNames", inputs=inputs, check=True).stdout)
    assert names == [f"kernel-resources-{cell}"]          # the Debian cell is not a Nix cell

    run = nix(consumer, "flake", "check", ref(consumer), inputs=inputs, check=False)
    assert run.returncode != 0
    assert f"kernel-resources-{cell}: no baseline: baselines/{cell}.json is not in this flake." in one_line(run.stderr)

    run = nix(consumer, "run", ref(consumer, quoted(f"baseline-{cell}")), inputs=inputs, check=True)
    path = consumer / "baselines" / f"{cell}.json"
    baseline = json.loads(path.read_text())
    # toy_table uses scratch, toy_scale nothing: listed only when the baseline records every kernel.
    expected = ["toy_table"] if baseline.get("record_all") is False else ["toy_scale", "toy_table"]
    # spillway.baseline/3: one line per key (these extern "C" kernels' keys are their names).
    assert sorted(k["key"] for k in baseline["kernels"]) == expected
    nix(consumer, "flake", "check", ref(consumer), inputs=inputs, check=True)

    (table,) = [k for k in baseline["kernels"] if k["key"] == "toy_table"]
    (target,) = table["targets"]
    assert target["scratch"] > 0
    target["allow"] = {"scratch": target["scratch"] - 16}     # the other gated metrics: the recorded figures
    path.write_text(json.dumps(baseline))
    run = nix(consumer, "flake", "check", ref(consumer), inputs=inputs, check=False)
    assert run.returncode != 0
    assert "1 kernel over the baseline: toy_table [gfx1151]" in run.stderr


# -- fan-out and fan-in: hydraJobs, matrix-summary, remote builders ------------

CELL_JOBS = ["engine", "gate", "kernels", "report", "toolchain"]
ALL_SYSTEMS = ["aarch64-linux", "x86_64-linux"]


def summary_of(out: Path) -> dict:
    """matrix-summary's output: the summary JSON, the Markdown and the reports."""
    summary = json.loads((out / "summary.json").read_text())
    assert summary["schema"] == "spillway.matrix-summary/2"
    in_file_order = [name for name in CELLS if name in NIX_CELLS]       # as `spillway matrix run` lists them
    assert [c["name"] for c in summary["cells"]] == in_file_order
    for cell in summary["cells"]:
        assert cell["targets"] == sorted(CELLS[cell["name"]]["targets"])
    markdown = (out / "summary.md").read_text()
    assert "| kernel | target | " + " | ".join(f"`{c}`" for c in in_file_order) + " |" in markdown
    for cell in NIX_CELLS:
        report = json.loads((out / "reports" / f"{cell}.json").read_text())
        assert report["schema"] == "spillway.report/6" and len(report["kernels"]) == kernel_count()
        text = (out / "reports" / f"{cell}.txt").read_text()
        assert f"{kernel_count()} kernels of {kernel_count()} kernels read" in text
    return summary


def test_the_flake_offers_hydra_jobs_a_summary_an_overlay_and_a_dev_shell(nix, workdir):
    copy = project(workdir, "fan")
    evaluate = lambda attr, apply: json.loads(nix(copy, "eval", "--json", ref(copy, attr), "--apply", apply,
                                                  check=True).stdout)
    # hydraJobs.<cell>.<member>.<system>: the cells on x86_64-linux only (their
    # toolchains are x86_64 programs); spillway and its tests on both systems.
    jobs = evaluate("hydraJobs", "jobs: builtins.mapAttrs (_: byMember: builtins.mapAttrs (_: v: "
                                 "if v ? type then v.type else builtins.attrNames v) byMember) jobs")
    assert sorted(jobs) == sorted(NIX_CELLS + ["matrix-summary", "spillway", "tests"])
    for cell in NIX_CELLS:
        assert jobs[cell] == {member: [SYSTEM] for member in CELL_JOBS}
    assert jobs["spillway"] == jobs["tests"] == {system: "derivation" for system in ALL_SYSTEMS}
    assert jobs["matrix-summary"] == {SYSTEM: "derivation"}
    # Each job is the flake's own derivation, not a copy.
    same = {"engine": "packages", "kernels": "packages", "report": "packages", "toolchain": "packages",
            "gate": "checks"}
    for cell in NIX_CELLS:
        for member, output in same.items():
            name = f"kernel-resources-{cell}" if member == "gate" else f"{member}-{cell}"
            job = evaluate(f"hydraJobs.{quoted(cell)}.{member}.{SYSTEM}", "d: d.drvPath")
            assert job == evaluate(f"{output}.{SYSTEM}.{quoted(name)}", "d: d.drvPath"), (cell, member)

    # aarch64-linux: spillway, its tests and the dev shell, no cells.
    names = lambda output: evaluate(f"{output}.aarch64-linux", "builtins.attrNames")
    assert names("packages") == ["default", "spillway"]
    assert names("devShells") == ["default"]
    assert names("checks") == ["tests"]
    every_system = ("--all-systems",) if nix.release >= (2, 18) else ()   # 2.8 evaluates all of them anyway
    nix(copy, "flake", "check", "--no-build", *every_system, ref(copy), check=True)

    # overlays.default on a package set of one's own gives the same derivation as packages.spillway.
    standin = f"{copy}.standin"
    through_overlay = json.loads(nix(copy, "eval", "--impure", "--json", ref(copy, "overlays.default"), "--apply",
                                     f'o: (import {standin} {{ system = "{SYSTEM}"; overlays = [ o ]; }})'
                                     ".spillway.drvPath", check=True).stdout)
    assert through_overlay == evaluate(f"packages.{SYSTEM}.spillway", "d: d.drvPath")

    # The fan-in: matrix-summary builds both cells and compares them with the
    # same figures as their reports (the stand-in compiles both with one clang).
    run = nix(copy, "build", "--no-link", "--json", ref(copy, "matrix-summary"), check=True)
    out = Path(json.loads(run.stdout)[0]["outputs"]["out"])
    summary = summary_of(out)
    reports = {cell: json.loads((out / "reports" / f"{cell}.json").read_text()) for cell in NIX_CELLS}
    assert {len(r["kernels"]) for r in reports.values()} == {kernel_count()}
    assert len(summary["kernels"]) > 0


# The remote builder: an sshd of the test's own on 127.0.0.1, and behind it a
# second Nix store with the same store folder as the client's (a store path
# names its folder): the builder's nix-daemon runs in a mount namespace of its
# own where the builder store's folder is mounted over the client's.
SSHD = "/usr/sbin/sshd"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _remote_commands(nix: Nix) -> tuple[str, str]:
    """(a client `nix` whose build hook starts, the matching nix-daemon)."""
    if nix.release < (2, 18):
        daemon = shutil.which("nix-daemon")
        if not daemon:
            _missing("nix-daemon is not installed (nix-bin)")
        return nix.command, str(daemon)
    folder = Path(nix.command).parent
    return str(folder / "nix-with-hook"), str(folder / "nix-daemon")


class LoopbackSshd:
    """sshd on 127.0.0.1 (a free port), with a host key and a client key made
    here; the client key is accepted from 127.0.0.1 only, without forwarding
    or a terminal.  Stopped (by its process) when the test ends."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True)
        for key in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"spillway-test-{key}",
                            "-f", str(folder / key)], check=True, capture_output=True)
        self.user = getpass.getuser()
        self.port = _free_port()
        (folder / "authorized_keys").write_text(
            'from="127.0.0.1",no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-pty '
            + (folder / "client_key.pub").read_text())
        host_key = (folder / "host_key.pub").read_text().split()[:2]
        (folder / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {' '.join(host_key)}\n")
        (folder / "sshd_config").write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {folder / 'host_key'}",
            f"PidFile {folder / 'sshd.pid'}", f"AuthorizedKeysFile {folder / 'authorized_keys'}",
            f"AllowUsers {self.user}", "PermitRootLogin prohibit-password", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "LogLevel VERBOSE", ""]))
        # sshd refuses to start without its privilege separation folder (the
        # system service's unit makes it; that service is not started here).
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        self.log = folder / "sshd.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(folder / "sshd_config")],
                                            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while f"Server listening on 127.0.0.1 port {self.port}" not in self.log.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"sshd did not start:\n{self.log.read_text()}")
            time.sleep(0.1)

    def ssh_options(self) -> str:
        """NIX_SSHOPTS: no user or system ssh configuration, this port, this host key only."""
        return (f"-F /dev/null -p {self.port} -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes "
                f"-o UserKnownHostsFile={self.folder / 'known_hosts'} -o BatchMode=yes")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def test_the_cells_build_on_a_remote_builder_into_a_second_store(nix, workdir, tmp_path):
    """`nix build .#matrix-summary --max-jobs 0 --builders ssh-ng://...`: with no
    local build slot, every derivation (toolchains, kernels, engines, reports,
    spillway, the summary) goes through Nix's build hook and ssh-ng to the
    builder's store, and the outputs come back.  Client and builder: the same Nix."""
    _require_remote_tools()
    client_command, daemon = _remote_commands(nix)
    _build_on_a_remote_builder(nix, workdir, tmp_path, client_command, daemon, "remote")


def test_a_nix_2_8_client_builds_on_a_nix_2_34_builder(nix, workdir, tmp_path):
    """Builders often run another Nix than the machine that sends them work."""
    if nix.release >= (2, 18):
        pytest.skip("runs once, with the Nix 2.8 client")
    _require_remote_tools()
    newer = tmp_path / "nix-2.34"
    newer.mkdir()
    _, daemon = _remote_commands(Nix(newer, nix_command("2.34", newer)))
    _build_on_a_remote_builder(nix, workdir, tmp_path, nix.command, daemon, "remote-mixed")


def _require_remote_tools() -> None:
    for tool in (SSHD, "ssh", "ssh-keygen", "unshare"):
        if not shutil.which(tool):
            _missing(f"{tool} is missing (scripts/install-test-deps.sh installs openssh-server)")
    if os.geteuid() != 0:
        pytest.skip("needs root: the builder's store is mounted in a mount namespace of its own")


def _build_on_a_remote_builder(nix: Nix, workdir: Path, tmp_path: Path, client_command: str, daemon: str,
                               name: str) -> None:
    copy = project(workdir, name)
    client = Nix(tmp_path / "client", client_command)      # a fresh store: nothing built yet
    builder = tmp_path / "builder"
    for sub in ("store", "state", "log", "home"):
        (builder / sub).mkdir(parents=True)
    store_dir = client.root / "store"
    store_dir.mkdir()

    # What ssh-ng runs on the builder: `<remote-program> --stdio`.
    remote_program = builder / "remote-program"
    remote_config = "\n".join(["experimental-features = nix-command flakes", "substituters =", "sandbox = false",
                               "build-users-group =", "max-jobs = 2", "build-hook ="])
    remote_program.write_text(
        "#!/bin/sh\n"
        f"HOME={builder / 'home'} XDG_CACHE_HOME={builder / 'home'}\n"
        f"NIX_CONFIG='{remote_config}'\n"
        "export HOME XDG_CACHE_HOME NIX_CONFIG\n"
        "exec unshare --mount --propagation private /bin/sh -c "
        "'mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"' sh "
        f"{builder / 'store'} {store_dir} {daemon} \"$@\" "
        f"--store 'local?store={store_dir}&state={builder / 'state'}&log={builder / 'log'}'\n")
    remote_program.chmod(0o755)

    sshd = LoopbackSshd(tmp_path / "ssh")
    try:
        client.env["NIX_SSHOPTS"] = sshd.ssh_options()
        machine = (f"ssh-ng://{sshd.user}@127.0.0.1?remote-program={remote_program}&store={store_dir} "
                   f"{SYSTEM} {sshd.folder / 'client_key'} 2 1 - - -")
        started = time.monotonic()
        run = client(copy, "build", "--no-link", "--json", "-L", "--max-jobs", "0", "--builders", machine,
                     ref(copy, "matrix-summary"), check=True)
        seconds = time.monotonic() - started
    finally:
        sshd.stop()
    print(f"{client_command} -> {daemon}: matrix-summary through ssh-ng in {seconds:.0f} s")
    assert f"Accepted publickey for {sshd.user} from 127.0.0.1" in sshd.log.read_text()

    # Every cell derivation was built on the builder ...
    built_remotely = set(re.findall(rf"building '{re.escape(str(store_dir))}/[a-z0-9]{{32}}-([^']+)\.drv' "
                                    rf"on 'ssh-ng://{sshd.user}@127\.0\.0\.1", run.stderr))
    for cell in NIX_CELLS:
        assert {f"kernels-{cell}", f"engine-{cell}", f"report-{cell}"} <= built_remotely, sorted(built_remotely)
    assert {"matrix-summary", PACKAGE_DERIVATION} <= built_remotely
    # ... into its own store (a folder the client's store never was), and came back.
    out = Path(json.loads(run.stdout)[0]["outputs"]["out"])
    on_builder = builder / "store" / out.name
    assert on_builder.is_dir() and out.is_dir()
    assert (on_builder / "summary.json").read_bytes() == (out / "summary.json").read_bytes()
    for cell in NIX_CELLS:
        assert list((builder / "store").glob(f"*-engine-{cell}")), cell
    assert any((builder / "log").rglob("*matrix-summary.drv*")), "the builder kept no build log"

    # The same figures as a build on this machine (the fixture's store).
    local = nix(copy, "build", "--no-link", "--json", ref(copy, "matrix-summary"), check=True)
    local_out = Path(json.loads(local.stdout)[0]["outputs"]["out"])
    assert summary_of(out) == summary_of(local_out)


def test_flake_check_gates_the_amd_llvm_cells(nix, workdir):
    """The AMD LLVM cells in the flake: the wheels as fixed-output derivations
    (the stand-in's fetchurl copies the files set-up downloaded, and Nix checks
    their hashes), the library out of the zip, the forwarder built in Nix, the
    recipe's explicit steps, and each cell gated against its own committed
    baseline.  Under the stand-in only the back end is AMD's: the front end is
    the host's Debian clang 22, as in the cells themselves."""
    if nix.release < (2, 18):
        pytest.skip("gated once, with Nix 2.34: each run builds both cells through AMD's O3")
    from spillway import matrix as mx
    backends = mx.load(REPO / "matrix" / "cells.toml").file.backends
    wheels = backends["rocm-10.0"].store.location() / "wheels"
    missing = [b.wheel for b in backends.values() if not (wheels / b.wheel).is_file()]
    if missing:
        _missing(f"{', '.join(missing)} not in {wheels} (scripts/install-toolchains.sh downloads them)")
    copy = project(workdir, "amd-llvm", amd_llvm=True, host={"wheels": str(wheels)})
    run = nix(copy, "flake", "check", "--no-build", ref(copy), check=True)
    names = json.loads(nix(copy, "eval", "--json", ref(copy, f"checks.{SYSTEM}"), "--apply", "builtins.attrNames",
                           check=True).stdout)
    assert {f"kernel-resources-{cell}" for cell in AMD_CELLS} <= set(names), names
    checks = [ref(copy, f"checks.{SYSTEM}.{quoted('kernel-resources-' + cell)}") for cell in AMD_CELLS]
    run = nix(copy, "build", "-L", "--no-link", *checks, check=True)
    log = run.stderr
    for cell in AMD_CELLS:
        baseline = json.loads((REPO / CELLS[cell]["baseline"]).read_text())
        backend = CELLS_DOCUMENT["backends"][CELLS[cell]["backend"]]
        assert f"kernel-resources-{cell}: AMD LLVM {backend['llvm']} of ROCm {backend['rocm']}" in log
        assert f"spillway check lib/libengine.so --baseline checks/baselines/{cell}.json" in log
        commit = baseline["provenance"]["backend"]["llvm_commit"]
        assert f'"commit": "{commit}"' in log          # the toolchain loaded the library and read its commit
    assert log.count("OK: 66 kernels within baseline") == len(AMD_CELLS), log[-4000:]
    assert "compile.sh: AMD LLVM gfx90a:" in log     # the recipe's explicit steps ran in the Nix build

    # A wheel whose hash is not the pinned one stops the build (a fixed-output derivation).
    cells = copy / "matrix" / "cells.toml"
    pinned = CELLS_DOCUMENT["backends"]["rocm-7.2.2"]["sha256"]
    cells.write_text(cells.read_text().replace(pinned, "1" * 64))
    run = nix(copy, "build", "--no-link", ref(copy, quoted("toolchain-rocm-7.2.2-amd-llvm22")), check=False)
    assert run.returncode != 0 and "hash mismatch" in run.stderr, run.stderr[-3000:]
