"""The fence of a running job's writes: only the epoch that owns the job, while its lease and
deadline hold, may write it; a write that finds otherwise says why and records its rejection."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from django.db.models import QuerySet

from jobs.models import Job
from jobs.writelock import write_transaction

from .events import record
from .terms import LEASED, Outcome, StaleEpoch
from .transitions import FENCE, Row


def owned(job_id: int, epoch: int, now: datetime, lease_left: timedelta = timedelta(0)) -> QuerySet[Job]:
    """The rows this epoch may still write (``transitions.FENCE``): its own, leased, lease and
    deadline unexpired (the lease with at least ``lease_left`` to run)."""
    rows = Job.objects.filter(FENCE.q({"job_id": job_id, "epoch": epoch, "now": now}))
    return rows.filter(lease_expires_at__gt=now + lease_left) if lease_left else rows


@contextmanager
def while_owned(job_id: int, epoch: int, now: datetime, *, write: str, lease_left: timedelta = timedelta(0),
                **changes: Any) -> Iterator[None]:
    """Apply ``changes`` and run the block in one transaction, only while ``epoch`` owns the job.

    When it no longer does, nothing is written but the rejection (an event naming ``write``
    and why), and ``StaleEpoch`` is raised. The guarded UPDATE comes first, so it also
    locks the job row for the block.
    """
    with write_transaction():
        if owned(job_id, epoch, now, lease_left).update(updated_at=now, **changes):
            yield
            return
        reason = why_not_owned(job_id, epoch, now, lease_left)
        record(job_id, LEASED, "", epoch, actor="queue", reason=f"{write} rejected: {reason}", now=now)
    raise StaleEpoch(reason)


def owned_write(job_id: int, epoch: int, now: datetime, *, write: str, note: str = "",
                lease_left: timedelta = timedelta(0), also: Callable[[], object] | None = None,
                **changes: Any) -> Outcome:
    """``while_owned`` as an Outcome; ``note`` puts the write on the job's timeline, ``also``
    writes the caller's own rows in the same transaction."""
    try:
        with while_owned(job_id, epoch, now, write=write, lease_left=lease_left, **changes):
            if note:
                record(job_id, LEASED, LEASED, epoch, actor="worker", reason=note, now=now)
            if also is not None:
                also()
    except StaleEpoch as exc:
        return Outcome(False, None, exc.reason)
    return Outcome(True, LEASED)


def held(job_id: int, epoch: int, now: datetime) -> Job | None:
    """This epoch's job while it owns it, locked for the rest of the transaction (PostgreSQL)."""
    return (
        owned(job_id, epoch, now).select_for_update()
        .only("scope_id", "attempts", "max_attempts", "deadline", "external_started_at")
        .first()
    )


def held_row(job: Job) -> Row:
    """The columns ``held`` read, as the rules of ``transitions`` take them."""
    return {"attempts": job.attempts, "max_attempts": job.max_attempts, "deadline": job.deadline,
            "external_started_at": job.external_started_at}


def rejected(job_id: int, epoch: int, now: datetime, *, actor: str, write: str) -> Outcome:
    """Record that ``write`` found the job no longer this epoch's, and say why (the cold path)."""
    why = why_not_owned(job_id, epoch, now)
    record(job_id, LEASED, "", epoch, actor=actor, reason=f"{write} rejected: {why}", now=now)
    return Outcome(False, None, why)


def rejections(claims: Iterable[tuple[int, int]], now: datetime, *, actor: str, write: str,
               ) -> dict[tuple[int, int], str]:
    """Record, for each (job, epoch) whose ``write`` its fence refused, why; in the caller's
    transaction. Returns the reasons."""
    reasons = {}
    for job_id, epoch in claims:
        reasons[job_id, epoch] = reason = why_not_owned(job_id, epoch, now)
        record(job_id, LEASED, "", epoch, actor=actor, reason=f"{write} rejected: {reason}", now=now)
    return reasons


def why_not_owned(job_id: int, epoch: int, now: datetime, lease_left: timedelta = timedelta(0)) -> str:
    """Say which condition of the fenced write no longer holds (the cold path)."""
    job = Job.objects.filter(pk=job_id).values("state", "epoch", "lease_expires_at", "deadline").first()
    if job is None:
        return "no such job"
    if job["epoch"] != epoch:
        return f"epoch {epoch} superseded by {job['epoch']}"
    if job["state"] != LEASED:
        return f"job is {job['state']}"
    if job["deadline"] <= now:
        return "deadline passed"
    if job["lease_expires_at"] is None or job["lease_expires_at"] <= now:
        return "lease expired"
    if job["lease_expires_at"] <= now + lease_left:
        return f"less than {lease_left.total_seconds():g} s of lease left"
    return "conditions changed"
