"""Attack: an empty setuid file in the workspace, filled by the file tools running as root.

A sandboxed command cannot write content into a setuid file without the kernel clearing the
bit (it has no CAP_FSETID), but it could leave an *empty* one (``mknod`` with S_IFREG, now
refused by the seccomp filter). The notebook, running as root, then rewrote it for the agent:
``workspace_write_file`` copied the old mode bits onto the new file — setuid included — so the
agent's content became a setuid-root program on the host. Rewrites keep the permission bits
only (as copies already did).
"""

from __future__ import annotations

import os
import stat

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.tools.types import is_error_output


def test_rewriting_a_setuid_file_does_not_keep_the_bit(workdir):
    for name in ("w", "e"):
        path = workdir / name
        path.write_text("old\n")
        os.chmod(path, 0o6755)  # what `mknod` (or a host user) could have left behind
    ws = Workspace(filesystem=LocalFilesystem(str(workdir)))
    try:
        tools = {t.name: t for t in ws.tools()}
        for name, args in (
            ("workspace_write_file", {"path": "w", "content": "#!/bin/sh\nid\n"}),
            ("workspace_read_file", {"path": "e"}),
            ("workspace_edit_file", {"path": "e", "old_string": "old", "new_string": "id"}),
        ):
            out = tools[name].run(args)
            assert not is_error_output(out), out
        for name in ("w", "e"):
            mode = os.stat(workdir / name).st_mode
            assert not mode & (stat.S_ISUID | stat.S_ISGID), f"{name}: {oct(mode)}"
            assert stat.S_IMODE(mode) == 0o755  # the permission bits themselves are kept
    finally:
        ws.destroy()
