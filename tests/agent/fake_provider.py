"""A small OpenAI-compatible chat-completions server on 127.0.0.1, in a thread.

Modes: ``follow`` answers with the next tool of the sequence (or finish), ``busy`` answers
429 with a Retry-After, ``hang`` holds the request until released, ``error`` answers 500,
``script`` answers with the queued function calls. Every request is kept for inspection;
every answer carries an ``x-request-id`` (``req-1``, ``req-2``…, the request's number).

A structured-output request (one with a ``response_format``: the model's reading of the
fields) is answered in ``follow`` mode with ``fields`` as the message's content: a dict is sent
as its JSON, a string as it is (to answer malformed JSON). ``error`` answers ``error_status``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SEQUENCE = ("extract", "validate", "draft")


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call-1", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }]},
        }],
    }


def content_answer(content: str) -> dict[str, Any]:
    """A chat completion whose message is ``content`` (a structured-output answer)."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content, "refusal": None}}],
    }


class FakeProvider:
    def __init__(self) -> None:
        self.mode = "follow"
        self.retry_after = "30"
        self.script: list[dict[str, Any]] = []
        self.fields: dict[str, Any] | str = {}
        self.error_status = 500
        self.requests: list[dict[str, Any]] = []
        self.received = threading.Event()
        self.release = threading.Event()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                provider.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                provider.received.set()
                if provider.mode == "hang":
                    provider.release.wait(60)
                    return
                if provider.mode == "busy":
                    self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": provider.retry_after})
                elif provider.mode == "error":
                    self._send(provider.error_status, {"error": {"message": "boom"}})
                elif provider.mode == "script":
                    self._send(200, provider.script.pop(0))
                elif "response_format" in body:
                    fields = provider.fields
                    self._send(200, content_answer(fields if isinstance(fields, str) else json.dumps(fields)))
                else:
                    view = json.loads(body["messages"][-1]["content"])
                    step = view["step_index"]
                    name = SEQUENCE[step] if step < len(SEQUENCE) else "finish"
                    self._send(200, tool_call(name, {"job_id": view["job_id"]} if name != "finish" else {}))

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("x-request-id", f"req-{len(provider.requests)}")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
