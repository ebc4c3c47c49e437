"""Views of commands and processes: ``%ws run`` (the outcome line), ``%ws ps`` and ``%ws logs``,
and the state names and colours the process widgets share with them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import RichView
from .common import BAD, MONO, MUTED, OK, PRE, WARN, badge, esc, format_duration, table, text_table

__all__ = [
    "HEAD_LINES",
    "STATE_COLOURS",
    "TAIL_LINES",
    "LogView",
    "OutputTailView",
    "ProcessRow",
    "ProcessTableView",
    "RunSummary",
    "head_and_tail",
    "process_state",
]

#: Lines of a command's output a cell shows before it switches to "… N lines … + the newest".
HEAD_LINES = 100
TAIL_LINES = 30


def head_and_tail(text: str, head: int = HEAD_LINES, tail: int = TAIL_LINES) -> tuple[str, int, str]:
    """``text`` cut to its first ``head`` and last ``tail`` lines: ``(head, lines left out, tail)``."""
    n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if n <= head + tail:
        return text, 0, ""
    first = text.split("\n", head)
    last = text.rsplit("\n", tail + (1 if text.endswith("\n") else 0))
    tail_text = "\n".join(last[1:])
    return "\n".join(first[:head]) + "\n", n - head - tail, tail_text


def _omitted(count: int, where: str) -> str:
    return f"… {count:,} line{'' if count == 1 else 's'} not shown{where} …"


@dataclass(repr=False)
class RunSummary(RichView):
    """``%ws run``: the outcome line shown after the streamed output (which it also keeps).

    ``streamed`` says the output already appeared in the cell, so only the status line is drawn.
    """

    command: str
    exit_code: int | None
    duration: float
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    killed: bool = False
    interrupted: bool = False
    streamed: bool = True
    truncated: bool = False  # the result lost the oldest output (beyond the retention limit)
    network_note: str = ""  # network allow mode: the command's denied connection attempts
    kind = "run"

    @classmethod
    def of(
        cls,
        result: Any,
        *,
        command: str | None = None,
        duration: float | None = None,
        streamed: bool = False,
        interrupted: bool = False,
    ) -> RunSummary:
        """The summary of a ``CommandResult`` (``duration``: its ``execution_time_ms`` unless given)."""
        return cls(
            command=getattr(result, "command", "") if command is None else command,
            exit_code=result.exit_code,
            duration=float(getattr(result, "execution_time_ms", 0.0)) / 1000
            if duration is None
            else duration,
            stdout=result.stdout,
            stderr=result.stderr,
            timed_out=bool(getattr(result, "timed_out", False)),
            killed=bool(getattr(result, "killed", False)) and not interrupted,
            interrupted=interrupted,
            streamed=streamed,
            truncated=bool(getattr(result, "stdout_truncated", False) or getattr(result, "stderr_truncated", False)),
            network_note=str(getattr(result, "network_note", "") or ""),
        )

    @property
    def success(self) -> bool:
        return self.exit_code == 0 and not (self.timed_out or self.killed or self.interrupted)

    def status(self) -> str:
        when = format_duration(self.duration)
        if self.interrupted:
            return f"interrupted after {when}: process tree killed"
        if self.timed_out:
            return f"timed out after {when} (exit {self.exit_code})"
        if self.killed:
            return f"killed after {when} (exit {self.exit_code})"
        return f"exit {self.exit_code} · {when}" + (
            " · the result keeps only the newest output" if self.truncated else ""
        )

    def _shown(self, text: str) -> tuple[str, str]:
        """An output as the cell shows it (head, "… N lines …", tail), plain and HTML."""
        head, hidden, tail = head_and_tail(text.rstrip("\n") + "\n" if text else "")
        if not hidden:
            return head.rstrip("\n"), esc(head)
        note = _omitted(hidden, " (all of it is in the result: r = _; r.stdout, r.stderr)")
        return (
            f"{head}{note}\n{tail}".rstrip("\n"),
            f'{esc(head)}<span style="{MUTED}; font-style: italic">{esc(note)}</span>\n{esc(tail)}',
        )

    def text(self) -> str:
        lines = []
        if not self.streamed:
            for stream in (self.stdout, self.stderr):
                if stream:
                    lines.append(self._shown(stream)[0])
        lines.append(("✓ " if self.success else "✗ ") + self.status())
        if self.network_note:
            lines.append(self.network_note)
        return "\n".join(lines)

    def html_body(self) -> str:
        colour = OK if self.success else BAD
        out = ""
        if not self.streamed and (self.stdout or self.stderr):
            out = f'<pre style="{PRE}; margin-bottom: 4px">{self._shown(self.stdout)[1] if self.stdout else ""}'
            if self.stderr:
                out += f'<span style="color: {BAD}">{self._shown(self.stderr)[1]}</span>'
            out += "</pre>"
        note = (
            f'<div style="color: {WARN}; font-size: 0.92em">{esc(self.network_note)}</div>'
            if self.network_note
            else ""
        )
        return (
            f'{out}<div style="{MUTED}; font-size: 0.92em">{badge("✓" if self.success else "✗", colour)} '
            f"{esc(self.status())}</div>{note}"
        )


@dataclass(repr=False)
class OutputTailView(RichView):
    """The newest lines of a long ``%ws run`` (or ``%%ws py``) output, after its first lines and a
    count of those in between. The cell updates it live while the command runs; ``running`` picks
    the notice, ``kept`` says where the whole output is (None: the ``%ws run`` result)."""

    hidden: int
    lines: list[tuple[str, str]]  # (stream, line): the newest complete lines
    running: bool = True
    truncated: bool = False
    kept: str | None = None
    kind = "run-tail"

    def notice(self) -> str:
        if self.kept is not None:
            return _omitted(
                self.hidden,
                f" ({self.kept})" if not self.running else f" so far; the newest follow ({self.kept})",
            )
        if self.running:
            where = " so far; the newest follow (all of it will be in the result: r = _; r.stdout)"
        elif self.truncated:
            where = " (the result keeps the newest output: r = _; r.stdout)"
        else:
            where = " (all of it is in the result: r = _; r.stdout, r.stderr)"
        return _omitted(self.hidden, where)

    def text(self) -> str:
        return "\n".join([self.notice(), *(line for _, line in self.lines)])

    def html_body(self) -> str:
        body = "".join(
            f'<span style="color: {BAD}">{esc(line)}</span>\n' if kind == "stderr" else f"{esc(line)}\n"
            for kind, line in self.lines
        )
        return (
            f'<div style="{MUTED}; font-style: italic; margin: 2px 0">{esc(self.notice())}</div>'
            f'<pre style="{PRE}">{body}</pre>'
        )


def process_state(process: Any) -> str:
    """``running``, ``exited`` (0), ``failed`` (non-zero), ``killed`` or ``timed out``.

    ``process`` is a ``ProcessHandle`` or a ``ProcessInfo``: the state comes from what the sandbox
    recorded (``killed``, ``timed_out``), so ``%ws ps``, the process monitor and the live output
    widget of one process always agree.
    """
    if process.exit_code is None:
        return "running"
    if getattr(process, "timed_out", False):
        return "timed out"
    if getattr(process, "killed", False):
        return "killed"
    return "exited" if process.exit_code == 0 else "failed"


STATE_COLOURS = {"running": OK, "failed": BAD, "killed": WARN, "timed out": WARN, "cancelled": WARN}


@dataclass(frozen=True)
class ProcessRow:
    pid: int
    command: str
    state: str
    runtime: float | None
    exit_code: int | None

    @classmethod
    def from_info(cls, info: Any) -> ProcessRow:
        return cls(
            pid=int(info.pid),
            command=str(info.command),
            state=process_state(info),
            runtime=getattr(info, "runtime_seconds", None),
            exit_code=info.exit_code,
        )


@dataclass(frozen=True)
class JobRow:
    """One job (a long run an agent started): its id, kind, state, runtime, who started it."""

    id: str
    kind: str
    state: str
    runtime: float | None
    owner: str
    what: str

    @classmethod
    def from_job(cls, job: Any) -> JobRow:
        where = f"PID {job.pid}" if job.kind == "command" else f"kernel {job.kernel}"
        return cls(
            id=str(job.id),
            kind=f"{job.kind} ({where})",
            state=str(job.status),
            runtime=float(job.runtime),
            owner=str(job.client or job.owner or "this notebook's agent"),
            what=" ".join(str(job.label).split())[:120],
        )


_JOB_HEADERS = ["JOB", "KIND", "STATE", "RUNTIME", "STARTED BY", "WHAT"]


@dataclass(repr=False)
class ProcessTableView(RichView):
    """``%ws ps``: one row per background process, then the agents' jobs (a command job is one
    of the processes too; a code job runs on a kernel)."""

    rows: list[ProcessRow]
    jobs: list[JobRow] = field(default_factory=list)
    kind = "ps"

    def title(self) -> str:
        return "Background processes"

    def meta(self) -> str:
        running = sum(1 for r in self.rows if r.state == "running")
        return f"{len(self.rows)} total, {running} running"

    def _cells(self) -> list[list[str]]:
        return [
            [
                str(r.pid),
                r.state,
                format_duration(r.runtime),
                "" if r.exit_code is None else str(r.exit_code),
                r.command,
            ]
            for r in self.rows
        ]

    def _job_cells(self) -> list[list[str]]:
        return [[j.id, j.kind, j.state, format_duration(j.runtime), j.owner, j.what] for j in self.jobs]

    def text(self) -> str:
        out = (
            text_table(["PID", "STATE", "RUNTIME", "EXIT", "COMMAND"], self._cells(), numeric=(0, 3))
            if self.rows
            else "No background processes."
        )
        if self.jobs:
            out += "\n\nJobs:\n" + text_table(_JOB_HEADERS, self._job_cells())
        return out

    def html_body(self) -> str:
        jobs = ""
        if self.jobs:
            cells = [
                [
                    f'<span style="{MONO}">{esc(c[0])}</span>',
                    esc(c[1]),
                    f'<span style="color: {STATE_COLOURS.get(c[2], "inherit")}">{esc(c[2])}</span>',
                    esc(c[3]),
                    esc(c[4]),
                    f'<span style="{MONO}">{esc(c[5])}</span>',
                ]
                for c in self._job_cells()
            ]
            jobs = "<div style='margin-top: 6px'><strong>Jobs</strong></div>" + table(
                [h.lower() for h in _JOB_HEADERS], cells
            )
        return self._processes_html() + jobs

    def _processes_html(self) -> str:
        if not self.rows:
            return (
                f'<div style="{MUTED}">No background processes. Start one with <code>%ws bg CMD</code>.</div>'
            )
        rows = [
            [
                f'<span style="{MONO}">{esc(c[0])}</span>',
                f'<span style="color: {STATE_COLOURS.get(c[1], "inherit")}">{esc(c[1])}</span>',
                esc(c[2]),
                esc(c[3]),
                f'<span style="{MONO}">{esc(c[4])}</span>',
            ]
            for c in self._cells()
        ]
        return table(["PID", "state", "runtime", "exit", "command"], rows, numeric=(0, 3))


@dataclass(repr=False)
class LogView(RichView):
    """``%ws logs``: a process's retained output (stdout, then stderr)."""

    pid: int
    command: str
    stdout: str
    stderr: str
    running: bool
    exit_code: int | None
    shown: str = ""
    kind = "logs"

    def title(self) -> str:
        return f"PID {self.pid}: {self.command}"

    def meta(self) -> str:
        state = "running" if self.running else f"exited ({self.exit_code})"
        return " · ".join(x for x in (state, self.shown) if x)

    def text(self) -> str:
        parts = [f"{self.title()} [{self.meta()}]"]
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("stderr:\n" + self.stderr.rstrip("\n"))
        if not self.stdout and not self.stderr:
            parts.append("(no output yet)")
        return "\n".join(parts)

    def html_body(self) -> str:
        if not self.stdout and not self.stderr:
            return f'<div style="{MUTED}">(no output yet)</div>'
        body = f'<pre style="{PRE}; max-height: 30em; overflow: auto">{esc(self.stdout)}'
        if self.stderr:
            body += f'<span style="color: {BAD}">{esc(self.stderr)}</span>'
        return body + "</pre>"
