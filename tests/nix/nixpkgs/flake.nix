# Stand-in for github:NixOS/nixpkgs, used only by tests/unit/matrix/test_flake.py as
#   nix flake check --override-input nixpkgs path:<copy of this folder>
# It offers the attributes spillway's flake uses (lib, legacyPackages) with
# nixpkgs' names; see pkgs.nix for what each one really is.
{
  description = "spillway test stand-in for nixpkgs (Nix 2.8, offline)";
  outputs = { self }: {
    lib = import ./lib.nix;
    # aarch64-linux evaluates (as spillway's flake offers it); its builds
    # would need an aarch64 machine.
    legacyPackages = self.lib.genAttrs [ "x86_64-linux" "aarch64-linux" ]
      (system: import ./default.nix { inherit system; });
  };
}
