"""Output kept by the kernels' activity feed, measured as the notebook process's memory.

The feed (``sandbox.kernels.activity``) lives as long as the notebook and used to keep every
output event at full size — up to 2,000 per execution, 50 executions: a notebook grew from 56 to
2,090 MiB over two chatty executions and stayed there. Replayed in a child process (its RSS is the
notebook's), with kernels under bubblewrap.
"""

from __future__ import annotations

from ws_jupyter.sandbox.kernels.activity import MAX_FEED_BYTES, MAX_RECORD_BYTES

from .conftest import replay, requires_bwrap

CHATTY = """
import gc, os, psutil
from ws_jupyter import LocalSandbox
sb = LocalSandbox(working_directory={wd!r}, isolation="bwrap")
me = psutil.Process()
try:
    sb.kernels.execute("print('warm')")
    gc.collect()
    before = me.memory_info().rss
    code = "line = 'x' * (1 << 20)\\nfor _ in range(200):\\n    print(line, flush=True)\\nprint('end')"
    for _ in range(2):  # 2 x 200 MiB of output
        r = sb.kernels.execute(code, timeout=180, origin="agent")
        assert r.ok and r.stdout.endswith("end\\n") and r.stdout_dropped > 190 << 20, r
    del r
    gc.collect()
    grown = (me.memory_info().rss - before) >> 20
    feed = sb.kernels.activity
    record = feed.recent(1)[0]
    outputs = record.outputs
    emit([grown, getattr(feed, "kept_bytes", None), sum(len(e.text) for e in outputs),
          outputs[0].text[:4], outputs[-1].text[-4:], record.result.stdout[-4:]])
finally:
    sb.destroy()
"""


@requires_bwrap
def test_the_activity_feed_keeps_a_bounded_number_of_bytes(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    # the kernel inherits the replay's address-space limit: room for its own queue of 1 MiB messages
    r = replay(CHATTY.format(wd=str(wd)), timeout=300, memory_bytes=8 << 30)
    assert r.finished and r.returncode == 0, r.stderr
    grown_mib, kept, record_text, first, last, result_end = r.results[0]
    # 400 MiB went through the feed; before the bound it kept all of it
    assert grown_mib < 120, f"the notebook process kept {grown_mib} MiB after two executions"
    assert kept <= MAX_FEED_BYTES and record_text <= MAX_RECORD_BYTES
    # what it kept of the execution still shows its start and its end
    assert first == "xxxx" and last == "end\n" and result_end == "end\n"
