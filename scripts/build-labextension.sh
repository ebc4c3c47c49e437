#!/usr/bin/env bash
# Builds the JupyterLab extension (labextension/src -> labextension/dist) when its sources changed
# since the last build (a hash of them is kept in labextension/.build-stamp); a no-op otherwise.
# Needs node and npm (Debian: apt-get install nodejs npm) and the jupyter-builder Python package
# (it comes with JupyterLab; scripts/setup.sh installs both). The npm registry is used only when
# labextension/node_modules is missing or older than package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/../labextension"
VENV_BIN="$(cd .. && pwd)/.venv/bin"
[ -x "$VENV_BIN/jupyter-builder" ] && export PATH="$VENV_BIN:$PATH"
want=$(cat package.json package-lock.json tsconfig.json src/*.ts style/* schema/*.json | sha256sum | cut -c1-16)
if [ -f .build-stamp ] && [ "$(cat .build-stamp)" = "$want" ] && [ -f dist/package.json ]; then
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "[labextension] npm is missing: install node (apt-get install nodejs npm)" >&2; exit 3; }
command -v jupyter-builder >/dev/null 2>&1 || { echo "[labextension] jupyter-builder is missing: run scripts/setup.sh" >&2; exit 3; }
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[labextension] installing its npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
echo "[labextension] building"
log=$(mktemp)
npm run --silent build:prod >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; exit 1; }
rm -f "$log"
echo "$want" > .build-stamp
