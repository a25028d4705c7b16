"""Batched completion: finished jobs share a transaction, none held back long."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.db import DatabaseError, connection

from .. import forks, kinds, queue
from ..clock import Clock
from ..logs import Repeats
from . import testing
from .backoff import IdleBackoff
from .run import Run

log = logging.getLogger("jobs.worker")
T = TypeVar("T")
_errors = Repeats(log)  # an outage: one line per interval with the count, not one per try
INFO, WARNING = logging.INFO, logging.WARNING


@dataclass(frozen=True)
class Finished:
    """A job whose handler completed, waiting for its batch to commit."""

    run: Run
    result: dict[str, Any]
    summary: kinds.Summary | None
    handed_in: float  # monotonic: when the handler's result reached the completer

    @property
    def claim(self) -> queue.Claim:
        return self.run.claim


class Completer:
    """Commits finished jobs in batches: up to ``batch`` a transaction, none held back long.

    Each row of a batch is fenced on its own (``queue.complete_many``). Nothing about a job
    is reported (``done``: the worker's counts and its log line) before the batch holding it
    commits, and a job whose batch never commits (the worker died) is redelivered when its
    lease runs out, like any job whose worker died before its completion. The worker flushes
    the batch itself when it is full (in the transaction of its claim, when a claim comes
    next: ``flush_with``), and between jobs once the oldest has waited ``interval`` seconds;
    a thread flushes a batch that waited that long while the worker is busy in a longer
    handler. While the worker says it is between jobs
    (``between_jobs``: it will look at the batch again before its next handler runs) the
    thread leaves a due batch to it, so a drain of short jobs commits from one thread, on
    one connection, in full batches, instead of racing the worker for the lock with a
    connection opened for each flush. With a batch of one, every completion is committed at
    once, in the worker's thread.
    """

    # After a failed commit (the database is away) the batch waits before it is tried again:
    # 25 ms, doubling, at most 2 s; the first commit that works resets it.
    RETRY_START, RETRY_CAP = 0.025, 2.0

    def __init__(self, *, batch: int, interval: float, clock: Clock,
                 done: Callable[[Finished, queue.Outcome], None]) -> None:
        self.batch = max(1, batch)
        self.interval = interval
        self.retry = IdleBackoff(cap=self.RETRY_CAP, start=self.RETRY_START)
        self._retry_at = 0.0  # monotonic: no flush that is only due is tried before then
        self.clock = clock
        self._done = done
        self._pending: list[Finished] = []
        self._lock = threading.Lock()  # guards the pending list; held for a flush, one at a time
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self.between_jobs = False  # set by the worker: it will flush a due batch itself, soon
        # Set by the worker: its next write is a claim, which commits a full batch with it (``flush_with``).
        self.claim_next = False

    @property
    def pending(self) -> int:
        return len(self._pending)

    def submit(self, finished: Finished) -> None:
        """Add a finished job; commit the batch if it is full (unless the claim that comes next will)."""
        with self._lock:
            self._pending.append(finished)
            if len(self._pending) >= self.batch and not self.claim_next:
                self._flush()
                return
            first = len(self._pending) == 1
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="completer", daemon=True)
            self._thread.start()
        if first:  # the thread waits for a batch to begin; once it has, it waits for the batch's time
            self._wake.set()

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def flush_if_due(self) -> None:
        with self._lock:
            if self._pending and time.monotonic() >= self._due(self._pending[0]):
                self._flush()

    def _due(self, oldest: Finished) -> float:
        """When the batch whose oldest job is ``oldest`` should be committed: that job's
        interval, or later while a failed commit backs off."""
        return max(oldest.handed_in + self.interval, self._retry_at)

    def flush_with(self, then: Callable[[list[queue.Completion], datetime], tuple[list[queue.Outcome], T]]) -> T:
        """Commit what is pending in the transaction of ``then`` (the worker's next claim,
        ``queue.complete_and_claim``), which returns each completion's outcome and its own
        answer; that answer. As ``flush``: on a database error the batch stays pending."""
        with self._lock:
            return self._commit(then)

    def _flush(self) -> None:
        """Commit what is pending (the lock is held); on a database error it stays pending."""
        if self._pending:
            self._commit(lambda completions, now: (queue.complete_many(completions=completions, now=now), None))

    def _commit(self, write: Callable[[list[queue.Completion], datetime], tuple[list[queue.Outcome], T]]) -> T:
        batch = list(self._pending)
        testing.before_commit([(f.claim.job_id, f.claim.epoch) for f in batch])
        try:
            outcomes, answer = write(
                [queue.Completion(f.claim.job_id, f.claim.epoch, f.result, f.summary) for f in batch], self.clock.now())
        except DatabaseError:
            self._retry_at = time.monotonic() + self.retry.next_delay()
            raise
        self.retry.reset()
        self._retry_at = 0.0
        del self._pending[:len(batch)]
        for finished, outcome in zip(batch, outcomes, strict=True):
            self._done(finished, outcome)
        return answer

    def _run(self) -> None:
        """Flush a batch whose oldest job waited ``interval`` while the worker was busy."""
        while not self._closed.is_set():
            self._wake.clear()
            oldest = self._pending[:1]  # a copy: the worker may flush the list meanwhile
            if not oldest:
                self._wake.wait(1.0)
                continue
            wait = self._due(oldest[0]) - time.monotonic()
            if wait > 0 or self.between_jobs:  # not due yet, or the worker flushes it before its next handler
                self._closed.wait(wait if wait > 0 else self.interval)
                continue
            with forks.database_work():
                try:
                    self.flush_if_due()
                    _errors.settle()
                except DatabaseError as exc:  # tried again after the backoff (or by the worker's next flush)
                    _errors.event(WARNING, "completion_error", error=type(exc).__name__, detail=str(exc)[:200],
                                  retry_in_s=round(max(self._retry_at - time.monotonic(), 0), 3))
                finally:
                    connection.close()

    def close(self) -> None:
        self._closed.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

