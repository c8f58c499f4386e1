# Which expression provides a cell's toolchain, by the cell's `source`
# field in matrix/cells.toml.  Cells with another source ("debian") are not
# Nix cells: scripts/install-toolchains.sh and `spillway matrix` handle them.
#
# Every provider is called with { cellName, cell, pins } plus packages, and
# returns a derivation with bin/clang and bin/clang++ (the cell's `cxx`),
# and passthru { rocmVersion, clangMajor, description } (optionally rocmPath
# and deviceLibPath).  Evaluating it checks the toolchain against the cell.
#
# A cell with a `backend` (AMD's LLVM from a Python wheel behind an upstream
# clang) takes "amd-llvm" whatever its source: the Debian cells rocm-7.2.2-amd-llvm22
# and rocm-10.0-amd-llvm23 are Nix cells too.
{
  nixpkgs = ./nixpkgs-rocm.nix;
  tarball = ./rocm-tarball.nix;
  amd-llvm = ./amd-llvm.nix;
}
