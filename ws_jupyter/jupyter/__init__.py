"""Jupyter integration: the ``%ws`` magics, rich displays, widgets and the kernelspec.

Nothing here is imported by the rest of the package (the core never depends on IPython or
ipywidgets). ``%load_ext ws_jupyter`` goes through :mod:`.extension`; the rich displays live in
:mod:`.views` (one module per family), the widgets in :mod:`.widgets`; ``ws-jupyter
install-kernel`` uses :mod:`.kernel_install`.
"""

__all__: list[str] = []
