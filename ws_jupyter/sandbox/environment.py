"""The environment commands see: curated by default, so host secrets never leak by accident.

A notebook kernel's environment often holds API keys (``OPENAI_API_KEY``, cloud credentials).
Commands get only what they need to work — ``PATH``, a private ``HOME`` and ``TMPDIR``, a UTF-8
locale, a plain terminal — plus whatever the user passes explicitly. ``env=os.environ`` passes
everything, on purpose. A value of ``None`` removes a variable.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping

from ..errors import InvalidArgumentError

__all__ = ["EnvMapping", "build_environment", "filter_path", "python_bin_dir", "validate_env"]

#: What ``env=`` accepts: values are strings, or ``None`` to remove the variable.
EnvMapping = Mapping[str, "str | None"]

#: Used when the kernel itself has no PATH (rare: a stripped-down service environment).
_FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"


def validate_env(env: object, *, what: str = "env") -> dict[str, str | None]:
    """Checks an ``env=`` argument once, at the edge, and returns a plain dict copy."""
    if env is None:
        return {}
    if not isinstance(env, Mapping):
        raise InvalidArgumentError(f"{what} must be a mapping of names to strings, got {type(env).__name__}")
    out: dict[str, str | None] = {}
    for key, value in env.items():
        if not isinstance(key, str) or not key or "=" in key or "\0" in key:
            raise InvalidArgumentError(f"{what}: invalid variable name {key!r}")
        if value is not None and not isinstance(value, str):
            raise InvalidArgumentError(
                f"{what}[{key!r}] must be a string (or None to unset), got {type(value).__name__}"
            )
        if value is not None and "\0" in value:
            raise InvalidArgumentError(f"{what}[{key!r}] contains a NUL byte")
        out[key] = value
    return out


def filter_path(path: str, visible: Callable[[str], bool]) -> str:
    """Keeps the ``PATH`` entries for which ``visible(dir)`` is true (order and duplicates kept).

    Under bubblewrap only bound directories exist; listing others would make ``command not
    found`` errors slower and confusing (pyenv/cargo shims under the real home, for example).
    """
    return os.pathsep.join(p for p in path.split(os.pathsep) if p and visible(p))


def python_bin_dir() -> str:
    """Where the notebook's Python keeps ``python``, ``pip`` and its console scripts.

    A kernel started by Jupyter from a virtual environment usually does not have that
    environment on its ``PATH``; commands that find the system Python instead would miss the
    notebook's packages.
    """
    candidate = os.path.join(sys.prefix, "bin")
    if os.path.isfile(os.path.join(candidate, os.path.basename(sys.executable))):
        return candidate
    return os.path.dirname(sys.executable)


def build_environment(
    *,
    home: str,
    tmpdir: str,
    host_path: str | None = None,
    python_bin: str | None = None,
    layers: Iterable[Mapping[str, str | None]] = (),
    path_filter: Callable[[str], bool] | None = None,
) -> dict[str, str]:
    """The curated base environment with ``layers`` applied in order (later layers win).

    ``python_bin`` goes first on ``PATH`` (the notebook's Python, see ``python_bin_dir``).

    >>> env = build_environment(home="/h", tmpdir="/t", host_path="/usr/bin", layers=[{"A": "1"}])
    >>> env["HOME"], env["A"], "OPENAI_API_KEY" in env
    ('/h', '1', False)
    """
    path = host_path if host_path is not None else os.environ.get("PATH") or _FALLBACK_PATH
    if python_bin and path.split(os.pathsep)[:1] != [python_bin]:
        path = os.pathsep.join((python_bin, path))
    if path_filter is not None:
        # Only the host's PATH is filtered; a PATH the user passes is taken as given.
        path = filter_path(path, path_filter)
    env: dict[str, str | None] = {
        "PATH": path,
        "HOME": home,
        "TMPDIR": tmpdir,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        # Output goes to a pipe shown in a notebook: no colour codes, no cursor tricks...
        "TERM": "dumb",
        # ...and Python children flush each line, so background output is live, not block-buffered.
        "PYTHONUNBUFFERED": "1",
    }
    for layer in layers:
        env.update(layer)
    return {k: v for k, v in env.items() if v is not None}
