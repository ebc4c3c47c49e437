"""Kernel messages nested deeper than a notebook may be.

Code in a kernel holds the key that signs its messages, so it can send any JSON. A display nested
100,000 levels deep made ``workspace_execute_code`` answer ``Error: RecursionError``, and
``workspace_run_notebook`` failed the same way — a few hundred levels were enough there, in
nbformat's validation — and saved none of the other outputs. Real kernels under bubblewrap.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import WORKSPACE_TOOLS as T
from ws_jupyter import Workspace
from ws_jupyter.notebooks import Notebook

from ..kernels.conftest import bwrap_workspace
from .conftest import requires_bwrap

pytestmark = requires_bwrap

#: Sends a display whose application/json value is ``depth`` lists deep, signed like the kernel's
#: own messages (its JSON written by hand: Python's encoder would refuse that depth too).
DEEP = """
k = get_ipython().kernel
s = k.session
depth = {depth}
content = (b'{{"data": {{"application/json": ' + b'[' * depth + b']' * depth
           + b', "text/plain": "deep {depth}"}}, "metadata": {{}}}}')
msg = s.msg("display_data", content={{}}, parent=k.get_parent())
parts = [s.pack(msg["header"]), s.pack(msg["parent_header"]), s.pack({{}}), content]
signature = s.sign(parts)
k.iopub_socket.send_multipart([b"<IDS|MSG>", signature if isinstance(signature, bytes) else signature.encode(), *parts])
print("sent {depth}")
"""


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    w = bwrap_workspace(Path(os.path.realpath(tmp_path_factory.mktemp("deep"))), timeout=60)
    yield w
    w.destroy()


def tool(ws: Workspace, name: str, **args: Any) -> str:
    return str({t.name: t for t in ws.tools()}[name].run(args))


def depth_of(value: Any) -> int:
    depth = 0
    while isinstance(value, list) and value:
        value, depth = value[0], depth + 1
    return depth + isinstance(value, list)


def test_a_message_too_deep_to_decode_is_noted_and_the_execution_goes_on(ws: Workspace) -> None:
    out = tool(ws, T.SANDBOX.EXECUTE_CODE, code=DEEP.format(depth=100_000) + "print('after')")
    assert "RecursionError" not in out and not out.startswith("Error"), out
    assert "sent 100000" in out and "after" in out
    assert "1 output message(s) nested deeper than 96 levels were dropped" in out


def test_a_deep_part_is_replaced_by_a_note(ws: Workspace) -> None:
    r = ws.sandbox.kernels.execute(DEEP.format(depth=500))
    assert r.ok, r
    (bundle,) = r.display
    assert bundle.text == "deep 500"
    value = bundle.data["application/json"]
    assert depth_of(value) <= 96 and "nested deeper than 96 levels: not kept" in json.dumps(value)


def test_a_notebook_run_saves_the_other_outputs(ws: Workspace) -> None:
    cells = [
        ("code", "print('first')"),
        ("code", DEEP.format(depth=500)),
        ("code", DEEP.format(depth=100_000)),
        ("code", "print('last')"),
    ]
    Notebook.new(cells).save(ws.filesystem, "deep.ipynb")
    summary = tool(ws, T.SANDBOX.RUN_NOTEBOOK, path="deep.ipynb")
    assert "RecursionError" not in summary and "all 4 code cells ok" in summary, summary
    assert "outputs saved" in summary
    saved = Notebook.load(ws.filesystem, "deep.ipynb")  # within the notebooks' own depth rule
    assert saved.problem is None
    outputs = [c.get("outputs", []) for c in saved.node.cells]
    assert outputs[0][0]["text"] == "first\n" and outputs[3][0]["text"] == "last\n"
    deep_display = next(o for o in outputs[1] if o["output_type"] == "display_data")
    assert "not kept" in json.dumps(deep_display["data"]["application/json"])
    assert any("nested deeper than 96 levels not kept" in o.get("text", "") for o in outputs[2])
