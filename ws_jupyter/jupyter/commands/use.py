"""Adopt a Workspace built in Python as the notebook's workspace.

VAR is a variable (or expression) of the notebook holding a `Workspace`. The session never destroys
a workspace it adopted: you keep control of its lifecycle.

Example:
  ws2 = Workspace(filesystem=LocalFilesystem("data"), bm25=True)
  %ws use ws2
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.workspace import InfoView, info_rows
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("var", metavar="VAR", help="a notebook variable holding a Workspace")


def run(inv: Invocation) -> InfoView:
    from ...workspace import Workspace

    name = inv.args.var
    if name in inv.user_ns:
        value = inv.user_ns[name]
    else:
        try:
            value = eval(compile(name, "<%ws use>", "eval"), inv.user_ns)
        except Exception as exc:
            raise inv.usage_error(f"cannot evaluate {name!r}: {type(exc).__name__}: {exc}") from None
    if not isinstance(value, Workspace):
        raise inv.usage_error(f"{name!r} is a {type(value).__name__}, not a Workspace")
    if value.status == "pending":
        value.init()
    inv.session.set_workspace(value, owned=False)
    return InfoView(f"Workspace {value.name} ← {name}", info_rows(value.get_info()))


COMMAND = Subcommand(
    name="use",
    summary="adopt a Workspace built in Python (`%ws use my_ws`)",
    doc=__doc__ or "",
    configure=configure,
    run=run,
    expand=False,
)
