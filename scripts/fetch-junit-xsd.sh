#!/usr/bin/env bash
# Fetch the Jenkins xunit plugin's JUnit schema (junit-10.xsd) that the tests
# validate spillway's JUnit files against.  pytest's source distribution on
# PyPI carries a copy (testing/example_scripts/junit-10.xsd); it is taken
# from there with pip into tests/.cache/ (git-ignored), not committed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=tests/.cache/junit-10.xsd
version=8.3.3
[ -s "$out" ] && exit 0
mkdir -p tests/.cache
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --disable-pip-version-check --no-binary :all: --no-deps "pytest==$version" -d "$work"
tar -xzf "$work/pytest-$version.tar.gz" -C "$work" "pytest-$version/testing/example_scripts/junit-10.xsd"
cp "$work/pytest-$version/testing/example_scripts/junit-10.xsd" "$out.tmp"
mv "$out.tmp" "$out"
echo "fetched $out from pytest $version's source distribution"
