"""The live link's figures, in real JupyterLab + headless Chromium with a real ws-jupyter kernel.

    .venv/bin/python bench/live_speed.py [--proposals 60] [--reads 40] [--docs-images]

1. **proposal -> diff visible** (p50/p95): the agent's ``propose`` call in the kernel (its clock)
   to the frame in which the page has drawn the diff (the page's clock; same machine, same clock).
   The agent calls from a kernel subshell while the main shell runs a cell, as an agent loop would.
2. **accept -> model updated**: the Accept handler to the model holding the edit (the page), and
   Accept to the agent's waiting call returning "applied" (the event's trip back to the kernel).
3. **the channel's cost per tool call while a cell is running**: an agent loop *in a cell* calls
   ``open_notebook_read`` on the open notebook, and ``workspace_read_file`` on the same notebook
   saved to disk (the same rendering, no channel); the difference of the medians is the channel.
   A one-cell read gives the bare round trip.
4. **the size of the shipped extension**: the files the wheel ships (without source maps), and
   gzipped.

``--docs-images`` also writes the README's screenshots (docs/images/live-*.png). The machine is
shared: the figures are medians of many calls, and the ratio in 3 is the figure to compare.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.jupyter.lab import JupyterLab, LabPage, launch_chromium  # noqa: E402
from tests.jupyter.live_support import (  # noqa: E402
    AGENT_SETUP,
    PANEL_JS,
    KernelAgent,
    cell_output_text,
    labextension_problem,
    labextension_share,
    wait_for,
    write_notebook,
)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def extension_size() -> dict[str, int]:
    dist = REPO / "labextension" / "dist"
    files = [p for p in dist.rglob("*") if p.is_file() and not p.name.endswith(".map")]
    raw = sum(p.stat().st_size for p in files)
    js = [p for p in files if p.suffix == ".js"]
    return {
        "files": len(files),
        "bytes": raw,
        "js_bytes": sum(p.stat().st_size for p in js),
        "js_gzip_bytes": sum(len(gzip.compress(p.read_bytes(), 9)) for p in js),
    }


def run_cell(page: Any, path: str, cell_id: str) -> None:
    page.evaluate(
        f"""([path, id]) => {{
            const panel = ({PANEL_JS})(path);
            panel.content.activeCellIndex = panel.content.widgets.findIndex(w => w.model.id === id);
            void window.jupyterapp.commands.execute('notebook:run-cell');
        }}""",
        [path, cell_id],
    )


def output(page: Any, path: str, cell_id: str) -> str:
    return cell_output_text(page, path, cell_id)


def cell_locator(page: Any, path: str, cell_id: str) -> Any:
    page.evaluate(f"(path) => ({PANEL_JS})(path).content.widgets.forEach(w => {{ w.node.dataset.wsTestId = w.model.id; }})", path)
    return page.locator(f".jp-Cell[data-ws-test-id='{cell_id}']")


def timing_of(page: Any, proposal_id: str, field: str) -> dict[str, Any] | None:
    """The page's timings of one proposal once ``field`` is set."""
    timings = page.evaluate("() => window.wsJupyterLive.channel('bench.ipynb').proposals.timings")
    return next((t for t in timings if t["id"] == proposal_id and t[field]), None)


READ_LOOP = r"""import json, statistics, time
tools = {t.name: t for t in ws.tools()}
live_read, file_read = tools["open_notebook_read"], tools["workspace_read_file"]
from ws_jupyter.live import live_notebook
link = live_notebook(ws)
first = link.read(limit=1).cells[0].id
def timed(call, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter(); call(); out.append(time.perf_counter() - t0)
    return out
live = timed(lambda: live_read.run({}), N)
disk = timed(lambda: file_read.run({"path": "bench.ipynb"}), N)
bare = timed(lambda: link.read(cell_ids=[first]), N)
print("READS " + json.dumps({"live": live, "disk": disk, "bare": bare}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--proposals", type=int, default=60)
    parser.add_argument("--reads", type=int, default=40)
    parser.add_argument("--docs-images", action="store_true", help="write docs/images/live-*.png")
    args = parser.parse_args()
    problem = labextension_problem()
    if problem:
        sys.exit(problem)
    from ws_jupyter.install.kernel import install_kernel

    work = Path(tempfile.mkdtemp(prefix="ws-live-bench-"))
    root, state = work / "root", work / "state"
    root.mkdir()
    state.mkdir()
    install_kernel(prefix=str(work / "prefix"))
    share = labextension_share(state)
    cells = [("code", "%ws init . --name bench --no-vector --no-index", "c-init")]
    cells += [("code", f"# cell {i}\nvalue_{i} = {i} * 2\nprint(value_{i})", f"c-{i}") for i in range(20)]
    cells.append(("code", "import os, time\nwhile not os.path.exists('stop-bench'):\n    time.sleep(0.02)", "c-busy"))
    cells.append(("code", READ_LOOP.replace("N)", f"{args.reads})"), "c-reads"))
    write_notebook(root / "bench.ipynb", cells)
    results: dict[str, Any] = {"extension": extension_size()}
    jupyter_path = f"{share}{os.pathsep}{work / 'prefix' / 'share' / 'jupyter'}"
    with JupyterLab(root, state, jupyter_path=jupyter_path) as lab, launch_chromium() as browser:
        page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        page.set_default_timeout(60_000)
        lp = LabPage(page, lab, REPO / "test-artifacts" / "live-bench")
        lp.open_notebook("bench.ipynb")
        page.wait_for_selector(".ws-live-mode")
        run_cell(page, "bench.ipynb", "c-init")
        wait_for(lambda: "Workspace bench" in output(page, "bench.ipynb", "c-init"), 120, what="%ws init")
        lp.save()

        # 3. an agent loop in a cell: tool calls through the channel vs the same rendering from disk
        run_cell(page, "bench.ipynb", "c-reads")
        reads = wait_for(lambda: "READS " in (o := output(page, "bench.ipynb", "c-reads")) and o, 600, what="reads")
        timing = json.loads(reads.split("READS ", 1)[1].splitlines()[0])
        live_ms, disk_ms, bare_ms = (statistics.median(timing[k]) * 1000 for k in ("live", "disk", "bare"))
        results["tool_call_while_cell_runs"] = {
            "open_notebook_read_ms_p50": round(live_ms, 1),
            "workspace_read_file_same_notebook_ms_p50": round(disk_ms, 1),
            "channel_added_ms_p50": round(live_ms - disk_ms, 1),
            "one_cell_round_trip_ms_p50": round(bare_ms, 1),
            "one_cell_round_trip_ms_p95": round(pct(timing["bare"], 0.95) * 1000, 1),
            "calls": args.reads,
        }

        # 1 and 2: proposals from a subshell while the main shell runs a cell
        run_cell(page, "bench.ipynb", "c-busy")
        agent = KernelAgent(lab, "bench.ipynb")
        agent.run(AGENT_SETUP)
        shown: list[float] = []
        accept_model: list[float] = []
        accept_agent: list[float] = []
        try:
            for n in range(args.proposals):
                cid = f"c-{n % 20}"
                sent = agent.json(
                    "import time\n"
                    f"_v = _LINK.read(cell_ids=[{cid!r}]).cells[0]\n"
                    "_t0 = time.time()\n"
                    f"_o = _LINK.propose(_Proposal.from_args([{{'op': 'replace', 'cell_id': {cid!r}, 'version': _v.version,"
                    f" 'source': _v.source + '\\n# reviewed {n}'}}]), wait=0)\n"
                    "print(_json.dumps({'t0': _t0, 'id': _o.proposal_id}))"
                )
                timings = wait_for(lambda pid=sent["id"]: timing_of(page, pid, "visible"), 30, interval=0.01,
                                   what="the diff")
                shown.append(timings["visible"] - sent["t0"] * 1000)
                if n % 2 == 0:  # accept every other one with a real click; the agent waits for it
                    waited = agent.run(
                        "import threading, time\n"
                        f"_done = {{}}\n"
                        f"def _wait():\n    _LINK.proposal({sent['id']!r}, wait=30); _done['t'] = time.time()\n"
                        "_th = threading.Thread(target=_wait); _th.start()\nprint('waiting')"
                    )
                    assert "waiting" in waited
                    button = cell_locator(page, "bench.ipynb", cid).locator("section.ws-live-edit").get_by_role(
                        "button", name="Accept")
                    button.click()
                    t = wait_for(lambda pid=sent["id"]: timing_of(page, pid, "applied"), 30, interval=0.01,
                                 what="the accept")
                    accept_model.append(t["applied"] - t["decided"])
                    back = agent.json("_th.join(30)\nprint(_json.dumps(_done))")
                    accept_agent.append(back["t"] * 1000 - t["decided"])
                else:
                    page.evaluate(f"() => window.wsJupyterLive.channel('bench.ipynb').proposals.decide({sent['id']!r}, null, false)")
            results["proposal_to_diff_visible_ms"] = {
                "p50": round(statistics.median(shown), 1), "p95": round(pct(shown, 0.95), 1),
                "max": round(max(shown), 1), "proposals": len(shown),
            }
            results["accept"] = {
                "handler_to_model_updated_ms_p50": round(statistics.median(accept_model), 2),
                "accept_to_agent_told_applied_ms_p50": round(statistics.median(accept_agent), 1),
                "accept_to_agent_told_applied_ms_p95": round(pct(accept_agent, 0.95), 1),
                "accepts": len(accept_model),
            }
            if args.docs_images:
                take_docs_images(lab, browser)
        finally:
            (root / "stop-bench").write_text("")
            agent.close()
    print(json.dumps(results, indent=2))
    out = REPO / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "live_speed.json").write_text(json.dumps(results, indent=2))
    shutil.rmtree(work, ignore_errors=True)


def take_docs_images(lab: JupyterLab, browser: Any) -> None:
    """The README's pictures, from the demo notebook: a proposal's diff, then the sandbox run."""
    images = REPO / "docs" / "images"
    shutil.copy(REPO / "notebooks" / "live_notebook.ipynb", lab.root_dir / "live_notebook.ipynb")
    page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
    lp = LabPage(page, lab, images)
    lp.open_notebook("live_notebook.ipynb")
    page.wait_for_selector(".ws-live-mode")
    for cid in ("init", "average", "status", "policy", "agent"):
        run_cell(page, "live_notebook.ipynb", cid)
    section = cell_locator(page, "live_notebook.ipynb", "average").locator("section.ws-live-edit")
    section.wait_for(timeout=120_000)
    lp.screenshot("live-proposal", cell_locator(page, "live_notebook.ipynb", "average"))
    section.get_by_role("button", name="Accept").click()
    cell_locator(page, "live_notebook.ipynb", "average").locator(".ws-live-sandbox-mark").wait_for(timeout=120_000)
    lp.screenshot("live-sandbox-run", cell_locator(page, "live_notebook.ipynb", "average"))
    page.context.close()


if __name__ == "__main__":
    main()
