#!/usr/bin/env bash
# Install what the test suite uses on a Debian 12 machine: the four Debian
# clangs with their LLVM tools (the oracles), ROCm libraries built by others
# (fixtures, never committed), CMake and Nix, and the Python package with its
# test extras.  Idempotent: installs only what is missing.
set -euo pipefail

PACKAGES=(
  clang-15 clang-16 clang-19 clang-22
  lld-15 lld-16 lld-19 lld-22
  llvm-15 llvm-16 llvm-19 llvm-22
  clang-tools-16 clang-tools-19 clang-tools-22
  hipcc rocm-device-libs
  librocrand1 librocsparse0
  cmake binutils gcc nix-bin
)

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # clang-22 and its tools come from bookworm-security, in Debian's default sources.
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test]"
