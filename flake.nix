{
  description = "spillway: per-kernel GPU resource usage of AMD HIP binaries, gated per toolchain";

  # One input.  flake.lock pins its revision; its rocmPackages must be
  # ROCm 7.2.3 on ROCm LLVM 22, which evaluation checks
  # (nix/toolchains/nixpkgs-rocm.nix).  ROCm 10 is not a flake input: it is a
  # fetchurl inside a derivation (nix/pins.nix), downloaded only when its
  # cell is built.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      systems = [ "x86_64-linux" ];
      forAllSystems = f: lib.genAttrs systems (system: f system nixpkgs.legacyPackages.${system});

      # The Python package's source: pyproject.toml, README.md, checker/.
      # Only these files rebuild it.
      spillwaySrc = builtins.path {
        path = ./.;
        name = "spillway-source";
        filter = path: type:
          let rel = lib.removePrefix (toString ./. + "/") (toString path);
          in rel == "pyproject.toml" || rel == "README.md" || rel == "checker"
             || (lib.hasPrefix "checker/" rel && !(lib.hasSuffix ".egg-info" rel) && baseNameOf rel != "__pycache__");
      };

      # The test suite's source: the repository minus the Nix files and local
      # build output (the matrix tests read matrix/ and checks/).
      testSrc = builtins.path {
        path = ./.;
        name = "spillway-tests-source";
        filter = path: type:
          let
            rel = lib.removePrefix (toString ./. + "/") (toString path);
            base = baseNameOf rel;
          in !(builtins.elem rel [ "flake.nix" "flake.lock" "nix" "build" ".git" ]
               || builtins.elem base [ "__pycache__" ".pytest_cache" ".hypothesis" ".benchmarks" ".cache" "result" ]
               || lib.hasSuffix ".egg-info" base || lib.hasPrefix "result-" base);
      };

      spillwayLib = import ./nix/lib.nix { inherit nixpkgs spillwaySrc; };

      # The matrix: the Nix cells of matrix/cells.toml, built with its
      # [engine] table and recipe (matrix/compile.sh), gated against
      # checks/baselines.  Per cell: packages toolchain-, kernels-, engine-,
      # report-<cell>; checks kernel-resources-<cell>; apps baseline-<cell>;
      # devShells <cell> (nix/cell.nix).
      matrix = forAllSystems (system: pkgs: spillwayLib.mkKernelChecks {
        inherit system pkgs;
        src = ./.;
        cells = ./matrix/cells.toml;
        baselines = ./checks/baselines;
        spillway = self.packages.${system}.spillway;
      });
    in
    {
      lib = spillwayLib;

      packages = forAllSystems (system: pkgs:
        let spillway = spillwayLib.spillwayFor pkgs;
        in { inherit spillway; default = spillway; } // matrix.${system}.packages);

      checks = forAllSystems (system: pkgs: matrix.${system}.checks // {
        # The Python test suite against the Nix-built package.  Tests that
        # need Debian's clang-15/16/19/22 or ROCm libraries skip here (they
        # run in .ci/run); `nix` itself is absent, so tests/unit/matrix/test_flake.py skips.
        tests = self.packages.${system}.spillway.overridePythonAttrs (old: {
          pname = "spillway-tests";
          src = testSrc;
          doCheck = true;
          nativeCheckInputs = with pkgs.python3Packages; [ pytestCheckHook hypothesis jsonschema pyyaml ];
        });
      });

      apps = forAllSystems (system: pkgs: matrix.${system}.apps // {
        default = {
          type = "app";
          program = "${self.packages.${system}.spillway}/bin/spillway";
          meta.description = "spillway: report, check, baseline, compare";
        };
      });

      devShells = forAllSystems (system: pkgs: matrix.${system}.devShells);
    };
}
