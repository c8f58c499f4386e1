#!/usr/bin/env bash
# Fetch ROCm libraries built by Debian (never committed) for the oracle tests.
#
# For each SUITE:PACKAGE[=VERSION] it reads the suite's Packages.xz index from
# the Debian mirror this machine's apt already uses (the first URIs: line of
# /etc/apt/sources.list.d/*.sources, or $SPILLWAY_DEBIAN_MIRROR), takes the
# package's Filename: and SHA256:, downloads that .deb, checks the hash and
# unpacks it with `dpkg -x` into
#     $SPILLWAY_FIXTURES/<package>_<version>/
# (default /var/cache/spillway-fixtures, outside the checkout).  The .deb is
# removed once unpacked; its SHA-256 stays in <package>_<version>/.sha256
# (and the suite in .suite): the oracle expectations in tests/data/oracle/
# are keyed by the package file's SHA-256.  Idempotent: a package already
# unpacked with the expected hash is left alone.  No chroot is needed: the
# packages are only read.
#
# Usage: scripts/fetch-rocm-libraries.sh [SUITE:PACKAGE[=VERSION] ...]
#   default: the three libraries of issue 9 (see DEFAULT_PACKAGES below).
set -euo pipefail

DEFAULT_PACKAGES=(
  experimental:librocsparse1=7.2.4
  experimental:librocblas5=7.2.4
  sid:librocsparse1=6.4.3
)

CACHE=${SPILLWAY_FIXTURES:-/var/cache/spillway-fixtures}
MIRROR=${SPILLWAY_DEBIAN_MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)}
if [[ -z "$MIRROR" ]]; then
  echo "fetch-rocm-libraries: no Debian mirror (no URIs: line in /etc/apt/sources.list.d/*.sources; set SPILLWAY_DEBIAN_MIRROR)" >&2
  exit 2
fi
mkdir -p "$CACHE/index"

# index SUITE -> path of the uncompressed Packages file (cached for a day)
index() {
  local suite=$1 out="$CACHE/index/$1-Packages"
  if [[ ! -s "$out" || -n "$(find "$out" -mmin +1440 2>/dev/null)" ]]; then
    curl -fsSL --retry 3 "$MIRROR/dists/$suite/main/binary-amd64/Packages.xz" -o "$out.xz.tmp"
    xz -dc "$out.xz.tmp" > "$out.tmp"
    mv "$out.tmp" "$out"
    rm -f "$out.xz.tmp"
  fi
  echo "$out"
}

# stanza PACKAGES_FILE PACKAGE VERSION_PREFIX -> "version filename sha256" of the
# highest version of PACKAGE whose upstream version starts with VERSION_PREFIX
stanza() {
  awk -v pkg="$2" -v want="$3" '
    /^Package: /  { p = $2; v = ""; f = ""; s = "" }
    /^Version: /  { v = $2 }
    /^Filename: / { f = $2 }
    /^SHA256: /   { s = $2 }
    /^$/ {
      if (p == pkg && f != "") {
        u = v; sub(/^[0-9]+:/, "", u)
        if (want == "" || index(u, want) == 1) print v, f, s
      }
      p = ""
    }
    END { if (p == pkg && f != "") print v, f, s }
  ' "$1" | sort -V | tail -n 1
}

fetch_one() {
  local spec=$1 suite pkg want packages line version filename sha dest deb
  suite=${spec%%:*}; pkg=${spec#*:}; want=""
  if [[ "$pkg" == *=* ]]; then want=${pkg#*=}; pkg=${pkg%%=*}; fi
  packages=$(index "$suite")
  line=$(stanza "$packages" "$pkg" "$want")
  if [[ -z "$line" ]]; then
    echo "fetch-rocm-libraries: $pkg${want:+ $want} is not in $MIRROR $suite" >&2
    return 2
  fi
  read -r version filename sha <<<"$line"
  version=${version#*:}
  dest="$CACHE/${pkg}_${version}"
  deb="$dest.deb"
  if [[ -f "$dest/.sha256" && "$(cat "$dest/.sha256")" == "$sha" ]]; then
    echo "$pkg $version ($suite): already in $dest"
    return 0
  fi
  if [[ ! -f "$deb" ]] || ! echo "$sha  $deb" | sha256sum -c --quiet - 2>/dev/null; then
    echo "$pkg $version ($suite): downloading $filename"
    curl -fsSL --retry 3 "$MIRROR/$filename" -o "$deb.tmp"
    if ! echo "$sha  $deb.tmp" | sha256sum -c --quiet -; then
      rm -f "$deb.tmp"
      echo "fetch-rocm-libraries: $filename: SHA256 does not match the $suite index" >&2
      return 2
    fi
    mv "$deb.tmp" "$deb"
  fi
  rm -rf "$dest.tmp"
  mkdir -p "$dest.tmp"
  dpkg -x "$deb" "$dest.tmp"
  echo "$sha" > "$dest.tmp/.sha256"
  echo "$suite" > "$dest.tmp/.suite"
  rm -rf "$dest"
  mv "$dest.tmp" "$dest"
  rm -f "$deb"           # the hash is kept in $dest/.sha256
  echo "$pkg $version ($suite): unpacked in $dest"
}

specs=("$@")
[[ ${#specs[@]} -eq 0 ]] && specs=("${DEFAULT_PACKAGES[@]}")
status=0
for spec in "${specs[@]}"; do
  fetch_one "$spec" || status=2
done
exit $status
