#!/usr/bin/env bash
# Install what the test suite uses on a Debian 12 machine: the matrix's
# toolchains (the four Debian clangs with their LLVM tools, which are also the
# oracles, and the Debian sid root with clang 23, clang 24, ROCm 7.2.4 and
# Nix 2.34, made once by mmdebstrap and reused: about 5 minutes the first time)
# through scripts/install-toolchains.sh, plus ROCm libraries built by
# others (fixtures, never committed), hipcc, Nix, openssh-server, Chromium and the
# Python package with its test extras.  Idempotent: installs only what is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# openssh-server: /usr/sbin/sshd for tests/unit/matrix/test_flake.py's remote
# builder, which starts its own sshd on 127.0.0.1 with its own configuration
# and keys, and stops it.  The system's ssh service is not needed (in a
# container policy-rc.d keeps it from starting; on a systemd machine Debian's
# package starts it, as it always does).
#
# chromium, chromium-driver: Debian's browser and its WebDriver
# (/usr/bin/chromedriver), which Selenium drives headless for the HTML pages'
# tests (tests/unit/cli/test_html_pages.py); nothing downloads a browser.
scripts/install-toolchains.sh hipcc rocm-device-libs librocrand1 librocsparse0 gcc nix-bin openssh-server \
  chromium chromium-driver

# Today's ROCm libraries from Debian's experimental and sid suites, unpacked
# (not installed) under /var/cache/spillway-fixtures for tests/oracle/.
scripts/fetch-rocm-libraries.sh

# Wheels from PyPI read as real inputs (mojolearn-amd: code objects embedded as
# data), into $SPILLWAY_FIXTURES/pypi, SHA-256 pinned in scripts/pypi-fixtures.sha256.
scripts/fetch-pypi-fixtures.sh

python3 -m pip install -q --disable-pip-version-check -e ".[test]"

# Python 3.10, the oldest Python pyproject.toml declares, with spillway's dependencies (SHA-256
# pinned wheels) in a virtual environment, for tests/unit/test_oldest_python.py.
scripts/install-python310.sh

# The Jenkins xunit JUnit schema (junit-10.xsd) from pytest's sdist on PyPI,
# into tests/.cache/ for the JUnit validation tests.
scripts/fetch-junit-xsd.sh

# The SARIF 2.1.0 schema from @microsoft/jest-sarif on npm, into tests/.cache/
# for the SARIF validation tests.
scripts/fetch-sarif-schema.sh
