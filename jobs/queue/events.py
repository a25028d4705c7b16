"""A job's timeline: the event row each write appends, and what the apps hear of it."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.dispatch import Signal

from jobs.models import Job
from jobs.sql.fragments import EVENT_SQL

from .terms import CANCELLED, COMPLETED, DEAD, LEASED, NEEDS_HUMAN, QUEUED, UNKNOWN

log = logging.getLogger("jobs.queue")

# --- What the apps hear -------------------------------------------------------------------
#
# Both signals are sent *inside* the transaction of the transition that causes them, so what
# a listener writes (agent.inbox.notifications enqueues its email jobs with ``accept``) commits with
# the transition or not at all: no process death between the state change and the email can
# lose the email, and no rolled-back transition sends one. A listener must be quick, write
# only through the database, and send nothing outside it itself (a job does that). Each runs
# in a savepoint: what it raises is logged and undoes its writes, never the transition.
# The queue knows no listener.

# A move into or out of ``dead``/``unknown`` (the jobs needing a human), with ``now``: the
# listener counts them in the same transaction.
needs_human_changed = Signal()
# A batch (``scope_id``, ``batch``) whose last live job left ``queued``/``leased`` by any
# path but a completion: a cancel, a failure or deferral to ``dead``/``unknown``, recovery.
# A completion's follow-up is its kind's (a kind may schedule it when its handler starts).
batch_finished = Signal()

LIVE = frozenset({QUEUED, LEASED})
FINISHED = frozenset({COMPLETED, DEAD, UNKNOWN, CANCELLED})
_BATCH_LOCK = 0x6A0B  # the advisory-lock namespace of "a batch's last live job" (PostgreSQL)


def record(job_id: int, from_state: str, to_state: str, epoch: int, *, actor: str, reason: str, now: datetime) -> None:
    """Append one event (no ``to_state``: a note, no state moved), in the current transaction."""
    with connection.cursor() as cursor:
        cursor.execute(EVENT_SQL, {"job_id": job_id, "from_state": from_state, "to_state": to_state, "epoch": epoch,
                                   "actor": actor[:150], "reason": reason[:300], "at": db_time(now)})
    if moves_needs_human(from_state, to_state):
        needs_human_now(now)
    if from_state in LIVE and to_state in FINISHED:
        left_live([job_id], now)


def moves_needs_human(from_state: str, to_state: str) -> bool:
    return bool(to_state) and to_state != from_state and (to_state in NEEDS_HUMAN or from_state in NEEDS_HUMAN)


def needs_human_now(now: datetime) -> None:
    """Send ``needs_human_changed`` in the current transaction."""
    _send(needs_human_changed, now=now)


def left_live(job_ids: Iterable[int], now: datetime) -> None:
    """Jobs left ``queued``/``leased`` for good, in this transaction: announce each batch of
    theirs that has no live job left.

    PostgreSQL: two transactions finishing a batch's last two jobs would each still see the
    other's job live; a transaction-scoped advisory lock per batch, taken after the
    transaction's own writes, orders them, so the second one sees the first's commit and
    announces the batch (one of them does; a listener's work is idempotent either way).
    """
    batches = sorted(set(Job.objects.filter(pk__in=list(job_ids)).exclude(batch="")
                         .values_list("scope_id", "batch")))
    for scope_id, batch in batches:
        if connection.vendor == "postgresql":
            digest = hashlib.sha256(f"{scope_id}:{batch}".encode()).digest()
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                               [_BATCH_LOCK, int.from_bytes(digest[:4], "big", signed=True)])
        if not Job.objects.filter(scope_id=scope_id, batch=batch, state__in=LIVE).exists():
            _send(batch_finished, scope_id=scope_id, batch=batch, now=now)


def _send(signal: Signal, **kwargs: Any) -> None:
    """Run the signal's listeners inside the current transaction, in a savepoint."""
    try:
        with transaction.atomic():
            signal.send(sender=Job, **kwargs)
    except Exception:  # a listener's failure is logged, never the transition's
        log.exception("a listener of the queue's %s signal failed",
                      "needs-human" if signal is needs_human_changed else "batch-finished")


def db_time(value: datetime) -> Any:
    return connection.ops.adapt_datetimefield_value(value)
