"""``python -m ws_jupyter COMMAND``: the ``ws-jupyter`` console script, for a Python whose scripts
directory is not on ``PATH`` (``/path/to/python -m ws_jupyter install-model`` targets that Python)."""

import sys

from .cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through subprocesses
    sys.exit(main())
