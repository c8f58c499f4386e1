#!/usr/bin/env bash
# Fetch wheels from PyPI that the tests read as real inputs (never committed):
#     $SPILLWAY_FIXTURES/pypi/<wheel>   (default /var/cache/spillway-fixtures, outside the checkout)
# mojolearn-amd 0.8.62: seven shared libraries, six of which keep 4,502 AMDGPU
# code objects as data in .rodata (tests/unit/formats/test_embedded.py).
# The SHA-256 is pinned; a wheel already there with that hash is left alone.
set -euo pipefail

CACHE=${SPILLWAY_FIXTURES:-/var/cache/spillway-fixtures}/pypi
WHEELS=(
  "mojolearn-amd==0.8.62 mojolearn_amd-0.8.62-py3-none-manylinux_2_35_x86_64.whl"
)
mkdir -p "$CACHE"
for line in "${WHEELS[@]}"; do
  read -r requirement file _ <<<"$line"
  expected=$(grep -F "$file" "$(dirname "${BASH_SOURCE[0]}")/pypi-fixtures.sha256" | awk '{print $1}')
  if [[ -f "$CACHE/$file" ]] && echo "$expected  $CACHE/$file" | sha256sum --quiet -c - 2>/dev/null; then
    continue
  fi
  tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
  python3 -m pip download -q --disable-pip-version-check --no-deps "$requirement" -d "$tmp"
  if ! echo "$expected  $tmp/$file" | sha256sum --quiet -c -; then
    echo "fetch-pypi-fixtures: $file does not have the pinned SHA-256 $expected" >&2
    rm -rf "$tmp"
    exit 1
  fi
  mv "$tmp/$file" "$CACHE/$file"
  rm -rf "$tmp"
done
