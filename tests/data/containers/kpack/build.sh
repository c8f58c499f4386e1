#!/bin/sh
# Rebuild the kpack fixtures.  Outputs are committed; the tests need neither
# the compilers nor AMD's tool.
#
#   unsplit/libspw.so   tests/data/formats.hip + second_tu.hip (two translation units, so two
#                       bundles), gfx1100 and gfx90a, Debian clang 22, linked with lld
#   unsplit/libspwz.so  the same with --offload-compress (CCOB bundles)
#   installed/stage/lib/*.so              those two binaries after rocm-kpack's splitter:
#                                         HIPK wrappers, .hip_fatbin NOBITS, .rocm_kpack_ref
#   installed/stage/.kpack/spw_lib_*.kpack  the archives it wrote (one per architecture,
#                                         compression_scheme "none")
#
# The splitter is ROCm/rocm-kpack python/rocm_kpack/tools/split_artifacts.py at commit
# e3483286e751060b3a70b792792cc122632c66e8 (2026-02-20), run unmodified out of a snapshot
# of that repository with Python 3.14 and clang-offload-bundler-24 in the sid root of
# toolchains-next.md (it needs Python 3.12+, msgpack and zstandard; the two packages were
# put on PYTHONPATH from their PyPI cp314 wheels).  It writes the per-architecture archives
# into separate artifact folders; "installed/" is what installing the generic artifact and
# both architecture artifacts into one prefix gives (as the recombine step would).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$HERE/../../../..
ROOT=${ROOT:-/var/tmp/spillway-sid-root}          # the sid root
KPACK=${KPACK:-/tmp/rocm-kpack}                    # snapshot of ROCm/rocm-kpack, inside ROOT
PYLIB=${PYLIB:-/tmp/h4pylib}                       # msgpack + zstandard for cp314, inside ROOT
WORK=$ROOT/tmp/spw-kpack
rm -rf "$WORK" && mkdir -p "$WORK/in/spw_lib_gfx110X/stage/lib"
echo stage > "$WORK/in/spw_lib_gfx110X/artifact_manifest.txt"
cd "$WORK"
for tu in formats second_tu; do
  for flags in "" "--offload-compress"; do
    clang++-22 -x hip --offload-arch=gfx1100 --offload-arch=gfx90a -nogpuinc -nogpulib \
      -I"$REPO/kernels/include" -O3 -fPIC $flags -c "$REPO/tests/data/$tu.hip" -o "$tu${flags:+-z}.o"
  done
done
clang++-22 -fPIC -shared -fuse-ld=lld formats.o second_tu.o -o in/spw_lib_gfx110X/stage/lib/libspw.so
clang++-22 -fPIC -shared -fuse-ld=lld formats-z.o second_tu-z.o -o in/spw_lib_gfx110X/stage/lib/libspwz.so
chroot "$ROOT" sh -c "cd /tmp/spw-kpack && PYTHONPATH=$PYLIB:$KPACK/python python3 \
  $KPACK/python/rocm_kpack/tools/split_artifacts.py --artifact-dir /tmp/spw-kpack/in/spw_lib_gfx110X \
  --output-dir /tmp/spw-kpack/out --artifact-prefix spw_lib --tmp-dir /tmp/spw-kpack/tmp \
  --clang-offload-bundler /usr/bin/clang-offload-bundler-24"
mkdir -p "$HERE/unsplit" "$HERE/installed/stage/lib" "$HERE/installed/stage/.kpack"
cp in/spw_lib_gfx110X/stage/lib/libspw.so in/spw_lib_gfx110X/stage/lib/libspwz.so "$HERE/unsplit/"
cp out/spw_lib_generic/stage/lib/libspw.so out/spw_lib_generic/stage/lib/libspwz.so "$HERE/installed/stage/lib/"
cp out/spw_lib_gfx1100/stage/.kpack/spw_lib_gfx1100.kpack out/spw_lib_gfx90a/stage/.kpack/spw_lib_gfx90a.kpack \
  "$HERE/installed/stage/.kpack/"
