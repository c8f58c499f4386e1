#!/usr/bin/env bash
# Build the source-line fixtures (issue 32): ../kernels.cpp (the ISA fixtures'
# source, ../build.sh) and headers/headers.cpp compiled with line tables,
# device-only, no HIP headers or device libraries, into co/:
#
#   co/TARGET.clang22.dwarf5.co   linked code object, DWARF 5 (clang's default):
#     clang++-22 -x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O2 \
#       -cuid=spillway-isa -fdebug-prefix-map=REPO=/spillway -gline-tables-only \
#       --offload-arch=TARGET -c kernels.cpp -o co/TARGET.clang22.dwarf5.co
#   co/TARGET.clang22.dwarf4.co   the same with -gdwarf-4 BEFORE -gline-tables-only
#     (clang's last -g option sets the level: "-gline-tables-only -gdwarf-4" is full
#     debug info, which changes the code)
#   co/TARGET.clang22.dwarf5.o, .dwarf4.o   relocatable objects (ET_REL, relocations in
#     .rela.debug_line/.rela.debug_info): the same compile stopped at device bitcode
#     (-emit-llvm -c), then the backend alone:
#     clang++-22 --target=amdgcn-amd-amdhsa -mcpu=TARGET -nogpulib -O2 -c TARGET.bc -o ...
#   co/gfx940.clang19.dwarf5.co   clang 19 (clang 22 no longer knows gfx940)
#   co/gfx90a.clang19.dwarf5.co   clang 19: the OLD build of compare --pressure's tests, both sides with
#     line tables (clang 22 raised several kernels' VGPR peaks)
#   co/headers.gfx906.clang22.dwarf5.co, .dwarf4.co   headers/headers.cpp
#
# Compiled in tests/data/isa (kernels.cpp named relatively) with the checkout's path mapped
# to /spillway: the compile unit's DW_AT_comp_dir is /spillway/tests/data/isa wherever
# this runs.  The plain builds of ../build.sh are these compiles without
# -gline-tables-only (tests/oracle/test_source_lines_oracle.py holds the code equal).
#
#   tests/data/isa/lines/build.sh      (about 40 s on 2 cores)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
isa=$(cd "$here/.." && pwd)
repo=$(cd "$here/../../../.." && pwd)
flags=(-x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O2 -cuid=spillway-isa
       "-fdebug-prefix-map=$repo=/spillway")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$here/co"
cd "$isa"

# One target per decoder family (isa/encodings.py FAMILIES), linked with DWARF 5; a few more forms.
linked5="gfx803 gfx906 gfx908 gfx90a gfx942 gfx950 gfx1010 gfx1030 gfx1100 gfx1151 gfx1201 gfx1250"
linked4="gfx906 gfx90a gfx1100"
relocatable5="gfx906 gfx942 gfx1151"
relocatable4="gfx90a"

for target in $linked5; do
  echo "build.sh: $target dwarf5" >&2
  clang++-22 "${flags[@]}" -gline-tables-only --offload-arch="$target" -c kernels.cpp \
    -o "$here/co/$target.clang22.dwarf5.co"
done
for target in $linked4; do
  echo "build.sh: $target dwarf4" >&2
  clang++-22 "${flags[@]}" -gdwarf-4 -gline-tables-only --offload-arch="$target" -c kernels.cpp \
    -o "$here/co/$target.clang22.dwarf4.co"
done
for version in 5 4; do
  list=relocatable$version
  for target in ${!list}; do
    echo "build.sh: $target dwarf$version relocatable" >&2
    clang++-22 "${flags[@]}" -gdwarf-"$version" -gline-tables-only --offload-arch="$target" -emit-llvm \
      -c kernels.cpp -o "$work/$target.bc"
    clang++-22 --target=amdgcn-amd-amdhsa -mcpu="$target" -nogpulib -O2 -c "$work/$target.bc" \
      -o "$here/co/$target.clang22.dwarf$version.o"
  done
done
echo "build.sh: gfx940 clang 19" >&2
clang++-19 "${flags[@]}" -gline-tables-only --offload-arch=gfx940 -c kernels.cpp -o "$here/co/gfx940.clang19.dwarf5.co"
echo "build.sh: gfx90a clang 19" >&2
clang++-19 "${flags[@]}" -gline-tables-only --offload-arch=gfx90a -c kernels.cpp -o "$here/co/gfx90a.clang19.dwarf5.co"

cd "$here/headers"
for version in 5 4; do
  clang++-22 "${flags[@]}" -gdwarf-"$version" -gline-tables-only --offload-arch=gfx906 -c headers.cpp \
    -o "$here/co/headers.gfx906.clang22.dwarf$version.co"
done
