#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine: install the local toolchains if
# missing (bookworm's on the host, and the Debian sid root with clang 23,
# clang 24 and ROCm 7.2.4, made once and reused), build the repository's
# kernels and engine with every toolchain cell available here, gate each cell
# against its baseline (checks/baselines/), and print each cell's verdict
# (one line each: pass/fail and why), then the figures in which the cells
# differ (one column per cell, a figure a line: fits 120 columns); then
# upstream LLVM's next compilers side by side: clang 22 -> 23 -> 24 (the
# kernels whose figures differ, and each step's comparison,
# also written to build/matrix-clang-22-23-24.md); and beside it the design
# card's ROCm 7.2 -> ROCm 10 on AMD's own LLVM (rocm-7.2.2-amd-llvm22 ->
# rocm-10.0-amd-llvm23: Debian clang 22 in front of both, so only the back end
# differs; also build/matrix-rocm-7.2.2-10.0.md), and Debian's LLVM 22 against
# AMD's LLVM 22 (clang-22 -> rocm-7.2.2-amd-llvm22).  Arguments go to
# `spillway matrix run` (e.g. cell names, --differing, -j N).
#
# Writes build/<cell>/, build/matrix-summary.md (the comparison as Markdown,
# for a pull request) and build/matrix.html (the same as a page: kernels x cells,
# each kernel's figures and occupancy curve).  Exit status as `spillway matrix run`: 0 every cell
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

status=0
# Under GitHub Actions: annotations and the job summary too (--format github
# writes the same Markdown to -o FILE).
format=markdown
if [ "${GITHUB_ACTIONS:-}" = true ]; then format=github; fi
"${spillway[@]}" matrix run --format "$format" -o build/matrix-summary.md "$@" || status=$?

# The same cells as one page to look at (kernels x cells, each kernel's occupancy
# curve): self-contained, for a browser or a CI artifact.
cells=()
# (matrix compare takes the cells, --local and where they are, not -j or run's other options)
pending=""
for arg in "$@"; do
  case "$pending" in keep) cells+=("$arg"); pending=""; continue ;; skip) pending=""; continue ;; esac
  case "$arg" in
    --local|--cells=*|--root=*|--build-dir=*|--occupancy-model=*) cells+=("$arg") ;;
    --cells|--root|--build-dir|--occupancy-model) cells+=("$arg"); pending=keep ;;
    -j|--jobs|--gate|--junit-dir|--names) pending=skip ;;
    -*) ;;
    *) cells+=("$arg") ;;
  esac
done
if "${spillway[@]}" matrix compare --summary --format html -o build/matrix.html ${cells[@]+"${cells[@]}"}; then
  echo "main-job: wrote build/matrix.html (the cells side by side, each kernel's detail; open it in a browser)"
fi

# clang 22 -> 23 -> 24, where all three are built (clang-23 and clang-24 build
# in the sid root).
next=(clang-22 clang-23 clang-24)
if [ -f build/clang-22/libengine.so ] && [ -f build/clang-23/libengine.so ] && [ -f build/clang-24/libengine.so ]; then
  echo
  echo "main-job: clang 22 -> 23 -> 24, the kernels whose figures differ:"
  "${spillway[@]}" matrix compare "${next[@]}" --differing
  "${spillway[@]}" matrix compare "${next[@]}" --differing --format markdown -o build/matrix-clang-22-23-24.md
  for pair in "clang-22 clang-23" "clang-23 clang-24"; do
    read -r old new <<< "$pair"
    echo
    "${spillway[@]}" matrix compare "$old" "$new"
  done
else
  echo "main-job: clang 22 -> 23 -> 24 not shown: ${next[*]} are not all built here (see above)"
fi

# ROCm 7.2.2 -> ROCm 10.0 on AMD's LLVM (the back ends from the package index).
rocm=(rocm-7.2.2-amd-llvm22 rocm-10.0-amd-llvm23)
if [ -f "build/${rocm[0]}/libengine.so" ] && [ -f "build/${rocm[1]}/libengine.so" ]; then
  echo
  echo "main-job: ROCm 7.2.2 -> ROCm 10.0 (AMD's LLVM 22 -> 23, Debian clang 22 in front of both), the kernels whose figures differ:"
  "${spillway[@]}" matrix compare "${rocm[@]}" --differing
  "${spillway[@]}" matrix compare "${rocm[@]}" --differing --format markdown -o build/matrix-rocm-7.2.2-10.0.md
  echo
  "${spillway[@]}" matrix compare "${rocm[@]}"
  if [ -f build/clang-22/libengine.so ]; then
    echo
    echo "main-job: Debian's LLVM 22 -> AMD's LLVM 22 (ROCm 7.2.2), the same front end:"
    "${spillway[@]}" matrix compare clang-22 "${rocm[0]}"
  fi
else
  echo "main-job: ROCm 7.2.2 -> ROCm 10.0 not shown: ${rocm[*]} are not both built here (see above)"
fi
exit "$status"
