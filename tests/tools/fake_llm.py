"""A stand-in for the OpenAI and Anthropic HTTP APIs on 127.0.0.1, for running the documentation's snippets
offline through the real SDKs (openai, anthropic, and the frameworks built on them).

It plays one scripted conversation: until a request carries the result of reading ``notes.md``
(its numbered line ``1→hello``) it asks for ``workspace_read_file {"path": "notes.md"}``; then it
answers ``The notes say hello.`` (through smolagents' ``final_answer`` tool when one is offered).
Endpoints: ``/v1/chat/completions``, ``/v1/responses``, ``/v1/messages`` (non-streaming). Every
request body is kept in ``requests``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "The notes say hello."
CALL = ("workspace_read_file", {"path": "notes.md"})


class FakeLLM:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                outer.requests.append((self.path, body))
                reply = outer.reply(self.path, body)
                data = json.dumps(reply).encode()
                self.send_response(200 if reply is not None else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @staticmethod
    def answered(body: dict[str, Any]) -> bool:
        return "1→hello" in json.dumps(body, ensure_ascii=False)

    def reply(self, path: str, body: dict[str, Any]) -> Any:
        done = self.answered(body)
        model = body.get("model", "fake")
        if path.endswith("/chat/completions"):
            names = [t.get("function", {}).get("name") for t in body.get("tools") or ()]
            if done and "final_answer" in names:
                call: tuple[str, dict[str, Any]] | None = ("final_answer", {"answer": ANSWER})
            else:
                call = None if done else CALL
            message: dict[str, Any] = {"role": "assistant", "content": ANSWER if call is None else None}
            if call is not None:
                message["tool_calls"] = [
                    {"id": "call_1", "type": "function", "function": {"name": call[0], "arguments": json.dumps(call[1])}}
                ]
            return {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {"index": 0, "message": message, "finish_reason": "stop" if call is None else "tool_calls"}
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        if path.endswith("/responses"):
            if done:
                item: dict[str, Any] = {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
                }
            else:
                item = {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": CALL[0],
                    "arguments": json.dumps(CALL[1]),
                    "status": "completed",
                }
            return {
                "id": "resp_1",
                "object": "response",
                "created_at": 0,
                "model": model,
                "status": "completed",
                "output": [item],
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "usage": {
                    "input_tokens": 1,
                    "output_tokens": 1,
                    "total_tokens": 2,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens_details": {"reasoning_tokens": 0},
                },
            }
        if path.endswith("/messages"):
            if done:
                content: list[dict[str, Any]] = [{"type": "text", "text": ANSWER}]
            else:
                content = [{"type": "tool_use", "id": "toolu_1", "name": CALL[0], "input": CALL[1]}]
            return {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": "end_turn" if done else "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        return None
