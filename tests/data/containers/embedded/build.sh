#!/bin/sh
# Rebuild host.so, the embedded-code-object fixture, with Debian's clang 22
# (bookworm's clang-22 and lld-22).  Run from this folder; the outputs are
# committed so the tests need no compiler.
set -eu
INC=../../../../kernels/include
for arch in gfx1100 gfx90a; do
  clang++-22 -x hip --offload-arch=$arch -nogpuinc -nogpulib -I$INC -O3 --cuda-device-only \
    --no-gpu-bundle-output -c kernels.hip -o $arch.co
done
clang-22 -O2 -fPIC -shared -fuse-ld=lld -Wl,--build-id=none host.c -o host.so
