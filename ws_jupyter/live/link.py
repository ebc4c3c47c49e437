"""``FrontEndLink``: the :class:`~ws_jupyter.live.protocol.LiveNotebook` protocol over a message
channel to the front end that shows the notebook.

The channel is a :class:`Transport`: ``announce`` offers a fresh channel to whatever front end
serves this kernel (in Jupyter: a comm the kernel opens, which reaches the page even while a cell
runs), ``send`` delivers one JSON message, and the transport hands every message that comes back
to :meth:`FrontEndLink.receive` — from any thread (in Jupyter: the kernel subshell the front end
talks through, so a reply arrives while the cell that waits for it is still running).

The conversation:

* the link announces itself (``{"protocol": 1, "nonce": ...}``); each front end that has the
  notebook open answers ``hello`` with its id, the notebook's path, whether it can reach the kernel
  while a cell runs (``subshells``) and the user's settings. The first hello to the newest
  announcement wins; later ones from other pages are ignored (messages carry ``to``/``from``);
* a request is ``{"id", "to", "op", "args"}`` and gets one reply ``{"re", "ok", "result" |
  "error"}``. A request that gets no reply in ``reply_timeout`` seconds means the page went away
  (closed, reloaded): the link announces again once, and retries with the page that answers;
* the user's decisions arrive as events (``{"event": "proposal" | "run" | "settings"}``).

Proposals and user runs are remembered (the newest :data:`_KEEP`), so an agent that stopped
waiting can ask again by id. When another page takes over, what the old one still had pending is
``withdrawn`` (the new page never showed it).
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from ..errors import InvalidArgumentError, LiveNotebookError
from .model import (
    MAX_READ_CELLS,
    LiveStatus,
    NotebookView,
    Proposal,
    ProposalOutcome,
    UserRunOutcome,
)

__all__ = ["PROTOCOL", "FrontEndLink", "Transport"]

PROTOCOL = 1
#: How many proposals and user runs are remembered for a later poll.
_KEEP = 500
#: Slice of a wait, so an abort (or a closed link) is noticed promptly.
_TICK = 0.2
_INSTALL = (
    "The ws-jupyter JupyterLab extension comes with `pip install ws-jupyter` (check with "
    "`jupyter labextension list`); reload the notebook page after installing it."
)


class Transport(Protocol):
    """A message channel to the front end (see the module docstring)."""

    def announce(self, data: Mapping[str, Any]) -> None: ...

    def send(self, message: Mapping[str, Any]) -> None: ...

    def close(self) -> None: ...

    def replies_blocked(self) -> str | None:
        """Why a reply could not arrive now if the front end has no subshells (None: it can)."""
        ...


class FrontEndLink:
    """A live notebook reached through a :class:`Transport` (see the module docstring)."""

    def __init__(
        self,
        transport: Transport,
        *,
        reply_timeout: float = 15.0,
        hello_timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._transport = transport
        self.reply_timeout = reply_timeout
        self.hello_timeout = hello_timeout
        self._clock = clock
        self._cond = threading.Condition()
        self._frontend: dict[str, Any] | None = None
        self._nonce: str | None = None
        self._announced_at: float | None = None
        self._closed_reason: str | None = None
        self._ids = itertools.count(1)
        self._replies: dict[str, Mapping[str, Any]] = {}
        self._proposals: OrderedDict[str, ProposalOutcome] = OrderedDict()
        self._runs: OrderedDict[str, UserRunOutcome] = OrderedDict()
        self._closed = False

    # --- incoming (any thread) ------------------------------------------------------------------

    def receive(self, message: Any) -> None:
        """One message from the front end (malformed or foreign ones are dropped)."""
        if not isinstance(message, Mapping):
            return
        with self._cond:
            hello = message.get("hello")
            if isinstance(hello, Mapping):
                self._hello(hello)
            elif self._frontend is not None and message.get("from") == self._frontend["id"]:
                if isinstance(message.get("re"), str):
                    if len(self._replies) < 1000:
                        self._replies[message["re"]] = message
                elif message.get("event") == "bye":
                    self._lost("the notebook page was closed or reloaded")
                elif isinstance(message.get("event"), str):
                    self._event(message)
            self._cond.notify_all()

    def channel_closed(self, reason: str) -> None:
        """The transport's channel was closed by the other side (``reason`` says how)."""
        with self._cond:
            self._closed_reason = reason
            if self._frontend is not None:
                self._lost(reason)
            self._cond.notify_all()

    def _hello(self, hello: Mapping[str, Any]) -> None:
        fid = hello.get("frontend")
        if not isinstance(fid, str) or not fid or len(fid) > 128 or hello.get("nonce") != self._nonce:
            return
        if self._frontend is not None and self._frontend["id"] != fid:
            return  # another page of the same kernel: the first answer to this announcement won
        previous = self._frontend
        self._frontend = {
            "id": fid,
            "path": str(hello.get("path") or "")[:4096],
            "version": str(hello.get("version") or "")[:64],
            "subshells": hello.get("subshells") is True,
            "mode": hello.get("mode") if hello.get("mode") in ("review", "accept") else "review",
            "user_runs": hello.get("user_runs") if hello.get("user_runs") in ("ask", "off") else "ask",
            "app": str(hello.get("app") or "JupyterLab")[:64],
        }
        self._closed_reason = None
        if previous is None:
            self._withdraw_pending()

    def _event(self, message: Mapping[str, Any]) -> None:
        kind = message["event"]
        try:
            if kind == "proposal":
                outcome = ProposalOutcome.from_wire(message.get("outcome"))
                self._remember(self._proposals, outcome.proposal_id, outcome)
            elif kind == "run":
                run = UserRunOutcome.from_wire(message.get("outcome"))
                self._remember(self._runs, run.run_id, run)
            elif kind == "settings" and self._frontend is not None:
                if message.get("mode") in ("review", "accept"):
                    self._frontend["mode"] = message["mode"]
                if message.get("user_runs") in ("ask", "off"):
                    self._frontend["user_runs"] = message["user_runs"]
                if isinstance(message.get("path"), str):
                    self._frontend["path"] = message["path"][:4096]
        except LiveNotebookError:
            pass  # a malformed event changes nothing

    def _lost(self, reason: str) -> None:
        self._frontend = None
        self._closed_reason = reason
        self._withdraw_pending()

    def _withdraw_pending(self) -> None:
        note = "the notebook page went away before the user decided; read the notebook and propose again"
        for pid, outcome in list(self._proposals.items()):
            if outcome.pending:
                self._proposals[pid] = replace(outcome, status="withdrawn", message=note)
        for rid, run in list(self._runs.items()):
            if run.status == "pending":
                self._runs[rid] = replace(run, status="withdrawn", message=note)

    @staticmethod
    def _remember(table: OrderedDict[str, Any], key: str, value: Any) -> None:
        table[key] = value
        table.move_to_end(key)
        while len(table) > _KEEP:
            table.popitem(last=False)

    # --- connection --------------------------------------------------------------------------------

    def status(self) -> LiveStatus:
        with self._cond:
            fe = self._frontend
            if fe is None:
                return LiveStatus(False, problem=self._closed_reason or self._unreached())
            return LiveStatus(
                True,
                path=fe["path"],
                frontend=fe["app"],
                version=fe["version"],
                subshells=fe["subshells"],
                mode=fe["mode"],
                user_runs=fe["user_runs"],
            )

    def _unreached(self) -> str:
        if self._announced_at is None:
            return "not connected yet"
        return f"no notebook page answered. {_INSTALL}"

    def announce(self) -> None:
        """Offers a new channel to the front end (a page that answers becomes the one in use)."""
        with self._cond:
            if self._closed:
                return
            self._nonce = secrets.token_hex(8)
            self._announced_at = self._clock()
            self._frontend = None
            self._withdraw_pending()
            nonce = self._nonce
        self._transport.announce({"protocol": PROTOCOL, "nonce": nonce})

    def connect(self, timeout: float) -> LiveStatus:
        """Announces (unless a page is connected) and waits up to ``timeout`` for its hello."""
        with self._cond:
            connected = self._frontend is not None
        if not connected:
            self.announce()
            self._wait(lambda: self._frontend is not None, timeout)
        return self.status()

    def available(self, probe: float = 0.0, every: float = 30.0) -> bool:
        """True when a page is connected. Unconnected, it announces (at most once per ``every``
        seconds) and waits for an answer until ``probe`` seconds after the latest announcement
        (so repeated calls in a notebook without the front-end extension cost nothing)."""
        with self._cond:
            if self._frontend is not None:
                return True
            due = self._announced_at is None or self._clock() - self._announced_at >= every
        if due and not self._closed:
            self.announce()
        with self._cond:
            left = (self._announced_at or 0.0) + probe - self._clock()
        if left > 0:
            self._wait(lambda: self._frontend is not None, left)
        with self._cond:
            return self._frontend is not None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._lost("the link was closed")
            self._cond.notify_all()
        self._transport.close()

    # --- requests ----------------------------------------------------------------------------------

    def _wait(self, done: Callable[[], bool], timeout: float, abort: threading.Event | None = None) -> bool:
        deadline = self._clock() + max(0.0, timeout)
        with self._cond:
            while not done():
                if self._closed or (abort is not None and abort.is_set()):
                    return False
                left = deadline - self._clock()
                if left <= 0:
                    return False
                self._cond.wait(min(left, _TICK))
            return True

    def _frontend_id(self) -> str:
        fe = self._frontend
        if fe is None:
            self.connect(self.hello_timeout)
            fe = self._frontend
        if fe is None:
            raise LiveNotebookError(
                "No notebook front end is connected to this kernel: "
                + (self._closed_reason or self._unreached()),
                code="LIVE_NOT_CONNECTED",
            )
        if not fe["subshells"]:
            blocked = self._transport.replies_blocked()
            if blocked:
                raise LiveNotebookError(
                    f"The notebook cannot answer while this cell runs: {blocked}", code="LIVE_KERNEL_BUSY"
                )
        return str(fe["id"])

    def request(self, op: str, args: Mapping[str, Any], *, retry: bool = True) -> Mapping[str, Any]:
        """Sends one request and returns the front end's ``result`` (raises on an error reply)."""
        fid = self._frontend_id()
        rid = f"r{next(self._ids)}"
        self._transport.send({"id": rid, "to": fid, "op": op, "args": dict(args)})
        if not self._wait(lambda: rid in self._replies, self.reply_timeout):
            with self._cond:
                self._replies.pop(rid, None)
                if self._closed:
                    raise LiveNotebookError("the live link was closed", code="LIVE_NOT_CONNECTED")
                if self._frontend is not None and self._frontend["id"] == fid:
                    self._lost(f"the notebook page stopped answering (no reply in {self.reply_timeout:g} s)")
            if retry:
                self.connect(self.hello_timeout)
                return self.request(op, args, retry=False)
            raise LiveNotebookError(
                f"The notebook page did not answer within {self.reply_timeout:g} s", code="LIVE_TIMEOUT"
            )
        with self._cond:
            reply = self._replies.pop(rid)
        if reply.get("ok") is True and isinstance(reply.get("result"), Mapping):
            return reply["result"]
        error = reply.get("error")
        message = error.get("message") if isinstance(error, Mapping) else None
        raise LiveNotebookError(
            str(message)[:2000] if isinstance(message, str) else "the notebook refused the request",
            code="LIVE_REFUSED",
        )

    # --- the LiveNotebook protocol -------------------------------------------------------------

    def read(
        self, *, cell_ids: Sequence[str] | None = None, offset: int = 0, limit: int | None = None
    ) -> NotebookView:
        if offset < 0:
            raise InvalidArgumentError("offset must be >= 0")
        if cell_ids is not None and len(cell_ids) > MAX_READ_CELLS:
            raise InvalidArgumentError(f"at most {MAX_READ_CELLS} cell ids per read")
        count = MAX_READ_CELLS if limit is None else max(1, min(int(limit), MAX_READ_CELLS))
        args: dict[str, Any] = {"offset": int(offset), "limit": count}
        if cell_ids is not None:
            args["cell_ids"] = list(cell_ids)
        return NotebookView.from_wire(self.request("read", args))

    def propose(
        self, proposal: Proposal, *, wait: float, abort: threading.Event | None = None
    ) -> ProposalOutcome:
        outcome = ProposalOutcome.from_wire(self.request("propose", proposal.to_wire()))
        with self._cond:
            known = self._proposals.get(outcome.proposal_id)
            if known is None or known.pending:  # an event may already have said more
                self._remember(self._proposals, outcome.proposal_id, outcome)
        return self.proposal(outcome.proposal_id, wait=wait, abort=abort)

    def proposal(
        self, proposal_id: str, *, wait: float, abort: threading.Event | None = None
    ) -> ProposalOutcome:
        with self._cond:
            if proposal_id not in self._proposals:
                raise InvalidArgumentError(f"no proposal {proposal_id!r} was made through this kernel")

        def decided() -> bool:
            return not self._proposals[proposal_id].pending

        self._wait(decided, wait, abort)
        with self._cond:
            return self._proposals[proposal_id]

    def show_outputs(
        self, cell_id: str, version: str, outputs: Sequence[Mapping[str, Any]], *, origin: Mapping[str, Any]
    ) -> str:
        result = self.request(
            "show_outputs",
            {"cell_id": cell_id, "version": version, "outputs": list(outputs), "origin": dict(origin)},
        )
        status = result.get("status")
        return status if status in ("shown", "stale") else "stale"

    def run_in_user_kernel(
        self,
        cell_ids: Sequence[str],
        versions: Mapping[str, str],
        *,
        wait: float,
        abort: threading.Event | None = None,
    ) -> UserRunOutcome:
        outcome = UserRunOutcome.from_wire(
            self.request("run_user", {"cell_ids": list(cell_ids), "versions": dict(versions)})
        )
        with self._cond:
            known = self._runs.get(outcome.run_id)
            if known is None or known.status == "pending":
                self._remember(self._runs, outcome.run_id, outcome)
        return self.user_run(outcome.run_id, wait=wait, abort=abort)

    def user_run(self, run_id: str, *, wait: float, abort: threading.Event | None = None) -> UserRunOutcome:
        with self._cond:
            if run_id not in self._runs:
                raise InvalidArgumentError(f"no run {run_id!r} was requested through this kernel")
        self._wait(lambda: self._runs[run_id].status != "pending", wait, abort)
        with self._cond:
            return self._runs[run_id]

    # --- the user's settings (the %ws live magic; not part of what tools may call) ----------------

    def set_settings(self, *, mode: str | None = None, user_runs: str | None = None) -> LiveStatus:
        """Changes the review mode (``review``/``accept``) or whether the agent may ask to run cells
        in the user's kernel (``ask``/``off``), in the connected page."""
        args: dict[str, Any] = {}
        if mode is not None:
            if mode not in ("review", "accept"):
                raise InvalidArgumentError("mode must be review or accept")
            args["mode"] = mode
        if user_runs is not None:
            if user_runs not in ("ask", "off"):
                raise InvalidArgumentError("user_runs must be ask or off")
            args["user_runs"] = user_runs
        result = self.request("settings", args)
        with self._cond:
            if self._frontend is not None:
                for key in ("mode", "user_runs"):
                    if result.get(key) in (("review", "accept") if key == "mode" else ("ask", "off")):
                        self._frontend[key] = result[key]
        return self.status()
