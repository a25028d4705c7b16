"""Retention: delete finished jobs, with their events and per-job rows, once they are old enough."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from jobs.models import Job, JobEvent
from jobs.writelock import write_transaction

from .events import needs_human_now
from .terms import DEAD


def delete_finished(*, ids: list[int], cutoff: datetime,
                    retiring: Callable[[Any], None] | None = None) -> dict[str, int]:
    """Delete those of ``ids`` that are still finished before ``cutoff``, in one transaction.

    The condition is checked again inside the transaction (staff may have requeued one
    meanwhile). Events and other per-job rows go with their job (foreign keys with
    CASCADE). ``retiring`` is called inside the transaction with the events about to be
    deleted, so a caller can keep their counts. Returns Django's deleted counts per model.
    """
    with write_transaction():
        doomed = Job.objects.finished_before(cutoff).filter(pk__in=ids)
        if retiring is not None:
            retiring(JobEvent.objects.filter(job__in=doomed))
        gone_dead = doomed.filter(state=DEAD).exists()
        _, deleted = doomed.delete()
        if gone_dead:  # dead jobs deleted: fewer may need a human now
            needs_human_now(cutoff)
    return deleted
