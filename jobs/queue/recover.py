"""Recover: sweep expired leases and passed deadlines, so no job waits on a worker that is gone."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from jobs import sql
from jobs.models import JobEvent
from jobs.writelock import write_transaction

from . import running
from .events import FINISHED, left_live, moves_needs_human, needs_human_now
from .terms import CANCELLED, DEAD, LEASED, QUEUED, RETURNED_UNSTARTED, UNKNOWN


@dataclass(frozen=True)
class Recovery:
    requeued: list[int]
    unknown: list[int]
    dead: list[int]
    cancelled: list[int] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.requeued) + len(self.unknown) + len(self.dead) + len(self.cancelled)


def recover(*, now: datetime | None, limit: int = 500) -> Recovery:
    """Sweep expired leases and passed deadlines, in one bounded transaction.

    Expired lease: back to ``queued``; ``unknown`` if the external-start marker is set
    (nobody may repeat an outside call automatically); ``cancelled`` if someone had asked
    to cancel it (nobody will run it again); ``dead`` if the attempts are spent or the
    deadline passed. Only a claim whose handler was started (``start``) spends its attempt:
    one its worker only held (prefetched, then the worker died) goes back to ``queued`` with
    the attempt given back, recorded as ``RETURNED_UNSTARTED``, so ``dead`` for attempts
    means the handler was started ``max_attempts`` times. The epoch is kept (the next claim
    raises it), so the dead worker's late writes are refused either way. Live jobs past
    their deadline: ``dead`` (``unknown`` if an external call had started). Each UPDATE
    repeats the conditions in its WHERE clause, so a job a worker completed a moment earlier
    is left alone; on PostgreSQL rows locked by another transaction are skipped and swept
    next time. ``now`` None: the database's time, read in the sweep's own transaction
    (``jobs.clock.statement_time``), so no job is expired on a time ahead of the database's.
    """
    database = sql.current()
    moved: dict[str, list[int]] = {QUEUED: [], UNKNOWN: [], DEAD: [], CANCELLED: []}
    events: list[JobEvent] = []
    left: Counter[int] = Counter()  # jobs that stopped running, per scope
    with write_transaction():
        now = database.now() if now is None else now
        for expired in database.recover_expired(now, limit):
            moved[expired.state].append(expired.job_id)
            left[expired.scope_id] += 1
            # The way it went (``transitions.EXPIRE``): its error, or the give-back that kept the last one.
            why = RETURNED_UNSTARTED if expired.state == QUEUED and not expired.started else expired.last_error
            events.append(JobEvent(job_id=expired.job_id, from_state=LEASED, to_state=expired.state,
                                   epoch=expired.epoch, actor="recovery", reason=why, at=now))
        for from_state in (QUEUED, LEASED):
            for late in database.recover_past_deadline(from_state, now, limit):
                moved[UNKNOWN if late.state == UNKNOWN else DEAD].append(late.job_id)
                if from_state == LEASED:
                    left[late.scope_id] += 1
                events.append(JobEvent(job_id=late.job_id, from_state=from_state, to_state=late.state,
                                       epoch=late.epoch, actor="recovery", reason="deadline passed", at=now))
        running.release_each(left)
        JobEvent.objects.bulk_create(events)
        if any(moves_needs_human(e.from_state, e.to_state) for e in events):
            needs_human_now(now)
        left_live([e.job_id for e in events if e.to_state in FINISHED], now)
    return Recovery(moved[QUEUED], moved[UNKNOWN], moved[DEAD], moved[CANCELLED])
