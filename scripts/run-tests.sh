#!/usr/bin/env bash
# The test command of the README (and .ci/run): install what the tests need, run ruff and
# mypy (pyproject.toml), then the tests in SPILLWAY_TEST_WORKERS pytest-xdist workers (2 by
# default, the CI machine's cores; 0 runs them in this process).  Tests are grouped per file and
# per big session fixture (tests/conftest.py), so each of those runs once.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
python3 -m ruff check
python3 -m mypy
exec python3 -m pytest -q -n "${SPILLWAY_TEST_WORKERS:-2}" --dist loadgroup --no-loadscope-reorder --durations=10 "$@"
