"""A kernel's history over AMD's releases (``spillway matrix history``): the
translation units holding the named kernels, built with each release's AMD LLVM
(``matrix/releases.toml``) behind one upstream front end for the whole series,
into ``BUILD/history/<release>/``, read with one occupancy model.

Per translation unit and target the steps are the AMD LLVM recipe's
(``matrix/compile.sh``): the front end writes the unoptimized device bitcode
once for the series (bitcode, not text IR: bitcode is read forward by every
later LLVM), ``matrix/amd_llvm.py codegen`` runs the release's optimizer and
code generator, ``ld.lld`` links the code object.  No bundle and no host
object: a history reads code objects.  Every step is reused when its inputs
(bytes of the source and headers, the command, the library's pinned sha256,
the helper) are unchanged; ``builds`` counts the back-end builds a run made.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Final, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from spillway.errors import UsageError
from spillway.json_codec import published_schema
from spillway.matrix.cells import Matrix
from spillway.matrix.releases import Release, ReleaseUnavailable, Series, ensure_library

HISTORY_SCHEMA: Final = "spillway.history/1"
HISTORY_DIR = "history"
FRONTEND_DIR = "frontend"
LINKER = "ld.lld-22"
METRICS = ("spills", "scratch", "vgpr", "agpr", "waves")
# Waves are better when higher; every other figure is better when lower.
HIGHER_IS_BETTER = {"waves"}


# -- the documents ---------------------------------------------------------------------------

class FrontendInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cxx: str = Field(description="The upstream clang that wrote the device bitcode for every release")
    version: str = Field(description="Its version (clang's major.minor.patch)")
    targets: list[str] = Field(description="The targets it knows, of those the series file lists")
    why: str = Field(description="Why this front end: the newest here whose bitcode every back end in the "
                                 "range reads (bitcode is read forward only)")


class Figures(BaseModel):
    model_config = ConfigDict(extra="forbid")
    vgpr: int = Field(description="vgpr_count (on gfx90a/gfx942/gfx950 the unified VGPR+AGPR total)")
    agpr: int = Field(description="agpr_count")
    sgpr: int = Field(description="sgpr_count")
    spills: int = Field(description="Spilled registers: vgpr_spill_count + sgpr_spill_count")
    scratch: int = Field(description="private_segment_fixed_size, bytes per work-item")
    waves: int = Field(description="Waves per SIMD under the document's occupancy model")
    code_sha256: Optional[str] = Field(description="SHA-256 of the kernel's code bytes (equal: identical code)")


class ReleaseColumn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    release: str = Field(description="ROCm release")
    package: str
    version: str = Field(description="The wheel's version")
    sha256: str = Field(description="The wheel's pinned sha256")
    llvm_version: str = Field(description="AMD LLVM version read from the library")
    commit: str = Field(description="AMD LLVM commit read from the library")
    status: str = Field(description="built, failed (reason says why) or unusable (listed in the series file "
                                    "as not usable here, with the reason)")
    reason: str = ""
    builds: int = Field(description="Back-end builds this run made for the release (0: all reused)")


class KernelHistory(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kernel: str = Field(description="The kernel's demangled name as the code object names it (untrusted text)")
    symbol: str = Field(description="Its symbol")
    target: str
    unit: str = Field(description="The translation unit, relative to the root")
    figures: dict[str, Optional[Figures]] = Field(description="Per release (keys of `releases`), null when the "
                                                              "release did not build")


class HistoryDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_: Literal["spillway.history/1"] = Field(HISTORY_SCHEMA, alias="schema")
    frontend: FrontendInfo
    occupancy_model: str
    targets: list[str]
    dropped_targets: dict[str, str] = Field(description="Targets asked for (or the series' defaults) that the "
                                                        "front end does not know, with the reason")
    releases: list[ReleaseColumn] = Field(description="In release order")
    kernels: list[KernelHistory]


def history_json_schema() -> dict:
    return published_schema(HistoryDocument, "history-1.json")


# -- choosing the front end ------------------------------------------------------------------

def choose_frontend(series: Series, releases: list[Release], wanted: Optional[str],
                    available: Callable[[str], bool] = lambda cxx: shutil.which(cxx) is not None
                    ) -> tuple[str, FrontendInfo]:
    """The front end for the whole range: ``wanted`` (a clang major) or the
    newest here whose bitcode every back end in the range reads."""
    usable = [r for r in releases if not r.unusable]
    oldest = min((int(r.llvm) for r in usable), default=None)
    frontends = series.file.frontends
    if wanted is not None:
        major = wanted.removeprefix("clang-")
        if major not in frontends:
            raise UsageError(f"--frontend {wanted}: not a front end of {series.path.name} "
                             f"(clang {', '.join(sorted(frontends, key=int))})")
        if oldest is not None and int(major) > oldest:
            first = next(r for r in usable if int(r.llvm) == oldest)
            raise UsageError(f"front end clang {frontends[major].version} is newer than ROCm {first.rocm}'s AMD "
                             f"LLVM {first.llvm_version}: bitcode is read forward only (choose --frontend "
                             f"{oldest} or older, or a range from a later release)")
        chosen = major
        why = "asked for with --frontend"
    else:
        fits = [m for m in frontends if oldest is None or int(m) <= oldest]
        fits = [m for m in fits if available(frontends[m].cxx)]
        if not fits:
            raise UsageError(f"no front end here is as old as AMD LLVM {oldest} (bitcode is read forward only; "
                             f"{series.path.name} lists clang {', '.join(sorted(frontends, key=int))})")
        chosen = max(fits, key=int)
        why = (f"the newest clang here not newer than the range's oldest back end (AMD LLVM {oldest}): "
               f"bitcode is read forward only")
    frontend = frontends[chosen]
    if not available(frontend.cxx):
        raise UsageError(f"front end {frontend.cxx} is not installed (scripts/install-test-deps.sh)")
    return chosen, FrontendInfo(cxx=frontend.cxx, version=frontend.version, targets=frontend.targets, why=why)


def choose_targets(series: Series, frontend: FrontendInfo, wanted: list[str]) -> tuple[list[str], dict[str, str]]:
    """The targets to build and those dropped with the reason; a target asked
    for by name that the front end does not know is an error."""
    known = set(frontend.targets)
    for target in wanted:
        if target.split(":")[0] not in known:
            raise UsageError(f"--target {target}: front end {frontend.cxx} ({frontend.version}) does not know it "
                             f"(it knows {', '.join(frontend.targets)})")
    if wanted:
        return wanted, {}
    kept = [t for t in series.file.targets if t.split(":")[0] in known]
    dropped = {t: f"{frontend.cxx} ({frontend.version}) does not know it" for t in series.file.targets
               if t.split(":")[0] not in known}
    if not kept:
        raise UsageError(f"front end {frontend.cxx} knows none of the series' targets "
                         f"({', '.join(series.file.targets)}); name one with --target")
    return kept, dropped


# -- building --------------------------------------------------------------------------------

@dataclass
class BuildStep:
    """One back-end build a run made (a code object of one unit, target and release)."""
    release: str
    unit: str
    target: str
    seconds: float
    error: str = ""


@dataclass
class UnitBuild:
    code_object: Optional[Path]
    built: bool
    error: str = ""


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def _reused(stamp: Path, output: Path, key: str) -> bool:
    return output.is_file() and stamp.is_file() and stamp.read_text().strip() == key


def _error_line(text: str, fallback: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or [fallback])[-1]


def kernel_identifier(name: str) -> str:
    """The identifier of a kernel's name as written by a user: ``ns::k<int>(float*)`` -> ``k``."""
    return name.split("(", 1)[0].split("<", 1)[0].split("::")[-1].strip()


@dataclass
class HistoryBuilder:
    matrix: Matrix
    series: Series
    build_dir: Path
    frontend: FrontendInfo
    jobs: int = 2
    log: Callable[[str], None] = lambda line: None
    steps: list[BuildStep] = field(default_factory=list)
    _libraries: dict[str, Path] = field(default_factory=dict)
    _unusable: dict[str, str] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.build_dir / HISTORY_DIR

    def _headers(self) -> list[Path]:
        return [self.matrix.resolve(h) for h in self.matrix.engine.headers]

    def _header_bytes(self) -> bytes:
        parts = []
        for folder in self._headers():
            if folder.is_dir():
                for path in sorted(folder.rglob("*")):
                    if path.is_file():
                        parts.append(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
        return b"".join(parts)

    def units(self) -> list[str]:
        return [s for s in self.matrix.engine.sources if s.endswith(".hip")]

    def frontend_output(self, unit: str, target: str, text: bool = False, lines: bool = False) -> Path:
        stem = Path(unit).stem + ("-lines" if lines else "")
        suffix = ".ll" if text else ".bc"
        folder = self.root / FRONTEND_DIR / f"clang-{self.frontend.version}"
        return folder / f"{stem}-{target.replace(':', '_')}{suffix}"

    def text_ir_for(self, release: Release) -> bool:
        """Text IR, with the release's unknown attributes dropped, when the front end is a
        newer minor of the back end's major (clang 22.1 before AMD LLVM 22.0.0git: its
        bitcode carries attribute kinds the older reader refuses, cells.toml's
        drop_attributes).  Otherwise bitcode, which every later LLVM reads."""
        return bool(release.drop_attributes) and self.frontend.version.split(".")[0] == release.llvm

    def front_end(self, unit: str, target: str, text: bool = False, lines: bool = False) -> Path:
        """The unit's unoptimized device bitcode (or text IR) for ``target``, shared by every
        release; ``lines``: with line tables (a debug twin, for source lines)."""
        source = self.matrix.resolve(unit)
        stem = source.stem
        output = self.frontend_output(unit, target, text, lines)
        command = [self.frontend.cxx, "-x", "hip", "-std=c++17", "-nogpuinc", "-nogpulib",
                   f"-cuid=spw_{''.join(c if c.isalnum() or c == '_' else '_' for c in stem)}",
                   *[f"-I{h}" for h in self._headers()], "--cuda-device-only", f"--offload-arch={target}",
                   "-O3", *(["-gline-tables-only"] if lines else []), "-Xclang", "-disable-llvm-passes",
                   "-emit-llvm", "-S" if text else "-c", str(source), "-o", str(output)]
        try:
            key = _digest(source.read_bytes(), self._header_bytes(), "\0".join(command).encode())
        except OSError as exc:
            raise UsageError(f"cannot read {unit}: {exc.strerror}") from None
        stamp = output.with_suffix(".stamp")
        if _reused(stamp, output, key):
            return output
        output.parent.mkdir(parents=True, exist_ok=True)
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            raise UsageError(f"front end {self.frontend.cxx}: {unit} ({target}): "
                             f"{_error_line(run.stderr, 'failed')}")
        stamp.write_text(key + "\n")
        return output

    def library(self, release: Release) -> Path:
        """The release's library, loaded once to prove it loads (the reason when it does not)."""
        if release.rocm in self._unusable:
            raise ReleaseUnavailable(self._unusable[release.rocm])
        if release.rocm not in self._libraries:
            try:
                library = ensure_library(release)
                probe = [sys.executable, str(self.series.helper), "probe", "--library", str(library)]
                forwarders = release.forwarder_folder()
                if forwarders is not None:
                    probe += ["--preload", str(forwarders)]
                run = subprocess.run(probe, capture_output=True, text=True)
                if run.returncode != 0:
                    raise ReleaseUnavailable(_error_line(run.stderr, "does not load").removeprefix("amd_llvm: error: "))
            except ReleaseUnavailable as exc:
                self._unusable[release.rocm] = str(exc)
                raise
            self._libraries[release.rocm] = library
        return self._libraries[release.rocm]

    def back_end(self, release: Release, unit: str, target: str, lines: bool = False) -> UnitBuild:
        """The unit's code object for ``target`` built by ``release``'s AMD LLVM (``lines``:
        its debug twin, from the front end's output with line tables)."""
        try:
            library = self.library(release)
        except ReleaseUnavailable as exc:
            return UnitBuild(None, False, str(exc))
        text = self.text_ir_for(release)
        bitcode = self.front_end(unit, target, text, lines) if text or lines else self.frontend_output(unit, target)
        folder = self.root / release.rocm
        name = f"{Path(unit).stem}-{target.replace(':', '_')}{'-lines' if lines else ''}"
        output, obj, stamp = folder / f"{name}.co", folder / f"{name}.o", folder / f"{name}.stamp"
        key = _digest(bitcode.read_bytes(), release.sha256.encode(), self.series.helper.read_bytes(),
                      target.encode(), LINKER.encode(), " ".join(release.drop_attributes if text else []).encode())
        if _reused(stamp, output, key):
            return UnitBuild(output, False)
        folder.mkdir(parents=True, exist_ok=True)
        stamp.unlink(missing_ok=True)
        start = time.monotonic()
        codegen = [sys.executable, str(self.series.helper), "codegen", "--library", str(library),
                   "--target", target, "--unit", unit]
        forwarders = release.forwarder_folder()
        if forwarders is not None:
            codegen += ["--preload", str(forwarders)]
        if text:
            codegen += [f"--drop-attribute={name}" for name in release.drop_attributes]
        codegen += [str(bitcode), str(obj)]
        run = subprocess.run(codegen, capture_output=True, text=True)
        error = ""
        if run.returncode != 0:
            error = _error_line(run.stderr, "AMD LLVM failed").removeprefix("amd_llvm: error: ")
        else:
            link = subprocess.run([LINKER, "-m", "elf64_amdgpu", "--no-undefined", "-shared", str(obj), "-o",
                                   str(output)], capture_output=True, text=True)
            if link.returncode != 0:
                error = f"{LINKER}: {unit} ({target}): {_error_line(link.stderr, 'failed')}"
        seconds = time.monotonic() - start
        (folder / f"{name}.log").write_text(run.stderr)
        self.steps.append(BuildStep(release.rocm, unit, target, seconds, error))
        self.log(f"built ROCm {release.rocm} (AMD LLVM {release.llvm_version}): {unit} ({target})"
                 f"{' with line tables' if lines else ''} "
                 f"{'failed: ' + error if error else f'{seconds:.1f} s'}")
        if error:
            return UnitBuild(None, True, error)
        stamp.write_text(key + "\n")
        return UnitBuild(output, True)

    def units_of(self, kernels: list[str], targets: list[str]) -> list[str]:
        """The translation units whose device bitcode names one of ``kernels``
        (all units when none is named); an unknown kernel is an error."""
        units = self.units()
        if not units:
            raise UsageError("the engine has no .hip translation unit")
        for unit in units:
            self.front_end(unit, targets[0])
        if not kernels:
            return units
        chosen = []
        for kernel in kernels:
            identifier = kernel_identifier(kernel)
            needles = [kernel.encode(), f"{len(identifier)}{identifier}".encode()]
            holding = [u for u in units
                       if any(n in self.frontend_output(u, targets[0]).read_bytes() for n in needles if n)]
            if not holding:
                raise UsageError(f"kernel {kernel!r} is in no translation unit of the engine "
                                 f"({', '.join(units)})")
            chosen += [u for u in holding if u not in chosen]
        return [u for u in units if u in chosen]

    def build(self, releases: list[Release], units: list[str], targets: list[str]
              ) -> dict[tuple[str, str, str], UnitBuild]:
        """Every (release, unit, target) code object, the back ends in parallel."""
        for unit in units:
            for target in targets:
                self.front_end(unit, target)
        work = [(r, u, t) for r in releases if not r.unusable for u in units for t in targets]
        for release in {r.rocm: r for r, _, _ in work}.values():
            try:
                self.library(release)
            except ReleaseUnavailable:
                pass
        with ThreadPoolExecutor(max_workers=max(1, self.jobs)) as pool:
            done = list(pool.map(lambda job: self.back_end(*job), work))
        return {(r.rocm, u, t): result for (r, u, t), result in zip(work, done)}


# -- reading ---------------------------------------------------------------------------------

def read_figures(code_object: Path, occupancy_model: str) -> list[tuple[dict, Figures]]:
    """Each kernel's record and figures in a code object."""
    from spillway.report.reader import ReadOptions, read_path
    _, records = read_path(str(code_object), ReadOptions(isa=True, occupancy_model=occupancy_model))
    found = []
    for record in records:
        assert isinstance(record, dict)
        isa = record.get("isa") or {}
        found.append((record, Figures(
            vgpr=record["vgpr_count"], agpr=record.get("agpr_count") or 0, sgpr=record["sgpr_count"],
            spills=(record.get("vgpr_spill_count") or 0) + (record.get("sgpr_spill_count") or 0),
            scratch=record["private_segment_fixed_size"], waves=record.get("occupancy") or 0,
            code_sha256=isa.get("code_sha256"))))
    return found


def matches(record: dict, kernel: str) -> bool:
    from spillway.report.labels import plain_name
    name = record.get("name") or ""
    return kernel in (record.get("symbol"), name, plain_name(name), kernel_identifier(name)) \
        if kernel else True


def history(builder: HistoryBuilder, releases: list[Release], kernels: list[str], targets: list[str],
            dropped: dict[str, str], occupancy_model: str) -> HistoryDocument:
    units = builder.units_of(kernels, targets)
    results = builder.build(releases, units, targets)
    columns = []
    rows: dict[tuple[str, str], KernelHistory] = {}
    seen: set[str] = set()
    for release in releases:
        status, reason = ("unusable", release.unusable) if release.unusable else ("built", "")
        built = 0
        for unit in units:
            for target in targets:
                result = results.get((release.rocm, unit, target))
                if result is None:
                    continue
                built += result.built
                if result.error:
                    status, reason = "failed", result.error
                    continue
                assert result.code_object is not None
                for record, figures in read_figures(result.code_object, occupancy_model):
                    wanted = [k for k in kernels if matches(record, k)] if kernels else [""]
                    if not wanted:
                        continue
                    seen.update(wanted)
                    row = rows.setdefault((record["symbol"], target), KernelHistory(
                        kernel=record.get("name") or record["symbol"], symbol=record["symbol"], target=target,
                        unit=unit, figures={r.rocm: None for r in releases}))
                    row.figures[release.rocm] = figures
        columns.append(ReleaseColumn(release=release.rocm, package=release.package, version=release.version,
                                     sha256=release.sha256, llvm_version=release.llvm_version,
                                     commit=release.commit, status=status, reason=reason, builds=built))
    missing = [k for k in kernels if k not in seen]
    if missing and any(c.status == "built" for c in columns):
        raise UsageError(f"kernel {missing[0]!r} is in no code object built from "
                         f"{', '.join(units)} (no kernel of that name)")
    return HistoryDocument(frontend=builder.frontend, occupancy_model=occupancy_model, targets=targets,
                           dropped_targets=dropped, releases=columns,
                           kernels=sorted(rows.values(), key=lambda k: (k.unit, k.kernel, k.target)))


def figure(figures: Figures, metric: str) -> int:
    return int(getattr(figures, metric))


def worse(value: int, than: int, metric: str) -> bool:
    return value < than if metric in HIGHER_IS_BETTER else value > than
