# Stand-in for the part of nixpkgs spillway's flake uses, for `nix flake
# check` on Nix 2.8 with no network (tests/unit/matrix/test_flake.py).  Same attribute
# names as nixpkgs; every derivation is built by /bin/sh from this machine's
# tools, so the builds are impure and need `sandbox = false`.
#
#   rocmPackages     claims ROCm 7.2.3 / LLVM 22 (what nixpkgs-unstable has);
#                    its compiler is the host's Debian clang++-22.
#   fetchurl         ignores the URL and returns a small tarball laid out like
#                    AMD's TheRock tarball (lib/llvm/bin/clang++, .info/version,
#                    lib/llvm/lib/clang/<major>); its clang++ is the host's
#                    clang++-22 and says "clang version 23.0.0" for --version
#                    (host.json's tarballClang changes what it claims).
#   fetchurl of a .whl  a fixed-output derivation (the cells file's sha256) that
#                    copies the wheel of that name from host.json's `wheels` folder
#                    (the one scripts/install-toolchains.sh downloaded into): Nix
#                    checks the hash as it would a download's.
#   llvmPackages_22  the host's Debian clang 22, ld.lld-22 and clang-offload-bundler-22
#                    (the front end of the AMD LLVM cells)
#   python3          the host python3 (which has spillway's dependencies from
#                    `pip install -e .[test]`); buildPythonApplication installs
#                    the source's packages for it as setuptools would (the host
#                    has no `wheel`, so no real PEP 517 build offline).
#
# `host` says where the host tools are (tests write ./host.json).
# Test-only: nothing shipped depends on this file.
{ system, lib, host }:
let
  inherit (lib) concatMapStringsSep escapeShellArg makeBinPath optionalString;

  hostPath = "/usr/local/bin:/usr/bin:/bin";

  # A derivation built by /bin/sh with only the given inputs' bin/ on PATH
  # (and our copies of the host's basic tools).
  shDerivation = { name, script, inputs ? [ ], env ? { } }:
    derivation (env // {
      inherit name system;
      builder = "/bin/sh";
      args = [ "-c" ''
        set -e
        PATH=${makeBinPath (inputs ++ [ coreutils ])}
        export PATH
        export HOME=/homeless-shelter TMPDIR="$NIX_BUILD_TOP" TMP="$NIX_BUILD_TOP" TEMP="$NIX_BUILD_TOP"
        runHook() { :; }
        ${script}
      '' ];
    });

  # Plain string/number/path/derivation attributes become the builder's
  # environment, as in stdenv.mkDerivation; functions and sets do not.
  envOf = attrs:
    lib.filterAttrs (n: v: !(builtins.isFunction v || (builtins.isAttrs v && !(v ? outPath))))
      (removeAttrs attrs [ "passthru" "meta" "env" "name" "pname" "version" "system" "builder" "args" ])
    // (attrs.env or { });

  # Host tools a build script may call, as symlinks (resolved at build time:
  # evaluation is pure and cannot look at the host).
  hostTools = name: tools: derivation {
    inherit name system;
    builder = "/bin/sh";
    args = [ "-c" ''
      set -e
      PATH=${hostPath}
      mkdir -p "$out/bin"
      for tool in ${lib.escapeShellArgs tools}; do
        found=$(command -v "$tool" || true)
        if [ -n "$found" ]; then ln -s "$found" "$out/bin/$tool"; fi
      done
      ln -s /bin/sh "$out/bin/sh"
    '' ];
  };

  coreutils = hostTools "coreutils" [
    "basename" "cat" "chmod" "cmp" "cp" "cut" "date" "diff" "dirname" "echo" "env" "expr" "false"
    "find" "grep" "head" "id" "ln" "ls" "mkdir" "mktemp" "mv" "od" "printf" "readlink" "rm"
    "sed" "sha256sum" "sort" "tail" "tee" "test" "touch" "tr" "true" "uname" "wc" "xargs"
    "tar" "gzip" "file" "bash"
  ];

  # A directory that is the host's /usr, for places nixpkgs would name a
  # store path of glibc or gcc.
  hostUsr = name: derivation {
    inherit name system;
    builder = "/bin/sh";
    args = [ "-c" "/bin/ln -s /usr $out" ];
  };

  mkDerivation = { cc ? null }: attrs:
    let
      name = attrs.name or "${attrs.pname}-${attrs.version}";
      inputs = (attrs.nativeBuildInputs or [ ]) ++ (attrs.buildInputs or [ ])
        ++ (attrs.propagatedBuildInputs or [ ]) ++ lib.optional (cc != null) cc;
      phase = n: optionalString (attrs ? ${n}) attrs.${n};
      unpack =
        if attrs ? unpackPhase then attrs.unpackPhase
        else if (attrs.dontUnpack or false) || !(attrs ? src) then ""
        else ''
          if [ -d "$src" ]; then cp -r "$src" source; else mkdir source; tar -xf "$src" -C source; fi
          chmod -R u+w source
          cd source
        '';
      script =
        if attrs ? buildCommand then attrs.buildCommand
        else ''
          ${unpack}
          ${phase "postUnpack"}
          ${phase "postPatch"}
          ${phase "preBuild"}
          ${phase "buildPhase"}
          ${phase "postBuild"}
          ${phase "preInstall"}
          ${phase "installPhase"}
          ${phase "postInstall"}
          ${optionalString (attrs.doCheck or false) (phase "checkPhase")}
          ${optionalString (attrs.doInstallCheck or false) (phase "installCheckPhase")}
        '';
      drv = shDerivation { inherit name script inputs; env = envOf attrs; };
    in
    drv // (attrs.passthru or { }) // {
      inherit name;
      meta = attrs.meta or { };
      overrideAttrs = f: mkDerivation { inherit cc; } (attrs // (if builtins.isFunction (f attrs) then f attrs attrs else f attrs));
    } // lib.optionalAttrs (attrs ? pname) { inherit (attrs) pname; }
      // lib.optionalAttrs (attrs ? version) { inherit (attrs) version; };

  # stdenv.cc: the host's gcc, with the nix-support files nixpkgs' cc-wrapper has.
  gccUnwrapped = hostUsr "gcc-unwrapped" // { lib = hostUsr "gcc-unwrapped-lib"; version = "host"; };
  glibc = hostUsr "glibc";
  cc = (shDerivation {
    name = "host-cc-wrapper";
    script = ''
      mkdir -p "$out/bin" "$out/nix-support"
      for tool in cc c++ gcc g++ ld ar as nm; do
        found=$(PATH=${hostPath} command -v "$tool")
        ln -s "$found" "$out/bin/$tool"
      done
      for f in cc-cflags-before cc-cflags libc-cflags libc-crt1-cflags libc-ldflags cc-ldflags; do
        : > "$out/nix-support/$f"
      done
      echo ${glibc} > "$out/nix-support/orig-libc"
      echo /lib64/ld-linux-x86-64.so.2 > "$out/nix-support/dynamic-linker"
    '';
  }) // {
    cc = gccUnwrapped;
    libc = glibc;
    isClang = false;
    bintools = { dynamicLinker = "/lib64/ld-linux-x86-64.so.2"; };
  };

  stdenvNoCC = { mkDerivation = mkDerivation { }; hostPlatform.system = system; inherit cc; };
  stdenv = stdenvNoCC // { mkDerivation = mkDerivation { inherit cc; }; };

  runCommandWith = cc': name: env: buildCommand:
    mkDerivation { cc = cc'; } (env // { inherit name buildCommand; });

  writeTextFile = { name, text, executable ? false, destination ? "" }:
    shDerivation {
      inherit name;
      env = { inherit text; passAsFile = [ "text" ]; };
      script = ''
        target="$out${destination}"
        mkdir -p "$(dirname "$target")"
        cp "$textPath" "$target"
        ${optionalString executable "chmod +x \"$target\""}
      '';
    };

  # Host python: a wrapper that keeps PYTHONPATH and adds the given site dirs.
  hostPython = host.python3 or "/usr/bin/python3";
  pythonWith = name: sites: shDerivation {
    inherit name;
    script = ''
      mkdir -p "$out/bin"
      cat > "$out/bin/python3" <<EOF
      #!/bin/sh
      PYTHONPATH=${lib.concatStringsSep ":" sites}\''${PYTHONPATH:+:\$PYTHONPATH} exec ${hostPython} "\$@"
      EOF
      chmod +x "$out/bin/python3"
      ln -s python3 "$out/bin/python"
    '';
  };
  python3 = pythonWith "python3-host" [ ] // {
    pkgs = python3Packages;
    withPackages = f: pythonWith "python3-host-env"
      (map (p: "${p}/${sitePackages}") (builtins.filter (p: p ? pythonModule) (f python3Packages)));
    pythonVersion = "host";
    inherit sitePackages;
  };
  sitePackages = "lib/python-site";

  # Every dependency is already installed in the host python: these only name them.
  hostModule = pname: derivation {
    inherit system;
    name = "python-${pname}-from-host";
    builder = "/bin/sh";
    args = [ "-c" "/bin/mkdir -p $out/${sitePackages}" ];
  } // { inherit pname; pythonModule = python3; };

  # buildPythonApplication / buildPythonPackage: installs `src` for the host
  # python as setuptools would (packages found under
  # [tool.setuptools.packages.find] where, a dist-info, a wrapper per
  # [project.scripts] entry).  The host has setuptools but no `wheel`, so a
  # real PEP 517 build is not possible offline here.  doCheck +
  # pytestCheckHook runs pytest in the source folder against the installed
  # package, as nixpkgs does.  host.pytestArgs (the harness's choice, not
  # the flake's) narrows that run to some of the tests.
  buildPython = attrs:
    let
      self = mkDerivation { inherit cc; } (removeAttrs attrs [ "build-system" "dependencies" "nativeCheckInputs" "pythonImportsCheck" "pytestFlagsArray" "pyproject" "disabledTests" ] // {
        dontUnpack = false;
        buildPhase = ''
          ${hostPython} - "$out" <<'PY'
          import os, shutil, sys, tomllib
          out = sys.argv[1]
          site = os.path.join(out, "${sitePackages}")
          python = "${hostPython}"
          with open("pyproject.toml", "rb") as f:
              meta = tomllib.load(f)
          project = meta["project"]
          find = meta.get("tool", {}).get("setuptools", {}).get("packages", {}).get("find", {})
          os.makedirs(site)
          for where in find.get("where", ["."]):
              for name in sorted(os.listdir(where)):
                  if os.path.isfile(os.path.join(where, name, "__init__.py")):
                      shutil.copytree(os.path.join(where, name), os.path.join(site, name),
                                      ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
          info = os.path.join(site, f"{project['name']}-{project['version']}.dist-info")
          os.makedirs(info)
          with open(os.path.join(info, "METADATA"), "w") as f:
              f.write(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
          os.makedirs(os.path.join(out, "bin"))
          for name, target in project.get("scripts", {}).items():
              module, func = target.split(":")
              path = os.path.join(out, "bin", name)
              with open(path, "w") as f:
                  f.write("#!/bin/sh\n")
                  f.write(f'PYTHONPATH={site}${"$"}{{PYTHONPATH:+:$PYTHONPATH}} exec {python} -c '
                          f'"import sys; from {module} import {func}; sys.exit({func}())" "$@"\n')
              os.chmod(path, 0o755)
          PY
          ${lib.concatMapStringsSep "\n" (m: ''PYTHONPATH="$out/${sitePackages}" ${hostPython} -c "import ${m}"'') (attrs.pythonImportsCheck or [ ])}
        '';
        installPhase = "";
        checkPhase = ''
          PYTHONPATH="$out/${sitePackages}" PYTHONDONTWRITEBYTECODE=1 \
            ${hostPython} -m pytest -p no:cacheprovider ${lib.escapeShellArgs (host.pytestArgs or [ ])}
        '';
        doCheck = (attrs.doCheck or true) && builtins.elem pytestCheckHook (attrs.nativeCheckInputs or [ ]);
      });
    in
    self // {
      pythonModule = python3;
      overridePythonAttrs = f: buildPython (attrs // (if builtins.isFunction f then f attrs else f));
    };

  pytestCheckHook = "pytest-check-hook";

  python3Packages = lib.genAttrs [
    "setuptools" "pyelftools" "msgpack" "pydantic" "rich" "zstandard" "cxxfilt" "orjson" "ijson" "msgspec" "numpy"
    "pytest" "hypothesis" "jsonschema" "pyyaml" "xmlschema" "mypy"
  ] hostModule // {
    buildPythonApplication = buildPython;
    buildPythonPackage = buildPython;
    toPythonApplication = p: p;
    inherit pytestCheckHook python3;
    python = python3;
  };

  # The host's Debian clang, behind a wrapper that finds its own tools and the host linker.
  hostClangxx = host.clangxx or "/usr/bin/clang++-22";
  clangWrapper = { name, claims ? null }: shDerivation {
    inherit name;
    script = ''
      mkdir -p "$out/bin"
      for tool in clang clang++; do
        cat > "$out/bin/$tool" <<EOF
      #!/bin/sh
      ${optionalString (claims != null) ''
      for arg in "\$@"; do
        if [ "\$arg" = --version ]; then
          echo "clang version ${claims} (spillway test stand-in for AMD clang: this is ${hostClangxx})"
          exit 0
        fi
      done
      ''}
      PATH=${hostPath}\''${PATH:+:\$PATH} exec ${hostClangxx} "\$@"
      EOF
        chmod +x "$out/bin/$tool"
      done
    '';
  };

  rocmToolchain = clangWrapper { name = "rocm-toolchain-standin"; } // { version = "22"; };
  rocmPackages = rec {
    llvm = {
      rocm-toolchain = rocmToolchain;
      clang = rocmToolchain;
    };
    rocm-toolchain = rocmToolchain;
    clang = rocmToolchain;
    rocm-device-libs = shDerivation {
      name = "rocm-device-libs-standin";
      script = "mkdir -p $out/amdgcn/bitcode";
    } // { version = "7.2.3"; };
    clr = shDerivation {
      name = "clr-standin";
      script = ''
        mkdir -p "$out/bin" "$out/include/hip"
        ln -s ${rocmToolchain}/bin/clang++ "$out/bin/hipcc"
      '';
    } // {
      version = "7.2.3";
      hipClangPath = "${rocmToolchain}/bin";
      gpuTargets = [ ];
    };
  };

  # fetchurl: a wheel from host.json's folder (fixed-output, checked by Nix), or
  # whatever the URL, a tarball laid out like AMD's (see the header).
  # A missing hash is refused as nixpkgs' fetchurl would refuse it.
  fetchurl = { url, hash ? null, sha256 ? null, name ? baseNameOf url, ... }@args:
    assert lib.assertMsg (hash != null || sha256 != null) "stand-in fetchurl: ${url} has no hash";
    if lib.hasSuffix ".whl" url then fetchWheel args else
    let
      claims = host.tarballClang or "23.0.0";
      tarballClang = clangWrapper { name = "therock-clang-standin"; inherit claims; };
    in shDerivation {
      inherit name;
      script = ''
        mkdir -p tree/lib/llvm/bin tree/lib/llvm/lib/clang/${lib.versions.major claims}/include \
          tree/lib/llvm/amdgcn/bitcode tree/include/hip tree/.info
        cp ${tarballClang}/bin/clang ${tarballClang}/bin/clang++ tree/lib/llvm/bin/
        echo "10.0.0-standin" > tree/.info/version
        : > tree/lib/llvm/amdgcn/bitcode/ocml.bc
        : > tree/include/hip/hip_runtime.h
        tar -czf "$out" -C tree .
      '';
    };

  fetchWheel = { url, sha256, name ? baseNameOf url, ... }: derivation {
    inherit name system;
    builder = "/bin/sh";
    outputHashMode = "flat";
    outputHashAlgo = "sha256";
    outputHash = sha256;
    args = [ "-c" ''
      wheel=${host.wheels or "/nonexistent"}/${name}
      if [ ! -f "$wheel" ]; then
        echo "stand-in fetchurl: $wheel is not here (host.json's wheels: scripts/install-toolchains.sh downloads it)" >&2
        exit 1
      fi
      /bin/cp "$wheel" "$out"
    '' ];
  };

  # Host tools under the names nixpkgs' unversioned packages give them.
  hostAliases = name: aliases: derivation {
    inherit name system;
    builder = "/bin/sh";
    args = [ "-c" ''
      set -e
      /bin/mkdir -p "$out/bin"
      ${lib.concatStrings (lib.mapAttrsToList (alias: tool: "/bin/ln -s /usr/bin/${tool} $out/bin/${alias}\n") aliases)}
    '' ];
  };
  llvmPackages_22 = {
    clang = clangWrapper { name = "clang-22-standin"; } // { version = "22.1.8"; };
    clang-unwrapped = hostAliases "clang-unwrapped-22-host" { clang-offload-bundler = "clang-offload-bundler-22"; };
    lld = hostAliases "lld-22-host" { "ld.lld" = "ld.lld-22"; };
    llvm = hostAliases "llvm-22-host" { llvm-objcopy = "llvm-objcopy-22"; };
  };

  patchelf = hostTools "patchelf-host" [ "patchelf" ];
  gnused = hostTools "gnused-host" [ "sed" ];
  gnutar = hostTools "gnutar-host" [ "tar" ];
  gzip = hostTools "gzip-host" [ "gzip" ];
  findutils = hostTools "findutils-host" [ "find" "xargs" ];
  bash = hostTools "bash-host" [ "bash" ];
  # Libraries the ROCm tarball's compiler links against; the host has them.
  zlib = hostUsr "zlib" // { dev = hostUsr "zlib-dev"; };
  zstd = hostUsr "zstd" // { out = hostUsr "zstd"; };
  ncurses = hostUsr "ncurses";
  libxml2 = hostUsr "libxml2";
  gcc = cc;

  # Lint and format tools the dev shell and `formatter` name.  There is no
  # nixfmt here: the stand-in formatter says so and fails.
  ruff = hostTools "ruff-host" [ "ruff" ];
  nixfmt-tree = writeTextFile {
    name = "nixfmt-tree-standin";
    executable = true;
    destination = "/bin/treefmt";
    text = ''
      #!/bin/sh
      echo "nixfmt-tree stand-in: no nixfmt on this machine" >&2
      exit 1
    '';
  } // { meta.mainProgram = "treefmt"; };
in
lib.fix (self: {
  inherit lib system stdenv stdenvNoCC fetchurl rocmPackages python3 python3Packages llvmPackages_22
    coreutils patchelf gnutar gzip findutils bash zlib zstd ncurses libxml2 gcc writeTextFile gnused
    ruff nixfmt-tree;
  python3Minimal = python3;
  runtimeShell = "/bin/sh";

  runCommand = runCommandWith null;
  runCommandCC = runCommandWith cc;
  runCommandLocal = runCommandWith null;
  runCommandNoCC = runCommandWith null;
  writeText = name: text: writeTextFile { inherit name text; };
  writeShellScript = name: text: writeTextFile {
    inherit name;
    executable = true;
    text = "#!/bin/sh\n${text}";
  };
  writeShellApplication = { name, text, runtimeInputs ? [ ], ... }:
    writeTextFile {
      inherit name;
      executable = true;
      destination = "/bin/${name}";
      text = ''
        #!/bin/sh
        set -eu
        PATH=${makeBinPath (runtimeInputs ++ [ coreutils ])}''${PATH:+:$PATH}
        export PATH
        ${text}
      '';
    } // { meta.mainProgram = name; };

  # `nix develop` cannot use a /bin/sh builder; `nix flake check` only
  # evaluates devShells, and building one writes its environment.
  mkShell = { name ? "shell", packages ? [ ], nativeBuildInputs ? [ ], buildInputs ? [ ], env ? { }, ... }@attrs:
    shDerivation {
      inherit name;
      inputs = packages ++ nativeBuildInputs ++ buildInputs;
      env = envOf (removeAttrs attrs [ "packages" "nativeBuildInputs" "buildInputs" ]) // env;
      script = ''echo "$PATH" > "$out"'';
    };

  callPackage = lib.callPackageWith self;
  newScope = extra: lib.callPackageWith (self // extra);
})
