"""Fixtures for the agent tool tests: real workspaces over temp directories."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ws_jupyter import LocalFilesystem, Workspace
from ws_jupyter.tools.types import Tool


class ToolBox(dict[str, Tool]):
    """Tools by exposed name; ``box.run(name, **args)`` calls one."""

    def run(self, name: str, /, context: Any = None, **args: Any) -> Any:
        return self[name].run(args, context)


@pytest.fixture
def make_ws(workdir: Path) -> Iterator[Callable[..., Workspace]]:
    """Build workspaces over ``workdir`` (destroyed at the end of the test)."""
    made: list[Workspace] = []

    def make(**kwargs: Any) -> Workspace:
        kwargs.setdefault("filesystem", LocalFilesystem(workdir))
        ws = Workspace(**kwargs)
        made.append(ws)
        return ws

    yield make
    for ws in made:
        ws.destroy()


def box(ws: Workspace, request_context: Any = None) -> ToolBox:
    return ToolBox({t.name: t for t in ws.tools(request_context)})


@pytest.fixture
def fs_tools(make_ws: Callable[..., Workspace]) -> ToolBox:
    """File tools of a workspace with only a filesystem (and BM25 search)."""
    return box(make_ws())
