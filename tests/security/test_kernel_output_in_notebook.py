"""A sandbox kernel's output shown in the user's notebook must not run there.

``%%ws py`` draws the workspace kernel's outputs in the user's cell with ``display(raw=True)``,
and a kernel's ``MimeBundle`` (``r.result``) displays itself the same way. JupyterLab trusts the
outputs of the session's own executions: it runs ``application/javascript`` and renders HTML and
Markdown unsanitised — ``<script>`` and ``onerror=`` included — with the user's access to the
Jupyter server. Code the agent left in the shared kernel (an IPython ``post_run_cell`` hook, a
module it wrote) could therefore run JavaScript in the user's JupyterLab — outside the sandbox —
at the user's next ``%%ws py`` cell. Before the fix these bundles reached the notebook as they
were.
"""

from __future__ import annotations

from typing import Any

import pytest
from IPython.utils.capture import capture_output

from ws_jupyter import LocalSandbox
from ws_jupyter.sandbox.kernels.result import FRAME_THEME_CSS

ACTIVE = ("application/javascript", "text/markdown", "text/latex", "image/svg+xml",
          "application/vnd.jupyter.widget-view+json")  # fmt: skip

HOSTILE = r"""
from IPython.display import display
display({
    "text/html": "<img src=x onerror=\"fetch('/api/terminals', {method: 'POST'})\"><script>alert(1)</script><b>t</b>",
    "application/javascript": "alert(2)",
    "text/markdown": "<script>alert(3)</script>",
    "image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload='alert(4)'></svg>",
    "text/plain": "a table",
}, raw=True)
class Value:
    def _repr_html_(self): return "<script>alert(5)</script>"
    def _repr_javascript_(self): return "alert(6)"
    def __repr__(self): return "Value()"
Value()
"""


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> Any:
    sb = LocalSandbox(working_directory=str(tmp_path_factory.mktemp("out") / "wd"))
    try:
        r = sb.kernels.execute(HOSTILE, timeout=120)
    finally:
        sb.destroy()
    assert r.ok, r
    return r


def _assert_inert(data: dict[str, Any], metadata: dict[str, Any]) -> None:
    assert not set(data) & set(ACTIVE), sorted(data)
    html = data.get("text/html")
    if html is not None:
        html = html.removeprefix(FRAME_THEME_CSS)  # a style rule for the page's dark theme, no markup
        assert html.startswith('<iframe sandbox="" class="ws-html-frame" csp="default-src \'none\';') or html.startswith(
            '<img src="data:image/svg+xml'
        )
        body = html.split('srcdoc="', 1)[-1]
        assert "<script" not in body and "<img src=x" not in body
    assert "isolated" not in metadata and "text/html" not in metadata


def test_a_kernel_bundle_renders_inertly_in_a_notebook(result: Any) -> None:
    bundles = [*result.display, result.result]
    assert len(bundles) == 2
    for bundle in bundles:
        assert {"text/html"} & set(bundle.data)  # what the kernel sent is still there for programs
        _assert_inert(*bundle._repr_mimebundle_())
    shown, _ = result.display[0]._repr_mimebundle_()
    assert shown["text/plain"] == "a table"
    assert "&lt;b&gt;t&lt;/b&gt;" in shown["text/html"]  # the HTML itself is shown, framed


def test_ws_py_draws_the_kernel_output_inertly(result: Any) -> None:
    from IPython.testing.globalipapp import get_ipython

    from ws_jupyter.jupyter.commands.py import NativeOutput
    from ws_jupyter.sandbox.kernels.result import OutputEvent

    get_ipython()  # IPython's testing shell: display() publishes into capture_output
    out = NativeOutput()
    with capture_output() as cap:
        for bundle in result.display:
            out.draw(OutputEvent(kind="display", bundle=bundle))
    assert len(cap.outputs) == 1
    _assert_inert(cap.outputs[0].data, cap.outputs[0].metadata)


def test_an_agent_written_svg_file_is_shown_as_an_image_only(tmp_path: Any) -> None:
    # %ws cat / the file browser handed the file's SVG to the front-end as image/svg+xml, which
    # classic Notebook front-ends insert inline (its onload handler runs with the page).
    from ws_jupyter import LocalFilesystem
    from ws_jupyter.jupyter.files import load_file_view

    (tmp_path / "plot.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'><rect/></svg>")
    bundle = load_file_view(LocalFilesystem(tmp_path), "plot.svg")._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert '<img src="data:image/svg+xml;base64,' in bundle["text/html"] and "onload" not in bundle["text/html"]
