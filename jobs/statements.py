"""The queue's hand-written statements, in one place.

The hot path (claim, complete) runs on the driver's cursor (``jobs.writelock``): the ORM's
per-query overhead would dominate a loop whose database work is a few tens of
microseconds. Statements are written with ``%s`` placeholders; ``for_driver`` turns them
into SQLite's ``?``. The benchmarks' bare loops run these same statements.

Fair claims. Every queued job carries a *turn*, its place in the order of claims. A job
that becomes claimable is stamped ``max(head, tenant's last turn + stride)``: the head is
the earliest turn still waiting (at the job's priority), the tenant's last turn the latest
one its own waiting jobs hold, and the stride ``STRIDE / weight``. A tenant with a backlog
queues behind itself; a tenant that had nothing waiting starts at the head, so it is served
within a couple of claims however much others have queued; a tenant of weight 2 advances
half as far per job, so it gets twice the turns. The claim then takes the first entry of
one index (priority, turn, id): an index seek, the same work as a first-in first-out claim.
Jobs waiting for their time (a retry's backoff, a later start) carry no turn until they are
due; each claim stamps a few that have come due.
"""

from __future__ import annotations

import functools
import re

from .models import Job, JobEvent, Tenant

JOB = Job._meta.db_table
EVENT = JobEvent._meta.db_table
TENANT = Tenant._meta.db_table

STRIDE = 1_000_000  # turn units per job of a tenant of weight 1
CANDIDATES = 64  # claimable jobs looked at per claim, in turn order, past tenants at their limit
DUE_BATCH = 32  # jobs come due that one claim stamps


def for_driver(vendor: str, sql: str) -> str:
    return sql.replace("%s", "?") if vendor == "sqlite" else sql


def _stamp(vendor: str, fair: bool = True) -> str:
    """A queued job's turn, for an UPDATE of ``JOB`` (see the module docstring).

    Not ``fair``: first come, first served (the turn is the job's id), for a deployment
    with one tenant or for measuring what fairness costs.
    """
    if not fair:
        return f"{JOB}.id"
    greatest = "GREATEST" if vendor == "postgresql" else "MAX"
    return f"""{greatest}(
        COALESCE((SELECT MIN(h.turn) FROM {JOB} h
                  WHERE h.state = 'queued' AND h.turn IS NOT NULL AND h.available_at IS NOT NULL
                    AND h.priority = {JOB}.priority), 0),
        COALESCE((SELECT MAX(o.turn) FROM {JOB} o
                  WHERE o.tenant_id = {JOB}.tenant_id AND o.state = 'queued' AND o.priority = {JOB}.priority
                    AND o.turn IS NOT NULL)
                 + (SELECT {STRIDE} / t.weight FROM {TENANT} t WHERE t.id = {JOB}.tenant_id), 0))"""


@functools.cache
def stamp_one(vendor: str, fair: bool = True) -> str:
    """Give one queued job (just accepted, claimable now) its turn."""
    return for_driver(vendor, f"UPDATE {JOB} SET turn = {_stamp(vendor, fair)} WHERE id = %s AND state = 'queued'")


@functools.cache
def any_due(vendor: str) -> str:
    """Whether a queued job without a turn has come due (now): most claims find none."""
    hint = "INDEXED BY job_due_idx" if vendor == "sqlite" else ""
    return for_driver(vendor, f"""
        SELECT 1 FROM {JOB} {hint} WHERE state = 'queued' AND turn IS NULL AND available_at <= %s LIMIT 1""")


@functools.cache
def stamp_due(vendor: str, fair: bool = True) -> str:
    """Give their turn to up to ``DUE_BATCH`` queued jobs whose time has come (now, limit)."""
    hint = "INDEXED BY job_due_idx" if vendor == "sqlite" else ""
    skip_locked = "FOR UPDATE SKIP LOCKED" if vendor == "postgresql" else ""
    # The rows are looked up by the subquery's ids, on the primary key. SQLite would
    # otherwise go through the state index, over every queued job (NOT INDEXED leaves it the
    # primary key); PostgreSQL may hash-join a scan of the whole table to an IN (...), so it
    # gets the ids as an array.
    due = f"""
            SELECT id FROM {JOB} {hint}
            WHERE state = 'queued' AND turn IS NULL AND available_at <= %s
            ORDER BY available_at, id LIMIT %s {skip_locked}"""
    rows = f"NOT INDEXED SET turn = {_stamp(vendor, fair)} WHERE id IN ({due})" if vendor == "sqlite" else (
        f"SET turn = {_stamp(vendor, fair)} WHERE id = ANY(ARRAY({due}))")
    return for_driver(vendor, f"UPDATE {JOB} {rows} AND state = 'queued' AND turn IS NULL")


def _candidates(vendor: str) -> str:
    """The first claimable jobs in turn order (now, now, CANDIDATES): an index seek."""
    hint = "INDEXED BY job_claim_idx" if vendor == "sqlite" else ""
    return f"""
        SELECT id, tenant_id, priority, turn FROM {JOB} {hint}
        WHERE state = 'queued' AND turn IS NOT NULL AND available_at IS NOT NULL AND available_at <= %s
          AND deadline > %s
        ORDER BY priority DESC, turn, id LIMIT %s"""


# A tenant at its running limit is passed over.
_AT_LIMIT = f"""EXISTS (SELECT 1 FROM {TENANT} t
                        WHERE t.id = c.tenant_id AND t.max_running IS NOT NULL AND t.running >= t.max_running)"""

_LEASE_SET = """state = 'leased', epoch = epoch + 1, attempts = attempts + 1,
            lease_expires_at = {least}(%s, deadline), leased_by = %s, updated_at = %s, finished_at = NULL,
            started_at = NULL"""
CLAIM_RETURNING = "id, kind, state, epoch, attempts, lease_expires_at, deadline, payload, tenant_id"


@functools.cache
def pick(vendor: str) -> str:
    """SQLite, in the claim's transaction: the job whose turn it is (now, now, CANDIDATES),
    its tenant, and whether that tenant keeps a running count.

    The candidates stream off the claim index in order (a co-routine), and the first whose
    tenant is under its limit is taken: usually the very first, at most ``CANDIDATES``
    looked at. The tenant is checked by correlated lookups rather than a join, which SQLite
    would answer by building a filter over every tenant first.
    """
    return for_driver(vendor, f"""
        SELECT c.id, c.tenant_id,
               EXISTS (SELECT 1 FROM {TENANT} t WHERE t.id = c.tenant_id AND t.max_running IS NOT NULL)
        FROM ({_candidates(vendor)}) c
        WHERE NOT {_AT_LIMIT}
        LIMIT 1""")


@functools.cache
def lease(vendor: str) -> str:
    """SQLite: lease the picked job (expires, worker, now, id)."""
    return for_driver(vendor, f"""
        UPDATE {JOB} SET {_LEASE_SET.format(least="MIN")}
        WHERE id = %s AND state = 'queued'
        RETURNING {CLAIM_RETURNING}""")


@functools.cache
def count_running(vendor: str) -> str:
    """A limited tenant's job starts running (tenant id): checked and counted in one write."""
    return for_driver(vendor, f"""
        UPDATE {TENANT} SET running = running + 1
        WHERE id = %s AND max_running IS NOT NULL AND running < max_running""")


@functools.cache
def release_running(vendor: str) -> str:
    """A limited tenant's job stopped running (tenant id)."""
    return for_driver(vendor, f"""
        UPDATE {TENANT} SET running = running - 1
        WHERE id = %s AND max_running IS NOT NULL AND running > 0""")


@functools.cache
def claim_postgresql(fair: bool = True) -> str:
    """PostgreSQL: the whole claim in one statement, one round trip in autocommit.

    Parameters: now, DUE_BATCH (stamping), now, now, CANDIDATES (the candidates), expires,
    worker, now (the lease), actor, now (the event). The candidates stream in turn order
    into the join, and the first unlocked one whose tenant is under its limit is taken;
    claimers pass over each other's rows (``SKIP LOCKED``). The state is checked again on the
    locked row (``j``): a job another claimer took and committed after this statement's
    snapshot is locked all the same, and its newest version, no longer queued, must not be
    picked, or the tenant's count below would be raised for a job no one claims. A limited
    tenant's count is raised in the same statement, only while it is under its limit; if
    another claimer took its last place meanwhile, no job is claimed and the statement says
    so with a row of state 'busy'. Jobs it stamps are seen
    only by the next statement: when it stamped some and found nothing else, it says so
    with a row of state 'stamped'. Either way the caller tries again.
    """
    return f"""
        WITH stamped AS ({stamp_due("postgresql", fair)} RETURNING id),
        picked AS (
            SELECT j.id, j.tenant_id FROM ({_candidates("postgresql")}) c
            JOIN {JOB} j ON j.id = c.id
            WHERE j.state = 'queued'
              AND NOT EXISTS (SELECT 1 FROM {TENANT} t WHERE t.id = c.tenant_id AND t.max_running IS NOT NULL
                                                         AND t.running >= t.max_running)
            ORDER BY c.priority DESC, c.turn, c.id  -- a join need not keep the candidates' order
            LIMIT 1
            FOR UPDATE OF j SKIP LOCKED
        ),
        counted AS (
            UPDATE {TENANT} SET running = running + 1
            WHERE id IN (SELECT tenant_id FROM picked) AND max_running IS NOT NULL AND running < max_running
            RETURNING id
        ),
        claimed AS (
            UPDATE {JOB} SET {_LEASE_SET.format(least="LEAST")}
            WHERE id IN (SELECT id FROM picked) AND state = 'queued'
              AND (EXISTS (SELECT 1 FROM counted)
                   OR NOT EXISTS (SELECT 1 FROM {TENANT} t WHERE t.id = {JOB}.tenant_id AND t.max_running IS NOT NULL))
            RETURNING {CLAIM_RETURNING}
        ),
        recorded AS (
            INSERT INTO {EVENT} (job_id, from_state, to_state, epoch, actor, reason, at)
            SELECT id, 'queued', 'leased', epoch, %s, 'claimed', %s FROM claimed
        )
        SELECT {CLAIM_RETURNING} FROM claimed
        UNION ALL
        SELECT id, NULL, 'busy', NULL, NULL, NULL, NULL, NULL, tenant_id FROM picked
        WHERE NOT EXISTS (SELECT 1 FROM claimed)
        UNION ALL
        SELECT NULL, NULL, 'stamped', NULL, NULL, NULL, NULL, NULL, NULL
        WHERE NOT EXISTS (SELECT 1 FROM picked) AND EXISTS (SELECT 1 FROM stamped)"""


CLAIM_PARAMETER_TYPES = ("timestamptz", "bigint", "timestamptz", "timestamptz", "bigint", "timestamptz", "text",
                         "timestamptz", "text", "timestamptz")


@functools.cache
def prepare_claim_postgresql(fair: bool = True) -> tuple[str, str]:
    """PostgreSQL: ``claim_postgresql`` as a named prepared statement: (name, PREPARE text).

    A batch of claims is sent as one message of ``EXECUTE name(...)`` calls (``jobs.queue``),
    so the server runs the whole batch without waiting on the client, and each pick keeps
    the plan prepared once per connection. Parameters as ``claim_postgresql``.
    """
    name = "jobs_claim_fair" if fair else "jobs_claim_fifo"
    numbered = iter(range(1, len(CLAIM_PARAMETER_TYPES) + 1))
    body = re.sub("%s", lambda _: f"${next(numbered)}", claim_postgresql(fair))
    return name, f"PREPARE {name} ({', '.join(CLAIM_PARAMETER_TYPES)}) AS {body}"


@functools.cache
def start(vendor: str, rows: int = 1) -> str:
    """The worker hands these epochs' jobs to their handlers (``rows`` of them, on SQLite).

    Parameters: now, then the fence's now for the lease and the deadline, then the jobs:
    on SQLite per row its id and epoch, on PostgreSQL an array of ids and one of epochs.
    Each row is fenced like a completion: a claim recovered or superseded while it was held
    is not started. Returns the ids that applied. Only a started claim spends its attempt
    when its lease runs out (``jobs.queue.recover``). The write need not survive a power cut,
    only the worker's death (a lost marker gives one attempt back, never loses a job), so it
    does not wait for the disk: SQLite commits it at ``synchronous=NORMAL``
    (``jobs.writelock``), and on PostgreSQL the statement turns ``synchronous_commit`` off
    for its own transaction, one round trip in autocommit.
    """
    fence = "state = 'leased' AND lease_expires_at > %s AND deadline > %s"
    if vendor == "postgresql":
        return f"""
            UPDATE {JOB} SET started_at = %s
            FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relaxed
            WHERE {fence} AND (id, epoch) IN (SELECT * FROM unnest(%s::bigint[], %s::integer[]))
            RETURNING id"""
    owned = " OR ".join(["(id = %s AND epoch = %s)"] * rows)
    return for_driver(vendor, f"UPDATE {JOB} SET started_at = %s WHERE {fence} AND ({owned}) RETURNING id")


def summary_values(summary: object | None) -> tuple[str, str, bool, str]:
    """The summary columns of ``complete``, in its order (empty without a summary)."""
    if summary is None:
        return ("", "", False, "")
    return (summary.outcome[:32], summary.text[:100], summary.needs_action,  # type: ignore[attr-defined]
            summary.reference[:200])  # type: ignore[attr-defined]


_COMPLETE = f"""
    UPDATE {JOB} SET state = 'completed', result = %s, outcome = %s, outcome_text = %s,
        needs_action = %s, reference = %s, lease_expires_at = NULL,
        updated_at = %s, finished_at = %s, last_error = '', failure_code = ''
    WHERE id = %s AND epoch = %s AND state = 'leased' AND lease_expires_at > %s AND deadline > %s"""


@functools.cache
def complete(vendor: str) -> str:
    """The fenced completion as one statement.

    Parameters: the result, ``summary_values``, updated and finished times, then the fence
    (id, epoch, now for the lease, now for the deadline). SQLite returns the tenant (whose
    running count the caller then lowers with ``release_running``); on PostgreSQL the
    statement lowers it and writes the event row too: add the actor and the time.
    """
    if vendor != "postgresql":
        return for_driver(vendor, _COMPLETE + " RETURNING tenant_id")
    return f"""
        WITH completed AS ({_COMPLETE} RETURNING id, epoch, tenant_id),
        released AS (
            UPDATE {TENANT} SET running = running - 1
            WHERE id IN (SELECT tenant_id FROM completed) AND max_running IS NOT NULL AND running > 0
        )
        INSERT INTO {EVENT} (job_id, from_state, to_state, epoch, actor, reason, at)
        SELECT id, 'leased', 'completed', epoch, %s, 'completed', %s FROM completed"""


@functools.cache
def complete_many_sqlite(rows: int) -> str:
    """SQLite: a batch of ``rows`` fenced completions as one statement.

    Parameters: updated and finished times, then per row its id, epoch, result and the four
    ``summary_values`` columns, then the fence's now for the lease and the deadline. Each row
    is matched on its own id and epoch (a primary-key lookup per row) and must still be
    leased with lease and deadline unexpired; returns (id, epoch, tenant) of each that applied.
    """
    values = ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * rows)
    return f"""
        UPDATE {JOB} SET state = 'completed', result = b.column3, outcome = b.column4,
            outcome_text = b.column5, needs_action = b.column6, reference = b.column7,
            lease_expires_at = NULL, updated_at = ?, finished_at = ?, last_error = '', failure_code = ''
        FROM (VALUES {values}) AS b
        WHERE {JOB}.id = b.column1 AND {JOB}.epoch = b.column2 AND {JOB}.state = 'leased'
          AND {JOB}.lease_expires_at > ? AND {JOB}.deadline > ?
        RETURNING {JOB}.id, {JOB}.epoch, {JOB}.tenant_id"""


@functools.cache
def release_running_many(vendor: str) -> str:
    """Jobs of a limited tenant stopped running (how many, tenant id)."""
    return for_driver(vendor, f"""
        UPDATE {TENANT} SET running = MAX(running - %s, 0)
        WHERE id = %s AND max_running IS NOT NULL""")


@functools.cache
def complete_many_postgresql() -> str:
    """PostgreSQL: a batch of fenced completions as one statement, one round trip.

    Parameters: arrays of ids, epochs, results and the four ``summary_values`` columns (one
    element per job), then updated and finished times, the fence's now for the lease and
    the deadline, the actor and the time of the events. Each row is matched on its own id
    and epoch, and must still be leased with lease and deadline unexpired; the rows that
    apply lower their tenants' running counts and write their events in the same statement,
    which returns (id, epoch) of each.
    """
    return f"""
        WITH batch AS (
            SELECT * FROM unnest(%s::bigint[], %s::integer[], %s::jsonb[], %s::text[], %s::text[], %s::boolean[],
                                 %s::text[]) AS b(id, epoch, result, outcome, outcome_text, needs_action, reference)
        ),
        completed AS (
            UPDATE {JOB} j SET state = 'completed', result = b.result, outcome = b.outcome,
                outcome_text = b.outcome_text, needs_action = b.needs_action, reference = b.reference,
                lease_expires_at = NULL, updated_at = %s, finished_at = %s, last_error = '', failure_code = ''
            FROM batch b
            WHERE j.id = b.id AND j.epoch = b.epoch AND j.state = 'leased' AND j.lease_expires_at > %s
              AND j.deadline > %s
            RETURNING j.id, j.epoch, j.tenant_id
        ),
        released AS (
            UPDATE {TENANT} t SET running = GREATEST(t.running - c.n, 0)
            FROM (SELECT tenant_id, COUNT(*) AS n FROM completed GROUP BY tenant_id) c
            WHERE t.id = c.tenant_id AND t.max_running IS NOT NULL
        ),
        recorded AS (
            INSERT INTO {EVENT} (job_id, from_state, to_state, epoch, actor, reason, at)
            SELECT id, 'leased', 'completed', epoch, %s, 'completed', %s FROM completed
        )
        SELECT id, epoch FROM completed"""


EVENT_SQL = (
    f"INSERT INTO {EVENT} (job_id, from_state, to_state, epoch, actor, reason, at) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s)"
)
