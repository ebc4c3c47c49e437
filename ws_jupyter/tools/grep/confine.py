"""Confinement for the programs grep runs (ripgrep, ``find``): they can read the workspace and
nothing else of the host.

ripgrep opens files by name. A process in the sandbox can exchange a directory of the workspace
with a symlink to a host directory, over and over (``renameat2(RENAME_EXCHANGE)``); whatever grep
checks before ripgrep opens a path, the path may lead out by the time it does. So no check is
relied on: the programs run where nothing but the workspace can be opened.

* **landlock** — a Landlock ruleset (Linux 5.13 and later) lets the program read below the
  workspace root and its own files (binary, shared libraries, ``ld.so.cache``), and write nothing.
  The kernel checks each open against the place the file really is, after every symlink, so no
  swap can lead out. The ruleset is built once per root in this process (which it does not
  restrict); the child applies it to itself between ``fork`` and ``exec`` (two system calls), so
  a confined run costs what any run costs.
* **bwrap** — where the kernel has no Landlock: a bubblewrap mount namespace that holds the
  workspace root (read-only, at its host path, so the paths ripgrep prints need no translation),
  the program and its shared libraries, nothing else (no ``/home``, ``/etc``, ``/tmp``,
  ``/proc``, ``/dev``), with all capabilities dropped. A symlink to a host path has nothing to
  lead to. (A namespace costs a few milliseconds per run, which is why it comes second.)

Each mode is probed once per process by a real run: confined ripgrep must read a file below a
temporary root and fail to read one beside it, named directly or through a symlink. A command is
run confined by :meth:`Confined.popen` in the first mode that works here; with none (an old
kernel and no usable bubblewrap, or not Linux) it gives None and grep uses its Python engine,
which opens every file through the workspace's ``O_NOFOLLOW`` descriptor walk.

>>> rg = Confined("/usr/bin/rg", "/srv/ws")  # doctest: +SKIP
>>> proc = rg.popen(["--count", "-e", "TODO", "/srv/ws/src"], stdout=subprocess.PIPE)  # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ENV", "MEMORY_LIMIT", "MODES", "Confined", "find_ripgrep", "mode", "usable"]

#: Confinement modes, in the order they are tried.
MODES: tuple[str, ...] = ("landlock", "bwrap")
#: The environment confined programs get (nothing of the notebook's: no LD_PRELOAD, no config).
ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}

#: Heap a confined program may have (``RLIMIT_DATA``). ripgrep holds a whole line in memory: a
#: file that is one endless line would take as much memory as it is large. Past the limit ripgrep
#: fails, and grep's Python engine (which keeps at most 4 MiB of a line) does the search.
MEMORY_LIMIT = 1 << 30

_lock = threading.Lock()
_usable: dict[str, bool] = {}
_files: dict[str, tuple[str, ...] | None] = {}
_starts: dict[tuple[str, str], bool] = {}
_PROBE_TIMEOUT = 20.0


@dataclass(frozen=True)
class Confined:
    """A program confined to the workspace root ``root`` (a real directory path)."""

    program: str
    root: str

    def popen(
        self, args: Sequence[str], cwd: str | None = None, **kwargs: Any
    ) -> subprocess.Popen[bytes] | None:
        """Start ``program args...`` in ``cwd`` (default: the root), able to read below the root
        and nothing else of the host; ``kwargs`` go to :class:`subprocess.Popen` (the pipes).
        None when no confinement works here, or the program cannot run confined."""
        launch = _launch(self.program, self.root)
        if launch is None:
            return None
        argv, preexec = launch(list(args), cwd or self.root)
        try:
            return subprocess.Popen(
                argv,
                env=ENV,
                stdin=subprocess.DEVNULL,
                # a few system calls (rlimit, chdir, Landlock): nothing that takes a lock
                preexec_fn=_with_memory_limit(preexec),
                **kwargs,
            )
        except (OSError, subprocess.SubprocessError):
            return None


_rg_lock = threading.Lock()
_rg_path: list[str | None] = []


def find_ripgrep() -> str | None:
    """Path of a working ``rg`` (next to this Python, then on PATH), or None. Checked once."""
    with _rg_lock:
        if _rg_path:
            return _rg_path[0]
        found = None
        if os.environ.get("WS_JUPYTER_GREP_ENGINE", "").lower() != "python":
            candidates = [
                os.path.join(os.path.dirname(sys.executable), "rg"),
                os.path.join(sys.prefix, "bin", "rg"),
                shutil.which("rg"),
            ]
            for cand in candidates:
                if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
                    try:
                        subprocess.run([cand, "--version"], capture_output=True, timeout=10, check=True)
                    except (OSError, subprocess.SubprocessError):
                        continue
                    found = cand
                    break
        _rg_path.append(found)
        return found


def mode() -> str | None:
    """The first of :data:`MODES` that works here (probed once per process), or None."""
    for candidate in MODES:
        if usable(candidate):
            return candidate
    return None


def usable(candidate: str) -> bool:
    """Whether ``candidate`` confines ripgrep here: probed by a real run, once per process."""
    with _lock:
        known = _usable.get(candidate)
    if known is None:
        known = _probe(candidate)
        with _lock:
            _usable[candidate] = known
    return known


# --- launching ---------------------------------------------------------------------------------------

_Preexec = Callable[[], None] | None
_Launch = Callable[[list[str], str], tuple[list[str], _Preexec]]


def _launch(program: str, root: str, current: str | None = None) -> _Launch | None:
    """How to start ``program`` confined to ``root`` in mode ``current`` (default: :func:`mode`)."""
    current = current or mode()
    if current is None:
        return None
    program = os.path.realpath(program)
    files = _program_files(program)
    if files is None:
        return None
    launch = _bwrap(program, root, files) if current == "bwrap" else _landlock(program, root, files)
    if launch is None or not _program_starts(current, program, launch, root):
        return None
    return launch


def _bwrap(program: str, root: str, files: tuple[str, ...]) -> _Launch | None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    # A mount namespace is what confines; a pid or network namespace would double the start-up
    # time and add nothing here (the program reads files and writes to a pipe).
    prefix = [bwrap, "--unshare-user-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for path in files:
        prefix += ["--ro-bind", path, path]
    prefix += ["--ro-bind", root, root]

    def launch(args: list[str], cwd: str) -> tuple[list[str], _Preexec]:
        return [*prefix, "--chdir", cwd, "--remount-ro", "/", "--", program, *args], None

    return launch


def _landlock(program: str, root: str, files: tuple[str, ...]) -> _Launch | None:
    ruleset = _ruleset(root, files)
    if ruleset is None:
        return None
    restrict = _restricter(ruleset)

    def launch(args: list[str], cwd: str) -> tuple[list[str], _Preexec]:
        # the child chdirs (by path) before it restricts itself: a directory swapped for a
        # symlink makes it start outside, where the ruleset lets it read nothing
        return [program, *args], _in_dir(cwd, restrict)

    return launch


def _with_memory_limit(then: _Preexec) -> Callable[[], None]:
    """``then`` (if any) after capping the child's heap at :data:`MEMORY_LIMIT`."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
    if soft != resource.RLIM_INFINITY:
        limit = min(limit, soft)

    def preexec() -> None:  # pragma: no cover - runs in the child
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
        if then is not None:
            then()

    return preexec


def _in_dir(cwd: str, then: Callable[[], None]) -> Callable[[], None]:
    def preexec() -> None:  # pragma: no cover - runs in the child
        os.chdir(cwd)
        then()

    return preexec


# --- Landlock ----------------------------------------------------------------------------------------

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
_PR_SET_NO_NEW_PRIVS = 38
_EXECUTE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 2, 1 << 3


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_rulesets: OrderedDict[tuple[str, int, int, tuple[str, ...]], int] = OrderedDict()
_libc: list[Any] = []


def _syscall() -> Any:
    if not _libc:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        _libc.append(libc)
    return _libc[0]


def _ruleset(root: str, files: tuple[str, ...]) -> int | None:
    """A Landlock ruleset (its descriptor, kept per root and program) that handles every
    filesystem right this kernel knows — nothing can be written, made or removed — and allows
    reading below ``root`` and reading and executing ``files``. None without Landlock."""
    try:
        st = os.stat(root)
    except OSError:
        return None
    key = (root, st.st_dev, st.st_ino, files)  # a root made anew is another directory
    with _lock:
        fd = _rulesets.get(key)
        if fd is not None:
            _rulesets.move_to_end(key)
            return fd
    if not sys.platform.startswith("linux"):
        return None
    libc = _syscall()
    abi = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return None
    handled = (1 << 13) - 1  # ABI 1: execute, write, read, readdir, remove and make rights
    for version, right in ((2, 1 << 13), (3, 1 << 14), (5, 1 << 15)):  # refer, truncate, ioctl_dev
        if abi >= version:
            handled |= right
    attr = _RulesetAttr(handled)
    fd = int(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0))
    if fd < 0:
        return None
    try:
        _allow(libc, fd, root, _READ_FILE | _READ_DIR, os.O_DIRECTORY)
        for path in files:
            _allow(libc, fd, path, _READ_FILE | _EXECUTE, 0)
    except OSError:
        os.close(fd)
        return None
    with _lock:
        made = _rulesets.get(key)
        if made is not None:  # another thread made it meanwhile
            os.close(fd)
            return made
        _rulesets[key] = fd
        while len(_rulesets) > 16:
            os.close(_rulesets.popitem(last=False)[1])
    return fd


def _allow(libc: Any, ruleset: int, path: str, rights: int, flags: int) -> None:
    target = os.open(path, os.O_PATH | os.O_CLOEXEC | flags)
    try:
        rule = _PathBeneath(rights, target)
        if libc.syscall(_SYS_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(target)


def _restricter(ruleset: int) -> Callable[[], None]:
    """What the child runs before ``exec``: no new privileges, then the ruleset on itself. It
    raises (so the program never starts unconfined) when either call fails."""
    libc = _syscall()
    prctl, syscall = libc.prctl, libc.syscall

    def restrict() -> None:  # pragma: no cover - runs in the child
        if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError("landlock_restrict_self failed")

    return restrict


# --- the program's own files, probes -------------------------------------------------------------------


def _program_files(program: str) -> tuple[str, ...] | None:
    """The files ``program`` needs to start: itself, its ELF interpreter and shared libraries (as
    the dynamic loader lists them with ``LD_TRACE_LOADED_OBJECTS``, what ``ldd`` does), and the
    loader's cache. None when it cannot be asked."""
    with _lock:
        if program in _files:
            return _files[program]
    found: tuple[str, ...] | None = None
    try:
        proc = subprocess.run(
            [program, "--version"],
            env={**ENV, "LD_TRACE_LOADED_OBJECTS": "1"},
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=_PROBE_TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        proc = None
    if proc is not None:
        paths = [program]
        for line in proc.stdout.decode("utf-8", "replace").splitlines():
            line = line.strip()
            target = line.split("=>", 1)[1].strip() if "=>" in line else line
            path = target.split(" (", 1)[0].strip()
            if path.startswith("/") and os.path.exists(path):
                paths.append(path)
        if os.path.exists("/etc/ld.so.cache"):
            paths.append("/etc/ld.so.cache")
        found = tuple(dict.fromkeys(paths))
    with _lock:
        _files[program] = found
    return found


def _program_starts(current: str, program: str, launch: _Launch, root: str) -> bool:
    """Whether ``program --version`` runs in the confinement (its libraries are all there)."""
    key = (current, program)
    with _lock:
        known = _starts.get(key)
    if known is None:
        argv, preexec = launch(["--version"], root)
        known = _run(argv, preexec)[0] == 0
        with _lock:
            _starts[key] = known
    return known


def _run(argv: list[str], preexec: _Preexec) -> tuple[int | None, str]:
    """(exit code, stdout) of a run; (None, "") when it could not start or finish."""
    try:
        proc = subprocess.run(
            argv,
            env=ENV,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=_PROBE_TIMEOUT,
            preexec_fn=preexec,
        )
    except (OSError, subprocess.SubprocessError):
        return None, ""
    return proc.returncode, proc.stdout.decode("utf-8", "replace")


def _probe(candidate: str) -> bool:
    """A real run: confined to ``tmp/inside``, ripgrep must find the needle in ``inside/a.txt``
    and must not read ``beside.txt`` (named directly, and through a symlink inside)."""
    if not sys.platform.startswith("linux") or candidate not in ("bwrap", "landlock"):
        return False
    if candidate == "bwrap":
        from ...sandbox.isolation.detect import probe_backend

        if shutil.which("bwrap") is None or not probe_backend("bwrap").available:
            return False
    rg = find_ripgrep()  # the program grep confines
    if rg is None:
        return False
    with tempfile.TemporaryDirectory(prefix="ws-grep-probe-") as tmp:
        real = os.path.realpath(tmp)
        inside, beside = os.path.join(real, "inside"), os.path.join(real, "beside.txt")
        os.mkdir(inside)
        for path in (os.path.join(inside, "a.txt"), beside):
            with open(path, "w", encoding="ascii") as f:
                f.write("ws-probe-needle\n")
        os.symlink(beside, os.path.join(inside, "link.txt"))
        launch = _launch(rg, inside, candidate)
        if launch is None:
            return False
        argv, preexec = launch(
            ["--no-config", "--count", "--with-filename", "-L", "ws-probe-needle", inside, beside], inside
        )
        _code, out = _run(argv, preexec)  # 2: beside.txt could not be read, as wanted
        # forget what was made for the temporary root
        with _lock:
            for key in [k for k in _rulesets if k[0] == inside]:
                os.close(_rulesets.pop(key))
    return "a.txt:1" in out and "beside" not in out and "link.txt" not in out
