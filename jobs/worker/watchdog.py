"""The watchdog: ends a worker whose in-process handler outlives its job's deadline.

A sandboxed handler is a child process the worker kills at the deadline (``jobs.worker.sandbox``).
A handler that runs in the worker itself (``webhook.deliver``, the cheap kinds) is a thread that
cannot be killed: a call stuck in a socket read that drips, or in C code, holds the worker for as
long as it likes. So, in a worker that ``runworkers`` supervises, a watchdog thread waits for the
running handler's deadline (less ``DEADLINE_MARGIN``, as the sandbox does); if the handler is still
running then, the worker writes the sandbox's deadline failure for the job, hands back what it
holds, and ends its process with ``OVERRAN_EXIT``; the supervisor starts a replacement.

The deadline is also published to the supervisor (``busy_until``, wall-clock seconds in shared
memory): a worker that cannot even run its watchdog thread (a C call holding the GIL) is killed by
the supervisor ``SUPERVISOR_GRACE`` seconds past it, and the lease (never past the deadline)
brings its job to recovery, which makes it ``dead`` (or ``unknown`` after an external-start
marker). Either way the job's end is a fenced write: nothing lost, nothing completed twice.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

OVERRAN_EXIT = 3  # a worker's exit status when its watchdog ended it
SUPERVISOR_GRACE = 5.0  # seconds past a handler's deadline before the supervisor kills its worker


class Watchdog:
    """Calls ``overran(token)`` from its own thread when the armed run is still armed at its time."""

    def __init__(self, overran: Callable[[Any], None], busy_until: Any | None = None) -> None:
        self._overran = overran
        self._busy_until = busy_until  # a multiprocessing.Value("d") the supervisor reads, or None
        self._cond = threading.Condition()
        self._token: Any = None
        self._at = 0.0  # monotonic
        self._wakes_at = math.inf  # when the thread wakes by itself (monotonic; inf: only when told)
        self._closed = False
        self.wakes = 0  # how often the thread woke: a few times a deadline, not once a job
        self._thread = threading.Thread(target=self._watch, name="watchdog", daemon=True)
        self._thread.start()

    def publish(self, seconds: float) -> None:
        """Tell the supervisor alone that this worker must be done within ``seconds``: said before
        the job's start is written, so no moment of a started job is unknown to it."""
        if self._busy_until is not None:
            self._busy_until.value = time.time() + seconds

    def arm(self, token: Any, seconds: float) -> None:
        """Watch a run that must end within ``seconds``."""
        with self._cond:
            self._token, self._at = token, time.monotonic() + seconds
            if self._busy_until is not None:
                self._busy_until.value = time.time() + seconds
            if self._at < self._wakes_at:  # else it wakes in time by itself: no wake-up a job
                self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._token = None
            if self._busy_until is not None:
                self._busy_until.value = 0.0

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._token = None
            self._cond.notify()

    def _watch(self) -> None:
        """Sleep until the armed run's time. With none armed, until the last one's time all the
        same while it is ahead: a fast job is disarmed before this thread has even woken for it,
        and the next job's time is no sooner as a rule, so its ``arm`` needs no wake-up. (Sleeping
        without end there cost the worker a thread switch a job: half its no-op throughput.)"""
        while True:
            with self._cond:
                while not self._closed and (self._token is None or time.monotonic() < self._at):
                    left = self._at - time.monotonic()
                    if self._token is None and left <= 0:
                        self._wakes_at = math.inf
                        self._cond.wait()
                    else:
                        self._wakes_at = self._at
                        self._cond.wait(max(left, 0))
                    self.wakes += 1
                self._wakes_at = 0.0  # awake
                if self._closed:
                    return
                token, self._token = self._token, None
            self._overran(token)
