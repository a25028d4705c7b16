"""The parts of the statements both databases write alike, with named parameters (``%(now)s``).

Each database's module (``sqlite``, ``postgresql``) puts them together with its own hints,
functions and locking; table names, and the scope's column, come from the models; values are always bound. Each
transition's guard, SET list and CASE rules are rendered from its declaration
(``jobs.queue.transitions``), never written out here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jobs.models import Job, JobEvent, KindSlot, Scope
from jobs.queue import transitions as tr
from jobs.queue.transitions import Sql

from . import STRIDE

JOB = Job._meta.db_table
EVENT = JobEvent._meta.db_table
SCOPE = Scope._meta.db_table
SCOPE_ID = Job.scope.field.column  # the job's scope: its column keeps the name it has always had
KINDSLOT = KindSlot._meta.db_table


def stamp(greatest: str, fair: bool = True) -> str:
    """A queued job's turn, for an UPDATE of ``JOB`` (see ``jobs.sql``).

    Not ``fair``: first come, first served (the turn is the job's id), for a deployment
    with one scope or for measuring what fairness costs.
    """
    if not fair:
        return f"{JOB}.id"
    return f"""{greatest}(
        COALESCE((SELECT MIN(h.turn) FROM {JOB} h
                  WHERE h.state = 'queued' AND h.turn IS NOT NULL AND h.available_at IS NOT NULL
                    AND h.priority = {JOB}.priority), 0),
        COALESCE((SELECT MAX(o.turn) FROM {JOB} o
                  WHERE o.{SCOPE_ID} = {JOB}.{SCOPE_ID} AND o.state = 'queued' AND o.priority = {JOB}.priority
                    AND o.turn IS NOT NULL)
                 + (SELECT {STRIDE} / t.weight FROM {SCOPE} t WHERE t.id = {JOB}.{SCOPE_ID}), 0))"""


def stamp_one(greatest: str, fair: bool = True) -> str:
    """Give one queued job (``job_id``; just accepted, claimable now) its turn."""
    return f"UPDATE {JOB} SET turn = {stamp(greatest, fair)} WHERE id = %(job_id)s AND state = 'queued'"


def due(hint: str = "", lock: str = "") -> str:
    """Up to ``due_batch`` queued jobs without a turn whose time has come (``now``)."""
    return f"""
            SELECT id FROM {JOB} {hint}
            WHERE state = 'queued' AND turn IS NULL AND available_at <= %(now)s
            ORDER BY available_at, id LIMIT %(due_batch)s {lock}"""


def candidates(hint: str = "") -> str:
    """The first ``candidates`` claimable jobs in turn order (``now``): an index seek. Jobs of a
    kind at its running limit are passed over in the seek itself, however many wait at the head."""
    return f"""
        SELECT id, {SCOPE_ID}, priority, turn, kind FROM {JOB} {hint}
        WHERE {tr.CLAIMABLE.sql(Sql())} AND NOT {kind_at_limit(f"{JOB}.kind")}
        ORDER BY priority DESC, turn, id LIMIT %(candidates)s"""


def lease_set(least: str) -> str:
    """The claim's SET: a new epoch and attempt, the lease (``expires``, never past the
    deadline) to ``worker`` at ``now``."""
    return tr.CLAIM.set_sql(Sql(least=least))


CLAIM_RETURNING = f"id, kind, state, epoch, attempts, lease_expires_at, deadline, payload, {SCOPE_ID}"

# A scope at its running limit is passed over.
AT_LIMIT = f"""EXISTS (SELECT 1 FROM {SCOPE} t
                       WHERE t.id = c.{SCOPE_ID} AND t.max_running IS NOT NULL AND t.running >= t.max_running)"""

# A kind's slot (``s``) is held while its job is leased on the slot's epoch (``KindSlot``). A job
# whose epoch is below the slot's was claimed after this statement's snapshot (PostgreSQL reads
# the slot's newest version, the job's as of the snapshot): held too, never wrongly free.
def slot_free(s: str) -> str:
    return f"""({s}.job_id IS NULL OR NOT EXISTS (
        SELECT 1 FROM {JOB} h WHERE h.id = {s}.job_id
          AND ((h.state = 'leased' AND h.epoch = {s}.epoch) OR h.epoch < {s}.epoch)))"""


def kind_limited(kind: str) -> str:
    """Whether the kind (an expression) has a running limit: it has slots."""
    return f"EXISTS (SELECT 1 FROM {KINDSLOT} ks WHERE ks.kind = {kind})"


def kind_at_limit(kind: str) -> str:
    """Whether the kind (an expression) is at its running limit: it has slots, none free."""
    return f"""({kind_limited(kind)} AND NOT EXISTS (
        SELECT 1 FROM {KINDSLOT} s WHERE s.kind = {kind} AND {slot_free("s")}))"""


# The fenced completion of one job (``job_id``, ``epoch``, still leased at ``now``).
COMPLETE = f"UPDATE {JOB} SET {tr.COMPLETE.set_sql(Sql())} WHERE {tr.COMPLETE.guard.sql(Sql())}"


def complete_batch(batch: str, inputs: Sequence[str], table: str) -> tuple[str, str]:
    """The SET list and the guard of a batch of fenced completions at ``now``: the rows of
    ``batch`` (an alias whose columns ``inputs`` are in ``COMPLETE_INPUTS`` order), each to its
    job in the job table, named ``table`` in the statement."""
    params = {name: f"{batch}.{column}" for name, column in zip(tr.COMPLETE_INPUTS, inputs, strict=True)}
    return tr.COMPLETE.set_sql(Sql(params=params)), tr.COMPLETE.guard.sql(Sql(table=table, params=params))


def event_rows(transition: tr.Transition, rows: str) -> str:
    """A SELECT of the events of ``rows`` (a table of job ids and epochs) that made ``transition``
    (its one way), by ``actor`` at ``now``: the body of an INSERT of ``EVENT_SQL``'s columns."""
    (way,) = transition.ways
    (source,) = transition.source
    return (f"SELECT id, {tr.Lit(source).sql(Sql())}, {tr.Lit(way.to).sql(Sql())}, epoch, %(actor)s, "
            f"{tr.Lit(way.why).sql(Sql())}, %(now)s FROM {rows}")


def event_values(transition: tr.Transition) -> dict[str, str]:
    """The states and reason of an event of ``transition`` (its one way), for ``EVENT_SQL``."""
    (way,) = transition.ways
    (source,) = transition.source
    return {"from_state": source, "to_state": way.to, "reason": way.why}

# One event row (``JobEvent``), on Django's cursor or, for the driver's, through ``driver``.
EVENT_SQL = (
    f"INSERT INTO {EVENT} (job_id, from_state, to_state, epoch, actor, reason, at) "
    "VALUES (%(job_id)s, %(from_state)s, %(to_state)s, %(epoch)s, %(actor)s, %(reason)s, %(at)s)"
)


def renew(least: str, rows: int) -> str:
    """Extend ``rows`` leases (``job_id_<n>``, ``epoch_<n>``, ``expires_<n>``) at ``now``, each
    fenced by its own epoch, lease and deadline; returns each renewed id and its cancel request."""
    new_expiry = " ".join(f"WHEN %(job_id_{n})s THEN %(expires_{n})s" for n in range(rows))
    owned = " OR ".join(f"(id = %(job_id_{n})s AND epoch = %(epoch_{n})s)" for n in range(rows))
    sets = tr.RENEW.set_sql(Sql(least=least, params={"expires": f"CASE id {new_expiry} END"}))
    return f"""
        UPDATE {JOB} SET {sets}
        WHERE {tr.HELD.sql(Sql())} AND ({owned})
        RETURNING id, cancel_requested_at"""



def recover_expired(hint: str = "", lock: str = "") -> str:
    """Move up to ``limit`` jobs whose lease ran out by ``now`` (``jobs.queue.recover``).

    A job requeued keeps its turn (set when it was first due, kept by the claim): it is
    served next, ahead of whatever queued after it, as a hand-back is."""
    guard = tr.EXPIRE.guard.sql(Sql())
    return f"""
        WITH picked AS (
            SELECT id FROM {JOB} {hint} WHERE {guard}
            ORDER BY lease_expires_at LIMIT %(limit)s {lock}
        )
        UPDATE {JOB} SET {tr.EXPIRE.set_sql(Sql())}
        WHERE id IN (SELECT id FROM picked) AND {guard}
        RETURNING id, state, epoch, last_error, {SCOPE_ID}, started_at, external_started_at"""


def recover_past_deadline(lock: str = "") -> str:
    """Move up to ``limit`` jobs in ``from_state`` past their deadline at ``now``."""
    guard = tr.PAST_DEADLINE_SWEEP.guard.sql(Sql())
    return f"""
        WITH picked AS (
            SELECT id FROM {JOB} WHERE {guard} ORDER BY deadline
            LIMIT %(limit)s {lock}
        )
        UPDATE {JOB} SET {tr.PAST_DEADLINE_SWEEP.set_sql(Sql())}
        WHERE id IN (SELECT id FROM picked) AND {guard}
        RETURNING id, state, epoch, {SCOPE_ID}"""


_NAMED = re.compile(r"%\((\w+)\)s")


def names(sql: str) -> list[str]:
    """The statement's parameter names, each once, in the order they first appear."""
    return list(dict.fromkeys(_NAMED.findall(sql)))


def numbered(sql: str) -> str:
    """The statement with ``$1``, ``$2``... for its names, in ``names`` order (a PREPARE's body)."""
    order = {name: n for n, name in enumerate(names(sql), start=1)}
    return _NAMED.sub(lambda m: f"${order[m.group(1)]}", sql)


def sqlite_driver(sql: str) -> str:
    """The statement as the sqlite3 driver names parameters (``:now``)."""
    return _NAMED.sub(r":\1", sql)
