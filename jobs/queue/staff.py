"""Staff: move a dead or unknown job on, only while it is as the staff member saw it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from jobs import kinds
from jobs.models import Job
from jobs.writelock import write_transaction

from ..conf import queue_settings
from .accept import notify_accepted
from .events import record
from .terms import COMPLETED, DEAD, QUEUED, UNKNOWN, Outcome
from .transitions import REQUEUE, RESOLVE


def requeue(*, job_id: int, expected_state: str, expected_epoch: int, actor: str, reason: str, now: datetime,
            deadline: timedelta | None = None) -> Outcome:
    """Staff move a dead or unknown job back to ``queued`` with fresh attempts.

    Applies only while the job is still in the state and epoch the staff member saw. The
    epoch is kept (the next claim raises it), so no token a worker ever held becomes valid
    again.
    """
    if expected_state not in (DEAD, UNKNOWN):
        return Outcome(False, None, f"only dead or unknown jobs can be requeued, not {expected_state}")
    with write_transaction():
        kind = Job.objects.filter(pk=job_id).values_list("kind", flat=True).first()
        if kind is None:
            return Outcome(False, None, "no such job")
        kind_spec = kinds.get(kind)
        budget = deadline or (kind_spec.deadline if kind_spec else queue_settings().deadline)
        values = {"expected_state": expected_state, "expected_epoch": expected_epoch, "now": now,
                  "new_deadline": now + budget}
        moved = Job.objects.filter(REQUEUE.guard.q(values), pk=job_id).update(state=QUEUED,
                                                                              **REQUEUE.changes({}, values))
        if not moved:
            return Outcome(False, None, _why_not_as_seen(job_id, expected_state, expected_epoch))
        record(job_id, expected_state, QUEUED, expected_epoch, actor=actor, reason=reason, now=now)
        notify_accepted()
    return Outcome(True, QUEUED, reason)


def resolve(*, job_id: int, expected_state: str, expected_epoch: int, to_state: str, actor: str, reason: str,
            now: datetime, result: dict[str, Any] | None = None) -> Outcome:
    """Staff settle an unknown job as ``completed`` (with the outcome) or ``dead`` (discard).

    Applies only while the job is still in the state and epoch the staff member saw. The
    error that made it unknown stays in ``last_error`` for the record; its code gives way to
    the staff's decision (none for a completion, ``discarded`` for a discard).
    """
    if expected_state != UNKNOWN or to_state not in (COMPLETED, DEAD):
        return Outcome(False, None, f"cannot move {expected_state} to {to_state}")
    values = {"expected_state": expected_state, "expected_epoch": expected_epoch, "now": now, "to_state": to_state,
              "result": result or {}}
    with write_transaction():
        if not Job.objects.filter(RESOLVE.guard.q(values), pk=job_id).update(state=to_state,
                                                                             **RESOLVE.changes({}, values)):
            return Outcome(False, None, _why_not_as_seen(job_id, expected_state, expected_epoch))
        record(job_id, expected_state, to_state, expected_epoch, actor=actor, reason=reason, now=now)
    return Outcome(True, to_state, reason)


def _why_not_as_seen(job_id: int, state: str, epoch: int) -> str:
    """Why a staff move found the job changed since the staff member saw it."""
    current = Job.objects.filter(pk=job_id).values_list("state", "epoch").first()
    if current is None:
        return "no such job"
    if current[0] != state:
        return f"no longer {state} (now {current[0]})"
    return f"epoch {epoch} superseded by {current[1]}"
