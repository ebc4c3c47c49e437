"""Copy a variable of the sandbox's kernel into the notebook, in a safe format only.

Accepted: pandas and polars DataFrames and Series (Arrow IPC), numpy arrays and scalars (.npy,
without pickle) and plain data — dicts with string keys, lists, strings, numbers, booleans, None
(JSON). The sandbox is treated as hostile: a pickle, an array of Python objects, an Arrow schema
or pandas metadata that would run code, a symbolic link, a special file or anything over the size
limit is refused, and nothing it sends is ever unpickled, evaluated or imported. Other types are
refused with the list of what works (convert them in the sandbox first).

An existing notebook variable is never replaced without --force.

Examples:
  %ws fetch summary
  %ws fetch result --as agent_result
  %ws fetch df --force --kernel scratch --limit 1024
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.base import MessageView
from .base import Invocation, Subcommand

__all__ = ["COMMAND"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="the variable in the sandbox kernel")
    parser.add_argument(
        "--as", dest="as_name", metavar="N", help="the notebook variable to bind (default: NAME)"
    )
    parser.add_argument("--force", action="store_true", help="replace an existing notebook variable")
    parser.add_argument("--kernel", default="default", help="the sandbox kernel (default: default)")
    parser.add_argument(
        "--limit", type=float, metavar="MB", help="the size limit in MB (default: the share limit, 256)"
    )


def run(inv: Invocation) -> MessageView:
    from ...errors import WorkspaceError
    from ...userdata import check_name, summarize
    from ..user_data import fetch_into

    args = inv.args
    as_name = args.as_name or args.name
    try:
        check_name(args.name, "NAME")
        check_name(as_name, "--as")
    except WorkspaceError as exc:
        raise inv.usage_error(str(exc)) from None
    if args.limit is not None and not args.limit > 0:
        raise inv.usage_error("--limit must be a positive number of MB")
    limit = int(args.limit * (1 << 20)) if args.limit is not None else None
    try:
        result = fetch_into(
            inv.shell,
            inv.workspace,
            args.name,
            as_name=as_name,
            kernel=args.kernel,
            force=args.force,
            max_bytes=limit,
            session=inv.session,
        )
    except ValueError as exc:
        if isinstance(exc, WorkspaceError):
            return MessageView(f"Not fetched: {exc}", "error")
        raise inv.usage_error(str(exc)) from None
    except WorkspaceError as exc:
        return MessageView(f"Not fetched: {exc}", "error")
    summary = summarize(result.value).describe()
    return MessageView(f"Fetched {args.name} from the sandbox kernel {args.kernel!r} as {as_name}: {summary}")


COMMAND = Subcommand(
    name="fetch",
    summary="copy a sandbox kernel's variable into the notebook (safe formats only): `%ws fetch NAME [--as N]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
