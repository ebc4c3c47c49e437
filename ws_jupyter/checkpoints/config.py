"""``CheckpointsConfig``: what ``Workspace(checkpoints=...)`` accepts, validated once.

``True``/``None`` give the defaults, ``False`` turns the automatic checkpoints off (``ws.checkpoint()``
still works), a dict sets single options::

    Workspace(..., checkpoints={"auto": "call", "max_file_bytes": 100 << 20, "budget_bytes": 5 << 30})

``auto`` says when a checkpoint is taken on its own, before an agent changes files:

* ``"turn"`` (default) — before the first file-changing tool call of each agent turn (a turn: the
  calls of one conversation and one request context, ended by ``turn_gap`` seconds without a call);
* ``"call"`` — before every file-changing tool call (file writes, commands, kernel code);
* ``"command"`` — before every command, kernel run or notebook run, and before the first file-tool
  write of a turn;
* ``"off"`` — only when asked (``ws.checkpoint()``, ``%ws checkpoint``, the agent tool).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from ..errors import WorkspaceConfigError
from ..filesystem.reading import MAX_FILE_BYTES

__all__ = ["AUTO_MODES", "DEFAULT_BUDGET_BYTES", "AutoMode", "CheckpointsConfig"]

AutoMode = Literal["turn", "call", "command", "off"]
AUTO_MODES: tuple[str, ...] = ("turn", "call", "command", "off")
#: Store size past which the oldest checkpoints are pruned.
DEFAULT_BUDGET_BYTES = 2 << 30


@dataclass(frozen=True)
class CheckpointsConfig:
    """How checkpoints are taken, what they hold and how much they may keep.

    * ``auto``: see the module docstring;
    * ``store``: where checkpoints are kept — a host directory or an fsspec URL (None: the default,
      see :func:`ws_jupyter.checkpoints.store.default_store`);
    * ``max_file_bytes``: larger files are not recorded, and every checkpoint names them as excluded;
    * ``budget_bytes``: the store's size limit; the oldest checkpoints are pruned first, and the
      checkpoint that pruned says which;
    * ``keep``: the newest checkpoints never pruned, whatever the budget;
    * ``respect_gitignore``: ``.gitignore``d files are not recorded (as git would not keep them);
    * ``exclude``: more gitignore-style patterns of paths not recorded;
    * ``turn_gap``: seconds without a tool call that end an agent turn;
    * ``lock_timeout``: seconds a restore waits for a file's write lock;
    * ``full_every``: every this many checkpoints the manifest lists every file (the others list
      only what changed since the previous one).
    """

    auto: AutoMode = "turn"
    store: str | None = None
    max_file_bytes: int = MAX_FILE_BYTES
    budget_bytes: int = DEFAULT_BUDGET_BYTES
    keep: int = 1
    respect_gitignore: bool = True
    exclude: tuple[str, ...] = ()
    turn_gap: float = 60.0
    lock_timeout: float = 60.0
    full_every: int = 32

    def __post_init__(self) -> None:
        if self.auto not in AUTO_MODES:
            raise WorkspaceConfigError(
                f"checkpoints auto must be one of {', '.join(AUTO_MODES)}, got {self.auto!r}",
                code="INVALID_CONFIG",
            )
        if self.store is not None and (not isinstance(self.store, str) or not self.store.strip()):
            raise WorkspaceConfigError(
                "checkpoints store must be a directory or a URL", code="INVALID_CONFIG"
            )
        for name in ("max_file_bytes", "budget_bytes", "full_every"):
            _positive_int(getattr(self, name), name)
        if isinstance(self.keep, bool) or not isinstance(self.keep, int) or self.keep < 1:
            raise WorkspaceConfigError(f"checkpoints keep must be an integer >= 1, got {self.keep!r}")
        for name in ("turn_gap", "lock_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise WorkspaceConfigError(f"checkpoints {name} must be a positive number of seconds")
        if isinstance(self.exclude, str) or not all(isinstance(p, str) for p in self.exclude):
            raise WorkspaceConfigError("checkpoints exclude must be a list of gitignore-style patterns")
        object.__setattr__(self, "exclude", tuple(self.exclude))

    @classmethod
    def coerce(cls, value: Any) -> CheckpointsConfig:
        """The config from what a user may pass (a config, a dict, True/None for the defaults,
        False for no automatic checkpoints)."""
        if isinstance(value, CheckpointsConfig):
            return value
        if value is None or value is True:
            return cls()
        if value is False:
            return cls(auto="off")
        if isinstance(value, Mapping):
            names = [f.name for f in fields(cls)]
            for key in value:
                if key not in names:
                    close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
                    hint = f' (did you mean "{close[0]}"?)' if close else ""
                    raise WorkspaceConfigError(
                        f'Unknown checkpoints option "{key}"{hint}; options: {", ".join(names)}',
                        code="INVALID_CONFIG",
                    )
            return replace(cls(), **dict(value))
        raise WorkspaceConfigError(
            f"checkpoints must be True, False, a dict or a CheckpointsConfig, not {type(value).__name__}",
            code="INVALID_CONFIG",
        )


def _positive_int(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise WorkspaceConfigError(f"checkpoints {name} must be a positive integer, got {value!r}")
