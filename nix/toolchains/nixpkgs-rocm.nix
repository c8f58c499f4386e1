# A ROCm release nixpkgs packages: the pinned nixpkgs' `rocmPackages`
# (ROCm 7.2.3 on ROCm LLVM 22 in nixos-unstable 26.11).  Nothing is built
# here beyond a folder of links: clang/clang++ are `rocmPackages.llvm
# .rocm-toolchain` (AMD's LLVM fork, wrapped by nixpkgs for glibc and
# libstdc++), hipcc is clr's wrapped hipcc.
#
# The versions are read from nixpkgs and compared with matrix/cells.toml
# when the flake is evaluated, so a nixpkgs update that moves ROCm stops
# `nix flake check` (even with --no-build) with a message, instead of
# silently gating a new compiler against an old compiler's baseline.
{ lib
, runCommand
, rocmPackages
, cellName
, cell
}:
let
  rocm = toString cell.rocm;
  clang = toString cell.clang;
  found = {
    rocm = rocmPackages.clr.version;
    clang = lib.versions.major rocmPackages.llvm.rocm-toolchain.version;
  };
  compiler = rocmPackages.llvm.rocm-toolchain;
in
assert lib.assertMsg (found.rocm == rocm) ''
  cell ${cellName}: matrix/cells.toml says ROCm ${rocm}, but the pinned nixpkgs has
  rocmPackages ${found.rocm} (rocmPackages.clr.version).
  If nixpkgs was updated (flake.lock), either go back to a nixpkgs revision with ROCm ${rocm},
  or add a cell for ROCm ${found.rocm} to matrix/cells.toml and write its baseline
  (nix run '.#"baseline-<cell>"') on a machine where that toolchain runs.
  A ROCm release nixpkgs does not have needs a tarball pin in nix/pins.nix.'';
assert lib.assertMsg (found.clang == clang) ''
  cell ${cellName}: matrix/cells.toml says clang ${clang}, but the pinned nixpkgs' ROCm ${found.rocm}
  compiler is ROCm LLVM ${found.clang} (rocmPackages.llvm.rocm-toolchain.version).'';
runCommand "rocm-${found.rocm}-compiler"
{
  passthru = {
    rocmVersion = found.rocm;
    clangMajor = found.clang;
    rocmPath = "${rocmPackages.clr}";
    deviceLibPath = "${rocmPackages.rocm-device-libs}/amdgcn/bitcode";
    description = "nixpkgs rocmPackages ${found.rocm} (ROCm LLVM ${found.clang})";
  };
} ''
  mkdir -p "$out/bin"
  for tool in clang clang++; do
    ln -s ${compiler}/bin/$tool "$out/bin/$tool"
  done
  ln -s ${rocmPackages.clr}/bin/hipcc "$out/bin/hipcc"
  version=$("$out/bin/clang++" --version)
  case "$version" in
    *"clang version ${clang}."*) ;;
    *) echo "error: ${compiler}/bin/clang++ --version does not say clang ${clang}: $version" >&2; exit 1 ;;
  esac
''
