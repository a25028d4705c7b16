"""A webhook receiver for tests: a real HTTP server on 127.0.0.1, in a thread."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    """An HTTP server on 127.0.0.1 answering each POST by the next of ``script``'s answers:
    a status, "hang" (no answer until released: the sender's timeout), or "block" (the same,
    for a worker to be killed meanwhile). Past the script: 200, after ``delay`` seconds."""

    def __init__(self, *script: int | str, delay: float = 0.0) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        self.got = threading.Event()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append({"headers": dict(self.headers), "body": body, "path": self.path})
                answer = receiver.script.pop(0) if receiver.script else 200
                receiver.got.set()
                if delay:  # a slow receiver: a worker killed meanwhile is killed mid-request
                    receiver.release.wait(delay)
                if answer in ("hang", "block"):
                    receiver.release.wait(60)
                    return
                self.send_response(int(answer))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/docket"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
