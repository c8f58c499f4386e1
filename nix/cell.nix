# One cell of the matrix as a package scope: its toolchain, the engine built
# with it, the engine's report, the gate, the app that writes its baseline
# and its dev shell.  Every member can be replaced with `overrideScope`
# (nix/lib.nix passes the caller's `extend` through it), as nixpkgs'
# rocm-modules do.
{ lib
, newScope
, spillway
, pins
, providers
, cellName
, cell
, src
, engineSpec ? null    # cells.toml's [engine] table: build with its recipe
, build ? null         # or a shell command that builds into $out
, gatePath ? null      # what to gate, relative to the engine's output
, baselineFile         # the baseline as a path in the flake, or null when absent
, baselinePath         # the same, relative to the project root (for messages and the app)
, backend ? null       # the cell's [backends] table (AMD's LLVM from a wheel), with its name
}:
let
  inherit (lib) concatMapStringsSep concatStringsSep escapeShellArg escapeShellArgs optionalString;

  provider = if backend != null then providers.amd-llvm else providers.${cell.source} or (throw ''
    cell ${cellName}: source "${cell.source}" has no Nix toolchain (known: ${concatStringsSep ", " (builtins.attrNames providers)})'');

  spec = engineSpec;
  library = if spec != null then spec.library else null;
  gated = if gatePath != null then gatePath else if library != null then "lib/${library}" else "";
in
lib.makeScope newScope (self: {
  inherit cellName cell spillway pins backend;

  toolchain = self.callPackage provider { };

  # The environment matrix/compile.sh reads (as checker/spillway/matrix/'s
  # recipe_environment sets it), plus the usual names for other build systems.
  cellEnv = rec {
    SPW_CXX = "${self.toolchain}/bin/${cell.cxx}";
    SPW_TARGETS = concatStringsSep " " cell.targets;
    SPW_COV = cell.code_object_version or "";
    SPW_COMPRESS = if cell.compress or false then "1" else "0";
    SPW_FLAGS = concatStringsSep " " (cell.flags or [ ]);
    SPILLWAY_CELL = cellName;
    CXX = SPW_CXX;
    HIPCXX = SPW_CXX;
    ROCM_PATH = self.toolchain.rocmPath or "${self.toolchain}";
    HIP_DEVICE_LIB_PATH = self.toolchain.deviceLibPath or "${self.toolchain}/amdgcn/bitcode";
  } // lib.optionalAttrs (backend != null) {
    # The back end (matrix/compile.sh's explicit steps; recipe_environment sets the same).
    SPW_BACKEND_LIBRARY = self.toolchain.backendLibrary;
    SPW_BACKEND_PRELOAD = self.toolchain.backendPreload;
    SPW_BACKEND_HELPER = self.toolchain.backendHelper;
    SPW_BACKEND_DROP_ATTRIBUTES = self.toolchain.dropAttributes;
    SPW_PYTHON = "${self.toolchain}/bin/python3";
    SPW_LLD = "${self.toolchain}/bin/ld.lld-${toString cell.clang}";
    SPW_BUNDLER = "${self.toolchain}/bin/clang-offload-bundler-${toString cell.clang}";
  };

  # Only the files the build reads, so a change elsewhere (a baseline, the
  # checker, the docs) does not rebuild the engine.
  engineSrc =
    if spec == null then src
    else
      let
        root = toString src;
        wanted = spec.sources ++ (spec.headers or [ ]) ++ [ spec.recipe ];
        keep = path: _type:
          let rel = lib.removePrefix (root + "/") (toString path);
          in builtins.any (w: rel == w || lib.hasPrefix (rel + "/") w || lib.hasPrefix (w + "/") rel) wanted;
      in
      builtins.path { path = src; name = "engine-source"; filter = keep; };

  # cells.toml's [engine]: every source compiled by the recipe ...
  kernels = if spec == null then null else self.callPackage
    ({ stdenvNoCC, bash, toolchain, cellEnv, engineSrc }:
      stdenvNoCC.mkDerivation (cellEnv // {
        name = "kernels-${cellName}";
        src = engineSrc;
        nativeBuildInputs = [ bash ];
        hardeningDisable = [ "all" ];
        dontConfigure = true;
        dontFixup = true;
        buildPhase = ''
          runHook preBuild
          SPW_INCLUDE=${concatMapStringsSep ":" (h: "$PWD/${h}") (spec.headers or [ ])}
          export SPW_INCLUDE
          mkdir -p "$out/obj"
          for source in ${escapeShellArgs spec.sources}; do
            echo "${cellName}: compile $source"
            bash ${escapeShellArg spec.recipe} compile "$source" "$out/obj/$(basename "$source").o"
          done
          runHook postBuild
        '';
        installPhase = "true";
      })) { };

  # ... and linked into the engine library, in cells.toml's order.  With a
  # `build` command instead, that command builds everything into $out.
  engine = self.callPackage
    ({ stdenvNoCC, bash, toolchain, cellEnv, engineSrc, kernels }:
      stdenvNoCC.mkDerivation (cellEnv // {
        name = "engine-${cellName}";
        src = engineSrc;
        nativeBuildInputs = [ bash toolchain ];
        hardeningDisable = [ "all" ];
        dontConfigure = true;
        dontFixup = true;
        buildPhase =
          if spec != null then ''
            runHook preBuild
            mkdir -p "$out/lib"
            echo "${cellName}: link ${library}"
            bash ${escapeShellArg spec.recipe} link "$out/lib/${library}" \
              ${concatMapStringsSep " " (s: "${kernels}/obj/${baseNameOf s}.o") spec.sources}
            runHook postBuild
          ''
          else if build != null then build
          else throw "cell ${cellName}: give mkKernelChecks either a cells file with an [engine] table or `build`";
        installPhase = "true";
        passthru = { inherit kernels toolchain; };
      })) { };

  # spillway report of the engine: JSON (every kernel) and the text listing.
  report = self.callPackage
    ({ runCommand, engine }:
      runCommand "report-${cellName}" { nativeBuildInputs = [ spillway ]; } ''
        mkdir -p "$out"
        spillway report --all --json -o "$out/report.json" ${engine}/${gated}
        spillway report --all ${engine}/${gated} > "$out/report.txt"
        cat "$out/report.txt"
      '') { };

  # The gate: spillway check of the engine against the cell's baseline.
  check = self.callPackage
    ({ runCommand, python3, engine, toolchain }:
      runCommand "kernel-resources-${cellName}" { nativeBuildInputs = [ spillway python3 ]; } (
        if baselineFile == null then ''
          {
            echo "kernel-resources-${cellName}: no baseline: ${baselinePath} is not in this flake."
            echo "A baseline can only be written where the cell's toolchain runs (${toolchain.description})."
            echo "There, from the project root, run:"
            echo "    nix run '.#\"baseline-${cellName}\"'"
            echo "then review ${baselinePath} and git add it (a flake sees only files git tracks)."
            echo "Never commit a baseline that another toolchain produced."
          } >&2
          exit 1
        '' else ''
          mkdir -p "$out"
          echo "kernel-resources-${cellName}: ${toolchain.description}"
          echo "spillway check ${gated} --baseline ${baselinePath}"
          status=0
          spillway check ${engine}/${gated} --baseline ${baselineFile} \
            --json -o "$out/check.json" --junit "$out/junit.xml" --suite ${escapeShellArg cellName} \
            > "$out/check.txt" 2>&1 || status=$?
          cat "$out/check.txt"
          if [ "$status" != 0 ]; then
            # The verdict again, short: Nix shows only the last lines of a failed build.
            echo ""
            echo "kernel-resources-${cellName} FAILED: ${gated} against ${baselinePath} (spillway check exit $status)"
            if [ -f "$out/check.json" ]; then
              python3 - "$out/check.json" <<'PY'
          import json, sys
          result = json.load(open(sys.argv[1]))
          kernels = sorted({"%s [%s]" % (f["name"], f["target"]) for f in result["failures"]})
          print("%d kernel%s over the baseline: %s" % (len(kernels), "" if len(kernels) == 1 else "s", "; ".join(kernels)))
          gone = ["target " + t["target"] for t in result.get("removed_targets", [])]
          gone += ["%s [%s]" % (k["name"], k["target"]) for k in result["removed"]]
          if gone:
              print("no longer built: " + "; ".join(gone))
          print(result["sentence"])
          PY
            else
              tail -n 3 "$out/check.txt"
            fi
            echo "Intended? Where this toolchain runs: nix run '.#\"baseline-${cellName}\"' -- --allow KERNEL --reason WHY"
            echo "(a kernel or target no longer built: --allow-removed KERNEL or --allow-removed-target TARGET --reason WHY)"
            exit 1
          fi
        '')) { };

  # nix run .#baseline-<cell>: build the engine with this toolchain and write
  # (or tighten) its baseline in the working tree.
  baselineApp = self.callPackage
    ({ writeShellApplication, coreutils, gnused, engine, toolchain }:
      writeShellApplication {
        name = "baseline-${cellName}";
        runtimeInputs = [ spillway coreutils gnused ];
        text = ''
          if [ ! -f flake.nix ]; then
            echo "baseline-${cellName}: run this from the project root (where flake.nix is)" >&2
            exit 2
          fi
          compiler=$(${toolchain}/bin/${cell.cxx} --version | sed -n 1p)
          note="cell ${cellName}: written by nix run .#baseline-${cellName} from ${gated} built with $compiler (${toolchain.description}; targets ${concatStringsSep ", " cell.targets}${optionalString (cell ? code_object_version) ", code object v${if cell.code_object_version == "" then "default" else cell.code_object_version}"}${optionalString (cell.compress or false) ", compressed"})"
          mkdir -p "$(dirname ${escapeShellArg baselinePath})"
          status=0
          spillway baseline write ${engine}/${gated} -o ${escapeShellArg baselinePath} \
            --note "$note" ${optionalString (cell ? gate) "--gate ${concatStringsSep "," cell.gate}"} "$@" || status=$?
          if [ "$status" = 0 ]; then
            echo "wrote ${baselinePath} from ${engine}/${gated}"
            echo "review it, then: git add ${baselinePath}   (a flake sees only files git tracks)"
          fi
          exit "$status"
        '';
      }) { };

  # nix develop .#<cell>: the cell's compiler on PATH, the recipe's variables set.
  devShell = self.callPackage
    ({ mkShell, bash, toolchain, cellEnv }:
      mkShell (cellEnv // {
        name = "spillway-${cellName}";
        packages = [ toolchain spillway bash ];
        shellHook = ''
          echo "spillway cell ${cellName}: ${toolchain.description}; $SPW_CXX"
        '';
      })) { };
})
