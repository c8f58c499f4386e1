#!/usr/bin/env bash
# Install what the local toolchain matrix needs on Debian 12 (bookworm), if
# anything is missing: every Debian cell's packages from matrix/cells.toml
# (clang, lld, llvm and clang-tools of versions 15, 16, 19 and 22), plus
# cmake, the host C++ runtime and Python's venv for spillway itself.
# clang-22/lld-22/llvm-22/clang-tools-22 come from bookworm-security, which
# is in Debian's default sources.
#
#   scripts/install-toolchains.sh [PACKAGE...]          install what is missing (as root, or
#                                                       through sudo), with any extra PACKAGEs
#   scripts/install-toolchains.sh --check [PACKAGE...]  only list what is missing; exit 1 if anything is
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
cells="$root/matrix/cells.toml"

# Packages of the Debian cells: the `packages = [...]` lines of cells.toml.
mapfile -t cell_packages < <(sed -n 's/^packages *= *\[\(.*\)\] *$/\1/p' "$cells" | tr -d '" ' | tr ',' '\n' | sed '/^$/d')
base_packages=(cmake make binutils libstdc++-12-dev python3 python3-venv python3-pip)
packages=("${base_packages[@]}" "${cell_packages[@]}" "$@")

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$package")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-toolchains: all ${#packages[@]} packages installed"
  exit 0
fi
echo "install-toolchains: missing: ${missing[*]}"
if [ "$check" = 1 ]; then
  exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "install-toolchains: run as root (or install sudo) to install them" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-toolchains: installed ${missing[*]}"
