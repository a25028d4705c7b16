"""Every state write of a job, as a conditional write that states what must still hold.

The job row is the queue entry. Each operation takes ``now`` from the caller's clock, is
one short transaction, appends a ``JobEvent`` (never payload text) and returns what
happened. A write whose WHERE clause no longer matches changes nothing: a stale worker's
completion, say, is reported as rejected with the reason, and recorded as such.

The hot path (claim, complete) is hand-written SQL on the driver's cursor
(``jobs.writelock``): one statement per transition plus its event row, because the ORM's
per-query overhead would dominate a loop whose database work is a few tens of
microseconds. The colder operations use the ORM's ``filter().update()``, which is the
same conditional UPDATE, inside ``write_transaction()``.

SQLite: every write transaction is ``BEGIN IMMEDIATE`` (settings), so the claim holds the
single write lock for one UPDATE and one INSERT, behind a fair cross-process lock.
PostgreSQL: the claim's subquery takes the row ``FOR UPDATE SKIP LOCKED``, so concurrent
claimers pass over each other's rows instead of queueing behind them, and the transition
and its event are one statement.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import jsonschema
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections
from django.db.models import DateTimeField, F, Value
from django.db.models.functions import Least

from . import documents, kinds
from .errors import (
    InvalidOperationKey,
    InvalidPayload,
    OperationKeyConflict,
    PayloadTooLarge,
    UnknownKind,
    UnsupportedDocument,
)
from .models import Job, JobEvent
from .writelock import raw_write_transaction, write_transaction

QUEUED, LEASED, COMPLETED, DEAD, UNKNOWN = (
    Job.State.QUEUED.value,
    Job.State.LEASED.value,
    Job.State.COMPLETED.value,
    Job.State.DEAD.value,
    Job.State.UNKNOWN.value,
)
MAX_OPERATION_KEY = 200


# --- What the operations return ----------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What a write did: applied (and the state it left), or rejected and why."""

    applied: bool
    state: str | None = None
    reason: str = ""

    def __bool__(self) -> bool:
        return self.applied


@dataclass(frozen=True)
class Claim:
    """A worker's authority over one job: valid only while the epoch is current."""

    job_id: int
    kind: str
    epoch: int
    attempt: int
    lease_expires_at: datetime
    deadline: datetime
    payload: dict[str, Any]
    worker: str
    lease: timedelta = timedelta(seconds=30)  # the length each renewal grants


@dataclass(frozen=True)
class Acceptance:
    job: Job
    created: bool


class StaleEpoch(Exception):
    """A fenced write found that the job is no longer this epoch's to write."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- Accept ---------------------------------------------------------------------------


def accept(
    *,
    tenant_id: int,
    user_id: int,
    kind: str,
    payload: Any,
    operation_key: str,
    now: datetime,
    document: documents.Upload | None = None,
    offered_only: bool = True,
    batch: str = "",
    priority: int = 0,
    available_at: datetime | None = None,
    max_attempts: int | None = None,
    deadline: timedelta | None = None,
) -> Acceptance:
    """Commit a queued job, idempotently per tenant + user + operation key.

    All validation happens before anything is written. The unique constraint, not a
    prior look-up, decides a race between two requests carrying one key. ``available_at``
    holds the job back until then (its deadline counts from then); ``max_attempts`` and
    ``deadline`` override the defaults for this job; ``batch`` groups jobs submitted
    together; ``priority`` orders claims within the fairness rule.
    """
    spec = kinds.offered(kind) if offered_only else kinds.get(kind)
    if spec is None:
        raise UnknownKind(f"unknown job kind {kind!r}", field="kind")
    key = _check_operation_key(operation_key)
    payload = {} if payload is None else payload
    if not isinstance(payload, dict):
        raise InvalidPayload("payload must be a JSON object", field="payload")
    encoded = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if len(encoded.encode()) > spec.max_payload_bytes:
        raise PayloadTooLarge(
            f"payload is larger than {spec.max_payload_bytes} bytes for kind {kind!r}", field="payload"
        )
    _check_schema(spec, payload)
    if document is not None and not spec.accepts_document:
        raise UnsupportedDocument(f"kind {kind!r} takes no document", field="document")
    if spec.check_input is not None:
        spec.check_input(payload=payload, has_document=document is not None)
    # Stored (named by its digest, written once) before the row that names it commits.
    stored = documents.check_and_store(document, spec, tenant_id=tenant_id) if document is not None else None

    start = max(available_at or now, now)
    options = [priority, start.isoformat() if available_at else "", max_attempts or 0,
               deadline.total_seconds() if deadline else 0]
    fingerprint = hashlib.sha256(
        json.dumps([kind, encoded, stored.sha256 if stored else "", *(options if any(options) else [])]).encode()
    ).hexdigest()
    try:
        with write_transaction():
            job = Job.objects.create(
                tenant_id=tenant_id,
                submitted_by_id=user_id,
                kind=kind,
                payload=payload,
                document=stored.name if stored else "",
                document_name=stored.original_name if stored else "",
                document_type=stored.content_type if stored else "",
                document_size=stored.size if stored else None,
                document_sha256=stored.sha256 if stored else "",
                operation_key=key,
                request_fingerprint=fingerprint,
                state=QUEUED,
                max_attempts=max_attempts or settings.JOBS["MAX_ATTEMPTS"],
                available_at=start,
                deadline=start + (deadline or spec.deadline),
                batch=batch[:64],
                priority=priority,
                created_at=now,
                updated_at=now,
            )
            _record(job.pk, "", QUEUED, 0, f"user:{user_id}", "accepted", now)
            _notify_accepted()
    except IntegrityError:
        existing = Job.objects.filter(tenant_id=tenant_id, submitted_by_id=user_id, operation_key=key).first()
        if existing is None:  # the constraint that fired was not ours
            raise
        if existing.request_fingerprint != fingerprint:
            raise OperationKeyConflict(
                "this Idempotency-Key was already used for a different request", field="operation_key"
            ) from None
        return Acceptance(existing, created=False)
    return Acceptance(job, created=True)


def _check_operation_key(key: str | None) -> str:
    key = (key or "").strip()
    if not key:
        raise InvalidOperationKey("an operation key (Idempotency-Key) is required", field="operation_key")
    if len(key) > MAX_OPERATION_KEY or not key.isprintable():
        raise InvalidOperationKey(
            f"the operation key must be at most {MAX_OPERATION_KEY} printable characters", field="operation_key"
        )
    return key


def _check_schema(spec: kinds.Kind, payload: dict[str, Any]) -> None:
    try:
        jsonschema.validate(payload, spec.payload_schema)
    except jsonschema.ValidationError as exc:
        where = "payload" + "".join(f".{p}" for p in exc.absolute_path)
        raise InvalidPayload(f"{where}: {exc.message}", field=where) from None


def _notify_accepted() -> None:
    """Wake idle PostgreSQL workers (LISTEN jobs_accepted); SQLite workers poll.

    Sent inside the accepting transaction: PostgreSQL delivers it at commit, and a failure
    rolls the row back, so an accepted request is never answered with an error.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("NOTIFY jobs_accepted")


# --- Claim ----------------------------------------------------------------------------


def claim(*, now: datetime, worker: str, lease: timedelta | None = None) -> Claim | None:
    """Lease the oldest eligible queued job to ``worker``, or return None.

    The epoch and attempt count grow by one and the lease is set, never past the deadline.
    A job found already past its deadline goes to ``dead`` instead, and the next is tried.
    """
    lease = lease or timedelta(seconds=settings.JOBS["DEFAULT_LEASE_SECONDS"])
    vendor = connections[DEFAULT_DB_ALIAS].vendor
    sql = _statements(vendor)
    t_now, expires = _raw_time(vendor, now), _raw_time(vendor, now + lease)
    params = (t_now, t_now, t_now, expires, worker, t_now, t_now, t_now, t_now)
    actor = f"worker:{worker}"
    while True:
        if vendor == "postgresql":  # one statement writes the claim and its event
            with raw_write_transaction(explicit=False) as cursor:
                cursor.execute(sql["claim"], (*params, actor, t_now))
                row = cursor.fetchone()
        else:
            with raw_write_transaction() as cursor:
                cursor.execute(sql["claim"], params)
                row = cursor.fetchone()
                if row is not None:
                    dead = row[2] != LEASED
                    cursor.execute(sql["event"], (row[0], QUEUED, row[2], row[3], "queue" if dead else actor,
                                                  "deadline passed before claim" if dead else "claimed", t_now))
        if row is None:
            return None
        job_id, kind, state, epoch, attempts, lease_expires_at, deadline, payload = row
        if state != LEASED:
            continue
        return Claim(
            job_id=job_id,
            kind=kind,
            epoch=epoch,
            attempt=attempts,
            lease_expires_at=_py_time(lease_expires_at),
            deadline=_py_time(deadline),
            payload=json.loads(payload) if isinstance(payload, (str, bytes)) else payload,
            worker=worker,
            lease=lease,
        )


@functools.cache
def _statements(vendor: str) -> dict[str, str]:
    """The hot path's statements in the driver's own placeholder style (see writelock)."""
    statements = {"claim": claim_statement(vendor), "complete": complete_statement(vendor), "event": EVENT_SQL}
    if vendor == "sqlite":
        statements = {name: sql.replace("%s", "?") for name, sql in statements.items()}
    return statements


def _raw_time(vendor: str, value: datetime) -> Any:
    """A timestamp as Django stores it: naive UTC text on SQLite, aware on PostgreSQL."""
    if vendor == "postgresql":
        return value
    return str(value.astimezone(timezone.utc).replace(tzinfo=None))


def claim_statement(vendor: str) -> str:
    """The claim as one statement (``%s`` placeholders); the benchmark's bare loop runs it too.

    On PostgreSQL the statement also writes the event row (a data-modifying CTE), so a claim
    is one round trip in autocommit; SQLite cannot put an INSERT in a CTE, so there the
    event is a second statement in the same BEGIN IMMEDIATE transaction.
    """
    table = Job._meta.db_table
    if vendor == "postgresql":
        least, hint, skip_locked = "LEAST", "", "FOR UPDATE SKIP LOCKED"
    else:
        # Without statistics SQLite may pick another index on state and sort; the hint
        # keeps the claim an index seek whatever the queue depth.
        least, hint, skip_locked = "MIN", "INDEXED BY job_claim_idx", ""
    # The subquery is the index seek on job_claim_idx (available_at, id WHERE state='queued');
    # the outer state check makes the UPDATE conditional on its own.
    update = f"""
        UPDATE {table} SET
            state = CASE WHEN deadline > %s THEN 'leased' ELSE 'dead' END,
            epoch = CASE WHEN deadline > %s THEN epoch + 1 ELSE epoch END,
            attempts = CASE WHEN deadline > %s THEN attempts + 1 ELSE attempts END,
            lease_expires_at = {least}(%s, deadline),
            leased_by = %s,
            updated_at = %s,
            finished_at = CASE WHEN deadline > %s THEN NULL ELSE %s END
        WHERE id = (
            SELECT id FROM {table} {hint}
            WHERE state = 'queued' AND available_at <= %s
            ORDER BY available_at, id
            LIMIT 1 {skip_locked}
        ) AND state = 'queued'
        RETURNING id, kind, state, epoch, attempts, lease_expires_at, deadline, payload
    """
    if vendor != "postgresql":
        return update
    return f"""
        WITH claimed AS ({update}),
        recorded AS (
            INSERT INTO {JobEvent._meta.db_table} (job_id, from_state, to_state, epoch, actor, reason, at)
            SELECT id, 'queued', state, epoch,
                   CASE WHEN state = 'leased' THEN %s ELSE 'queue' END,
                   CASE WHEN state = 'leased' THEN 'claimed' ELSE 'deadline passed before claim' END,
                   %s
            FROM claimed
        )
        SELECT id, kind, state, epoch, attempts, lease_expires_at, deadline, payload FROM claimed
    """


EVENT_SQL = (
    f"INSERT INTO {JobEvent._meta.db_table} (job_id, from_state, to_state, epoch, actor, reason, at) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s)"
)


# --- While the job runs -------------------------------------------------------------


def _owned(job_id: int, epoch: int, now: datetime, lease_left: timedelta = timedelta(0)):
    """The rows this epoch may still write: its own, leased, lease and deadline unexpired
    (the lease with at least ``lease_left`` to run)."""
    return Job.objects.filter(
        pk=job_id, epoch=epoch, state=LEASED, lease_expires_at__gt=now + lease_left, deadline__gt=now
    )


@contextmanager
def _while_owned(job_id: int, epoch: int, now: datetime, *, write: str, lease_left: timedelta = timedelta(0),
                 **changes: Any) -> Iterator[None]:
    """Apply ``changes`` and run the block in one transaction, only while ``epoch`` owns the job.

    When it no longer does, nothing is written but the rejection (an event naming ``write``
    and why), and ``StaleEpoch`` is raised. The guarded UPDATE comes first, so it also
    locks the job row for the block.
    """
    with write_transaction():
        if _owned(job_id, epoch, now, lease_left).update(updated_at=now, **changes):
            yield
            return
        reason = _why_not_owned(job_id, epoch, now, lease_left)
        _record(job_id, LEASED, "", epoch, "queue", f"{write} rejected: {reason}", now)
    raise StaleEpoch(reason)


def _owned_write(job_id: int, epoch: int, now: datetime, *, write: str, note: str = "",
                 lease_left: timedelta = timedelta(0), **changes: Any) -> Outcome:
    """``_while_owned`` as an Outcome; ``note`` puts the write on the job's timeline."""
    try:
        with _while_owned(job_id, epoch, now, write=write, lease_left=lease_left, **changes):
            if note:
                _record(job_id, LEASED, LEASED, epoch, "worker", note, now)
    except StaleEpoch as exc:
        return Outcome(False, None, exc.reason)
    return Outcome(True, LEASED)


def renew(*, job_id: int, epoch: int, now: datetime, lease: timedelta) -> Outcome:
    """Extend the lease to ``now + lease``, never past the deadline.

    Renewals are not transitions and leave no event; a rejected renewal does.
    """
    expires = Least(Value(now + lease, output_field=DateTimeField()), F("deadline"))
    return _owned_write(job_id, epoch, now, write="renewal", lease_expires_at=expires)


def mark_external_start(*, job_id: int, epoch: int, now: datetime, what: str = "external call",
                        min_left: timedelta = timedelta(0)) -> Outcome:
    """Commit the marker *before* any outside call: after it, an expired lease means unknown.

    Only while the lease has at least ``min_left`` to run: an outside call started on a
    lease about to lapse (renewals failing, say) would likely outlive it, and another host
    would then find the job ``unknown`` for nothing.
    """
    return _owned_write(job_id, epoch, now, write="external start", note=f"external start: {what}",
                        lease_left=min_left, external_started_at=now)


def clear_external_start(*, job_id: int, epoch: int, now: datetime, what: str = "external call") -> Outcome:
    """The outside call finished and its outcome is saved: a crash from here is safe again."""
    return _owned_write(job_id, epoch, now, write="external settle", note=f"external call settled: {what}",
                        external_started_at=None)


def note(*, job_id: int, epoch: int, actor: str, reason: str, now: datetime) -> None:
    """Put something that moved no state on the job's timeline (a refused tool proposal).

    Call it inside ``fenced()``, so only the epoch that owns the job can write one.
    """
    _record(job_id, LEASED, "", epoch, actor, reason, now)


@contextmanager
def fenced(*, job_id: int, epoch: int, now: datetime) -> Iterator[None]:
    """A transaction that holds only while ``epoch`` still owns the job.

    Other apps write their per-job rows (the agent's checkpoint) inside it, so a stale
    worker cannot write one: it gets ``StaleEpoch``, and the rejection is on the timeline.
    """
    with _while_owned(job_id, epoch, now, write="fenced write"):
        yield


# --- Finish ---------------------------------------------------------------------------


def complete(*, job_id: int, epoch: int, result: dict[str, Any], now: datetime, actor: str = "worker",
             summary: kinds.Summary | None = None) -> Outcome:
    """Save the result (and the kind's summary of it): only for this epoch, still leased,
    lease and deadline unexpired."""
    conn = connections[DEFAULT_DB_ALIAS]
    sql = _statements(conn.vendor)
    t_now = _raw_time(conn.vendor, now)
    params = (conn.ops.adapt_json_value(result, None), *summary_values(summary), t_now, t_now,
              job_id, epoch, t_now, t_now)
    if conn.vendor == "postgresql":  # one statement writes the completion and its event
        with raw_write_transaction(explicit=False) as cursor:
            cursor.execute(sql["complete"], (*params, actor, t_now))
            if cursor.rowcount == 1:
                return Outcome(True, COMPLETED)
    else:
        with raw_write_transaction() as cursor:
            cursor.execute(sql["complete"], params)
            if cursor.rowcount == 1:
                cursor.execute(sql["event"], (job_id, LEASED, COMPLETED, epoch, actor, "completed", t_now))
                return Outcome(True, COMPLETED)
    with write_transaction():
        reason = _why_not_owned(job_id, epoch, now)
        _record(job_id, LEASED, "", epoch, actor, f"stale completion rejected: {reason}", now)
    return Outcome(False, None, reason)


def summary_values(summary: kinds.Summary | None) -> tuple[str, str, bool, str]:
    """The summary columns of ``complete_statement``, in its order (empty without one)."""
    if summary is None:
        return ("", "", False, "")
    return (summary.outcome[:32], summary.text[:100], summary.needs_action, summary.reference[:200])


def complete_statement(vendor: str) -> str:
    """The fenced completion as one statement; the benchmark's bare loop runs it too.

    Parameters: the result, ``summary_values``, updated and finished times, then the fence
    (id, epoch, now for the lease, now for the deadline). On PostgreSQL it writes the event
    row too (see ``claim_statement``): add the actor and the time.
    """
    update = (
        f"UPDATE {Job._meta.db_table} SET state = 'completed', result = %s, outcome = %s, outcome_text = %s, "
        "needs_action = %s, reference = %s, lease_expires_at = NULL, "
        "updated_at = %s, finished_at = %s, last_error = '' "
        "WHERE id = %s AND epoch = %s AND state = 'leased' AND lease_expires_at > %s AND deadline > %s"
    )
    if vendor != "postgresql":
        return update
    return (
        f"WITH completed AS ({update} RETURNING id, epoch) "
        f"INSERT INTO {JobEvent._meta.db_table} (job_id, from_state, to_state, epoch, actor, reason, at) "
        "SELECT id, 'leased', 'completed', epoch, %s, 'completed', %s FROM completed"
    )


def fail(
    *,
    job_id: int,
    epoch: int,
    error: str,
    now: datetime,
    retryable: bool = True,
    actor: str = "worker",
    rng: random.Random | None = None,
) -> Outcome:
    """A failed attempt: back to ``queued`` after a jittered backoff, or ``dead``.

    Dead when the failure is not retryable, the attempts are spent, or the next try could
    only start after the deadline. A failure after the external-start marker is ``unknown``:
    nobody can say whether the outside effect happened. Like ``complete``, it holds only for
    this epoch while its lease and the deadline hold: past them the claim is no longer the
    worker's to settle, and recovery decides (``queued``, ``dead`` or ``unknown``).
    """
    error = error[:1000]
    with write_transaction():
        job = _held(job_id, epoch, now)
        if job is None:
            reason = _why_not_owned(job_id, epoch, now)
            _record(job_id, LEASED, "", epoch, actor, f"failure report rejected: {reason}", now)
            return Outcome(False, None, reason)
        retry_at = now + backoff(job.attempts, rng=rng)
        if job.external_started_at is not None:
            to, why = UNKNOWN, "failed after external start"
        elif not retryable:
            to, why = DEAD, "failed, not retryable"
        elif job.attempts >= job.max_attempts:
            to, why = DEAD, f"failed, {job.attempts} attempts spent"
        elif retry_at >= job.deadline:
            to, why = DEAD, "failed, next try would start after the deadline"
        else:
            to, why = QUEUED, "failed, will retry"
        changes: dict[str, Any] = {"state": to, "lease_expires_at": None, "last_error": error, "updated_at": now}
        if to == QUEUED:
            changes["available_at"] = retry_at
        else:
            changes["finished_at"] = now
        Job.objects.filter(pk=job_id, epoch=epoch, state=LEASED).update(**changes)
        _record(job_id, LEASED, to, epoch, actor, why, now)
    return Outcome(True, to, why)


def defer(*, job_id: int, epoch: int, until: datetime, now: datetime, reason: str, actor: str = "worker") -> Outcome:
    """Hand the job back until ``until`` without spending the attempt.

    For an outside system that said "not now" (a 429 with Retry-After: it did nothing, so
    the external-start marker is cleared) and for a worker shutting down before it began.
    Dead if ``until`` is not before the deadline. Fenced like ``complete``.
    """
    with write_transaction():
        job = _held(job_id, epoch, now)
        if job is None:
            why = _why_not_owned(job_id, epoch, now)
            _record(job_id, LEASED, "", epoch, actor, f"deferral rejected: {why}", now)
            return Outcome(False, None, why)
        if until >= job.deadline:
            to, changes = DEAD, {"finished_at": now, "last_error": f"{reason}; no time left before the deadline"}
        else:
            to, changes = QUEUED, {"available_at": until, "attempts": max(job.attempts - 1, 0)}
        Job.objects.filter(pk=job_id, epoch=epoch, state=LEASED).update(
            state=to, lease_expires_at=None, external_started_at=None, updated_at=now, **changes
        )
        _record(job_id, LEASED, to, epoch, actor, f"deferred: {reason}"[:300], now)
    return Outcome(True, to, reason)


def _held(job_id: int, epoch: int, now: datetime) -> Job | None:
    """This epoch's job while it owns it, locked for the rest of the transaction (PostgreSQL)."""
    return (
        _owned(job_id, epoch, now).select_for_update()
        .only("attempts", "max_attempts", "deadline", "external_started_at")
        .first()
    )


def backoff(attempts: int, *, rng: random.Random | None = None) -> timedelta:
    """Exponential backoff with jitter: base * 2^(n-1), capped, scaled by 50-100%."""
    base = settings.JOBS["RETRY_BASE_SECONDS"] * 2 ** max(attempts - 1, 0)
    capped = min(base, settings.JOBS["RETRY_MAX_SECONDS"])
    return timedelta(seconds=capped * (0.5 + 0.5 * (rng or random).random()))


# --- Recover --------------------------------------------------------------------------


@dataclass(frozen=True)
class Recovery:
    requeued: list[int]
    unknown: list[int]
    dead: list[int]

    @property
    def total(self) -> int:
        return len(self.requeued) + len(self.unknown) + len(self.dead)


def recover(*, now: datetime, limit: int = 500) -> Recovery:
    """Sweep expired leases and passed deadlines, in one bounded transaction.

    Expired lease: back to ``queued``; ``unknown`` if the external-start marker is set
    (nobody may repeat an outside call automatically); ``dead`` if the attempts are spent
    or the deadline passed. Live jobs past their deadline: ``dead`` (``unknown`` if an
    external call had started). Each UPDATE repeats the conditions in its WHERE clause,
    so a job a worker completed a moment earlier is left alone; on PostgreSQL rows locked
    by another transaction are skipped and swept next time.
    """
    table = Job._meta.db_table
    lease_hint = "INDEXED BY job_lease_idx" if connection.vendor == "sqlite" else ""
    # PostgreSQL: rows another transaction holds (a worker stopped inside its own write) are
    # passed over until it lets go, rather than waited for: one stuck process must not stop
    # every worker's sweep.
    skip_locked = "FOR UPDATE SKIP LOCKED" if connection.vendor == "postgresql" else ""
    t_now = _db_time(now)
    requeued: list[int] = []
    unknown: list[int] = []
    dead: list[int] = []
    events: list[JobEvent] = []
    with write_transaction(), connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH picked AS (
                SELECT id FROM {table} {lease_hint} WHERE state = 'leased' AND lease_expires_at <= %s
                ORDER BY lease_expires_at LIMIT %s {skip_locked}
            )
            UPDATE {table} SET
                state = CASE
                    WHEN external_started_at IS NOT NULL THEN 'unknown'
                    WHEN deadline <= %s OR attempts >= max_attempts THEN 'dead'
                    ELSE 'queued' END,
                available_at = %s, lease_expires_at = NULL, updated_at = %s,
                finished_at = CASE
                    WHEN external_started_at IS NOT NULL OR deadline <= %s OR attempts >= max_attempts
                    THEN %s ELSE NULL END,
                last_error = CASE
                    WHEN external_started_at IS NOT NULL THEN 'lease expired after the external-start marker'
                    WHEN deadline <= %s THEN 'deadline passed'
                    WHEN attempts >= max_attempts THEN 'lease expired; attempts spent'
                    ELSE 'lease expired' END
            WHERE id IN (SELECT id FROM picked) AND state = 'leased' AND lease_expires_at <= %s
            RETURNING id, state, epoch, last_error
            """,
            [t_now, limit, t_now, t_now, t_now, t_now, t_now, t_now, t_now],
        )
        for job_id, state, epoch, why in cursor.fetchall():
            {QUEUED: requeued, UNKNOWN: unknown, DEAD: dead}[state].append(job_id)
            events.append(JobEvent(job_id=job_id, from_state=LEASED, to_state=state, epoch=epoch,
                                   actor="recovery", reason=why, at=now))
        for from_state in (QUEUED, LEASED):
            cursor.execute(
                f"""
                WITH picked AS (
                    SELECT id FROM {table} WHERE state = %s AND deadline <= %s ORDER BY deadline LIMIT %s
                    {skip_locked}
                )
                UPDATE {table} SET
                    state = CASE WHEN external_started_at IS NOT NULL THEN 'unknown' ELSE 'dead' END,
                    lease_expires_at = NULL, updated_at = %s, finished_at = %s,
                    last_error = 'deadline passed'
                WHERE id IN (SELECT id FROM picked) AND state = %s AND deadline <= %s
                RETURNING id, state, epoch
                """,
                [from_state, t_now, limit, t_now, t_now, from_state, t_now],
            )
            for job_id, state, epoch in cursor.fetchall():
                (unknown if state == UNKNOWN else dead).append(job_id)
                events.append(JobEvent(job_id=job_id, from_state=from_state, to_state=state, epoch=epoch,
                                       actor="recovery", reason="deadline passed", at=now))
        JobEvent.objects.bulk_create(events)
    return Recovery(requeued, unknown, dead)


# --- Staff ----------------------------------------------------------------------------


def requeue(*, job_id: int, expected_state: str, expected_epoch: int, actor: str, reason: str, now: datetime,
            deadline: timedelta | None = None) -> Outcome:
    """Staff move a dead or unknown job back to ``queued`` with fresh attempts.

    Applies only while the job is still in the state and epoch the staff member saw. The
    epoch is kept (the next claim raises it), so no token a worker ever held becomes valid
    again.
    """
    if expected_state not in (DEAD, UNKNOWN):
        return Outcome(False, None, f"only dead or unknown jobs can be requeued, not {expected_state}")
    with write_transaction():
        kind = Job.objects.filter(pk=job_id).values_list("kind", flat=True).first()
        if kind is None:
            return Outcome(False, None, "no such job")
        spec = kinds.get(kind)
        budget = deadline or (spec.deadline if spec else timedelta(seconds=settings.JOBS["DEFAULT_DEADLINE_SECONDS"]))
        moved = Job.objects.filter(pk=job_id, state=expected_state, epoch=expected_epoch).update(
            state=QUEUED, attempts=0, available_at=now, deadline=now + budget, lease_expires_at=None,
            external_started_at=None, finished_at=None, updated_at=now,
        )
        if not moved:
            return Outcome(False, None, _why_not_as_seen(job_id, expected_state, expected_epoch))
        _record(job_id, expected_state, QUEUED, expected_epoch, actor, reason, now)
        _notify_accepted()
    return Outcome(True, QUEUED, reason)


def resolve(*, job_id: int, expected_state: str, expected_epoch: int, to_state: str, actor: str, reason: str,
            now: datetime, result: dict[str, Any] | None = None) -> Outcome:
    """Staff settle an unknown job as ``completed`` (with the outcome) or ``dead`` (discard).

    Applies only while the job is still in the state and epoch the staff member saw.
    """
    if expected_state != UNKNOWN or to_state not in (COMPLETED, DEAD):
        return Outcome(False, None, f"cannot move {expected_state} to {to_state}")
    changes: dict[str, Any] = {"state": to_state, "updated_at": now, "finished_at": now, "lease_expires_at": None}
    if to_state == COMPLETED:
        changes["result"] = result or {}
    with write_transaction():
        if not Job.objects.filter(pk=job_id, state=expected_state, epoch=expected_epoch).update(**changes):
            return Outcome(False, None, _why_not_as_seen(job_id, expected_state, expected_epoch))
        _record(job_id, expected_state, to_state, expected_epoch, actor, reason, now)
    return Outcome(True, to_state, reason)


def _why_not_as_seen(job_id: int, state: str, epoch: int) -> str:
    """Why a staff move found the job changed since the staff member saw it."""
    current = Job.objects.filter(pk=job_id).values_list("state", "epoch").first()
    if current is None:
        return "no such job"
    if current[0] != state:
        return f"no longer {state} (now {current[0]})"
    return f"epoch {epoch} superseded by {current[1]}"


# --- Retention -------------------------------------------------------------------------


def delete_finished(*, ids: list[int], cutoff: datetime,
                    retiring: Callable[[Any], None] | None = None) -> dict[str, int]:
    """Delete those of ``ids`` that are still finished before ``cutoff``, in one transaction.

    The condition is checked again inside the transaction (staff may have requeued one
    meanwhile). Events and other per-job rows go with their job (foreign keys with
    CASCADE). ``retiring`` is called inside the transaction with the events about to be
    deleted, so a caller can keep their counts. Returns Django's deleted counts per model.
    """
    with write_transaction():
        doomed = Job.objects.finished_before(cutoff).filter(pk__in=ids)
        if retiring is not None:
            retiring(JobEvent.objects.filter(job__in=doomed))
        _, deleted = doomed.delete()
    return deleted


# --- Helpers ---------------------------------------------------------------------------


def _why_not_owned(job_id: int, epoch: int, now: datetime, lease_left: timedelta = timedelta(0)) -> str:
    """Say which condition of the fenced write no longer holds (the cold path)."""
    job = Job.objects.filter(pk=job_id).values("state", "epoch", "lease_expires_at", "deadline").first()
    if job is None:
        return "no such job"
    if job["epoch"] != epoch:
        return f"epoch {epoch} superseded by {job['epoch']}"
    if job["state"] != LEASED:
        return f"job is {job['state']}"
    if job["deadline"] <= now:
        return "deadline passed"
    if job["lease_expires_at"] is None or job["lease_expires_at"] <= now:
        return "lease expired"
    if job["lease_expires_at"] <= now + lease_left:
        return f"less than {lease_left.total_seconds():g} s of lease left"
    return "conditions changed"


def _record(job_id: int, from_state: str, to_state: str, epoch: int, actor: str, reason: str, now: datetime) -> None:
    with connection.cursor() as cursor:
        cursor.execute(EVENT_SQL, [job_id, from_state, to_state, epoch, actor[:150], reason[:300], _db_time(now)])


def _db_time(value: datetime) -> Any:
    return connection.ops.adapt_datetimefield_value(value)


def _py_time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    return datetime.fromisoformat(value).replace(tzinfo=timezone.utc)
