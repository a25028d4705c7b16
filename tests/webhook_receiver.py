"""A webhook receiver for tests: a real HTTP server in a thread, on 127.0.0.1 or a given address."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    """An HTTP server on ``host`` answering each POST by the next of ``script``'s answers:
    a status, "hang" (no answer until released: the sender's timeout), "block" (the same,
    for a worker to be killed or cut off meanwhile), "drip" (a 200 answer, its status line and
    headers sent one byte every ``drip_every`` seconds) or "drip-body" (200 and its headers at
    once, then a body of a megabyte one byte every ``drip_every`` seconds). Past the script: 200,
    after ``delay`` seconds. Each request is kept with the address it came from, whether it was
    answered, and when the sender hung up on a drip (``hung_up``, ``time.monotonic()``)."""

    def __init__(self, *script: int | str, delay: float = 0.0, host: str = "127.0.0.1",
                 drip_every: float = 3.0) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        self.got = threading.Event()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = {"headers": dict(self.headers), "body": body, "path": self.path,
                           "peer": self.client_address[0], "answered": False}
                receiver.requests.append(request)
                answer = receiver.script.pop(0) if receiver.script else 200
                receiver.got.set()
                if delay:  # a slow receiver: a worker killed meanwhile is killed mid-request
                    receiver.release.wait(delay)
                if answer in ("hang", "block"):
                    receiver.release.wait(60)
                    return
                if answer in ("drip", "drip-body"):
                    self.drip(request, answer)
                    return
                self.send_response(int(answer))
                self.send_header("Content-Length", "0")
                self.end_headers()
                request["answered"] = True

            def drip(self, request: dict, how: str) -> None:
                head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\nContent-Type: text/plain\r\n\r\n"
                request["received_at"] = time.monotonic()
                try:
                    if how == "drip-body":
                        self.wfile.write(head)
                        self.wfile.flush()
                    for byte in (head if how == "drip" else b"") + b"." * 1000000:
                        if receiver.release.wait(drip_every):
                            return
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                except OSError:  # the sender hung up
                    request["hung_up"] = time.monotonic()
                finally:
                    self.close_connection = True

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/hooks/docket"

    def in_flight(self) -> list[dict]:
        """The requests received and not answered yet."""
        return [r for r in self.requests if not r["answered"]]

    def received(self) -> Counter[str]:
        """How many times each event id (the delivery's, the same on every attempt) arrived."""
        return Counter(json.loads(r["body"])["id"] for r in self.requests)

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def signature_ok(request: dict, secret: str) -> bool:
    """Whether the request's ``X-Docket-Signature`` is ``sha256=`` HMAC-SHA256(secret,
    f"{X-Docket-Timestamp}.{body}"), checked here as a receiver would, apart from the sender's code."""
    headers = request["headers"]
    signed = headers["X-Docket-Timestamp"].encode() + b"." + request["body"]
    expected = "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, headers.get("X-Docket-Signature", ""))


PUBLIC_HOST, PUBLIC_ADDRESS = "hooks.example", "93.184.216.34"


def resolve_publicly(settings, monkeypatch) -> None:
    """``hooks.example`` resolves to a public address, everything else as the system resolves
    it, and private addresses are refused as in production: an endpoint's address checks run
    without a network."""
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host == PUBLIC_HOST:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (PUBLIC_ADDRESS, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": False}
