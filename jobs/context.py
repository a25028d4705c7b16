"""What a handler gets while it runs one job: its input, its budget, its fenced writes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, Protocol, TypedDict

from . import queue
from .clock import Clock, queue_clock
from .kinds import JobDeferred
from .models import Job


class JobRow(TypedDict):
    """What a handler may read of its job's row beyond its claim: its scope."""

    scope_id: int


class TimeLimits(Protocol):
    """Who enforces ``JobContext.time_limit``: the worker that runs an isolated handler."""

    def enter(self, seconds: float, reason: str) -> None: ...

    def leave(self) -> None: ...


class Unenforced:
    """In-process handlers: a time limit is advice (the job's deadline still ends the job)."""

    def enter(self, seconds: float, reason: str) -> None:
        pass

    def leave(self) -> None:
        pass


class JobContext:
    """One claim of one job. Every write it offers is fenced by the claim's epoch."""

    def __init__(self, claim: queue.Claim, *, clock: Clock = queue_clock, stop: threading.Event | None = None,
                 limits: TimeLimits | None = None) -> None:
        self.claim = claim
        self.clock = clock
        self.stop = stop or threading.Event()
        self._limits = limits or Unenforced()
        self._job: JobRow | None = None
        self.external_started = False  # the marker was committed on this claim (see ``Completed``)

    @property
    def job_id(self) -> int:
        return self.claim.job_id

    @property
    def epoch(self) -> int:
        return self.claim.epoch

    @property
    def attempt(self) -> int:
        return self.claim.attempt

    @property
    def payload(self) -> dict[str, Any]:
        return self.claim.payload

    @property
    def deadline(self) -> datetime:
        return self.claim.deadline

    def now(self) -> datetime:
        return self.clock.now()

    def remaining(self) -> timedelta:
        """The job's budget: time left before its deadline."""
        return self.claim.deadline - self.clock.now()

    @contextmanager
    def time_limit(self, seconds: float, reason: str) -> Iterator[None]:
        """Run the block within ``seconds`` of wall-clock time.

        For an isolated kind the worker kills the handler's process past it, and the job fails,
        not retryable, with ``reason`` (in words for the person who submitted it: "the
        document is too complex to read within 10 s"). In-process it is not enforced.
        """
        self._limits.enter(seconds, reason)
        try:
            yield
        finally:
            self._limits.leave()

    def cancelled(self) -> bool:
        """Whether someone asked to cancel this job; a handler checks between its steps and,
        if so, stops by raising ``jobs.kinds.JobCancelled``."""
        return queue.cancel_requested(job_id=self.job_id, epoch=self.epoch)

    def job(self) -> JobRow:
        """This job's row (its scope), read once."""
        if self._job is None:
            self._job = Job.objects.filter(pk=self.job_id).values("scope_id").get()
        return self._job

    def defer(self, seconds: float, reason: str) -> JobDeferred:
        """The exception that hands the job back for ``seconds``, its attempt not spent: for what
        said "not now" and so did nothing (an outside service's 429, a store out of reach)."""
        return JobDeferred(self.now() + timedelta(seconds=seconds), reason)

    def mark_external_start(self, what: str = "external call", *, also: Callable[[], object] | None = None) -> None:
        """Commit the marker before an outside call; only with a third of a lease still ahead.
        ``also`` writes the handler's own record of the call in the marker's transaction."""
        outcome = queue.mark_external_start(job_id=self.job_id, epoch=self.epoch, now=self.now(), what=what,
                                            min_left=self.claim.lease / 3, also=also)
        if not outcome:
            raise queue.StaleEpoch(outcome.reason)
        self.external_started = True

    def clear_external_start(self, what: str = "external call") -> None:
        outcome = queue.clear_external_start(job_id=self.job_id, epoch=self.epoch, now=self.now(), what=what)
        if not outcome:
            raise queue.StaleEpoch(outcome.reason)

    @contextmanager
    def fenced(self) -> Iterator[None]:
        """A transaction that commits only while this claim still owns the job."""
        with queue.fenced(job_id=self.job_id, epoch=self.epoch, now=self.now()):
            yield
