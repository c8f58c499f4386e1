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
      # spillway itself is pure Python: its package, test suite, dev shell and
      # formatter exist for both Linux systems.
      systems = [ "x86_64-linux" "aarch64-linux" ];
      # The matrix's toolchains are x86_64 programs (nixpkgs' rocmPackages,
      # AMD's TheRock tarball), so its cells exist for x86_64-linux only; any
      # machine builds them through an x86_64-linux remote builder.
      matrixSystems = [ "x86_64-linux" ];
      forAllSystems = f: lib.genAttrs systems (system: f system nixpkgs.legacyPackages.${system});
      forMatrixSystems = f: lib.genAttrs matrixSystems (system: f system nixpkgs.legacyPackages.${system});

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
      matrix = forMatrixSystems (system: pkgs: spillwayLib.mkKernelChecks {
        inherit system pkgs;
        src = ./.;
        cells = ./matrix/cells.toml;
        baselines = ./checks/baselines;
        spillway = self.packages.${system}.spillway;
      });
      matrixOf = system: matrix.${system} or { cells = { }; packages = { }; checks = { }; apps = { }; devShells = { }; };

      # hydraJobs.<cell>.<member>.<system>: each Nix cell's derivations as
      # Hydra jobs (Hydra's convention: the system last).
      cellMembers = { toolchain = "toolchain"; kernels = "kernels"; engine = "engine"; report = "report"; gate = "check"; };
      cellNames = lib.unique (lib.concatMap (system: builtins.attrNames (matrixOf system).cells) matrixSystems);
      otherJobs = [ "spillway" "tests" "matrix-summary" ];
      cellJobs = lib.genAttrs cellNames (cell:
        assert lib.assertMsg (!(builtins.elem cell otherJobs))
          "hydraJobs: a cell may not be named ${cell} (a job of its own)";
        builtins.mapAttrs (_: member:
          lib.filterAttrs (_: job: job != null)
            (lib.genAttrs matrixSystems (system: ((matrixOf system).cells.${cell} or { }).${member} or null)))
          cellMembers);
    in
    {
      lib = spillwayLib;

      # pkgs.spillway for a nixpkgs of your own (its Python and dependencies).
      overlays.default = final: prev: {
        spillway = spillwayLib.spillwayFor final;
      };

      packages = forAllSystems (system: pkgs:
        let spillway = spillwayLib.spillwayFor pkgs;
        in { inherit spillway; default = spillway; } // (matrixOf system).packages);

      checks = forAllSystems (system: pkgs: (matrixOf system).checks // {
        # The Python test suite against the Nix-built package.  Tests that
        # need Debian's clang-15/16/19/22 or ROCm libraries skip here (they
        # run in .ci/run); `nix` itself is absent, so tests/unit/matrix/test_flake.py skips.
        tests = self.packages.${system}.spillway.overridePythonAttrs (old: {
          pname = "spillway-tests";
          src = testSrc;
          doCheck = true;
          nativeCheckInputs = with pkgs.python3Packages; [ pytestCheckHook hypothesis jsonschema pyyaml msgpack ];
        });
      });

      apps = forAllSystems (system: pkgs: (matrixOf system).apps // {
        default = {
          type = "app";
          program = "${self.packages.${system}.spillway}/bin/spillway";
          meta.description = "spillway: report, check, baseline, compare";
        };
      });

      # devShells.default: the package's dependencies, its test and lint
      # tools, and the working tree's checker/ on PYTHONPATH.  devShells.<cell>:
      # a cell's compiler (nix/cell.nix).
      devShells = forAllSystems (system: pkgs: (matrixOf system).devShells // {
        default = pkgs.mkShell {
          name = "spillway-dev";
          inputsFrom = [ self.packages.${system}.spillway ];
          packages = [
            (pkgs.python3.withPackages (ps: with ps; [ pytest hypothesis jsonschema pyyaml xmlschema mypy msgpack ]))
            pkgs.ruff
          ];
          shellHook = ''
            export PYTHONPATH="$PWD/checker''${PYTHONPATH:+:$PYTHONPATH}"
          '';
        };
      });

      # nix fmt: nixfmt over the tree (the formatter Nix's manual names).
      formatter = forAllSystems (system: pkgs: pkgs.nixfmt-tree);

      # Hydra (or nix-eval-jobs): spillway and its tests per system, each Nix
      # cell's toolchain, kernels, engine, report and gate, and the fan-in
      # matrix-summary, which builds every cell first.
      hydraJobs = cellJobs // {
        spillway = lib.genAttrs systems (system: self.packages.${system}.spillway);
        tests = lib.genAttrs systems (system: self.checks.${system}.tests);
      } // lib.optionalAttrs (cellJobs != { }) {
        matrix-summary = lib.genAttrs matrixSystems (system: self.packages.${system}.matrix-summary);
      };
    };
}
