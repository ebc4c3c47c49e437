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
  ``--die-with-parent`` so the whole pid namespace dies with the kernel;
* hardening for a notebook that runs as root, where the sandbox's user maps to host root:
  Docker's read-only and masked /proc paths (``proc_hardening``), uid/gid 1000 inside, a
  seccomp filter (``seccomp.py``), and rlimits set by ``prlimit`` in front of the command;
* the running Python, when it lies inside a writable bind (a ``.venv`` in the workspace),
  bound read-only again on top;
* the host-trusted files found in the writable binds (``ws_jupyter.filesystem.host_trusted``:
  ``.git``, ``.vscode``, ``.envrc``, virtual environments, ...) bound read-only on top, so a
  command cannot plant what git, direnv or an editor would run on the host; a workspace root
  without ``.git`` gets an empty read-only one, so commands cannot make it a repository either.

The environment is *not* put on the command line (``--setenv`` would show secrets in ``ps``
to every user of the machine): bwrap gets exactly the curated environment from its parent and
passes it on unchanged.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
import threading
from collections.abc import Iterable, Sequence

from ...filesystem.host_trusted import TrustedScan, scan, submodule_paths
from ..tempdirs import private_dir
from .cgroups import join_value
from .config import DEFAULT_SANDBOX_UID, Mount, NativeSandboxConfig, working_directory_writable
from .rlimits import prlimit_path, rlimit_args

__all__ = [
    "PROC_MASKED",
    "PROC_READ_ONLY",
    "BwrapPlan",
    "proc_hardening",
    "python_prefixes",
    "system_binds",
]

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
            path = private_dir("ws-sandbox-etc-")
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
            _add_sandbox_user(path)
            for root, _dirs, files in os.walk(path):
                os.chmod(root, 0o755)
                for f in files:
                    full = os.path.join(root, f)
                    if not os.path.islink(full):
                        os.chmod(full, 0o644)
        except OSError:
            if path:
                shutil.rmtree(path, ignore_errors=True)
            path = None
        _staged.append(path)
        return path


def _add_sandbox_user(etc: str) -> None:
    """Names the default sandbox uid/gid in the copied passwd/group when the host has no such ids.

    Tools that look their user up (``whoami``, ``id -un``, some installers) then work inside.
    """
    uid = DEFAULT_SANDBOX_UID
    for name, line in (
        ("passwd", f"sandbox:x:{uid}:{uid}:workspace sandbox:/nonexistent:/bin/sh\n"),
        ("group", f"sandbox:x:{uid}:\n"),
    ):
        path = os.path.join(etc, name)
        if not os.path.isfile(path) or os.path.islink(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if any(row.split(":")[2:3] == [str(uid)] for row in text.splitlines()):
            continue
        with open(path, "a", encoding="utf-8") as f:
            f.write(("" if not text or text.endswith("\n") else "\n") + line)


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
        for p in python_prefixes():
            if not any(_under(p, r) for r in roots):
                args += ["--ro-bind", p, p]
                roots.append(p)
        for d in _EXTRA_BINARY_DIRS:
            if os.path.isdir(d) and not os.path.islink(d):
                args += ["--ro-bind", d, d]
                roots.append(d)
    return tuple(args), tuple(roots)


#: Docker's default lists (moby ``oci/defaults.go``): /proc entries bound read-only over
#: themselves, and entries masked (an empty read-only directory, or /dev/null for a file).
#: bwrap's fresh /proc leaves ``/proc/sys`` writable for a sandbox whose user maps to host root:
#: a write to ``kernel/core_pattern`` would run a program of the sandbox's choosing as root on
#: the host. (/sys, where Docker masks ``/sys/firmware``, is not mounted in the sandbox at all.)
PROC_READ_ONLY = ("bus", "fs", "irq", "sys", "sysrq-trigger")
PROC_MASKED = (
    "asound",
    "acpi",
    "kcore",
    "keys",
    "latency_stats",
    "timer_list",
    "timer_stats",
    "sched_debug",
    "scsi",
)


@functools.lru_cache(maxsize=1)
def _empty_dir() -> str:
    """An empty read-only folder, the source of masking and placeholder binds (one per process)."""
    path = private_dir("ws-sandbox-empty-")
    os.chmod(path, 0o555)
    return path


@functools.lru_cache(maxsize=1)
def proc_hardening() -> tuple[str, ...]:
    """bwrap args that make Docker's read-only /proc paths read-only and mask the others.

    Only entries this kernel has are listed (a bind onto a missing /proc entry fails).
    """
    args: list[str] = []
    for name in PROC_READ_ONLY:
        path = "/proc/" + name
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    empty: str | None = None
    for name in PROC_MASKED:
        path = "/proc/" + name
        if os.path.isdir(path):
            empty = empty or _empty_dir()
            args += ["--ro-bind", empty, path]
        elif os.path.exists(path):
            args += ["--ro-bind", "/dev/null", path]
    return tuple(args)


def python_prefixes() -> tuple[str, ...]:
    """The running Python's installation directories (real paths, shortest first).

    A virtual environment's interpreter is a symlink into the base installation: both count.
    """
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    prefixes.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    return tuple(sorted((p for p in prefixes if os.path.isdir(p)), key=len))


@functools.lru_cache(maxsize=1)
def user_namespaces_available() -> bool:
    """Whether this kernel lets a process make user namespaces (bwrap's ``--unshare-user``)."""
    try:
        with open("/proc/sys/user/max_user_namespaces", encoding="ascii") as f:
            if int(f.read().strip() or 0) <= 0:
                return False
    except (OSError, ValueError):
        return os.path.exists("/proc/self/ns/user")
    try:
        with open("/proc/sys/kernel/unprivileged_userns_clone", encoding="ascii") as f:
            if f.read().strip() == "0" and os.geteuid() != 0:
                return False
    except OSError:
        pass
    return os.path.exists("/proc/self/ns/user")


def _empty_folder(path: str) -> bool:
    """True for a real (not symlinked) folder with nothing in it."""
    try:
        return os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path)
    except OSError:
        return False


#: The fd bwrap reads the seccomp filter from when the argv must stand alone (see ``wrap``).
STANDALONE_SECCOMP_FD = 9


class BwrapPlan:
    """A sandbox's bwrap arguments, computed once and reused for every command.

    >>> plan = BwrapPlan(working_directory="/srv/ws", state_dir="/tmp/state",
    ...                  config=NativeSandboxConfig(seccomp=False))
    >>> argv = plan.argv("echo hi", cwd="/srv/ws")
    >>> argv[0], argv[-3:], "--unshare-all" in argv
    ('bwrap', ['/bin/sh', '-c', 'echo hi'], True)

    ``wrap()`` is the entry point for anything else that must run inside the same isolation
    (a Jupyter kernel, for instance): any argv, extra binds, and a command line that needs no
    inherited file descriptor.
    """

    def __init__(
        self,
        *,
        working_directory: str,
        state_dir: str | None = None,
        config: NativeSandboxConfig | None = None,
        mounts: Iterable[Mount] = (),
        bwrap_path: str = "bwrap",
        cgroup_join_files: Sequence[str] = (),
    ) -> None:
        self.config = config = config or NativeSandboxConfig()
        self.working_directory = working_directory
        self.state_dir = state_dir
        self.host_trusted = TrustedScan()
        self.host_trusted_roots: tuple[str, ...] = ()
        self.protected: tuple[str, ...] = ()
        self.placeholders: tuple[str, ...] = ()
        mounts = list(mounts)
        sys_args, sys_roots = system_binds(config.allow_system_binaries)
        # The seccomp program is compiled once per process; a missing libseccomp is an error
        # here, at sandbox start, not a silently weaker sandbox.
        self.seccomp_path: str | None = None
        if config.seccomp:
            from .seccomp import filter_path

            self.seccomp_path = filter_path()

        # A read-only mount of the working directory (or of a directory holding it) — what a
        # read-only filesystem asks for — makes the working directory itself read-only.
        self.working_directory_writable = working_directory_writable(working_directory, mounts)
        # (path, writable, must_exist)
        binds: list[tuple[str, bool, bool]] = []
        for p in config.read_only_paths:
            binds.append((self._abs(p), False, False))
        binds.append((working_directory, self.working_directory_writable, True))
        for p in config.read_write_paths:
            binds.append((self._abs(p), True, False))
        if state_dir:
            binds.append((state_dir, True, True))
        for m in mounts:
            if m.path != working_directory:
                binds.append((m.path, not m.read_only, False))
        binds += self._host_trusted_binds(binds, working_directory)
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
        ]
        # Where user namespaces are off (a setuid bwrap still works there), ids cannot be mapped.
        self.maps_ids = (config.uid is not None or config.gid is not None) and user_namespaces_available()
        if self.maps_ids:
            args.append("--unshare-user")
            if config.uid is not None:
                args += ["--uid", str(config.uid)]
            if config.gid is not None:
                args += ["--gid", str(config.gid)]
        args += ["--dev", "/dev"]
        if config.tmp_size_mb is not None:
            args += ["--size", str(config.tmp_size_mb << 20)]
        args += ["--tmpfs", "/dev/shm", "--proc", "/proc", *proc_hardening()]
        if config.tmp_size_mb is not None:
            args += ["--size", str(config.tmp_size_mb << 20)]
        args += ["--tmpfs", "/tmp", *sys_args]
        roots = list(sys_roots)
        writable: list[str] = []
        for path, rw, must_exist in binds:
            if rw:
                args += ["--bind" if must_exist else "--bind-try", path, path]
                writable.append(path)
            elif path in self.placeholders:  # bwrap makes the mount point again if it went missing
                args += ["--ro-bind", _empty_dir(), path]
            else:
                args += ["--ro-bind" if must_exist else "--ro-bind-try", path, path]
            roots.append(path)
        # The running Python inside a writable bind (a .venv in the workspace): bound read-only
        # again on top, or a command could plant a .pth file that the notebook's Python runs.
        self.protected_prefixes = tuple(p for p in python_prefixes() if any(_under(p, w) for w in writable))
        for p in self.protected_prefixes:
            args += ["--ro-bind", p, p]
        self._prefix = args
        self._suffix: tuple[str, ...] = tuple(config.bwrap_args or ())
        self.visible_roots: tuple[str, ...] = tuple(roots)
        self._path_dirs: dict[str, bool] = {}
        self.cgroup_join_files = tuple(cgroup_join_files)
        # Per-command limits, set inside the sandbox (after the user namespace exists, so the
        # process limit counts the sandbox's processes, not every process of the notebook user).
        limits = rlimit_args(config)
        prlimit = prlimit_path()
        self.rlimits_applied = bool(limits) and prlimit is not None and self.is_visible(prlimit)
        self._inner: tuple[str, ...] = (prlimit, *limits, "--") if self.rlimits_applied and prlimit else ()

    def _host_trusted_binds(
        self, binds: Sequence[tuple[str, bool, bool]], working_directory: str
    ) -> list[tuple[str, bool, bool]]:
        """Read-only binds over the host-trusted entries of the writable binds.

        Sets ``host_trusted`` (what the scan found), ``protected`` (the host paths bound
        read-only), and ``placeholders``: paths bound read-only from an empty folder so that
        commands cannot create them — the working directory's ``.git`` when it has none (an
        empty ``.git`` folder, which git on the host ignores) and the submodule folders of a
        repository that are not checked out (``git status`` in the repository runs git inside a
        submodule folder as soon as it holds a ``.git``). The empty folders stay on the host
        when the sandbox ends: removing one would detach the read-only mount of every other
        sandbox over the same folder (Linux detaches a mount whose mount point is removed in
        another namespace), and git ignores them.

        A path the configuration makes writable itself (``read_write_paths``, a read-write mount)
        stays writable: that is the explicit way to let commands commit, for instance. Symbolic
        links cannot be bound over; ``host_trusted`` reports them.
        """
        granted = {path for path, rw, _ in binds if rw}
        self.host_trusted_roots = tuple(path for path, rw, _ in binds if rw and path != self.state_dir)
        self.host_trusted = TrustedScan.merge(scan(r) for r in self.host_trusted_roots)
        protected = [e.path for e in self.host_trusted.entries if not e.symlink and e.rel != "."]
        wanted: list[str] = []
        if self.working_directory_writable:
            wanted.append(os.path.join(working_directory, ".git"))
        for e in self.host_trusted.entries:
            if e.rel.rsplit("/", 1)[-1] == ".git" and not e.symlink:
                wanted += [
                    p
                    for p in submodule_paths(os.path.dirname(e.path))
                    if not os.path.lexists(os.path.join(p, ".git"))
                ]
        placeholders = []
        for path in wanted:
            if path in granted or not any(_under(path, r) for r in self.host_trusted_roots):
                continue
            if not os.path.lexists(path):
                try:
                    os.mkdir(path, 0o755)  # on the host: an empty folder, ignored by git
                except OSError:
                    continue
            if _empty_folder(path):
                placeholders.append(path)
            elif path not in protected and os.path.isdir(path) and not os.path.islink(path):
                protected.append(path)  # a submodule folder with files but no .git
        protected = [p for p in protected if p not in granted and p not in placeholders]
        self.placeholders = tuple(placeholders)
        self.protected = tuple(protected) + self.placeholders
        return [(p, False, False) for p in self.protected]

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

    def argv(self, command: str, cwd: str, *, seccomp_fd: int | None = None) -> list[str]:
        """A shell command line in the sandbox (``wrap()`` of ``/bin/sh -c command``)."""
        return self.wrap(["/bin/sh", "-c", command], cwd, seccomp_fd=seccomp_fd)

    def wrap(
        self,
        argv: Sequence[str],
        cwd: str,
        *,
        binds: Iterable[Mount] = (),
        seccomp_fd: int | None = None,
    ) -> list[str]:
        """Wraps an exec-style argv in this sandbox's isolation.

        ``binds`` are extra paths visible for this launch only (for a kernel: the directory of
        its connection file and sockets). ``seccomp_fd`` is a descriptor, opened on
        ``seccomp_path`` and inherited by the child (``pass_fds``), that bwrap reads the filter
        from. Without one — or when the sandbox has a cgroup — the command line stands alone:
        a ``/bin/sh`` in front puts the process in the cgroup and opens the filter itself,
        so any launcher (jupyter_client's, a restart) can run it as it is.
        """
        args = list(self._prefix)
        for m in binds:
            flag = "--ro-bind-try" if m.read_only else "--bind-try"
            args += [flag, m.path, m.path]
        standalone = self.cgroup_join_files or (self.seccomp_path is not None and seccomp_fd is None)
        if self.seccomp_path is not None:
            args += ["--seccomp", str(STANDALONE_SECCOMP_FD if standalone else seccomp_fd)]
        # The root is bwrap's own tmpfs: remounting it read-only last (after every mount point
        # was created, user args included) makes a write to /etc/x or /x fail loudly instead of
        # landing in a throw-away directory.
        args += ["--chdir", cwd, *self._suffix, "--remount-ro", "/", "--", *self._inner, *argv]
        if not standalone:
            return args
        script = "".join(
            f"echo {join_value(f, '$$')} > {shlex.quote(f)} || exit 125; " for f in self.cgroup_join_files
        )
        script += 'exec "$@"'
        if self.seccomp_path is not None:
            script += f" {STANDALONE_SECCOMP_FD}<{shlex.quote(self.seccomp_path)}"
        return ["/bin/sh", "-c", script, "ws-sandbox", *args]
