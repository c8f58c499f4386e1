#!/usr/bin/env bash
# Build the fixtures of the forms whose registers sit in extra dwords (issue 40 item 1) from
# forms.cpp: VOP3/VOP3P DPP (gfx1100, gfx1151, gfx1201), SDWA compares writing an SGPR (gfx906,
# gfx1030), MIMG NSA address lists (gfx1030, gfx1100, gfx1151), as inline assembly in small
# kernels, one code object per target in co/ (the same flags as ../build.sh):
#
#   clang++-22 -x hip --offload-arch=TARGET --cuda-device-only --no-gpu-bundle-output \
#     -nogpuinc -nogpulib -O2 -cuid=spillway-isa -c forms.cpp -o co/TARGET.clang22.forms.co
#
#   tests/data/isa/forms/build.sh           (a few seconds)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$here/co"
for target in gfx906 gfx1030 gfx1100 gfx1151 gfx1201; do
  clang++-22 -x hip --offload-arch="$target" --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O2 \
    -cuid=spillway-isa -c "$here/forms.cpp" -o "$here/co/$target.clang22.forms.co"
done
