"""Buttons and lists sized the way the widgets need them, shared so none is clipped.

ipywidgets lets a button shrink inside a row (``flex-shrink: 1``) and cuts its label to "…", its
coloured styles put white labels on backgrounds too light for them, and a ``width: 100%`` list
keeps its 2 px margins and so pushes its right border out of the box. A ``button`` here never
shrinks (it is as wide as its icon and label) and its colours keep its label legible, a
``stretch``ed list fills its column margins included, and a ``flexible`` label gives way to the
buttons beside it (a row that wraps puts them on the next line when the notebook is narrow).
``stylesheet`` carries the few rules no layout trait can express (a ``<style>`` applies from an
invisible HTML widget, only while that widget is on the page).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

__all__ = ["button", "flexible", "stretch", "stylesheet"]


#: Backgrounds of the coloured buttons, dark enough for their white label to keep a 4.5:1 contrast
#: (JupyterLab's own success, warning and danger colours give 2.2:1 to 4.1:1 on one theme or the other).
_BUTTON_COLOURS = {"success": "#2e7d32", "danger": "#c62828", "warning": "#9a5700", "primary": "#1565c0"}


def button(
    description: str = "",
    *,
    icon: str = "",
    tooltip: str = "",
    button_style: str = "",
    disabled: bool = False,
    **layout: Any,
) -> w.Button:
    """A ``Button`` as wide as its icon and label, which its row never shrinks."""
    b = w.Button(
        description=description,
        icon=icon,
        tooltip=tooltip or description,
        button_style=button_style,
        disabled=disabled,
        layout=w.Layout(width="auto", min_width="fit-content", flex="0 0 auto", **layout),
    )
    colour = _BUTTON_COLOURS.get(button_style)
    if colour is not None:
        b.style.button_color = colour
        b.style.text_color = "white"
    return b


def stretch(widget: Any) -> Any:
    """Makes a list, dropdown or text box fill its column without overflowing it."""
    widget.layout.width = "auto"
    widget.layout.align_self = "stretch"
    return widget


def flexible(widget: Any) -> Any:
    """Lets a label or input take the room its row's buttons leave (and wrap or shrink)."""
    widget.layout.flex = "1 1 auto"
    widget.layout.min_width = "0"
    return widget


def stylesheet(css: str) -> w.HTML:
    """An invisible widget whose ``<style>`` applies while it is displayed."""
    sheet = w.HTML(f"<style>{css}</style>", layout=w.Layout(display="none"))
    sheet.add_class("ws-style")
    return sheet
