"""The toolchain matrix: cells from ``matrix/cells.toml``, whether each cell's
toolchain is available here, building every cell's engine with the shared
recipe (``matrix/compile.sh``), gating each build against its own baseline,
and comparing cells.

A cell is one toolchain building the same sources into
``<build>/<cell>/libengine.so``.  Builds are incremental: every object has a
stamp, a hash of everything that goes into it (recipe, source, headers,
compiler identity, cell flags); an object whose stamp matches is not rebuilt.

Gating and baselines go through spillway's own commands (``spillway check``
and ``spillway baseline write``), run in-process, so a cell is held to exactly
what a user running those commands would be held to.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal, Optional

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from spillway.constants import MATRIX_DEFAULT_JOBS
from spillway.errors import UsageError

CELLS_FILE = Path("matrix") / "cells.toml"
SCHEMA = "1"
METRIC_NAMES = ("scratch", "spills", "occupancy", "vgprs", "lds")
# Offload targets as --offload-arch takes them: a processor and optional features.
_TARGET = re.compile(r"^gfx[0-9a-f]{2,5}(:[a-z0-9_-]+[+-])*$")
_CELL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_VERSION = re.compile(r"^[0-9]+(\.[0-9]+)*$")
# First LLVM major that knows a processor (for clear errors on old cells).
_KNOWN_FROM = {"gfx942": 17, "gfx1150": 17, "gfx1151": 17, "gfx1200": 18, "gfx1201": 18, "gfx950": 20}

# Exit statuses of `spillway matrix check|run|build|baseline`.
EXIT_OK = 0
EXIT_FAILED = 1       # a cell failed to build, is over its baseline, or could not be checked
EXIT_USAGE = 2        # bad cells.toml, unknown cell, bad option
EXIT_SKIPPED = 3      # nothing failed, but a required cell was skipped (toolchain missing)


# -- the cells file ----------------------------------------------------------------

class Engine(BaseModel):
    """What every cell builds."""

    model_config = ConfigDict(extra="forbid")

    library: str = Field(min_length=1, pattern=r"^[^/]+$")
    sources: list[str] = Field(min_length=1)
    headers: list[str] = []
    recipe: str = "matrix/compile.sh"

    @field_validator("sources")
    @classmethod
    def _known_languages(cls, sources: list[str]) -> list[str]:
        for source in sources:
            if not source.endswith((".hip", ".cpp", ".cc")):
                raise ValueError(f"{source}: the recipe compiles .hip and .cpp files only")
        stems = [Path(s).name for s in sources]
        duplicates = sorted({s for s in stems if stems.count(s) > 1})
        if duplicates:
            raise ValueError(f"two sources share a file name ({', '.join(duplicates)}): objects would collide")
        return sources


class Cell(BaseModel):
    """One toolchain of the matrix."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""                       # the table key, filled in by the loader
    description: str = ""
    source: Literal["nixpkgs", "tarball", "debian"]
    rocm: Optional[str] = None
    compiler: Literal["clang", "amdclang", "hipcc"]
    clang: str = Field(pattern=r"^[0-9]+$")
    cxx: str = Field(min_length=1)
    packages: list[str] = []
    requires: list[str] = []
    targets: list[str] = Field(min_length=1)
    code_object_version: Literal["", "4", "5", "6"] = ""
    compress: bool = False
    flags: list[str] = []
    baseline: str = Field(min_length=1)
    gate: list[Literal["scratch", "spills", "occupancy", "vgprs", "lds"]] = ["scratch"]

    @field_validator("rocm")
    @classmethod
    def _rocm_version(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and not _VERSION.match(value):
            raise ValueError(f"not a version: {value!r} (write it as a string, e.g. \"7.2.3\")")
        return value

    @field_validator("targets")
    @classmethod
    def _targets(cls, targets: list[str]) -> list[str]:
        for target in targets:
            if not _TARGET.match(target):
                raise ValueError(f"not an offload target: {target!r} (e.g. gfx1151, gfx90a:xnack-)")
        if len(set(targets)) != len(targets):
            raise ValueError("a target is listed twice")
        return targets

    @model_validator(mode="after")
    def _consistent(self) -> "Cell":
        major = int(self.clang)
        if self.source in ("nixpkgs", "tarball") and not self.rocm:
            raise ValueError(f"source {self.source!r} needs rocm = \"<version>\"")
        if self.source == "debian" and not self.packages:
            raise ValueError("source \"debian\" needs packages = [...] (what install-toolchains.sh installs)")
        # Only what is known for certain: LLVM 15 and 16 (toolchains-debian.md 1.1).
        if self.compress and major < 17:
            raise ValueError(f"compress = true needs clang >= 19 (clang {major} rejects --offload-compress)")
        if self.code_object_version == "6" and major < 17:
            raise ValueError(f"code_object_version \"6\" needs clang >= 19 (clang {major} accepts 4 and 5)")
        late = [t for t in self.targets if major < _KNOWN_FROM.get(t.split(":")[0], 0)]
        if late:
            raise ValueError(f"clang {major} does not know {', '.join(late)} (use gfx1100 / gfx90a)")
        return self

    @property
    def local(self) -> bool:
        """Installed on every developer machine by scripts/install-toolchains.sh."""
        return self.source == "debian"

    def toolchain(self) -> str:
        what = {"clang": "clang", "amdclang": "AMD clang", "hipcc": "hipcc"}[self.compiler]
        text = f"{what} {self.clang}"
        if self.rocm:
            text = f"ROCm {self.rocm}, {text}"
        return text


class CellsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(alias="schema")
    engine: Engine
    cells: dict[str, Cell] = Field(min_length=1)

    @field_validator("schema_")
    @classmethod
    def _schema(cls, value: str) -> str:
        if value != SCHEMA:
            raise ValueError(f"schema {value!r} is not one this spillway reads (want \"{SCHEMA}\")")
        return value

    @field_validator("cells")
    @classmethod
    def _names(cls, cells: dict[str, Cell]) -> dict[str, Cell]:
        for name, cell in cells.items():
            if not _CELL_NAME.match(name):
                raise ValueError(f"cell name {name!r}: use letters, digits and . _ + - (it names a folder)")
            cell.name = name
        return cells


def _location(loc: tuple) -> str:
    parts = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            text = "schema" if part == "schema_" else str(part)
            parts.append(("." if parts else "") + (f'"{text}"' if "." in text else text))
    return "".join(parts)


def format_validation_error(path: str, error: ValidationError) -> str:
    messages = []
    for item in error.errors():
        where = _location(tuple(p for p in item["loc"] if p not in ("function-after",)))
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown field"
        elif item["type"] == "literal_error":
            message = f"must be one of {item['ctx']['expected']}"
        messages.append(f"{where}: {message}" if where else message)
    return f"{path}: " + "; ".join(messages)


@dataclass
class Matrix:
    path: Path                 # the cells file
    root: Path                 # sources, recipe and baselines are relative to this
    file: CellsFile

    @property
    def cells(self) -> dict[str, Cell]:
        return self.file.cells

    @property
    def engine(self) -> Engine:
        return self.file.engine

    def cell(self, name: str) -> Cell:
        try:
            return self.cells[name]
        except KeyError:
            raise UsageError(f"no cell {name!r} in {self.path} (cells: {', '.join(self.cells)})") from None

    def select(self, names: list[str], local_only: bool = False) -> tuple[list[Cell], bool]:
        """The cells to work on and whether they were asked for explicitly
        (named, or --local)."""
        if names:
            seen = []
            for name in names:
                cell = self.cell(name)
                if cell not in seen:
                    seen.append(cell)
            return seen, True
        if local_only:
            return [c for c in self.cells.values() if c.local], True
        return list(self.cells.values()), False

    def resolve(self, relative: str) -> Path:
        return (self.root / relative).resolve()


def find_cells_file(start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CELLS_FILE
        if candidate.is_file():
            return candidate
    raise UsageError(f"no {CELLS_FILE} in {here} or any parent folder (give --cells FILE)")


def default_root(cells_path: Path) -> Path:
    parent = cells_path.resolve().parent
    return parent.parent if parent.name == "matrix" else parent


def load(path: Path | str | None = None, root: Path | str | None = None) -> Matrix:
    """Read and validate a cells file.  Errors are one-line UsageErrors that
    name the file and the field."""
    path = Path(path) if path else find_cells_file()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    try:
        parsed = CellsFile.model_validate(document)
    except ValidationError as exc:
        raise UsageError(format_validation_error(str(path), exc)) from None
    return Matrix(path, Path(root).resolve() if root else default_root(path), parsed)


# -- is the toolchain here? ---------------------------------------------------------

@dataclass
class Availability:
    available: bool
    reason: str = ""                     # why not, for humans
    compiler: Optional[str] = None       # resolved path
    version: str = ""                    # first line of `cxx --version`


_probe_lock = threading.Lock()
_probe_cache: dict[tuple, Availability] = {}

_CLANG_VERSION = re.compile(r"clang version ([0-9]+)\.([0-9A-Za-z.+~-]*)")


def _where_from(cell: Cell) -> str:
    if cell.source == "debian":
        return f"apt-get install {' '.join(cell.packages)}, or scripts/install-toolchains.sh"
    if cell.source == "nixpkgs":
        return f"ROCm {cell.rocm} comes from nixpkgs: the Nix flake builds this cell (or run inside its dev shell)"
    return f"ROCm {cell.rocm} comes from AMD's release tarball: the Nix flake builds this cell " \
           f"(or run inside its dev shell)"


def probe(cell: Cell) -> Availability:
    """Is the cell's compiler here, with the tools it needs, at the version the
    cell names?  Cached per compiler."""
    key = (cell.cxx, tuple(cell.requires), cell.clang, cell.rocm is not None, os.environ.get("PATH", ""))
    with _probe_lock:
        if key in _probe_cache:
            return _probe_cache[key]
    result = _probe(cell)
    with _probe_lock:
        _probe_cache[key] = result
    return result


def _probe(cell: Cell) -> Availability:
    compiler = shutil.which(cell.cxx)
    if not compiler:
        return Availability(False, f"{cell.cxx} not found ({_where_from(cell)})")
    for tool in cell.requires:
        if not shutil.which(tool):
            return Availability(False, f"{tool} not found ({_where_from(cell)})", compiler)
    try:
        result = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(False, f"{cell.cxx} --version failed: {exc}", compiler)
    text = result.stdout.strip()
    first = text.splitlines()[0] if text else ""
    match = _CLANG_VERSION.search(text)
    if result.returncode != 0 or not match:
        return Availability(False, f"{cell.cxx} --version does not name a clang version ({first!r})", compiler, first)
    if match.group(1) != cell.clang:
        return Availability(False, f"{cell.cxx} is clang {match.group(1)}.{match.group(2)}, the cell wants "
                                   f"clang {cell.clang}", compiler, first)
    if cell.rocm and not re.search(r"rocm|amd", text, re.IGNORECASE):
        return Availability(False, f"{cell.cxx} is not a ROCm/AMD clang ({first!r}), the cell wants "
                                   f"ROCm {cell.rocm}", compiler, first)
    return Availability(True, "", compiler, first)


# -- building ------------------------------------------------------------------------

Status = Literal["built", "up to date", "failed", "skipped"]


@dataclass
class Step:
    """One run of the recipe: compile a source, or link the library."""

    cell: Cell
    kind: Literal["compile", "link"]
    source: Optional[Path]
    output: Path
    stamp: str = ""
    seconds: float = 0.0
    ran: bool = False
    error: str = ""

    @property
    def label(self) -> str:
        return self.source.name if self.source else self.output.name


@dataclass
class CellBuild:
    cell: Cell
    status: Status
    reason: str = ""
    library: Optional[Path] = None
    compiled: int = 0
    objects: int = 0
    seconds: float = 0.0
    log: Optional[Path] = None
    version: str = ""


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def _tree_digest(folders: list[Path]) -> str:
    h = hashlib.sha256()
    for folder in folders:
        if folder.is_file():
            files = [folder]
        else:
            files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
        for path in files:
            h.update(str(path.relative_to(folder.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def recipe_environment(matrix: Matrix, cell: Cell, compiler: str | None = None) -> dict[str, str]:
    """The SPW_* variables matrix/compile.sh takes for this cell."""
    return {
        "SPW_CXX": compiler or cell.cxx,
        "SPW_TARGETS": " ".join(cell.targets),
        "SPW_COV": cell.code_object_version,
        "SPW_COMPRESS": "1" if cell.compress else "0",
        "SPW_FLAGS": " ".join(cell.flags),
        "SPW_INCLUDE": ":".join(str(matrix.resolve(h)) for h in matrix.engine.headers),
    }


def cell_dir(build_dir: Path, cell: Cell) -> Path:
    return build_dir / cell.name


def library_path(matrix: Matrix, build_dir: Path, cell: Cell) -> Path:
    return cell_dir(build_dir, cell) / matrix.engine.library


def _object_name(source: str) -> str:
    return Path(source).name + ".o"


ProgressHook = Callable[[Cell, str, Step | None], None]   # (cell, event, step)


class Builder:
    """Builds cells with a pool of `jobs` recipe processes."""

    def __init__(self, matrix: Matrix, build_dir: Path, jobs: int = MATRIX_DEFAULT_JOBS,
                 progress: ProgressHook | None = None):
        self.matrix = matrix
        self.build_dir = build_dir
        self.jobs = max(1, jobs)
        self.progress = progress or (lambda cell, event, step: None)

    # Everything that decides what a cell's objects contain, except the source.
    def _cell_identity(self, cell: Cell, availability: Availability) -> str:
        recipe = self.matrix.resolve(self.matrix.engine.recipe)
        headers = [self.matrix.resolve(h) for h in self.matrix.engine.headers]
        compiler = Path(availability.compiler or cell.cxx)
        try:
            stat = compiler.resolve().stat()
            compiler_id = (str(compiler.resolve()), stat.st_size, int(stat.st_mtime))
        except OSError:
            compiler_id = (str(compiler), 0, 0)
        env = recipe_environment(self.matrix, cell)
        env.pop("SPW_INCLUDE")
        return _digest(recipe.read_bytes() if recipe.is_file() else b"", _tree_digest(headers), compiler_id,
                       availability.version, sorted(env.items()))

    def plan(self, cell: Cell, availability: Availability) -> tuple[list[Step], Step]:
        root = cell_dir(self.build_dir, cell)
        identity = self._cell_identity(cell, availability)
        steps = []
        for source in self.matrix.engine.sources:
            path = self.matrix.resolve(source)
            if not path.is_file():
                raise UsageError(f"{self.matrix.path}: engine source {source} does not exist under {self.matrix.root}")
            stamp = _digest(identity, source, path.read_bytes())
            steps.append(Step(cell, "compile", path, root / "obj" / _object_name(source), stamp))
        link_stamp = _digest(identity, self.matrix.engine.library, [s.stamp for s in steps])
        return steps, Step(cell, "link", None, root / self.matrix.engine.library, link_stamp)

    @staticmethod
    def _fresh(step: Step) -> bool:
        stamp = step.output.with_name(step.output.name + ".stamp")
        try:
            return step.output.is_file() and stamp.read_text().strip() == step.stamp
        except OSError:
            return False

    def _run(self, step: Step, env: dict[str, str]) -> Step:
        recipe = self.matrix.resolve(self.matrix.engine.recipe)
        step.output.parent.mkdir(parents=True, exist_ok=True)
        stamp = step.output.with_name(step.output.name + ".stamp")
        stamp.unlink(missing_ok=True)
        if step.kind == "compile":
            command = ["bash", str(recipe), "compile", str(step.source), str(step.output)]
        else:
            objects = [str(self.build_dir / step.cell.name / "obj" / _object_name(s))
                       for s in self.matrix.engine.sources]
            command = ["bash", str(recipe), "link", str(step.output), *objects]
        log = step.output.with_name(step.output.name + ".log")
        start = time.monotonic()
        try:
            result = subprocess.run(command, env=env, capture_output=True, text=True, cwd=self.matrix.root)
            output, status = result.stdout + result.stderr, result.returncode
        except OSError as exc:
            output, status = str(exc), 127
        step.seconds = time.monotonic() - start
        step.ran = True
        log.write_text(" ".join(command) + "\n" + output)
        if status != 0:
            step.error = _first_error(output) or f"exit status {status}"
            step.output.unlink(missing_ok=True)
        else:
            stamp.write_text(step.stamp + "\n")
        return step

    def build(self, cells: list[Cell]) -> list[CellBuild]:
        results: dict[str, CellBuild] = {}
        work: dict[str, tuple[list[Step], Step, dict[str, str]]] = {}
        for cell in cells:
            availability = probe(cell)
            if not availability.available:
                results[cell.name] = CellBuild(cell, "skipped", availability.reason)
                self.progress(cell, "skipped", None)
                continue
            compiles, link = self.plan(cell, availability)
            env = dict(os.environ, **recipe_environment(self.matrix, cell, availability.compiler))
            work[cell.name] = (compiles, link, env)
            results[cell.name] = CellBuild(cell, "up to date", library=link.output, objects=len(compiles),
                                           version=availability.version)
            self.progress(cell, "planned", link)

        started = {name: time.monotonic() for name in work}
        pending: dict[Future, Step] = {}
        remaining = {name: 0 for name in work}
        failed: set[str] = set()
        with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="spillway-build") as pool:
            def submit(step: Step, env: dict[str, str]) -> None:
                self.progress(step.cell, "start", step)
                pending[pool.submit(self._run, step, env)] = step

            def finish_compiles(name: str) -> None:
                compiles, link, env = work[name]
                if name in failed:
                    self._done(results[name], started[name], compiles, link)
                elif self._fresh(link) and not any(s.ran for s in compiles):
                    self.progress(link.cell, "fresh", link)
                    self._done(results[name], started[name], compiles, link)
                else:
                    submit(link, env)

            for name, (compiles, link, env) in work.items():
                for step in compiles:
                    if self._fresh(step):
                        self.progress(step.cell, "fresh", step)
                    else:
                        remaining[name] += 1
                        submit(step, env)
                if remaining[name] == 0:
                    finish_compiles(name)
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for future in done:
                    step = pending.pop(future)
                    future.result()
                    name = step.cell.name
                    self.progress(step.cell, "failed" if step.error else "done", step)
                    if step.kind == "compile":
                        if step.error:
                            failed.add(name)
                        remaining[name] -= 1
                        if remaining[name] == 0:
                            finish_compiles(name)
                    else:
                        compiles, link, _ = work[name]
                        self._done(results[name], started[name], compiles, link)
        return [results[cell.name] for cell in cells]

    def _done(self, result: CellBuild, started: float, compiles: list[Step], link: Step) -> None:
        result.compiled = sum(1 for s in compiles if s.ran)
        result.seconds = time.monotonic() - started
        broken = [s for s in [*compiles, link] if s.error]
        if broken:
            first = broken[0]
            result.status = "failed"
            result.library = None
            result.log = first.output.with_name(first.output.name + ".log")
            result.reason = f"{first.kind} {first.label}: {first.error}"
        elif result.compiled or link.ran:
            result.status = "built"
        self._write_provenance(result, compiles, link)
        self.progress(result.cell, "finished", None)

    def _write_provenance(self, result: CellBuild, compiles: list[Step], link: Step) -> None:
        """build/<cell>/build.json: what was built, with which compiler and flags."""
        cell = result.cell
        folder = cell_dir(self.build_dir, cell)
        folder.mkdir(parents=True, exist_ok=True)
        document = {
            "cell": cell.name, "toolchain": cell.toolchain(), "compiler": result.version,
            "status": result.status, "reason": result.reason,
            "recipe": self.matrix.engine.recipe,
            "environment": {k: v for k, v in recipe_environment(self.matrix, cell).items() if k != "SPW_INCLUDE"},
            "sources": self.matrix.engine.sources, "library": self.matrix.engine.library,
            "stamp": link.stamp,
        }
        (folder / "build.json").write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")


def _first_error(output: str) -> str:
    for line in output.splitlines():
        if "error" in line.lower():
            return line.strip()[:300]
    lines = [l for l in output.splitlines() if l.strip()]
    return lines[-1].strip()[:300] if lines else ""


# -- gating ----------------------------------------------------------------------------

Verdict = Literal["pass", "fail", "error", "skipped"]


@dataclass
class CellCheck:
    cell: Cell
    verdict: Verdict
    reason: str = ""                 # skipped / error: why; pass / fail: the check's summary
    failures: list[dict] = field(default_factory=list)   # spillway.check/1 "failures"
    required: bool = False
    report: Optional[Path] = None    # the check's JSON result


def _spillway(argv: list[str]) -> tuple[int, str, str]:
    """Run a spillway subcommand in-process, capturing what it prints."""
    from spillway.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:            # argparse errors
            status = exc.code if isinstance(exc.code, int) else 2
    return status, out.getvalue(), err.getvalue()


def check_cell(matrix: Matrix, build_dir: Path, build: CellBuild, gate: Optional[str] = None,
               junit: Optional[Path] = None) -> CellCheck:
    cell = build.cell
    if build.status == "skipped":
        return CellCheck(cell, "skipped", build.reason)
    if build.status == "failed":
        return CellCheck(cell, "error", f"build failed: {build.reason}")
    baseline = matrix.resolve(cell.baseline)
    if not baseline.is_file():
        return CellCheck(cell, "error", f"no baseline {cell.baseline}: write it with "
                                        f"`spillway matrix baseline {cell.name}` where this toolchain runs")
    library = library_path(matrix, build_dir, cell)
    result_path = cell_dir(build_dir, cell) / "check.json"
    result_path.unlink(missing_ok=True)
    argv = ["check", str(library), "--baseline", str(baseline), "--json", str(result_path)]
    if gate:
        argv += ["--gate", gate]
    if junit:
        argv += ["--junit", str(junit)]
    status, out, err = _spillway(argv)
    if status not in (0, 1) or not result_path.is_file():
        message = (err.strip() or out.strip() or f"spillway check exited {status}").splitlines()[-1]
        return CellCheck(cell, "error", message.removeprefix("spillway: error: "))
    document = orjson.loads(result_path.read_bytes())
    verdict: Verdict = "pass" if status == 0 and document.get("passed") else "fail"
    return CellCheck(cell, verdict, document.get("summary", ""), document.get("failures", []),
                     report=result_path)


def exit_status(checks: list[CellCheck]) -> int:
    if any(c.verdict in ("fail", "error") for c in checks):
        return EXIT_FAILED
    if any(c.verdict == "skipped" and c.required for c in checks):
        return EXIT_SKIPPED
    if not any(c.verdict == "pass" for c in checks):
        return EXIT_SKIPPED
    return EXIT_OK


def build_exit_status(builds: list[CellBuild], required: set[str]) -> int:
    if any(b.status == "failed" for b in builds):
        return EXIT_FAILED
    if any(b.status == "skipped" and b.cell.name in required for b in builds):
        return EXIT_SKIPPED
    if not any(b.status in ("built", "up to date") for b in builds):
        return EXIT_SKIPPED
    return EXIT_OK


def required_cells(cells: list[Cell], explicit: bool) -> set[str]:
    """Cells whose absence fails a run: every cell asked for by name (or
    --local); with no names, the local (Debian) cells."""
    return {c.name for c in cells if explicit or c.local}


# -- baselines --------------------------------------------------------------------------

def baseline_note(matrix: Matrix, build_dir: Path, build: CellBuild) -> str:
    cell = build.cell
    try:
        shown = library_path(matrix, build_dir, cell).relative_to(matrix.root)
    except ValueError:
        shown = library_path(matrix, build_dir, cell)
    flags = " ".join(cell.flags) or "no extra flags"
    return (f"cell {cell.name}: written by spillway matrix baseline from {shown} built by "
            f"{matrix.engine.recipe} with {build.version} (targets {', '.join(cell.targets)}, "
            f"code object v{cell.code_object_version or 'default'}"
            f"{', compressed' if cell.compress else ''}, {flags})")


def write_baseline(matrix: Matrix, build_dir: Path, build: CellBuild, fresh: bool = False) -> tuple[int, str]:
    """`spillway baseline write` for one built cell; returns (status, text)."""
    cell = build.cell
    baseline = matrix.resolve(cell.baseline)
    baseline.parent.mkdir(parents=True, exist_ok=True)
    if fresh:
        baseline.unlink(missing_ok=True)
    # Relative to where we run (the repository root for the main job), so the
    # committed baseline's provenance does not carry this machine's paths.
    library = os.path.relpath(library_path(matrix, build_dir, cell))
    argv = ["baseline", "write", library, "-o", os.path.relpath(baseline),
            "--note", baseline_note(matrix, build_dir, build), "--gate", ",".join(cell.gate)]
    status, out, err = _spillway(argv)
    return status, (out + err).strip()


# -- comparing cells ---------------------------------------------------------------------

def target_group(target_id: str) -> str:
    """Rows of the cross-cell view: gfx11 parts are one row (gfx1100 in LLVM
    15/16 cells, gfx1151 elsewhere: same register file, same numbers bar
    SGPRs), other targets are their processor."""
    processor = target_id.split(":", 1)[0]
    match = re.match(r"^gfx(1[0-9])[0-9a-f]{2}$", processor)
    return f"gfx{match.group(1)}" if match else processor


def read_cell(matrix: Matrix, build_dir: Path, cell: Cell):
    """{(target group, stable key): KernelUsage} of a built cell, or None."""
    from spillway.gate.check import aggregate
    from spillway.report.reader import ReadOptions, read_report

    library = library_path(matrix, build_dir, cell)
    if not library.is_file():
        return None
    document = read_report([str(library)], ReadOptions())
    records = []
    for record in document["kernels"]:
        records.append(dict(record, target=target_group(record["target"]), name=short_name(record["name"])))
    return aggregate(records), sorted({r["target"] for r in document["kernels"]})


def short_name(demangled: str) -> str:
    """``void ns::f<1, 2>(int*, float)`` -> ``ns::f<1, 2>`` with versioned
    inline namespaces dropped."""
    from spillway.resources.names import display_key, short_name as without_signature
    return without_signature(display_key(demangled))


@dataclass
class Summary:
    cells: list[Cell]
    targets: dict[str, list[str]]                  # cell -> processors built
    rows: list[tuple[str, str, str]]               # (group, key, name)
    usage: dict[str, dict]                         # cell -> {(group, key): KernelUsage}

    def value(self, cell: str, row: tuple[str, str, str]):
        usage = self.usage[cell].get((row[0], row[1]))
        return usage.resources if usage else None

    def differs(self, row) -> bool:
        """Do the cells that built this kernel for this target disagree?"""
        seen = {self._figures(self.value(c.name, row)) for c in self.cells} - {None}
        return len(seen) > 1

    @staticmethod
    def _figures(r) -> tuple:
        return None if r is None else (r.vgprs, r.spills, r.scratch, r.occupancy)


def summarize(matrix: Matrix, build_dir: Path, cells: list[Cell]) -> Summary:
    usage, targets, rows = {}, {}, {}
    built = []
    for cell in cells:
        read = read_cell(matrix, build_dir, cell)
        if read is None:
            continue
        built.append(cell)
        usage[cell.name], targets[cell.name] = read
        for (group, key), kernel in usage[cell.name].items():
            rows.setdefault((group, key), kernel.name)
    order = sorted(rows, key=lambda gk: (rows[gk], _group_order(gk[0]), gk[1]))
    return Summary(built, targets, [(g, k, rows[(g, k)]) for g, k in order], usage)


def _group_order(group: str) -> tuple:
    return (0 if group.startswith("gfx1") else 1, group)


def figures(r, markdown: bool = False) -> str:
    """VGPRs / spilled registers / scratch B per lane / waves per SIMD."""
    if r is None:
        return "-"
    occupancy = "?" if r.occupancy is None else str(r.occupancy)
    scratch = f"{r.scratch}+dyn" if r.dynamic_stack else str(r.scratch)
    text = f"{r.vgprs} / {r.spills} / {scratch} / {occupancy}"
    if markdown and (r.spills or r.scratch or r.dynamic_stack):
        return f"**{text}**"
    return text


def summary_markdown(summary: Summary, differing_only: bool = False) -> str:
    from spillway.gate.compare import md_code
    cells = summary.cells
    out = ["**spillway matrix**: per kernel, in each cell: VGPRs / spilled registers / scratch bytes per lane / "
           "waves per SIMD (bold: spills or scratch).", ""]
    groups = ", ".join(f"{md_code(c.name)}: {' '.join(summary.targets[c.name])}" for c in cells)
    out.append(f"Targets built: {groups}. Rows `gfx11` hold each cell's gfx11 target.")
    out.append("")
    out.append("| kernel | target | " + " | ".join(md_code(c.name) for c in cells) + " |")
    out.append("|---|---|" + "--:|" * len(cells))
    shown = 0
    for row in summary.rows:
        if differing_only and not summary.differs(row):
            continue
        shown += 1
        values = " | ".join(figures(summary.value(c.name, row), True) for c in cells)
        out.append(f"| {md_code(row[2])} | {row[0]} | {values} |")
    out.append("")
    out.append(f"{shown} of {len(summary.rows)} kernel rows"
               + (" (only rows where the cells differ)" if differing_only else "") + ".")
    return "\n".join(out) + "\n"


def summary_table(summary: Summary, differing_only: bool = False):
    from rich.markup import escape
    from rich.table import Table
    grid = Table(title="per kernel: VGPRs / spilled registers / scratch B/lane / waves per SIMD",
                 title_justify="left")
    grid.add_column("kernel", overflow="fold", ratio=1)
    grid.add_column("target", no_wrap=True)
    for cell in summary.cells:
        grid.add_column(escape(cell.name), justify="right", no_wrap=True)
    for row in summary.rows:
        if differing_only and not summary.differs(row):
            continue
        values = []
        for cell in summary.cells:
            r = summary.value(cell.name, row)
            text = figures(r)
            values.append(f"[red]{text}[/]" if r is not None and (r.spills or r.scratch) else text)
        grid.add_row(escape(row[2]), row[0], *values)
    return grid


def summary_json(summary: Summary) -> dict:
    from spillway import __version__
    return {
        "schema": "spillway.matrix-summary/1",
        "spillway_version": __version__,
        "cells": [{"name": c.name, "toolchain": c.toolchain(), "targets": summary.targets[c.name]}
                  for c in summary.cells],
        "kernels": [{"name": row[2], "key": row[1], "target": row[0],
                     "cells": {c.name: (None if summary.value(c.name, row) is None
                                        else summary.value(c.name, row).as_dict()) for c in summary.cells}}
                    for row in summary.rows],
    }


def compare_cells(matrix: Matrix, build_dir: Path, old: Cell, new: Cell):
    """spillway's own comparison (compare.compare) of two cells, kernels
    matched by stable key and target group."""
    from spillway.gate.compare import compare
    sides = []
    for cell in (old, new):
        read = read_cell(matrix, build_dir, cell)
        if read is None:
            raise UsageError(f"cell {cell.name} is not built (run spillway matrix build {cell.name})")
        sides.append(read[0])
    return compare(sides[1], sides[0], [new.name], [old.name])


def sys_isatty() -> bool:
    return sys.stdout.isatty()
