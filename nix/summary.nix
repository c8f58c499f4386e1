# The matrix's fan-in: one derivation that needs every Nix cell's engine and
# report, and writes the comparison `spillway matrix compare --summary`
# makes on one machine (summary.json, spillway.matrix-summary; summary.md,
# the Markdown a pull request shows), with every cell's report beside it.
# Building it builds the cells first, wherever Nix sends each derivation
# (remote builders, Hydra); this derivation only reads their outputs.
#
# `spillway matrix compare` reads BUILD/<cell>/<library>, the layout
# `spillway matrix build` writes, so the engines are linked into that layout
# here; the reports are copied as reports/<cell>.json and .txt.
{ lib
, runCommand
, spillway
, cellsFile      # the cells file (matrix/cells.toml) as a path
, library        # the [engine] table's library, e.g. libengine.so
, cells          # cell name -> the cell's scope (nix/cell.nix)
}:
let
  inherit (lib) concatMapStringsSep escapeShellArg;
  names = builtins.attrNames cells;
in
runCommand "matrix-summary" {
  nativeBuildInputs = [ spillway ];
  passthru = { cells = names; };
} ''
  mkdir -p build "$out/reports"
  ${concatMapStringsSep "\n" (name: let cell = cells.${name}; in ''
    if [ ! -f ${cell.engine}/lib/${escapeShellArg library} ]; then
      echo "matrix-summary: ${cell.engine} has no lib/${library}" >&2
      exit 1
    fi
    mkdir -p build/${escapeShellArg name}
    ln -s ${cell.engine}/lib/${escapeShellArg library} build/${escapeShellArg name}/${escapeShellArg library}
    cp ${cell.report}/report.json "$out/reports/"${escapeShellArg "${name}.json"}
    cp ${cell.report}/report.txt "$out/reports/"${escapeShellArg "${name}.txt"}
  '') names}
  # No cell names: every built cell (here, exactly the Nix cells, each
  # checked above) in the cells file's order, as `spillway matrix run` shows
  # them.  --root: nothing is read from it (compare reads only the builds).
  mkdir root
  for format in json markdown; do
    case $format in json) file=summary.json ;; markdown) file=summary.md ;; esac
    spillway matrix compare --cells ${cellsFile} --root root --build-dir build --summary \
      --format "$format" -o "$out/$file"
  done
  cat "$out/summary.md"
''
