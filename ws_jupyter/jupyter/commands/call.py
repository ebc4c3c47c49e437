r"""Call an agent tool exactly as an agent would, and see the output the model would get.

ARGS is a JSON object, or a Python expression giving a dict (`dict(path=p)`, a variable); as a
cell magic the body holds it. Arguments are validated against the tool's schema, and the tools'
policy applies: hooks, read tracking, output budgets — and approval. A tool that requires approval
(by default `workspace_execute_command` on a sandbox without isolation) shows Approve and Deny
buttons and runs once approved; --approve approves it up front.

A call that takes a while shows its progress in the cell as it runs — what it is doing (starting
the kernel, running) with the time so far and, for `workspace_execute_code`, the newest lines of
its output —, replaced by the output the model gets when it ends. The kernel's stop button (■)
cancels the call the way an agent's client does: the sandbox kernel is interrupted (its state
is kept), a command is killed, and the call ends as "interrupted" (pressed twice, the cell stops
waiting for a tool that does not stop; pressed before the call began, the tool is not called).

Examples:
  %ws call workspace_read_file {"path": "README.md", "limit": 20}
  %ws call workspace_grep dict(pattern="TODO", context_lines=1)
  %ws call workspace_execute_command {"command": "ls -la"}

  %%ws call workspace_write_file
  {"path": "notes/todo.md", "content": "- write tests\n"}
"""

from __future__ import annotations

import json
import queue
import time
from collections import deque
from typing import Any

from IPython.display import display

from ...sandbox.capabilities import sandbox_kernels
from ..calls import CallOutcome, new_call_tag, run_observed
from ..parsing import WsArgumentParser
from ..views.base import MessageView
from ..views.tools import CallProgressView, ToolCallView
from ._foreground import StopButton, drain, events_queue, run_in_foreground
from .base import Invocation, Subcommand

__all__ = ["COMMAND", "find_tool", "parse_arguments"]


def configure(parser: WsArgumentParser) -> None:
    parser.add_argument(
        "--approve", action="store_true", help="approve the call up front if it needs approval"
    )
    parser.add_argument("command", nargs="*", metavar="TOOL ARGS", help="tool name, then its arguments")


def parse_arguments(inv: Invocation, text: str) -> dict[str, Any]:
    """JSON first (what a model sends); else a Python expression in the notebook's namespace."""
    text = text.strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as json_error:
        try:
            value = eval(compile(text, "<%ws call>", "eval"), inv.user_ns)
        except Exception as exc:
            raise inv.usage_error(
                f"ARGS must be a JSON object or a Python dict expression: JSON: {json_error}; Python: "
                f"{type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(value, dict):
        raise inv.usage_error(f"ARGS must be an object/dict, got {type(value).__name__}")
    return value


def find_tool(inv: Invocation, tools: list[Any], name: str) -> Any:
    for tool in tools:
        if name in (tool.name, tool.workspace_tool_name):
            return tool
    available = ", ".join(t.name for t in tools) or "none"
    raise inv.usage_error(f"Unknown tool {name!r}. Available tools: {available}")


def run(inv: Invocation) -> Any:
    from ... import ToolsConfig

    name, _, rest = inv.args.command.strip().partition(" ")
    if not name:
        raise inv.usage_error("usage: %ws call TOOL ARGS (see `%ws tools` for the names)")
    if inv.cell is not None:
        if rest.strip():
            raise inv.usage_error("give ARGS either on the line or as the cell body, not both")
        rest = inv.cell
    workspace = inv.workspace
    tool = find_tool(inv, workspace.tools(), name)
    arguments = parse_arguments(inv, rest)
    if not inv.args.approve and tool.needs_approval(arguments):
        config = ToolsConfig.coerce(workspace.get_tools_config())
        if config.approver is None:
            if not inv.in_kernel:
                raise inv.usage_error(f"{tool.name} requires approval: add --approve to approve this call")
            from ..widgets.tool_call import ToolCallPanel

            panel = ToolCallPanel(workspace, tool, arguments, interval=inv.magics.update_interval)
            inv.session.track(panel.close)
            display(panel)
            return None
    # From here on the stop button cancels the call, whenever it is pressed (see StopButton).
    with StopButton() as stop:
        return _run_call(inv, stop, tool, arguments)


def _run_call(inv: Invocation, stop: StopButton, tool: Any, arguments: dict[str, Any]) -> Any:
    workspace = inv.workspace
    progress = _Progress(workspace, tool, arguments, live=inv.in_kernel)
    try:
        done = run_in_foreground(
            lambda abort: run_observed(
                workspace,
                tool,
                arguments,
                tag=progress.tag,
                approved=True if inv.args.approve else None,
                abort=abort,
            ),
            progress.pump,
            name="ws-call",
            stop=stop,
            abandon_on_second_interrupt=True,
            on_interrupt=progress.stop,
        )
    finally:
        progress.close()
    if not done.started:
        return MessageView(f"{tool.name}: interrupted before it started; the tool was not called", "warn")
    if done.abandoned:
        message = MessageView(
            f"{tool.name}: interrupted; the tool did not stop when asked, so it finishes in the background "
            "(its output is not shown; the ToolActivity log gets it)",
            "warn",
        )
        return progress.finish(message)
    if done.error is not None:
        raise done.error
    call = done.value
    assert isinstance(call, CallOutcome)
    view = ToolCallView.of(tool.name, arguments, call.output, call.seconds, call.blocked, call.cancelled)
    return progress.finish(view)


class _Progress:
    """The cell's live display of a running call, drawn from the main thread (see the module doc).

    Subscribers (on the call's threads) only queue events: the call's own events from the tool
    feed and, for code, its execution's events from the kernels' feed (matched by the call's
    ``tool_call_id``). ``pump`` applies them and shows the progress once the call has run for
    ``_SHOW_AFTER`` seconds, printed something, or begun a step that takes a while (starting a
    kernel, waiting for approval: said at once, however soon the step ends); then it is updated
    at most every ``_UPDATE`` seconds when something changed, and every second for the time.
    A quick call shows nothing until its result, as before.
    """

    _SHOW_AFTER = 0.5
    _UPDATE = 0.3
    _LINES = 20
    _LINE = 500  # characters of one line kept

    def __init__(self, workspace: Any, tool: Any, arguments: dict[str, Any], *, live: bool) -> None:
        from ... import WORKSPACE_TOOLS, tool_activity

        self.tool = tool
        self.arguments = arguments
        self.live = live
        self.tag = new_call_tag()
        self.started = time.monotonic()
        self.state = "running"
        self.kernel: str | None = None
        self.lines: deque[tuple[str, str]] = deque(maxlen=self._LINES)
        self.hidden = 0
        self.partial = {"stdout": "", "stderr": ""}
        self.rich: list[str] = []
        self.stopping = False
        self._events: queue.Queue[Any] = events_queue()
        self._display: Any = None
        self._shown_at = 0.0
        self._dirty = False  # something changed since the last drawing
        self._eager = False  # output: worth showing before _SHOW_AFTER
        self._urgent = False
        self._unsubscribe = [tool_activity(workspace).subscribe(self._on_event)] if live else []
        self.kernels: Any = None
        if live and tool.workspace_tool_name == WORKSPACE_TOOLS.SANDBOX.EXECUTE_CODE:
            self.kernels = sandbox_kernels(workspace.sandbox)  # None: a per-request sandbox
            if self.kernels is not None:
                self._unsubscribe.append(self.kernels.activity.subscribe(self._on_event))

    def _on_event(self, event: Any) -> None:
        if getattr(event, "tool_call_id", None) == self.tag:
            self._events.put(event)

    def pump(self, timeout: float) -> None:
        if not self.live:  # terminal IPython: nothing to update in place
            time.sleep(timeout)
            return
        drain(self._events, self._apply, timeout)
        now = time.monotonic()
        if self._display is None:
            due = self._eager or now - self.started >= self._SHOW_AFTER
        else:  # new output a few times a second; the time so far every second
            due = self._urgent or now - self._shown_at >= (self._UPDATE if self._dirty else 1.0)
        if due:
            self._show(now)

    def _apply(self, event: Any) -> None:
        kind, state = event.kind, self.state
        if kind == "approval_requested":
            self._slow_step("waiting for approval")
        elif kind == "approval_resolved":
            self.state = "running"
        elif kind == "queued":
            self.kernel = event.kernel
            kernel = self.kernels.get(event.kernel) if self.kernels is not None else None
            starting = kernel is None or kernel.status in ("stopped", "starting", "dead")
            if starting:
                self._slow_step(f"starting kernel {event.kernel!r}")
            else:
                self.state = f"waiting for kernel {event.kernel!r}"
        elif kind == "started":
            self.kernel = getattr(event, "kernel", self.kernel)
            self.state = f"running in kernel {self.kernel!r}" if self.kernel else "running"
        elif kind == "output" and event.output is not None:
            output = event.output
            if output.kind in ("stdout", "stderr"):
                self._add_text(output.kind, output.text)
            elif output.kind == "display" and output.bundle is not None:
                types = output.bundle.mime_types
                self.rich.append(next((t for t in types if t != "text/plain"), "text/plain"))
                self._dirty = self._eager = True
        if self.state != state:
            self._dirty = True

    def _slow_step(self, state: str) -> None:
        """A step that takes a while is shown at once (the events after it may be applied in the
        same ``pump``: a kernel that started quickly would never have been said to start)."""
        self.state = state
        self._show(time.monotonic())

    def stop(self) -> None:
        """The stop button was pressed: say so at once (the call is being cancelled)."""
        self.stopping = True
        self._dirty = self._urgent = True

    def _add_text(self, stream: str, text: str) -> None:
        *complete, rest = (self.partial[stream] + text).split("\n")
        self.partial[stream] = rest[-self._LINE :]
        overflow = len(self.lines) + len(complete) - self._LINES
        if overflow > 0:
            self.hidden += overflow
        self.lines.extend((stream, line[: self._LINE]) for line in complete[-self._LINES :])
        self._dirty = self._eager = True

    def view(self) -> CallProgressView:
        lines = list(self.lines) + [(k, t) for k, t in self.partial.items() if t]
        return CallProgressView(
            self.tool.name,
            self.arguments,
            self.state,
            time.monotonic() - self.started,
            lines,
            self.hidden,
            list(self.rich),
            stopping=self.stopping,
        )

    def _show(self, now: float) -> None:
        view = self.view()
        if self._display is None:
            self._display = display(view, display_id=True)
        else:
            self._display.update(view)
        self._shown_at = now
        self._dirty = self._urgent = False

    def finish(self, view: Any) -> Any:
        """The final view: in place of the progress when that was shown, else as the cell's value."""
        if self._display is None:
            return view
        self._display.update(view)
        return view.shown_in_place() if isinstance(view, ToolCallView) else None

    def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []


COMMAND = Subcommand(
    name="call",
    summary="call a tool as an agent would: `%ws call TOOL {json}` (approval applies)",
    doc=__doc__ or "",
    configure=configure,
    run=run,
    cell="optional",
    tail=True,
    expand=False,
)
