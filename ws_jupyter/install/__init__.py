"""Putting ws-jupyter's pieces into this environment: the kernelspec (``kernel``: ``ws-jupyter
install-kernel``) and the default embedding model (``model``: ``ws-jupyter install-model``,
:func:`ws_jupyter.install_model`). The CLI, ``doctor`` and the ``%ws`` magics use these; nothing
here imports IPython.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_EXPORTS = {
    "install_kernel": "ws_jupyter.install.kernel",
    "uninstall_kernel": "ws_jupyter.install.kernel",
    "install_model": "ws_jupyter.install.model",
    "model_status": "ws_jupyter.install.model",
}

__all__ = ["install_kernel", "install_model", "model_status", "uninstall_kernel"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

if TYPE_CHECKING:  # pragma: no cover
    from .kernel import install_kernel, uninstall_kernel
    from .model import install_model, model_status
