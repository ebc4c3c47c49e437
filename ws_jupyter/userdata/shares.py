"""``SharedNamespace``: what the notebook user shares with the agent, and nothing more.

The user shares variables by name or pattern (``share("sales", "region_*")``: evaluated against
the live namespace each time, so a later ``region_west`` is shared too) or objects under a name
(``share_object(df.head(100), "sample")``). The agent's tools see only what this class lists:

* never names starting with ``_``, IPython's own (``In``, ``Out``, ``get_ipython``, ``exit``,
  ``quit`` and whatever the shell lists as hidden), modules, names or string values that look
  like secrets, ``os.environ`` and environment-like dicts (:mod:`.secrets`) — even when a pattern
  matches them;
* values are described by :mod:`.describe` (no user code runs) and copied by :mod:`.transfer`.

A share may allow copies into the sandbox without asking (``allow_copy=True``); otherwise every
``user_variable_request`` waits for the user's Approve/Deny. A share by exact name takes precedence
over patterns; ``unshare(name)`` hides a name a pattern would match.

>>> ns = {"sales": [1, 2, 3], "api_key": "sk-" + "x1Y2" * 8, "_tmp": 1}
>>> shared = SharedNamespace(ns)
>>> shared.share("*").shared
('sales',)
"""

from __future__ import annotations

import fnmatch
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import UnsupportedValueError, UserDataError, VariableNotSharedError
from .codecs import DEFAULT_MAX_BYTES
from .describe import Summary, describe, summarize
from .safety import Budget
from .secrets import looks_like_environment, looks_secret_name, looks_secret_value

__all__ = ["ShareResult", "SharedNamespace", "SharedVariable", "hidden_reason"]

#: IPython's names, hidden even when the shell's own list is not at hand.
IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit"})
_MISSING: Any = object()
_PATTERN_CHARS = frozenset("*?[")


def hidden_reason(name: Any, value: Any, hidden: Mapping[str, Any] | None = None) -> str | None:
    """Why ``name`` (bound to ``value``) is never shown to an agent, or None."""
    if type(name) is not str or not name.isidentifier():
        return "not a variable name"
    if name.startswith("_"):
        return "a private name (starts with _)"
    if name in IPYTHON_NAMES or (hidden is not None and name in hidden and hidden[name] is value):
        return "one of IPython's own names"
    if type(value) is types.ModuleType:
        return "a module"
    if looks_secret_name(name):
        return "the name looks like a secret"
    if type(value) is str and looks_secret_value(value):
        return "the value looks like a secret"
    if looks_like_environment(value):
        return "a process environment (os.environ)"
    return None


@dataclass(frozen=True)
class SharedVariable:
    """One shared variable as the agent's tools list it."""

    name: str
    summary: Summary
    allow_copy: bool
    source: str  # "variable" (from the namespace) or "object" (shared with share_object)


@dataclass(frozen=True)
class ShareResult:
    """``shared``: names shared now; ``skipped``: name -> why it is never shown; ``unmatched``:
    names and patterns that match no variable yet (kept: they apply when one appears)."""

    shared: tuple[str, ...]
    skipped: Mapping[str, str] = field(default_factory=dict)
    unmatched: tuple[str, ...] = ()


class SharedNamespace:
    """The user's shares over one namespace (the notebook's ``user_ns``). See the module docstring.

    ``hidden`` maps names the shell defines to their original values (IPython's
    ``user_ns_hidden``): such a name is hidden while it still holds that value.
    ``max_copy_bytes`` is the copy limit in both directions (256 MB by default).
    """

    def __init__(
        self,
        namespace: Mapping[str, Any] | None = None,
        hidden: Mapping[str, Any] | None = None,
        *,
        max_copy_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self._lock = threading.RLock()
        self._namespace: Mapping[str, Any] = namespace if namespace is not None else {}
        self._hidden: Mapping[str, Any] = hidden if hidden is not None else {}
        self._rules: dict[str, bool] = {}  # name or pattern -> allow_copy
        self._excluded: set[str] = set()
        self._objects: dict[str, tuple[Any, bool]] = {}
        self._listeners: list[Callable[[], Any]] = []
        self.max_copy_bytes = max_copy_bytes

    # --- binding and listening ------------------------------------------------------------------

    def bind(self, namespace: Mapping[str, Any], hidden: Mapping[str, Any] | None = None) -> None:
        """Follows ``namespace`` from now on (the notebook's ``user_ns``)."""
        with self._lock:
            self._namespace = namespace
            self._hidden = hidden if hidden is not None else {}
        self._changed()

    @property
    def namespace(self) -> Mapping[str, Any]:
        return self._namespace

    def subscribe(self, listener: Callable[[], Any]) -> Callable[[], None]:
        """Calls ``listener()`` after every share/unshare; returns an unsubscribe function."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _changed(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:
                pass  # a broken widget must not break sharing

    # --- sharing ----------------------------------------------------------------------------------

    def _items(self) -> list[tuple[str, Any]]:
        ns = self._namespace
        return list(dict.items(ns)) if type(ns) is dict else list(ns.items())

    def share(self, *patterns: str, allow_copy: bool = False) -> ShareResult:
        """Shares variables by name or glob pattern (``sales_*``); see :class:`ShareResult`."""
        if not patterns:
            raise UserDataError("share() needs at least one name or pattern", code="INVALID_ARGUMENT")
        items = self._items()
        shared: list[str] = []
        skipped: dict[str, str] = {}
        unmatched: list[str] = []
        with self._lock:
            for pattern in patterns:
                if type(pattern) is not str or not pattern.strip():
                    raise UserDataError(f"not a name or pattern: {pattern!r}", code="INVALID_ARGUMENT")
                is_pattern = bool(_PATTERN_CHARS & set(pattern))
                if not is_pattern:
                    why = hidden_reason(pattern, dict(items).get(pattern, _MISSING), self._hidden)
                    if why is not None and why != "not a variable name":
                        skipped[pattern] = why
                        continue
                    if why is not None:
                        raise UserDataError(f"{pattern!r} is not a variable name", code="INVALID_ARGUMENT")
                self._rules[pattern] = bool(allow_copy)
                matched = (
                    [n for n, _ in items if fnmatch.fnmatchcase(n, pattern)]
                    if is_pattern
                    else ([pattern] if any(n == pattern for n, _ in items) else [])
                )
                for name in matched:
                    self._excluded.discard(name)
                    why = hidden_reason(name, dict(items)[name], self._hidden)
                    if why is not None:
                        if is_pattern and not name.startswith("_"):
                            skipped[name] = why
                    elif name not in shared:
                        shared.append(name)
                if not matched:
                    unmatched.append(pattern)
        self._changed()
        return ShareResult(tuple(shared), skipped, tuple(unmatched))

    def share_object(self, value: Any, name: str, *, allow_copy: bool = False) -> None:
        """Shares ``value`` under ``name`` (it need not be a variable: ``df.head(1000)`` works)."""
        why = hidden_reason(name, value, None)
        if why is not None:
            code = "LOOKS_SECRET" if "secret" in why or "environment" in why else "INVALID_ARGUMENT"
            raise UnsupportedValueError(f"Cannot share {name!r}: {why}", code=code)
        with self._lock:
            self._objects[name] = (value, bool(allow_copy))
            self._excluded.discard(name)
        self._changed()

    def unshare(self, *names: str) -> list[str]:
        """Stops sharing names or patterns; a name a pattern still matches is hidden by name.
        Returns the names that were shared and are not any more."""
        before = set(self.names())
        with self._lock:
            for name in names:
                self._rules.pop(name, None)
                self._objects.pop(name, None)
                if not (_PATTERN_CHARS & set(name)):
                    self._excluded.add(name)
                else:
                    for variable in before:
                        if fnmatch.fnmatchcase(variable, name):
                            self._excluded.add(variable)
        self._changed()
        return sorted(before - set(self.names()))

    def unshare_all(self) -> list[str]:
        before = self.names()
        with self._lock:
            self._rules.clear()
            self._objects.clear()
            self._excluded.clear()
        self._changed()
        return before

    @property
    def rules(self) -> dict[str, bool]:
        """The names and patterns shared (-> whether copies need no approval)."""
        with self._lock:
            return dict(self._rules)

    # --- what the agent sees ------------------------------------------------------------------------

    def _allow_copy(self, name: str) -> bool | None:
        """None: not shared; else whether copies need no approval (exact name > patterns)."""
        with self._lock:
            if name in self._excluded:
                return None
            if name in self._rules:
                return self._rules[name]
            flags = [flag for pattern, flag in self._rules.items() if fnmatch.fnmatchcase(name, pattern)]
        return any(flags) if flags else None

    def _resolve(self) -> dict[str, tuple[Any, bool, str]]:
        out: dict[str, tuple[Any, bool, str]] = {}
        with self._lock:
            objects = dict(self._objects)
        for name, value in self._items():
            flag = self._allow_copy(name)
            if flag is not None and hidden_reason(name, value, self._hidden) is None:
                out[name] = (value, flag, "variable")
        for name, (value, flag) in objects.items():
            out[name] = (value, flag, "object")
        return out

    def names(self) -> list[str]:
        """The names the agent sees now, sorted."""
        return sorted(self._resolve())

    def variables(self, budget: Budget | None = None) -> list[SharedVariable]:
        """Every shared variable with its summary (bounded time: sizes past it are estimates)."""
        budget = budget or Budget(2.0)
        return [
            SharedVariable(
                name, summarize(value, Budget(min(0.3, max(0.01, budget.deadline_left)))), flag, source
            )
            for name, (value, flag, source) in sorted(self._resolve().items())
        ]

    def _lookup(self, name: str) -> tuple[Any, bool, str]:
        found = self._resolve().get(name, _MISSING) if type(name) is str else _MISSING
        if found is _MISSING:
            raise VariableNotSharedError(
                f"No shared variable named {name!r}. The user shares variables with `%ws share NAME`; "
                "user_variables_list shows what is shared."
            )
        return found

    def get(self, name: str) -> Any:
        """The shared value (for a copy)."""
        return self._lookup(name)[0]

    def info(self, name: str) -> SharedVariable:
        value, flag, source = self._lookup(name)
        return SharedVariable(name, summarize(value), flag, source)

    def copy_allowed(self, name: str) -> bool:
        """True when the user allowed copies of ``name`` without asking."""
        try:
            return self._lookup(name)[1]
        except VariableNotSharedError:
            return False

    def inspect(
        self, name: str, *, rows: int = 5, columns: Sequence[str] | None = None, seconds: float = 1.0
    ) -> str:
        """The bounded detailed view of one shared variable (see :func:`.describe.describe`)."""
        value = self.get(name)
        return describe(value, name=name, rows=rows, columns=columns, budget=Budget(seconds))

    def __repr__(self) -> str:
        return f"<SharedNamespace {len(self.names())} shared: {', '.join(self.names()[:8])}>"
