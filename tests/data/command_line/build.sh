#!/bin/sh
# Rebuilds this folder's objects (run from anywhere; the commands run in this folder,
# with relative paths, so the recorded command lines hold no machine's folders but
# the compiler's own).  Debian 12 (bookworm): clang-22 22.1.8 (1~deb12u1), llvm-22.
#   recorded.o      -frecord-command-line: every device code object has a .GCC.command.line
#   recorded-lto.o  the same with -foffload-lto (a flag the first one does not have)
#   plain.o         without -frecord-command-line: no .GCC.command.line
#   recorded.txt    llvm-readelf-22's dump of recorded.o's gfx1151 code object's section (the oracle)
set -eu
cd "$(dirname "$0")"
common="-x hip -std=c++17 --offload-arch=gfx1151 --offload-arch=gfx90a -nogpuinc -nogpulib -I../../../kernels/include -O3 -cuid=spw_fixture"
clang++-22 $common -frecord-command-line -c kernels.hip -o recorded.o
clang++-22 $common -frecord-command-line -foffload-lto -c kernels.hip -o recorded-lto.o
clang++-22 $common -c kernels.hip -o plain.o
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
llvm-objcopy-22 --dump-section .hip_fatbin="$tmp/fatbin" recorded.o
clang-offload-bundler-22 --unbundle --type=o --input="$tmp/fatbin" \
  --targets=hipv4-amdgcn-amd-amdhsa--gfx1151 --output="$tmp/gfx1151.co"
llvm-readelf-22 -p .GCC.command.line "$tmp/gfx1151.co" | sed "s|$tmp/||" > recorded.txt
