"""The notebook user's data, shown to an agent read-only and copied only in safe formats.

The user shares variables (:class:`SharedNamespace`, attached to a workspace by the ``%ws``
extension or ``Workspace.share``); the agent's ``user_variable_*`` tools list and inspect them
(:mod:`.describe`: bounded, and no code of the user's objects ever runs) and request copies into
a sandbox kernel (:mod:`.transfer`), which the user approves. Copies back from the sandbox
(``Workspace.fetch``, ``%ws fetch``) accept only safe formats, checked as hostile input
(:mod:`.codecs`, :mod:`.arrow`): Arrow IPC for DataFrames, ``.npy`` without pickle for arrays,
JSON for plain data. Nothing here imports IPython; pandas, polars and pyarrow are imported only
when a value of theirs is met.
"""

from __future__ import annotations

from .codecs import DEFAULT_MAX_BYTES, FORMATS, SAFE_FORMATS_TEXT, Encoding, decode, plan
from .describe import Summary, describe, summarize
from .registry import attach, detach, shared_namespace
from .shares import SharedNamespace, SharedVariable, ShareResult, hidden_reason
from .transfer import CopyReport, FetchResult, check_name, copy_into_kernel, fetch_from_kernel

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMATS",
    "SAFE_FORMATS_TEXT",
    "CopyReport",
    "Encoding",
    "FetchResult",
    "ShareResult",
    "SharedNamespace",
    "SharedVariable",
    "Summary",
    "attach",
    "check_name",
    "copy_into_kernel",
    "decode",
    "describe",
    "detach",
    "fetch_from_kernel",
    "hidden_reason",
    "plan",
    "shared_namespace",
    "summarize",
]
