#!/usr/bin/env bash
# The one build recipe of the toolchain matrix: how a cell compiles one
# translation unit and links the engine.  Used by `spillway matrix build`
# (checker/spillway/matrix/) and by the Nix flake, so both build the same
# thing with the same flags.  Plain bash, no Python.
#
#   compile.sh compile SOURCE OUTPUT      one .hip or .cpp file -> object
#   compile.sh link OUTPUT OBJECT...      objects -> the engine shared library
#   compile.sh print compile SOURCE OUTPUT   print the command instead of running it
#   compile.sh print link OUTPUT OBJECT...
#
# The cell comes in through the environment (matrix/cells.toml has the values):
#   SPW_CXX         compiler command (clang++-19, amdclang++, a path...)      required
#   SPW_TARGETS     offload targets, space- or comma-separated (gfx1151 gfx90a) required for .hip
#   SPW_COV         code object version (4, 5, 6); empty = the compiler's default
#   SPW_COMPRESS    1 = --offload-compress (clang >= 19), else 0 / empty
#   SPW_FLAGS       extra compile flags, split on white space (-mllvm -amdgpu-num-vgpr=64)
#   SPW_LINK_FLAGS  extra link flags, split on white space
#   SPW_INCLUDE     include directories, colon-separated
#                   (default: kernels/include and kernels/engine next to this script)
#   SPW_HIP         "mini" (default): device code without HIP headers or device
#                   libraries (-nogpuinc -nogpulib, kernels/include/mini_hip.h);
#                   "rocm": the compiler's real HIP headers and device libraries
#                   (-DSPW_HIP_RUNTIME=1: kernels/include/spw_device.h includes
#                   <hip/hip_runtime.h>, kernels/prim_scan.hip uses real rocPRIM)
#   SPW_ROOT        a system root to build in (cells.toml `system` of kind "root",
#                   made by scripts/install-toolchains.sh); empty = this system.
#                   The recipe then runs itself inside it with chroot, in a private
#                   mount namespace where the folders it reads and writes are
#                   bind-mounted at the same paths (nothing stays mounted after).
#   SPW_CLANG       the cell's clang major: inside a root, /usr/lib/llvm-N/bin goes
#                   first on PATH (clang 23 and 24's clang-linker-wrapper finds
#                   `clang` only through PATH)
#   SPW_BACKEND_LIBRARY  AMD's LLVM (cells.toml `backend`: a library from a wheel); empty =
#                   the compiler compiles the device code itself.  With it, a .hip file
#                   takes explicit steps per target, the targets in parallel:
#                     SPW_CXX --cuda-device-only -O3 -Xclang -disable-llvm-passes -emit-llvm -S
#                       -> the unoptimized device IR, as text (the front end)
#                     SPW_PYTHON amd_llvm.py codegen -> object (AMD's LLVM: internalize,
#                       default<O3>, the AMDGPU code generator, through its C API)
#                     SPW_LLD -m elf64_amdgpu -shared -> the target's code object
#                   then SPW_BUNDLER (-compress when SPW_COMPRESS=1) -> the fat binary, and
#                   SPW_CXX --cuda-host-only -fcuda-include-gpubinary -> the host object that
#                   embeds it.  Each step's time goes to stderr (the step's log).
#   SPW_BACKEND_PRELOAD  the folder of the sysdeps forwarder the library needs, if any
#   SPW_BACKEND_DROP_ATTRIBUTES  attributes the back end's LLVM does not know, removed from
#                   the IR's attribute groups (cells.toml backends' drop_attributes)
#   SPW_PYTHON      the Python that runs matrix/amd_llvm.py (default python3)
#   SPW_LLD         the device linker (ld.lld-22), SPW_BUNDLER the offload bundler
#                   (clang-offload-bundler-22): the front end's LLVM's, with a back end
#
# With SPW_HIP=mini every cell needs only its compiler.  The library is linked
# without the HIP runtime: hipLaunchKernel, __hipRegisterFatBinary and friends
# stay undefined until a process that loaded the HIP runtime loads it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

die() { echo "compile.sh: $*" >&2; exit 2; }

print=0
if [ "${1:-}" = print ]; then print=1; shift; fi
[ $# -ge 1 ] || die "usage: compile.sh [print] compile SOURCE OUTPUT | link OUTPUT OBJECT..."
mode=$1; shift

[ -n "${SPW_CXX:-}" ] || die "SPW_CXX is not set (the cell's compiler command)"
case "${SPW_HIP:-mini}" in mini|rocm) ;; *) die "SPW_HIP must be mini or rocm, not '${SPW_HIP}'" ;; esac

# -- building inside a system root ------------------------------------------------
# Stage "namespace": in a private mount namespace, bind-mount every folder the
# step touches at the same path inside the root, then chroot and run this
# recipe again (stage "inside") from the same working folder.
root_path=/usr/lib/llvm-${SPW_CLANG:-0}/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
if [ -n "${SPW_ROOT:-}" ] && [ "${SPW_ROOT_STAGE:-}" != inside ]; then
  [ -x "$SPW_ROOT/usr/bin/env" ] || die "SPW_ROOT=$SPW_ROOT is not a system root (scripts/install-toolchains.sh makes it)"
  if [ "$print" = 1 ]; then
    printf 'chroot %q env PATH=%q ' "$SPW_ROOT" "$root_path"
    SPW_ROOT_STAGE=inside exec bash "$here/compile.sh" print "$mode" "$@"
  fi
  if [ "${SPW_ROOT_STAGE:-}" != namespace ]; then
    SPW_ROOT_STAGE=namespace exec unshare --mount --propagation private -- bash "$here/compile.sh" "$mode" "$@"
  fi
  cwd=$(pwd -P)
  folders=("$cwd" "$root")
  IFS=: read -r -a include_dirs <<< "${SPW_INCLUDE:-}"
  for dir in "${include_dirs[@]}"; do [ -n "$dir" ] && folders+=("$(realpath -m "$dir")"); done
  for path in "$@"; do folders+=("$(dirname "$(realpath -m "$path")")"); done
  [ "$mode" = compile ] && [ $# -ge 2 ] && mkdir -p "$(dirname "$2")"
  [ "$mode" = link ] && [ $# -ge 1 ] && mkdir -p "$(dirname "$1")"
  bound=()
  mapfile -t folders < <(printf '%s\n' "${folders[@]}" | sort -u)   # parents before their children
  for dir in "${folders[@]}"; do
    covered=0
    for done_dir in "${bound[@]}"; do case "$dir/" in "$done_dir"/*) covered=1 ;; esac; done
    if [ "$covered" = 1 ] || [ ! -d "$dir" ]; then continue; fi
    mkdir -p "$SPW_ROOT$dir"
    mount --bind "$dir" "$SPW_ROOT$dir" || die "cannot bind-mount $dir into $SPW_ROOT"
    bound+=("$dir")
  done
  mountpoint -q "$SPW_ROOT/proc" || mount -t proc proc "$SPW_ROOT/proc" || die "cannot mount proc in $SPW_ROOT"
  exec chroot "$SPW_ROOT" /usr/bin/env SPW_ROOT_STAGE=inside SPW_CWD="$cwd" PATH="$root_path" \
    bash "$here/compile.sh" "$mode" "$@"
fi
if [ "${SPW_ROOT_STAGE:-}" = inside ] && [ -n "${SPW_CWD:-}" ]; then cd "$SPW_CWD"; fi
read -r -a extra <<< "${SPW_FLAGS:-}"
read -r -a link_extra <<< "${SPW_LINK_FLAGS:-}"

includes=()
IFS=: read -r -a include_dirs <<< "${SPW_INCLUDE:-$root/kernels/include:$root/kernels/engine}"
for dir in "${include_dirs[@]}"; do
  [ -n "$dir" ] && includes+=("-I$dir")
done

run() {
  if [ "$print" = 1 ]; then
    printf '%q ' "$@"; printf '\n'
  else
    exec "$@"
  fi
}

# -- a back end: the device code through AMD's LLVM, a step at a time -------------------
step() {   # LABEL COMMAND...: run (timed, on stderr) or print
  local label=$1 start elapsed; shift
  if [ "$print" = 1 ]; then printf '%q ' "$@"; printf '\n'; return 0; fi
  start=${EPOCHREALTIME/./}     # microseconds (bash 5: no date or awk needed, as in a Nix build)
  "$@" || { echo "compile.sh: error: $label failed (exit status $?)" >&2; return 1; }
  elapsed=$(( ${EPOCHREALTIME/./} - start ))
  printf 'compile.sh: %s: %d.%02d s\n' "$label" $(( elapsed / 1000000 )) $(( elapsed % 1000000 / 10000 )) >&2
}

backend_compile() {   # SOURCE OUTPUT: device arguments in $device_common, targets in $backend_targets
  local source=$1 output=$2 work target pids=() failed=0 inputs=() bundle_targets=host-x86_64-unknown-linux-gnu
  [ -f "$SPW_BACKEND_LIBRARY" ] || [ "$print" = 1 ] || die "SPW_BACKEND_LIBRARY=$SPW_BACKEND_LIBRARY: no such file"
  local python=${SPW_PYTHON:-python3} helper=${SPW_BACKEND_HELPER:-$here/amd_llvm.py}
  local lld=${SPW_LLD:-ld.lld} bundler=${SPW_BUNDLER:-clang-offload-bundler}
  local preload=()
  [ -n "${SPW_BACKEND_PRELOAD:-}" ] && preload=(--preload "$SPW_BACKEND_PRELOAD")
  local attribute
  for attribute in ${SPW_BACKEND_DROP_ATTRIBUTES:-}; do preload+=(--drop-attribute "$attribute"); done
  if [ "$print" = 1 ]; then work=$output.steps; else work=$(mktemp -d "$output.steps.XXXXXX"); fi
  per_target() {
    local target=$1 file=$work/${1//:/_}
    step "front end $target" "$SPW_CXX" "${device_common[@]}" --cuda-device-only "--offload-arch=$target" \
      -O3 -Xclang -disable-llvm-passes -emit-llvm -S "${extra[@]}" "$source" -o "$file.ll" &&
    step "AMD LLVM $target" "$python" "$helper" codegen --library "$SPW_BACKEND_LIBRARY" "${preload[@]}" \
      --target "$target" --unit "$source" "$file.ll" "$file.o" &&
    step "device link $target" "$lld" -m elf64_amdgpu --no-undefined -shared "$file.o" -o "$file.co"
  }
  for target in "${backend_targets[@]}"; do
    bundle_targets+=",hipv4-amdgcn-amd-amdhsa--$target"
    inputs+=("-input=$work/${target//:/_}.co")
    if [ "$print" = 1 ]; then per_target "$target"; else per_target "$target" & pids+=($!); fi
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  if [ "$failed" = 1 ]; then rm -rf "$work"; exit 1; fi
  local compress=()
  [ "${SPW_COMPRESS:-0}" = 1 ] && compress=(-compress)
  step "bundle" "$bundler" -type=o -bundle-align=4096 "-targets=$bundle_targets" -input=/dev/null "${inputs[@]}" \
    "-output=$work/device.hipfb" "${compress[@]}" || { rm -rf "$work"; exit 1; }
  step "host" "$SPW_CXX" "${device_common[@]}" --cuda-host-only "${backend_arches[@]}" -O3 -fPIC "${extra[@]}" \
    -Xclang -fcuda-include-gpubinary -Xclang "$work/device.hipfb" -c "$source" -o "$output" || { rm -rf "$work"; exit 1; }
  [ "$print" = 1 ] || rm -rf "$work"
  exit 0
}

case "$mode" in
  compile)
    [ $# -eq 2 ] || die "usage: compile.sh compile SOURCE OUTPUT"
    source=$1; output=$2
    case "$source" in
      *.hip)
        targets=()
        spw_targets=${SPW_TARGETS:-}
        for target in ${spw_targets//,/ }; do targets+=("--offload-arch=$target"); done
        [ ${#targets[@]} -gt 0 ] || die "SPW_TARGETS is empty (offload targets for $source)"
        # -cuid: the per-file unique id clang would otherwise hash from the
        # paths; named after the file, the same sources give the same bytes in
        # any build folder (Nix or not).
        stem=$(basename "$source" .hip)
        device=(-x hip -std=c++17 "${targets[@]}")
        if [ "${SPW_HIP:-mini}" = rocm ]; then
          device+=(-DSPW_HIP_RUNTIME=1)
        else
          device+=(-nogpuinc -nogpulib)
        fi
        device+=("-cuid=spw_${stem//[^A-Za-z0-9_]/_}")
        [ -n "${SPW_COV:-}" ] && device+=("-mcode-object-version=$SPW_COV")
        if [ -n "${SPW_BACKEND_LIBRARY:-}" ]; then
          device_common=(-x hip -std=c++17 -nogpuinc -nogpulib "-cuid=spw_${stem//[^A-Za-z0-9_]/_}")
          [ -n "${SPW_COV:-}" ] && device_common+=("-mcode-object-version=$SPW_COV")
          device_common+=("${includes[@]}")
          backend_targets=(${spw_targets//,/ })
          backend_arches=("${targets[@]}")
          backend_compile "$source" "$output"
        fi
        [ "${SPW_COMPRESS:-0}" = 1 ] && device+=(--offload-compress)
        run "$SPW_CXX" "${device[@]}" "${includes[@]}" -O3 -fPIC "${extra[@]}" -c "$source" -o "$output"
        ;;
      *.cpp|*.cc)
        run "$SPW_CXX" -x c++ -std=c++17 "${includes[@]}" -O2 -fPIC -fno-exceptions -fno-rtti "${extra[@]}" \
          -c "$source" -o "$output"
        ;;
      *) die "do not know how to compile $source (want .hip or .cpp)" ;;
    esac
    ;;
  link)
    [ $# -ge 2 ] || die "usage: compile.sh link OUTPUT OBJECT..."
    output=$1; shift
    name=$(basename "$output")
    run "$SPW_CXX" -fPIC -shared -Wl,-soname,"$name" "${link_extra[@]}" "$@" -o "$output"
    ;;
  *) die "unknown mode '$mode' (compile or link)" ;;
esac
