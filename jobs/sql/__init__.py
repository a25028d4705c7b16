"""The queue's hand-written statements: one module per database, behind one interface.

The hot path (claim, start, complete) runs on the driver's cursor (``jobs.writelock``): the
ORM's per-query overhead would dominate a loop whose database work is a few tens of
microseconds. Each database's module (``sqlite``, ``postgresql``) builds its statements once
and runs them; ``current()`` picks the module of the connection's database, so the queue's
operations (``jobs.queue``) hold no SQL and ask no ``vendor``. Every statement binds named
parameters (``%(now)s``; SQLite's driver spells them ``:now``), and the rows come back as the
small frozen dataclasses below. The benchmarks' bare loops run these same statements.

Fair claims. Every queued job carries a *turn*, its place in the order of claims. A job
that becomes claimable is stamped ``max(head, scope's last turn + stride)``: the head is
the earliest turn still waiting (at the job's priority), the scope's last turn the latest
one its own waiting jobs hold, and the stride ``STRIDE / weight``. A scope with a backlog
queues behind itself; a scope that had nothing waiting starts at the head, so it is served
within a couple of claims however much others have queued; a scope of weight 2 advances
half as far per job, so it gets twice the turns. The claim then takes the first entry of
one index (priority, turn, id): an index seek, the same work as a first-in first-out claim.
Jobs waiting for their time (a retry's backoff, a later start) carry no turn until they are
due; each claim stamps a few that have come due.

A scope's running count (``Scope.running``, kept only for a scope with a running limit) is
raised by the claim statement and lowered by the completion statement, each in the same
statement or transaction as the job's own row; the colder moves out of ``leased`` lower it
through ``jobs.queue.running``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from django.db import DEFAULT_DB_ALIAS, connections

STRIDE = 1_000_000  # turn units per job of a scope of weight 1
CANDIDATES = 64  # claimable jobs looked at per claim, in turn order, past scopes at their limit
DUE_BATCH = 32  # jobs come due that one claim stamps
# PostgreSQL: a cancel request of a running job is announced on this channel ("job:epoch").
CANCEL_CHANNEL = "jobs_cancel"


@dataclass(frozen=True, slots=True)
class ClaimParams:
    """What one pick of a claim binds, by the names its statements use.

    ``now`` None: the claim is dated by the database as it runs (``jobs.clock.statement_time``),
    its lease ending ``lease`` after that; ``expires`` is then None too.
    """

    now: datetime | None
    expires: datetime | None  # the lease asked for (the statement keeps it before the deadline)
    worker: str
    actor: str
    due_batch: int = DUE_BATCH
    candidates: int = CANDIDATES
    lease: timedelta = timedelta(0)

    def binding(self, time: Any) -> dict[str, Any]:
        """The named parameters, with the times as ``time`` gives them to the driver."""
        return {"now": None if self.now is None else time(self.now), "due_batch": self.due_batch,
                "candidates": self.candidates, "expires": None if self.expires is None else time(self.expires),
                "worker": self.worker, "actor": self.actor, "lease": self.lease}


@dataclass(frozen=True, slots=True)
class Leased:
    """A job a claim leased, as its row came back."""

    job_id: int
    kind: str
    epoch: int
    attempts: int
    lease_expires_at: datetime
    deadline: datetime
    payload: dict[str, Any]
    scope_id: int


@dataclass(frozen=True, slots=True)
class Claimed:
    """What one claim's transaction leased; ``retry``: a pick found nothing only because of a
    race or of jobs it had just stamped (PostgreSQL), so asking again may find one;
    ``completed``: the (id, epoch) of the completions it committed first (``Completing``)."""

    leased: list[Leased]
    retry: bool = False
    completed: frozenset[tuple[int, int]] = frozenset()


@dataclass(frozen=True, slots=True)
class Result:
    """One fenced completion's values: its job, epoch, result and the summary's columns."""

    job_id: int
    epoch: int
    result: dict[str, Any]
    outcome: str = ""
    outcome_text: str = ""
    needs_action: bool = False
    reference: str = ""


@dataclass(frozen=True, slots=True)
class Completing:
    """Fenced completions a claim commits in its own transaction before its picks: one commit
    and (PostgreSQL) one round trip for a worker's finished batch and its next claim."""

    results: Sequence[Result]
    now: datetime
    actor: str


@dataclass(frozen=True, slots=True)
class Expired:
    """A job whose lease ran out, as recovery moved it."""

    job_id: int
    state: str
    epoch: int
    last_error: str
    scope_id: int
    started: bool  # its handler was started (or its external-start marker written)


@dataclass(frozen=True, slots=True)
class PastDeadline:
    """A queued or leased job past its deadline, as recovery moved it."""

    job_id: int
    state: str
    epoch: int
    scope_id: int


def summary_values(summary: object | None) -> tuple[str, str, bool, str]:
    """A kind's summary as its columns (outcome, text, needs action, reference), cut to size."""
    if summary is None:
        return ("", "", False, "")
    return (summary.outcome[:32], summary.text[:100], summary.needs_action,  # type: ignore[attr-defined]
            summary.reference[:200])  # type: ignore[attr-defined]


def result(job_id: int, epoch: int, result: dict[str, Any], summary: object | None) -> Result:
    """A completion's ``Result``, its summary cut to the columns' sizes."""
    outcome, text, needs_action, reference = summary_values(summary)
    return Result(job_id, epoch, result, outcome, text, needs_action, reference)


class Database(Protocol):
    """What each database's module does for the queue, each in the caller's transaction unless
    it says it is one of its own."""

    vendor: str

    def time(self, value: datetime) -> Any:
        """A timestamp as the driver binds it for Django's columns."""

    def stamp_one(self, job_id: int, *, fair: bool) -> None:
        """Give one queued job (just accepted, claimable now) its turn."""

    def notify_accepted(self) -> None:
        """Wake idle workers (at commit), where the database can."""

    def notify_cancel(self, job_id: int, epoch: int) -> None:
        """Tell a running job's worker at once (at commit) that someone asked to cancel it."""

    def claim(self, params: ClaimParams, *, fair: bool, picks: int, completing: Completing | None = None) -> Claimed:
        """Up to ``picks`` jobs in their turns, leased with their events: one transaction,
        which first commits ``completing`` (as ``complete`` would), so the picks see them."""

    def now(self) -> datetime:
        """The database's time, in the caller's transaction (for a write it then dates)."""

    def renew(self, leases: Sequence[tuple[int, int, timedelta]], now: datetime) -> dict[int, bool]:
        """Extend the leases still owned; job id -> whether someone asked to cancel it."""

    def start(self, claims: Sequence[tuple[int, int]], now: datetime) -> set[int]:
        """Record these owned claims' start (one transaction, not durable); the ids applied."""

    def complete(self, results: Sequence[Result], now: datetime, actor: str) -> set[tuple[int, int]]:
        """The fenced completions with their events (one transaction); (id, epoch) applied."""

    def recover_expired(self, now: datetime, limit: int) -> list[Expired]:
        """Move up to ``limit`` jobs whose lease ran out (see ``jobs.queue.recover``)."""

    def recover_past_deadline(self, from_state: str, now: datetime, limit: int) -> list[PastDeadline]:
        """Move up to ``limit`` jobs in ``from_state`` past their deadline to ``dead``/``unknown``."""


def execute_raw(statement: str, binding: dict[str, Any]) -> None:
    """A statement on the driver's own cursor, in the current transaction."""
    conn = connections[DEFAULT_DB_ALIAS]
    conn.ensure_connection()
    with conn.wrap_database_errors:
        cursor = conn.connection.cursor()
        try:
            cursor.execute(statement, binding)
        finally:
            cursor.close()


def current() -> Database:
    """The statements of the default connection's database."""
    return for_vendor(_default_vendor())


@functools.cache
def _default_vendor() -> str:
    """The default connection's database, which a process never changes: asked once, not on
    every claim, start and completion (a look-up of the thread's connection each time)."""
    return connections[DEFAULT_DB_ALIAS].vendor


@functools.cache
def for_vendor(vendor: str) -> Database:
    if vendor == "postgresql":
        from .postgresql import PostgreSQL

        return PostgreSQL()
    if vendor == "sqlite":
        from .sqlite import SQLite

        return SQLite()
    raise NotImplementedError(f"the job queue runs on SQLite or PostgreSQL, not {vendor}")
