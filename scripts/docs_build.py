"""The documentation site's build steps that MkDocs does not do itself (``scripts/docs.sh`` runs them).

1. **Executed notebooks.** The example notebooks are stored without outputs; the site shows them
   with the outputs of a real run on the "Python 3 (ws-jupyter)" kernel. ``execute`` runs them with
   nbclient into ``build/notebooks/`` and stamps each copy with what it was made from — digests of
   the notebook and of the package's code — so a copy is reused until either changes (and, with
   ``scripts/docs.sh --no-execute``, even after the code changed). The test suite, which executes
   every notebook anyway, saves its copies the same way (``save_executed``) and builds the site
   from them.
2. **MkDocs hooks** (``hooks:`` in ``mkdocs.yml``): the executed copies become the pages
   ``notebooks/*.ipynb`` (a missing copy, or one of another version of the notebook, fails the
   build), and no page may load anything
   from the network — nbconvert's MathJax and Mermaid loaders are taken out of the notebook pages
   (the notebooks have neither formulas nor diagrams), and any other remote script, style sheet,
   image or frame fails the build.

Command line: ``python scripts/docs_build.py execute [--out DIR] [--force] [NAME ...]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
PACKAGE = REPO / "ws_jupyter"
#: The executed copies are ``<root>/notebooks/<name>.ipynb`` (the pages' own paths under a root).
DEFAULT_ROOT = REPO / "build"
#: Environment variable naming the root the site takes the executed copies from.
ROOT_ENV = "WS_JUPYTER_DOCS_EXECUTED"
KERNEL = "ws-jupyter"
STAMP = "ws_jupyter_docs"  # notebook metadata key holding the source key
CELL_TIMEOUT = 180


# --- executed notebooks -----------------------------------------------------------------------


def source_key(notebook: Path) -> dict[str, str]:
    """What an executed copy is made from: digests of the notebook and of the package's modules."""
    package = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        package.update(str(path.relative_to(PACKAGE)).encode() + b"\0")
        package.update(path.read_bytes())
    return {"notebook": hashlib.sha256(notebook.read_bytes()).hexdigest(), "package": package.hexdigest()}


def notebook_names() -> list[str]:
    return sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


def save_executed(nb: Any, name: str, root: Path, key: dict[str, str]) -> Path:
    """Write an executed notebook as the site's copy of ``notebooks/<name>`` under ``root`` (atomically).

    The widget state nbclient stored is dropped: rendering it would load the widget manager from a
    CDN, and each ws-jupyter widget already left a static snapshot output beside it.
    """
    import copy

    import nbformat

    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    nb.metadata[STAMP] = dict(key)
    out_dir = root / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / name
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(nbformat.writes(nb))
    os.replace(tmp, target)
    return target


def executed_copy(name: str, root: Path, *, same_package: bool = True) -> Path | None:
    """The executed copy of ``notebooks/<name>`` under ``root`` if it was made from this notebook
    (and, with ``same_package``, from this code of the package), else None."""
    import json

    path = root / "notebooks" / name
    if not path.is_file():
        return None
    try:
        stamp = json.loads(path.read_text(encoding="utf-8"))["metadata"].get(STAMP, {})
    except (ValueError, KeyError, AttributeError):
        return None
    key = source_key(NOTEBOOKS / name)
    if stamp.get("notebook") != key["notebook"]:
        return None
    return path if not same_package or stamp.get("package") == key["package"] else None


def execute_notebook(source: Path, run_dir: Path, timeout: int = CELL_TIMEOUT) -> Any:
    """Run a notebook top to bottom on the ws-jupyter kernel with ``run_dir`` as its folder.

    Raises nbclient's ``CellExecutionError`` at the first failing cell.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(source, as_version=4)
    if nb.metadata.get("kernelspec", {}).get("name") != KERNEL:
        raise ValueError(f"{source.name} does not name the {KERNEL!r} kernel")
    run_dir.mkdir(parents=True, exist_ok=True)
    client = NotebookClient(
        nb, kernel_name=KERNEL, timeout=timeout, resources={"metadata": {"path": str(run_dir)}}
    )
    client.execute()
    return nb


def _install_kernelspec(prefix: Path) -> None:
    """The ws-jupyter kernelspec in a private prefix that Jupyter finds through ``JUPYTER_PATH``."""
    subprocess.run(
        [sys.executable, "-m", "ws_jupyter", "install-kernel", "--prefix", str(prefix)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    share = str(prefix / "share" / "jupyter")
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = share + (os.pathsep + old if old else "")


def execute(names: list[str], root: Path, force: bool = False) -> int:
    """Execute the notebooks whose copy under ``root`` is missing or stale; returns how many ran."""
    todo = [n for n in names if force or executed_copy(n, root) is None]
    for name in sorted(set(names) - set(todo)):
        print(f"[docs] notebooks/{name}: executed copy up to date")
    if not todo:
        return 0
    with tempfile.TemporaryDirectory(prefix="ws-jupyter-docs-") as tmp:
        _install_kernelspec(Path(tmp) / "kernel")
        for name in todo:
            started = time.monotonic()
            key = source_key(NOTEBOOKS / name)
            nb = execute_notebook(NOTEBOOKS / name, Path(tmp) / "run" / Path(name).stem)
            save_executed(nb, name, root, key)
            print(f"[docs] notebooks/{name}: executed in {time.monotonic() - started:.1f} s")
    return len(todo)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="docs_build.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("execute", help="execute the example notebooks whose copy is missing or stale")
    run.add_argument("names", nargs="*", help="notebook file names (default: all of notebooks/)")
    run.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="the copies go to ROOT/notebooks/")
    run.add_argument("--force", action="store_true", help="execute even when the copy is up to date")
    check = sub.add_parser("check", help="exit 1 when a notebook has no executed copy of its current version")
    check.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = parser.parse_args(argv)
    if args.command == "check":
        missing = [n for n in notebook_names() if executed_copy(n, args.root, same_package=False) is None]
        for name in missing:
            print(
                f"[docs] notebooks/{name}: no executed copy of this version under {args.root}",
                file=sys.stderr,
            )
        for name in sorted(set(notebook_names()) - set(missing)):
            if executed_copy(name, args.root) is None:
                print(f"[docs] notebooks/{name}: outputs from an earlier version of the package")
        return 1 if missing else 0
    names = args.names or notebook_names()
    unknown = sorted(set(names) - set(notebook_names()))
    if unknown:
        parser.error(f"not in notebooks/: {', '.join(unknown)}")
    execute(names, args.root.resolve(), force=args.force)
    return 0


# --- MkDocs hooks -----------------------------------------------------------------------------

# Attributes through which a page makes the browser fetch something (links the reader follows,
# <a href>, are not fetches).
_FETCHING = {
    "script": ("src",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "source": ("src", "srcset"),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "input": ("src",),
}
_REMOTE = re.compile(r"^\s*(https?:)?//", re.I)
_REMOTE_IN_CODE = re.compile(
    r"""(?:url\(\s*['"]?|@import\s+['"]|import\(\s*['"])\s*((?:https?:)?//[^'")\s]+)""", re.I
)
# nbconvert's lab template loads MathJax from a CDN on every notebook page, and Mermaid from a CDN
# when a page has a diagram: without formulas or diagrams both are dead weight, and both fetch.
_NBCONVERT_LOADERS = (
    re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S),
    re.compile(
        r"<script type=\"module\">\s*document\.addEventListener\(\"DOMContentLoaded\", async \(\) => \{\s*const diagrams = document\.querySelectorAll\(\"\.jp-Mermaid.*?</script>",
        re.S,
    ),
)


class _RemoteFetches(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._code: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        names = _FETCHING.get(tag, ())
        if tag == "link" and values.get("rel", "") not in ("canonical", "alternate", "next", "prev"):
            names = ("href",)
        for name in names:
            value = values.get(name) or ""
            if any(_REMOTE.match(part) for part in value.split(",")):
                self.found.append(f"<{tag} {name}={value!r}>")
        style = values.get("style") or ""
        self.found.extend(f"<{tag} style> {url}" for url in _REMOTE_IN_CODE.findall(style))

    def handle_data(self, data: str) -> None:
        self.found.extend(f"inline code: {url}" for url in _REMOTE_IN_CODE.findall(data))


def remote_fetches(html: str) -> list[str]:
    """What in a page would make a browser fetch from another host (scripts, styles, images, frames)."""
    parser = _RemoteFetches()
    parser.feed(html)
    parser.close()
    return parser.found


def _executed_root() -> Path:
    configured = os.environ.get(ROOT_ENV)
    return Path(configured).resolve() if configured else DEFAULT_ROOT


try:  # the hooks need MkDocs; the command line above does not
    from mkdocs.exceptions import PluginError
    from mkdocs.plugins import event_priority
    from mkdocs.structure.files import File, Files
except ImportError:  # pragma: no cover - only when MkDocs is missing
    pass
else:

    @event_priority(100)  # before mkdocs-jupyter turns .ipynb files into pages
    def on_files(files: Files, config: Any) -> Files:
        """Each ``notebooks/<name>.ipynb`` page is the executed copy of that notebook.

        A plain file whose source folder is the copies' root (not a generated file: mkdocs-jupyter
        wraps files in a way that loses a generated file's path).
        """
        root = _executed_root()
        stale = [name for name in notebook_names() if executed_copy(name, root, same_package=False) is None]
        if stale:
            raise PluginError(
                f"no executed copy of this version of {', '.join(stale)} in {root / 'notebooks'} "
                "(scripts/docs.sh executes the notebooks first)"
            )
        for name in notebook_names():
            files.append(File(f"notebooks/{name}", str(root), config.site_dir, config.use_directory_urls))
        return files

    def on_post_page(output: str, page: Any, config: Any) -> str:
        if page.file.src_uri.endswith(".ipynb"):
            for loader in _NBCONVERT_LOADERS:
                output = loader.sub("", output)
        found = remote_fetches(output)
        if found:
            raise PluginError(f"{page.file.src_uri} would fetch from the network: {'; '.join(found[:5])}")
        return output


if __name__ == "__main__":
    sys.exit(main())
