# spillway, the Python package, built with nixpkgs' Python tooling from
# pyproject.toml (setuptools).  Name, version and description come from
# pyproject.toml; the dependency list below is the one place Nix names them
# (nixpkgs attribute names, which differ from PyPI names in places).
{ lib, python3Packages, src }:
let
  # Read from the flake's own tree, not from `src`: `src` is a filtered copy,
  # and `nix flake check --no-build` evaluates without writing it.
  project = (builtins.fromTOML (builtins.readFile ../pyproject.toml)).project;
in
python3Packages.buildPythonApplication {
  pname = project.name;
  inherit (project) version;
  pyproject = true;
  inherit src;

  build-system = [ python3Packages.setuptools ];
  dependencies = with python3Packages; [
    pyelftools
    pydantic
    rich
    zstandard
    cxxfilt
    orjson
    ijson
    msgspec
    numpy
  ];

  # The test suite runs in its own check (flake.nix, checks.tests), with the
  # repository's tests/ folder; the package source holds only checker/.
  doCheck = false;
  pythonImportsCheck = [ "spillway" ];

  meta = {
    inherit (project) description;
    license = lib.licenses.mit;
    mainProgram = "spillway";
  };
}
