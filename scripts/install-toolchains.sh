#!/usr/bin/env bash
# Install what the local toolchain matrix needs, if anything is missing, into
# the system each package belongs to (matrix/cells.toml lists every package
# once: a [systems.NAME] table's own packages, and each cell's packages, which
# go into the cell's `system`):
#   - "bookworm" (kind "host"): this Debian 12 machine, through apt-get: the
#     bookworm cells' clang/lld/llvm/clang-tools 15, 16, 19 and 22 (22 from
#     bookworm-security), cmake, the host C++ runtime, Python, mmdebstrap.
#   - "sid-root" (kind "root"): a Debian sid root with experimental on top, made
#     once by mmdebstrap and reused afterwards (clang 23 from sid; clang 24 and
#     Debian's ROCm 7.2.4 from experimental; Nix 2.34).  It lives outside the
#     checkout (default /var/tmp/spillway-sid-root; SPILLWAY_SID_ROOT moves it),
#     so every clone on the machine shares it.  When it is complete the file
#     ROOT/.spillway-ready exists; proc is mounted on ROOT/proc (hipcc reads
#     /proc/self/exe, nix's postinst needs it) whenever this script runs.
#     See ../shared/reference/toolchains-next.md section 2 for the recipe.
#   - back ends ([backends] in cells.toml): AMD's LLVM from the Python package index,
#     for the cells that name one.  Each wheel is downloaded with pip (`pip download
#     --no-deps --only-binary :all: --python-version 3.11`, never installed: the
#     wheels are cp311), its sha256 checked against cells.toml, and its library taken
#     out of the zip into STORE/<package>-<version>/ (STORE: [backend_store], default
#     /var/tmp/spillway-amd-llvm beside the sid root; SPILLWAY_AMD_LLVM moves it).  A
#     back end with sysdeps = true gets the forwarder STORE/sysdeps/librocm_sysdeps_
#     {z,zstd}.so.1 (matrix/sysdeps/, built with the store's forwarder_cc, clang-22).
#     STORE/<package>-<version>/.spillway-ready holds the wheel's sha256 when done.
#
#   scripts/install-toolchains.sh [PACKAGE...]          install what is missing (as root, or
#                                                       through sudo), with extra host PACKAGEs
#   scripts/install-toolchains.sh --check [PACKAGE...]  only list what is missing; exit 1 if anything is
#   scripts/install-toolchains.sh --no-root [...]       the host only: do not make or update roots
#   scripts/install-toolchains.sh --root-path [SYSTEM]  print a root system's path (default sid-root)
#   scripts/install-toolchains.sh --cell NAME [...]     only these cells' packages (repeatable; a CI job of
#                                                       one cell): the host's own packages, and a root only
#                                                       when a cell named builds in it
#
# Settings (environment): SPILLWAY_SID_ROOT (the root's folder), SPILLWAY_NO_ROOT=1 (as
# --no-root), SPILLWAY_DEBIAN_MIRROR (default: the URIs: line of this machine's apt
# sources), SPILLWAY_CELLS (another cells.toml).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cells=${SPILLWAY_CELLS:-$repo/matrix/cells.toml}
check=0
make_roots=1
[ "${SPILLWAY_NO_ROOT:-0}" = 1 ] && make_roots=0
print_root=""
only_cells=()
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1; shift ;;
    --no-root) make_roots=0; shift ;;
    --root-path) print_root=${2:-sid-root}; shift $(( $# > 1 ? 2 : 1 )) ;;
    --cell) [ $# -gt 1 ] || { echo "install-toolchains: --cell needs a cell name" >&2; exit 2; }
            only_cells+=("$2"); shift 2 ;;
    --) shift; break ;;
    -*) echo "install-toolchains: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -f "$cells" ] || { echo "install-toolchains: $cells: no such file" >&2; exit 2; }

# cells.toml -> one line per fact (Python's tomllib: TOML is not for sed):
#   host PACKAGE
#   root SYSTEM PATH SUITE OVERLAY
#   rootpkg SYSTEM SUITE PACKAGE        a cell's package, from SUITE
#   rootextra SYSTEM PACKAGE            the system's own packages (no recommends)
#   rootcc SYSTEM COMMAND               cell compilers to try when the root is made
#   store PATH FORWARDER_CC             where back ends go
#   backend NAME PACKAGE VERSION WHEEL SHA256 LIBRARY SYSDEPS   a back end a wanted cell names
plan=$(python3 - "$cells" ${only_cells[@]+"${only_cells[@]}"} <<'EOF'
import os, sys, tomllib
path, only = sys.argv[1], sys.argv[2:]
try:
    with open(path, "rb") as handle:
        doc = tomllib.load(handle)
except (OSError, tomllib.TOMLDecodeError) as error:
    sys.exit(f"install-toolchains: {path}: {error}")
systems = doc.get("systems") or {"bookworm": {"kind": "host"}}
all_cells = doc.get("cells", {})
for cell_name in only:
    if cell_name not in all_cells:
        sys.exit(f"install-toolchains: --cell {cell_name}: no such cell in {path}")
    if all_cells[cell_name].get("source") != "debian":
        sys.exit(f"install-toolchains: --cell {cell_name}: not a Debian cell (its toolchain comes from Nix)")
wanted = {name: cell for name, cell in all_cells.items() if not only or name in only}
# Roots only some cell asked for builds in (every root when no cell is named).
used = {cell.get("system", "bookworm") for cell in wanted.values() if cell.get("source") == "debian"}
for name, system in systems.items():
    if system.get("kind", "host") != "host" and only and name not in used:
        continue
    if system.get("kind", "host") == "host":
        for package in system.get("packages", []):
            print("host", package)
    else:
        setting = system.get("path_setting", "")
        where = os.environ.get(setting) if setting else None
        print("root", name, where or system["path"], system["suite"], system.get("overlay", "-"))
        for package in system.get("packages", []):
            print("rootextra", name, package)
for cell_name, cell in wanted.items():
    system_name = cell.get("system", "bookworm")
    if cell.get("source") != "debian":
        continue
    if system_name not in systems:
        sys.exit(f"install-toolchains: {path}: cell {cell_name}: unknown system {system_name!r}")
    if systems[system_name].get("kind", "host") == "host":
        for package in cell.get("packages", []):
            print("host", package)
    else:
        suite = cell.get("suite", systems[system_name]["suite"])
        for package in cell.get("packages", []):
            print("rootpkg", system_name, suite, package)
        print("rootcc", system_name, cell["cxx"])
store = doc.get("backend_store", {})
setting = store.get("path_setting", "")
print("store", (os.environ.get(setting) if setting else None) or store.get("path", "/var/tmp/spillway-amd-llvm"),
      store.get("forwarder_cc", "clang-22"))
backends = doc.get("backends", {})
for name in sorted({cell["backend"] for cell in wanted.values() if cell.get("backend")}):
    if name not in backends:
        sys.exit(f"install-toolchains: {path}: unknown backend {name!r}")
    b = backends[name]
    print("backend", name, b["package"], b["version"], b["wheel"], b["sha256"], b["library"],
          "1" if b.get("sysdeps") else "0")
EOF
)

host_packages=()
declare -A root_path root_suite root_overlay
root_names=()
while read -r kind a b c d; do
  case "$kind" in
    host) host_packages+=("$a") ;;
    root) root_names+=("$a"); root_path[$a]=$b; root_suite[$a]=$c; root_overlay[$a]=$d ;;
  esac
done <<< "$plan"
host_packages+=("$@")

if [ -n "$print_root" ]; then
  [ -n "${root_path[$print_root]:-}" ] || { echo "install-toolchains: no root system '$print_root' in $cells" >&2; exit 2; }
  echo "${root_path[$print_root]}"
  exit 0
fi

# The lines of $plan for one root and kind, field N.
plan_field() { awk -v k="$1" -v s="$2" -v n="$3" -v suite="${4:-}" \
  '$1==k && $2==s && (suite=="" || $3==suite) {print $n}' <<< "$plan"; }

installed() {  # installed ADMINDIR PACKAGE
  local status
  status=$(dpkg-query --admindir="$1" -W -f='${Status}' "$2" 2>/dev/null || true)
  [ "$status" = "install ok installed" ]
}

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  sudo=(false)
fi
export DEBIAN_FRONTEND=noninteractive
status=0

# -- the host ------------------------------------------------------------------
missing=()
for package in "${host_packages[@]}"; do
  installed /var/lib/dpkg "$package" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-toolchains: host: all ${#host_packages[@]} packages installed"
elif [ "$check" = 1 ]; then
  echo "install-toolchains: host: missing: ${missing[*]}"
  status=1
elif [ "${sudo[0]:-}" = false ]; then
  echo "install-toolchains: host: missing ${missing[*]}: run as root (or install sudo) to install them" >&2
  exit 1
else
  echo "install-toolchains: host: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "install-toolchains: host: installed ${missing[*]}"
fi

# -- roots ---------------------------------------------------------------------
mirror=${SPILLWAY_DEBIAN_MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)}
no_valid_until=(-o Acquire::Check-Valid-Until=false)

# Every package of root $1 that its dpkg database does not list as installed.
root_missing() {
  local name=$1 package
  for package in $(plan_field rootpkg "$name" 4) $(plan_field rootextra "$name" 3); do
    installed "${root_path[$name]}/var/lib/dpkg" "$package" || echo "$package"
  done
}

mount_proc() {
  mountpoint -q "$1/proc" || "${sudo[@]}" mount -t proc proc "$1/proc"
}

# Refuse to delete a folder something is mounted under (proc, a bind-mounted checkout).
remove_unmounted() {
  local dir=$1
  [ -e "$dir" ] || return 0
  mountpoint -q "$dir/proc" 2>/dev/null && "${sudo[@]}" umount "$dir/proc"
  if findmnt -rn -o TARGET | grep -q "^$dir/"; then
    echo "install-toolchains: $dir has mounts under it; unmount them first:" >&2
    findmnt -rn -o TARGET | grep "^$dir/" >&2
    exit 1
  fi
  "${sudo[@]}" rm -rf --one-file-system "$dir"
}

make_root() {
  local name=$1 dir=${root_path[$1]} suite=${root_suite[$1]} overlay=${root_overlay[$1]}
  local started=$SECONDS base overlay_packages extra lacking
  mapfile -t lacking < <(root_missing "$name")
  if [ -f "$dir/.spillway-ready" ] && [ ${#lacking[@]} -eq 0 ]; then
    if [ "$check" = 0 ]; then mount_proc "$dir"; fi
    echo "install-toolchains: $name: ready at $dir"
    return 0
  fi
  if [ "$check" = 1 ]; then
    if [ -x "$dir/usr/bin/apt-get" ]; then
      echo "install-toolchains: $name: $dir is not complete; missing: ${lacking[*]:-(none; .spillway-ready absent)}"
    else
      echo "install-toolchains: $name: not made yet ($dir)"
    fi
    return 1
  fi
  if [ "${sudo[0]:-}" = false ]; then
    echo "install-toolchains: $name: cannot make $dir: not root and no sudo (its cells will be skipped)" >&2
    return 1
  fi
  command -v mmdebstrap >/dev/null || {
    echo "install-toolchains: $name: cannot make $dir: mmdebstrap is not installed" >&2; return 1; }
  [ -n "$mirror" ] || { echo "install-toolchains: $name: no Debian mirror (set SPILLWAY_DEBIAN_MIRROR)" >&2; return 1; }

  "${sudo[@]}" mkdir -p "$(dirname "$dir")"
  # One maker at a time: others wait here, then find the root ready.
  exec 9>"$dir.lock"
  flock 9
  mapfile -t lacking < <(root_missing "$name")
  if [ -f "$dir/.spillway-ready" ] && [ ${#lacking[@]} -eq 0 ]; then
    mount_proc "$dir"; echo "install-toolchains: $name: ready at $dir (made by another run)"; exec 9>&-; return 0
  fi

  mapfile -t base < <(plan_field rootpkg "$name" 4 "$suite")
  mapfile -t overlay_packages < <(awk -v s="$name" -v suite="$suite" '$1=="rootpkg" && $2==s && $3!=suite {print $4}' <<< "$plan")
  mapfile -t extra < <(plan_field rootextra "$name" 3)

  if [ ! -x "$dir/usr/bin/apt-get" ]; then
    # mmdebstrap into a side folder, renamed when whole: the root folder is
    # either a complete base system or absent.
    remove_unmounted "$dir"
    remove_unmounted "$dir.partial"
    local include
    include=$(IFS=,; echo "${base[*]}")
    echo "install-toolchains: $name: mmdebstrap $suite into $dir (with ${include:-nothing else})"
    "${sudo[@]}" mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
      ${include:+--include="$include"} --components=main "$suite" "$dir.partial" "$mirror"
    "${sudo[@]}" mv "$dir.partial" "$dir"
  fi
  mount_proc "$dir"
  [ -s "$dir/etc/resolv.conf" ] || "${sudo[@]}" cp /etc/resolv.conf "$dir/etc/resolv.conf"
  if [ "$overlay" != - ]; then
    echo "deb $mirror $overlay main" | "${sudo[@]}" tee "$dir/etc/apt/sources.list.d/$overlay.list" >/dev/null
  fi
  "${sudo[@]}" chroot "$dir" apt-get "${no_valid_until[@]}" update -qq
  # The base suite's packages again: mmdebstrap's --include only covers a fresh root.
  [ ${#base[@]} -eq 0 ] || "${sudo[@]}" chroot "$dir" apt-get install -y -qq "${base[@]}"
  if [ ${#overlay_packages[@]} -gt 0 ]; then
    "${sudo[@]}" chroot "$dir" apt-get install -y -qq -t "$overlay" "${overlay_packages[@]}"
  fi
  [ ${#extra[@]} -eq 0 ] || "${sudo[@]}" chroot "$dir" apt-get install -y -qq --no-install-recommends "${extra[@]}"
  "${sudo[@]}" chroot "$dir" apt-get clean

  local compiler
  for compiler in $(plan_field rootcc "$name" 3); do
    local version
    version=$("${sudo[@]}" chroot "$dir" "$compiler" --version)
    echo "install-toolchains: $name: $compiler: ${version%%$'\n'*}"
  done
  mapfile -t lacking < <(root_missing "$name")
  if [ ${#lacking[@]} -gt 0 ]; then
    echo "install-toolchains: $name: still missing after install: ${lacking[*]}" >&2
    return 1
  fi
  date -u +%FT%TZ | "${sudo[@]}" tee "$dir/.spillway-ready" >/dev/null
  echo "install-toolchains: $name: ready at $dir ($((SECONDS - started)) s)"
  exec 9>&-
}

# -- back ends: AMD's LLVM from the package index ---------------------------------
read -r _ store forwarder_cc < <(grep '^store ' <<< "$plan")
forwarder_src=$repo/matrix/sysdeps

# The forwarder: built when missing or when its sources changed (their hash in STORE/sysdeps/.source).
build_forwarder() {
  local out=$store/sysdeps source_hash lib
  source_hash=$(cat "$forwarder_src/forwarder.c" "$forwarder_src/z.map" "$forwarder_src/zstd.map" | sha256sum | cut -d' ' -f1)
  if [ -f "$out/.source" ] && [ "$(cat "$out/.source")" = "$source_hash" ] \
     && [ -f "$out/librocm_sysdeps_z.so.1" ] && [ -f "$out/librocm_sysdeps_zstd.so.1" ]; then
    echo "install-toolchains: sysdeps forwarder: ready at $out"; return 0
  fi
  if [ "$check" = 1 ]; then echo "install-toolchains: sysdeps forwarder: not built ($out)"; return 1; fi
  command -v "$forwarder_cc" >/dev/null || {
    echo "install-toolchains: sysdeps forwarder: $forwarder_cc not found (cells.toml [backend_store] forwarder_cc)" >&2; return 1; }
  rm -rf "$out.partial"; mkdir -p "$out.partial"
  for lib in z zstd; do
    "$forwarder_cc" -O2 -fPIC -shared -Wall -Wextra -Werror "-DSPW_SYSDEPS_${lib^^}" "$forwarder_src/forwarder.c" \
      -fuse-ld=lld "-Wl,--version-script=$forwarder_src/$lib.map" "-Wl,-soname,librocm_sysdeps_$lib.so.1" \
      -o "$out.partial/librocm_sysdeps_$lib.so.1" "-l:lib$lib.so.1" -ldl || {
      echo "install-toolchains: sysdeps forwarder: $forwarder_cc failed on librocm_sysdeps_$lib.so.1" >&2; return 1; }
  done
  echo "$source_hash" > "$out.partial/.source"
  rm -rf "$out"; mv "$out.partial" "$out"
  echo "install-toolchains: sysdeps forwarder: built $out/librocm_sysdeps_{z,zstd}.so.1 with $forwarder_cc"
}

install_backend() {  # NAME PACKAGE VERSION WHEEL SHA256 LIBRARY SYSDEPS
  local name=$1 package=$2 version=$3 wheel=$4 sha256=$5 library=$6 sysdeps=$7
  local dir=$store/$package-$version wheels=$store/wheels found
  [ -n "$store" ] && [ -n "$package" ] && [ -n "$version" ] || { echo "install-toolchains: backend $name: bad plan" >&2; return 1; }
  local forwarder_ok=1
  if [ "$sysdeps" = 1 ]; then build_forwarder || forwarder_ok=0; fi
  # (--check goes on to report the library too)
  [ "$forwarder_ok" = 1 ] || [ "$check" = 1 ] || return 1
  if [ -f "$dir/.spillway-ready" ] && [ "$(cat "$dir/.spillway-ready")" = "$sha256" ] && [ -f "$dir/$library" ]; then
    echo "install-toolchains: backend $name: ready at $dir/$library"; [ "$forwarder_ok" = 1 ]; return
  fi
  if [ "$check" = 1 ]; then echo "install-toolchains: backend $name: not installed ($dir)"; return 1; fi
  mkdir -p "$wheels"
  if [ ! -f "$wheels/$wheel" ] || [ "$(sha256sum "$wheels/$wheel" | cut -d' ' -f1)" != "$sha256" ]; then
    rm -f "$wheels/$wheel"
    echo "install-toolchains: backend $name: downloading $package==$version"
    if ! python3 -m pip download --quiet --no-deps --only-binary :all: --python-version 3.11 \
         --dest "$wheels" "$package==$version" > "$wheels/$package.log" 2>&1; then
      echo "install-toolchains: backend $name: pip download $package==$version failed: $(grep -v '^ *$' "$wheels/$package.log" | tail -1)" >&2
      return 1
    fi
    [ -f "$wheels/$wheel" ] || {
      echo "install-toolchains: backend $name: pip download $package==$version gave no $wheel" >&2; return 1; }
  fi
  found=$(sha256sum "$wheels/$wheel" | cut -d' ' -f1)
  if [ "$found" != "$sha256" ]; then
    mv "$wheels/$wheel" "$wheels/$wheel.rejected"
    echo "install-toolchains: backend $name: $wheel has sha256 $found, cells.toml pins $sha256 (kept as $wheel.rejected)" >&2
    return 1
  fi
  rm -rf "$dir.partial"; mkdir -p "$dir.partial"
  python3 - "$wheels/$wheel" "$library" "$dir.partial" <<'EOF' || { echo "install-toolchains: backend $name: cannot take $library out of $wheel" >&2; return 1; }
import os, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive:
    archive.extract(member, out)
os.chmod(os.path.join(out, member), 0o755)
EOF
  echo "$sha256" > "$dir.partial/.spillway-ready"
  rm -rf "$dir"; mv "$dir.partial" "$dir"
  echo "install-toolchains: backend $name: $package==$version (sha256 checked) -> $dir/$library"
}

while read -r kind name package version wheel sha256 library sysdeps; do
  [ "$kind" = backend ] || continue
  set +e
  (set -e; install_backend "$name" "$package" "$version" "$wheel" "$sha256" "$library" "$sysdeps")
  rc=$?
  set -e
  [ "$rc" = 0 ] || status=1
done <<< "$plan"

for name in "${root_names[@]}"; do
  if [ "$make_roots" = 0 ]; then
    echo "install-toolchains: $name: skipped (--no-root / SPILLWAY_NO_ROOT=1)"
    continue
  fi
  # A subshell outside any `||`, so errexit holds inside make_root.
  set +e
  (set -e; make_root "$name")
  rc=$?
  set -e
  [ "$rc" = 0 ] || status=1
done
exit "$status"
