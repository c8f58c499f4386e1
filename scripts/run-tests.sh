#!/usr/bin/env bash
# The test command of the README: install what the tests need, then run them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
exec python3 -m pytest -q "$@"
