"""Outgoing HTTP requests within one wall-clock deadline for the whole request.

A socket timeout bounds each read, not the request: a peer answering one byte every 3 s never
trips a 5 s timeout and holds the worker as long as it drips. Here a request gets one budget
(``total`` seconds from its start) for the connection, the TLS handshake, sending the request,
the answer's status line and headers and the part of its body the caller reads: before each
blocking step the socket's timeout is set to what is left of the budget, and once nothing is
left the request fails. No step can outlast what is left, so the request ends within ``total``
(and a scheduling delay), whatever the peer does.

The caller also learns how far the request got, which decides whether it may be sent again:

- ``NotSent``: no byte of the request was written (refused, unreachable, the handshake failed
  or timed out). The peer has nothing to act on: trying again sends it once.
- ``NoAnswer``: the request (or part of it) was written and no complete answer came within the
  budget, or the connection broke. The peer may have acted on it: its outcome is unknown.

The host name is resolved by the caller (``Target.address``), so a caller that checked the
address (the webhooks' SSRF filter) connects to the address it checked.
"""

from __future__ import annotations

import http.client
import io
import socket
import ssl
import time
from dataclasses import dataclass
from email.message import Message


@dataclass(frozen=True)
class Target:
    """Where a request goes: the address to connect to, and the host name it is for."""

    scheme: str  # http or https
    host: str  # as the URL names it: the Host header and TLS's server name
    address: str  # the (checked) address the request connects to
    port: int
    path: str  # with its query


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Message
    body: bytes  # at most the caller's ``max_body`` bytes of it
    seconds: float  # from the start of the request to the end of what was read


class RequestFailed(Exception):
    """The request ended without a complete answer; ``reason`` in words, without its content."""

    def __init__(self, reason: str, *, seconds: float, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.seconds = seconds
        self.timed_out = timed_out  # the budget ran out (rather than the connection failing)


class NotSent(RequestFailed):
    """No byte of the request was written: the peer cannot have acted on it."""


class NoAnswer(RequestFailed):
    """The request was (at least partly) written and no complete answer came back in time."""


class _Budget:
    def __init__(self, total: float) -> None:
        self.total = total
        self.started = time.monotonic()
        self.deadline = self.started + total

    def left(self) -> float:
        """The seconds left, for the next blocking step; past the deadline, TimeoutError."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the whole request took longer than {self.total:g} s")
        return left

    def spent(self) -> float:
        return time.monotonic() - self.started


class _BudgetedSocket:
    """The connected socket as ``http.client`` uses it (``sendall``, ``makefile``, ``close``), each
    send and read given only what is left of the budget; counts the request's bytes written."""

    def __init__(self, sock: socket.socket, budget: _Budget) -> None:
        self._sock = sock
        self._budget = budget
        self.written = 0
        # Like a socket's makefile(): closing the connection leaves the socket open to an answer
        # still being read (http.client hands an HTTP/1.0 answer its socket that way).
        self._readers = 0
        self._closing = False

    def sendall(self, data: bytes) -> None:
        view = memoryview(data).cast("B")
        while view:
            self._sock.settimeout(self._budget.left())
            sent = self._sock.send(view)
            self.written += sent
            view = view[sent:]

    def recv_into(self, buffer: memoryview) -> int:
        self._sock.settimeout(self._budget.left())
        return self._sock.recv_into(buffer)

    def makefile(self, mode: str = "rb", *args: object, **kwargs: object) -> io.BufferedReader:
        self._readers += 1
        return io.BufferedReader(_Reader(self))

    def reader_closed(self) -> None:
        self._readers -= 1
        if self._closing and self._readers <= 0:
            self._sock.close()

    def close(self) -> None:
        self._closing = True
        if self._readers <= 0:
            self._sock.close()


class _Reader(io.RawIOBase):
    def __init__(self, sock: _BudgetedSocket) -> None:
        self._sock = sock

    def readable(self) -> bool:
        return True

    # RawIOBase takes any writable buffer; the buffered reader above it only ever passes a memoryview.
    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]  # see above
        return self._sock.recv_into(buffer)

    def close(self) -> None:
        if not self.closed:
            self._sock.reader_closed()
        super().close()


class _Connection(http.client.HTTPConnection):
    """One request's connection to ``target.address``; TLS verified for ``target.host``."""

    def __init__(self, target: Target, budget: _Budget, context: ssl.SSLContext | None) -> None:
        super().__init__(target.host, target.port)
        self._target = target
        self._budget = budget
        self._context = context
        self.wrapped: _BudgetedSocket | None = None

    def connect(self) -> None:
        sock = socket.create_connection((self._target.address, self._target.port), self._budget.left())
        if self._context is not None:
            # One call, bounded as a whole by the timeout (CPython keeps one deadline across its waits).
            sock.settimeout(self._budget.left())
            sock = self._context.wrap_socket(sock, server_hostname=self._target.host)
        self.wrapped = _BudgetedSocket(sock, self._budget)
        self.sock = self.wrapped

    @property
    def written(self) -> int:
        return 0 if self.wrapped is None else self.wrapped.written


def host_header(target: Target) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    default = 443 if target.scheme == "https" else 80
    return host if target.port == default else f"{host}:{target.port}"


def post(target: Target, body: bytes, headers: dict[str, str], *, total: float, max_body: int = 0,
         context: ssl.SSLContext | None = None) -> Answer:
    """POST ``body`` to ``target`` and read the answer's status, headers and at most ``max_body``
    bytes of its body, all within ``total`` seconds. Raises ``NotSent`` or ``NoAnswer``.
    HTTPS uses ``context`` (the system's trust store by default). Redirects are not followed."""
    if target.scheme == "https" and context is None:
        context = ssl.create_default_context()
    budget = _Budget(total)
    conn = _Connection(target, budget, context if target.scheme == "https" else None)
    answer: http.client.HTTPResponse | None = None
    try:
        try:
            conn.request("POST", target.path, body=body, headers={**headers, "Host": host_header(target)})
            answer = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            failed = NotSent if conn.written == 0 else NoAnswer
            raise failed(why(exc, budget), seconds=budget.spent(), timed_out=isinstance(exc, TimeoutError)) from None
        try:
            data = answer.read(max_body) if max_body > 0 else b""
        except (OSError, http.client.HTTPException) as exc:
            raise NoAnswer(f"answered {answer.status}, then its body: {why(exc, budget)}",
                           seconds=budget.spent(), timed_out=isinstance(exc, TimeoutError)) from None
        return Answer(answer.status, answer.headers, data, budget.spent())
    finally:
        if answer is not None:
            answer.close()
        conn.close()


def why(exc: BaseException, budget: _Budget) -> str:
    """The failure in words, never the peer's text. Every wait is given only what is left of the
    budget, so any timeout means the budget ran out."""
    if isinstance(exc, TimeoutError):
        return f"the whole request took longer than {budget.total:g} s"
    return type(exc).__name__
