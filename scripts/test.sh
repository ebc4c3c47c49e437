#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the whole test suite: lint, types, tests.
# Extra arguments are passed to pytest, e.g. scripts/test.sh tests/filesystem -x
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
V=.venv/bin
echo "[test] ruff"; $V/ruff check ws_jupyter tests bench
echo "[test] mypy"; $V/mypy
echo "[test] pytest"; exec $V/python -m pytest -q -ra --durations=25 "$@"
