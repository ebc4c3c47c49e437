"""Search the indexed files: ranked results with `path:lines`, score and a highlighted snippet.

--mode is bm25 (keywords), vector (meaning; needs `%ws init --vector`) or hybrid (both, fused);
the default is hybrid when both are configured. Index files first with `%ws index`. The best 5
are shown (the tail of a ranking is mostly noise); when there are more, the output says how to
see them (-k N).

Examples:
  %ws search how are the models evaluated
  %ws search "learning rate" --mode bm25 -k 5
"""

from __future__ import annotations

from ..parsing import WsArgumentParser
from ..views.common import base_path_of
from ..views.search import SearchResultsView
from ._common import positive_int
from .base import Invocation, Subcommand

__all__ = ["COMMAND", "TOP_K", "default_mode"]

TOP_K = 5


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument("query", nargs="+", metavar="QUERY", help="what to look for")
    parser.add_argument("--mode", "-m", choices=["bm25", "vector", "hybrid"], help="search mode")
    parser.add_argument(
        "-k", "--top-k", type=positive_int, default=TOP_K, metavar="N", help=f"results (default: {TOP_K})"
    )
    parser.add_argument("--min-score", type=float, metavar="S", help="drop results scoring below S")


def default_mode(workspace: object) -> str:
    """The mode ``workspace.search`` uses when none is given."""
    from ...tools.search.search import available_modes

    return (available_modes(workspace) or ["bm25"])[0]


def run(inv: Invocation) -> SearchResultsView:
    args = inv.args
    workspace = inv.workspace
    query = " ".join(args.query)
    # one more than shown: whether there are more to offer
    results = workspace.search(query, top_k=args.top_k + 1, mode=args.mode, min_score=args.min_score)
    view = SearchResultsView(
        query, args.mode or default_mode(workspace), results[: args.top_k], base_path_of(workspace)
    )
    if len(results) > args.top_k:
        view.more_hint = f"More results: `%ws search {query} -k {max(2 * args.top_k, 10)}`"
    if not results and not (workspace.get_info().search or {}).get("documents"):
        view.empty_hint = "The index is empty: index files first with `%ws index`."
    return view


COMMAND = Subcommand(
    name="search",
    summary="ranked search with highlighted snippets: `%ws search QUERY [--mode M] [-k N]`",
    doc=__doc__ or "",
    configure=configure,
    run=run,
)
