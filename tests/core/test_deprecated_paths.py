"""Import paths kept for one release after a move: they give the same objects and say where
the names went, and nothing in ws_jupyter itself uses them (no warning in ordinary use)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

KERNEL_MODULES = ("activity", "config", "gateway", "kernel", "launch", "manager", "messages", "result")


def _run(code: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_old_kernels_path_is_the_new_module_and_warns_once_at_the_importer() -> None:
    out = _run(
        f"""
        import importlib, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import ws_jupyter.kernels as old
            from ws_jupyter.kernels import GatewayKernelManager, MimeBundle, ExecutionResult
            for name in {KERNEL_MODULES!r}:
                assert importlib.import_module("ws_jupyter.kernels." + name) is importlib.import_module(
                    "ws_jupyter.sandbox.kernels." + name
                ), name
        import ws_jupyter
        from ws_jupyter.sandbox.kernels import gateway
        from ws_jupyter.kernels.result import FRAME_THEME_CSS  # a name outside __all__ too
        assert GatewayKernelManager is gateway.GatewayKernelManager
        assert MimeBundle is ws_jupyter.MimeBundle and ExecutionResult is ws_jupyter.ExecutionResult
        assert set(old.__all__) <= set(dir(old))
        deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
        assert len(deprecations) == 1, [str(w.message) for w in caught]
        print(deprecations[0].filename, "|", deprecations[0].message)
        """
    )
    assert out.returncode == 0, out.stderr
    where, message = out.stdout.strip().split(" | ")
    assert where == "<string>"  # attributed to the importing code, not to the import machinery
    assert "ws_jupyter.sandbox.kernels" in message


def test_ordinary_use_never_touches_the_old_path() -> None:
    out = _run(
        """
        import sys, pkgutil, importlib
        import ws_jupyter, ws_jupyter.sandbox
        for name in ws_jupyter.__all__:
            if name not in ("load_ipython_extension", "unload_ipython_extension"):
                getattr(ws_jupyter, name)
        for info in pkgutil.walk_packages(ws_jupyter.sandbox.__path__, "ws_jupyter.sandbox."):
            importlib.import_module(info.name)
        import tempfile
        sb = ws_jupyter.LocalSandbox(tempfile.gettempdir())
        sb.kernels.availability()
        assert not [m for m in sys.modules if m == "ws_jupyter.kernels" or m.startswith("ws_jupyter.kernels.")]
        """,
        "-W",
        "error::DeprecationWarning:ws_jupyter",
    )
    assert out.returncode == 0, out.stderr
