"""``%load_ext ws_jupyter`` / ``%unload_ext ws_jupyter``.

Loading registers the ``%ws`` magics (configurable as ``WsMagics``) and the rich displays of the
workspace's result types, and imports nothing heavy: no chromadb, onnxruntime or ipywidgets (the
widgets load when a command first shows one). Unloading removes both and stops what the extension
started: live widgets and their threads, the live link to the notebook's page, and the workspace
``%ws init`` created (its background processes are killed; files are never deleted). The same
cleanup runs when the kernel exits.
"""

from __future__ import annotations

import atexit
from typing import Any

__all__ = ["load_ipython_extension", "loaded_magics", "unload_ipython_extension"]

# shell -> its WsMagics (normally one shell per process)
_LOADED: dict[int, Any] = {}


def loaded_magics(shell: Any) -> Any:
    """The ``WsMagics`` instance registered in ``shell``, or None."""
    return _LOADED.get(id(shell))


def load_ipython_extension(ipython: Any) -> None:
    """Registers ``%ws``/``%%ws``, the ``WsMagics`` settings and the rich displays."""
    if id(ipython) in _LOADED:
        return
    from .magics import WsMagics
    from .skill_problems import quiet_skills_logger
    from .views.formatters import register_formatters

    magics = WsMagics(ipython, parent=ipython)
    ipython.register_magics(magics)
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)
    register_formatters(ipython)
    magics.session.track(quiet_skills_logger())  # undone when the extension unloads
    from .live import start

    start(magics.session, ipython)  # the live link to the notebook's page (in a kernel only)
    _LOADED[id(ipython)] = magics
    atexit.register(magics.session.close)


def unload_ipython_extension(ipython: Any) -> None:
    """Removes the magics and displays, and stops what the extension started."""
    magics = _LOADED.pop(id(ipython), None)
    if magics is None:
        return
    from .views.formatters import unregister_formatters

    table = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        if getattr(table[kind].get("ws"), "__self__", None) is magics:
            del table[kind]["ws"]
    ipython.magics_manager.registry.pop("WsMagics", None)
    if magics in ipython.configurables:
        ipython.configurables.remove(magics)
    unregister_formatters(ipython)
    atexit.unregister(magics.session.close)
    magics.session.close()
