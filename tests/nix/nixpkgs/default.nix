# `import nixpkgs { system = ...; overlays = [ ... ]; }` on the stand-in (see pkgs.nix).
{ system ? builtins.currentSystem, overlays ? [ ], ... }:
let
  lib = import ./lib.nix;
  host = if builtins.pathExists ./host.json then builtins.fromJSON (builtins.readFile ./host.json) else { };
  base = import ./pkgs.nix { inherit system lib host; };
  # Overlays as nixpkgs applies them: each sees the final set and the one
  # before it; callPackage then fills arguments from the final set.
  final = builtins.foldl' (prev: overlay: prev // overlay final prev) base overlays
    // { callPackage = lib.callPackageWith final; };
in
final
