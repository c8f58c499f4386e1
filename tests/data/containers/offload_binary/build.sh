#!/bin/sh
# Rebuild the OffloadBinary fixtures with clang 23.1.4 and clang 24 (Debian
# sid/experimental, inside the sid root of toolchains-next.md section 2: run
# `chroot ROOT sh build.sh` with this folder, tests/data/second_tu.hip,
# tests/data/formats.hip and kernels/include/mini_hip.h copied into one
# folder of the root).  The outputs are committed so the tests need no root.
#
#   rdc-23.o, rdc-24.o        -fgpu-rdc objects: one .llvm.offloading record with two bitcode entries
#                             (clang 23 writes OffloadBinary version 2, clang 24 version 3)
#   merged-24.o               two such objects joined by `ld.lld -r`: two records in one section
#   plain-23.o, plain-24.o    -c without -fgpu-rdc: a .hip_fatbin, no .llvm.offloading
#   linked-23.so, linked-24.so  two -fgpu-rdc translation units device-linked into a shared library
#   gfx1100.co, gfx90a.co     second_tu.hip device-only, the images packed below
#   ob-v1.bin ob-v2.bin ob-v3.bin  llvm-offload-binary-22/-23/-24 (versions 1, 2, 3), v2/v3 two entries
#   ob-v3-zstd.bin ob-v3-zlib.bin  llvm-offload-binary-24 --compress (version 3, compressed)
#   host-v3-zstd.o            ob-v3-zstd.bin embedded by clang's -fembed-offload-object in .llvm.offloading
set -eu
for v in 23 24; do
  export PATH=/usr/lib/llvm-$v/bin:/usr/bin:/bin
  C="clang++ -x hip -nogpuinc -nogpulib -I. -O3 -fPIC"
  $C --offload-arch=gfx90a --offload-arch=gfx1100 -fgpu-rdc -c second_tu.hip -o rdc-$v.o
  $C --offload-arch=gfx90a --offload-arch=gfx1100 -fgpu-rdc -c formats.hip -o rdc2-$v.o
  $C --offload-arch=gfx1100 -c second_tu.hip -o plain-$v.o
  clang++ -fPIC -shared -fgpu-rdc --hip-link --offload-arch=gfx90a --offload-arch=gfx1100 -nogpulib \
    rdc-$v.o rdc2-$v.o -o linked-$v.so
done
export PATH=/usr/lib/llvm-24/bin:/usr/bin:/bin
C="clang++ -x hip -nogpuinc -nogpulib -I. -O3 -fPIC"
ld.lld -r rdc-24.o rdc2-24.o -o merged-24.o
for a in gfx90a gfx1100; do
  $C --offload-arch=$a --cuda-device-only --no-gpu-bundle-output -c second_tu.hip -o $a.co
done
IMAGES="--image=file=gfx1100.co,triple=amdgcn-amd-amdhsa,arch=gfx1100,kind=hip
        --image=file=gfx90a.co,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip"
llvm-offload-binary-22 --image=file=gfx1100.co,triple=amdgcn-amd-amdhsa,arch=gfx1100,kind=hip -o ob-v1.bin
llvm-offload-binary-23 $IMAGES -o ob-v2.bin
llvm-offload-binary-24 $IMAGES -o ob-v3.bin
llvm-offload-binary-24 --compress --compression-format=zstd $IMAGES -o ob-v3-zstd.bin
llvm-offload-binary-24 --compress --compression-format=zlib $IMAGES -o ob-v3-zlib.bin
echo 'int host_side(void) { return 13; }' > host.c
clang -c -fPIC host.c -Xclang -fembed-offload-object=ob-v3-zstd.bin -o host-v3-zstd.o
rm -f rdc2-23.o rdc2-24.o host.c
for f in rdc-23.o rdc-24.o merged-24.o host-v3-zstd.o ob-v1.bin ob-v2.bin ob-v3.bin ob-v3-zstd.bin ob-v3-zlib.bin; do
  echo "## llvm-objdump-24 --offloading $f"; llvm-objdump-24 --offloading $f | grep -v "file format"
done > llvm-objdump-24-offloading.txt
