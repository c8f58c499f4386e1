#!/usr/bin/env bash
# Rebuild the committed fuzz seeds (a few KB each) from the test sources with
# Debian's clang-22.  Every other seed (bundles, CCOB, OffloadBinary, host ELF,
# ar, zip, kpack, JSON documents) is built from these by fuzz/targets.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$here/../.."
src="$repo/tests/data/second_tu.hip"
inc="$repo/kernels/include"
common=(-x hip -nogpuinc -nogpulib -I"$inc" -O3)
for target in gfx1100 gfx90a; do
  clang++-22 "${common[@]}" --offload-arch=$target --cuda-device-only --no-gpu-bundle-output -c "$src" \
      -o "$here/second-$target.co"
done
clang++-22 "${common[@]}" --offload-arch=gfx1100 -fPIC -c "$src" -o "$here/host.o"
clang++-22 "${common[@]}" --offload-arch=gfx1100 -fPIC --offload-new-driver -c "$src" -o "$here/newdriver.o"
ls -l "$here"
