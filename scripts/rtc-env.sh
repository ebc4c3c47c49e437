#!/usr/bin/env bash
# A second Jupyter environment with jupyter-collaboration, for the browser tests that run the live
# link with real-time collaboration (tests/jupyter/test_live_rtc.py). It holds the Jupyter server
# side only — the same JupyterLab as .venv plus jupyter-collaboration — and the kernels of those
# tests are .venv's (the ws-jupyter kernelspec names .venv's Python). Idempotent; ~20 s from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RTC="$ROOT/.venv-rtc"
[ -x "$ROOT/.venv/bin/python" ] || { echo "[rtc-env] run scripts/setup.sh first" >&2; exit 2; }
lab=$("$ROOT/.venv/bin/python" -c 'import jupyterlab; print(jupyterlab.__version__)')
want="jupyterlab==$lab jupyter-collaboration>=4"
stamp="$RTC/.ws-jupyter-rtc"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "[rtc-env] creating .venv-rtc ($want)"
rm -rf "$RTC"
"$ROOT/.venv/bin/python" -m venv "$RTC"
# shellcheck disable=SC2086
"$RTC/bin/python" -m pip install -q --disable-pip-version-check $want 2>&1 | grep -v "is ignored: it is neither" || true
"$RTC/bin/python" -c 'import jupyter_collaboration, jupyterlab' || { echo "[rtc-env] install failed" >&2; exit 1; }
echo "$want" > "$stamp"
