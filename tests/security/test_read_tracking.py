"""Lost updates: read tracking that forgets, or that a same-size change restoring the mtime fools.

Before: read records lived in one ``ws.tools()`` set, so a write through another set (``%ws call``,
a framework making tools per request) overwrote an external change unnoticed; and a change of the
same size whose mtime was restored (``cp -p``) passed the mtime+size check.
"""

from __future__ import annotations

import os
import shutil

from ws_jupyter import LocalFilesystem, Workspace


def _tools(ws: Workspace, request_context=None):
    return {t.name: t for t in ws.tools(request_context)}


def test_a_write_in_another_tool_set_does_not_overwrite_an_external_change(workdir):
    (workdir / "notes.txt").write_text("mine\n")
    ws = Workspace(filesystem=LocalFilesystem(workdir))
    ctx = {"thread_id": "conversation-1"}
    assert str(_tools(ws, ctx)["workspace_read_file"].run({"path": "notes.txt"})).endswith("mine")
    (workdir / "notes.txt").write_text("someone else's work\n")
    out = str(_tools(ws, ctx)["workspace_write_file"].run({"path": "notes.txt", "content": "agent\n"}))
    assert out.startswith('File "notes.txt" was modified since it was last read'), out
    assert (workdir / "notes.txt").read_text() == "someone else's work\n"
    # the same with no request context at all (%ws call)
    _tools(ws)["workspace_read_file"].run({"path": "notes.txt"})
    (workdir / "notes.txt").write_text("changed again\n")
    out = str(_tools(ws)["workspace_edit_file"].run({"path": "notes.txt", "old_string": "changed", "new_string": "x"}))
    assert out.startswith('File "notes.txt" was modified since it was last read'), out


def test_same_size_change_with_restored_mtime_is_detected(workdir, tmp_path):
    target = workdir / "config.ini"
    target.write_text("mode = safe\n")
    ws = Workspace(filesystem=LocalFilesystem(workdir))
    tools = _tools(ws)
    tools["workspace_read_file"].run({"path": "config.ini"})
    st = os.stat(target)
    forged = tmp_path / "forged.ini"
    forged.write_text("mode = evil\n")  # same size
    os.utime(forged, ns=(st.st_atime_ns, st.st_mtime_ns))
    shutil.copy2(forged, target)  # cp -p: content replaced, mtime restored
    assert os.stat(target).st_mtime_ns == st.st_mtime_ns and os.stat(target).st_size == st.st_size
    out = str(tools["workspace_edit_file"].run({"path": "config.ini", "old_string": "mode", "new_string": "MODE"}))
    assert out.startswith('File "config.ini" was modified since it was last read (its content changed'), out
    assert target.read_text() == "mode = evil\n"


def test_edits_from_several_processes_all_land(workdir):
    """6 processes x 40 edits on one file (before: 70 of 240 lines were kept)."""
    import subprocess
    import sys
    import textwrap

    (workdir / "log.txt").write_text("END\n")
    worker = textwrap.dedent(
        f"""
        import sys
        from ws_jupyter import Workspace, LocalFilesystem
        ws = Workspace(filesystem=LocalFilesystem({str(workdir)!r}))
        edit = next(t for t in ws.tools() if t.name == "workspace_edit_file")
        me = sys.argv[1]
        for i in range(40):
            while True:
                out = str(edit.run({{"path": "log.txt", "old_string": "END", "new_string": f"p{{me}}-{{i}}\\nEND"}}))
                if out.startswith("Replaced"):
                    break
                assert "modified" in out or "timeout" in out, out
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", worker, str(n)]) for n in range(6)]
    for p in procs:
        assert p.wait(timeout=240) == 0
    lines = (workdir / "log.txt").read_text().splitlines()
    assert lines[-1] == "END"
    assert sorted(lines[:-1]) == sorted(f"p{n}-{i}" for n in range(6) for i in range(40))
