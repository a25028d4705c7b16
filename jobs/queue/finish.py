"""Finish: a running job's result, its failure, its deferral, or its hand-back unstarted."""

from __future__ import annotations

import json
import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from jobs import kinds, sql
from jobs.models import Job
from jobs.writelock import write_transaction

from ..conf import queue_settings
from . import running
from .events import record
from .fence import held, held_row, rejected, rejections
from .terms import COMPLETED, LEASED, MAX_FAILURE_CODE, QUEUED, Claim, Outcome
from .transitions import DEFER, FAIL, GIVE_BACK


@dataclass(frozen=True)
class Completion:
    """One finished job's result, for ``complete_many``."""

    job_id: int
    epoch: int
    result: dict[str, Any]
    summary: kinds.Summary | None = None


def complete(*, job_id: int, epoch: int, result: dict[str, Any], now: datetime, actor: str = "worker",
             summary: kinds.Summary | None = None) -> Outcome:
    """Save the result (and the kind's summary of it): only for this epoch, still leased,
    lease and deadline unexpired."""
    return complete_many(completions=[Completion(job_id, epoch, result, summary)], now=now, actor=actor)[0]


def complete_many(*, completions: Sequence[Completion], now: datetime, actor: str = "worker") -> list[Outcome]:
    """Save several results in one transaction (one fsync), each row fenced on its own.

    Every row's UPDATE carries its own epoch, lease and deadline in the WHERE clause, so a
    row whose claim was superseded or ran out changes nothing while the rest apply; it is
    reported (and recorded as a rejection) for that job alone. Nothing about the batch is
    visible to anyone before its commit.
    """
    if not completions:
        return []
    applied = sql.current().complete([sql.result(c.job_id, c.epoch, c.result, c.summary) for c in completions],
                                     now, actor)
    return completion_outcomes(completions, applied, now, actor)


def completion_outcomes(completions: Sequence[Completion], applied: Collection[tuple[int, int]], now: datetime,
                        actor: str) -> list[Outcome]:
    """Each completion's outcome, once its batch committed (``applied``: the (id, epoch) that
    did); the refused ones' rejections recorded, each for its job alone."""
    refused = [(c.job_id, c.epoch) for c in completions if (c.job_id, c.epoch) not in applied]
    if refused:
        applied = {*applied, *_committed_before([c for c in completions if (c.job_id, c.epoch) in set(refused)])}
        refused = [claim for claim in refused if claim not in applied]
    reasons: dict[tuple[int, int], str] = {}
    if refused:
        with write_transaction():
            reasons = rejections(refused, now, actor=actor, write="stale completion")
    return [Outcome(True, COMPLETED) if (c.job_id, c.epoch) in applied
            else Outcome(False, None, reasons[c.job_id, c.epoch]) for c in completions]


def _committed_before(completions: Sequence[Completion]) -> set[tuple[int, int]]:
    """The completions already saved: their job completed at their epoch, with their very result. Their
    batch committed before and the database went away with its answer, so the worker tried it again; the
    fence refusing it now is that commit, not a stale claim's (only the claim holding the epoch completes it)."""
    mine = {(c.job_id, c.epoch): json.loads(json.dumps(c.result)) for c in completions}
    saved = Job.objects.filter(pk__in={job_id for job_id, _ in mine}, state=COMPLETED).values_list("pk", "epoch",
                                                                                                     "result")
    return {(pk, epoch) for pk, epoch, result in saved if (pk, epoch) in mine and mine[pk, epoch] == result}


def give_back_unstarted(*, claims: Sequence[Claim], now: datetime, actor: str = "worker",
                        reason: str = "handed back unstarted") -> list[Outcome]:
    """Prefetched jobs this worker will not start: ``queued`` again at once, attempt not spent.

    Each is fenced like a completion (its epoch, still leased, lease and deadline unexpired)
    and must carry no external-start marker (nothing of it ran). The epoch is kept (the next
    claim raises it) and so is the job's turn: it was its turn when it was claimed, and it is
    served next. One transaction for all of them.
    """
    outcomes: list[Outcome] = []
    with write_transaction():
        for c in claims:
            params = {"job_id": c.job_id, "epoch": c.epoch, "now": now}
            job = held(c.job_id, c.epoch, now)
            if job is None:
                outcomes.append(rejected(c.job_id, c.epoch, now, actor=actor, write="hand-back"))
                continue
            if job.external_started_at is not None:
                why = "external start recorded"
                record(c.job_id, LEASED, "", c.epoch, actor=actor, reason=f"hand-back rejected: {why}", now=now)
                outcomes.append(Outcome(False, None, why))
                continue
            running.stop(job, c.epoch, to=QUEUED, actor=actor, why=reason, now=now,
                         only_if=GIVE_BACK.guard.q(params), **GIVE_BACK.changes({}, params))
            outcomes.append(Outcome(True, QUEUED, reason))
    return outcomes


def fail(
    *,
    job_id: int,
    epoch: int,
    error: str,
    code: str,
    now: datetime,
    retryable: bool = True,
    actor: str = "worker",
    rng: random.Random | None = None,
) -> Outcome:
    """A failed attempt: back to ``queued`` after a jittered backoff, or ``dead``.

    Dead when the failure is not retryable, the attempts are spent, or the next try could
    only start after the deadline. A failure after the external-start marker is ``unknown``:
    nobody can say whether the outside effect happened (the rule is ``transitions.FAIL``).
    Like ``complete``, it holds only for this epoch while its lease and the deadline hold:
    past them the claim is no longer the worker's to settle, and recovery decides (``queued``,
    ``dead`` or ``unknown``). ``code`` (a ``FailureCode`` or the kind's own) is kept with
    ``error`` whatever the state it leaves: the pages choose their words by it.
    """
    error, code = error[:1000], code[:MAX_FAILURE_CODE]
    with write_transaction():
        job = held(job_id, epoch, now)
        if job is None:
            return rejected(job_id, epoch, now, actor=actor, write="failure report")
        row = held_row(job)
        params = {"retryable": retryable, "retry_at": now + backoff(job.attempts, rng=rng), "now": now,
                  "error": error, "code": code}
        way = FAIL.way(row, params)  # queued: a new turn when the backoff is over
        running.stop(job, epoch, to=way.to, actor=actor, why=way.reason(row), now=now, **FAIL.changes(row, params))
    return Outcome(True, way.to, way.reason(row))


def defer(*, job_id: int, epoch: int, until: datetime, now: datetime, reason: str, actor: str = "worker") -> Outcome:
    """Hand the job back until ``until`` without spending the attempt.

    For an outside system that said "not now" (a 429 with Retry-After: it did nothing, so
    the external-start marker is cleared) and for a worker shutting down before it began.
    Dead if ``until`` is not before the deadline. Fenced like ``complete``.
    """
    with write_transaction():
        job = held(job_id, epoch, now)
        if job is None:
            return rejected(job_id, epoch, now, actor=actor, write="deferral")
        row = held_row(job)
        params = {"until": until, "now": now, "error": f"{reason}; no time left before the deadline"}
        to = DEFER.way(row, params).to
        running.stop(job, epoch, to=to, actor=actor, why=f"deferred: {reason}"[:300], now=now,
                     **DEFER.changes(row, params))
    return Outcome(True, to, reason)


def backoff(attempts: int, *, rng: random.Random | None = None) -> timedelta:
    """Exponential backoff with jitter: base * 2^(n-1), capped, scaled by 50-100%."""
    base = queue_settings().retry_base_seconds * 2 ** max(attempts - 1, 0)
    capped = min(base, queue_settings().retry_max_seconds)
    return timedelta(seconds=capped * (0.5 + 0.5 * (rng or random).random()))
