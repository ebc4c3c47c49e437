#!/usr/bin/env bash
# The demo: sets everything up (scripts/setup.sh), installs the "Python 3 (ws-jupyter)" kernel into
# .venv, and opens JupyterLab on notebooks/quickstart.ipynb.
#
#   ./scripts/demo.sh               JupyterLab on the quickstart (open the printed URL if no browser opens)
#   ./scripts/demo.sh --headless    no browser: run the quickstart top to bottom and write an HTML copy
#                                   to build/demo/quickstart.html (--out DIR to choose the folder)
#
# Other arguments are passed to `jupyter lab` (e.g. --port 8899). WS_JUPYTER_SKIP_SETUP=1 skips
# scripts/setup.sh when the environment is known to be ready.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
V="$ROOT/.venv/bin"

headless=0
out="$ROOT/build/demo"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --headless) headless=1 ;;
    --out) out=$(mkdir -p "$2" && cd "$2" && pwd); shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) args+=("$1") ;;
  esac
  shift
done

[ "${WS_JUPYTER_SKIP_SETUP:-0}" = 1 ] || ./scripts/setup.sh
"$V/ws-jupyter" install-kernel --sys-prefix

if [ "$headless" = 1 ]; then
  mkdir -p "$out"
  cp notebooks/quickstart.ipynb "$out/quickstart.ipynb"
  echo "[demo] running the quickstart on the ws-jupyter kernel (workspace: $out/workspace)"
  cd "$out"
  "$V/jupyter" nbconvert --to html --execute quickstart.ipynb \
    --ExecutePreprocessor.kernel_name=ws-jupyter --ExecutePreprocessor.timeout=600 \
    --output quickstart.html
  echo "[demo] wrote $out/quickstart.html"
  exit 0
fi

extra=()
[ "$(id -u)" = 0 ] && extra+=(--ServerApp.allow_root=True)
echo "[demo] starting JupyterLab on notebooks/quickstart.ipynb (Ctrl-C to stop)"
exec "$V/jupyter" lab notebooks/quickstart.ipynb "${extra[@]}" ${args[@]+"${args[@]}"}
