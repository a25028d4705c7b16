"""Cancel: at once while a job waits, by a request its worker acknowledges while it runs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from jobs import sql
from jobs.models import Job
from jobs.writelock import write_transaction

from . import running
from .events import record
from .fence import held, held_row, rejected
from .terms import CANCEL_REQUESTED, CANCELLED, LEASED, QUEUED, Outcome
from .transitions import ACKNOWLEDGE_CANCEL, ASK_CANCEL, CANCEL

# PostgreSQL: a cancel request of a running job is announced on this channel ("job:epoch").
CANCEL_CHANNEL = sql.CANCEL_CHANNEL


def cancel(*, job_id: int, actor: str, reason: str, now: datetime, expected_epoch: int | None = None) -> Outcome:
    """Cancel a job: at once while it waits, by request while it runs.

    ``queued`` becomes ``cancelled`` (a conditional write: a claim racing it wins or loses
    whole). A ``leased`` job gets a recorded cancel request, which its worker acknowledges
    with a fenced write (``acknowledge_cancel``); until then a completion may still win. A
    second request, or one for a job already cancelled, changes nothing and says so. Other
    finished jobs are not cancellable (``Outcome.applied`` is False, ``state`` says why).
    With ``expected_epoch`` (staff, from the page they saw) it applies only on that epoch.
    """
    with write_transaction():
        current = Job.objects.filter(pk=job_id).values_list("state", "epoch", "cancel_requested_at").first()
        if current is None:
            return Outcome(False, None, "no such job")
        state, epoch, requested = current
        if expected_epoch is not None and epoch != expected_epoch:
            return Outcome(False, state, f"epoch {expected_epoch} superseded by {epoch}")
        values = {"epoch": epoch, "now": now}
        if state == QUEUED and Job.objects.filter(CANCEL.guard.q(values), pk=job_id).update(
                state=CANCELLED, **CANCEL.changes({}, values)):
            record(job_id, QUEUED, CANCELLED, epoch, actor=actor, reason=reason or "cancelled", now=now)
            return Outcome(True, CANCELLED, "cancelled")
        if state == LEASED and requested is None and Job.objects.filter(
                ASK_CANCEL.guard.q(values), pk=job_id).update(**ASK_CANCEL.changes({}, values)):
            record(job_id, LEASED, LEASED, epoch, actor=actor, reason=f"{CANCEL_REQUESTED}: {reason}" if reason else
                   CANCEL_REQUESTED, now=now)
            _notify_cancel(job_id, epoch)
            return Outcome(True, LEASED, "cancel requested")
    if state == LEASED:
        return Outcome(True, LEASED, "cancel requested")  # asked before: harmless
    if state == CANCELLED:
        return Outcome(True, CANCELLED, "already cancelled")
    if state == QUEUED:  # claimed between the read and the write: ask its worker instead
        return cancel(job_id=job_id, actor=actor, reason=reason, now=now,
                      expected_epoch=None if expected_epoch is None else expected_epoch + 1)
    return Outcome(False, state, f"a {state} job cannot be cancelled")


def _notify_cancel(job_id: int, epoch: int) -> None:
    """Tell the job's worker at once (PostgreSQL: its listener hears it at commit); SQLite
    workers look for requests of the jobs they hold twice a second (``jobs.worker``)."""
    sql.current().notify_cancel(job_id, epoch)


def cancels_requested(*, claims: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Those of these (job, epoch) claims someone asked to cancel: one primary-key lookup."""
    if not claims:
        return []
    asked = Job.objects.filter(pk__in=[job_id for job_id, _ in claims], cancel_requested_at__isnull=False)
    found = set(asked.values_list("id", "epoch"))
    return [c for c in claims if c in found]


def cancel_requested(*, job_id: int, epoch: int) -> bool:
    """Whether someone asked to cancel this epoch's run of the job."""
    return Job.objects.filter(pk=job_id, epoch=epoch, cancel_requested_at__isnull=False).exists()


def acknowledge_cancel(*, job_id: int, epoch: int, now: datetime, actor: str = "worker") -> Outcome:
    """The worker stopped a job someone asked to cancel: ``leased`` → ``cancelled``.

    Fenced like a completion. With the external-start marker still set (an outside call
    whose outcome nobody recorded) it is ``unknown`` instead: staff decide.
    """
    with write_transaction():
        job = held(job_id, epoch, now)
        if job is None:
            return rejected(job_id, epoch, now, actor=actor, write="cancellation")
        row, params = held_row(job), {"now": now}
        way = ACKNOWLEDGE_CANCEL.way(row, params)
        running.stop(job, epoch, to=way.to, actor=actor, why=way.why, now=now,
                     **ACKNOWLEDGE_CANCEL.changes(row, params))
    return Outcome(True, way.to, way.why)
