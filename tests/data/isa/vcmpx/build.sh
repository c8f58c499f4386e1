#!/usr/bin/env bash
# Build the GFX10 v_cmpx fixture (issue 42): a gfx1030 kernel whose entry block holds
# `v_cmpx_gt_i32_e64 s13, v9` encoded as clang 15 encodes it (D4940000 0002120D: the
# vdst field 0, which on GFX10 and later means nothing - a VOP3 v_cmpx writes EXEC only)
# before its scratch accesses through the private segment buffer s[0:3]
# (`buffer_store_dword ..., s[0:3], 0 offen`).  LLVM 22 writes the same compare with
# vdst 0x7E, so the kernel is compiled to assembly, the compare edited, then assembled:
#
#   clang++-22 -x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O2 \
#     -cuid=spillway-isa --offload-arch=gfx1030 -S vcmpx.cpp -o -            (LLVM's v_cmpx_gt_i32_e64 s8, v0)
#   | sed (below): s13 <- s8, v9 <- v0, then `.long 0xd4940000, 0x0002120d`, and 14 SGPRs
#   > vcmpx.gfx1030.s                                                          (committed: the binary's source)
#   clang-22 -x assembler --target=amdgcn-amd-amdhsa -mcpu=gfx1030 -c vcmpx.gfx1030.s -o vcmpx.o
#   ld.lld-22 -shared vcmpx.o -o co/gfx1030.clang22.vcmpx.co
#
#   tests/data/isa/vcmpx/build.sh           (a few seconds)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$here/co"
cd "$here"
clang++-22 -x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O2 -cuid=spillway-isa \
  --offload-arch=gfx1030 -S vcmpx.cpp -o "$work/vcmpx.s"
grep -q $'^\tv_cmpx_gt_i32_e64 s8, v0$' "$work/vcmpx.s"
sed -e $'s/^\tv_cmpx_gt_i32_e64 s8, v0$/\ts_mov_b32 s13, s8\\n\tv_mov_b32_e32 v9, v0\\n\t.long 0xd4940000, 0x0002120d ; v_cmpx_gt_i32_e64 s13, v9 (vdst field 0, as clang 15 encodes it)/' \
    -e 's/^\(\t\t\.amdhsa_next_free_sgpr\) 10$/\1 14/' \
    -e 's/^\(\t\.set vcmpx_scratch\.numbered_sgpr\), 10$/\1, 14/' \
    -e 's/^\(    \.sgpr_count: *\)10$/\114/' \
    "$work/vcmpx.s" > vcmpx.gfx1030.s
clang-22 -x assembler --target=amdgcn-amd-amdhsa -mcpu=gfx1030 -c vcmpx.gfx1030.s -o "$work/vcmpx.o"
ld.lld-22 -shared "$work/vcmpx.o" -o co/gfx1030.clang22.vcmpx.co
