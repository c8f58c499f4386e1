"""The matrix beyond one machine, through a CI system's job matrix: one job
per cell (fan-out), each uploading its cell's build folder as an artifact,
and one job that takes every downloaded artifact and gates, compares and
reports them as `spillway matrix run` does on one machine (fan-in).

Fan-out: ``job_matrix`` gives GitHub Actions' ``strategy.matrix`` value,
``{"include": [{"cell": ..., ...}, ...]}``, one entry per cell, saying where
the cell's job runs (``JOB_FIELDS``).

The artifact layout: a cell's job builds into a build folder of its own and
uploads it whole, so the artifact holds ``<cell>/build.json`` (always, once the
recipe ran: the cell, status, compiler and recipe settings), ``<cell>/<library>``
(when it built), ``<cell>/check.json`` (when it was gated) and the recipe's
logs.  GitHub's download-artifact puts each artifact in a folder named after
it (``ARTIFACTS/<artifact>/<cell>/``), or, with ``merge-multiple``, every
cell side by side (``ARTIFACTS/<cell>/``, a build folder); both are read.

Fan-in: ``collect_builds`` finds every cell folder, checks each against the
cells file (a cell it does not define, a cell twice, a build made with other
recipe settings are errors, not silently gated), copies it into the build
folder and gives the builds `matrix run` would have had, so the checks,
JUnit files, comparison and summary are made by the same code from the same
libraries.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Final

from spillway import json_codec
from spillway.errors import UsageError
from spillway.matrix.build import _PLACES, CellBuild, cell_dir, recipe_environment
from spillway.matrix.cells import Cell, Matrix

# The name each cell's job gives its artifact (only a convention of the example
# workflow: collect_builds finds cells by their build.json, not by this name).
ARTIFACT_PREFIX: Final = "spillway-cell-"
# Debian cells' packages are bookworm's (clang-22 from bookworm-security), and
# the sid root is made from a bookworm host: their jobs run in this image.
DEBIAN_IMAGE: Final = "debian:bookworm"
RUNNER: Final = "ubuntu-latest"
# mmdebstrap (making the root), mounting proc in it, and the recipe's
# `unshare --mount` + chroot all need CAP_SYS_ADMIN: a privileged container.
ROOT_CONTAINER_OPTIONS: Final = "--privileged"

# Every field of an include entry, in order, with what it means (docs/ci.md, `matrix list --help`).
JOB_FIELDS: Final = {
    "cell": "the cell's name (a [cells.NAME] table of the cells file)",
    "toolchain": "the toolchain, for the job's name (e.g. 'clang 22', 'ROCm 7.2.4, hipcc 22')",
    "builder": "how the job gets the toolchain: 'debian' (apt packages in a Debian container), "
               "'debian-root' (a Debian root made with mmdebstrap inside a privileged Debian container) or "
               "'nix' (the flake; the job needs Nix on the runner, no container)",
    "system": "the cells file's system the cell builds in (bookworm, sid-root; '' for Nix cells)",
    "runs-on": "the runner label to use",
    "container": "the container image the job runs in ('' for none: the runner itself)",
    "container-options": "docker options for that container ('--privileged' where a root is made and entered)",
    "artifact": "the name to upload the cell's build folder under",
}


def job_entry(cell: Cell) -> dict[str, str]:
    """One cell's include entry of the job matrix."""
    if cell.local:
        builder, container = ("debian-root" if cell.in_root else "debian"), DEBIAN_IMAGE
        options = ROOT_CONTAINER_OPTIONS if cell.in_root else ""
    else:
        builder, container, options = "nix", "", ""
    system = cell.system if cell.local else ""      # Nix cells build in the Nix store, on no system of the file
    entry = {"cell": cell.name, "toolchain": cell.toolchain(), "builder": builder, "system": system,
             "runs-on": RUNNER, "container": container, "container-options": options,
             "artifact": ARTIFACT_PREFIX + cell.name}
    assert list(entry) == list(JOB_FIELDS)
    return entry


def job_matrix(cells: list[Cell]) -> bytes:
    """GitHub Actions' strategy.matrix for these cells, as one line of JSON
    (what `echo "matrix=$(...)" >> "$GITHUB_OUTPUT"` takes)."""
    if not cells:
        # GitHub refuses a matrix without entries; say so here rather than there.
        raise UsageError("no cell selected: a job matrix needs at least one")
    return json_codec.dumps({"include": [job_entry(c) for c in cells]}) + b"\n"


# -- fan-in ------------------------------------------------------------------------------

PROVENANCE: Final = "build.json"


def _read_provenance(path: Path) -> dict:
    try:
        document = json_codec.loads(path.read_bytes())
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except json_codec.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(document, dict) or not isinstance(document.get("cell"), str):
        raise UsageError(f"{path}: not a cell's build.json (no \"cell\")")
    return document


def find_cells(matrix: Matrix, artifacts: Path) -> dict[str, tuple[Path, dict]]:
    """Every cell folder under ``artifacts`` (``<artifact>/<cell>/build.json``
    or ``<cell>/build.json``): cell name -> (folder, its build.json)."""
    if not artifacts.is_dir():
        raise UsageError(f"{artifacts}: not a folder (give the folder the artifacts were downloaded into)")
    found: dict[str, tuple[Path, dict]] = {}
    for provenance in sorted([*artifacts.glob(f"*/{PROVENANCE}"), *artifacts.glob(f"*/*/{PROVENANCE}")]):
        folder = provenance.parent
        document = _read_provenance(provenance)
        name = document["cell"]
        if name != folder.name:
            raise UsageError(f"{provenance}: the build of cell {name!r} lies in a folder named {folder.name!r} "
                             f"(the layout is <artifact>/<cell>/{PROVENANCE})")
        if name not in matrix.cells:
            raise UsageError(f"{provenance}: cell {name!r} is not in {matrix.path} "
                             f"(cells: {', '.join(matrix.cells)})")
        if name in found:
            raise UsageError(f"cell {name} is in two artifacts: {found[name][0]} and {folder}")
        found[name] = (folder, document)
    if not found:
        raise UsageError(f"{artifacts}: no cell's build found (looked for <artifact>/<cell>/{PROVENANCE} and "
                         f"<cell>/{PROVENANCE})")
    return found


def _settings_differ(matrix: Matrix, cell: Cell, document: dict) -> str:
    """Why a cell's build was not made with this cells file's settings ('' when it was)."""
    expected = {k: v for k, v in recipe_environment(matrix, cell).items() if k not in _PLACES}
    recorded = document.get("environment")
    if not isinstance(recorded, dict):
        return f"its {PROVENANCE} records no recipe settings"
    for key in sorted(set(expected) | set(recorded)):
        if expected.get(key) != recorded.get(key):
            return (f"it was built with {key}={recorded.get(key, '(unset)')!r}, {matrix.path.name} says "
                    f"{expected.get(key, '(unset)')!r}")
    if document.get("sources") != matrix.engine.sources or document.get("library") != matrix.engine.library:
        return f"it was built from other sources than [engine] of {matrix.path.name} lists"
    return ""


def _overlap(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def _copy_folder(source: Path, target: Path) -> None:
    """Replace ``target`` by a copy of ``source``: copied beside it first, so an
    interrupted copy leaves the old folder or none, never half of one."""
    partial = target.with_name(f".{target.name}.collecting")
    shutil.rmtree(partial, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, partial, symlinks=True)
    if target.exists():
        shutil.rmtree(target)
    os.replace(partial, target)


def collect_builds(matrix: Matrix, artifacts: Path, build_dir: Path, cells: list[Cell]) -> list[CellBuild]:
    """The builds of ``cells`` from the downloaded artifacts, each copied into
    ``build_dir/<cell>/`` (read in place when it is there already: artifacts
    downloaded with merge-multiple into the build folder)."""
    artifacts, build_dir = artifacts.resolve(), build_dir.resolve()
    if artifacts in build_dir.parents:
        raise UsageError(f"--build-dir {build_dir} is inside the artifacts folder {artifacts}: give another "
                         f"build folder, or the artifacts folder itself")
    found = find_cells(matrix, artifacts)
    builds = []
    for cell in cells:
        if cell.name not in found:
            builds.append(CellBuild(cell, "skipped", f"no artifact of {cell.name} in {artifacts} (its job "
                                                     f"uploaded no {cell.name}/{PROVENANCE})"))
            continue
        source, document = found[cell.name]
        status, reason = document.get("status"), document.get("reason") or ""
        version = document.get("compiler") or ""
        if status == "failed":
            builds.append(CellBuild(cell, "failed", reason, version=version))
            continue
        if status not in ("built", "up to date"):
            raise UsageError(f"{source / PROVENANCE}: unknown status {status!r}")
        differs = _settings_differ(matrix, cell, document)
        if differs:
            builds.append(CellBuild(cell, "failed", f"its artifact ({source}) does not match this cells file: "
                                                    f"{differs}", version=version))
            continue
        if not (source / matrix.engine.library).is_file():
            builds.append(CellBuild(cell, "failed", f"its artifact ({source}) has no {matrix.engine.library} "
                                                    f"although its {PROVENANCE} says {status}", version=version))
            continue
        target = cell_dir(build_dir, cell)
        if source.resolve() != target:
            if _overlap(source.resolve(), target):
                raise UsageError(f"{source}: the artifact and the build folder {target} overlap; download the "
                                 f"artifacts elsewhere")
            _copy_folder(source, target)
        builds.append(CellBuild(cell, "up to date", library=target / matrix.engine.library, version=version))
    return builds
