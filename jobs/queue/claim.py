"""Claim: lease the jobs whose turn it is, scopes taking turns (``jobs.sql``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from jobs import sql

from ..conf import queue_settings
from .finish import Completion, completion_outcomes
from .terms import Claim, Outcome


def claim(*, now: datetime | None, worker: str, lease: timedelta | None = None) -> Claim | None:
    """Lease the job whose turn it is to ``worker``, or return None (``claim_many`` of one)."""
    claims = claim_many(now=now, worker=worker, lease=lease, limit=1)
    return claims[0] if claims else None


def claim_many(*, now: datetime | None, worker: str, lease: timedelta | None = None, limit: int = 1) -> list[Claim]:
    """Lease up to ``limit`` jobs to ``worker`` in one transaction, each in its turn.

    Scopes take turns (``jobs.sql``): each pick takes the first claimable job in (priority,
    turn) order, passing over scopes at their running limit, and sees the picks before it,
    so a batch of claims is the same jobs, in the same order, as that many single claims. Each
    job's epoch and attempt count grow by one and its lease is set, never past the deadline.
    Queued jobs already past their deadline are left to ``recover``, which makes them
    ``dead``. One commit (one fsync) covers the whole batch. PostgreSQL may answer that a pick
    lost a race or only stamped jobs come due: then it asks again, up to three times in all.
    ``now`` None: the claim takes the database's time as it runs (``jobs.clock.statement_time``).
    """
    return _claim(now=now, worker=worker, lease=lease, limit=limit)[0]


def complete_and_claim(*, completions: Sequence[Completion], completed_at: datetime, now: datetime | None,
                       worker: str, lease: timedelta | None = None, limit: int = 1,
                       actor: str = "worker") -> tuple[list[Outcome], list[Claim]]:
    """``complete_many`` then ``claim_many``, in one transaction: a worker's finished batch and
    its next claim share one commit (one fsync) and, on PostgreSQL, one round trip, where
    they took two of each. Each completion is fenced on its own as ``complete_many``'s are,
    with its event; the picks see them done (their scopes' places and kinds' slots free).
    Nothing of either is visible before the commit; if it fails, neither applies."""
    completing = sql.Completing([sql.result(c.job_id, c.epoch, c.result, c.summary) for c in completions],
                                completed_at, actor)
    claims, applied = _claim(now=now, worker=worker, lease=lease, limit=limit, completing=completing)
    return completion_outcomes(completions, applied, completed_at, actor), claims


def _claim(*, now: datetime | None, worker: str, lease: timedelta | None, limit: int,
           completing: sql.Completing | None = None) -> tuple[list[Claim], frozenset[tuple[int, int]]]:
    """The claims, and the completions the first transaction committed before its picks."""
    lease = lease or queue_settings().lease
    database = sql.current()
    params = sql.ClaimParams(now=now, expires=None if now is None else now + lease, worker=worker,
                             actor=f"worker:{worker}", lease=lease)
    fair = queue_settings().fair_claims
    claims: list[Claim] = []
    completed: frozenset[tuple[int, int]] = frozenset()
    for _ in range(3):
        answer = database.claim(params, fair=fair, picks=limit - len(claims), completing=completing)
        completed, completing = completed | answer.completed, None  # committed: never sent again
        claims += (Claim(job_id=row.job_id, kind=row.kind, epoch=row.epoch, attempt=row.attempts,
                         lease_expires_at=row.lease_expires_at, deadline=row.deadline, payload=row.payload,
                         worker=worker, lease=lease) for row in answer.leased)
        if not answer.retry or len(claims) >= limit:
            break
    return claims, completed
