"""Debian's ROCm library packages that scripts/fetch-rocm-libraries.sh unpacks
(never committed) and the oracle expectations committed for them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from .oracle_expectations import expectation_path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("SPILLWAY_FIXTURES", "/var/cache/spillway-fixtures"))
EXPECTATIONS = REPO / "tests" / "data" / "oracle"

# name -> (suite, package, upstream version): what the set-up step fetches
# (scripts/fetch-rocm-libraries.sh DEFAULT_PACKAGES).
PACKAGES = {
    "librocsparse1-7.2.4": ("experimental", "librocsparse1", "7.2.4"),
    "librocblas5-7.2.4": ("experimental", "librocblas5", "7.2.4"),
    "librocsparse1-6.4.3": ("sid", "librocsparse1", "6.4.3"),
}


@dataclass(frozen=True)
class RocmPackage:
    name: str
    root: Path           # the unpacked package (dpkg -x)
    sha256: str          # of the .deb

    @property
    def expectation(self) -> Path:
        return expectation_path(EXPECTATIONS, self.root.name.split("_", 1)[0], self.sha256)

    def host_library(self) -> Path:
        """The package's one shared library with a .hip_fatbin."""
        found = sorted(p for p in (self.root / "usr/lib/x86_64-linux-gnu").glob("lib*.so*")
                       if p.is_file() and not p.is_symlink())
        assert len(found) == 1, f"{self.root}: expected one shared library, found {found}"
        return found[0]


def missing(message: str):
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def locate(name: str) -> RocmPackage:
    """The unpacked package; skips locally, fails under CI, when it is not
    there or its committed expectation is missing."""
    suite, package, version = PACKAGES[name]
    candidates = sorted(p for p in FIXTURES.glob(f"{package}_{version}*") if (p / ".sha256").is_file())
    if not candidates:
        missing(f"{package} {version} ({suite}) is not unpacked under {FIXTURES}: "
                "run scripts/fetch-rocm-libraries.sh")
    root = candidates[-1]
    found = RocmPackage(name, root, (root / ".sha256").read_text().strip())
    if not found.expectation.exists():
        missing(f"{found.expectation.relative_to(REPO)} missing for {root.name} (SHA-256 {found.sha256}): "
                f"run scripts/generate-oracle.py {root}")
    return found
