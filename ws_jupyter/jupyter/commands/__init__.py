"""The ``%ws`` subcommands, one module each (``ls.py`` is ``%ws ls``, ``run.py`` is ``%ws run``...).

Modules import nothing heavy at import time (the workspace API is imported inside ``run``), so
building the whole table costs a few milliseconds when the extension loads.
"""

from __future__ import annotations

import importlib
import threading

from .base import CellMode, Invocation, Subcommand

__all__ = ["CellMode", "Invocation", "Subcommand", "all_commands", "find_command", "overview"]

# Order of ``%ws --help``: getting a workspace, files, checkpoints, commands, processes, search,
# skills, tools, the user's data, UI, the environment.
_MODULES = (
    "init",
    "use",
    "info",
    "ls",
    "cat",
    "write",
    "grep",
    "checkpoint",
    "changes",
    "restore",
    "run",
    "bg",
    "ps",
    "logs",
    "kill",
    "send",
    "kernel",
    "py",
    "index",
    "search",
    "skills",
    "skill",
    "tools",
    "call",
    "share",
    "unshare",
    "fetch",
    "live",
    "ui",
    "doctor",
)

_lock = threading.Lock()
_table: dict[str, Subcommand] | None = None


def all_commands() -> dict[str, Subcommand]:
    """Every subcommand by name, in help order."""
    global _table
    with _lock:
        if _table is None:
            table: dict[str, Subcommand] = {}
            for module in _MODULES:
                command: Subcommand = importlib.import_module(f"{__name__}.{module}").COMMAND
                table[command.name] = command
            _table = table
        return _table


def find_command(name: str) -> Subcommand | None:
    """A subcommand by name or alias."""
    table = all_commands()
    if name in table:
        return table[name]
    for command in table.values():
        if name in command.aliases:
            return command
    return None


def overview() -> str:
    """The text of ``%ws --help`` (also the ``%ws?`` docstring)."""
    from ..expansion import RULES

    width = max(len(name) for name in all_commands()) + 2
    lines = [
        "%ws SUBCOMMAND [ARGS]   and   %%ws SUBCOMMAND [ARGS] + cell body",
        "",
        "The notebook's workspace: files, shell commands and processes, search, skills, agent tools.",
        "Start with `%ws init [DIR]` (or `%ws use VAR`), then for example `%ws ls`, `%ws run make test`.",
        "",
        "Subcommands (`%ws SUBCOMMAND --help` for details):",
    ]
    for command in all_commands().values():
        body = (
            " (also %%ws)"
            if command.cell == "optional"
            else " (%%ws cell)"
            if command.cell == "required"
            else ""
        )
        lines.append(f"  {command.name:<{width}}{command.summary}{body}")
    lines += [
        "",
        "Settings: `%config WsMagics` lists them, e.g. `%config WsMagics.default_dir = 'data'`.",
        "",
        "Python values in a %ws line:",
        RULES,
    ]
    return "\n".join(lines).rstrip() + "\n"
