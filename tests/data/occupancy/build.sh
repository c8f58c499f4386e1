#!/bin/sh
# Rebuild the committed occupancy corpus (code objects + the remarks clang printed for them).
# Needs the Debian sid root of ../../../../shared/reference/toolchains-next.md section 2 (clang-23
# from sid, clang-24 from experimental); run as root from the repository root:
#   ROOT=/var/tmp/spillway-sid-root tests/data/occupancy/build.sh
# Each <compiler>/<target>[-mode].ccob is a compressed offload bundle (CCOB) holding one code
# object compiled from corpus.hip; <...>.json has the compiler's version, the exact command and
# every kernel's -Rpass-analysis=kernel-resource-usage remark.
set -eu
ROOT=${ROOT:-/var/tmp/spillway-sid-root}
OUT=tests/data/occupancy
SPECS="gfx900 gfx908 gfx90a gfx942 gfx950 gfx1030:cumode gfx1100:wave64 gfx1151 gfx1151:cumode gfx1201 gfx1250 gfx1170 gfx1310"
python3 scripts/occupancy-sweep.py corpus-source > "$OUT/corpus.hip"
for compiler in clang-23 clang-24; do
  python3 scripts/occupancy-sweep.py corpus --compiler "$compiler" --root "$ROOT" --out "$OUT" $SPECS
done
# clang 24 only: gfx1250-strict is new in LLVM 24; gfx1310 in CU mode and wave64 only LLVM 24's
# code objects tell apart (clang 23 records no WGP/CU mode for gfx1310).
python3 scripts/occupancy-sweep.py corpus --compiler clang-24 --root "$ROOT" --out "$OUT" \
  gfx1250-strict gfx1310:cumode gfx1310:wave64
