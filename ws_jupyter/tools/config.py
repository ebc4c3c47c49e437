"""``ToolsConfig``: what ``Workspace(tools=...)`` accepts, validated once into an immutable value.

A plain dict is fine at the edge; it is checked and converted here, so a typo in a tool name or an
option fails at configuration time with a message naming it::

    from ws_jupyter import WORKSPACE_TOOLS as T

    tools = {
        "require_approval": False,                  # top level: applies to every tool
        "hooks": {"before_tool_call": log_call},
        "approver": lambda tool_name, args, ctx: input(f"run {tool_name}? ") == "y",
        T.SANDBOX.EXECUTE_COMMAND: {"require_approval": True},
        T.FILESYSTEM.WRITE_FILE: {"require_read_before_write": True, "name": "write"},
        T.FILESYSTEM.READ_FILE: {"max_output_tokens": 4000, "max_media_bytes": 5_000_000},
    }

Precedence: built-in defaults < top-level keys < per-tool keys. ``enabled`` may be a function of
a :class:`~ws_jupyter.tools.types.ToolCallContext` (evaluated when tools are listed; a function
that raises hides the tool); ``require_approval`` may be ``fn(args, ctx)`` (evaluated per call; a
function that raises means "ask"). Left unset, ``require_approval`` is off except for
``workspace_execute_command`` on a sandbox without isolation (see ``factory.py``).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..errors import ToolConfigError
from .facts import (
    DEFAULT_MAX_MEDIA_BYTES,
    DEFAULT_MAX_OUTPUT_TOKENS,
    DEFAULT_MEDIA_TYPES,
    TOOL_SETTINGS,
)

if TYPE_CHECKING:
    from .base import ToolSpec
    from .types import ToolHookContext

__all__ = [
    "DEFAULT_MAX_MEDIA_BYTES",
    "DEFAULT_MEDIA_TYPES",
    "TOOL_SETTINGS",
    "ResolvedToolConfig",
    "ToolConfig",
    "ToolHooks",
    "ToolsConfig",
]

DEFAULT_WRITE_LOCK_TIMEOUT = 30.0

_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_RBW = "require_read_before_write"
_COMMON_KEYS = (
    "enabled",
    "require_approval",
    "name",
    "require_read_before_write",
    "max_output_tokens",
    "write_lock_timeout",
)
_TOP_KEYS = (
    "enabled",
    "require_approval",
    "require_read_before_write",
    "max_output_tokens",
    "write_lock_timeout",
    "hooks",
    "approver",
    "approval_timeout",
)

DynamicFlag = bool | Callable[..., Any]


def _suggest(key: str, choices: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(key, list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _check_flag(value: object, what: str) -> DynamicFlag | None:
    if value is None or isinstance(value, bool) or callable(value):
        return value
    raise ToolConfigError(f"{what} must be True/False or a function, got {type(value).__name__}")


def _check_tokens(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, float) and math.isinf(value) and value > 0:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ToolConfigError(f"{what} must be a non-negative integer (0 = no limit), got {value!r}")
    return value


def _check_seconds(value: object, what: str, *, allow_none: bool = True) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value <= 0:
        raise ToolConfigError(f"{what} must be a positive number of seconds, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class ToolHooks:
    """``before_tool_call(ctx)`` may return ``{"proceed": False, "output": ...}`` to skip the tool;
    ``after_tool_call(ctx)`` sees the output or the error and may return a replacement output."""

    before_tool_call: Callable[[ToolHookContext], object] | None = None
    after_tool_call: Callable[[ToolHookContext], object] | None = None

    @classmethod
    def coerce(cls, value: object) -> ToolHooks | None:
        if value is None or isinstance(value, ToolHooks):
            return value
        if isinstance(value, Mapping):
            unknown = [k for k in value if k not in ("before_tool_call", "after_tool_call")]
            if unknown:
                raise ToolConfigError(
                    f'Unknown hook "{unknown[0]}"{_suggest(unknown[0], ("before_tool_call", "after_tool_call"))}; '
                    "hooks are before_tool_call and after_tool_call"
                )
            before, after = value.get("before_tool_call"), value.get("after_tool_call")
        else:
            before = getattr(value, "before_tool_call", None)
            after = getattr(value, "after_tool_call", None)
            if before is None and after is None:
                raise ToolConfigError("hooks must be a dict with before_tool_call/after_tool_call functions")
        for name, fn in (("before_tool_call", before), ("after_tool_call", after)):
            if fn is not None and not callable(fn):
                raise ToolConfigError(f"hooks.{name} must be a function")
        return cls(before, after)


@dataclass(frozen=True)
class ToolConfig:
    """Per-tool overrides; ``None`` means "inherit". ``options`` holds tool-specific settings."""

    enabled: DynamicFlag | None = None
    require_approval: DynamicFlag | None = None
    name: str | None = None
    require_read_before_write: DynamicFlag | None = None
    max_output_tokens: int | None = None
    write_lock_timeout: float | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_value(cls, tool: str, value: object) -> ToolConfig:
        if isinstance(value, ToolConfig):
            value = {
                **{f.name: getattr(value, f.name) for f in fields(cls) if f.name != "options"},
                **value.options,
            }
        if not isinstance(value, Mapping):
            raise ToolConfigError(f"the config of {tool} must be a dict, got {type(value).__name__}")
        accepted = _spec(tool).options
        specific: tuple[str, ...] = tuple(k for k in accepted if k != _RBW)
        allowed = (*_COMMON_KEYS, *specific)
        for key in value:
            if key not in allowed:
                raise ToolConfigError(
                    f'Unknown option "{key}" for {tool}{_suggest(str(key), list(allowed))}; '
                    f"valid options: {', '.join(allowed)}"
                )
        name = value.get("name")
        if name is not None and (not isinstance(name, str) or not _NAME_RE.match(name)):
            raise ToolConfigError(
                f"{tool}: name must be 1-64 characters of letters, digits, '_' or '-', got {name!r}"
            )
        rbw = value.get("require_read_before_write")
        if rbw is not None and _RBW not in accepted:
            rbw_tools = [spec.name for spec in _specs() if _RBW in spec.options]
            raise ToolConfigError(
                f"require_read_before_write applies to {' and '.join(rbw_tools)}, not {tool}"
            )
        options = {k: value[k] for k in specific if k in value and value[k] is not None}
        _check_options(tool, options)
        return cls(
            enabled=_check_flag(value.get("enabled"), f"{tool}.enabled"),
            require_approval=_check_flag(value.get("require_approval"), f"{tool}.require_approval"),
            name=name,
            require_read_before_write=_check_flag(rbw, f"{tool}.require_read_before_write"),
            max_output_tokens=_check_tokens(value.get("max_output_tokens"), f"{tool}.max_output_tokens"),
            write_lock_timeout=_check_seconds(value.get("write_lock_timeout"), f"{tool}.write_lock_timeout"),
            options=options,
        )

    def _set_fields(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "options"}
        out = {k: v for k, v in out.items() if v is not None}
        out.update(self.options)
        return out


def _specs() -> tuple[ToolSpec, ...]:
    from .registry import tool_specs

    return tool_specs()


def _spec(tool: str) -> ToolSpec:
    from .registry import tool_spec

    spec = tool_spec(tool)
    if spec is None:  # pragma: no cover - names are checked before
        raise ToolConfigError(f'Unknown tool "{tool}"')
    return spec


def _tool_names() -> tuple[str, ...]:
    from .registry import tool_names

    return tool_names()


def _check_options(tool: str, options: Mapping[str, Any]) -> None:
    if "media_types" in options:
        mt = options["media_types"]
        if isinstance(mt, str) or not all(isinstance(m, str) and "/" in m for m in mt):
            raise ToolConfigError(f"{tool}.media_types must be a list of MIME types like 'image/png'")
    if "max_media_bytes" in options:
        v = options["max_media_bytes"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ToolConfigError(f"{tool}.max_media_bytes must be a non-negative integer, got {v!r}")
    if "allow_restore" in options and not isinstance(options["allow_restore"], bool):
        raise ToolConfigError(f"{tool}.allow_restore must be True or False")
    if "max_wait" in options:
        _check_seconds(options["max_wait"], f"{tool}.max_wait")
    if "max_bytes" in options:
        v = options["max_bytes"]
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ToolConfigError(f"{tool}.max_bytes must be a positive integer (bytes), got {v!r}")
    if "user_kernel" in options and not isinstance(options["user_kernel"], bool):
        raise ToolConfigError(f"{tool}.user_kernel must be True or False")
    if "background_processes" in options:
        bp = options["background_processes"]
        if not isinstance(bp, Mapping):
            raise ToolConfigError(f"{tool}.background_processes must be a dict of callbacks")
        for key, fn in bp.items():
            if key not in ("on_stdout", "on_stderr", "on_exit"):
                raise ToolConfigError(
                    f'Unknown background_processes callback "{key}"; use on_stdout, on_stderr, on_exit'
                )
            if fn is not None and not callable(fn):
                raise ToolConfigError(f"{tool}.background_processes.{key} must be a function")


@dataclass(frozen=True)
class ResolvedToolConfig:
    """Everything that applies to one tool after precedence was applied."""

    workspace_tool_name: str
    name: str
    enabled: DynamicFlag
    require_approval: DynamicFlag | None  # None: the tool's built-in default decides
    require_read_before_write: DynamicFlag
    max_output_tokens: int | None  # None or 0: no limit
    write_lock_timeout: float
    options: Mapping[str, Any]

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)


@dataclass(frozen=True, repr=False)
class ToolsConfig:
    """The whole tools configuration (see the module docstring). Build it from a dict with
    :meth:`coerce`; ``repr`` shows only what differs from the defaults."""

    enabled: DynamicFlag = True
    require_approval: DynamicFlag | None = None
    require_read_before_write: DynamicFlag = False
    max_output_tokens: int | None = None
    write_lock_timeout: float = DEFAULT_WRITE_LOCK_TIMEOUT
    hooks: ToolHooks | None = None
    approver: Callable[[str, Mapping[str, Any], Any], Any] | None = None
    approval_timeout: float | None = None
    tools: Mapping[str, ToolConfig] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_flag(self.enabled, "enabled")
        _check_flag(self.require_approval, "require_approval")
        _check_flag(self.require_read_before_write, "require_read_before_write")
        _check_tokens(self.max_output_tokens, "max_output_tokens")
        _check_seconds(self.write_lock_timeout, "write_lock_timeout", allow_none=False)
        _check_seconds(self.approval_timeout, "approval_timeout")
        if self.approver is not None and not callable(self.approver):
            raise ToolConfigError("approver must be a function (tool_name, args, ctx) -> bool")
        if self.hooks is not None and not isinstance(self.hooks, ToolHooks):
            object.__setattr__(self, "hooks", ToolHooks.coerce(self.hooks))
        checked = {}
        known = _tool_names()
        for key, value in dict(self.tools).items():
            if key not in known:
                raise ToolConfigError(f'Unknown tool "{key}"{_suggest(str(key), list(known))}')
            checked[key] = ToolConfig.from_value(key, value)
        object.__setattr__(self, "tools", checked)

    @classmethod
    def coerce(cls, value: object) -> ToolsConfig:
        """``None`` -> defaults; a ``ToolsConfig`` as is; a dict is validated and converted."""
        if value is None:
            return cls()
        if isinstance(value, ToolsConfig):
            return value
        if not isinstance(value, Mapping):
            raise ToolConfigError(f"tools config must be a dict or a ToolsConfig, got {type(value).__name__}")
        top: dict[str, Any] = {}
        per_tool: dict[str, ToolConfig] = {}
        known = _tool_names()
        for key, item in value.items():
            if key in _TOP_KEYS:
                top[key] = item
            elif key == "tools" and isinstance(item, Mapping):
                for name, cfg in item.items():
                    per_tool[name] = cfg
            elif key in known:
                per_tool[key] = ToolConfig.from_value(key, item)
            else:
                raise ToolConfigError(
                    f'Unknown tools config key "{key}"{_suggest(str(key), [*_TOP_KEYS, *known])}; '
                    "use a tool name constant (WORKSPACE_TOOLS...) or one of: " + ", ".join(_TOP_KEYS)
                )
        if "hooks" in top:
            top["hooks"] = ToolHooks.coerce(top["hooks"])
        if top.get("write_lock_timeout") is None:
            top.pop("write_lock_timeout", None)
        if top.get("enabled") is None:
            top.pop("enabled", None)
        if top.get("require_read_before_write") is None:
            top.pop("require_read_before_write", None)
        return cls(**top, tools=per_tool)

    def for_tool(self, tool: str) -> ToolConfig:
        return self.tools.get(tool) or ToolConfig()

    def resolve(self, tool: str) -> ResolvedToolConfig:
        """Apply precedence (defaults < top level < per tool) for one tool."""
        per = self.for_tool(tool)
        from .registry import tool_spec

        spec = tool_spec(tool)
        default_tokens = spec.max_output_tokens if spec is not None else DEFAULT_MAX_OUTPUT_TOKENS
        tokens = per.max_output_tokens
        if tokens is None:
            tokens = self.max_output_tokens if self.max_output_tokens is not None else default_tokens
        return ResolvedToolConfig(
            workspace_tool_name=tool,
            name=per.name or tool,
            enabled=(
                per.enabled
                if per.enabled is not None
                else False
                if spec is not None and spec.off_by_default
                else self.enabled
            ),
            require_approval=per.require_approval
            if per.require_approval is not None
            else self.require_approval,
            require_read_before_write=(
                per.require_read_before_write
                if per.require_read_before_write is not None
                else self.require_read_before_write
            ),
            max_output_tokens=tokens or None,
            write_lock_timeout=(
                per.write_lock_timeout if per.write_lock_timeout is not None else self.write_lock_timeout
            ),
            options=per.options,
        )

    def __repr__(self) -> str:
        parts = []
        defaults = ToolsConfig.__dataclass_fields__
        for f in fields(self):
            if f.name == "tools":
                continue
            value = getattr(self, f.name)
            default = defaults[f.name].default
            if value != default:
                parts.append(f"{f.name}={_short(value)}")
        for name, cfg in self.tools.items():
            set_fields = cfg._set_fields()
            if set_fields:
                inner = ", ".join(f"{k}={_short(v)}" for k, v in set_fields.items())
                parts.append(f"{name}={{{inner}}}")
        return f"ToolsConfig({', '.join(parts)})"


def _short(value: object) -> str:
    if callable(value) and not isinstance(value, type):
        return f"<fn {getattr(value, '__name__', type(value).__name__)}>"
    if isinstance(value, ToolHooks):
        names = [n for n in ("before_tool_call", "after_tool_call") if getattr(value, n) is not None]
        return f"hooks({', '.join(names)})"
    return repr(value)
