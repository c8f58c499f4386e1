#!/usr/bin/env bash
# The test command of the README (and .ci/run): install what the tests need, run ruff and
# mypy (pyproject.toml), then the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
python3 -m ruff check
python3 -m mypy
exec python3 -m pytest -q "$@"
