#!/usr/bin/env bash
# Build the relocatable-object fixtures (issue 42) from rdc.cpp: device code of an -fgpu-rdc
# compile stopped before the link (ET_REL), its code in one .text (the templates' kernels in
# their own COMDAT sections all the same) and in one section per function:
#
#   clang++-22 -x hip --cuda-device-only -fgpu-rdc -nogpuinc -nogpulib -O2 -cuid=spillway-isa \
#     -fdebug-prefix-map=REPO=/spillway -gline-tables-only --offload-arch=TARGET -emit-llvm \
#     -c rdc/rdc.cpp -o TARGET.bc                              (run in tests/data/isa)
#   llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=TARGET -O2 -filetype=obj TARGET.bc \
#     -o co/TARGET.clang22.text.o
#   llc-22 ... -function-sections ... -o co/TARGET.clang22.sections.o
#
#   tests/data/isa/rdc/build.sh      (a few seconds)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
isa=$(cd "$here/.." && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$here/co"
cd "$isa"
for target in gfx1030 gfx1100; do
  echo "build.sh: $target" >&2
  clang++-22 -x hip --cuda-device-only -fgpu-rdc -nogpuinc -nogpulib -O2 -cuid=spillway-isa \
    "-fdebug-prefix-map=$repo=/spillway" -gline-tables-only --offload-arch="$target" -emit-llvm \
    -c rdc/rdc.cpp -o "$work/$target.bc"
  llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu="$target" -O2 -filetype=obj "$work/$target.bc" \
    -o "$here/co/$target.clang22.text.o"
  llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu="$target" -O2 -filetype=obj -function-sections "$work/$target.bc" \
    -o "$here/co/$target.clang22.sections.o"
done
