"""The queue's statements on PostgreSQL.

The claim is one statement that stamps, picks, counts, leases and writes the event; its
subquery takes the row ``FOR UPDATE SKIP LOCKED``, so concurrent claimers pass over each
other's rows instead of queueing behind them. Claims, one or a batch, are one message of
``EXECUTE`` calls of that statement, prepared and planned once per connection.
The completion writes the row, lowers the scope's running count and writes the event in one
statement too. The hot path's statements go to psycopg's cursor that binds on the server and
prepares (``jobs.writelock``); the colder ones through Django's. Both take ``%(name)s``.
"""

from __future__ import annotations

import functools
import json
import weakref
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections

from jobs.queue import transitions as tr
from jobs.queue.transitions import Sql
from jobs.writelock import raw_write_transaction

from . import CANCEL_CHANNEL, Claimed, ClaimParams, Completing, Expired, Leased, PastDeadline, Result, execute_raw
from . import fragments as f
from .fragments import EVENT, JOB, SCOPE, SCOPE_ID


@functools.cache
def stamp_one(fair: bool = True) -> str:
    """Give one queued job (``job_id``) its turn."""
    return f.stamp_one("GREATEST", fair)


@functools.cache
def stamp_due(fair: bool = True) -> str:
    """Give their turn to up to ``due_batch`` queued jobs whose time has come (``now``).

    PostgreSQL may hash-join a scan of the whole table to an IN (...), so the rows are looked
    up by an array of the subquery's ids, on the primary key.
    """
    return f"""
        UPDATE {JOB} SET turn = {f.stamp("GREATEST", fair)}
        WHERE id = ANY(ARRAY({f.due(lock="FOR UPDATE SKIP LOCKED")})) AND state = 'queued' AND turn IS NULL"""


# The first unlocked candidate whose scope is under its limit. The state is checked again on
# the locked row (``j``): a job another claimer took and committed after this statement's
# snapshot is locked all the same, and its newest version, no longer queued, must not be
# picked, or the scope's count would be raised for a job no one claims.
_PICKED = f"""
    SELECT j.id, j.{SCOPE_ID}, j.kind FROM ({f.candidates()}) c
    JOIN {JOB} j ON j.id = c.id
    WHERE j.state = 'queued'
      AND NOT EXISTS (SELECT 1 FROM {SCOPE} t WHERE t.id = c.{SCOPE_ID} AND t.max_running IS NOT NULL
                                                AND t.running >= t.max_running)
    ORDER BY c.priority DESC, c.turn, c.id  -- a join need not keep the candidates' order
    LIMIT 1
    FOR UPDATE OF j SKIP LOCKED"""

# A limited kind's free slot for the picked job, locked (another claimer passes over it); none:
# the kind is at its limit, or unlimited (then it has no slots).
_SLOT = f"""
    SELECT s.id FROM {f.KINDSLOT} s JOIN picked p ON s.kind = p.kind
    WHERE {f.slot_free("s")}
    ORDER BY s.number LIMIT 1
    FOR UPDATE OF s SKIP LOCKED"""
_KIND_OK = f"(EXISTS (SELECT 1 FROM slot) OR NOT EXISTS (SELECT 1 FROM picked p WHERE {f.kind_limited('p.kind')}))"

# A limited scope's count is raised only while it is under its limit (and its kind's slot is had).
_COUNTED = f"""
    UPDATE {SCOPE} SET running = running + 1
    WHERE id IN (SELECT {SCOPE_ID} FROM picked) AND max_running IS NOT NULL AND running < max_running
      AND {_KIND_OK}
    RETURNING id"""

_CLAIMED = f"""
    UPDATE {JOB} SET {f.lease_set("LEAST")}
    WHERE id IN (SELECT id FROM picked) AND {tr.state_is(*tr.CLAIM.source).sql(Sql())}
      AND (EXISTS (SELECT 1 FROM counted)
           OR NOT EXISTS (SELECT 1 FROM {SCOPE} t WHERE t.id = {JOB}.{SCOPE_ID} AND t.max_running IS NOT NULL))
      AND {_KIND_OK}
    RETURNING {f.CLAIM_RETURNING}"""

# The slot is bound to the claimed job's new epoch (only if the job was claimed).
_SLOTTED = f"""
    UPDATE {f.KINDSLOT} SET job_id = c.id, epoch = c.epoch FROM claimed c
    WHERE {f.KINDSLOT}.id IN (SELECT id FROM slot)"""

_RECORDED = f"""
    INSERT INTO {EVENT} (job_id, from_state, to_state, epoch, actor, reason, at)
    {f.event_rows(tr.CLAIM, "claimed")}"""


def database_dated(statement: str) -> str:
    """``statement`` with ``now`` and ``expires`` taken from the server when bound as NULL:
    the statement's own time, and that plus ``lease`` (``ClaimParams``)."""
    return (statement.replace("%(now)s", "COALESCE(%(now)s, statement_timestamp())")
            .replace("%(expires)s", "COALESCE(%(expires)s, statement_timestamp() + %(lease)s)"))


@functools.cache
def claim(fair: bool = True) -> str:
    """The whole claim in one statement, one round trip in autocommit (``ClaimParams``).

    If another claimer took the picked scope's last place meanwhile, no job is claimed and
    the statement says so with a row of state 'busy'. Jobs it stamps are seen only by the next
    statement: when it stamped some and found nothing else, it says so with a row of state
    'stamped'. Either way the caller tries again. Dated by the server when ``now`` is NULL.
    """
    return database_dated(f"""
        WITH stamped AS ({stamp_due(fair)} RETURNING id),
        picked AS ({_PICKED}),
        slot AS ({_SLOT}),
        counted AS ({_COUNTED}),
        claimed AS ({_CLAIMED}),
        slotted AS ({_SLOTTED}),
        recorded AS ({_RECORDED})
        SELECT {f.CLAIM_RETURNING} FROM claimed
        UNION ALL
        SELECT id, NULL, 'busy', NULL, NULL, NULL, NULL, NULL, {SCOPE_ID} FROM picked
        WHERE NOT EXISTS (SELECT 1 FROM claimed)
        UNION ALL
        SELECT NULL, NULL, 'stamped', NULL, NULL, NULL, NULL, NULL, NULL
        WHERE NOT EXISTS (SELECT 1 FROM picked) AND EXISTS (SELECT 1 FROM stamped)""")


CLAIM_PARAMETER_TYPES = {"now": "timestamptz", "due_batch": "bigint", "candidates": "bigint",
                         "expires": "timestamptz", "worker": "text", "actor": "text", "lease": "interval"}


@functools.cache
def prepare_claim(fair: bool = True) -> tuple[str, str, str]:
    """``claim`` as a named prepared statement: (name, PREPARE text, EXECUTE text).

    A batch of claims is sent as one message of the EXECUTE calls (``claim_batch``), so the
    server runs the whole batch without waiting on the client, and each pick keeps the plan
    prepared once per connection. The EXECUTE binds ``ClaimParams`` by name.
    """
    name = "jobs_claim_fair" if fair else "jobs_claim_fifo"
    body = claim(fair)
    order = f.names(body)
    types = ", ".join(CLAIM_PARAMETER_TYPES[p] for p in order)
    execute = f"EXECUTE {name}({', '.join(f'%({p})s' for p in order)})"
    return name, f"PREPARE {name} ({types}) AS {f.numbered(body)}", execute


# Record the start of these claims (``job_ids``, ``epochs`` arrays) at ``now``, each fenced like
# a completion; returns the ids that applied. It need not survive a power cut, only the
# worker's death, so it turns ``synchronous_commit`` off for its own transaction.
START = f"""
    UPDATE {JOB} SET {tr.START.set_sql(Sql())}
    FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relaxed
    WHERE {tr.HELD.sql(Sql())}
      AND (id, epoch) IN (SELECT * FROM unnest(%(job_ids)s::bigint[], %(epochs)s::integer[]))
    RETURNING id"""

# The same for one claim (``job_id``, ``epoch``), as a worker records each start: scalars, which
# the driver binds without building arrays.
START_ONE = f"""
    UPDATE {JOB} SET {tr.START.set_sql(Sql())}
    FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relaxed
    WHERE {tr.START.guard.sql(Sql())}
    RETURNING id"""

# The fenced completion of one job, lowering its scope's count and writing its event (``actor``).
COMPLETE = f"""
    WITH completed AS ({f.COMPLETE} RETURNING id, epoch, {SCOPE_ID}),
    released AS (
        UPDATE {SCOPE} SET running = running - 1
        WHERE id IN (SELECT {SCOPE_ID} FROM completed) AND max_running IS NOT NULL AND running > 0
    )
    INSERT INTO {EVENT} (job_id, from_state, to_state, epoch, actor, reason, at)
    {f.event_rows(tr.COMPLETE, "completed")}"""

_COMPLETE_BATCH = f.complete_batch("b", ("id", "epoch", "result", "outcome", "outcome_text", "needs_action",
                                         "reference"), "j")

# A batch of fenced completions (arrays: ``job_ids``, ``epochs``, ``results`` and the summary
# columns, one element per job) at ``now``, by ``actor``: each row matched on its own id and
# epoch; the rows that apply lower their scopes' counts and write their events in the same
# statement, which returns (id, epoch) of each.
COMPLETE_MANY = f"""
    WITH batch AS (
        SELECT * FROM unnest(%(job_ids)s::bigint[], %(epochs)s::integer[], %(results)s::jsonb[],
                             %(outcomes)s::text[], %(outcome_texts)s::text[], %(needs_actions)s::boolean[],
                             %(references)s::text[]) AS b(id, epoch, result, outcome, outcome_text, needs_action,
                                                          reference)
    ),
    completed AS (
        UPDATE {JOB} j SET {_COMPLETE_BATCH[0]}
        FROM batch b
        WHERE {_COMPLETE_BATCH[1]}
        RETURNING j.id, j.epoch, j.{SCOPE_ID}
    ),
    released AS (
        UPDATE {SCOPE} t SET running = GREATEST(t.running - c.n, 0)
        FROM (SELECT {SCOPE_ID}, COUNT(*) AS n FROM completed GROUP BY {SCOPE_ID}) c
        WHERE t.id = c.{SCOPE_ID} AND t.max_running IS NOT NULL
    ),
    recorded AS (
        INSERT INTO {EVENT} (job_id, from_state, to_state, epoch, actor, reason, at)
        {f.event_rows(tr.COMPLETE, "completed")}
    )
    SELECT id, epoch FROM completed"""

# Recovery's statements: rows another transaction holds (a worker stopped inside its own
# write) are passed over until it lets go, rather than waited for: one stuck process must not
# stop every worker's sweep.
RECOVER_EXPIRED = f.recover_expired(lock="FOR UPDATE SKIP LOCKED")
RECOVER_PAST_DEADLINE = f.recover_past_deadline(lock="FOR UPDATE SKIP LOCKED")


@functools.cache
def renew(rows: int) -> str:
    return f.renew("LEAST", rows)


def aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def leased(row: tuple[Any, ...]) -> Leased:
    """A leased row (``CLAIM_RETURNING``) as the claim's ``Leased``."""
    job_id, kind, _state, epoch, attempts, lease_expires_at, deadline, payload, scope_id = row
    return Leased(job_id=job_id, kind=kind, epoch=epoch, attempts=attempts, lease_expires_at=aware(lease_expires_at),
                  deadline=aware(deadline), scope_id=scope_id,  # the batch's simple query returns the payload as text
                  payload=json.loads(payload) if isinstance(payload, (str, bytes)) else payload)


def claimed(rows: Sequence[tuple[Any, ...] | None]) -> Claimed:
    """The claim statements' rows: the leased ones, and whether a 'busy' or 'stamped' one asks
    the caller to try again."""
    answer = [row for row in rows if row is not None]
    return Claimed([leased(row) for row in answer if row[2] == "leased"],
                   retry=any(row[2] != "leased" for row in answer))


# Before a batch's picks, for its transaction: the prepared claim runs on its one generic plan.
# Left to choose, PostgreSQL plans a custom plan for each of the first five runs, then keeps
# to custom plans for good if the generic one's estimate is much the higher, as it is once
# any kind has a running-limit slot (``KindSlot``, e.g. ``webhook.deliver``'s): then every
# pick planned the whole statement again, ~5 ms, five times the pick itself. A custom plan
# knows nothing more: the claim is dated by the server (``now`` NULL), its limits constant.
GENERIC_PLAN = "SET LOCAL plan_cache_mode = force_generic_plan"


def batch_message(cursor: Any, execute: str, binding: dict[str, Any], picks: int, before: str = "") -> str:
    """The batch's message (``claim_batch``): the generic plan for its transaction, ``before``
    (a statement already bound), then ``picks`` ``EXECUTE``s of the prepared claim, bound on
    the client by ``cursor``."""
    return ";\n".join([GENERIC_PLAN, *([before] if before else []), *[cursor.mogrify(execute, binding)] * picks])


# Per connection (psycopg's), the claim statements it has prepared (``claim_batch``).
_prepared_claims: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def claim_batch(binding: dict[str, Any], picks: int, *, fair: bool = True) -> list[Any]:
    """``picks`` claims in one transaction, sent whole as one message.

    The picks are ``EXECUTE`` calls of the prepared claim (``prepare_claim``) in one
    simple-query message, which the server runs as one implicit transaction, one commit,
    reading nothing more from the client until it has committed or rolled back. So no row
    lock waits on the client: a worker frozen anywhere in the batch (SIGSTOP, a paused VM)
    holds nothing, where a pipeline of separate statements in an open transaction left the
    server waiting for the rest (``active``, ``ClientRead``), beyond the reach of both
    ``statement_timeout`` and ``idle_in_transaction_session_timeout``, its rows locked and
    skipped by every sweep. The parameters are bound on the client (the same for every pick);
    the statement is prepared in the same message the first time on each connection, and
    runs on its generic plan (``GENERIC_PLAN``; inside a caller's transaction, to its end).
    Returns one row (or None) per pick, like that many single claims.
    """
    return send_batch(binding, picks, fair=fair)[1]


def send_batch(binding: dict[str, Any], picks: int, *, fair: bool = True,
               completing: Completing | None = None) -> tuple[list[Any], list[Any]]:
    """``claim_batch``, its message first committing ``completing`` (``COMPLETE_MANY``, bound
    on the client) in the same transaction: (the completions' (id, epoch) rows, the picks')."""
    conn = connections[DEFAULT_DB_ALIAS]
    name, prepare, execute = prepare_claim(fair)
    for attempt in range(2):
        conn.ensure_connection()
        known = _prepared_claims.setdefault(conn.connection, set())
        try:
            return _send_claims(conn.connection, binding, picks=picks, name=name, prepare=prepare, execute=execute,
                                known=known, completing=completing)
        except DatabaseError as exc:
            if attempt or not _retry_prepared(exc, name, known):
                raise
    raise AssertionError("unreachable")


def _send_claims(raw: Any, binding: dict[str, Any], *, picks: int, name: str, prepare: str, execute: str,
                 known: set[str], completing: Completing | None) -> tuple[list[Any], list[Any]]:
    from psycopg import ClientCursor

    with raw_write_transaction(explicit=False):  # Django's errors; a savepoint inside a transaction
        cursor = ClientCursor(raw)
        try:
            before = "" if completing is None else cursor.mogrify(COMPLETE_MANY, complete_binding(completing))
            message = batch_message(cursor, execute, binding, picks, before)
            cursor.execute(message if name in known else f"{prepare};\n{message}")
            known.add(name)
            completed: list[Any] | None = None if before else []  # their rows come first
            rows: list[Any] = []
            while True:
                if cursor.description is not None:  # the PREPARE and the SET return none
                    if completed is None:
                        completed = cursor.fetchall()
                    else:
                        rows.append(cursor.fetchone())
                if not cursor.nextset():
                    return completed or [], rows
        finally:
            cursor.close()


def complete_binding(completing: Completing) -> dict[str, Any]:
    """``COMPLETE_MANY``'s parameters: one array a column, one element per job."""
    adapt = connections[DEFAULT_DB_ALIAS].ops.adapt_json_value
    results = completing.results
    return {"job_ids": [r.job_id for r in results], "epochs": [r.epoch for r in results],
            "results": [adapt(r.result, None) for r in results], "outcomes": [r.outcome for r in results],
            "outcome_texts": [r.outcome_text for r in results], "needs_actions": [r.needs_action for r in results],
            "references": [r.reference for r in results], "now": completing.now, "actor": completing.actor}


def _retry_prepared(exc: DatabaseError, name: str, known: set[str]) -> bool:
    """Whether the batch failed because this connection's prepared statements were not what we
    thought (DEALLOCATE, or a PREPARE whose message failed after it): then know better."""
    from psycopg import errors as pg_errors

    if isinstance(exc.__cause__, pg_errors.DuplicatePreparedStatement):
        known.add(name)
        return True
    if isinstance(exc.__cause__, pg_errors.InvalidSqlStatementName):
        known.discard(name)
        return True
    return False


class PostgreSQL:
    vendor = "postgresql"

    def time(self, value: datetime) -> datetime:
        return value

    def stamp_one(self, job_id: int, *, fair: bool) -> None:
        execute_raw(stamp_one(fair), {"job_id": job_id})

    def notify_accepted(self) -> None:
        """Wake idle workers (LISTEN jobs_accepted): delivered at commit."""
        with connection.cursor() as cursor:
            cursor.execute("NOTIFY jobs_accepted")

    def notify_cancel(self, job_id: int, epoch: int) -> None:
        """The job's worker's listener hears it at commit."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%(channel)s, %(message)s)",
                           {"channel": CANCEL_CHANNEL, "message": f"{job_id}:{epoch}"})

    def claim(self, params: ClaimParams, *, fair: bool, picks: int, completing: Completing | None = None) -> Claimed:
        """One pick too is a batch: the statement prepared once, on its generic plan."""
        completed, rows = send_batch(params.binding(self.time), picks, fair=fair, completing=completing)
        answer = claimed(rows)
        return Claimed(answer.leased, answer.retry, frozenset((job_id, epoch) for job_id, epoch in completed))

    def now(self) -> datetime:
        with connection.cursor() as cursor:
            cursor.execute("SELECT clock_timestamp()")
            (at,) = cursor.fetchone()
        return aware(at)

    def renew(self, leases: Sequence[tuple[int, int, timedelta]], now: datetime) -> dict[int, bool]:
        binding: dict[str, Any] = {"now": now}
        for n, (job_id, epoch, lease) in enumerate(leases):
            binding.update({f"job_id_{n}": job_id, f"epoch_{n}": epoch, f"expires_{n}": now + lease})
        with connection.cursor() as cursor:
            cursor.execute(renew(len(leases)), binding)
            return {job_id: asked is not None for job_id, asked in cursor.fetchall()}

    def start(self, claims: Sequence[tuple[int, int]], now: datetime) -> set[int]:
        if len(claims) == 1:
            statement, binding = START_ONE, {"now": now, "job_id": claims[0][0], "epoch": claims[0][1]}
        else:
            statement, binding = START, {"now": now, "job_ids": [c[0] for c in claims],
                                         "epochs": [c[1] for c in claims]}
        with raw_write_transaction(explicit=False, durable=False) as cursor:
            cursor.execute(statement, binding)
            return {job_id for (job_id,) in cursor.fetchall()}

    def complete(self, results: Sequence[Result], now: datetime, actor: str) -> set[tuple[int, int]]:
        adapt = connections[DEFAULT_DB_ALIAS].ops.adapt_json_value
        if len(results) == 1:  # one statement writes the completion and its event
            r = results[0]
            with raw_write_transaction(explicit=False) as cursor:
                cursor.execute(COMPLETE, {"job_id": r.job_id, "epoch": r.epoch, "result": adapt(r.result, None),
                                          "outcome": r.outcome, "outcome_text": r.outcome_text,
                                          "needs_action": r.needs_action, "reference": r.reference, "now": now,
                                          "actor": actor})
                return {(r.job_id, r.epoch)} if cursor.rowcount == 1 else set()
        with raw_write_transaction(explicit=False) as cursor:
            cursor.execute(COMPLETE_MANY, complete_binding(Completing(results, now, actor)))
            return {(job_id, epoch) for job_id, epoch in cursor.fetchall()}

    def recover_expired(self, now: datetime, limit: int) -> list[Expired]:
        with connection.cursor() as cursor:
            cursor.execute(RECOVER_EXPIRED, {"now": now, "limit": limit})
            return [Expired(job_id, state, epoch, why, scope_id, started_at is not None or external_at is not None)
                    for job_id, state, epoch, why, scope_id, started_at, external_at in cursor.fetchall()]

    def recover_past_deadline(self, from_state: str, now: datetime, limit: int) -> list[PastDeadline]:
        with connection.cursor() as cursor:
            cursor.execute(RECOVER_PAST_DEADLINE, {"from_state": from_state, "now": now, "limit": limit})
            return [PastDeadline(*row) for row in cursor.fetchall()]
