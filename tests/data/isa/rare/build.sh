#!/usr/bin/env bash
# Build the decoder's rare-instruction fixtures (issue 31) from rare.cpp: one
# code object per (target, compiler) in co/, as ../build.sh builds
# kernels.cpp's (the same flags):
#
#   clang++-N -x hip --offload-arch=TARGET --cuda-device-only --no-gpu-bundle-output \
#     -nogpuinc -nogpulib -O2 -cuid=spillway-isa -c rare.cpp -o co/TARGET.clangN.co
#
# clang 22 is bookworm's (scripts/install-toolchains.sh); clang 24 the Debian
# sid root's (scripts/install-toolchains.sh --root-path), run there through
# chroot with the LLVM folder first on PATH.  Then the expectations:
#
#   python3 scripts/generate-isa-expectations.py
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
flags=(-x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O2 -cuid=spillway-isa)
mkdir -p "$here/co"

# compiler version -> targets: the processors of the issue (gfx900, gfx908,
# gfx90a, gfx1034), one of every other table family LLVM 22 knows (gfx1013:
# the BVH loads of gfx10.1), and clang 24 for the families only it knows and
# for gfx1250 (its own encoding of the scaled WMMA).
declare -A targets=(
  [22]="gfx803 gfx900 gfx908 gfx90a gfx942 gfx950 gfx1013 gfx1034 gfx1100 gfx1151 gfx1201 gfx1250"
  [24]="gfx1170 gfx1250 gfx1310"
)

root=""
for version in 22 24; do
  for target in ${targets[$version]}; do
    name=$target.clang$version
    echo "build.sh: $name" >&2
    if [ "$version" -le 22 ]; then
      clang++-"$version" "${flags[@]}" --offload-arch="$target" -c "$here/rare.cpp" -o "$here/co/$name.co"
    else
      [ -n "$root" ] || root=$("$repo/scripts/install-toolchains.sh" --root-path)
      work=$root/tmp/spillway-isa-rare
      mkdir -p "$work"
      cp "$here/rare.cpp" "$work/rare.cpp"
      chroot "$root" /usr/bin/env "PATH=/usr/lib/llvm-$version/bin:/usr/bin:/bin" \
        clang++-"$version" "${flags[@]}" --offload-arch="$target" -c /tmp/spillway-isa-rare/rare.cpp \
        -o "/tmp/spillway-isa-rare/$name.co"
      mv "$work/$name.co" "$here/co/$name.co"
    fi
  done
done
[ -z "$root" ] || rm -rf "$root/tmp/spillway-isa-rare"
