"""Is a cell's toolchain here?  On this machine: its compiler and tools on
PATH at the clang version the cell names.  In a system root (cells.toml
``system`` of kind "root", made by scripts/install-toolchains.sh): the root
is finished (its ready mark), we may enter it (root, chroot, unshare), and
the compiler and tools are inside it; the compiler is asked its version
through chroot."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Optional

from spillway import json_codec
from spillway.matrix.cells import READY_MARK, Cell, System

_probe_lock = threading.Lock()
_probe_cache: dict[tuple, "Availability"] = {}

_CLANG_VERSION = re.compile(r"clang version ([0-9]+)\.([0-9A-Za-z.+~-]*)")
_HIP_VERSION = re.compile(r"HIP version: ([0-9]+)\.([0-9]+)")
INSTALL = "scripts/install-toolchains.sh"


@dataclass
class Availability:
    available: bool
    reason: str = ""                     # why not, for humans
    compiler: Optional[str] = None       # the compiler as the recipe runs it (inside the root for root cells)
    version: str = ""                    # first line of `cxx --version`
    root: Optional[Path] = None          # the system root the cell builds in, if any
    compiler_file: Optional[Path] = None  # the compiler's file as seen from here (for build stamps)
    backend: Optional["BackendIdentity"] = None   # the cell's AMD LLVM, as its library names itself


@dataclass(frozen=True)
class BackendIdentity:
    """What a back end's library says it is (its own strings), and its bytes' hash."""

    name: str                 # the [backends] table
    rocm: str
    version: str              # "23.0.0git"
    commit: str               # the llvm-project commit, 40 hex digits
    library: Path
    sha256: str               # of the library file (build stamps)
    package: str
    package_version: str
    wheel: str
    wheel_sha256: str
    dropped_attributes: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"AMD LLVM {self.version} ({self.commit[:12]}), ROCm {self.rocm}"


# -- system roots ------------------------------------------------------------------------

def root_search_path(cell: Cell) -> list[str]:
    """PATH inside a root, as matrix/compile.sh sets it there."""
    return [f"/usr/lib/llvm-{cell.clang}/bin", "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]


def inside(root: Path, path: str) -> Path:
    """A path of the root's file system, seen from here: symbolic links are
    followed inside the root (an absolute link points into the root, not
    into this machine), one component at a time."""
    pending = list(PurePosixPath(path).parts[1:] if path.startswith("/") else PurePosixPath(path).parts)
    resolved = PurePosixPath("/")
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            resolved = resolved.parent
            continue
        candidate = resolved / part
        here = root / str(candidate).lstrip("/")
        if here.is_symlink() and hops < 40:
            hops += 1
            target = PurePosixPath(os.readlink(here))
            if target.is_absolute():
                resolved = PurePosixPath("/")
                pending = list(target.parts[1:]) + pending
            else:
                pending = list(target.parts) + pending
            continue
        resolved = candidate
    return root / str(resolved).lstrip("/")


def which_in_root(root: Path, command: str, cell: Cell) -> Optional[str]:
    """The path (inside the root) of ``command``, searched as compile.sh's PATH."""
    if "/" in command:
        found = inside(root, command)
        return command if found.is_file() and os.access(found, os.X_OK) else None
    for folder in root_search_path(cell):
        candidate = inside(root, f"{folder}/{command}")
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return f"{folder}/{command}"
    return None


def root_unavailable(system: System) -> str:
    """Why cells of this root system cannot build here ("" when they can)."""
    location = system.location()
    if location is None:
        return ""
    if not (location / READY_MARK).is_file():
        if location.is_dir():
            state = f"{location} is not finished (no {READY_MARK})"
        else:
            state = f"{location} does not exist"
        how = f"{INSTALL} makes it: as root, with mmdebstrap" + system.where_set()
        return f"the {system.name} root is not made: {state}; {how}"
    if os.geteuid() != 0:
        return f"the {system.name} root {location} is entered with chroot, which needs root"
    for tool in ("chroot", "unshare"):
        if not shutil.which(tool):
            return f"{tool} not found (util-linux / coreutils): needed to build in the {system.name} root"
    return ""


def run_in_root(root: Path, cell: Cell, argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    env = {"PATH": ":".join(root_search_path(cell)), "LC_ALL": "C.UTF-8", "HOME": "/root"}
    return subprocess.run(["chroot", str(root), "/usr/bin/env", *[f"{k}={v}" for k, v in env.items()], *argv],
                          capture_output=True, text=True, timeout=timeout, env=dict(os.environ, **env))


# -- probing ------------------------------------------------------------------------------

def where_from(cell: Cell) -> str:
    if cell.source == "debian" and cell.in_root:
        system = cell.system_info
        return f"{' '.join(cell.packages)} in the {system.name} root, made by {INSTALL}"
    if cell.source == "debian":
        return f"apt-get install {' '.join(cell.packages)}, or {INSTALL}"
    if cell.source == "nixpkgs":
        return f"ROCm {cell.rocm} comes from nixpkgs: the Nix flake builds this cell (or run inside its dev shell)"
    return f"ROCm {cell.rocm} comes from AMD's release tarball: the Nix flake builds this cell " \
           f"(or run inside its dev shell)"


def probe(cell: Cell) -> Availability:
    """Is the cell's compiler here, with the tools it needs, at the version the
    cell names?  Cached per compiler (and root)."""
    location = cell.system_info.location()
    key = (cell.cxx, tuple(cell.requires), cell.clang, cell.rocm, cell.compiler, str(location),
           os.environ.get("PATH", ""), os.geteuid())
    with _probe_lock:
        if key in _probe_cache:
            return _probe_cache[key]
    result = _probe_root(cell) if cell.in_root else _probe_host(cell)
    if result.available and cell.backend_info is not None:
        result = _probe_backend(cell, result)
    with _probe_lock:
        _probe_cache[key] = result
    return result


def _probe_host(cell: Cell) -> Availability:
    compiler = shutil.which(cell.cxx)
    if not compiler:
        return Availability(False, f"{cell.cxx} not found ({where_from(cell)})")
    for tool in cell.requires:
        if not shutil.which(tool):
            return Availability(False, f"{tool} not found ({where_from(cell)})", compiler)
    try:
        result = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(False, f"{cell.cxx} --version failed: {exc}", compiler)
    return _judge(cell, result, compiler, Path(compiler).resolve())


def _probe_root(cell: Cell) -> Availability:
    system = cell.system_info
    root = system.location()
    assert root is not None
    why = root_unavailable(system)
    if why:
        return Availability(False, why, root=root)
    compiler = which_in_root(root, cell.cxx, cell)
    if not compiler:
        return Availability(False, f"{cell.cxx} not found in {root} ({where_from(cell)})", root=root)
    for tool in cell.requires:
        if not which_in_root(root, tool, cell):
            return Availability(False, f"{tool} not found in {root} ({where_from(cell)})", compiler, root=root)
    try:
        result = run_in_root(root, cell, [compiler, "--version"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(False, f"{cell.cxx} --version in {root} failed: {exc}", compiler, root=root)
    availability = _judge(cell, result, compiler, inside(root, compiler))
    availability.root = root
    return availability


def _judge(cell: Cell, result: subprocess.CompletedProcess, compiler: str, compiler_file: Path) -> Availability:
    text = result.stdout.strip()
    lines = text.splitlines()
    first = lines[0] if lines else ""
    match = _CLANG_VERSION.search(text)
    if result.returncode != 0 or not match:
        detail = first or (result.stderr.strip().splitlines() or [""])[-1]
        return Availability(False, f"{cell.cxx} --version does not name a clang version ({detail!r})", compiler,
                            first)
    # hipcc prints the HIP version first; the clang line names the compiler under it.
    version = first
    if cell.compiler == "hipcc":
        clang_line = next((line for line in lines if _CLANG_VERSION.search(line)), "")
        version = f"{first}, {clang_line}" if clang_line and clang_line != first else first
    if match.group(1) != cell.clang:
        return Availability(False, f"{cell.cxx} is clang {match.group(1)}.{match.group(2)}, the cell wants "
                                   f"clang {cell.clang}", compiler, version)
    if cell.rocm and cell.compiler == "hipcc":
        hip = _HIP_VERSION.search(text)
        wanted = ".".join(cell.rocm.split(".")[:2])
        if not hip or f"{hip.group(1)}.{hip.group(2)}" != wanted:
            found = f"HIP {hip.group(1)}.{hip.group(2)}" if hip else "no HIP version"
            return Availability(False, f"{cell.cxx} reports {found}, the cell wants ROCm {cell.rocm}", compiler,
                                version)
    elif cell.rocm and cell.backend_info is None and not re.search(r"rocm|amd", text, re.IGNORECASE):
        # (a cell with a back end: its ROCm release is the back end's, checked by _probe_backend)
        return Availability(False, f"{cell.cxx} is not a ROCm/AMD clang ({first!r}), the cell wants "
                                   f"ROCm {cell.rocm}", compiler, version)
    return Availability(True, "", compiler, version, compiler_file=compiler_file)


# -- back ends: AMD's LLVM from a wheel ---------------------------------------------------

_library_hashes: dict[tuple, str] = {}


def _file_sha256(path: Path) -> str:
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _probe_lock:
        if key in _library_hashes:
            return _library_hashes[key]
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    with _probe_lock:
        _library_hashes[key] = digest.hexdigest()
    return digest.hexdigest()


def _probe_backend(cell: Cell, front: Availability) -> Availability:
    """The cell's back end: its library installed, loading (the sysdeps
    forwarder), naming the AMD LLVM major and commit cells.toml pins, and not
    older than the front end (bitcode is read forward only)."""
    backend = cell.backend_info
    assert backend is not None
    library = backend.installed_library()
    how = (f"{INSTALL} downloads {backend.package}=={backend.version} into {backend.store.location()}"
           f"{backend.store.where_set()}")
    if not library.is_file():
        return Availability(False, f"the {backend.label()} back end is not installed ({library} is missing; {how})",
                            front.compiler, front.version)
    argv = [sys.executable, str(backend.helper), "probe", "--library", str(library)]
    forwarders = backend.forwarder_folder()
    if forwarders is not None:
        argv += ["--preload", str(forwarders)]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(False, f"{backend.helper} probe failed: {exc}", front.compiler, front.version)
    if result.returncode != 0:
        message = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
        return Availability(False, message.removeprefix("amd_llvm: error: ") + f" ({how})", front.compiler,
                            front.version)
    try:
        found = json_codec.loads(result.stdout)
        version, commit = str(found["version"]), str(found["commit"])
    except (ValueError, KeyError, TypeError):
        return Availability(False, f"{backend.helper} probe printed no identity: {result.stdout[:200]!r}",
                            front.compiler, front.version)
    major = version.split(".")[0]
    if major != backend.llvm or commit != backend.commit:
        return Availability(False, f"{library} is AMD LLVM {version} ({commit[:12]}), cells.toml's {backend.name} "
                                   f"wants AMD LLVM {backend.llvm} ({backend.commit[:12]})",
                            front.compiler, front.version)
    front_version = _CLANG_VERSION.search(front.version)
    if front_version and int(front_version.group(1)) > int(major):
        return Availability(False, f"the front end {cell.cxx} (clang {front_version.group(1)}."
                                   f"{front_version.group(2)}) is newer than the back end's AMD LLVM {version}: "
                                   f"bitcode is read forward only", front.compiler, front.version)
    identity = BackendIdentity(backend.name, backend.rocm, version, commit, library, _file_sha256(library),
                               backend.package, backend.version, backend.wheel, backend.sha256,
                               tuple(backend.drop_attributes))
    return Availability(True, "", front.compiler, f"{front.version}; {identity.describe()}", front.root,
                        front.compiler_file, identity)
