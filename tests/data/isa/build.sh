#!/usr/bin/env bash
# Build the ISA-evidence fixtures (issue 23) from kernels.cpp: one code object
# per (target, compiler) in co/, and the compiler's assembly of the same
# compile, whose "; N-byte Folded Spill" / "Folded Reload" comments are
# counted per function into spill_comments.json (the assembly itself is not
# kept: the counts are the expectation).
#
#   tests/data/isa/build.sh            rebuild everything (about 1 minute on 2 cores)
#
# Every fixture is the same device-only HIP compile, with no HIP headers and
# no device libraries:
#
#   clang++-N -x hip --offload-arch=TARGET --cuda-device-only --no-gpu-bundle-output \
#     -nogpuinc -nogpulib -O2 -cuid=spillway-isa -c kernels.cpp -o co/TARGET.clangN.co
#   clang++-N ... (the same flags) -S kernels.cpp -o TARGET.clangN.s
#
# clang 19 and 22 are bookworm's (scripts/install-toolchains.sh); clang 23 and
# 24 are the Debian sid root's (scripts/install-toolchains.sh --root-path), run
# there through chroot with the LLVM folder first on PATH (toolchains-next.md
# section 3).  Then the expectations are regenerated from the oracle:
#
#   python3 scripts/generate-isa-expectations.py
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
# -cuid: a fixed compilation-unit ID (clang derives one from the paths otherwise, and
# it names the static LDS variable), so the objects do not depend on where they are built.
flags=(-x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O2 -cuid=spillway-isa)
asm=$(mktemp -d)
trap 'rm -rf "$asm"' EXIT
mkdir -p "$here/co"

# compiler version -> targets.  Bookworm's LLVM 22 for every generation and
# generic target; LLVM 19 for gfx940/gfx941, which LLVM 22 no longer
# disassembles; the sid root's LLVM 23 and 24 for the newest targets.
declare -A targets=(
  [19]="gfx940 gfx941 gfx90a"
  [22]="gfx803 gfx906 gfx908 gfx90a gfx942 gfx950 gfx1010 gfx1030 gfx1100 gfx1151 gfx1201 gfx1250
        gfx9-generic gfx9-4-generic gfx10-3-generic gfx11-generic gfx12-generic"
  [23]="gfx1201 gfx1250"
  [24]="gfx950 gfx1201 gfx1250"
)

root=""
for version in 19 22 23 24; do
  for target in ${targets[$version]}; do
    name=$target.clang$version
    echo "build.sh: $name" >&2
    if [ "$version" -le 22 ]; then
      clang++-"$version" "${flags[@]}" --offload-arch="$target" -c "$here/kernels.cpp" -o "$here/co/$name.co"
      clang++-"$version" "${flags[@]}" --offload-arch="$target" -S "$here/kernels.cpp" -o "$asm/$name.s"
    else
      [ -n "$root" ] || root=$("$repo/scripts/install-toolchains.sh" --root-path)
      work=$root/tmp/spillway-isa-fixtures
      mkdir -p "$work"
      cp "$here/kernels.cpp" "$work/kernels.cpp"
      run=(chroot "$root" /usr/bin/env "PATH=/usr/lib/llvm-$version/bin:/usr/bin:/bin"
           clang++-"$version" "${flags[@]}" --offload-arch="$target")
      # (the deprecation warning for amdgpu_num_vgpr from clang 23 on is expected)
      "${run[@]}" -c /tmp/spillway-isa-fixtures/kernels.cpp -o "/tmp/spillway-isa-fixtures/$name.co" 2>/dev/null
      "${run[@]}" -S /tmp/spillway-isa-fixtures/kernels.cpp -o "/tmp/spillway-isa-fixtures/$name.s" 2>/dev/null
      mv "$work/$name.co" "$here/co/$name.co"
      mv "$work/$name.s" "$asm/$name.s"
    fi
  done
done
[ -z "$root" ] || rm -rf "$root/tmp/spillway-isa-fixtures"

PYTHONPATH="$repo/tests" python3 -m support.isa_oracle spill-comments "$asm" > "$here/spill_comments.json.tmp"
mv "$here/spill_comments.json.tmp" "$here/spill_comments.json"
