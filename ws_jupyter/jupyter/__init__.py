"""Jupyter integration: the ``%ws`` magics, rich displays and widgets.

Nothing here is imported by the rest of the package (the core never depends on IPython or
ipywidgets). ``%load_ext ws_jupyter`` goes through :mod:`.extension`; the rich displays live in
:mod:`.views` (one module per family), the widgets in :mod:`.widgets`. The kernelspec
installation lives in :mod:`ws_jupyter.install` (the CLI and ``doctor`` use it too).
"""

__all__: list[str] = []
