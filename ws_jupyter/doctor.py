"""``ws-jupyter doctor``: what this environment has, and what each missing piece costs.

A pip user gets ws-jupyter without the optional system tools and model files that make parts of it
work well. ``check_environment()`` looks at each one — really probing where a file check would lie
(bubblewrap must start a sandbox; a kernelspec must point to a Python that imports ws_jupyter) — and
reports, per component, what was found, what is lost without it, and the command that fixes it.

Given a workspace folder, it also lists the host-trusted files there (``.git``, ``.vscode``,
``.envrc``, virtual environments: files whose content programs on the host act on) and whether
sandboxed commands can change them.

What the *configuration* needs decides the exit status: ``isolation="bwrap"`` (and
``network="allow"``) needs bubblewrap,
``vector=True`` the default model, a Chroma server address an answering server. Everything else is
optional (``strict=True`` makes every missing piece count).

>>> report = check_environment(vector=True)     # doctest: +SKIP
>>> print(report.text()); report.exit_code      # doctest: +SKIP

The Jupyter view of the same report is ``%ws doctor``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["Check", "DoctorConfig", "DoctorReport", "check_environment", "ws_command"]

Status = Literal["ok", "missing", "warning", "info"]


@dataclass(frozen=True)
class Check:
    """One component: ``found`` (what this environment has), ``cost`` (what is lost without it) and
    ``fix`` (the command that fixes it); ``required`` when the configuration needs it."""

    name: str
    status: Status
    found: str
    cost: str = ""
    fix: str = ""
    required: bool = False

    @property
    def failed(self) -> bool:
        """Missing although the configuration needs it (what makes the exit status non-zero)."""
        return self.required and self.status == "missing"


@dataclass(frozen=True)
class DoctorConfig:
    """What the checks are measured against. ``chroma``: ``"host:port"`` (or an http(s) URL) of a
    Chroma server the workspace uses; ``strict``: every missing piece counts as needed;
    ``workspace``: the folder sandboxed commands write (its host-trusted files are listed)."""

    isolation: str = "auto"
    network: str = "none"
    vector: bool = False
    chroma: str | None = None
    strict: bool = False
    workspace: str | None = None

    @classmethod
    def from_workspace(cls, workspace: Any, **overrides: Any) -> DoctorConfig:
        """The configuration of an existing workspace: its isolation, default embedder, Chroma server."""
        from .filesystem.local import LocalFilesystem
        from .install.model import uses_default_model
        from .sandbox.local import LocalSandbox
        from .search.vector_store import ChromaVectorStore

        values: dict[str, Any] = {}
        sandbox = getattr(workspace, "sandbox", None)
        if isinstance(sandbox, LocalSandbox):
            values["isolation"] = sandbox.isolation_requested
            values["network"] = sandbox.network.mode
            values["workspace"] = sandbox.working_directory
        elif isinstance(getattr(workspace, "filesystem", None), LocalFilesystem):
            values["workspace"] = workspace.filesystem.base_path
        values["vector"] = uses_default_model(workspace)
        store = getattr(workspace, "_vector_store", None)
        if isinstance(store, ChromaVectorStore) and (store.host is not None or store.port is not None):
            scheme = "https" if getattr(store, "ssl", False) else "http"
            values["chroma"] = f"{scheme}://{store.host or 'localhost'}:{store.port or 8000}"
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


@dataclass(frozen=True)
class DoctorReport:
    """The table of checks; ``exit_code`` is 1 when something the configuration needs is missing."""

    checks: tuple[Check, ...]
    config: DoctorConfig
    python: str = field(default_factory=lambda: sys.executable)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.failed]

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def get(self, name: str) -> Check:
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(name)

    def summary(self) -> str:
        """One line: what is needed and missing, then what is optional and missing, then warnings."""
        if self.failed:
            parts = [f"Missing what this configuration needs: {', '.join(c.name for c in self.failed)}."]
        else:
            parts = ["Everything this configuration needs is here."]
        missing = [c.name for c in self.checks if c.status == "missing" and not c.failed]
        warnings = [c.name for c in self.checks if c.status == "warning"]
        if missing:
            parts.append(f"Optional, missing: {', '.join(missing)}.")
        if warnings:
            parts.append(f"Warnings: {', '.join(warnings)}.")
        return " ".join(parts)

    def text(self) -> str:
        from ._version import __version__

        width = max(len(c.name) for c in self.checks) + 2
        lines = [f"ws-jupyter {__version__} doctor · Python {sys.version.split()[0]} · {self.python}", ""]
        lines.append(f"  {'status':<9} {'component':<{width}} this environment")
        pad = " " * (2 + 9 + 1 + width + 1)
        for c in self.checks:
            status = "MISSING" if c.failed else c.status
            lines.append(f"  {status:<9} {c.name:<{width}} {c.found}")
            if c.cost and c.status != "ok":
                lines.append(f"{pad}costs: {c.cost}")
            if c.fix and c.status != "ok":
                lines.append(f"{pad}fix:   {c.fix}")
        lines += ["", self.summary()]
        return "\n".join(lines)

    __str__ = text

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "python": self.python,
            "config": asdict(self.config),
            "checks": [dict(asdict(c), failed=c.failed) for c in self.checks],
            "summary": self.summary(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


# --- commands that fix things ---------------------------------------------------------------------


def _on_path_here(script: str) -> bool:
    """Whether ``script`` on PATH is the one of this Python's environment."""
    found = shutil.which(script)
    if found is None:
        return False
    here = {os.path.dirname(os.path.abspath(sys.executable)), os.path.abspath(sysconfig.get_path("scripts"))}
    return os.path.dirname(os.path.abspath(found)) in here


def ws_command(args: str) -> str:
    """``ws-jupyter ARGS`` when that script on PATH is this environment's, else ``python -m ws_jupyter``
    with this Python's absolute path (a kernel often runs without its environment on PATH)."""
    if _on_path_here("ws-jupyter"):
        return f"ws-jupyter {args}"
    return f"{sys.executable} -m ws_jupyter {args}"


def pip_command(args: str) -> str:
    """``pip install ...`` for *this* environment."""
    if _on_path_here("pip"):
        return f"pip {args}"
    return f"{sys.executable} -m pip {args}"


def system_install_command(package: str) -> str:
    """The command of this system's package manager that installs ``package``."""
    sudo = "" if hasattr(os, "geteuid") and os.geteuid() == 0 else "sudo "
    for tool, command in (
        ("apt-get", f"{sudo}apt-get install -y {package}"),
        ("dnf", f"{sudo}dnf install -y {package}"),
        ("yum", f"{sudo}yum install -y {package}"),
        ("zypper", f"{sudo}zypper install -y {package}"),
        ("pacman", f"{sudo}pacman -S --noconfirm {package}"),
        ("apk", f"{sudo}apk add {package}"),
        ("brew", f"brew install {package}"),
    ):
        if shutil.which(tool):
            return command
    return f"install {package} with this system's package manager"


# --- the checks -----------------------------------------------------------------------------------


def _python(config: DoctorConfig) -> Check:
    from ._version import __version__

    kind = "virtual environment" if sys.prefix != sys.base_prefix else "no virtual environment"
    return Check(
        "python", "ok", f"Python {sys.version.split()[0]} ({kind}: {sys.prefix}), ws-jupyter {__version__}"
    )


def _detect() -> Any:
    """The sandbox's own probe; a probe that raises (e.g. libseccomp missing) counts as unavailable."""
    from .errors import IsolationUnavailableError
    from .sandbox.local import LocalSandbox
    from .sandbox.types import IsolationDetection

    try:
        return LocalSandbox.detect_isolation()
    except IsolationUnavailableError as exc:
        return IsolationDetection("seatbelt" if sys.platform == "darwin" else "bwrap", False, str(exc))


def _isolation(config: DoctorConfig) -> Check:
    detection = _detect()
    needed = config.isolation in ("bwrap", "seatbelt") or config.strict
    if detection.available:
        return Check("isolation", "ok", detection.message, required=needed)
    if config.isolation == "none" and not config.strict:
        return Check("isolation", "info", f"off by configuration (isolation='none'); {detection.message}")
    if sys.platform.startswith("linux"):
        if shutil.which("bwrap") is None:
            fix = system_install_command("bubblewrap")
        elif "libseccomp" in detection.message:
            fix = system_install_command("libseccomp2")
        else:
            fix = (
                "allow unprivileged user namespaces: `sysctl -w kernel.unprivileged_userns_clone=1` (Debian), "
                "`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 24.04); in Docker run the "
                "container with `--security-opt seccomp=unconfined --security-opt apparmor=unconfined`"
            )
    elif sys.platform == "darwin":
        fix = "sandbox-exec ships with macOS: check that /usr/bin/sandbox-exec runs"
    else:
        fix = "none on this platform (bubblewrap needs Linux, seatbelt macOS)"
    user = "root" if _is_root() else "this user"
    cost = (
        f"commands and processes run on the host as {user}, unisolated, so the agents' command tool "
        "asks for approval before each command"
    )
    return Check("isolation", "missing", detection.message, cost, fix, required=needed)


def _probe_network() -> str | None:
    """Runs one command in an ``allow``-mode sandbox that asks the proxy for a host it must refuse;
    None when the refusal came back (bridge, socket and proxy all work), else what went wrong."""
    from .sandbox.local import LocalSandbox

    with tempfile.TemporaryDirectory(prefix="ws-doctor-net-") as tmp:
        sandbox = LocalSandbox(
            working_directory=tmp, isolation="bwrap", timeout=30, network=["ws-doctor.invalid"]
        )
        try:
            result = sandbox.execute_command(
                "python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', 3128), timeout=10); "
                "s.sendall(b'CONNECT probe.invalid:443 HTTP/1.1\\r\\n\\r\\n'); print(s.recv(40))\""
            )
            events = sandbox.egress_log()
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        finally:
            sandbox.destroy()
    if "403" not in result.stdout or not events or events[-1].allowed:
        return (result.stderr or result.stdout).strip()[-300:] or f"exit code {result.exit_code}"
    return None


def _network(config: DoctorConfig) -> Check:
    needed = config.network == "allow" or config.strict
    cost = (
        "no network allow-lists (network='allow'): sandboxed commands get either no network or the "
        "host's whole network"
    )
    detection = _detect()
    if not (detection.available and detection.backend == "bwrap"):
        status: Status = "missing" if needed or sys.platform.startswith("linux") else "info"
        fix = system_install_command("bubblewrap") if sys.platform.startswith("linux") else "needs Linux"
        return Check(
            "sandbox network",
            status,
            f"allow-lists need bubblewrap: {detection.message}",
            cost,
            fix,
            required=needed,
        )
    problem = _probe_network()
    if problem is not None:
        return Check(
            "sandbox network",
            "missing",
            f"the allow-list proxy did not answer: {problem}",
            cost,
            "",
            required=needed,
        )
    found = "allow-lists work (a probe command was refused by the proxy, as listed)"
    crypto = _version("cryptography")
    if crypto is None:
        return Check(
            "sandbox network",
            "missing",
            found + "; no cryptography package",
            "header secrets (network secrets=...) cannot be configured: HTTPS needs a sandbox CA",
            pip_command("install 'ws-jupyter[network]'"),
            required=config.strict,
        )
    return Check(
        "sandbox network", "ok", f"{found}; header secrets over HTTPS: cryptography {crypto}", required=needed
    )


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _root(config: DoctorConfig) -> Check:
    if not _is_root():
        uid = os.geteuid() if hasattr(os, "geteuid") else "?"
        return Check("user", "ok", f"not root (uid {uid})")
    fix = (
        "run Jupyter as an unprivileged user (e.g. `useradd -m analyst`, then `su analyst -c 'jupyter lab'`)"
    )
    if not _detect().available:
        return Check(
            "user",
            "warning",
            "running as root, without isolation",
            "every command an agent runs here runs as root on the host",
            fix,
        )
    probe = _probe_sandbox_as_root()
    if isinstance(probe, str):
        return Check("user", "warning", f"running as root; probing the sandbox failed: {probe}", "", fix)
    uid, proc_sys_writable = probe
    inside = f"inside the sandbox commands run as uid {uid}, /proc/sys is {'writable' if proc_sys_writable else 'read-only'}"
    if uid == 0 or proc_sys_writable:
        cost = "a sandboxed command acts as host root on what the sandbox shows it" + (
            " and can change the host's kernel settings through /proc/sys" if proc_sys_writable else ""
        )
        return Check("user", "warning", f"running as root; {inside}", cost, fix)
    return Check("user", "ok", f"running as root; {inside}")


def _probe_sandbox_as_root() -> tuple[int, bool] | str:
    """(uid inside a bwrap sandbox, whether /proc/sys is writable there) — ``access(2)`` only, no write."""
    from .sandbox.local import LocalSandbox
    from .sandbox.tempdirs import process_dir

    with tempfile.TemporaryDirectory(prefix="ws-doctor-", dir=process_dir()) as tmp:
        sandbox = LocalSandbox(working_directory=tmp, isolation="bwrap", timeout=30)
        try:
            sandbox.start()
            result = sandbox.execute_command(
                "id -u; if [ -w /proc/sys/kernel/core_pattern ]; then echo writable; else echo read-only; fi"
            )
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        finally:
            try:
                sandbox.destroy()
            except Exception:
                pass
    lines = result.stdout.split()
    if result.exit_code != 0 or len(lines) < 2 or not lines[0].isdigit():
        return f"exit code {result.exit_code}: {(result.stderr or result.stdout).strip()[:200]}"
    return int(lines[0]), lines[1] == "writable"


def _ripgrep(config: DoctorConfig) -> Check:
    from .tools.grep import confine as grep_confine
    from .tools.grep.confine import find_ripgrep

    rg = find_ripgrep()
    if rg is not None:
        try:
            version = subprocess.run([rg, "--version"], capture_output=True, text=True, timeout=10).stdout
            version = version.splitlines()[0] if version else "rg"
        except (OSError, subprocess.SubprocessError):
            version = "rg"
        confinement = grep_confine.mode()
        if confinement is not None:
            return Check(
                "ripgrep",
                "ok",
                f"{version} at {rg}: fast grep, confined to the workspace ({confinement})",
                required=config.strict,
            )
        return Check(
            "ripgrep",
            "warning",
            f"{version} at {rg}, but it cannot be confined to the workspace here (no Landlock, no working "
            "bubblewrap)",
            "grep (workspace_grep, %ws grep) uses the pure-Python engine: same results, 5-15x slower on big "
            "trees (ripgrep opens paths a sandboxed process could swap for symlinks to host files)",
            "a Linux kernel with Landlock (5.13 or later), or bubblewrap with user namespaces",
            required=config.strict,
        )
    forced = os.environ.get("WS_JUPYTER_GREP_ENGINE", "").lower() == "python"
    found = "not used: WS_JUPYTER_GREP_ENGINE=python" if forced else "no working rg binary"
    return Check(
        "ripgrep",
        "missing",
        found,
        "grep (workspace_grep, %ws grep) uses the pure-Python engine: same results, 15-40x slower on big trees",
        "unset WS_JUPYTER_GREP_ENGINE" if forced else pip_command("install ripgrep==14.1.0"),
        required=config.strict,
    )


def _model(config: DoctorConfig) -> Check:
    import importlib.util

    from .install.model import model_status

    needed = config.vector or config.strict
    runtime = [
        m for m in ("onnxruntime", "tokenizers", "onnx", "numpy") if importlib.util.find_spec(m) is None
    ]
    if runtime:
        return Check(
            "default model",
            "missing",
            f"missing Python packages: {', '.join(runtime)}",
            "no vector or hybrid search (BM25 keyword search works)",
            pip_command("install --force-reinstall ws-jupyter"),
            required=needed,
        )
    status = model_status()
    if status.available:
        return Check("default model", "ok", status.describe() + ": vector and hybrid search", required=needed)
    return Check(
        "default model",
        "missing",
        status.describe(),
        "no vector or hybrid search (BM25 keyword search works)",
        ws_command("install-model"),
        required=needed,
    )


def _kernelspec(config: DoctorConfig) -> Check:
    from .install.kernel import DISPLAY_NAME, KERNEL_NAME

    fix = ws_command("install-kernel")
    cost = f'no "{DISPLAY_NAME}" kernel in Jupyter\'s launcher (`%load_ext ws_jupyter` works in any Python kernel)'
    try:
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    except ImportError as exc:
        return Check(
            "kernelspec",
            "missing",
            f"jupyter_client is not importable ({exc})",
            cost,
            pip_command("install jupyter-client"),
            required=config.strict,
        )
    try:
        spec = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
    except NoSuchKernel:
        return Check(
            "kernelspec", "missing", f"no kernelspec named {KERNEL_NAME!r}", cost, fix, required=config.strict
        )
    except Exception as exc:
        return Check("kernelspec", "warning", f"could not read the kernelspecs: {exc}", cost, fix)
    where = spec.resource_dir
    python = spec.argv[0] if spec.argv else ""
    if python in ("python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}"):
        # jupyter_client runs these with the Jupyter server's own interpreter
        return Check(
            "kernelspec",
            "ok",
            f"{KERNEL_NAME} in {where} (runs the Jupyter server's Python)",
            required=config.strict,
        )
    if not os.path.isfile(python):
        return Check(
            "kernelspec",
            "missing",
            f"{KERNEL_NAME} in {where} runs {python}, which does not exist",
            "the kernel cannot start",
            fix,
            required=config.strict,
        )
    if os.path.realpath(python) != os.path.realpath(sys.executable) and not _imports_ws_jupyter(python):
        return Check(
            "kernelspec",
            "missing",
            f"{KERNEL_NAME} in {where} runs {python}, which cannot import ws_jupyter",
            "the kernel starts without the extension",
            fix,
            required=config.strict,
        )
    other = "" if os.path.realpath(python) == os.path.realpath(sys.executable) else " (another environment)"
    return Check(
        "kernelspec", "ok", f"{KERNEL_NAME} in {where}, runs {python}{other}", required=config.strict
    )


def _imports_ws_jupyter(python: str) -> bool:
    try:
        return (
            subprocess.run([python, "-c", "import ws_jupyter"], capture_output=True, timeout=60).returncode
            == 0
        )
    except (OSError, subprocess.SubprocessError):
        return False


def _chroma_address(value: str) -> tuple[str, str, int]:
    """``(base URL, host, port)`` of ``host:port`` or ``http(s)://host:port`` (port 8000 by default)."""
    value = value.strip().rstrip("/")
    parts = urllib.parse.urlsplit(value if "://" in value else f"http://{value}")
    host, port = parts.hostname or "localhost", parts.port or 8000
    return f"{parts.scheme}://{host}:{port}", host, port


def _chroma(config: DoctorConfig) -> Check | None:
    if not config.chroma:
        return None
    try:
        url, host, port = _chroma_address(config.chroma)
    except ValueError as exc:
        return Check(
            "chroma server",
            "missing",
            f"invalid address {config.chroma!r}: {exc}",
            "vector search through that server fails",
            "give it as HOST:PORT",
            required=True,
        )
    fix = f"start it: `chroma run --host {host} --port {port}` (or correct the address)"
    errors = []
    for path in ("/api/v2/heartbeat", "/api/v1/heartbeat"):
        try:
            with urllib.request.urlopen(url + path, timeout=5) as response:
                body = response.read(200).decode("utf-8", "replace")
            return Check("chroma server", "ok", f"{url} answers ({path}: {body.strip()[:60]})", required=True)
        except urllib.error.HTTPError as exc:
            errors.append(f"{path}: HTTP {exc.code}")
            if exc.code != 404:
                break
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            errors.append(str(reason))
            break
    return Check(
        "chroma server",
        "missing",
        f"no Chroma server answers at {url} ({'; '.join(errors)})",
        "vector search through that server fails",
        fix,
        required=True,
    )


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _major(version: str) -> int:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def _jupyterlab(config: DoctorConfig) -> Check:
    lab, notebook = _version("jupyterlab"), _version("notebook")
    if lab is None:
        found = "not installed in this environment" + (f" (notebook {notebook} is)" if notebook else "")
        return Check(
            "jupyterlab",
            "info",
            found,
            "nothing, when JupyterLab runs from another environment and starts this Python's kernel "
            "(that environment needs jupyterlab_widgets for the widgets)",
            pip_command("install jupyterlab"),
        )
    extra = f", notebook {notebook}" if notebook else ""
    if _major(lab) < 4:
        return Check(
            "jupyterlab",
            "warning",
            f"jupyterlab {lab}{extra}",
            "ws-jupyter is tested with JupyterLab 4",
            pip_command("install -U 'jupyterlab>=4'"),
        )
    return Check("jupyterlab", "ok", f"jupyterlab {lab}{extra}")


def _ipywidgets(config: DoctorConfig) -> Check:
    widgets, lab_widgets = _version("ipywidgets"), _version("jupyterlab_widgets")
    cost = "no live widgets (%ws ui, process output, approvals): views fall back to text"
    if widgets is None:
        return Check(
            "ipywidgets",
            "missing",
            "not installed",
            cost,
            pip_command("install 'ipywidgets>=8.1'"),
            required=config.strict,
        )
    found = f"ipywidgets {widgets}" + (f", jupyterlab_widgets {lab_widgets}" if lab_widgets else "")
    if _major(widgets) < 8:
        return Check(
            "ipywidgets",
            "warning",
            found,
            "ws-jupyter's widgets need ipywidgets 8",
            pip_command("install -U 'ipywidgets>=8.1'"),
        )
    return Check("ipywidgets", "ok", found)


def _tokens(config: DoctorConfig) -> Check:
    from .text.tokens import tokenizer_name

    name = tokenizer_name()
    if name != "approximation":
        return Check("token counts", "ok", f"exact: {name}")
    return Check(
        "token counts",
        "missing",
        "a calibrated approximation",
        "tool output budgets are counted approximately (0.75-1.2x of o200k_base), not exactly",
        pip_command("install 'ws-jupyter[tokens]'"),
        required=config.strict,
    )


def _git_option(name: str) -> str | None:
    """A git setting as the notebook user's git sees it (None: unset, or no git)."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        out = subprocess.run(
            [git, "config", "--global", "--get", name], capture_output=True, text=True, timeout=10, cwd="/"
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _host_trusted(config: DoctorConfig) -> Check | None:
    if config.workspace is None:
        return None
    from .filesystem.host_trusted import scan

    found = scan(config.workspace)
    shown = [e.rel + ("/" if e.is_dir else "") for e in found.entries]
    listed = ", ".join(shown[:12]) + (f" and {len(shown) - 12} more" if len(shown) > 12 else "")
    if not found.complete:
        listed += f" ({found.note})"
    isolation = config.isolation
    if isolation == "auto":
        detection = _detect()
        isolation = detection.backend if detection.available else "none"
    name = "host-trusted files"
    acts = "git, editors or direnv on the host run what they name"
    if isolation != "bwrap":
        if not shown:
            return Check(name, "ok", f"none in {config.workspace}")
        who = "without isolation" if isolation == "none" else f"under {isolation}"
        return Check(
            name,
            "warning",
            f"{listed} in {config.workspace}: commands {who} can change them",
            f"{acts}: a command can plant code that runs on the host as this user",
            "use isolation='bwrap', where they are read-only to commands",
        )
    protected = f"{listed}: read-only to the sandbox" if shown else f"none in {config.workspace}"
    if shutil.which("git") is not None and _git_option("safe.bareRepository") != "explicit":
        return Check(
            name,
            "warning",
            protected + "; git on the host uses any folder holding HEAD, objects and refs as a repository",
            "a command can still make a new repository in a folder of the workspace (a .git in a "
            "subfolder, or HEAD, objects and refs in any folder); git on the host runs its config when "
            "used in that folder (%ws info lists those made after the sandbox started)",
            "git config --global safe.bareRepository explicit",
        )
    return Check(name, "ok", protected)


CHECKS: tuple[Callable[[DoctorConfig], Check | None], ...] = (
    _python,
    _isolation,
    _network,
    _root,
    _host_trusted,
    _ripgrep,
    _model,
    _kernelspec,
    _chroma,
    _jupyterlab,
    _ipywidgets,
    _tokens,
)


def check_environment(
    config: DoctorConfig | None = None,
    *,
    isolation: str | None = None,
    network: str | None = None,
    vector: bool | None = None,
    chroma: str | None = None,
    strict: bool | None = None,
    workspace: str | None = None,
) -> DoctorReport:
    """Runs every check against ``config`` (keywords override its fields) and returns the report.

    A check that breaks is reported as a warning row, never raised: the doctor must work in a
    broken environment."""
    base = config or DoctorConfig()
    overrides = {
        k: v
        for k, v in {
            "isolation": isolation,
            "network": network,
            "vector": vector,
            "chroma": chroma,
            "strict": strict,
            "workspace": workspace,
        }.items()
        if v is not None
    }
    cfg = DoctorConfig(**{**asdict(base), **overrides})
    started = time.monotonic()
    checks: list[Check] = []
    for fn in CHECKS:
        try:
            check = fn(cfg)
        except Exception as exc:
            name = fn.__name__.strip("_").replace("_", " ")
            check = Check(name, "warning", f"the check failed: {type(exc).__name__}: {exc}")
        if check is not None:
            checks.append(check)
    return DoctorReport(tuple(checks), cfg, sys.executable, time.monotonic() - started)
