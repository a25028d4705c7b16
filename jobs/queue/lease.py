"""While the job runs: the lease's renewals, its start, the external-start marker, and the
writes other apps make inside the fence (notes, their own rows)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs import sql
from jobs.models import JobEvent
from jobs.writelock import write_transaction

from .events import record
from .fence import owned_write, rejections, while_owned
from .terms import CANCEL_REQUESTED, DEAD, LEASED, QUEUED, Outcome


def renew(*, job_id: int, epoch: int, now: datetime, lease: timedelta) -> Outcome:
    """Extend the lease to ``now + lease``, never past the deadline (``renew_many`` of one)."""
    return renew_many(leases=[(job_id, epoch, lease)], now=now)[0]


def renew_many(*, leases: Sequence[tuple[int, int, timedelta]], now: datetime) -> list[Outcome]:
    """Extend each (job, epoch, lease) to ``now + lease``, never past its deadline: one statement.

    A worker holding several claims (one running, the rest prefetched) renews them together.
    Each row is fenced by its own epoch, lease and deadline. Renewals are not transitions and
    leave no event; a rejected renewal does. A renewal tells the worker when someone asked to
    cancel the job (``Outcome.reason``).
    """
    if not leases:
        return []
    with write_transaction():
        renewed = sql.current().renew(leases, now)
        gone = rejections([(job_id, epoch) for job_id, epoch, _ in leases if job_id not in renewed], now,
                          actor="queue", write="renewal")
    return [Outcome(True, LEASED, CANCEL_REQUESTED if renewed[job_id] else "") if job_id in renewed
            else Outcome(False, None, gone[job_id, epoch]) for job_id, epoch, _ in leases]


def start(*, job_id: int, epoch: int, now: datetime) -> Outcome:
    """The worker hands this epoch's job to its handler: from here its attempt is spent
    (``start_many`` of one)."""
    return start_many(claims=[(job_id, epoch)], now=now)[0]


def start_many(*, claims: Sequence[tuple[int, int]], now: datetime) -> list[Outcome]:
    """Record that these (job, epoch) claims start now: from here their attempts are spent.

    Written before the handler runs, each row fenced like a completion: a claim recovered or
    superseded while it was held is refused (and the refusal is on the timeline), so it is
    never started. A claim whose lease runs out before this write was only held, and
    recovery gives its attempt back (``recover``). One short statement that does not wait for
    the disk (``jobs.sql``): it must survive the worker's death, not a power cut,
    whose only cost would be an attempt given back. A worker records each job alone, right
    before its handler runs (``Worker._record_start``).
    """
    if not claims:
        return []
    applied = sql.current().start(claims, now)
    refused = [c for c in claims if c[0] not in applied]
    reasons: dict[tuple[int, int], str] = {}
    if refused:
        with write_transaction():
            reasons = rejections(refused, now, actor="worker", write="start")
    return [Outcome(True, LEASED) if c[0] in applied else Outcome(False, None, reasons[c]) for c in claims]


def mark_external_start(*, job_id: int, epoch: int, now: datetime, what: str = "external call",
                        min_left: timedelta = timedelta(0), also: Callable[[], object] | None = None) -> Outcome:
    """Commit the marker *before* any outside call: after it, an expired lease means unknown.

    Only while the lease has at least ``min_left`` to run: an outside call started on a
    lease about to lapse (renewals failing, say) would likely outlive it, and another host
    would then find the job ``unknown`` for nothing. ``also`` runs in the marker's transaction:
    the kind's own record of the call (what was asked, its idempotency key) commits with the
    marker or not at all, which is what staff read to settle an ``unknown`` job.
    """
    return owned_write(job_id, epoch, now, write="external start", note=f"external start: {what}",
                        lease_left=min_left, also=also, external_started_at=now)


def clear_external_start(*, job_id: int, epoch: int, now: datetime, what: str = "external call") -> Outcome:
    """The outside call finished and its outcome is saved: a crash from here is safe again."""
    return owned_write(job_id, epoch, now, write="external settle", note=f"external call settled: {what}",
                        external_started_at=None)


# The reason of the note a failed job gets when a member submits its input again; the new
# job's id follows it. The submitter's timeline reads it (``web.wording.timeline``). The new job
# gets the other end (``RESUBMITTED_FROM`` and the failed job's id): each page links the other.
RESUBMITTED_AS = "submitted again as job "
RESUBMITTED_FROM = "submitted again from job "


def record_resubmission(*, job_id: int, epoch: int, new_job_id: int, actor: str, now: datetime) -> None:
    """Say on a failed job's timeline who submitted its input again, and as which job; and on the
    new job's, which job it repeats. Notes both (no state moves), in one transaction."""
    with write_transaction():
        record(job_id, DEAD, "", epoch, actor=actor, reason=f"{RESUBMITTED_AS}{new_job_id}", now=now)
        record(new_job_id, QUEUED, "", 0, actor=actor, reason=f"{RESUBMITTED_FROM}{job_id}", now=now)


@dataclass(frozen=True)
class Resubmission:
    """The jobs a job's input was sent again as (the newest), and sent again from: from its notes."""

    as_job: int | None = None
    from_job: int | None = None


def resubmission(events: Iterable[JobEvent]) -> Resubmission:
    """Read ``record_resubmission``'s notes among a job's events (no query)."""
    as_job = from_job = None
    for event in events:
        if event.to_state:
            continue
        for prefix in (RESUBMITTED_AS, RESUBMITTED_FROM):
            number = event.reason.removeprefix(prefix) if event.reason.startswith(prefix) else ""
            if number.isdigit():
                if prefix == RESUBMITTED_AS:
                    as_job = int(number)
                else:
                    from_job = int(number)
    return Resubmission(as_job, from_job)


def note(*, job_id: int, epoch: int, actor: str, reason: str, now: datetime) -> None:
    """Put something that moved no state on the job's timeline (a refused tool proposal).

    Call it inside ``fenced()``, so only the epoch that owns the job can write one.
    """
    record(job_id, LEASED, "", epoch, actor=actor, reason=reason, now=now)


@contextmanager
def fenced(*, job_id: int, epoch: int, now: datetime) -> Iterator[None]:
    """A transaction that holds only while ``epoch`` still owns the job.

    Other apps write their per-job rows (the agent's checkpoint) inside it, so a stale
    worker cannot write one: it gets ``StaleEpoch``, and the rejection is on the timeline.
    """
    with while_owned(job_id, epoch, now, write="fenced write"):
        yield
