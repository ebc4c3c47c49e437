"""Whether the notebook is running a cell — when a widget's buttons cannot act.

A click on a widget reaches the kernel as a comm message on the shell channel, and the kernel
handles those only between cells (ipywidgets#1349): while a cell runs, a button that looks enabled
does nothing, and its click acts late, once the cell ends. So the widgets whose buttons act on
running work (KernelActivity's Interrupt, the approval buttons) follow this state and disable
those buttons, saying why, while a cell runs.

The state comes from IPython's ``pre_run_cell``/``post_run_cell`` events of the kernel's shell;
``busy_state()`` is None outside a kernel (terminal IPython, plain Python: no widgets to click).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["BUSY_HINT", "NotebookBusy", "busy_state"]

log = logging.getLogger(__name__)

#: What a disabled button says while a cell runs.
BUSY_HINT = (
    "The notebook is running a cell: buttons act only once it ends. The toolbar's stop button (■) "
    "interrupts the cell — and the workspace code or tool call that %ws call and %%ws py run."
)

_states: dict[int, NotebookBusy] = {}
_lock = threading.Lock()


class NotebookBusy:
    """Follows one shell's cells; ``subscribe(callback)`` hears every change (on the main thread)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        # Created from inside a cell (where widgets are made), the current cell's pre_run_cell has
        # already passed: IPython keeps the running cell's result object until the cell ends.
        self.busy = getattr(getattr(shell, "displayhook", None), "exec_result", None) is not None
        self._subscribers: tuple[Callable[[], Any], ...] = ()
        shell.events.register("pre_run_cell", self._started)
        shell.events.register("post_run_cell", self._ended)

    def _started(self, *_: Any) -> None:
        self._set(True)

    def _ended(self, *_: Any) -> None:
        self._set(False)

    def _set(self, busy: bool) -> None:
        if busy == self.busy:
            return
        self.busy = busy
        for callback in self._subscribers:
            try:
                callback()
            except Exception:  # a broken widget must not break the user's cells
                log.exception("notebook busy subscriber failed")

    def subscribe(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Calls ``callback()`` whenever ``busy`` changes; returns the unsubscribe function."""
        with _lock:
            self._subscribers = (*self._subscribers, callback)

        def unsubscribe() -> None:
            with _lock:
                self._subscribers = tuple(s for s in self._subscribers if s is not callback)

        return unsubscribe

    def close(self) -> None:
        for name, fn in (("pre_run_cell", self._started), ("post_run_cell", self._ended)):
            with contextlib.suppress(ValueError):
                self.shell.events.unregister(name, fn)


def busy_state() -> NotebookBusy | None:
    """The running kernel's ``NotebookBusy`` (made on first use), or None outside a kernel."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    with _lock:
        state = _states.get(id(shell))
        if state is None or state.shell is not shell:
            state = _states[id(shell)] = NotebookBusy(shell)
        return state
