"""The queue's statements on SQLite.

Every write transaction is ``BEGIN IMMEDIATE`` behind a fair cross-process lock
(``jobs.writelock``), so a claim holds the single write lock for a few short statements:
stamp the jobs come due (if any), pick, count the scope's running job (if it keeps a count),
lease, events. The index hints (``INDEXED BY``) hold the planner to the seeks the statements
were written for. The hot path's statements are for the sqlite3 driver (``:name``); the
colder ones go through Django's cursor (``%(name)s``, which it translates).
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections

from jobs.queue import transitions as tr
from jobs.queue.transitions import Sql
from jobs.writelock import raw_write_transaction, relaxed_statement

from . import Claimed, ClaimParams, Completing, Expired, Leased, PastDeadline, Result, execute_raw
from . import fragments as f
from .fragments import JOB, SCOPE, SCOPE_ID, sqlite_driver

# The statements, for the sqlite3 driver; the benchmarks' bare loop runs them too.
ANY_DUE = sqlite_driver(f"""
    SELECT 1 FROM {JOB} INDEXED BY job_due_idx
    WHERE state = 'queued' AND turn IS NULL AND available_at <= %(now)s LIMIT 1""")


@functools.cache
def stamp_one(fair: bool = True) -> str:
    """Give one queued job (``job_id``) its turn."""
    return sqlite_driver(f.stamp_one("MAX", fair))


@functools.cache
def stamp_due(fair: bool = True) -> str:
    """Give their turn to up to ``due_batch`` queued jobs whose time has come (``now``).

    The rows are looked up by the subquery's ids, on the primary key: SQLite would otherwise
    go through the state index, over every queued job (NOT INDEXED leaves it the primary key).
    """
    return sqlite_driver(f"""
        UPDATE {JOB} NOT INDEXED SET turn = {f.stamp("MAX", fair)}
        WHERE id IN ({f.due(hint="INDEXED BY job_due_idx")}) AND state = 'queued' AND turn IS NULL""")


# In the claim's transaction: the job whose turn it is (``now``, ``candidates``), its scope,
# and whether that scope keeps a running count. The candidates stream off the claim index in
# order (a co-routine), and the first whose scope is under its limit is taken: usually the
# very first, at most ``candidates`` looked at. The scope is checked by correlated lookups
# rather than a join, which SQLite would answer by building a filter over every scope first.
# Whether the job's kind has a running limit (the candidates left out kinds at theirs), and the kind.
PICK = sqlite_driver(f"""
    SELECT c.id, c.{SCOPE_ID},
           EXISTS (SELECT 1 FROM {SCOPE} t WHERE t.id = c.{SCOPE_ID} AND t.max_running IS NOT NULL),
           {f.kind_limited("c.kind")}, c.kind
    FROM ({f.candidates(hint="INDEXED BY job_claim_idx")}) c
    WHERE NOT {f.AT_LIMIT}
    LIMIT 1""")

# A limited kind's job is leased (``job_id`` on its new ``epoch``): it takes a free slot of its
# ``kind`` (the pick saw one, under the same write lock).
TAKE_SLOT = sqlite_driver(f"""
    UPDATE {f.KINDSLOT} SET job_id = %(job_id)s, epoch = %(epoch)s
    WHERE id = (SELECT s.id FROM {f.KINDSLOT} s WHERE s.kind = %(kind)s AND {f.slot_free("s")}
                ORDER BY s.number LIMIT 1)""")

# A limited scope's job starts running (``scope_id``): checked and counted in one write.
COUNT_RUNNING = sqlite_driver(f"""
    UPDATE {SCOPE} SET running = running + 1
    WHERE id = %(scope_id)s AND max_running IS NOT NULL AND running < max_running""")

# Lease the picked job (``job_id``; ``expires``, ``worker``, ``now``).
LEASE = sqlite_driver(f"""
    UPDATE {JOB} SET {f.lease_set("MIN")}
    WHERE id = %(job_id)s AND {tr.state_is(*tr.CLAIM.source).sql(Sql())}
    RETURNING {f.CLAIM_RETURNING}""")

# The fenced completion of one job; returns its scope, whose count ``RELEASE_RUNNING`` lowers.
COMPLETE = sqlite_driver(f"{f.COMPLETE} RETURNING {SCOPE_ID}")

# Jobs of a limited scope stopped running (``jobs`` of them, ``scope_id``).
RELEASE_RUNNING = sqlite_driver(f"""
    UPDATE {SCOPE} SET running = MAX(running - %(jobs)s, 0)
    WHERE id = %(scope_id)s AND max_running IS NOT NULL""")

EVENT = sqlite_driver(f.EVENT_SQL)

# Recovery's statements, on Django's cursor.
RECOVER_EXPIRED = f.recover_expired(hint="INDEXED BY job_lease_idx")
RECOVER_PAST_DEADLINE = f.recover_past_deadline()


@functools.cache
def complete_many(rows: int) -> str:
    """A batch of ``rows`` fenced completions as one statement.

    Parameters: ``now``, then per row n its ``job_id_n``, ``epoch_n``, ``result_n`` and the four
    summary columns. Each row is matched on its own id and epoch (a primary-key lookup per row)
    and must still be leased with lease and deadline unexpired; returns (id, epoch, scope) of
    each that applied.
    """
    values = ", ".join("(" + ", ".join(f":{name}_{n}" for name in tr.COMPLETE_INPUTS) + ")" for n in range(rows))
    sets, guard = f.complete_batch("b", [f"column{n}" for n in range(1, len(tr.COMPLETE_INPUTS) + 1)], JOB)
    return sqlite_driver(f"""
        UPDATE {JOB} SET {sets}
        FROM (VALUES {values}) AS b
        WHERE {guard}
        RETURNING {JOB}.id, {JOB}.epoch, {JOB}.{SCOPE_ID}""")


@functools.cache
def start(rows: int) -> str:
    """Record the start of ``rows`` claims (``job_id_n``, ``epoch_n``) at ``now``, each fenced
    like a completion; returns the ids that applied. Committed at ``synchronous=NORMAL``
    (``durable=False``): it must survive the worker's death, not a power cut."""
    owned = " OR ".join(f"({tr.OWNS.sql(Sql(params={'job_id': f'%(job_id_{n})s', 'epoch': f'%(epoch_{n})s'}))})"
                        for n in range(rows))
    return sqlite_driver(f"UPDATE {JOB} SET {tr.START.set_sql(Sql())} "
                         f"WHERE {tr.HELD.sql(Sql())} AND ({owned}) RETURNING id")


@functools.cache
def renew(rows: int) -> str:
    return f.renew("MIN", rows)


def complete_in(cursor: Any, results: Sequence[Result], now: datetime, actor: str) -> frozenset[tuple[int, int]]:
    """The fenced completions in the cursor's transaction: one statement for the rows, one for
    their events, one per limited scope; the (id, epoch) that applied."""
    t_now = time(now)
    binding: dict[str, Any] = {"now": t_now}
    adapt = connections[DEFAULT_DB_ALIAS].ops.adapt_json_value
    for n, r in enumerate(results):
        binding.update({f"job_id_{n}": r.job_id, f"epoch_{n}": r.epoch, f"result_{n}": adapt(r.result, None),
                        f"outcome_{n}": r.outcome, f"outcome_text_{n}": r.outcome_text,
                        f"needs_action_{n}": r.needs_action, f"reference_{n}": r.reference})
    done = cursor.execute(complete_many(len(results)), binding).fetchall()
    left: Counter[int] = Counter(scope_id for _, _, scope_id in done)
    for scope_id, jobs in left.items():
        cursor.execute(RELEASE_RUNNING, {"jobs": jobs, "scope_id": scope_id})
    cursor.executemany(EVENT, [{"job_id": job_id, **f.event_values(tr.COMPLETE), "epoch": epoch, "actor": actor,
                                "at": t_now} for job_id, epoch, _ in done])
    return frozenset((job_id, epoch) for job_id, epoch, _ in done)


def time(value: datetime) -> str:
    """A timestamp as Django stores it on SQLite: naive UTC text."""
    return str(value.astimezone(UTC).replace(tzinfo=None))


def py_time(value: Any) -> datetime:
    """A timestamp read back from the driver, aware (UTC)."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def leased(row: tuple[Any, ...]) -> Leased:
    """A leased row (``CLAIM_RETURNING``) as the claim's ``Leased``."""
    job_id, kind, _state, epoch, attempts, lease_expires_at, deadline, payload, scope_id = row
    return Leased(job_id=job_id, kind=kind, epoch=epoch, attempts=attempts, lease_expires_at=py_time(lease_expires_at),
                  deadline=py_time(deadline), scope_id=scope_id,
                  payload=json.loads(payload) if isinstance(payload, (str, bytes)) else payload)


class SQLite:
    vendor = "sqlite"

    def time(self, value: datetime) -> str:
        return time(value)

    def stamp_one(self, job_id: int, *, fair: bool) -> None:
        execute_raw(stamp_one(fair), {"job_id": job_id})

    def notify_accepted(self) -> None:
        """SQLite's workers poll."""

    def notify_cancel(self, job_id: int, epoch: int) -> None:
        """SQLite's workers look for requests of the jobs they hold twice a second (``jobs.worker``)."""

    def claim(self, params: ClaimParams, *, fair: bool, picks: int, completing: Completing | None = None) -> Claimed:
        binding = params.binding(time)
        rows: list[Leased] = []
        with raw_write_transaction() as cursor:
            completed = frozenset() if completing is None else complete_in(
                cursor, completing.results, completing.now, completing.actor)
            if params.now is None:  # dated once the write lock is held: this host's clock is the database's
                at = datetime.now(UTC)
                binding.update(now=time(at), expires=time(at + params.lease))
            if cursor.execute(ANY_DUE, binding).fetchone():
                cursor.execute(stamp_due(fair), binding)
            for _pick in range(picks):
                picked = cursor.execute(PICK, binding).fetchone()
                if picked is None:
                    break
                job_id, scope_id, counted, kind_limited, kind = picked
                if counted:  # a scope with a running limit: count it (it is under the limit)
                    cursor.execute(COUNT_RUNNING, {"scope_id": scope_id})
                row = cursor.execute(LEASE, {**binding, "job_id": job_id}).fetchone()
                if row is not None:
                    rows.append(leased(row))
                    if kind_limited and cursor.execute(TAKE_SLOT, {"job_id": job_id, "epoch": row[3],
                                                                   "kind": kind}).rowcount != 1:
                        raise DatabaseError(f"no free {kind} slot for the job just picked")  # rolls the claim back
            cursor.executemany(EVENT, [{"job_id": row.job_id, **f.event_values(tr.CLAIM), "epoch": row.epoch,
                                        "actor": params.actor, "at": binding["now"]} for row in rows])
        return Claimed(rows, completed=completed)

    def now(self) -> datetime:
        """One host: the database's clock is this host's."""
        return datetime.now(UTC)

    def renew(self, leases: Sequence[tuple[int, int, timedelta]], now: datetime) -> dict[int, bool]:
        binding: dict[str, Any] = {"now": time(now)}
        for n, (job_id, epoch, lease) in enumerate(leases):
            binding.update({f"job_id_{n}": job_id, f"epoch_{n}": epoch, f"expires_{n}": time(now + lease)})
        with connection.cursor() as cursor:
            cursor.execute(renew(len(leases)), binding)
            return {job_id: asked is not None for job_id, asked in cursor.fetchall()}

    def start(self, claims: Sequence[tuple[int, int]], now: datetime) -> set[int]:
        binding: dict[str, Any] = {"now": time(now)}
        for n, (job_id, epoch) in enumerate(claims):
            binding.update({f"job_id_{n}": job_id, f"epoch_{n}": epoch})
        return {job_id for (job_id,) in relaxed_statement(start(len(claims)), binding)}

    def complete(self, results: Sequence[Result], now: datetime, actor: str) -> set[tuple[int, int]]:
        with raw_write_transaction() as cursor:
            return set(complete_in(cursor, results, now, actor))

    def recover_expired(self, now: datetime, limit: int) -> list[Expired]:
        with connection.cursor() as cursor:
            cursor.execute(RECOVER_EXPIRED, {"now": time(now), "limit": limit})
            # (The columns themselves, not an IS NULL of them: SQLite 3.40.1's RETURNING answers
            # "started_at IS NULL" with 0 for a NULL started_at on this table, which has NOT NULL
            # columns; reproduced with a three-column table.)
            return [Expired(job_id, state, epoch, why, scope_id, started_at is not None or external_at is not None)
                    for job_id, state, epoch, why, scope_id, started_at, external_at in cursor.fetchall()]

    def recover_past_deadline(self, from_state: str, now: datetime, limit: int) -> list[PastDeadline]:
        with connection.cursor() as cursor:
            cursor.execute(RECOVER_PAST_DEADLINE, {"from_state": from_state, "now": time(now), "limit": limit})
            return [PastDeadline(*row) for row in cursor.fetchall()]
