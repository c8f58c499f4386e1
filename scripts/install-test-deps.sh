#!/usr/bin/env bash
# Install what the test suite uses on a Debian 12 machine: the matrix's
# toolchains (the four Debian clangs with their LLVM tools, which are also the
# oracles) through scripts/install-toolchains.sh, plus ROCm libraries built by
# others (fixtures, never committed), hipcc, Nix and the Python package with
# its test extras.  Idempotent: installs only what is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-toolchains.sh hipcc rocm-device-libs librocrand1 librocsparse0 gcc nix-bin

python3 -m pip install -q --disable-pip-version-check -e ".[test]"
