"""Output summaries: bounded, ANSI-free, images decoded, rich types named — and malformed outputs
never raise."""

from __future__ import annotations

import base64

import pytest

from ws_jupyter.notebooks.document import Notebook
from ws_jupyter.notebooks.outputs import output_text, shorten, summarize_output
from ws_jupyter.notebooks.render import render_notebook
from ws_jupyter.notebooks.text import cell_texts, notebook_texts

from .samples import analysis_notebook, kitchen_sink, png_bytes, write


def test_stream_is_shortened_to_head_and_tail():
    s = summarize_output({"output_type": "stream", "name": "stdout", "text": [f"l{i}\n" for i in range(100)]})
    assert s.total_lines == 100 and s.omitted_lines == 88
    assert s.text.split("\n") == [*(f"l{i}" for i in range(8)), "… (88 more lines)", *(f"l{i}" for i in range(96, 100))]


def test_ansi_and_carriage_returns_are_resolved_and_long_lines_cut():
    text, total, omitted = shorten("\x1b[31mred\x1b[0m\r\nx" + "y" * 1000 + "\n10%\r90%\r100%", 12)
    assert text.split("\n")[0] == "red" and text.split("\n")[2] == "100%"
    assert len(text.split("\n")[1]) == 300 and text.split("\n")[1].endswith("…")
    assert (total, omitted) == (3, 0)


def test_error_headline_and_traceback_tail_without_banner_or_ansi():
    nb = analysis_notebook()
    s = summarize_output(nb.cells[3].outputs[0])
    assert s.headline == "ZeroDivisionError: division by zero"
    assert s.traceback == ("Cell In[4], line 2", "      1 rate = total", "----> 2 share = total / count")
    full = output_text(nb.cells[3].outputs[0])
    assert "Traceback (most recent call last)" in full and "\x1b[" not in full


def test_images_are_decoded_with_their_size_and_rich_types_named():
    png = png_bytes(30, 20)
    s = summarize_output({"output_type": "display_data", "metadata": {}, "data": {
        "image/png": base64.b64encode(png).decode() + "\n", "text/html": "<b>x</b>",
        "application/vnd.custom+json": {"a": 1}, "text/plain": "<Figure>"}})
    assert [(i.mime_type, i.width, i.height, i.data) for i in s.images] == [("image/png", 30, 20, png)]
    assert s.others == (("text/html", 8), ("application/vnd.custom+json", 8))
    assert s.text == "<Figure>"


@pytest.mark.parametrize("output", [
    None, 3, "text", {}, {"output_type": "stream"}, {"output_type": "stream", "text": 5},
    {"output_type": "error", "traceback": "not a list"}, {"output_type": "display_data", "data": []},
    {"output_type": "execute_result", "data": {"image/png": "!!!not base64!!!", "text/plain": ["a", 1]}},
    {"output_type": "mystery"},
])
def test_malformed_outputs_never_raise(output):
    s = summarize_output(output)
    assert isinstance(s.text, str) and isinstance(output_text(output), str)


def test_render_of_every_cell_of_the_kitchen_sink_is_bounded():
    nb = Notebook.parse(write(kitchen_sink()))
    r = render_notebook(nb, attach=("image/png",))
    assert r.complete and r.first == 0 and r.last == 9 and len(r.images) == 1
    headers = [line for line in r.text.split("\n") if line.startswith("[")]
    assert [h.split()[1] for h in headers] == ["markdown", "raw", *["code"] * 8]
    assert len(r.text) < 4000  # 200 lines of training log, HTML and base64 are not in it


def test_cell_texts_for_search_and_grep():
    nb = Notebook.parse(write(analysis_notebook()))
    sources = cell_texts(nb)
    assert [(c.index, c.part, c.label) for c in sources] == [
        (0, "source", "[cell 0]"), (1, "source", "[cell 1]"), (2, "source", "[cell 2]"),
        (3, "source", "[cell 3]"), (4, "source", "[cell 4]")]
    assert sources[3].metadata() == {"cell": 3, "cell_type": "code", "part": "source", "cell_id": "c3-d"}
    with_outputs = cell_texts(nb, outputs=True)
    outs = [c for c in with_outputs if c.part == "outputs"]
    assert [c.index for c in outs] == [1, 2, 3] and outs[0].label == "[cell 1 output]"
    assert "<table" not in outs[0].text and outs[1].text == "Text(0, 0.5, 'people')\n<Figure size 640x480 with 1 Axes>"
    assert notebook_texts("not json") is None
