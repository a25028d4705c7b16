"""Run one function in a child process forked for it, under a CPU, memory and wall-clock bound.

The web process checks each uploaded document's structure before accepting it. Cheap
pre-checks refuse what is known to be expensive before the cost is paid; this bound is for
whatever they miss, so that no upload can hold a web worker for longer than ``wall``
seconds whatever its bytes make the reader do. The child is forked from the web process as
it is (code, settings and imports already loaded, so a fork costs milliseconds, not an
interpreter's start), gets its limits, runs the function, sends back what it returned or
raised over a pipe and exits with ``os._exit``: no ``atexit`` handler, no database
connection closed or used (an inherited one belongs to the parent and is never touched).

- CPU: ``RLIMIT_CPU`` (whole seconds: a fork starts at zero); past it the kernel sends
  ``SIGXCPU`` and the child dies.
- Memory: ``RLIMIT_DATA`` at the child's data segment now plus ``memory_mb``, which counts
  what the child really allocates (the heap and private anonymous mappings, not the address
  space reserved but never committed); an allocation past it raises ``MemoryError``.
- Wall clock: the parent waits at most ``wall`` seconds for the answer, then kills the child.

Past any of them ``OverBound`` says which; the caller decides what to tell the user.
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import time
from collections.abc import Callable
from typing import Any

_PAGE = os.sysconf("SC_PAGE_SIZE")


class OverBound(Exception):
    """The function did not finish within its bound: ``why`` is "cpu", "memory" or "wall"."""

    def __init__(self, why: str, seconds: float) -> None:
        super().__init__(f"over its {why} bound after {seconds:.2f} s")
        self.why = why
        self.seconds = seconds


class ChildFailed(Exception):
    """The child raised something that could not be sent back, or died for another reason."""


def run(function: Callable[[], Any], *, cpu_seconds: int, memory_mb: int, wall: float) -> Any:
    """``function()`` in a bounded child: its return value, or its exception raised here."""
    read_end, write_end = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _child(function, write_end, cpu_seconds=cpu_seconds, memory_mb=memory_mb)
    os.close(write_end)
    chunks: list[bytes] = []
    killed = False
    try:
        deadline = started + wall
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                killed = True
                break
            ready, _, _ = select.select([read_end], [], [], left)
            if ready:
                chunk = os.read(read_end, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    seconds = time.monotonic() - started
    if killed:
        raise OverBound("wall", seconds)
    if os.WIFSIGNALED(status):
        if os.WTERMSIG(status) == signal.SIGXCPU:
            raise OverBound("cpu", seconds)
        raise ChildFailed(f"the check's process died ({signal.Signals(os.WTERMSIG(status)).name})")
    try:
        outcome, value = pickle.loads(b"".join(chunks))  # noqa: S301  written by our own fork, not a client
    except Exception as exc:
        raise ChildFailed(f"the check's process sent no answer (exit status {os.WEXITSTATUS(status)})") from exc
    if outcome == "returned":
        return value
    if outcome == "memory":
        raise OverBound("memory", seconds)
    if outcome == "raised":
        raise value
    raise ChildFailed(value)


def _child(function: Callable[[], Any], write_end: int, *, cpu_seconds: int, memory_mb: int) -> None:
    code = 0
    try:
        _die_with_parent()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGUSR1,
                       signal.SIGUSR2, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)  # the parent's handlers (gunicorn's) are not ours
        signal.signal(signal.SIGXCPU, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        _set_soft(resource.RLIMIT_CPU, max(1, cpu_seconds))
        _set_soft(resource.RLIMIT_DATA, data_segment() + memory_mb * 1024 * 1024)
        try:
            answer: tuple[str, Any] = ("returned", function())
        except MemoryError:
            answer = ("memory", None)
        except Exception as exc:  # noqa: BLE001  sent back and raised in the parent
            answer = ("raised", exc)
        try:
            data = pickle.dumps(answer)
        except Exception as exc:  # noqa: BLE001  an answer that cannot travel is described
            data = pickle.dumps(("failed", f"the check raised {type(exc).__name__}"))
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view):]
    except BaseException:  # noqa: BLE001  never back into the parent's code
        code = 1
    finally:
        os._exit(code)


def _set_soft(limit: int, value: int) -> None:
    _, hard = resource.getrlimit(limit)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(limit, (value, hard))


def data_segment() -> int:
    """This process's data segment in bytes (``VmData``: heap and private writable mappings)."""
    with open("/proc/self/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmData:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmData in /proc/self/status")


def _die_with_parent() -> None:
    """Linux: SIGKILL when the parent dies, even by SIGKILL (a killed web worker leaves no check)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
