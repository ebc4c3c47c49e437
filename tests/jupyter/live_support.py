"""What the live-link browser tests share: the built JupyterLab extension, notebooks, the page's
model read through JupyterLab's own objects, and an agent the test drives in the notebook's kernel.

:class:`KernelAgent` connects to the kernel of an open notebook (its connection file, as any
second client would) and runs code in a *kernel subshell* of it: the agent's tool calls run in the
user's kernel, next to the user's namespace and the ``%ws`` extension, while the main shell is busy
with a cell — the case the live link is for — and the test gets each answer back synchronously.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "scripts" / "build-labextension.sh"


def labextension_problem() -> str | None:
    """Builds the extension when its sources changed; why it cannot be used (None: it can)."""
    if shutil.which("npm") is None and not (REPO / "labextension" / "dist" / "package.json").exists():
        return "node/npm are missing, so the JupyterLab extension cannot be built: run scripts/setup.sh as root"
    done = subprocess.run([str(BUILD)], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        return f"building the JupyterLab extension failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return None


def labextension_share(root: Path) -> Path:
    """A Jupyter data directory whose ``labextensions/ws-jupyter`` is the worktree's build."""
    share = root / "share"
    (share / "labextensions").mkdir(parents=True, exist_ok=True)
    link = share / "labextensions" / "ws-jupyter"
    if not link.exists():
        link.symlink_to(REPO / "labextension" / "dist")
    return share


KERNELSPEC = {"name": "ws-jupyter", "display_name": "Python 3 (ws-jupyter)", "language": "python"}


def write_notebook(path: Path, cells: list[tuple[str, str, str]]) -> None:
    """A notebook of ``(cell_type, source, id)`` cells on the ws-jupyter kernel."""
    import nbformat
    from nbformat import v4

    made = []
    for cell_type, source, cid in cells:
        cell = {"code": v4.new_code_cell, "markdown": v4.new_markdown_cell, "raw": v4.new_raw_cell}[cell_type](source)
        cell.id = cid
        made.append(cell)
    nbformat.write(v4.new_notebook(cells=made, metadata={"kernelspec": KERNELSPEC}), path)


# --- the page's notebook, through JupyterLab's objects (window.jupyterapp in the test harness) ---

PANEL_JS = """(path) => {
    const widgets = Array.from(window.jupyterapp.shell.widgets('main'));
    return widgets.find(w => w.context && w.context.path === path && w.content && w.content.model);
}"""

CELLS_JS = f"""(path) => {{
    const panel = ({PANEL_JS})(path);
    return panel.content.model.sharedModel.cells.map(c => ({{id: c.id, type: c.cell_type, source: c.getSource(),
        outputs: (c.toJSON().outputs || []), metadata: c.toJSON().metadata}}));
}}"""


def model_cells(page: Any, path: str) -> list[dict[str, Any]]:
    """The open notebook's cells as the page's model holds them (id, type, source, outputs)."""
    return list(page.evaluate(CELLS_JS, path))


def model_sources(page: Any, path: str) -> dict[str, str]:
    return {c["id"]: c["source"] for c in model_cells(page, path)}


def is_dirty(page: Any, path: str) -> bool:
    return bool(page.evaluate(f"(path) => ({PANEL_JS})(path).content.model.dirty", path))


def disk_cells(path: Path) -> dict[str, str]:
    """``{cell id: source}`` of the notebook file (read again while the server is saving it: a
    save truncates the file, then writes it)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            data = json.loads(path.read_text())
            break
        except json.JSONDecodeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    return {c["id"]: "".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in data["cells"]}


def cell_output_text(page: Any, path: str, cell_id: str) -> str:
    """The text of one cell's outputs in the model (streams and text/plain)."""
    for cell in model_cells(page, path):
        if cell["id"] == cell_id:
            parts = []
            for o in cell["outputs"]:
                if o.get("output_type") == "stream":
                    parts.append("".join(o["text"]) if isinstance(o["text"], list) else o["text"])
                elif "data" in o:
                    text = o["data"].get("text/plain", "")
                    parts.append("".join(text) if isinstance(text, list) else text)
                elif o.get("output_type") == "error":
                    parts.append(f"{o.get('ename')}: {o.get('evalue')}")
            return "".join(parts)
    raise AssertionError(f"no cell {cell_id}")


def wait_for(predicate: Any, timeout: float = 60.0, interval: float = 0.05, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


# --- an agent in the notebook's kernel ------------------------------------------------------------


class KernelAgent:
    """Runs code in a subshell of the kernel behind an open notebook (see the module docstring)."""

    def __init__(self, lab: Any, notebook: str) -> None:
        from jupyter_client import BlockingKernelClient

        sessions = lab.api("/api/sessions")
        (session,) = [s for s in sessions if s["path"] == notebook]
        kernel_id = session["kernel"]["id"]
        connection = lab.state_dir / "runtime" / f"kernel-{kernel_id}.json"
        self.client = BlockingKernelClient(connection_file=str(connection))
        self.client.load_connection_file()
        self.client.start_channels()
        request = self.client.session.msg("create_subshell_request", {})
        self.client.control_channel.send(request)
        reply = self._reply(self.client.control_channel, request["header"]["msg_id"], 30)
        self.subshell = reply["content"]["subshell_id"]

    @staticmethod
    def _reply(channel: Any, msg_id: str, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            msg = channel.get_msg(timeout=max(0.1, deadline - time.monotonic()))
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    def run(self, code: str, timeout: float = 120.0) -> str:
        """Runs ``code`` in the subshell; returns its stdout (raises on an error in the kernel)."""
        kc = self.client
        # a subshell's stdout can come after its idle status (another thread sends it): the end of
        # the output is a marker printed after the code (on an error, a short wait after idle)
        marker = f"--ws-agent-done-{time.monotonic_ns()}--"
        msg = kc.session.msg(
            "execute_request",
            {"code": f"{code}\nprint({marker!r}, flush=True)", "silent": False, "store_history": False, "user_expressions": {},
             "allow_stdin": False, "stop_on_error": True},
        )
        msg["header"]["subshell_id"] = self.subshell
        kc.shell_channel.send(msg)
        msg_id = msg["header"]["msg_id"]
        out: list[str] = []
        error = None
        deadline = time.monotonic() + timeout
        idle_at: float | None = None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the kernel did not finish within {timeout:g} s; output so far: {''.join(out)}")
            if idle_at is not None and time.monotonic() - idle_at > 0.3:
                break  # a subshell's last output can come just after its idle status: wait a little
            try:
                m = kc.get_iopub_msg(timeout=min(left, 0.1 if idle_at is not None else 1.0))
            except Exception:
                continue
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            kind = m["msg_type"]
            if kind == "stream":
                out.append(m["content"]["text"])
                if marker in out[-1] or marker in "".join(out[-2:]):
                    text = "".join(out)
                    return text[: text.index(marker)]
            elif kind == "error":
                error = f"{m['content']['ename']}: {m['content']['evalue']}"
            elif kind in ("execute_result", "display_data"):
                out.append(m["content"]["data"].get("text/plain", ""))
            elif kind == "status" and m["content"]["execution_state"] == "idle":
                idle_at = time.monotonic()
        if error:
            raise AssertionError(f"the agent's code failed in the kernel: {error}\n{''.join(out)}")
        return "".join(out)

    def json(self, code: str, timeout: float = 120.0) -> Any:
        """Runs ``code`` whose last printed line is JSON; returns it parsed."""
        return json.loads(self.run(code, timeout).strip().splitlines()[-1])

    def close(self) -> None:
        try:
            self.client.stop_channels()
        except Exception:
            pass


AGENT_SETUP = r"""
import json as _json, re as _re
from ws_jupyter.live import Proposal as _Proposal, live_notebook as _live
_LINK = _live(ws)
_TOOLS = {t.name: t for t in ws.tools()}
def _versions(text):
    return dict(_re.findall(r'^\[\d+\] \w+ (\S+)(?: In\[\d+\])? v=([0-9a-f]{16})', text, _re.M))
def _outcome(o):
    return {"id": o.proposal_id, "status": o.status, "auto": o.auto, "message": o.message,
            "cells": [{"cell_id": c.cell_id, "op": c.op, "status": c.status, "version": c.version,
                       "source": c.source, "reason": c.reason} for c in o.cells]}
"""
