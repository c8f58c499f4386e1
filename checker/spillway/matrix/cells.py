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
SCHEMA = "1"
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

    _system: Optional[System] = PrivateAttr(default=None)

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
    def in_root(self) -> bool:
        """Builds inside a system root (through chroot)."""
        return self.system_info.is_root

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
    systems: dict[str, System] = Field(default_factory=lambda: {HOST_SYSTEM: System(kind="host")})
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
    return Matrix(path, Path(root).resolve() if root else default_root(path), parsed)
