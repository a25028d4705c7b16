"""Cancel: at once while a job waits, by a request its worker acknowledges while it runs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from jobs import sql
from jobs.models import Job
from jobs.writelock import write_transaction

from . import running
from .events import record
from .fence import held, rejected
from .terms import CANCEL_REQUESTED, CANCELLED, LEASED, QUEUED, UNKNOWN, FailureCode, Outcome

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
        if state == QUEUED and Job.objects.filter(pk=job_id, state=QUEUED, epoch=epoch).update(
                state=CANCELLED, finished_at=now, updated_at=now, turn=None, last_error="",
                failure_code=FailureCode.CANCELLED):
            record(job_id, QUEUED, CANCELLED, epoch, actor=actor, reason=reason or "cancelled", now=now)
            return Outcome(True, CANCELLED, "cancelled")
        if state == LEASED and requested is None and Job.objects.filter(
                pk=job_id, state=LEASED, epoch=epoch, cancel_requested_at__isnull=True).update(
                cancel_requested_at=now, updated_at=now):
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
        if job.external_started_at is not None:
            to, why = UNKNOWN, "cancelled while an outside call was in flight; its outcome is unknown"
        else:
            to, why = CANCELLED, "cancelled"
        running.stop(job, epoch, to=to, actor=actor, why=why, now=now, finished_at=now, updated_at=now,
                     lease_expires_at=None, turn=None, last_error="" if to == CANCELLED else why,
                     failure_code=FailureCode.CANCELLED)
    return Outcome(True, to, why)
