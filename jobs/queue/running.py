"""A scope's count of running jobs (``Scope.running``), kept only for a scope with a running limit.

The claim raises it and the completion lowers it inside their own statements (``jobs.sql``),
each in the same transaction as the job's row. Every other move out of ``leased`` (a failure,
a deferral, a cancellation, a hand-back, recovery) goes through ``stop`` or ``release`` here,
and ``recount`` counts it afresh when staff set or change the limit.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from django.db.models import F, Q, Value
from django.db.models.functions import Greatest

from jobs.models import Job, Scope
from jobs.writelock import write_transaction

from .events import record
from .terms import LEASED


def stop(job: Job, epoch: int, *, to: str, actor: str, why: str, now: datetime, only_if: Q | None = None,
         **changes: Any) -> None:
    """A job this epoch holds (``fence.held``) leaves ``leased`` for ``to``: its row takes
    ``changes`` (only if ``only_if`` holds too), its scope's count drops, its event records
    ``why``; in the caller's transaction."""
    Job.objects.filter(*([] if only_if is None else [only_if]), pk=job.pk, epoch=epoch, state=LEASED).update(
        state=to, **changes)
    release(job.scope_id)
    record(job.pk, LEASED, to, epoch, actor=actor, reason=why, now=now)


def release(scope_id: int, jobs: int = 1) -> None:
    """Jobs of the scope stopped running: lower its count, if it keeps one (a running limit)."""
    Scope.objects.filter(pk=scope_id, max_running__isnull=False).update(
        running=Greatest(F("running") - jobs, Value(0)))


def release_each(left: Counter[int]) -> None:
    """``release`` for each scope: how many of its jobs stopped running."""
    for scope_id, jobs in left.items():
        release(scope_id, jobs)


def recount(*, scope_id: int) -> None:
    """Count the scope's running jobs afresh: when staff set or change its running limit."""
    with write_transaction():
        running = Job.objects.filter(scope_id=scope_id, state=LEASED).count()
        Scope.objects.filter(pk=scope_id).update(running=running)
