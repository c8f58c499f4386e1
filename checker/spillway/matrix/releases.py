"""AMD's releases as a series (``matrix/releases.toml``, beside the cells file):
each ROCm release's AMD LLVM from the package index, pinned by version and
sha256, for ``spillway matrix history`` and ``bisect``.  A release is a back end
(the same record as a cell's ``[backends]`` table, the same store, the same
recipe step ``matrix/amd_llvm.py``) with the AMD LLVM version read once from
its library, and, when it cannot be used, the reason.

Also the store's contents (``spillway matrix cache``): wheels and unpacked
libraries outside the checkout, shared by clones.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from typing import Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from spillway.errors import UsageError
from spillway.matrix.cells import Backend, BackendStore, Matrix, format_validation_error, tomllib

SCHEMA = "1"
RELEASES_FILE = "releases.toml"
WHEELS_DIR = "wheels"
READY_MARK = ".spillway-ready"          # holds the wheel's sha256 once the library is unpacked


class OtherBuild(BaseModel):
    """A second wheel of the same ROCm release (6.3.0 and 6.3.1 come in two builds)."""

    model_config = ConfigDict(extra="forbid")

    version: str = Field(pattern=r"^[0-9][0-9A-Za-z.+-]*$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    why_not: str = Field(min_length=1)


class Frontend(BaseModel):
    """An upstream clang on this machine that writes the series' device bitcode."""

    model_config = ConfigDict(extra="forbid")

    cxx: str = Field(min_length=1)
    version: str = Field(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$")
    targets: list[str]


class Release(Backend):
    """One ROCm release's AMD LLVM (a back end with what was read from its library)."""

    llvm_version: str = Field(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+[A-Za-z0-9]*$")
    unusable: str = ""                   # why the release cannot be built (never silently dropped)
    other_builds: list[OtherBuild] = []

    def key(self) -> tuple[int, ...]:
        return tuple(int(part) for part in self.rocm.split("."))


class ReleasesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: str = Field(alias="schema")
    targets: list[str] = Field(min_length=1)     # the default targets of a history
    frontends: dict[str, Frontend]
    releases: dict[str, Release]

    @field_validator("schema_")
    @classmethod
    def _schema(cls, value: str) -> str:
        if value != SCHEMA:
            raise ValueError(f"schema {value!r} is not the one this spillway reads ({SCHEMA!r})")
        return value

    @model_validator(mode="after")
    def _names(self) -> "ReleasesFile":
        for name, release in self.releases.items():
            if name != release.rocm:
                raise ValueError(f"release {name!r} names ROCm {release.rocm}: the table key is the release")
            release.name = name
        for name in self.frontends:
            if not name.isdigit():
                raise ValueError(f"front end {name!r}: the key is clang's major version")
        return self


@dataclass
class Series:
    path: Path
    file: ReleasesFile
    store: BackendStore
    helper: Path                      # matrix/amd_llvm.py

    def ordered(self) -> list[Release]:
        return sorted(self.file.releases.values(), key=Release.key)

    def release(self, name: str) -> Release:
        found = self.file.releases.get(name)
        if found is None:
            raise UsageError(f"no release {name!r} in {self.path} (releases: "
                             f"{', '.join(r.rocm for r in self.ordered())})")
        return found

    def span(self, first: Optional[str], last: Optional[str]) -> list[Release]:
        """The releases from ``first`` to ``last``, both included, in order."""
        ordered = self.ordered()
        low = self.release(first).key() if first else ordered[0].key()
        high = self.release(last).key() if last else ordered[-1].key()
        if low > high:
            raise UsageError(f"--releases {first}..{last}: {first} comes after {last}")
        return [r for r in ordered if low <= r.key() <= high]

    def parse_range(self, text: Optional[str]) -> list[Release]:
        """``A..B``, ``A..``, ``..B`` or one release ``A``."""
        if not text:
            return self.ordered()
        if ".." not in text.replace("...", "\0"):
            return [self.release(text)]
        first, _, last = text.partition("..")
        return self.span(first or None, last or None)


def load(matrix: Matrix, path: Path | str | None = None) -> Series:
    path = Path(path) if path else matrix.path.parent / RELEASES_FILE
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    try:
        parsed = ReleasesFile.model_validate(document)
    except ValidationError as exc:
        raise UsageError(format_validation_error(str(path), exc)) from None
    helper = matrix.resolve(matrix.engine.recipe).parent / "amd_llvm.py"
    for release in parsed.releases.values():
        release._store = matrix.backend_store
        release._helper = helper
    return Series(path, parsed, matrix.backend_store, helper)


# -- the store: wheels checked by hash, libraries unpacked, never pip-installed ----------------

class ReleaseUnavailable(Exception):
    """A release that cannot be had or loaded here; the message is one line."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_library(release: Release, download: bool = True) -> Path:
    """The release's library, unpacked into the store from its wheel (downloaded
    with ``pip download`` when missing, checked against the pinned sha256)."""
    library = release.installed_library()
    mark = release.folder(release.store) / READY_MARK
    if library.is_file() and mark.is_file() and mark.read_text().strip() == release.sha256:
        return library
    wheels = release.store.location() / WHEELS_DIR
    wheel = wheels / release.wheel
    if not wheel.is_file():
        if not download:
            raise ReleaseUnavailable(f"{release.wheel} is not in {wheels}")
        wheels.mkdir(parents=True, exist_ok=True)
        pip = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                              "--python-version", "3.11", "--dest", str(wheels),
                              f"{release.package}=={release.version}"], capture_output=True, text=True)
        if pip.returncode != 0 or not wheel.is_file():
            last = [line for line in (pip.stderr + pip.stdout).splitlines() if line.strip()][-1:] or ["no wheel"]
            raise ReleaseUnavailable(f"pip download {release.package}=={release.version} "
                                     f"failed: {last[0].strip()}")
    found = _sha256(wheel)
    if found != release.sha256:
        wheel.replace(wheel.with_name(wheel.name + ".rejected"))
        raise ReleaseUnavailable(f"{release.wheel} has sha256 {found}, {RELEASES_FILE} "
                                 f"pins {release.sha256} (kept as {wheel.name}.rejected)")
    folder = release.folder(release.store)
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        with zipfile.ZipFile(wheel) as archive:
            archive.extract(release.library, partial)
    except (KeyError, zipfile.BadZipFile, OSError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise ReleaseUnavailable(f"cannot take {release.library} out of {release.wheel}: "
                                 f"{exc}") from None
    os.chmod(partial / release.library, 0o755)
    (partial / READY_MARK).write_text(release.sha256 + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return library


# -- cache listing and removal ----------------------------------------------------------------

@dataclass
class CacheEntry:
    kind: str            # "wheel", "library" or "forwarder"
    path: Path
    bytes: int
    release: str         # the ROCm release it belongs to, or "" (a back end of cells.toml, or unknown)


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


_UNPACKED = re.compile(r"^(?P<package>[A-Za-z0-9_.-]+?)-(?P<version>[0-9][0-9A-Za-z.+-]*)$")


def cache_entries(series: Series) -> list[CacheEntry]:
    root = series.store.location()
    by_version = {(r.package, r.version): r.rocm for r in series.file.releases.values()}
    by_wheel = {r.wheel: r.rocm for r in series.file.releases.values()}
    entries: list[CacheEntry] = []
    if not root.is_dir():
        return entries
    for path in sorted(root.iterdir()):
        if path.name == WHEELS_DIR and path.is_dir():
            for wheel in sorted(path.iterdir()):
                if wheel.is_file():
                    entries.append(CacheEntry("wheel", wheel, wheel.stat().st_size,
                                              by_wheel.get(wheel.name.removesuffix(".rejected"), "")))
        elif path.is_dir():
            match = _UNPACKED.match(path.name.removesuffix(".partial"))
            release = by_version.get((match["package"], match["version"]), "") if match else ""
            kind = "forwarder" if path.name == "sysdeps" else "library"
            entries.append(CacheEntry(kind, path, _size(path), release))
    return entries


def remove_cached(series: Series, releases: list[Release]) -> list[CacheEntry]:
    """Remove the named releases' wheels and libraries; returns what was removed."""
    names = {r.rocm for r in releases}
    removed = [e for e in cache_entries(series) if e.release in names]
    for entry in removed:
        if entry.path.is_dir():
            shutil.rmtree(entry.path)
        else:
            entry.path.unlink()
    return removed


class CacheEntryRecord(BaseModel):
    """One file or folder of the store: a release's wheel, its unpacked library, the forwarder."""

    kind: str
    path: str
    bytes: int
    release: str


class CacheDocument(BaseModel):
    """``matrix cache --json``: the store's location, what was done (holds, removed) and its entries."""

    store: str
    action: str
    entries: list[CacheEntryRecord]
