"""The bubblewrap (``bwrap``) command line: what a Linux sandbox sees and may do.

Layout inside the sandbox:

* a fresh ``/dev``, ``/proc`` and an empty ``/tmp`` (emitted before any bind, so user binds
  under them stay visible);
* system directories read-only (``/usr``, the ``/lib*`` and ``/bin`` trees — as symlinks when
  they are symlinks on the host —, and an ``/etc`` holding a copy of its harmless parts only,
  such as the CA certificates, ``passwd`` and the resolver configuration, never
  ``/etc/ssl/private`` or ``shadow``); with ``allow_system_binaries`` also the Python
  installation, ``/opt``, ``/snap`` and ``/nix``;
* ``read_only_paths`` read-only, then the working directory, ``read_write_paths``, the
  sandbox's private HOME/TMPDIR and ``sandbox.mount()`` paths read-write (or read-only), each at
  its host path, shallow paths first so nested binds stack correctly;
* the sandbox's root read-only, so writes anywhere else fail instead of vanishing;
* every namespace unshared (user, pid, ipc, uts, cgroup, network — the network only unless
  ``allow_network``), all capabilities dropped, a new session (no TIOCSTI on the terminal), and
  ``--die-with-parent`` so the whole pid namespace dies with the kernel.

The environment is *not* put on the command line (``--setenv`` would show secrets in ``ps``
to every user of the machine): bwrap gets exactly the curated environment from its parent and
passes it on unchanged.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence

from .config import Mount, NativeSandboxConfig

__all__ = ["BwrapPlan", "system_binds"]

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_ENTRIES = (
    "alternatives",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "crypto-policies",
    "resolv.conf",
    "hosts",
    "host.conf",
    "gai.conf",
    "nsswitch.conf",
    "passwd",
    "group",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "mime.types",
    "protocols",
    "services",
    "os-release",
    "gitconfig",
    "fonts",
)
_EXTRA_BINARY_DIRS = ("/opt", "/snap", "/nix")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


#: Never copied into the sandbox's /etc even inside an allowed entry.
_ETC_EXCLUDED = ("ssl/private",)
#: Directories of many symlinks: bound (one mount each) rather than copied (slow to create).
_ETC_BOUND = ("alternatives", "ssl/certs")
_staged_lock = threading.Lock()
_staged: list[str | None] = []


def _staged_etc() -> str | None:
    """A read-only copy of the harmless part of /etc, made once per process.

    Binding ~20 /etc entries one by one costs a mount each — a third of a sandbox's start-up
    time. One copied directory bound as /etc costs one mount, plus one for each directory of
    many symlinks (``_ETC_BOUND``), which are slow to copy. Symlinks are kept as symlinks; the
    copy reflects /etc as it was when the first sandbox of this process started.
    """
    with _staged_lock:
        if _staged:
            return _staged[0]
        path: str | None = None
        try:
            path = tempfile.mkdtemp(prefix="ws-sandbox-etc-")
            for name in _ETC_ENTRIES:
                src = "/etc/" + name
                dst = os.path.join(path, name)
                if name in _ETC_BOUND and os.path.isdir(src):
                    os.mkdir(dst)  # an empty mount point: the real directory is bound over it
                elif os.path.isdir(src) and not os.path.islink(src):
                    _copy_tree(src, dst, name)
                elif os.path.islink(src) and not os.path.exists(os.path.realpath(src)):
                    continue
                elif os.path.islink(src) and os.path.realpath(src).startswith("/usr/"):
                    os.symlink(os.readlink(src), dst)  # resolves inside the sandbox too
                elif os.path.exists(src):
                    shutil.copyfile(src, dst)  # follows links (resolv.conf -> /run/...)
            for root, _dirs, files in os.walk(path):
                os.chmod(root, 0o755)
                for f in files:
                    full = os.path.join(root, f)
                    if not os.path.islink(full):
                        os.chmod(full, 0o644)
            atexit.register(shutil.rmtree, path, True)
        except OSError:
            if path:
                shutil.rmtree(path, ignore_errors=True)
            path = None
        _staged.append(path)
        return path


def _copy_tree(src: str, dst: str, rel: str) -> None:
    """Copies a directory: symlinks as symlinks, regular files by content, nothing else.

    (``shutil.copytree`` spends ~1 ms per symlink on metadata; /etc/alternatives has hundreds.)
    """
    os.mkdir(dst)
    with os.scandir(src) as entries:
        for entry in entries:
            sub = f"{rel}/{entry.name}"
            if sub in _ETC_EXCLUDED:
                continue
            target = os.path.join(dst, entry.name)
            if sub in _ETC_BOUND:
                os.mkdir(target)  # an empty mount point: the real directory is bound over it
                continue
            try:
                if entry.is_symlink():
                    os.symlink(os.readlink(entry.path), target)
                elif entry.is_dir():
                    _copy_tree(entry.path, target, sub)
                elif entry.is_file():
                    shutil.copyfile(entry.path, target)
            except PermissionError:
                continue  # unreadable for this user: it stays out of the sandbox as well


@functools.lru_cache(maxsize=4)
def system_binds(allow_system_binaries: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(bwrap args, visible roots) for the system part of the sandbox; computed once per process."""
    args: list[str] = []
    roots: list[str] = []
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
            roots.append(d)
    etc = _staged_etc()
    if etc is not None:
        args += ["--ro-bind", etc, "/etc"]
        for rel in _ETC_BOUND:  # mount points were created in the copy
            if os.path.isdir("/etc/" + rel) and os.path.isdir(os.path.join(etc, rel)):
                args += ["--ro-bind", "/etc/" + rel, "/etc/" + rel]
    else:  # staging failed (no space in the temp dir?): one bind per entry, slower but equal
        for name in _ETC_ENTRIES:
            path = "/etc/" + name
            if os.path.lexists(path):
                real = os.path.realpath(path)
                if os.path.exists(real):
                    args += ["--ro-bind", real, path]
    if allow_system_binaries:
        prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        # A virtual environment's interpreter is a symlink to the base installation: both are needed.
        prefixes.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
        for p in sorted(prefixes, key=len):
            if os.path.isdir(p) and not any(_under(p, r) for r in roots):
                args += ["--ro-bind", p, p]
                roots.append(p)
        for d in _EXTRA_BINARY_DIRS:
            if os.path.isdir(d) and not os.path.islink(d):
                args += ["--ro-bind", d, d]
                roots.append(d)
    return tuple(args), tuple(roots)


class BwrapPlan:
    """A sandbox's bwrap arguments, computed once and reused for every command.

    >>> plan = BwrapPlan(working_directory="/srv/ws", state_dir="/tmp/state")
    >>> argv = plan.argv("echo hi", cwd="/srv/ws")
    >>> argv[0], argv[-3:], "--unshare-all" in argv
    ('bwrap', ['/bin/sh', '-c', 'echo hi'], True)
    """

    def __init__(
        self,
        *,
        working_directory: str,
        state_dir: str | None = None,
        config: NativeSandboxConfig | None = None,
        mounts: Iterable[Mount] = (),
        bwrap_path: str = "bwrap",
    ) -> None:
        self.config = config = config or NativeSandboxConfig()
        self.working_directory = working_directory
        sys_args, sys_roots = system_binds(config.allow_system_binaries)

        # (path, writable, must_exist)
        binds: list[tuple[str, bool, bool]] = []
        for p in config.read_only_paths:
            binds.append((self._abs(p), False, False))
        binds.append((working_directory, True, True))
        for p in config.read_write_paths:
            binds.append((self._abs(p), True, False))
        if state_dir:
            binds.append((state_dir, True, True))
        for m in mounts:
            binds.append((m.path, not m.read_only, False))
        # Shallow paths first so a nested bind lands on top of its parent; on ties read-only
        # first, so listing a path both ways leaves it writable (the explicit, stronger grant).
        binds.sort(key=lambda b: (b[0].rstrip("/").count("/"), b[1]))

        args: list[str] = [
            bwrap_path,
            "--unshare-all",
            *(("--share-net",) if config.allow_network else ()),
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            *sys_args,
        ]
        roots = list(sys_roots)
        for path, writable, must_exist in binds:
            if writable:
                args += ["--bind" if must_exist else "--bind-try", path, path]
            else:
                args += ["--ro-bind" if must_exist else "--ro-bind-try", path, path]
            roots.append(path)
        self._prefix = args
        self._suffix: tuple[str, ...] = tuple(config.bwrap_args or ())
        self.visible_roots: tuple[str, ...] = tuple(roots)
        self._path_dirs: dict[str, bool] = {}

    def _abs(self, path: str) -> str:
        return os.path.realpath(os.path.join(self.working_directory, path))

    def is_visible(self, path: str) -> bool:
        """True when ``path`` exists inside the sandbox (used to filter ``PATH``)."""
        if not os.path.isabs(path) or not os.path.exists(path):
            return False
        real = os.path.realpath(path)
        return any(_under(real, r) or _under(path, r) for r in self.visible_roots)

    def on_path(self, directory: str) -> bool:
        """``is_visible`` for a ``PATH`` entry, remembered: the PATH is filtered for every command."""
        visible = self._path_dirs.get(directory)
        if visible is None:
            visible = self._path_dirs[directory] = self.is_visible(directory)
        return visible

    def argv(self, command: str, cwd: str) -> list[str]:
        return self.wrap(["/bin/sh", "-c", command], cwd)

    def wrap(self, argv: Sequence[str], cwd: str) -> list[str]:
        """Wraps an exec-style argv (``argv()`` wraps a shell command line)."""
        # The root is bwrap's own tmpfs: remounting it read-only last (after every mount point
        # was created, user args included) makes a write to /etc/x or /x fail loudly instead of
        # landing in a throw-away directory.
        return [*self._prefix, "--chdir", cwd, *self._suffix, "--remount-ro", "/", "--", *argv]
