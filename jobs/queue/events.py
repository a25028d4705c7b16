"""A job's timeline: the event row each write appends, and the signal for the jobs needing a human."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.dispatch import Signal

from jobs.models import Job
from jobs.sql.fragments import EVENT_SQL

from .outcomes import NEEDS_HUMAN

# Sent after the commit of a transition into or out of ``dead``/``unknown`` (the jobs needing a
# human), with ``now``: an app that tells staff listens (agent.notifications). The queue knows
# no listener; a listener's error is not the transition's.
needs_human_changed = Signal()


def record(job_id: int, from_state: str, to_state: str, epoch: int, actor: str, reason: str, now: datetime) -> None:
    """Append one event (no ``to_state``: a note, no state moved), in the current transaction."""
    with connection.cursor() as cursor:
        cursor.execute(EVENT_SQL, {"job_id": job_id, "from_state": from_state, "to_state": to_state, "epoch": epoch,
                                   "actor": actor[:150], "reason": reason[:300], "at": db_time(now)})
    if moves_needs_human(from_state, to_state):
        needs_human_now(now)


def moves_needs_human(from_state: str, to_state: str) -> bool:
    return bool(to_state) and to_state != from_state and (to_state in NEEDS_HUMAN or from_state in NEEDS_HUMAN)


def needs_human_now(now: datetime) -> None:
    """Send ``needs_human_changed`` once the current transaction commits."""
    transaction.on_commit(lambda: needs_human_changed.send_robust(sender=Job, now=now))


def db_time(value: datetime) -> Any:
    return connection.ops.adapt_datetimefield_value(value)
