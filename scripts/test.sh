#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the whole test suite: lint, types, tests.
# Extra arguments are passed to pytest, e.g. scripts/test.sh tests/filesystem -x
# WS_TEST_WORKERS: the number of pytest-xdist workers (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
V=.venv/bin
echo "[test] ruff"; $V/ruff check ws_jupyter tests bench
echo "[test] mypy"; $V/mypy
# two workers (pytest-xdist); a test file, or all the browser test files, run on one worker
# (tests/conftest.py: BROWSER_FILES). `-n 0` in the arguments runs the tests in this process.
echo "[test] pytest"; exec $V/python -m pytest -q -ra --durations=25 -n "${WS_TEST_WORKERS:-2}" --dist loadfile "$@"
