#!/usr/bin/env bash
# Build the kept-destination operand fixtures (issue 40 item 1) from keeps.cpp: one code object per
# target in co/, with the flags of ../rare/build.sh:
#
#   clang++-N -x hip --offload-arch=TARGET --cuda-device-only --no-gpu-bundle-output \
#     -nogpuinc -nogpulib -O2 -cuid=spillway-isa -c keeps.cpp -o co/TARGET.clangN.keeps.co
#
# clang 22 for every operand-table family it knows (gfx8, the gfx9 families, gfx10.1, gfx10.3,
# gfx11, gfx11.5, gfx12, gfx1250), clang 19 for gfx940 (LLVM 22 no longer knows it).
#
#   tests/data/isa/keeps/build.sh           (under a minute)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
flags=(-x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O2 -cuid=spillway-isa)
mkdir -p "$here/co"

declare -A targets=(
  [22]="gfx803 gfx900 gfx906 gfx908 gfx90a gfx942 gfx950 gfx1013 gfx1030 gfx1100 gfx1151 gfx1201 gfx1250"
  [19]="gfx940"
)
for version in 22 19; do
  for target in ${targets[$version]}; do
    echo "build.sh: $target.clang$version" >&2
    clang++-"$version" "${flags[@]}" --offload-arch="$target" -c "$here/keeps.cpp" \
      -o "$here/co/$target.clang$version.keeps.co"
  done
done
