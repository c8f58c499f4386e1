#!/usr/bin/env bash
# Fetch the SARIF 2.1.0 JSON schema (OASIS, rtm.5) that the tests validate
# spillway's SARIF logs against.  Microsoft's @microsoft/jest-sarif package
# on npm (MIT) carries a copy (lib/schemas/sarif-2.1.0-rtm.5.json); it is
# taken from there with npm into tests/.cache/ (git-ignored), not committed.
# The package's tarball is pinned by its SHA-256.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=tests/.cache/sarif-2.1.0-rtm.5.json
package=@microsoft/jest-sarif@1.0.0-beta.0
sha256=748e2c3d1a842e7bb258416685c7ea3a0da40005b72267b2052c2856d48ad102
[ -s "$out" ] && exit 0
command -v npm >/dev/null || { apt-get install -y -qq npm >/dev/null; }
mkdir -p tests/.cache
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$package" >/dev/null)
tarball=$(ls "$work"/*.tgz)
echo "$sha256  $tarball" | sha256sum -c --quiet -
tar -xzf "$tarball" -C "$work" package/lib/schemas/sarif-2.1.0-rtm.5.json
cp "$work/package/lib/schemas/sarif-2.1.0-rtm.5.json" "$out.tmp"
mv "$out.tmp" "$out"
echo "fetched $out from $package on npm"
