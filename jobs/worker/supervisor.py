"""Run N worker processes, replace the ones that die, and pass shutdown signals on.

Processes are forked (``spawn`` where fork is unavailable): a replacement starts in a few
milliseconds without importing Django again. The parent closes its database connections
before each fork, so no child shares a socket or a SQLite handle with another.

Signals: the first SIGTERM or SIGINT stops replacing workers and sends each one SIGTERM
(finish or give back the current job within the grace period, then exit 0); workers that
outlive the grace period by ``KILL_MARGIN`` seconds are killed, and the lease recovers their
jobs. A second signal kills the workers and exits at once. Workers ignore SIGINT: a Ctrl-C
reaches the whole process group, and the supervisor alone decides what it means.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from django.db import connections

from ..logs import event
from .watchdog import SUPERVISOR_GRACE

log = logging.getLogger("jobs.worker")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
KILL_MARGIN = 5.0  # seconds past the grace period before a stopping worker is killed
RESTART_BACKOFF = 1.0  # a worker that failed by itself this soon after starting waits this long


@contextmanager
def stop_signals(on_signal: Callable[[int], None], signals: tuple[int, ...] = STOP_SIGNALS) -> Iterator[None]:
    """Route ``signals`` to ``on_signal`` for the duration, then restore the previous handlers."""
    previous = {s: signal.signal(s, lambda signum, frame: on_signal(signum)) for s in signals}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@dataclass
class Slot:
    """One of the N places a worker process runs in."""

    number: int
    process: Any = None
    started: float = 0.0
    not_before: float = 0.0
    done: bool = False  # burst mode: drained and exited 0
    restarts: int = 0
    busy_until: Any = None  # the worker's running in-process handler's deadline (time.time()), 0: none


@dataclass
class Supervisor:
    processes: int
    worker_options: dict[str, Any] = field(default_factory=dict)
    grace: float = 20.0
    burst: bool = False
    start_method: str = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"

    def __post_init__(self) -> None:
        self._ctx: Any = multiprocessing.get_context(self.start_method)
        self._slots = [Slot(n) for n in range(1, self.processes + 1)]
        self._stopping = False
        self._kill_at = 0.0
        self.replaced = 0

    # -- signals ----------------------------------------------------------------------

    def on_signal(self, signum: int) -> None:
        """First signal: stop gracefully. Second: kill the workers and exit at once."""
        if not self._stopping:
            event(log, logging.INFO, "supervisor_stopping", signal=signal.Signals(signum).name, grace_s=self.grace)
            self.stop()
            return
        event(log, logging.WARNING, "supervisor_exit_now", signal=signal.Signals(signum).name)
        self._signal_all(signal.SIGKILL)
        os._exit(1)

    def stop(self) -> None:
        self._stopping = True
        self._kill_at = time.monotonic() + self.grace + KILL_MARGIN
        self._signal_all(signal.SIGTERM)

    def _signal_all(self, signum: int) -> None:
        for slot in self._slots:
            if slot.process is not None and slot.process.pid and slot.process.exitcode is None:
                with suppress(ProcessLookupError):
                    os.kill(slot.process.pid, signum)

    # -- the loop ---------------------------------------------------------------------

    def run(self) -> int:
        """Start the workers and keep N running until stopped (or drained, in burst mode)."""
        event(log, logging.INFO, "supervisor_started", processes=self.processes, burst=self.burst,
              method=self.start_method, pid=os.getpid())
        for slot in self._slots:
            self._start(slot)
        while True:
            live = [s.process.sentinel for s in self._slots if s.process is not None and s.process.exitcode is None]
            if live:
                multiprocessing.connection.wait(live, timeout=0.2)
            else:
                time.sleep(0.05)
            for slot in self._slots:
                self._watch(slot)
                self._reap(slot)
            if self._stopping:
                if all(s.process is None for s in self._slots):
                    event(log, logging.INFO, "supervisor_stopped")
                    return 0
                if time.monotonic() >= self._kill_at:
                    event(log, logging.WARNING, "grace_expired", action="kill")
                    self._signal_all(signal.SIGKILL)
                    self._kill_at = float("inf")
            elif self.burst and all(s.done for s in self._slots):
                event(log, logging.INFO, "supervisor_drained")
                return 0

    def _watch(self, slot: Slot) -> None:
        """Kill a worker whose in-process handler is ``SUPERVISOR_GRACE`` s past its job's deadline:
        its own watchdog (``jobs.worker.watchdog``) should have ended it at the deadline, so it
        cannot run even that thread. Its lease, never past the deadline, sends the job to recovery."""
        process = slot.process
        if process is None or process.exitcode is not None or slot.busy_until is None:
            return
        until = slot.busy_until.value
        if until and time.time() > until + SUPERVISOR_GRACE:
            event(log, logging.WARNING, "watchdog_killed", slot=slot.number, pid=process.pid,
                  past_deadline_s=round(time.time() - until, 1))
            slot.busy_until.value = 0.0
            with suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)

    def _reap(self, slot: Slot) -> None:
        process = slot.process
        if process is not None and process.exitcode is not None:
            process.join()
            code = process.exitcode
            slot.process = None
            if self._stopping:
                return
            if self.burst and code == 0:
                slot.done = True
                return
            lived = time.monotonic() - slot.started
            event(log, logging.WARNING, "worker_died", slot=slot.number, pid=process.pid, exitcode=code,
                  lived_s=round(lived, 1), action="replace")
            crash_loop = code is not None and code >= 0 and lived < RESTART_BACKOFF  # not a kill: its own failure
            slot.not_before = time.monotonic() + (RESTART_BACKOFF if crash_loop else 0)
            slot.restarts += 1
            self.replaced += 1
        if slot.process is None and not slot.done and not self._stopping and time.monotonic() >= slot.not_before:
            self._start(slot)

    def _start(self, slot: Slot) -> None:
        connections.close_all()  # the child must open its own connections
        # Signals stay blocked across the fork until the child has its own handlers: an
        # early SIGTERM must not run the supervisor's handler inside the child.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        slot.busy_until = self._ctx.Value("d", 0.0, lock=False)
        try:
            slot.process = self._ctx.Process(
                target=worker_process, name=f"worker-{slot.number}",
                args=(self.worker_options, self.grace, os.getpid(), slot.busy_until),
            )
            slot.process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        slot.started = time.monotonic()
        event(log, logging.INFO, "worker_process_started", slot=slot.number, pid=slot.process.pid)


def worker_process(worker_options: dict[str, Any], grace: float, parent_pid: int, busy_until: Any = None) -> None:
    """The body of one worker process: its own signal handlers, then the worker loop."""
    _die_with_parent(parent_pid)
    from django.apps import apps

    if not apps.ready:  # spawn: a fresh interpreter
        import django

        django.setup()
    from .loop import Worker

    worker = Worker(grace=grace, watchdog=True, busy_until=busy_until, **worker_options)
    signals_seen = 0

    def on_sigterm(signum: int) -> None:
        nonlocal signals_seen
        signals_seen += 1
        if signals_seen > 1:
            os._exit(1)  # second signal: at once; the lease recovers the job
        worker.stop()

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with stop_signals(on_sigterm, (signal.SIGTERM,)):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        if os.getppid() != parent_pid:
            worker.stop()
        worker.run()
    connections.close_all()
    sys.exit(0)


def _die_with_parent(parent_pid: int) -> None:
    """Linux: ask for SIGTERM when the supervisor dies (even by SIGKILL), so no worker is orphaned."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(1)
    os.kill(os.getpid(), signal.SIGTERM)
