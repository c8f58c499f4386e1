# `import nixpkgs { system = ...; }` on the stand-in (see pkgs.nix).
{ system ? builtins.currentSystem, ... }:
let
  lib = import ./lib.nix;
  host = if builtins.pathExists ./host.json then builtins.fromJSON (builtins.readFile ./host.json) else { };
in
import ./pkgs.nix { inherit system lib host; }
