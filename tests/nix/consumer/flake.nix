# Another project adopting spillway's gate through `spillway.lib`, as
# docs/nix.md describes: its own source, build command, cells and baseline
# folder.  tests/unit/matrix/test_flake.py overrides both inputs (spillway with a copy of
# this repository, nixpkgs with the stand-in); the URLs below are what a real
# project would write.
{
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
  inputs.spillway.url = "github:OWNER/spillway";
  inputs.spillway.inputs.nixpkgs.follows = "nixpkgs";

  outputs = { self, nixpkgs, spillway }:
    let
      gate = spillway.lib.mkKernelChecks {
        system = "x86_64-linux";
        src = ./.;
        cells = ./cells.toml;
        baselines = ./baselines;
        baselineDir = "baselines";
        build = ''
          mkdir -p "$out/lib"
          set -- toy.hip -o "$out/lib/libtoy.so"
          for target in $SPW_TARGETS; do set -- --offload-arch="$target" "$@"; done
          "$SPW_CXX" -x hip -nogpuinc -nogpulib -O3 -fPIC -shared "$@"
        '';
      };
    in
    {
      checks.x86_64-linux = gate.checks;
      packages.x86_64-linux = gate.packages;
      apps.x86_64-linux = gate.apps;
      devShells.x86_64-linux = gate.devShells;
    };
}
