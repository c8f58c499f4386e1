"""Real compilers as test fixtures: find them, build HIP sources with them
into a per-session cache, and collect their kernel-resource remarks."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INCLUDE = REPO / "kernels" / "include"
CLANG_VERSIONS = (15, 16, 19, 22)

# What each Debian clang accepts (toolchains-debian.md 1.1).
KNOWN_TARGETS = {
    15: {"gfx90a", "gfx1030", "gfx1100"},
    16: {"gfx90a", "gfx1030", "gfx1100"},
    19: {"gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1151", "gfx1200", "gfx1201"},
    22: {"gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1151", "gfx1200", "gfx1201"},
}


def require(tool: str) -> str:
    """The tool's path; skip locally when absent, but fail under CI, which
    installs every tool the tests use (a skipped oracle would hide a defect)."""
    found = shutil.which(tool)
    if found:
        return found
    message = f"{tool} is not installed (scripts/install-toolchains.sh installs it)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def clang(version: int) -> str:
    return require(f"clang++-{version}")


class Builder:
    """Compile and link in a cache keyed by sources, command and compiler."""

    def __init__(self, root: Path):
        self.root = root

    def _key(self, *parts) -> str:
        digest = hashlib.sha256()
        for part in parts:
            digest.update(repr(part).encode())
            digest.update(b"\0")
        return digest.hexdigest()[:16]

    def run(self, command: list[str], outputs: list[str], inputs: list[Path], *, env: dict | None = None,
            cwd: Path | None = None) -> tuple[Path, str]:
        """Run a build command once per distinct input; returns (dir, stderr)."""
        texts = [p.read_bytes() if p.is_file() else str(p) for p in inputs]
        key = self._key(command, texts, sorted((env or {}).items()))
        work = self.root / key
        done = work / ".done"
        if done.exists():
            return work, (work / ".stderr").read_text()
        work.mkdir(parents=True, exist_ok=True)
        with open(work / ".lock", "w") as lock:         # pytest-xdist workers share the cache
            fcntl.flock(lock, fcntl.LOCK_EX)
            if done.exists():                           # another worker built it meanwhile
                return work, (work / ".stderr").read_text()
            return self._build(command, outputs, work, done, env, cwd)

    def _build(self, command: list[str], outputs: list[str], work: Path, done: Path, env: dict | None,
               cwd: Path | None) -> tuple[Path, str]:
        full_env = dict(os.environ, **(env or {}))
        result = subprocess.run(command, cwd=cwd or work, env=full_env, capture_output=True, text=True)
        if result.returncode != 0:
            raise AssertionError(f"build failed: {' '.join(command)}\n{result.stderr[-4000:]}")
        for output in outputs:
            assert (work / output).exists(), f"{command} did not write {output}"
        (work / ".stderr").write_text(result.stderr)
        done.write_text("ok")
        return work, result.stderr

    def hip(self, version: int, source: Path, targets: list[str], *extra: str, output: str = "k.o",
            env: dict | None = None, link_inputs: tuple = ()) -> Path:
        """Compile ``source`` to a host object (or whatever ``extra`` asks for)."""
        command = [clang(version), "-x", "hip", *[f"--offload-arch={t}" for t in targets],
                   "-nogpuinc", "-nogpulib", f"-I{INCLUDE}", "-O3", "-fPIC", "-c", str(source),
                   "-o", output, *extra]
        work, _ = self.run(command, [output], [source, INCLUDE / "mini_hip.h"], env=env)
        return work / output

    def remarks(self, version: int, source: Path, target: str, *extra: str) -> tuple[Path, str]:
        """Device-only compile to a raw code object, with resource remarks."""
        command = [clang(version), "-x", "hip", f"--offload-arch={target}", "-nogpuinc", "-nogpulib",
                   f"-I{INCLUDE}", "-O3", "--cuda-device-only", "--no-gpu-bundle-output", "-c",
                   str(source), "-o", "k.co", "-Rpass-analysis=kernel-resource-usage", *extra]
        work, stderr = self.run(command, ["k.co"], [source, INCLUDE / "mini_hip.h"])
        return work / "k.co", stderr

    def link(self, version: int, objects: list[Path], output: str, *extra: str) -> Path:
        command = [clang(version), "-fPIC", *extra, *map(str, objects), "-o", output]
        work, _ = self.run(command, [output], list(objects))
        return work / output


_REMARK = re.compile(r"remark:\s+(?:Function Name: (?P<fn>\S+)"
                     r"|(?P<key>[A-Za-z ]+?(?: \[[^\]]+\])?): (?P<value>\S+)) \[")


def parse_remarks(stderr: str) -> dict[str, dict[str, str]]:
    """Function name -> {remark key: value} from -Rpass-analysis output."""
    out: dict[str, dict[str, str]] = {}
    current = None
    for line in stderr.splitlines():
        match = _REMARK.search(line)
        if not match:
            continue
        if match.group("fn"):
            current = out.setdefault(match.group("fn"), {})
        elif current is not None:
            current[match.group("key").strip()] = match.group("value")
    return out


def cmake_project_compiler() -> str:
    """The newest Debian clang here that builds tests/data/cmake_project (every
    one of them does)."""
    for version in (22, 19, 16, 15):
        if shutil.which(f"clang++-{version}") and shutil.which(f"clang-offload-bundler-{version}"):
            return f"clang++-{version}"
    return require("clang++-19")
