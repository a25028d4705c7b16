"""How a run ends: the one fenced queue write for its verdict, then its count and log line.

Every write here carries the run's epoch, so a worker whose claim was lost writes nothing: the
write is rejected, counted (``WorkerStats.rejected``) and logged, never retried.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import assert_never

from .. import kinds, queue
from ..clock import Clock
from ..logs import event
from ..models import Job
from ..verdicts import Cancelled, Completed, Deferred, Failed, Lost, Verdict
from .completer import Completer, Finished
from .run import Run

log = logging.getLogger("jobs.worker")
INFO, WARNING = logging.INFO, logging.WARNING


@dataclass
class WorkerStats:
    """What one worker did; logged when it stops, read by tests."""

    claimed: int = 0
    completed: int = 0
    failed: int = 0
    deferred: int = 0
    given_back: int = 0
    left_to_lease: int = 0
    cancelled: int = 0
    rejected: int = 0  # stale or expired authority: a fenced write that changed nothing
    recovered: int = 0
    empty_polls: int = 0
    errors: int = 0
    sandboxes: int = 0  # handler child processes started (each limit that ended a job starts one more)


class Endings:
    """Writes each run's end for the worker ``worker``; completions go through ``completer``."""

    def __init__(self, *, worker: str, clock: Clock, stats: WorkerStats, batch: int, flush_seconds: float) -> None:
        self.worker = worker
        self.clock = clock
        self.stats = stats
        self.completer = Completer(batch=batch, interval=flush_seconds, clock=clock, done=self.completed)

    def finish(self, run: Run, verdict: Verdict) -> None:
        """Write what the handler's verdict says: complete, fail, defer or cancel the job."""
        match verdict:
            case Completed():
                self._complete(run, verdict)
            case Failed():
                self._fail(run, verdict)
            case Deferred():
                self._defer(run, verdict)
            case Cancelled():
                self.acknowledge_cancel(run)
            case Lost(reason=reason):  # a fenced write inside the handler found the claim gone
                self.rejected(run, "fenced", reason)
            case _:
                assert_never(verdict)

    def _complete(self, run: Run, verdict: Completed) -> None:
        finished = Finished(run, verdict.result, self._summarize(run.claim, verdict.result), time.monotonic())
        if not verdict.external:
            self.completer.submit(finished)
            return
        # An outside effect's record must not wait for a batch: commit it at once.
        claim = run.claim
        self.completed(finished, queue.complete(job_id=claim.job_id, epoch=claim.epoch, result=verdict.result,
                                                now=self.clock.now(), summary=finished.summary))

    def _fail(self, run: Run, verdict: Failed) -> None:
        outcome = queue.fail(job_id=run.claim.job_id, epoch=run.claim.epoch, error=verdict.error, code=verdict.code,
                             retryable=verdict.retryable, now=self.clock.now())
        if not outcome:
            self.rejected(run, "fail", outcome.reason)
            return
        self.stats.failed += 1
        event(log, INFO, "failed", **run.fields, to=outcome.state, error=verdict.logged,
              retryable=verdict.retryable, duration_ms=run.ms(), worker=self.worker)

    def _defer(self, run: Run, verdict: Deferred) -> None:
        outcome = queue.defer(job_id=run.claim.job_id, epoch=run.claim.epoch, until=verdict.until,
                              now=self.clock.now(), reason=verdict.reason)
        if not outcome:
            self.rejected(run, "defer", outcome.reason)
            return
        self.stats.deferred += 1
        event(log, INFO, "deferred", **run.fields, to=outcome.state, until=verdict.until.isoformat(),
              duration_ms=run.ms(), worker=self.worker)

    def completed(self, finished: Finished, outcome: queue.Outcome) -> None:
        """A completion's commit (or its rejection): only now is it counted and logged."""
        if not outcome:
            self.rejected(finished.run, "complete", outcome.reason)
            return
        self.stats.completed += 1
        if log.isEnabledFor(INFO):
            event(log, INFO, "completed", **finished.run.fields, duration_ms=finished.run.ms(), worker=self.worker)
        self._after_completion(finished.claim)

    def _after_completion(self, claim: queue.Claim) -> None:
        """The kind's follow-up of a committed completion (``Kind.on_completed``)."""
        kind = kinds.get(claim.kind)
        if kind is None or kind.on_completed is None:
            return
        try:
            kind.on_completed(claim.job_id)
        except Exception as exc:  # noqa: BLE001  the job is done; its follow-up's failure is only logged
            event(log, WARNING, "on_completed_failed", job=claim.job_id, kind=claim.kind, error=type(exc).__name__)

    def _summarize(self, claim: queue.Claim, result: dict[str, object]) -> kinds.Summary | None:
        """The kind's summary of its result; a summary that fails costs the summary, not the job."""
        kind = kinds.get(claim.kind)
        if kind is None or kind.summarize is None:
            return None
        try:
            return kind.summarize(result)
        except Exception as exc:  # noqa: BLE001  the result is saved either way
            event(log, WARNING, "summary_failed", job=claim.job_id, kind=claim.kind, error=type(exc).__name__)
            return None

    def acknowledge_cancel(self, run: Run) -> None:
        """The handler stopped for a cancel request (or never started): record the job as cancelled."""
        outcome = queue.acknowledge_cancel(job_id=run.claim.job_id, epoch=run.claim.epoch, now=self.clock.now())
        if not outcome:
            self.rejected(run, "cancel", outcome.reason)
            return
        self.stats.cancelled += 1
        event(log, INFO, "cancelled", **run.fields, to=outcome.state, duration_ms=run.ms(), worker=self.worker)

    def give_back(self, run: Run) -> None:
        """Shutting down and the handler stopped unfinished: requeue it, unless it reached outside."""
        claim = run.claim
        marker = Job.objects.filter(pk=claim.job_id, epoch=claim.epoch).values_list(
            "external_started_at", flat=True).first()
        if marker is not None:  # nobody knows whether the call happened: the lease decides (unknown)
            self.stats.left_to_lease += 1
            event(log, INFO, "left_to_lease", **run.fields, reason="external start recorded",
                  duration_ms=run.ms(), worker=self.worker)
            return
        now = self.clock.now()
        self.given_back(run, queue.defer(job_id=claim.job_id, epoch=claim.epoch, until=now, now=now,
                                         reason="worker shutting down"))

    def given_back(self, run: Run, outcome: queue.Outcome) -> None:
        """A job handed back (requeued, attempt not spent), or the write that found it gone."""
        if not outcome:
            self.rejected(run, "give_back", outcome.reason)
            return
        self.stats.given_back += 1
        event(log, INFO, "given_back", **run.fields, to=outcome.state, duration_ms=run.ms(), worker=self.worker)

    def rejected(self, run: Run, write: str, reason: str) -> None:
        """A stale or expired claim: counted and logged, never retried (a newer epoch owns it)."""
        self.stats.rejected += 1
        event(log, WARNING, "stale_rejected", **run.fields, write=write, reason=reason,
              duration_ms=run.ms(), worker=self.worker)
