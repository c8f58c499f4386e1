#!/usr/bin/env bash
# Build the wave64 lane-mask fixtures from wave64.cpp: one code object per target and wave size in co/,
# with the flags of ../keeps/build.sh, and -mwavefrontsize64 for the wave64 ones:
#
#   clang++-22 -x hip --offload-arch=TARGET --cuda-device-only --no-gpu-bundle-output \
#     -nogpuinc -nogpulib -O2 -cuid=spillway-isa [-mwavefrontsize64] -c wave64.cpp \
#     -o co/TARGET.clang22.wave{64,32}.co
#
# clang 22 for gfx1030 (gfx10.3), gfx1100 (gfx11) and gfx1200 (gfx12).  Each kernel's metadata says
# its .wavefront_size (64 or 32), as does its descriptor's ENABLE_WAVEFRONT_SIZE32 bit.
#
#   tests/data/isa/wave64/build.sh           (seconds)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
flags=(-x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O2 -cuid=spillway-isa)
mkdir -p "$here/co"

for target in gfx1030 gfx1100 gfx1200; do
  for wave in 64 32; do
    extra=()
    if [ "$wave" = 64 ]; then extra=(-mwavefrontsize64); fi
    echo "build.sh: $target.clang22.wave$wave" >&2
    clang++-22 "${flags[@]}" "${extra[@]}" --offload-arch="$target" -c "$here/wave64.cpp" \
      -o "$here/co/$target.clang22.wave$wave.co"
  done
done
