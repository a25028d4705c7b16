"""What a handler gets while it runs one job: its input, its budget, its fenced writes."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, Iterator

from . import documents, queue
from .clock import SystemClock
from .models import Job


class JobContext:
    """One claim of one job. Every write it offers is fenced by the claim's epoch."""

    def __init__(self, claim: queue.Claim, *, clock: Any = None, stop: threading.Event | None = None) -> None:
        self.claim = claim
        self.clock = clock or SystemClock()
        self.stop = stop or threading.Event()
        self._job: dict[str, Any] | None = None

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

    def job(self) -> dict[str, Any]:
        """This job's row (tenant and document metadata), read once."""
        if self._job is None:
            self._job = (
                Job.objects.filter(pk=self.job_id)
                .values("tenant_id", "document", "document_name", "document_type", "document_size", "document_sha256")
                .get()
            )
        return self._job

    def document(self) -> bytes:
        """This job's own document, and only it."""
        name = self.job()["document"]
        if not name:
            raise LookupError("this job has no document")
        return documents.read(name)

    def mark_external_start(self, what: str = "external call") -> None:
        outcome = queue.mark_external_start(job_id=self.job_id, epoch=self.epoch, now=self.now(), what=what)
        if not outcome:
            raise queue.StaleEpoch(outcome.reason)

    def clear_external_start(self, what: str = "external call") -> None:
        outcome = queue.clear_external_start(job_id=self.job_id, epoch=self.epoch, now=self.now(), what=what)
        if not outcome:
            raise queue.StaleEpoch(outcome.reason)

    @contextmanager
    def fenced(self) -> Iterator[None]:
        """A transaction that commits only while this claim still owns the job."""
        with queue.fenced(job_id=self.job_id, epoch=self.epoch, now=self.now()):
            yield
