#!/usr/bin/env bash
# Build the Tensile-like multi-note fixtures from kernels.hip with Debian
# bookworm's clang-22 and ld.lld-22, the way Tensile builds its libraries:
# one object per kernel, linked into one code object with `ld.lld -shared`
# (one NT_AMDGPU_METADATA note per kernel), then bundled and compressed
# into a `.co` file like rocBLAS's TensileLibrary_*.co.
#
#   tests/data/tensile/build.sh        # writes the files listed in README.md
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
INCLUDE=../../../kernels/include
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for target in gfx90a gfx1100; do
  objects=()
  for kernel in 0 1 2 3 4; do
    # device only, to assembly (what Tensile starts from), then assembled
    clang++-22 -x hip --cuda-device-only --offload-arch=$target -nogpuinc -nogpulib -I"$INCLUDE" \
      -O3 -DKERNEL=$kernel -S kernels.hip -o "$work/k$kernel-$target.s"
    clang-22 -target amdgcn-amd-amdhsa -mcpu=$target -c "$work/k$kernel-$target.s" \
      -o "$work/k$kernel-$target.o"
    objects+=("$work/k$kernel-$target.o")
  done
  ld.lld-22 -shared "${objects[@]}" -o "tensile_$target.hsaco"
done
# A compressed bundle of both, as Tensile's .co files are (CCOB v3, zstd).
: > "$work/host.empty"
clang-offload-bundler-22 -type=o -compress \
  -targets=host-x86_64-unknown-linux-gnu-,hipv4-amdgcn-amd-amdhsa--gfx90a,hipv4-amdgcn-amd-amdhsa--gfx1100 \
  -input="$work/host.empty" -input=tensile_gfx90a.hsaco -input=tensile_gfx1100.hsaco -output=tensile_bundle.co
ls -l tensile_*.hsaco tensile_bundle.co
