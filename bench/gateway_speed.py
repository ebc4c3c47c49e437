"""Remote kernels benchmark: GatewayKernelManager vs a bare websocket client on the same gateway kernel.

    .venv/bin/python bench/gateway_speed.py [--runs 7] [--calls 30]

A Jupyter Kernel Gateway on 127.0.0.1 (started and stopped here). One kernel; ours is
``manager.execute("1")`` (execute_request over the kernel websocket, reply and "idle" matched,
output collected, ExecutionResult built); the baseline is the leanest websocket client the
protocol allows on the same kernel (send the request built by jupyter_client's Session, read
frames until the reply and "idle" for it; nothing kept). ``--calls`` calls per run, ours and the
baseline interleaved run by run; the ratio of the medians counts (target <= 1.3x; the machine is
shared, absolute times are context). Kernel start (REST start + first kernel_info answer) is
reported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import websocket
from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session

from tests.servers import KernelGateway
from ws_jupyter.sandbox.kernels.gateway import GatewayKernelManager


class BareClient:
    """The baseline: one websocket, JSON frames, nothing but the wait for reply and idle."""

    def __init__(self, gw: KernelGateway, kernel_id: str) -> None:
        self.session = Session(key=b"")
        url = (
            gw.url.replace("http", "ws")
            + f"/api/kernels/{kernel_id}/channels?session_id={self.session.session}"
        )
        self.ws = websocket.create_connection(url, header=[f"Authorization: token {gw.token}"], timeout=30)

    def execute(self, code: str) -> None:
        msg = self.session.msg(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
            },
        )
        msg["channel"] = "shell"
        msg_id = msg["header"]["msg_id"]
        self.ws.send(json.dumps(msg, default=json_default))
        reply = idle = False
        while not (reply and idle):
            m = json.loads(self.ws.recv())
            if m.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if m["channel"] == "shell":
                reply = True
            elif m["msg_type"] == "status" and m["content"].get("execution_state") == "idle":
                idle = True

    def close(self) -> None:
        self.ws.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()
    gw = KernelGateway()
    try:
        manager = GatewayKernelManager(gw.url, token=gw.token)
        t0 = time.perf_counter()
        kernel = manager.start()
        start_s = time.perf_counter() - t0
        assert kernel.kernel_id is not None
        bare = BareClient(gw, kernel.kernel_id)
        for _ in range(5):  # warm both paths
            manager.execute("1")
            bare.execute("1")
        ours_t: list[float] = []
        base_t: list[float] = []

        def ours() -> None:
            result = manager.execute("1")
            assert result.ok and result.text == "1", result

        for r in range(args.runs):
            pairs = [(ours_t, ours), (base_t, lambda: bare.execute("1"))]
            for bucket, fn in pairs if r % 2 == 0 else reversed(pairs):
                t = time.perf_counter()
                for _ in range(args.calls):
                    fn()
                bucket.append((time.perf_counter() - t) / args.calls)
        mo, mb = statistics.median(ours_t), statistics.median(base_t)
        ratio = mo / mb
        print(f"kernel start (REST + first kernel_info)   {start_s * 1000:8.1f} ms")
        print(f"execute round trip  ours {mo * 1000:7.2f} ms   bare websocket client {mb * 1000:7.2f} ms")
        print()
        verdict = "ok" if ratio <= 1.3 else "MISSED"
        print(f"gateway execute round trip: {ratio:.2f}x a bare websocket client (target <= 1.3x) {verdict}")
        bare.close()
        manager.close()
    finally:
        gw.stop()


if __name__ == "__main__":
    main()
