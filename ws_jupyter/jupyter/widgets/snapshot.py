"""A static copy of each widget that stays readable in a saved notebook.

A widget's output holds only a reference to a model in the running kernel: after a kernel restart,
or when the notebook is reopened, JupyterLab shows "Error displaying widget: model not found". So
every ws-jupyter widget is displayed as two outputs: the live widget, then a *snapshot* — plain
HTML and text of its last state (the process's last lines, the tool call's result, the listing
shown...). The snapshot is kept current (at most every ``SNAPSHOT_INTERVAL`` seconds, and once
more when the widget closes) through ``update_display_data``, which front-ends route by display
id, so the saved notebook holds the latest state.

While the widget is on the page its stylesheet hides the snapshot (``:has()`` rules on JupyterLab's
output area), and the snapshot's own rule hides a widget output that failed to render, so a
reopened notebook shows the snapshot in place of the error. Front-ends without these classes
(VS Code, nbconvert) simply show both.
"""

from __future__ import annotations

import html
import threading
import uuid
from typing import Any

from ..views.common import MUTED
from .controls import stylesheet
from .live import Throttle

__all__ = ["SNAPSHOT_INTERVAL", "Snapshotting"]

#: Seconds between two updates of a widget's snapshot (the live widget updates far more often).
SNAPSHOT_INTERVAL = 2.0

class Snapshotting:
    """Mixin for ``ipywidgets`` boxes: displayed with a snapshot output (see the module docstring).

    Subclasses implement ``snapshot() -> (html, text)`` and call ``snapshot_changed()`` when
    what it shows changes (cheap: updates are throttled), and ``close_snapshot()`` in ``close``.
    """

    snapshot_label = "widget"

    def snapshot(self) -> tuple[str, str]:
        raise NotImplementedError

    # --- display -----------------------------------------------------------------------------

    def _ipython_display_(self) -> None:
        from IPython import get_ipython
        from IPython.display import display

        box: Any = self  # an ipywidgets Box
        bundle = box._repr_mimebundle_()
        shell = get_ipython()
        if getattr(shell, "kernel", None) is None:  # terminal IPython: no widgets, just the text
            display({"text/plain": self.snapshot()[1]}, raw=True)
            return
        token = f"ws-snapshot-{uuid.uuid4().hex[:12]}"
        state = self._snapshot_state()
        with state["lock"]:
            state["tokens"].append(token)
            hide = ",".join(f".jp-OutputArea-child:has(.{t})" for t in state["tokens"])
        sheet = state.get("sheet")
        if sheet is None:
            sheet = state["sheet"] = stylesheet("")
            box.children = (*box.children, sheet)
        sheet.value = f"<style>{hide} {{ display: none; }}</style>"
        display(bundle, raw=True)
        first = self._snapshot_bundle(token)
        handle = display(first, raw=True, display_id=True)
        with state["lock"]:
            state["handles"].append((token, handle))
            state["sent"][token] = first

    def _snapshot_state(self) -> dict[str, Any]:
        state = self.__dict__.get("_ws_snapshot")
        if state is None:
            state = self.__dict__["_ws_snapshot"] = {
                "lock": threading.Lock(),
                "tokens": [],
                "handles": [],
                "sent": {},
                "throttle": Throttle(self._update_snapshots, SNAPSHOT_INTERVAL),
            }
        return state

    def _snapshot_bundle(self, token: str) -> dict[str, str]:
        try:
            body, text = self.snapshot()
        except Exception as exc:  # a snapshot must never break the widget
            body, text = html.escape(f"(no saved view: {exc})"), f"(no saved view: {exc})"
        # A widget output right before this one that did not render (no model after a restart or a
        # reopen: only the error text, no widget inside) is hidden: this snapshot replaces it.
        broken = (
            f".jp-OutputArea-child:has(+ .jp-OutputArea-child .{token})"
            ":not(:has(.jp-OutputArea-output .lm-Widget))"
        )
        caption = (
            f'<div style="{MUTED}; font-size: 0.85em; font-style: italic">Saved view of the '
            f"{html.escape(self.snapshot_label)} (the live widget needs the kernel that showed it: "
            "run the cell again)</div>"
        )
        return {
            "text/html": (
                f"<style>{broken} {{ display: none; }}</style>"
                f'<div class="ws-snapshot {token}" style="line-height: 1.45; text-align: left">{caption}{body}</div>'
            ),
            "text/plain": text,
        }

    # --- updates -------------------------------------------------------------------------------

    def snapshot_changed(self) -> None:
        """Schedules a snapshot update (no-op until the widget has been displayed)."""
        state = self.__dict__.get("_ws_snapshot")
        if state is not None and state["handles"]:
            state["throttle"].request()
        parent = self.__dict__.get("_ws_snapshot_parent")
        if parent is not None:
            parent.snapshot_changed()

    def snapshot_into(self, parent: Snapshotting) -> None:
        """This widget is part of ``parent`` (a dashboard tab): its changes update ``parent``'s snapshot."""
        self.__dict__["_ws_snapshot_parent"] = parent

    def _update_snapshots(self) -> None:
        state = self.__dict__.get("_ws_snapshot")
        if state is None:
            return
        with state["lock"]:
            handles = list(state["handles"])
        for token, handle in handles:
            bundle = self._snapshot_bundle(token)
            if state["sent"].get(token) == bundle:
                continue  # nothing changed: no message
            try:
                handle.update(bundle, raw=True)
            except Exception:  # the kernel is shutting down
                return
            state["sent"][token] = bundle

    def close_snapshot(self) -> None:
        """Writes the final snapshot (the widget is closing) and stops updating it."""
        state = self.__dict__.get("_ws_snapshot")
        if state is None:
            return
        state["throttle"].close()
        self._update_snapshots()
        with state["lock"]:
            state["handles"].clear()
        sheet = state.get("sheet")
        if sheet is not None:
            sheet.close()
