#!/usr/bin/env bash
# Builds the documentation site into build/docs (open build/docs/index.html): sets everything up
# (scripts/setup.sh), executes the example notebooks on the ws-jupyter kernel into build/notebooks
# (only those whose copy is missing or was made from another version of the notebook or of the
# package), then `mkdocs build --strict`: a broken link or anchor, a page left out of the
# navigation, an API reference to a missing name, or a page that would fetch from the network
# fails the build.
#
#   ./scripts/docs.sh                  the site in build/docs
#   ./scripts/docs.sh --execute        execute every notebook again first
#   ./scripts/docs.sh --no-execute     never execute: use the executed copies there are (made from this
#                                      version of each notebook; outputs may be from older code)
#   ./scripts/docs.sh --executed DIR   take (and put) the executed copies in DIR/notebooks
#   ./scripts/docs.sh --site-dir DIR   write the site to DIR
#   ./scripts/docs.sh --serve          serve the site on http://127.0.0.1:8000 (rebuilt on changes)
#
# WS_JUPYTER_SKIP_SETUP=1 skips scripts/setup.sh when the environment is known to be ready.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
V="$ROOT/.venv/bin"

execute=auto
executed="$ROOT/build"
site="$ROOT/build/docs"
serve=0
while [ $# -gt 0 ]; do
  case "$1" in
    --execute) execute=all ;;
    --no-execute) execute=never ;;
    --executed) executed=$(mkdir -p "$2" && cd "$2" && pwd); shift ;;
    --site-dir) site=$(mkdir -p "$2" && cd "$2" && pwd); shift ;;
    --serve) serve=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "docs.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

[ "${WS_JUPYTER_SKIP_SETUP:-0}" = 1 ] || ./scripts/setup.sh

started=$(date +%s)
case "$execute" in
  all) "$V/python" scripts/docs_build.py execute --force --root "$executed" ;;
  auto) "$V/python" scripts/docs_build.py execute --root "$executed" ;;
  never) "$V/python" scripts/docs_build.py check --root "$executed" ;;
esac

export WS_JUPYTER_DOCS_EXECUTED="$executed"
export NO_MKDOCS_2_WARNING=1   # the theme's notice about its own future, printed on every build
if [ "$serve" = 1 ]; then
  exec "$V/mkdocs" serve --strict --dev-addr 127.0.0.1:8000
fi
"$V/mkdocs" build --strict --site-dir "$site"
echo "[docs] built $site/index.html in $(( $(date +%s) - started )) s"
