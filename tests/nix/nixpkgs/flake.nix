# Stand-in for github:NixOS/nixpkgs, used only by tests/unit/matrix/test_flake.py as
#   nix flake check --override-input nixpkgs path:<copy of this folder>
# It offers the attributes spillway's flake uses (lib, legacyPackages) with
# nixpkgs' names; see pkgs.nix for what each one really is.
{
  description = "spillway test stand-in for nixpkgs (Nix 2.8, offline)";
  outputs = { self }: {
    lib = import ./lib.nix;
    legacyPackages.x86_64-linux = import ./default.nix { system = "x86_64-linux"; };
  };
}
