"""The notebook's side of sharing: the session workspace's shares follow this shell's namespace,
and values fetched from the sandbox are bound into it (never over an existing name unless asked).

The sharing rules, the inspection and the copies themselves live in :mod:`ws_jupyter.userdata`;
this module only knows where IPython keeps the user's variables (``user_ns``) and which names are
its own (``user_ns_hidden``: ``In``, ``Out``, ``get_ipython``, ``exit``, ``quit``, ...).
"""

from __future__ import annotations

from typing import Any

from ..sandbox.capabilities import sandbox_kernels
from ..userdata import FetchResult, SharedNamespace, fetch_from_kernel, shared_namespace

__all__ = ["bind_shell", "fetch_into"]


def bind_shell(shell: Any, workspace: Any, session: Any = None) -> SharedNamespace:
    """The workspace's shared namespace (created if needed), following ``shell.user_ns`` —
    until ``%unload_ext`` when a ``session`` is given: the notebook's variables are then no
    longer visible (values shared with ``ws.share`` stay shared)."""
    shared = shared_namespace(workspace, create=True)
    assert shared is not None
    if shared.namespace is not shell.user_ns:
        shared.bind(shell.user_ns, getattr(shell, "user_ns_hidden", None))
        if session is not None:

            def unbind() -> None:
                if shared.namespace is shell.user_ns:
                    shared.bind({})

            session.track(unbind)
    return shared


def fetch_into(
    shell: Any,
    workspace: Any,
    name: str,
    *,
    as_name: str,
    kernel: str,
    force: bool,
    max_bytes: int | None,
    session: Any = None,
) -> FetchResult:
    """Copies the sandbox kernel's ``name`` into the notebook as ``as_name``.

    Raises ``FileExistsError``-like ``ValueError`` before any copy when ``as_name`` exists and
    ``force`` is False (the caller turns it into a usage error).
    """
    if as_name in shell.user_ns and not force:
        raise ValueError(
            f"{as_name} already exists in the notebook; add --force to replace it (or --as NEW_NAME)"
        )
    kernels = sandbox_kernels(workspace.resolve_sandbox(None))
    if kernels is None:
        raise ValueError("this workspace's sandbox runs no kernels: there is nothing to fetch")
    shared = bind_shell(shell, workspace, session)
    limit = max_bytes if max_bytes is not None else shared.max_copy_bytes
    result = fetch_from_kernel(name, kernels=kernels, kernel_name=kernel, max_bytes=limit)
    shell.user_ns[as_name] = result.value
    return result
