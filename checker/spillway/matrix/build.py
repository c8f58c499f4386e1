"""Building cells: every source of ``[engine]`` compiled by the shared recipe
(``matrix/compile.sh``) into ``<build>/<cell>/obj/``, linked into
``<build>/<cell>/<library>``, ``jobs`` recipe processes at once.  Builds are
incremental: every object has a stamp, a hash of everything that goes into it
(recipe, source, headers, compiler identity, cell flags); an object whose
stamp matches is not rebuilt.  Cells of a root system build inside it: the
recipe gets ``SPW_ROOT`` and enters the root itself.

A debug twin (cells.toml ``lines = "twin"``, or ``Builder(lines=True)``: every
cell without line tables of its own): the cell's kernel sources compiled a
second time with its flags and ``-gline-tables-only`` (objects
``obj/<source>.lines.o``, beside the release's, so CI's object cache and
upload rules treat them alike) and linked with the release's host objects into
``<build>/<cell>/lines/<library>``; spillway takes source lines from it for
the release's kernels whose code is the same (report.library_lines).  A cell
with no twin asked for plans exactly the steps, stamps and build.json it
always had."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal, Optional

from spillway import atomic, json_codec
from spillway.constants import MATRIX_DEFAULT_JOBS
from spillway.errors import UsageError
from spillway.matrix.cells import Cell, Matrix
from spillway.matrix.exits import exit_status
from spillway.matrix.toolchains import Availability, probe

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
    twin: bool = False      # a step of the cell's debug twin

    @property
    def label(self) -> str:
        name = self.source.name if self.source else self.output.name
        return f"{name} (lines)" if self.twin else name


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
    twin: Optional[Path] = None   # the debug twin's library, when one was asked for and built
    backend: Optional[dict] = None   # the back end's provenance (AMD LLVM, ROCm, wheel), when the cell has one


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


def recipe_environment(matrix: Matrix, cell: Cell, compiler: str | None = None,
                       root: Path | None = None, twin: bool = False) -> dict[str, str]:
    """The SPW_* variables matrix/compile.sh takes for this cell (``twin``:
    for its debug twin).  SPW_HIP only when the cell uses a real HIP,
    SPW_CLANG and SPW_ROOT only for cells that build in a root (so the other
    cells' stamps stay what they were)."""
    env = {
        "SPW_CXX": compiler or cell.cxx,
        "SPW_TARGETS": " ".join(cell.targets),
        "SPW_COV": cell.code_object_version,
        "SPW_COMPRESS": "1" if cell.compress else "0",
        "SPW_FLAGS": " ".join(cell.twin_flags() if twin else cell.flags),
        "SPW_INCLUDE": ":".join(str(matrix.resolve(h)) for h in matrix.engine.headers),
    }
    if cell.hip != "mini":
        env["SPW_HIP"] = cell.hip
    if cell.in_root:
        env["SPW_CLANG"] = cell.clang
        location = root or cell.system_info.location()
        env["SPW_ROOT"] = str(location)
    backend = cell.backend_info
    if backend is not None:      # AMD's LLVM compiles the device code, the front end's LLVM links and bundles
        env["SPW_BACKEND_LIBRARY"] = str(backend.installed_library())
        forwarders = backend.forwarder_folder()
        if forwarders is not None:
            env["SPW_BACKEND_PRELOAD"] = str(forwarders)
        env["SPW_BACKEND_HELPER"] = str(backend.helper)
        env["SPW_PYTHON"] = sys.executable
        env["SPW_LLD"] = f"ld.lld-{cell.clang}"
        env["SPW_BUNDLER"] = f"clang-offload-bundler-{cell.clang}"
        if backend.drop_attributes:
            env["SPW_BACKEND_DROP_ATTRIBUTES"] = " ".join(backend.drop_attributes)
    return env


# Not part of what an object is built from: where the headers, the root, the back end's
# library (its bytes' hash is) and Python are on this machine.
_PLACES = ("SPW_INCLUDE", "SPW_ROOT", "SPW_BACKEND_LIBRARY", "SPW_BACKEND_PRELOAD", "SPW_BACKEND_HELPER",
           "SPW_PYTHON")


def cell_dir(build_dir: Path, cell: Cell) -> Path:
    return build_dir / cell.name


def library_path(matrix: Matrix, build_dir: Path, cell: Cell) -> Path:
    return cell_dir(build_dir, cell) / matrix.engine.library


TWIN_DIR = "lines"


def twin_path(matrix: Matrix, build_dir: Path, cell: Cell) -> Path:
    """Where the cell's debug twin's library goes."""
    return cell_dir(build_dir, cell) / TWIN_DIR / matrix.engine.library


def _object_name(source: str, twin: bool = False) -> str:
    return Path(source).name + (".lines.o" if twin else ".o")


def _has_kernels(source: str) -> bool:
    return source.endswith(".hip")


ProgressHook = Callable[[Cell, str, Step | None], None]   # (cell, event, step)


class Builder:
    """Builds cells with a pool of `jobs` recipe processes."""

    def __init__(self, matrix: Matrix, build_dir: Path, jobs: int = MATRIX_DEFAULT_JOBS,
                 progress: ProgressHook | None = None, lines: bool = False):
        self.matrix = matrix
        self.build_dir = build_dir
        self.jobs = max(1, jobs)
        self.progress = progress or (lambda cell, event, step: None)
        self.lines = lines          # a debug twin of every cell without line tables of its own

    def wants_twin(self, cell: Cell) -> bool:
        return cell.lines == "twin" or (self.lines and not cell.line_tables)

    # Everything that decides what a cell's objects contain, except the source.
    def _cell_identity(self, cell: Cell, availability: Availability, twin: bool = False) -> str:
        recipe = self.matrix.resolve(self.matrix.engine.recipe)
        headers = [self.matrix.resolve(h) for h in self.matrix.engine.headers]
        compiler = availability.compiler_file or Path(availability.compiler or cell.cxx)
        try:
            stat = compiler.resolve().stat()
            compiler_id = (str(availability.compiler if availability.root else compiler.resolve()),
                           stat.st_size, int(stat.st_mtime))
        except OSError:
            compiler_id = (str(compiler), 0, 0)
        env = recipe_environment(self.matrix, cell, twin=twin)
        for place in _PLACES:
            env.pop(place, None)
        parts = [recipe.read_bytes() if recipe.is_file() else b"", _tree_digest(headers), compiler_id,
                 availability.version, sorted(env.items())]
        backend = availability.backend
        if backend is not None:     # the library's bytes and the step that drives it
            helper = cell.backend_info.helper if cell.backend_info else None
            parts += [backend.sha256, helper.read_bytes() if helper and helper.is_file() else b""]
        return _digest(*parts)

    def plan(self, cell: Cell, availability: Availability) -> tuple[list[Step], list[Step]]:
        """The cell's compile steps and link steps (its library's, then its
        debug twin's when one is asked for)."""
        root = cell_dir(self.build_dir, cell)
        identity = self._cell_identity(cell, availability)
        steps = []
        contents = {}
        for source in self.matrix.engine.sources:
            path = self.matrix.resolve(source)
            if not path.is_file():
                raise UsageError(f"{self.matrix.path}: engine source {source} does not exist under {self.matrix.root}")
            contents[source] = path.read_bytes()
            stamp = _digest(identity, source, contents[source])
            steps.append(Step(cell, "compile", path, root / "obj" / _object_name(source), stamp))
        link_stamp = _digest(identity, self.matrix.engine.library, [s.stamp for s in steps])
        links = [Step(cell, "link", None, root / self.matrix.engine.library, link_stamp)]
        if self.wants_twin(cell):
            twin_identity = self._cell_identity(cell, availability, twin=True)
            twins = {source: Step(cell, "compile", self.matrix.resolve(source),
                                  root / "obj" / _object_name(source, twin=True),
                                  _digest(twin_identity, source, contents[source]), twin=True)
                     for source in self.matrix.engine.sources if _has_kernels(source)}
            # The twin's library: its kernel objects, and the release's host objects.
            objects = [twins[source] if source in twins else step
                       for source, step in zip(self.matrix.engine.sources, steps)]
            steps += twins.values()
            links.append(Step(cell, "link", None, twin_path(self.matrix, self.build_dir, cell),
                              _digest(twin_identity, self.matrix.engine.library, [s.stamp for s in objects]),
                              twin=True))
        return steps, links

    def _link_inputs(self, step: Step) -> list[str]:
        folder = self.build_dir / step.cell.name / "obj"
        return [str(folder / _object_name(source, step.twin and _has_kernels(source)))
                for source in self.matrix.engine.sources]

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
        if step.twin:
            env = dict(env, SPW_FLAGS=" ".join(step.cell.twin_flags()))
        if step.kind == "compile":
            command = ["bash", str(recipe), "compile", str(step.source), str(step.output)]
        else:
            command = ["bash", str(recipe), "link", str(step.output), *self._link_inputs(step)]
        log = step.output.with_name(step.output.name + ".log")
        start = time.monotonic()
        try:
            result = subprocess.run(command, env=env, capture_output=True, text=True, cwd=self.matrix.root)
            output, status = result.stdout + result.stderr, result.returncode
        except OSError as exc:
            output, status = str(exc), 127
        step.seconds = time.monotonic() - start
        step.ran = True
        where = f"(in {env['SPW_ROOT']}) " if env.get("SPW_ROOT") else ""
        log.write_text(where + " ".join(command) + "\n" + output)
        if status != 0:
            step.error = _first_error(output) or f"exit status {status}"
            step.output.unlink(missing_ok=True)
        else:
            stamp.write_text(step.stamp + "\n")
        return step

    def build(self, cells: list[Cell]) -> list[CellBuild]:
        results: dict[str, CellBuild] = {}
        work: dict[str, tuple[list[Step], list[Step], dict[str, str]]] = {}
        for cell in cells:
            availability = probe(cell)
            if not availability.available:
                results[cell.name] = CellBuild(cell, "skipped", availability.reason)
                self.progress(cell, "skipped", None)
                continue
            compiles, links = self.plan(cell, availability)
            env = dict(os.environ, **recipe_environment(self.matrix, cell, availability.compiler,
                                                        availability.root))
            work[cell.name] = (compiles, links, env)
            results[cell.name] = CellBuild(cell, "up to date", library=links[0].output, objects=len(compiles),
                                           version=availability.version,
                                           backend=backend_provenance(availability))
            self.progress(cell, "planned", links[0])

        started = {name: time.monotonic() for name in work}
        pending: dict[Future, Step] = {}
        remaining = {name: 0 for name in work}
        linking = {name: 0 for name in work}
        failed: set[str] = set()
        with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="spillway-build") as pool:
            def submit(step: Step, env: dict[str, str]) -> None:
                self.progress(step.cell, "start", step)
                pending[pool.submit(self._run, step, env)] = step

            def finish_compiles(name: str) -> None:
                compiles, links, env = work[name]
                if name in failed:
                    self._done(results[name], started[name], compiles, links)
                    return
                for link in links:
                    if self._fresh(link) and not any(s.ran for s in compiles if _links(link, s)):
                        self.progress(link.cell, "fresh", link)
                    else:
                        linking[name] += 1
                        submit(link, env)
                if not linking[name]:
                    self._done(results[name], started[name], compiles, links)

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
                        linking[name] -= 1
                        if not linking[name]:
                            compiles, links, _ = work[name]
                            self._done(results[name], started[name], compiles, links)
        return [results[cell.name] for cell in cells]

    def _done(self, result: CellBuild, started: float, compiles: list[Step], links: list[Step]) -> None:
        result.compiled = sum(1 for s in compiles if s.ran)
        result.seconds = time.monotonic() - started
        broken = [s for s in [*compiles, *links] if s.error]
        if broken:
            first = broken[0]
            result.status = "failed"
            result.library = None
            result.log = first.output.with_name(first.output.name + ".log")
            result.reason = f"{first.kind} {first.label}: {first.error}"
        else:
            if result.compiled or any(link.ran for link in links):
                result.status = "built"
            result.twin = next((link.output for link in links if link.twin), None)
        self._write_provenance(result, compiles, links)
        self.progress(result.cell, "finished", None)

    def _write_provenance(self, result: CellBuild, compiles: list[Step], links: list[Step]) -> None:
        """build/<cell>/build.json: what was built, with which compiler and flags."""
        cell = result.cell
        folder = cell_dir(self.build_dir, cell)
        folder.mkdir(parents=True, exist_ok=True)
        document = {
            "cell": cell.name, "toolchain": cell.toolchain(), "compiler": result.version,
            "status": result.status, "reason": result.reason,
            "recipe": self.matrix.engine.recipe,
            "system": cell.system,
            "environment": {k: v for k, v in recipe_environment(self.matrix, cell).items() if k not in _PLACES},
            "sources": self.matrix.engine.sources, "library": self.matrix.engine.library,
            "stamp": links[0].stamp,
        }
        if result.backend is not None:   # only then, so the other cells' build.json stay what they were
            document["backend"] = result.backend
        if len(links) > 1:    # a debug twin: only then, so a build without one writes what it always wrote
            document["lines"] = {"library": f"{TWIN_DIR}/{self.matrix.engine.library}",
                                 "flags": cell.twin_flags(), "stamp": links[1].stamp}
        atomic.write_bytes(str(folder / "build.json"), json_codec.dumps(document, indent=True) + b"\n")


def backend_provenance(availability: Availability) -> Optional[dict]:
    """What build.json and the baseline record of a back end: its ROCm release,
    AMD LLVM version and commit (the library's own strings), the wheel."""
    backend = availability.backend
    if backend is None:
        return None
    return {"name": backend.name, "rocm": backend.rocm, "llvm_version": backend.version,
            "llvm_commit": backend.commit, "library_sha256": backend.sha256,
            "front_end": availability.version.split("; ")[0],
            "dropped_attributes": list(backend.dropped_attributes),
            "wheel": {"package": backend.package, "version": backend.package_version, "file": backend.wheel,
                      "sha256": backend.wheel_sha256}}


def _links(link: Step, compiled: Step) -> bool:
    """Whether ``link`` takes ``compiled``'s object: the release's library its
    own objects; the twin's its kernel objects and the release's host ones."""
    return compiled.twin == link.twin or (link.twin and not _has_kernels(str(compiled.source)))


def _first_error(output: str) -> str:
    for line in output.splitlines():
        if "error" in line.lower():
            return line.strip()[:300]
    lines = [text for text in output.splitlines() if text.strip()]
    return lines[-1].strip()[:300] if lines else ""



def build_exit_status(builds: list[CellBuild], required: set[str]) -> int:
    return exit_status(failed=any(b.status == "failed" for b in builds),
                       required_skipped=any(b.status == "skipped" and b.cell.name in required for b in builds),
                       any_done=any(b.status in ("built", "up to date") for b in builds))
