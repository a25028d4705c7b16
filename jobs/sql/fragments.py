"""The parts of the statements both databases write alike, with named parameters (``%(now)s``).

Each database's module (``sqlite``, ``postgresql``) puts them together with its own hints,
functions and locking; table names come from the models, values are always bound.
"""

from __future__ import annotations

import re

from jobs.models import Job, JobEvent, KindSlot, Scope
from jobs.queue.terms import FailureCode

from . import STRIDE

JOB = Job._meta.db_table
EVENT = JobEvent._meta.db_table
TENANT = Scope._meta.db_table
KINDSLOT = KindSlot._meta.db_table


def stamp(greatest: str, fair: bool = True) -> str:
    """A queued job's turn, for an UPDATE of ``JOB`` (see ``jobs.sql``).

    Not ``fair``: first come, first served (the turn is the job's id), for a deployment
    with one tenant or for measuring what fairness costs.
    """
    if not fair:
        return f"{JOB}.id"
    return f"""{greatest}(
        COALESCE((SELECT MIN(h.turn) FROM {JOB} h
                  WHERE h.state = 'queued' AND h.turn IS NOT NULL AND h.available_at IS NOT NULL
                    AND h.priority = {JOB}.priority), 0),
        COALESCE((SELECT MAX(o.turn) FROM {JOB} o
                  WHERE o.tenant_id = {JOB}.tenant_id AND o.state = 'queued' AND o.priority = {JOB}.priority
                    AND o.turn IS NOT NULL)
                 + (SELECT {STRIDE} / t.weight FROM {TENANT} t WHERE t.id = {JOB}.tenant_id), 0))"""


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
        SELECT id, tenant_id, priority, turn, kind FROM {JOB} {hint}
        WHERE state = 'queued' AND turn IS NOT NULL AND available_at IS NOT NULL AND available_at <= %(now)s
          AND deadline > %(now)s AND NOT {kind_at_limit(f"{JOB}.kind")}
        ORDER BY priority DESC, turn, id LIMIT %(candidates)s"""


def lease_set(least: str) -> str:
    """The claim's SET: a new epoch and attempt, the lease (``expires``, never past the
    deadline) to ``worker`` at ``now``."""
    return f"""state = 'leased', epoch = epoch + 1, attempts = attempts + 1,
            lease_expires_at = {least}(%(expires)s, deadline), leased_by = %(worker)s, updated_at = %(now)s,
            finished_at = NULL, started_at = NULL"""


CLAIM_RETURNING = "id, kind, state, epoch, attempts, lease_expires_at, deadline, payload, tenant_id"

# A tenant at its running limit is passed over.
AT_LIMIT = f"""EXISTS (SELECT 1 FROM {TENANT} t
                       WHERE t.id = c.tenant_id AND t.max_running IS NOT NULL AND t.running >= t.max_running)"""

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
COMPLETE = f"""
    UPDATE {JOB} SET state = 'completed', result = %(result)s, outcome = %(outcome)s,
        outcome_text = %(outcome_text)s, needs_action = %(needs_action)s, reference = %(reference)s,
        lease_expires_at = NULL, updated_at = %(now)s, finished_at = %(now)s, last_error = '', failure_code = ''
    WHERE id = %(job_id)s AND epoch = %(epoch)s AND state = 'leased' AND lease_expires_at > %(now)s
      AND deadline > %(now)s"""

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
    return f"""
        UPDATE {JOB} SET lease_expires_at = {least}(CASE id {new_expiry} END, deadline), updated_at = %(now)s
        WHERE state = 'leased' AND lease_expires_at > %(now)s AND deadline > %(now)s AND ({owned})
        RETURNING id, cancel_requested_at"""


# Whether an expired claim's handler was started (``start``; the external-start marker is
# written only by a running handler). A claim that was only held gives its attempt back.
STARTED = "(started_at IS NOT NULL OR external_started_at IS NOT NULL)"
_SPENT = f"({STARTED} AND attempts >= max_attempts)"


def recover_expired(hint: str = "", lock: str = "") -> str:
    """Move up to ``limit`` jobs whose lease ran out by ``now`` (``jobs.queue.recover``).

    A job requeued keeps its turn (set when it was first due, kept by the claim): it is
    served next, ahead of whatever queued after it, as a hand-back is."""
    return f"""
        WITH picked AS (
            SELECT id FROM {JOB} {hint} WHERE state = 'leased' AND lease_expires_at <= %(now)s
            ORDER BY lease_expires_at LIMIT %(limit)s {lock}
        )
        UPDATE {JOB} SET
            state = CASE
                WHEN external_started_at IS NOT NULL THEN 'unknown'
                WHEN cancel_requested_at IS NOT NULL THEN 'cancelled'
                WHEN deadline <= %(now)s OR {_SPENT} THEN 'dead'
                ELSE 'queued' END,
            attempts = CASE WHEN {STARTED} OR attempts = 0 THEN attempts ELSE attempts - 1 END,
            available_at = %(now)s, lease_expires_at = NULL, updated_at = %(now)s,
            finished_at = CASE
                WHEN external_started_at IS NOT NULL OR cancel_requested_at IS NOT NULL
                     OR deadline <= %(now)s OR {_SPENT}
                THEN %(now)s ELSE NULL END,
            last_error = CASE
                WHEN external_started_at IS NOT NULL THEN 'lease expired after the external-start marker'
                WHEN cancel_requested_at IS NOT NULL THEN 'cancelled; its worker did not answer'
                WHEN deadline <= %(now)s THEN 'deadline passed'
                WHEN NOT {STARTED} THEN last_error
                WHEN attempts >= max_attempts THEN 'lease expired; attempts spent'
                ELSE 'lease expired' END,
            failure_code = CASE
                WHEN external_started_at IS NOT NULL THEN '{FailureCode.LEASE_EXPIRED}'
                WHEN cancel_requested_at IS NOT NULL THEN '{FailureCode.CANCELLED}'
                WHEN deadline <= %(now)s THEN '{FailureCode.DEADLINE_PASSED}'
                WHEN NOT {STARTED} THEN failure_code
                WHEN attempts >= max_attempts THEN '{FailureCode.ATTEMPTS_SPENT}'
                ELSE '{FailureCode.LEASE_EXPIRED}' END
        WHERE id IN (SELECT id FROM picked) AND state = 'leased' AND lease_expires_at <= %(now)s
        RETURNING id, state, epoch, last_error, tenant_id, started_at, external_started_at"""


def recover_past_deadline(lock: str = "") -> str:
    """Move up to ``limit`` jobs in ``from_state`` past their deadline at ``now``."""
    return f"""
        WITH picked AS (
            SELECT id FROM {JOB} WHERE state = %(from_state)s AND deadline <= %(now)s ORDER BY deadline
            LIMIT %(limit)s {lock}
        )
        UPDATE {JOB} SET
            state = CASE WHEN external_started_at IS NOT NULL THEN 'unknown' ELSE 'dead' END,
            attempts = CASE WHEN state = 'queued' OR {STARTED} OR attempts = 0 THEN attempts
                            ELSE attempts - 1 END,
            lease_expires_at = NULL, updated_at = %(now)s, finished_at = %(now)s,
            last_error = 'deadline passed', failure_code = '{FailureCode.DEADLINE_PASSED}'
        WHERE id IN (SELECT id FROM picked) AND state = %(from_state)s AND deadline <= %(now)s
        RETURNING id, state, epoch, tenant_id"""


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
