"""The open-notebook tools: ``open_notebook_read``, ``open_notebook_edit``, ``open_notebook_run``.

They reach the notebook the user has open through the :class:`~ws_jupyter.live.LiveNotebook`
attached to the workspace (see :mod:`ws_jupyter.live`), and exist in ``Workspace.tools()`` while a
page is connected. One module per tool; ``common`` holds what they share.
"""

from __future__ import annotations

__all__: list[str] = []
