#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine: install the local toolchains if
# missing, build the repository's kernels and engine with every toolchain cell
# available here, gate each cell against its baseline (checks/baselines/), and
# print the cross-cell comparison.  Arguments go to `spillway matrix run`
# (e.g. cell names, --differing, -j N).
#
# Writes build/<cell>/ and build/matrix-summary.md (the comparison as Markdown,
# for a pull request).  Exit status as `spillway matrix run`: 0 every cell
# passed, 1 a cell failed or is over its baseline, 3 a local toolchain is missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

scripts/install-toolchains.sh

# spillway itself: this checkout if Python already imports it from here (not
# some other installed copy), else a virtual environment under build/
# (Debian's own Python refuses system-wide pip).
if python3 -c 'import os, sys, spillway; sys.exit(not spillway.__file__.startswith(os.getcwd() + "/checker/"))' 2>/dev/null; then
  spillway=(python3 -m spillway)
else
  if [ ! -x build/venv/bin/spillway ]; then
    echo "main-job: installing spillway into build/venv"
    python3 -m venv build/venv
    build/venv/bin/pip install --quiet --editable .
  fi
  spillway=(build/venv/bin/spillway)
fi

exec "${spillway[@]}" matrix run --markdown build/matrix-summary.md "$@"
