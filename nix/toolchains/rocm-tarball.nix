# A ROCm release nixpkgs does not have (ROCm 10 / AMD clang 23), from AMD's
# release tarball pinned in nix/pins.nix.
#
# The tarball is fetched by `fetchurl` inside this derivation, not as a flake
# input: inputs are fetched when the flake is evaluated, and this file is
# ~1.8 GB.  Here it is downloaded only when a cell of this toolchain is built
# (or substituted from a binary cache: the output is small next to it).
#
# Only the compiler is kept and patched: lib/llvm (clang, lld, their
# libraries, the clang resource dir), the device-library bitcode, the HIP
# headers and .info/version.  The runtime libraries are not unpacked, so
# nothing here runs patchelf on them (older patchelf breaks TheRock's
# libraries: ROCm/TheRock#6712).  The executables in lib/llvm/bin get Nix's
# dynamic loader; their libraries are found through LD_LIBRARY_PATH set by
# the wrappers in bin/, which also point clang at Nix's glibc and libstdc++
# (the flags mirror mikiadev/hipfire nix/therock-sdk.nix).
{ lib
, stdenv
, stdenvNoCC
, fetchurl
, patchelf
, zlib
, zstd
, ncurses
, libxml2
, runtimeShell
, pins
, cellName
, cell
}:
let
  rocm = toString cell.rocm;
  clang = toString cell.clang;
  known = lib.concatStringsSep ", " (builtins.attrNames pins.rocm);
  pin = pins.rocm.${rocm} or (throw ''
    cell ${cellName}: matrix/cells.toml asks for ROCm ${rocm}, which nixpkgs does not package,
    and nix/pins.nix has no tarball for it (it pins: ${known}).
    Add an entry for "${rocm}" to nix/pins.nix (url, sha256, version, clang).'');
  libPath = lib.makeSearchPath "lib" [ stdenv.cc.cc.lib (lib.getLib zlib) (lib.getLib zstd) (lib.getLib ncurses) (lib.getLib libxml2) ];
in
assert lib.assertMsg (pin.sha256 != null && pin.sha256 != "") ''
  cell ${cellName}: nix/pins.nix has no sha256 for ROCm ${rocm} (${pin.url}).
  Filling it is the only step left: on a machine with network run
    nix store prefetch-file --hash-type sha256 ${pin.url}
  and put the hash it prints into nix/pins.nix.'';
assert lib.assertMsg (toString pin.clang == clang) ''
  cell ${cellName}: matrix/cells.toml says clang ${clang}, but the ROCm ${rocm} tarball pinned in
  nix/pins.nix ships AMD clang ${toString pin.clang}. Fix the cell in matrix/cells.toml, or pin
  the ROCm release that ships clang ${clang}.'';
stdenvNoCC.mkDerivation {
  pname = "rocm-compiler";
  inherit (pin) version;

  src = fetchurl {
    inherit (pin) url sha256;
  };

  nativeBuildInputs = [ patchelf ];
  dontUnpack = true;
  # Leave AMD's files alone apart from what installPhase does.
  dontFixup = true;

  installPhase = ''
    runHook preInstall

    mkdir unpacked
    # One pass over the archive.  tar complains about a pattern that matched
    # nothing new (HIP headers or .info absent in a release, device libraries
    # already under lib/llvm); only a missing compiler is an error.
    tar -xzf "$src" -C unpacked --wildcards \
      '*lib/llvm/*' '*amdgcn/bitcode/*' '*include/hip/*' '*.info/*' \
      || echo "note: not every optional part matched; checking for the compiler"
    clangxx=$(find unpacked -path '*/lib/llvm/bin/clang++' | head -n 1)
    if [ -z "$clangxx" ]; then
      echo "error: ${pin.url} has no lib/llvm/bin/clang++: the tarball layout changed;" >&2
      echo "       update nix/toolchains/rocm-tarball.nix" >&2
      exit 1
    fi
    root=''${clangxx%/lib/llvm/bin/clang++}
    mkdir -p "$out"
    cp -a "$root/." "$out/"
    chmod -R u+w "$out"

    # Nix's loader for the compiler's executables (libraries stay untouched).
    loader=${stdenv.cc.bintools.dynamicLinker}
    for exe in "$out"/lib/llvm/bin/*; do
      [ -f "$exe" ] && [ ! -L "$exe" ] || continue
      if patchelf --print-interpreter "$exe" > /dev/null 2>&1; then
        patchelf --set-interpreter "$loader" "$exe"
      fi
    done

    # Device libraries where clang's --rocm-path looks for them.
    bitcode=$(find "$out" -name ocml.bc | head -n 1)
    if [ -n "$bitcode" ] && [ ! -e "$out/amdgcn/bitcode" ]; then
      mkdir -p "$out/amdgcn"
      ln -s "$(dirname "$bitcode")" "$out/amdgcn/bitcode"
    fi

    # bin/clang, bin/clang++: the AMD compiler, told about Nix's libc,
    # libstdc++ and loader (it knows nothing of Nix on its own).
    host_flags="--gcc-toolchain=${stdenv.cc.cc}"
    for flags in cc-cflags-before libc-cflags libc-crt1-cflags; do
      if [ -f ${stdenv.cc}/nix-support/$flags ]; then
        host_flags="$host_flags $(tr '\n' ' ' < ${stdenv.cc}/nix-support/$flags)"
      fi
    done
    libc=${lib.getLib stdenv.cc.libc}
    link_flags="-fuse-ld=lld -L${stdenv.cc.cc.lib}/lib -L$libc/lib -Wl,--dynamic-linker=$loader -Wl,-rpath,${stdenv.cc.cc.lib}/lib -Wl,-rpath,$libc/lib"
    mkdir -p "$out/bin"
    for tool in clang clang++; do
      cat > "$out/bin/$tool" <<EOF
    #!${runtimeShell}
    LD_LIBRARY_PATH="$out/lib/llvm/lib:${libPath}\''${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
    exec "$out/lib/llvm/bin/$tool" --rocm-path="$out" -Wno-unused-command-line-argument $host_flags "\$@" $link_flags
    EOF
      chmod +x "$out/bin/$tool"
    done

    runHook postInstall
  '';

  # The pin says what the tarball is; check that it is.
  doInstallCheck = true;
  installCheckPhase = ''
    if [ ! -d "$out/lib/llvm/lib/clang/${clang}" ]; then
      echo "error: ${pin.url} has no lib/llvm/lib/clang/${clang}: it is not AMD clang ${clang}" >&2
      ls "$out/lib/llvm/lib/clang" >&2 || true
      exit 1
    fi
    version=$("$out/bin/clang++" --version)
    case "$version" in
      *"clang version ${clang}."*) ;;
      *) echo "error: $out/bin/clang++ --version does not say clang ${clang}: $version" >&2; exit 1 ;;
    esac
    if [ -f "$out/.info/version" ] && ! grep -q "^${pin.version}" "$out/.info/version"; then
      echo "error: ${pin.url}: .info/version is $(cat "$out/.info/version"), the pin says ${pin.version}" >&2
      exit 1
    fi
  '';

  passthru = {
    rocmVersion = pin.version;
    clangMajor = toString pin.clang;
    description = "AMD ROCm ${pin.version} (AMD clang ${toString pin.clang}) from ${pin.url}";
  };
}
