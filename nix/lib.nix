# spillway's flake library: the kernel-resource gate for any project's
# cells.  flake.nix uses it for spillway's own matrix; an engine adopts the
# gate by adding spillway as an input and calling mkKernelChecks:
#
#   outputs = { self, spillway, ... }:
#     let gate = spillway.lib.mkKernelChecks {
#           src = ./.;
#           cells = ./matrix/cells.toml;          # same format as spillway's
#           baselines = ./checks/baselines;       # <cell>.json for every Nix cell
#           build = "make -C engine CXX=$SPW_CXX OFFLOAD_ARCHS=\"$SPW_TARGETS\" PREFIX=$out install";
#         };
#     in {
#       checks.x86_64-linux = gate.checks;        # kernel-resources-<cell>
#       packages.x86_64-linux = gate.packages;    # engine-<cell>, report-<cell>, toolchain-<cell>
#                                                 # (and matrix-summary with an [engine] table)
#       apps.x86_64-linux = gate.apps;            # baseline-<cell>
#       devShells.x86_64-linux = gate.devShells;  # <cell>
#     };
#
# Without `build`, the cells file's [engine] table is built with its recipe
# (what spillway's own matrix does).  With it, the command runs in a copy of
# `src` with the cell's compiler in $SPW_CXX (also $CXX, $HIPCXX), offload
# targets in $SPW_TARGETS, code object version in $SPW_COV, $SPW_COMPRESS,
# $SPW_FLAGS and $ROCM_PATH, and must leave the binaries to gate in $out
# (`gate` names a file or folder inside $out; default: all of it).
{ nixpkgs, spillwaySrc }:
let
  lib = nixpkgs.lib;
  pins = import ./pins.nix;
  providers = import ./toolchains;

  readCells = cells:
    if builtins.isAttrs cells && !(cells ? outPath) then cells
    else builtins.fromTOML (builtins.readFile cells);
in
rec {
  inherit pins;

  # The cells whose toolchain Nix provides ("nixpkgs" and "tarball"), and the
  # cells with a back end (AMD's LLVM from a wheel: nix/toolchains/amd-llvm.nix).
  nixCells = cells: lib.filterAttrs (_: cell: providers ? ${cell.source or ""} || cell ? backend) cells;

  # The spillway package for a package set.
  spillwayFor = pkgs: pkgs.callPackage ./spillway.nix { src = spillwaySrc; };

  mkKernelChecks =
    { system ? "x86_64-linux"
    , pkgs ? nixpkgs.legacyPackages.${system}
    , src
    , cells
    , baselines
    , baselineDir ? "checks/baselines"
    , build ? null
    , gate ? null
    , spillway ? spillwayFor pkgs
    , extend ? (final: prev: { })
    }:
    let
      file = readCells cells;
      engineSpec = if build == null then file.engine or null else null;

      scopeFor = cellName: cell:
        let
          baselinePath = "${baselineDir}/${cellName}.json";
          baselineFile = baselines + "/${cellName}.json";
        in
        # cells.toml names each cell's baseline; it must be the file the check reads.
        assert lib.assertMsg ((cell.baseline or baselinePath) == baselinePath) ''
          cell ${cellName}: the cells file says baseline = "${cell.baseline}", but the flake reads
          ${baselinePath} (baselineDir "${baselineDir}" + the cell name). Make them agree.'';
        (pkgs.callPackage ./cell.nix {
          inherit spillway pins providers cellName cell src engineSpec build baselinePath;
          backend =
            if cell ? backend then
              (file.backends or { }).${cell.backend} or (throw "cell ${cellName}: backend ${cell.backend} is not a [backends] table")
              // { name = cell.backend; }
            else null;
          gatePath = gate;
          baselineFile = if builtins.pathExists baselineFile then baselineFile else null;
        }).overrideScope extend;

      scopes = builtins.mapAttrs scopeFor (nixCells (file.cells or file));
      collect = prefix: member: lib.mapAttrs' (name: scope: lib.nameValuePair "${prefix}${name}" scope.${member})
        (lib.filterAttrs (_: scope: scope.${member} != null) scopes);

      # The fan-in (nix/summary.nix): with an [engine] table and a cells file
      # `spillway matrix compare` can read, and at least one Nix cell.
      # (Decided without forcing any derivation: the output names must not
      # depend on the spillway package, which is itself an output.)
      hasSummary = engineSpec != null && !(builtins.isAttrs cells && !(cells ? outPath)) && scopes != { };
      summary =
        if hasSummary
        then pkgs.callPackage ./summary.nix {
          inherit spillway;
          cellsFile = cells;
          library = engineSpec.library;
          cells = scopes;
        }
        else null;
    in
    {
      cells = scopes;
      inherit summary;
      packages = collect "engine-" "engine" // collect "kernels-" "kernels"
        // collect "report-" "report" // collect "toolchain-" "toolchain"
        // lib.optionalAttrs hasSummary { matrix-summary = summary; };
      checks = collect "kernel-resources-" "check";
      apps = lib.mapAttrs' (name: scope: lib.nameValuePair "baseline-${name}" {
        type = "app";
        program = lib.getExe scope.baselineApp;
        meta.description = "write or tighten ${baselineDir}/${name}.json from the ${name} build";
      }) scopes;
      devShells = collect "" "devShell";
    };
}
