#!/usr/bin/env bash
# Build the fixtures of the forms whose registers sit in extra dwords (issue 40 item 1) from
# forms.cpp: VOP3/VOP3P DPP (gfx1100, gfx1151, gfx1201, gfx1250), SDWA compares writing an SGPR (gfx906,
# gfx1030), MIMG NSA address lists (gfx1030, gfx1100, gfx1151), as inline assembly in small
# kernels, one code object per target in co/ (the same flags as ../build.sh):
#
#   clang++-22 -x hip --offload-arch=TARGET --cuda-device-only --no-gpu-bundle-output \
#     -nogpuinc -nogpulib -O2 -cuid=spillway-isa -c forms.cpp -o co/TARGET.clang22.forms.co
#
# and gfx1250 with the Debian sid root's clang 24 (scripts/install-toolchains.sh --root-path), run
# there through chroot with the LLVM folder first on PATH, as ../rare/build.sh does:
#
#   clang++-24 (the same flags) --offload-arch=gfx1250 -c forms.cpp -o co/gfx1250.clang24.forms.co
#
#   tests/data/isa/forms/build.sh           (a few seconds)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
flags=(-x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O2 -cuid=spillway-isa)
mkdir -p "$here/co"
for target in gfx906 gfx1030 gfx1100 gfx1151 gfx1201; do
  clang++-22 "${flags[@]}" --offload-arch="$target" -c "$here/forms.cpp" -o "$here/co/$target.clang22.forms.co"
done
root=$("$repo/scripts/install-toolchains.sh" --root-path)
work=$root/tmp/spillway-isa-forms
mkdir -p "$work"
cp "$here/forms.cpp" "$work/forms.cpp"
chroot "$root" /usr/bin/env "PATH=/usr/lib/llvm-24/bin:/usr/bin:/bin" clang++-24 "${flags[@]}" --offload-arch=gfx1250 \
  -c /tmp/spillway-isa-forms/forms.cpp -o /tmp/spillway-isa-forms/gfx1250.clang24.forms.co
mv "$work/gfx1250.clang24.forms.co" "$here/co/gfx1250.clang24.forms.co"
rm -rf "$work"
