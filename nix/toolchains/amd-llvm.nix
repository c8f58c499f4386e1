# The toolchain of a cell with a back end (matrix/cells.toml `backend`): AMD's
# LLVM from a Python wheel runs the optimizer and the AMDGPU code generator,
# an upstream clang is the front end, device linker and bundler.
#
#   wheel      the wheel, a fixed-output derivation (fetchurl by cells.toml's url
#              and sha256: a wheel whose hash differs stops the build)
#   library    the wheel's library taken out of the zip (never pip-installed)
#   forwarder  librocm_sysdeps_{z,zstd}.so.1 (matrix/sysdeps/) for a library that
#              needs them (`sysdeps = true`), built here with the stdenv's C compiler
#              against nixpkgs' zlib and zstd
#   toolchain  bin/<cxx>, ld.lld-N, clang-offload-bundler-N, llvm-objcopy (llvmPackages_N of the
#              front end's major), python3 (runs matrix/amd_llvm.py), and the
#              library; building it loads the library and checks that it names
#              the commit cells.toml pins.
#
# Only the back end is AMD's: AMD clang, comgr and AMD's lld are on no package, so
# the front end is nixpkgs' upstream clang (under the test stand-in nixpkgs,
# tests/nix/nixpkgs, the host's Debian clang 22, as for every cell there).
{ lib
, stdenv
, runCommand
, fetchurl
, python3
, zlib
, zstd
, llvmPackages_22 ? null
, llvmPackages_23 ? null
, cellName
, cell
, backend
}:
let
  clang = toString cell.clang;
  llvmPackages = { "22" = llvmPackages_22; "23" = llvmPackages_23; }.${clang} or null;
  helper = ../../matrix/amd_llvm.py;

  wheel = fetchurl {
    name = backend.wheel;
    url = backend.url;
    sha256 = backend.sha256;
  };

  library = runCommand "amd-llvm-${backend.name}" { nativeBuildInputs = [ python3 ]; } ''
    python3 - ${wheel} ${lib.escapeShellArg backend.library} "$out" <<'PY'
    import os, sys, zipfile
    wheel, member, out = sys.argv[1:]
    with zipfile.ZipFile(wheel) as archive:
        archive.extract(member, out)
    os.chmod(os.path.join(out, member), 0o555)
    PY
  '';

  forwarder = stdenv.mkDerivation {
    name = "rocm-sysdeps-forwarder";
    src = ../../matrix/sysdeps;
    buildInputs = [ zlib zstd ];
    dontConfigure = true;
    buildPhase = ''
      mkdir -p "$out/lib"
      cc -O2 -fPIC -shared -Wall -Wextra -Werror -DSPW_SYSDEPS_Z forwarder.c \
        -Wl,--version-script=z.map -Wl,-soname,librocm_sysdeps_z.so.1 \
        -L${lib.getLib zlib}/lib -Wl,-rpath,${lib.getLib zlib}/lib -o "$out/lib/librocm_sysdeps_z.so.1" -l:libz.so.1 -ldl
      cc -O2 -fPIC -shared -Wall -Wextra -Werror -DSPW_SYSDEPS_ZSTD forwarder.c \
        -Wl,--version-script=zstd.map -Wl,-soname,librocm_sysdeps_zstd.so.1 \
        -L${lib.getLib zstd}/lib -Wl,-rpath,${lib.getLib zstd}/lib -o "$out/lib/librocm_sysdeps_zstd.so.1" -l:libzstd.so.1 -ldl
    '';
    installPhase = "true";
  };

  sysdeps = backend.sysdeps or false;
  libraryPath = "${library}/${backend.library}";
  preload = if sysdeps then "${forwarder}/lib" else "";
in
assert lib.assertMsg (llvmPackages != null) ''
  cell ${cellName}: the front end is clang ${clang}; this flake knows llvmPackages_22 and _23 only.'';
assert lib.assertMsg (toString cell.rocm == backend.rocm) ''
  cell ${cellName}: matrix/cells.toml says ROCm ${toString cell.rocm}, its back end ${backend.name} is ROCm ${backend.rocm}.'';
assert lib.assertMsg (builtins.fromJSON clang <= builtins.fromJSON backend.llvm) ''
  cell ${cellName}: the front end clang ${clang} is newer than the back end ${backend.name}'s AMD LLVM ${backend.llvm}
  (bitcode is read forward only).'';
runCommand "toolchain-amd-llvm-${backend.name}-clang${clang}"
{
  nativeBuildInputs = [ python3 ];
  passthru = {
    rocmVersion = backend.rocm;
    clangMajor = clang;
    backendLibrary = libraryPath;
    backendPreload = preload;
    backendHelper = "${helper}";
    dropAttributes = builtins.concatStringsSep " " (backend.drop_attributes or [ ]);
    inherit wheel library forwarder;
    description = "AMD LLVM ${backend.llvm} of ROCm ${backend.rocm} (${backend.package} ${backend.version}) behind upstream clang ${clang}";
  };
} ''
  mkdir -p "$out/bin"
  ln -s ${llvmPackages.clang}/bin/clang++ "$out/bin/${cell.cxx}"
  ln -s ${llvmPackages.clang}/bin/clang "$out/bin/clang-${clang}"
  ln -s ${llvmPackages.lld}/bin/ld.lld "$out/bin/ld.lld-${clang}"
  ln -s ${llvmPackages.clang-unwrapped}/bin/clang-offload-bundler "$out/bin/clang-offload-bundler-${clang}"
  # The bundler runs llvm-objcopy from its own folder (or PATH).
  ln -s ${llvmPackages.llvm}/bin/llvm-objcopy "$out/bin/llvm-objcopy"
  ln -s ${python3}/bin/python3 "$out/bin/python3"
  # The library loads (with its forwarder) and names the commit cells.toml pins.
  found=$(python3 ${helper} probe --library ${libraryPath} ${lib.optionalString sysdeps "--preload ${preload}"})
  case "$found" in
    *'"commit": "${backend.commit}"'*) echo "${cellName}: $found" ;;
    *) echo "error: cell ${cellName}: ${libraryPath} is not AMD LLVM commit ${backend.commit}: $found" >&2; exit 1 ;;
  esac
''
