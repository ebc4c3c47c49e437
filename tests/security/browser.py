"""Headless Chromium and a 127.0.0.1 server that records every request: the rendering replays.

The server stands for an attacker's: a sandbox without network access can still send what it
read out if the user's browser fetches a URL the sandbox wrote (an image, a style sheet). A
replay renders what the user would see, waits, and asserts that the server saw nothing; a
control renders the same markup without the protection and asserts that the server did see it
(so the replay can fail). Chromium is Debian's /usr/bin/chromium, driven by Playwright with the
browser tests' flags (tests/jupyter/lab.py).
"""

from __future__ import annotations

import http.server
import socketserver
import threading
import time
from typing import Any

from ..jupyter.lab import browser_unavailable
from ..jupyter.lab import launch_chromium as chromium

__all__ = ["RecordingServer", "browser_unavailable", "chromium", "render"]

#: What a replay waits after the page loaded for late fetches (lazy images, CSS, redirects).
SETTLE = 1.5


class RecordingServer:
    """An HTTP server on 127.0.0.1 that answers everything with 200 and records each request
    path and each accepted connection. Use as a context manager."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.connections = 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_POST = do_HEAD = do_GET

            def log_message(self, *args: Any) -> None:
                pass

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

            def verify_request(self, request: Any, client_address: Any) -> bool:
                server.connections += 1
                return True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def clear(self) -> None:
        self.requests.clear()
        self.connections = 0

    def __enter__(self) -> RecordingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def render(browser: Any, html: str, *, settle: float = SETTLE, url: str | None = None) -> Any:
    """Opens a page showing ``html`` (or ``url``), waits ``settle`` seconds, returns the page.

    Requests to hosts other than 127.0.0.1 (an export's CDN scripts) are aborted: there is no
    network here, and they are not what the replay is about.
    """
    page = browser.new_page()

    def route(r: Any) -> None:
        target = r.request.url
        if target.startswith(("http://127.0.0.1", "file:", "data:", "about:")):
            r.continue_()
        else:
            r.abort()

    page.route("**/*", route)
    if url is not None:
        page.goto(url, wait_until="load")
    else:
        page.set_content(html, wait_until="load")
    time.sleep(settle)
    return page
