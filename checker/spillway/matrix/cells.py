"""The cells file, ``matrix/cells.toml``: what every cell builds (``[engine]``),
the systems packages are installed into and cells build in (``[systems]``),
and the cells (``[cells]``), validated by pydantic models.  Errors are
one-line UsageErrors naming the file and the field."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from spillway.errors import UsageError
from spillway.gate.metrics import MetricName

if sys.version_info >= (3, 11):
    import tomllib
else:   # Python 3.10 (supported): the same parser as a package (a dependency there)
    import tomli as tomllib

CELLS_FILE = Path("matrix") / "cells.toml"
SCHEMA = "2"   # "2": back ends ([backend_store], [backends], a cell's `backend`)
READ_SCHEMAS = ("1", "2")   # a "1" file is a "2" file without back ends
# Offload targets as --offload-arch takes them: a processor and optional features.
_TARGET = re.compile(r"^gfx[0-9a-f]{2,5}(:[a-z0-9_-]+[+-])*$")
_CELL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_VERSION = re.compile(r"^[0-9]+(\.[0-9]+)*$")
# First LLVM major that knows a processor (for clear errors on old cells).
_KNOWN_FROM = {"gfx942": 17, "gfx1150": 17, "gfx1151": 17, "gfx1200": 18, "gfx1201": 18, "gfx950": 20}
# clang's options that set the debug information level: the last one given wins
# (-gdwarf-N sets the DWARF version and, as the last, full debug information).
_DEBUG_LEVEL = re.compile(r"^-g(|[0-3]|line-tables-only|line-directives-only|dwarf|dwarf-[2-5]|gdb[0-3]?|full)$")
# What a debug twin adds to the cell's flags: line tables only (docs/source-lines.md: the code
# stays byte-identical, full -g changes it).
TWIN_FLAGS = ("-gline-tables-only",)
# The system a cell without `system = ...` belongs to, and the one a cells file without
# [systems] has: this machine.
HOST_SYSTEM = "bookworm"
READY_MARK = ".spillway-ready"     # written by scripts/install-toolchains.sh into a finished root


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


class System(BaseModel):
    """Where packages are installed and cells build: this machine ("host"),
    or a Debian root made by scripts/install-toolchains.sh and entered with
    chroot ("root")."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""                       # the table key, filled in by the loader
    description: str = ""
    kind: Literal["host", "root"]
    packages: list[str] = []             # the system's own packages (besides its cells')
    path: Optional[str] = None           # root: its folder (absolute, outside the checkout)
    path_setting: Optional[str] = Field(None, pattern=r"^[A-Z_][A-Z0-9_]*$")   # root: variable that moves it
    suite: Optional[str] = None          # root: the Debian suite mmdebstrap makes it from
    overlay: Optional[str] = None        # root: a suite added on top (apt -t)

    @model_validator(mode="after")
    def _consistent(self) -> "System":
        if self.kind == "root":
            if not self.path or not self.suite:
                raise ValueError('kind "root" needs path = "/..." and suite = "..."')
            if not os.path.isabs(self.path):
                raise ValueError(f"path {self.path!r} must be absolute (a folder outside the checkout)")
        elif self.path or self.path_setting or self.suite or self.overlay:
            raise ValueError('path, path_setting, suite and overlay are for kind "root" only')
        return self

    @property
    def is_root(self) -> bool:
        return self.kind == "root"

    def location(self) -> Optional[Path]:
        """The root's folder here: the setting's value when set, else ``path``."""
        if not self.is_root:
            return None
        moved = os.environ.get(self.path_setting) if self.path_setting else None
        return Path(moved or self.path or "")

    def where_set(self) -> str:
        return f" ({self.path_setting} moves it)" if self.path_setting else ""


class BackendStore(BaseModel):
    """Where scripts/install-toolchains.sh keeps the back ends' wheels, their
    libraries and the sysdeps forwarder: outside the checkout."""

    model_config = ConfigDict(extra="forbid")

    path: str = "/var/tmp/spillway-amd-llvm"
    path_setting: Optional[str] = Field(None, pattern=r"^[A-Z_][A-Z0-9_]*$")
    forwarder_cc: str = "clang-22"

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not os.path.isabs(value):
            raise ValueError(f"path {value!r} must be absolute (a folder outside the checkout)")
        return value

    def location(self) -> Path:
        moved = os.environ.get(self.path_setting) if self.path_setting else None
        return Path(moved or self.path)

    def where_set(self) -> str:
        return f" ({self.path_setting} moves it)" if self.path_setting else ""


SYSDEPS_DIR = "sysdeps"        # the forwarder's folder in the back end store
SYSDEPS_FORWARDERS = ("librocm_sysdeps_z.so.1", "librocm_sysdeps_zstd.so.1")


class Backend(BaseModel):
    """AMD's LLVM from a Python wheel: the optimizer and code generator of a
    cell whose clang is only the front end."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""                       # the table key, filled in by the loader
    description: str = ""
    rocm: str
    llvm: str = Field(pattern=r"^[0-9]+$")
    package: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    version: str = Field(pattern=r"^[0-9][0-9A-Za-z.+-]*$")
    wheel: str = Field(pattern=r"^[A-Za-z0-9_.+-]+\.whl$")
    url: str = Field(pattern=r"^https://")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    library: str = Field(min_length=1)
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    sysdeps: bool = False
    drop_attributes: list[str] = []      # attributes its reader does not know, removed from the device IR

    @field_validator("drop_attributes")
    @classmethod
    def _attribute_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not re.match(r"^[a-z][a-z0-9_]*$", name):
                raise ValueError(f"not an LLVM enum attribute name: {name!r}")
        return names

    _store: Optional[BackendStore] = PrivateAttr(default=None)
    _helper: Optional[Path] = PrivateAttr(default=None)    # matrix/amd_llvm.py beside the recipe

    @field_validator("rocm")
    @classmethod
    def _rocm_version(cls, value: str) -> str:
        if not _VERSION.match(value):
            raise ValueError(f"not a version: {value!r} (write it as a string, e.g. \"10.0\")")
        return value

    @field_validator("library")
    @classmethod
    def _inside(cls, value: str) -> str:
        if value.startswith("/") or ".." in Path(value).parts:
            raise ValueError(f"library {value!r} must be a path inside the wheel")
        return value

    def folder(self, store: BackendStore) -> Path:
        """Where install-toolchains.sh extracts the wheel's library."""
        return store.location() / f"{self.package}-{self.version}"

    def library_file(self, store: BackendStore) -> Path:
        return self.folder(store) / self.library

    def label(self) -> str:
        return f"ROCm {self.rocm} (AMD LLVM {self.llvm})"

    @property
    def store(self) -> BackendStore:
        return self._store or BackendStore()

    @property
    def helper(self) -> Path:
        """The recipe's AMD LLVM step (matrix/amd_llvm.py, beside compile.sh)."""
        return self._helper or Path(CELLS_FILE.parent / "amd_llvm.py")

    def installed_library(self) -> Path:
        return self.library_file(self.store)

    def forwarder_folder(self) -> Optional[Path]:
        return self.store.location() / SYSDEPS_DIR if self.sysdeps else None


class Cell(BaseModel):
    """One toolchain of the matrix."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""                       # the table key, filled in by the loader
    description: str = ""
    source: Literal["nixpkgs", "tarball", "debian"]
    system: str = HOST_SYSTEM            # a [systems] table: where its packages go and it builds
    suite: Optional[str] = None          # root systems: the apt suite of its packages
    rocm: Optional[str] = None
    compiler: Literal["clang", "amdclang", "hipcc"]
    clang: str = Field(pattern=r"^[0-9]+$")
    cxx: str = Field(min_length=1)
    packages: list[str] = []
    requires: list[str] = []
    hip: Literal["mini", "rocm"] = "mini"
    targets: list[str] = Field(min_length=1)
    code_object_version: Literal["", "4", "5", "6"] = ""
    compress: bool = False
    flags: list[str] = []
    baseline: str = Field(min_length=1)
    gate: list[MetricName] = ["scratch"]
    lines: Literal["", "twin"] = ""      # "twin": every build also builds a debug twin (build/<cell>/lines/)
    backend: Optional[str] = None        # a [backends] table: AMD's LLVM compiles, clang is the front end

    _system: Optional[System] = PrivateAttr(default=None)
    _backend: Optional[Backend] = PrivateAttr(default=None)

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
        if self.hip == "rocm" and not self.rocm:
            raise ValueError('hip = "rocm" needs rocm = "<version>" (the ROCm whose HIP headers it uses)')
        # Only what is known for certain: LLVM 15 and 16 (toolchains-debian.md 1.1).
        if self.compress and major < 17:
            raise ValueError(f"compress = true needs clang >= 19 (clang {major} rejects --offload-compress)")
        if self.code_object_version == "6" and major < 17:
            raise ValueError(f"code_object_version \"6\" needs clang >= 19 (clang {major} accepts 4 and 5)")
        levels = [flag for flag in self.flags if _DEBUG_LEVEL.match(flag)]
        if "-gline-tables-only" in levels and levels[-1].startswith("-gdwarf"):
            raise ValueError(f"flags: {' '.join(levels)} is full debug information (clang's last -g option sets "
                             f"the level, and full -g changes the code): write {levels[-1]} -gline-tables-only "
                             f"for line tables only")
        if self.lines == "twin" and self.line_tables:
            raise ValueError(f"lines = \"twin\": the cell's own flags ({' '.join(levels)}) already give its "
                             f"code line tables")
        late = [t for t in self.targets if major < _KNOWN_FROM.get(t.split(":")[0], 0)]
        if late:
            raise ValueError(f"clang {major} does not know {', '.join(late)} (use gfx1100 / gfx90a)")
        return self

    @property
    def local(self) -> bool:
        """Built on developer machines from Debian packages (on the host, or in
        a root), installed by scripts/install-toolchains.sh; not through Nix."""
        return self.source == "debian"

    @property
    def line_tables(self) -> bool:
        """Its own build has line tables: a debug-level flag, the last of
        them not -g0."""
        levels = [flag for flag in self.flags if _DEBUG_LEVEL.match(flag)]
        return bool(levels) and levels[-1] != "-g0"

    def twin_flags(self) -> list[str]:
        """The flags of its debug twin: its own, then line tables only (last, so
        a -gdwarf-N of its own sets the version only)."""
        return [*self.flags, *TWIN_FLAGS]

    @property
    def system_info(self) -> System:
        return self._system or System(name=HOST_SYSTEM, kind="host")

    @property
    def backend_info(self) -> Optional[Backend]:
        """The cell's back end (AMD's LLVM), or None: its clang compiles everything."""
        return self._backend

    @property
    def in_root(self) -> bool:
        """Builds inside a system root (through chroot)."""
        return self.system_info.is_root

    def toolchain(self) -> str:
        what = {"clang": "clang", "amdclang": "AMD clang", "hipcc": "hipcc"}[self.compiler]
        text = f"{what} {self.clang}"
        if self._backend:     # labelled by its ROCm release: the back end is what differs
            return f"{self._backend.label()}, {text} front end"
        if self.rocm:
            text = f"ROCm {self.rocm}, {text}"
        return text


class CellsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(alias="schema")
    engine: Engine
    systems: dict[str, System] = Field(default_factory=lambda: {HOST_SYSTEM: System(kind="host")})
    backend_store: BackendStore = Field(default_factory=BackendStore)
    backends: dict[str, Backend] = {}
    cells: dict[str, Cell] = Field(min_length=1)

    @field_validator("schema_")
    @classmethod
    def _schema(cls, value: str) -> str:
        if value not in READ_SCHEMAS:
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

    @model_validator(mode="after")
    def _systems(self) -> "CellsFile":
        for name, system in self.systems.items():
            system.name = name
        for cell in self.cells.values():
            found = self.systems.get(cell.system)
            if found is None:
                raise ValueError(f"cell {cell.name}: system {cell.system!r} is not a [systems] table "
                                 f"({', '.join(self.systems)})")
            if found.is_root and cell.source != "debian":
                raise ValueError(f"cell {cell.name}: only source \"debian\" cells build in a root system")
            if cell.suite and not found.is_root:
                raise ValueError(f"cell {cell.name}: suite is for cells of a root system")
            cell._system = found
        if self.schema_ == "1" and self.backends:
            raise ValueError('[backends] needs schema = "2"')
        for name, table in self.backends.items():
            table.name = name
            table._store = self.backend_store
        for cell in self.cells.values():
            if cell.backend is None:
                continue
            backend = self.backends.get(cell.backend)
            if backend is None:
                raise ValueError(f"cell {cell.name}: backend {cell.backend!r} is not a [backends] table "
                                 f"({', '.join(self.backends) or 'none'})")
            if cell.rocm != backend.rocm:
                raise ValueError(f"cell {cell.name}: rocm = {cell.rocm!r}, its back end {backend.name} is ROCm "
                                 f"{backend.rocm}")
            if cell.compiler != "clang" or cell.hip != "mini":
                raise ValueError(f"cell {cell.name}: a back end takes an upstream clang front end "
                                 f"(compiler = \"clang\", hip = \"mini\")")
            # Bitcode is read forward only: an older LLVM cannot read a newer one's.
            if int(cell.clang) > int(backend.llvm):
                raise ValueError(f"cell {cell.name}: the front end clang {cell.clang} is newer than the back end "
                                 f"{backend.name}'s AMD LLVM {backend.llvm} (bitcode is read forward only: use "
                                 f"clang <= {backend.llvm})")
            cell._backend = backend
        return self


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
    def systems(self) -> dict[str, System]:
        return self.file.systems

    @property
    def engine(self) -> Engine:
        return self.file.engine

    @property
    def backend_store(self) -> BackendStore:
        return self.file.backend_store

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
    """Read and validate a cells file."""
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
    matrix = Matrix(path, Path(root).resolve() if root else default_root(path), parsed)
    helper = matrix.resolve(parsed.engine.recipe).parent / "amd_llvm.py"
    for backend in parsed.backends.values():
        backend._helper = helper
    return matrix
