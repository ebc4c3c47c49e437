"""Every path-taking tool against the >= 500 generated hostile paths of the filesystem suite:
nothing outside the workspace is read, written or revealed, and no call raises."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.tools.types import ToolErrorText, ToolResult, output_text

from ..filesystem.hostile_paths import (
    build_layout,
    hostile_paths,
    leaks,
    reset_workspace,
    secret_copies,
    snapshot,
)

CALLS = {
    "read_file": ("workspace_read_file", lambda p: {"path": p}),
    "read_file_base64": ("workspace_read_file", lambda p: {"path": p, "encoding": "base64"}),
    "write_file": ("workspace_write_file", lambda p: {"path": p, "content": "PWNED"}),
    "edit_file": ("workspace_edit_file", lambda p: {"path": p, "old_string": "TOP", "new_string": "PWNED"}),
    "list_files": ("workspace_list_files", lambda p: {"path": p, "max_depth": 3, "show_hidden": True}),
    "delete": ("workspace_delete", lambda p: {"path": p, "recursive": True}),
    "mkdir": ("workspace_mkdir", lambda p: {"path": p}),
    "file_stat": ("workspace_file_stat", lambda p: {"path": p}),
    "grep": (
        "workspace_grep",
        lambda p: {"pattern": "TOP|SECRET|inner|deep", "path": p, "include_hidden": True},
    ),
    "grep_glob": (
        "workspace_grep",
        lambda p: {"pattern": ".", "path": p.rstrip("/") + "/**/*", "include_hidden": True},
    ),
}
#: Deleting a symlink that points outside removes the link (a workspace entry), not its target.
LINK_NAMES = {"link_file", "link_dir", "dangling", "dangling_abs", "sub/up"}


@pytest.mark.slow
@pytest.mark.parametrize("call", sorted(CALLS))
def test_tools_never_reach_outside(tmp_path, call):
    root = Path(os.path.realpath(tmp_path))
    ws_dir, outside = build_layout(root)
    before = snapshot(outside)
    ws = Workspace(filesystem=LocalFilesystem(ws_dir), bm25=False)
    tool_name, make_args = CALLS[call]
    cases = hostile_paths(root)
    assert len(cases) >= 500
    failures: list[str] = []
    try:
        for case in cases:
            reset_workspace(ws_dir, outside)
            tool = next(t for t in ws.tools() if t.name == tool_name)
            try:
                out = tool.run(make_args(case.path))
            except Exception as exc:  # a tool must never raise to the model
                failures.append(f"{case.path!r}: raised {type(exc).__name__}: {exc}")
                continue
            assert isinstance(out, (str, ToolResult))
            text = output_text(out)
            for echo in (case.path, case.path.rstrip("/"), case.path.replace("//", "/").rstrip("/")):
                if echo:
                    text = text.replace(echo, "")  # the model's own input echoed back is no leak
            if leaks(text):
                failures.append(f"{case.path!r}: output reveals outside content: {text[:200]!r}")
            bare = case.path.rstrip("/").removeprefix("./").replace("//", "/")
            if case.kind in ("escape", "invalid") and not isinstance(out, ToolErrorText):
                harmless = (
                    (call == "delete" and bare in LINK_NAMES)
                    or (call == "file_stat" and output_text(out).endswith(": not found"))
                    or (call.startswith("grep") and output_text(out).startswith("0 matches across 0 files"))
                )
                if not harmless:
                    failures.append(
                        f"{case.path!r}: {call} did not refuse an escaping path: {output_text(out)[:200]!r}"
                    )
            after = snapshot(outside)
            if after != before:
                failures.append(f"{case.path!r}: outside changed")
                before = after
            for copy in secret_copies(ws_dir):
                failures.append(f"{case.path!r}: outside content copied into {copy}")
    finally:
        reset_workspace(ws_dir, outside)
        ws.destroy()
    assert failures == [], f"{len(failures)} problems:\n" + "\n".join(f[:300] for f in failures[:15])
