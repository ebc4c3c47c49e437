"""Buttons and lists sized the way the widgets need them, shared so none is clipped.

ipywidgets lets a button shrink inside a row (``flex-shrink: 1``) and cuts its label to "…"; a
``width: 100%`` list keeps its 2 px margins and so pushes its right border out of the box. A
``button`` here never shrinks (it is as wide as its icon and label), a ``stretch``ed list fills
its column margins included, and a ``flexible`` label gives way to the buttons beside it.
``stylesheet`` carries the few rules no layout trait can express (a ``<style>`` applies from an
invisible HTML widget, only while that widget is on the page).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

__all__ = ["button", "flexible", "stretch", "stylesheet"]


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
    return w.Button(
        description=description,
        icon=icon,
        tooltip=tooltip or description,
        button_style=button_style,
        disabled=disabled,
        layout=w.Layout(width="auto", min_width="fit-content", flex="0 0 auto", **layout),
    )


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
