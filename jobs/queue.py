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
import logging
import random
import weakref
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import StrEnum
from typing import Any, Callable, Iterable, Iterator, Sequence

import jsonschema
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, IntegrityError, connection, connections, transaction
from django.db.models import DateTimeField, Exists, F, OuterRef, Value
from django.db.models.functions import Greatest
from django.dispatch import Signal

from . import documents, kinds, statements
from .errors import (
    InvalidOperationKey,
    InvalidPayload,
    OperationKeyConflict,
    PayloadTooLarge,
    Reason,
    TenantQueueFull,
    UnknownKind,
    UnsupportedDocument,
)
from .models import Job, JobEvent, ProviderHold, ProviderSlot, Tenant
from .writelock import raw_write_transaction, write_transaction

log = logging.getLogger("jobs.queue")

QUEUED, LEASED, COMPLETED, DEAD, UNKNOWN, CANCELLED = (
    Job.State.QUEUED.value,
    Job.State.LEASED.value,
    Job.State.COMPLETED.value,
    Job.State.DEAD.value,
    Job.State.UNKNOWN.value,
    Job.State.CANCELLED.value,
)
NEEDS_HUMAN = frozenset({DEAD, UNKNOWN})
MAX_OPERATION_KEY = 200
CANCEL_REQUESTED = "cancel requested"
RETURNED_UNSTARTED = "returned unstarted: its worker held it but never started it"
MAX_FAILURE_CODE = 64  # Job.failure_code


class FailureCode(StrEnum):
    """Why a job's run ended without a result, as ``Job.failure_code`` keeps it beside
    ``last_error``: the queue's and the worker's own reasons. A kind's reasons (its
    ``JobFailed.code``, an acceptance refusal's code) are kept as the kind gave them."""

    # Time
    DEADLINE = "deadline"  # the sandbox stopped the handler when the deadline came
    DEADLINE_PASSED = "deadline_passed"  # recovery found the job past its deadline
    NO_TIME_LEFT = "no_time_left"  # deferred to a time after its deadline
    # The run, as the queue saw it
    LEASE_EXPIRED = "lease_expired"  # its worker stopped renewing the lease (died, froze, cut off)
    ATTEMPTS_SPENT = "attempts_spent"  # ... on its last attempt
    CANCELLED = "cancelled"
    DISCARDED = "discarded"  # staff gave up on a job whose outcome was unknown
    # The handler, as the worker saw it
    HANDLER_ERROR = "handler_error"  # an exception the handler did not catch
    HANDLER_FAILED = "handler_failed"  # a JobFailed that named no code of its own
    HANDLER_CRASHED = "handler_crashed"  # its process died
    STOPPED = "stopped"  # it did not stop when asked
    SHUTDOWN = "shutdown"  # it stopped because its worker was shutting down
    BAD_RESULT = "bad_result"
    UNKNOWN_KIND = "unknown_kind"
    # The input, under an isolated kind's limits
    MEMORY_LIMIT = "memory_limit"
    CPU_LIMIT = "cpu_limit"
    TIME_LIMIT = "time_limit"
    TOO_DEEP = "too_deep"


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
    _check_waiting(tenant_id, user_id, key)
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
            if start <= now:  # claimable now: its place among the tenants' turns
                _raw_execute(functools.partial(statements.stamp_one, fair=settings.JOBS["FAIR_CLAIMS"]), job.pk)
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


def _check_waiting(tenant_id: int, user_id: int, key: str) -> None:
    """Refuse a new job of a tenant that has its limit of jobs waiting (429), writing nothing.

    A retry of a request already accepted is not a new job: it gets its job, full or not.
    Two submissions racing for the last place may both get in; the limit holds within that.
    """
    limit = waiting_limit(tenant_id)
    if not limit:
        return
    if waiting(tenant_id, upto=limit) < limit:
        return
    if Job.objects.filter(tenant_id=tenant_id, submitted_by_id=user_id, operation_key=key).exists():
        return
    raise TenantQueueFull(
        f"your organisation already has {limit} jobs waiting; submit more once some have started",
        retry_after=settings.JOBS["TENANT_FULL_RETRY_AFTER"],
    )


def waiting_limit(tenant_id: int) -> int | None:
    """The tenant's own limit of waiting jobs, else the default (settings); None: no limit."""
    own = Tenant.objects.filter(pk=tenant_id).values_list("max_waiting", flat=True).first()
    return own or settings.JOBS["TENANT_MAX_WAITING"] or None


def waiting(tenant_id: int, *, upto: int) -> int:
    """How many of the tenant's jobs wait (queued), counted up to ``upto`` (job_waiting_idx)."""
    return Job.objects.filter(tenant_id=tenant_id, state=QUEUED).order_by()[:upto].count()


def _raw_execute(statement: Callable[[str], str], *params: Any) -> None:
    """One of ``jobs.statements`` on the driver's cursor, in the current transaction."""
    conn = connections[DEFAULT_DB_ALIAS]
    conn.ensure_connection()
    with conn.wrap_database_errors:
        cursor = conn.connection.cursor()
        try:
            cursor.execute(statement(conn.vendor), params)
        finally:
            cursor.close()


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
        reason = Reason.TOO_LONG if exc.validator == "maxLength" else ""
        raise InvalidPayload(f"{where}: {exc.message}", field=where, reason=reason) from None


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
    """Lease the job whose turn it is to ``worker``, or return None (``claim_many`` of one)."""
    claims = claim_many(now=now, worker=worker, lease=lease, limit=1)
    return claims[0] if claims else None


def claim_many(*, now: datetime, worker: str, lease: timedelta | None = None, limit: int = 1) -> list[Claim]:
    """Lease up to ``limit`` jobs to ``worker`` in one transaction, each in its turn.

    Tenants take turns (``jobs.statements``): each pick takes the first claimable job in
    (priority, turn) order, passing over tenants at their running limit, and sees the picks
    before it, so a batch of claims is the same jobs, in the same order, as that many single
    claims. Each job's epoch and attempt count grow by one and its lease is set, never past
    the deadline. Queued jobs already past their deadline are left to ``recover``, which makes
    them ``dead``. One commit (one fsync) covers the whole batch.
    """
    lease = lease or timedelta(seconds=settings.JOBS["DEFAULT_LEASE_SECONDS"])
    vendor = connections[DEFAULT_DB_ALIAS].vendor
    fair = settings.JOBS["FAIR_CLAIMS"]
    t_now, expires = _raw_time(vendor, now), _raw_time(vendor, now + lease)
    actor = f"worker:{worker}"
    claims: list[Claim] = []
    for _ in range(3):  # PostgreSQL: try again after a 'busy' or 'stamped' answer (jobs.statements)
        rows: list[Any] = []
        wanted = limit - len(claims)
        if vendor == "postgresql":  # one statement per pick stamps, claims and writes the event
            params = (t_now, statements.DUE_BATCH, t_now, t_now, statements.CANDIDATES, expires, worker, t_now,
                      actor, t_now)
            if wanted == 1:
                with raw_write_transaction(explicit=False) as cursor:
                    cursor.execute(statements.claim_postgresql(fair), params)
                    rows.append(cursor.fetchone())
            else:
                rows += _claim_batch_postgresql(fair, params, wanted)
        else:
            with raw_write_transaction() as cursor:
                if cursor.execute(statements.any_due(vendor), (t_now,)).fetchone():
                    cursor.execute(statements.stamp_due(vendor, fair), (t_now, statements.DUE_BATCH))
                for _pick in range(wanted):
                    cursor.execute(statements.pick(vendor), (t_now, t_now, statements.CANDIDATES))
                    picked = cursor.fetchone()
                    if picked is None:
                        break
                    if picked[2]:  # a tenant with a running limit: count it (it is under the limit)
                        cursor.execute(statements.count_running(vendor), (picked[1],))
                    cursor.execute(statements.lease(vendor), (expires, worker, t_now, picked[0]))
                    rows.append(cursor.fetchone())
                cursor.executemany(_event_sql(vendor), [(row[0], QUEUED, LEASED, row[3], actor, "claimed", t_now)
                                                        for row in rows])
        retry = False
        for row in rows:
            if row is None:
                continue
            job_id, kind, state, epoch, attempts, lease_expires_at, deadline, payload, _tenant = row
            if state != LEASED:
                retry = True
                continue
            claims.append(Claim(
                job_id=job_id,
                kind=kind,
                epoch=epoch,
                attempt=attempts,
                lease_expires_at=_py_time(lease_expires_at),
                deadline=_py_time(deadline),
                payload=json.loads(payload) if isinstance(payload, (str, bytes)) else payload,
                worker=worker,
                lease=lease,
            ))
        if not retry or len(claims) >= limit or vendor != "postgresql":
            break
    return claims


# Per connection (psycopg's), the claim statements it has prepared (``_claim_batch_postgresql``).
_prepared_claims: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def _claim_batch_postgresql(fair: bool, params: tuple[Any, ...], picks: int) -> list[Any]:
    """PostgreSQL: ``picks`` claims in one transaction, sent whole as one message.

    The picks are ``EXECUTE`` calls of the prepared claim (``statements.prepare_claim_postgresql``)
    in one simple-query message, which the server runs as one implicit transaction, one
    commit, reading nothing more from the client until it has committed or rolled back. So
    no row lock waits on the client: a worker frozen anywhere in the batch (SIGSTOP, a paused
    VM) holds nothing, where a pipeline of separate statements in an open transaction left the
    server waiting for the rest (``active``, ``ClientRead``), beyond the reach of both
    ``statement_timeout`` and ``idle_in_transaction_session_timeout``, its rows locked and
    skipped by every sweep. The parameters are bound on the client (the same for every pick);
    the statement is prepared in the same message the first time on each connection. Returns
    one row (or None) per pick, like that many single claims.
    """
    from psycopg import ClientCursor
    from psycopg import errors as pg_errors

    conn = connections[DEFAULT_DB_ALIAS]
    name, prepare = statements.prepare_claim_postgresql(fair)
    for attempt in range(2):
        conn.ensure_connection()
        raw = conn.connection
        known = _prepared_claims.setdefault(raw, set())
        try:
            with raw_write_transaction(explicit=False):  # Django's errors; a savepoint inside a transaction
                cursor = ClientCursor(raw)
                try:
                    call = cursor.mogrify(f"EXECUTE {name}({', '.join(['%s'] * len(params))})", params)
                    message = ";\n".join([call] * picks)
                    cursor.execute(message if name in known else f"{prepare};\n{message}")
                    known.add(name)
                    rows: list[Any] = []
                    while True:
                        if cursor.description is not None:  # a pick's row (the PREPARE returns none)
                            rows.append(cursor.fetchone())
                        if not cursor.nextset():
                            return rows
                finally:
                    cursor.close()
        except DatabaseError as exc:
            if attempt or not isinstance(exc.__cause__, (pg_errors.InvalidSqlStatementName,
                                                          pg_errors.DuplicatePreparedStatement)):
                raise
            # This connection's prepared statements were not what we thought (DEALLOCATE, or a
            # PREPARE whose message failed after it): try once more knowing better.
            if isinstance(exc.__cause__, pg_errors.DuplicatePreparedStatement):
                known.add(name)
            else:
                known.discard(name)
    raise AssertionError("unreachable")


@functools.cache
def _event_sql(vendor: str) -> str:
    return statements.for_driver(vendor, statements.EVENT_SQL)


def _raw_time(vendor: str, value: datetime) -> Any:
    """A timestamp as Django stores it: naive UTC text on SQLite, aware on PostgreSQL."""
    if vendor == "postgresql":
        return value
    return str(value.astimezone(timezone.utc).replace(tzinfo=None))


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
                 lease_left: timedelta = timedelta(0), also: Callable[[], object] | None = None,
                 **changes: Any) -> Outcome:
    """``_while_owned`` as an Outcome; ``note`` puts the write on the job's timeline, ``also``
    writes the caller's own rows in the same transaction."""
    try:
        with _while_owned(job_id, epoch, now, write=write, lease_left=lease_left, **changes):
            if note:
                _record(job_id, LEASED, LEASED, epoch, "worker", note, now)
            if also is not None:
                also()
    except StaleEpoch as exc:
        return Outcome(False, None, exc.reason)
    return Outcome(True, LEASED)


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
    table = Job._meta.db_table
    least = "LEAST" if connection.vendor == "postgresql" else "MIN"
    t_now = _db_time(now)
    new_expiry = " ".join("WHEN %s THEN %s" for _ in leases)
    owned = " OR ".join("(id = %s AND epoch = %s)" for _ in leases)
    params: list[Any] = [v for job_id, _, lease in leases for v in (job_id, _db_time(now + lease))]
    params += [t_now, t_now, t_now]
    params += [v for job_id, epoch, _ in leases for v in (job_id, epoch)]
    with write_transaction(), connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {table} SET lease_expires_at = {least}(CASE id {new_expiry} END, deadline), updated_at = %s
            WHERE state = 'leased' AND lease_expires_at > %s AND deadline > %s AND ({owned})
            RETURNING id, cancel_requested_at
            """,
            params,
        )
        renewed = {job_id: asked is not None for job_id, asked in cursor.fetchall()}
        outcomes = []
        for job_id, epoch, _ in leases:
            if job_id in renewed:
                outcomes.append(Outcome(True, LEASED, CANCEL_REQUESTED if renewed[job_id] else ""))
                continue
            reason = _why_not_owned(job_id, epoch, now)
            _record(job_id, LEASED, "", epoch, "queue", f"renewal rejected: {reason}", now)
            outcomes.append(Outcome(False, None, reason))
    return outcomes


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
    the disk (``statements.start``): it must survive the worker's death, not a power cut,
    whose only cost would be an attempt given back. A worker records a run of fast jobs it
    is about to start one after another in one write (``Worker.start_window``).
    """
    if not claims:
        return []
    vendor = connections[DEFAULT_DB_ALIAS].vendor
    t_now = _raw_time(vendor, now)
    if vendor == "postgresql":
        params: list[Any] = [t_now, t_now, t_now, [c[0] for c in claims], [c[1] for c in claims]]
    else:
        params = [t_now, t_now, t_now, *(v for c in claims for v in c)]
    with raw_write_transaction(explicit=vendor != "postgresql", durable=False) as cursor:
        cursor.execute(statements.start(vendor, 1 if vendor == "postgresql" else len(claims)), params)
        applied = {job_id for (job_id,) in cursor.fetchall()}
    outcomes: list[Outcome] = []
    refused = [c for c in claims if c[0] not in applied]
    reasons: dict[tuple[int, int], str] = {}
    if refused:
        with write_transaction():
            for job_id, epoch in refused:
                reasons[job_id, epoch] = reason = _why_not_owned(job_id, epoch, now)
                _record(job_id, LEASED, "", epoch, "worker", f"start rejected: {reason}", now)
    for c in claims:
        outcomes.append(Outcome(True, LEASED) if c[0] in applied else Outcome(False, None, reasons[c]))
    return outcomes


def mark_external_start(*, job_id: int, epoch: int, now: datetime, what: str = "external call",
                        min_left: timedelta = timedelta(0), also: Callable[[], object] | None = None) -> Outcome:
    """Commit the marker *before* any outside call: after it, an expired lease means unknown.

    Only while the lease has at least ``min_left`` to run: an outside call started on a
    lease about to lapse (renewals failing, say) would likely outlive it, and another host
    would then find the job ``unknown`` for nothing. ``also`` runs in the marker's transaction:
    the kind's own record of the call (what was asked, its idempotency key) commits with the
    marker or not at all, which is what staff read to settle an ``unknown`` job.
    """
    return _owned_write(job_id, epoch, now, write="external start", note=f"external start: {what}",
                        lease_left=min_left, also=also, external_started_at=now)


def clear_external_start(*, job_id: int, epoch: int, now: datetime, what: str = "external call") -> Outcome:
    """The outside call finished and its outcome is saved: a crash from here is safe again."""
    return _owned_write(job_id, epoch, now, write="external settle", note=f"external call settled: {what}",
                        external_started_at=None)


# The reason of the note a failed job gets when a member submits its input again; the new
# job's id follows it. The submitter's timeline reads it (``status.timeline``). The new job
# gets the other end (``RESUBMITTED_FROM`` and the failed job's id): each page links the other.
RESUBMITTED_AS = "submitted again as job "
RESUBMITTED_FROM = "submitted again from job "


def record_resubmission(*, job_id: int, epoch: int, new_job_id: int, actor: str, now: datetime) -> None:
    """Say on a failed job's timeline who submitted its input again, and as which job; and on the
    new job's, which job it repeats. Notes both (no state moves), in one transaction."""
    with write_transaction():
        _record(job_id, DEAD, "", epoch, actor, f"{RESUBMITTED_AS}{new_job_id}", now)
        _record(new_job_id, QUEUED, "", 0, actor, f"{RESUBMITTED_FROM}{job_id}", now)


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
    conn = connections[DEFAULT_DB_ALIAS]
    vendor = conn.vendor
    t_now = _raw_time(vendor, now)
    applied: set[tuple[int, int]] = set()
    if vendor == "postgresql" and len(completions) > 1:  # the whole batch is one statement
        columns: list[list[Any]] = [[], [], [], [], [], [], []]
        for c in completions:
            for column, value in zip(columns, (c.job_id, c.epoch, conn.ops.adapt_json_value(c.result, None),
                                               *statements.summary_values(c.summary)), strict=True):
                column.append(value)
        with raw_write_transaction(explicit=False) as cursor:
            cursor.execute(statements.complete_many_postgresql(), (*columns, t_now, t_now, t_now, t_now, actor, t_now))
            applied = {(job_id, epoch) for job_id, epoch in cursor.fetchall()}
    elif vendor == "postgresql":  # one statement writes the completion and its event
        c = completions[0]
        with raw_write_transaction(explicit=False) as cursor:
            cursor.execute(statements.complete(vendor), (
                conn.ops.adapt_json_value(c.result, None), *statements.summary_values(c.summary), t_now, t_now,
                c.job_id, c.epoch, t_now, t_now, actor, t_now))
            if cursor.rowcount == 1:
                applied.add((c.job_id, c.epoch))
    else:  # one statement for the rows, one for their events, one per limited tenant
        params: list[Any] = [t_now, t_now]
        for c in completions:
            params += (c.job_id, c.epoch, conn.ops.adapt_json_value(c.result, None),
                       *statements.summary_values(c.summary))
        params += (t_now, t_now)
        with raw_write_transaction() as cursor:
            done = cursor.execute(statements.complete_many_sqlite(len(completions)), params).fetchall()
            left: Counter[int] = Counter(tenant_id for _, _, tenant_id in done)
            for tenant_id, n in left.items():
                cursor.execute(statements.release_running_many(vendor), (n, tenant_id))
            cursor.executemany(_event_sql(vendor), [(job_id, LEASED, COMPLETED, epoch, actor, "completed", t_now)
                                                    for job_id, epoch, _ in done])
            applied = {(job_id, epoch) for job_id, epoch, _ in done}
    outcomes: list[Outcome] = []
    rejected = [c for c in completions if (c.job_id, c.epoch) not in applied]
    reasons: dict[tuple[int, int], str] = {}
    if rejected:
        with write_transaction():
            for c in rejected:
                reasons[c.job_id, c.epoch] = reason = _why_not_owned(c.job_id, c.epoch, now)
                _record(c.job_id, LEASED, "", c.epoch, actor, f"stale completion rejected: {reason}", now)
    for c in completions:
        key = (c.job_id, c.epoch)
        outcomes.append(Outcome(True, COMPLETED) if key in applied else Outcome(False, None, reasons[key]))
    return outcomes


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
            job = _held(c.job_id, c.epoch, now)
            if job is None or job.external_started_at is not None:
                why = "external start recorded" if job is not None else _why_not_owned(c.job_id, c.epoch, now)
                _record(c.job_id, LEASED, "", c.epoch, actor, f"hand-back rejected: {why}", now)
                outcomes.append(Outcome(False, None, why))
                continue
            Job.objects.filter(pk=c.job_id, epoch=c.epoch, state=LEASED, external_started_at__isnull=True).update(
                state=QUEUED, attempts=Greatest(F("attempts") - 1, Value(0)), lease_expires_at=None,
                available_at=now, updated_at=now)
            _release_running(job.tenant_id)
            _record(c.job_id, LEASED, QUEUED, c.epoch, actor, reason, now)
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
    nobody can say whether the outside effect happened. Like ``complete``, it holds only for
    this epoch while its lease and the deadline hold: past them the claim is no longer the
    worker's to settle, and recovery decides (``queued``, ``dead`` or ``unknown``). ``code``
    (a ``FailureCode`` or the kind's own) is kept with ``error`` whatever the state it leaves:
    the pages choose their words by it.
    """
    error, code = error[:1000], code[:MAX_FAILURE_CODE]
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
        changes: dict[str, Any] = {"state": to, "lease_expires_at": None, "last_error": error, "failure_code": code,
                                   "updated_at": now}
        if to == QUEUED:
            changes.update(available_at=retry_at, turn=None)  # a new turn when the backoff is over
        else:
            changes["finished_at"] = now
        Job.objects.filter(pk=job_id, epoch=epoch, state=LEASED).update(**changes)
        _release_running(job.tenant_id)
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
            to, changes = DEAD, {"finished_at": now, "last_error": f"{reason}; no time left before the deadline",
                                 "failure_code": FailureCode.NO_TIME_LEFT}
        else:
            to, changes = QUEUED, {"available_at": until, "attempts": max(job.attempts - 1, 0), "turn": None}
        Job.objects.filter(pk=job_id, epoch=epoch, state=LEASED).update(
            state=to, lease_expires_at=None, external_started_at=None, updated_at=now, **changes
        )
        _release_running(job.tenant_id)
        _record(job_id, LEASED, to, epoch, actor, f"deferred: {reason}"[:300], now)
    return Outcome(True, to, reason)


def _held(job_id: int, epoch: int, now: datetime) -> Job | None:
    """This epoch's job while it owns it, locked for the rest of the transaction (PostgreSQL)."""
    return (
        _owned(job_id, epoch, now).select_for_update()
        .only("tenant_id", "attempts", "max_attempts", "deadline", "external_started_at")
        .first()
    )


def recount_running(*, tenant_id: int) -> None:
    """Count the tenant's running jobs afresh: when staff set or change its running limit."""
    with write_transaction():
        running = Job.objects.filter(tenant_id=tenant_id, state=LEASED).count()
        Tenant.objects.filter(pk=tenant_id).update(running=running)


def _release_running(tenant_id: int, jobs: int = 1) -> None:
    """Jobs of the tenant stopped running: lower its count, if it keeps one (a running limit)."""
    Tenant.objects.filter(pk=tenant_id, max_running__isnull=False).update(
        running=Greatest(F("running") - jobs, Value(0)))


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
    cancelled: list[int] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.requeued) + len(self.unknown) + len(self.dead) + len(self.cancelled)


def recover(*, now: datetime, limit: int = 500) -> Recovery:
    """Sweep expired leases and passed deadlines, in one bounded transaction.

    Expired lease: back to ``queued``; ``unknown`` if the external-start marker is set
    (nobody may repeat an outside call automatically); ``cancelled`` if someone had asked
    to cancel it (nobody will run it again); ``dead`` if the attempts are spent or the
    deadline passed. Only a claim whose handler was started (``start``) spends its attempt:
    one its worker only held (prefetched, then the worker died) goes back to ``queued`` with
    the attempt given back, recorded as ``RETURNED_UNSTARTED``, so ``dead`` for attempts
    means the handler was started ``max_attempts`` times. The epoch is kept (the next claim
    raises it), so the dead worker's late writes are refused either way. Live jobs past
    their deadline: ``dead`` (``unknown`` if an external call had started). Each UPDATE
    repeats the conditions in its WHERE clause,
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
    cancelled: list[int] = []
    events: list[JobEvent] = []
    # Whether the expired claim's handler was started (``start``; the external-start marker
    # is written only by a running handler). A claim that was only held gives its attempt back.
    started = "(started_at IS NOT NULL OR external_started_at IS NOT NULL)"
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
                    WHEN cancel_requested_at IS NOT NULL THEN 'cancelled'
                    WHEN deadline <= %s OR ({started} AND attempts >= max_attempts) THEN 'dead'
                    ELSE 'queued' END,
                attempts = CASE WHEN {started} OR attempts = 0 THEN attempts ELSE attempts - 1 END,
                available_at = %s, lease_expires_at = NULL, updated_at = %s, turn = NULL,
                finished_at = CASE
                    WHEN external_started_at IS NOT NULL OR cancel_requested_at IS NOT NULL
                         OR deadline <= %s OR ({started} AND attempts >= max_attempts)
                    THEN %s ELSE NULL END,
                last_error = CASE
                    WHEN external_started_at IS NOT NULL THEN 'lease expired after the external-start marker'
                    WHEN cancel_requested_at IS NOT NULL THEN 'cancelled; its worker did not answer'
                    WHEN deadline <= %s THEN 'deadline passed'
                    WHEN NOT {started} THEN last_error
                    WHEN attempts >= max_attempts THEN 'lease expired; attempts spent'
                    ELSE 'lease expired' END,
                failure_code = CASE
                    WHEN external_started_at IS NOT NULL THEN '{FailureCode.LEASE_EXPIRED}'
                    WHEN cancel_requested_at IS NOT NULL THEN '{FailureCode.CANCELLED}'
                    WHEN deadline <= %s THEN '{FailureCode.DEADLINE_PASSED}'
                    WHEN NOT {started} THEN failure_code
                    WHEN attempts >= max_attempts THEN '{FailureCode.ATTEMPTS_SPENT}'
                    ELSE '{FailureCode.LEASE_EXPIRED}' END
            WHERE id IN (SELECT id FROM picked) AND state = 'leased' AND lease_expires_at <= %s
            RETURNING id, state, epoch, last_error, tenant_id, started_at, external_started_at
            """,
            [t_now, limit, t_now, t_now, t_now, t_now, t_now, t_now, t_now, t_now],
        )
        left: Counter[int] = Counter()  # jobs that stopped running, per tenant
        # (The columns themselves, not an IS NULL of them: SQLite 3.40.1's RETURNING answers
        # "started_at IS NULL" with 0 for a NULL started_at on this table, which has NOT NULL
        # columns; reproduced with a three-column table.)
        for job_id, state, epoch, why, tenant_id, started_at, external_at in cursor.fetchall():
            {QUEUED: requeued, UNKNOWN: unknown, DEAD: dead, CANCELLED: cancelled}[state].append(job_id)
            left[tenant_id] += 1
            if state == QUEUED and started_at is None and external_at is None:
                why = RETURNED_UNSTARTED
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
                    attempts = CASE WHEN state = 'queued' OR {started} OR attempts = 0 THEN attempts
                                    ELSE attempts - 1 END,
                    lease_expires_at = NULL, updated_at = %s, finished_at = %s,
                    last_error = 'deadline passed', failure_code = '{FailureCode.DEADLINE_PASSED}'
                WHERE id IN (SELECT id FROM picked) AND state = %s AND deadline <= %s
                RETURNING id, state, epoch, tenant_id
                """,
                [from_state, t_now, limit, t_now, t_now, from_state, t_now],
            )
            for job_id, state, epoch, tenant_id in cursor.fetchall():
                (unknown if state == UNKNOWN else dead).append(job_id)
                if from_state == LEASED:
                    left[tenant_id] += 1
                events.append(JobEvent(job_id=job_id, from_state=from_state, to_state=state, epoch=epoch,
                                       actor="recovery", reason="deadline passed", at=now))
        for tenant_id, n in left.items():
            _release_running(tenant_id, n)
        JobEvent.objects.bulk_create(events)
        if any(_moves_needs_human(e.from_state, e.to_state) for e in events):
            _needs_human_changed(now)
        _left_live([e.job_id for e in events if e.to_state in FINISHED], now)
    return Recovery(requeued, unknown, dead, cancelled)


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
            external_started_at=None, cancel_requested_at=None, finished_at=None, updated_at=now, turn=None,
        )
        if not moved:
            return Outcome(False, None, _why_not_as_seen(job_id, expected_state, expected_epoch))
        _record(job_id, expected_state, QUEUED, expected_epoch, actor, reason, now)
        _notify_accepted()
    return Outcome(True, QUEUED, reason)


def resolve(*, job_id: int, expected_state: str, expected_epoch: int, to_state: str, actor: str, reason: str,
            now: datetime, result: dict[str, Any] | None = None) -> Outcome:
    """Staff settle an unknown job as ``completed`` (with the outcome) or ``dead`` (discard).

    Applies only while the job is still in the state and epoch the staff member saw. The
    error that made it unknown stays in ``last_error`` for the record; its code gives way to
    the staff's decision (none for a completion, ``discarded`` for a discard).
    """
    if expected_state != UNKNOWN or to_state not in (COMPLETED, DEAD):
        return Outcome(False, None, f"cannot move {expected_state} to {to_state}")
    changes: dict[str, Any] = {"state": to_state, "updated_at": now, "finished_at": now, "lease_expires_at": None,
                               "failure_code": "" if to_state == COMPLETED else FailureCode.DISCARDED}
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


# --- Cancellation ------------------------------------------------------------------------


# The reason of the event a cancel request of a running job records (the timeline reads it).
CANCEL_REQUESTED = "cancel requested"


def cancel(*, job_id: int, actor: str, reason: str, now: datetime, expected_epoch: int | None = None) -> Outcome:
    """Cancel a job: at once while it waits, by request while it runs.

    ``queued`` becomes ``cancelled`` (a conditional write: a claim racing it wins or loses
    whole). A ``leased`` job gets a recorded cancel request, which its worker acknowledges
    with a fenced write (``acknowledge_cancel``); until then a completion may still win. A
    second request, or one for a job already cancelled, changes nothing and says so. Other
    finished jobs are not cancellable (``Outcome.applied`` is False, ``state`` says why).
    With ``expected_epoch`` (staff, from the page they saw) it applies only on that epoch.
    """
    with write_transaction():
        current = Job.objects.filter(pk=job_id).values_list("state", "epoch", "cancel_requested_at").first()
        if current is None:
            return Outcome(False, None, "no such job")
        state, epoch, requested = current
        if expected_epoch is not None and epoch != expected_epoch:
            return Outcome(False, state, f"epoch {expected_epoch} superseded by {epoch}")
        if state == QUEUED and Job.objects.filter(pk=job_id, state=QUEUED, epoch=epoch).update(
                state=CANCELLED, finished_at=now, updated_at=now, turn=None, last_error="",
                failure_code=FailureCode.CANCELLED):
            _record(job_id, QUEUED, CANCELLED, epoch, actor, reason or "cancelled", now)
            return Outcome(True, CANCELLED, "cancelled")
        if state == LEASED and requested is None and Job.objects.filter(
                pk=job_id, state=LEASED, epoch=epoch, cancel_requested_at__isnull=True).update(
                cancel_requested_at=now, updated_at=now):
            _record(job_id, LEASED, LEASED, epoch, actor, f"{CANCEL_REQUESTED}: {reason}" if reason else
                    CANCEL_REQUESTED, now)
            _notify_cancel(job_id, epoch)
            return Outcome(True, LEASED, "cancel requested")
    if state == LEASED:
        return Outcome(True, LEASED, "cancel requested")  # asked before: harmless
    if state == CANCELLED:
        return Outcome(True, CANCELLED, "already cancelled")
    if state == QUEUED:  # claimed between the read and the write: ask its worker instead
        return cancel(job_id=job_id, actor=actor, reason=reason, now=now,
                      expected_epoch=None if expected_epoch is None else expected_epoch + 1)
    return Outcome(False, state, f"a {state} job cannot be cancelled")


# PostgreSQL: a cancel request of a running job is announced on this channel ("job:epoch").
CANCEL_CHANNEL = "jobs_cancel"


def _notify_cancel(job_id: int, epoch: int) -> None:
    """Tell the job's worker at once (PostgreSQL: its listener hears it at commit); SQLite
    workers look for requests of the jobs they hold twice a second (``jobs.worker``)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [CANCEL_CHANNEL, f"{job_id}:{epoch}"])


def cancels_requested(*, claims: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Those of these (job, epoch) claims someone asked to cancel: one primary-key lookup."""
    if not claims:
        return []
    asked = Job.objects.filter(pk__in=[job_id for job_id, _ in claims], cancel_requested_at__isnull=False)
    found = set(asked.values_list("id", "epoch"))
    return [c for c in claims if c in found]


def cancel_requested(*, job_id: int, epoch: int) -> bool:
    """Whether someone asked to cancel this epoch's run of the job."""
    return Job.objects.filter(pk=job_id, epoch=epoch, cancel_requested_at__isnull=False).exists()


def acknowledge_cancel(*, job_id: int, epoch: int, now: datetime, actor: str = "worker") -> Outcome:
    """The worker stopped a job someone asked to cancel: ``leased`` → ``cancelled``.

    Fenced like a completion. With the external-start marker still set (an outside call
    whose outcome nobody recorded) it is ``unknown`` instead: staff decide.
    """
    with write_transaction():
        job = _held(job_id, epoch, now)
        if job is None:
            why = _why_not_owned(job_id, epoch, now)
            _record(job_id, LEASED, "", epoch, actor, f"cancellation rejected: {why}", now)
            return Outcome(False, None, why)
        if job.external_started_at is not None:
            to, why = UNKNOWN, "cancelled while an outside call was in flight; its outcome is unknown"
        else:
            to, why = CANCELLED, "cancelled"
        Job.objects.filter(pk=job_id, epoch=epoch, state=LEASED).update(
            state=to, finished_at=now, updated_at=now, lease_expires_at=None, turn=None,
            last_error="" if to == CANCELLED else why, failure_code=FailureCode.CANCELLED)
        _release_running(job.tenant_id)
        _record(job_id, LEASED, to, epoch, actor, why, now)
    return Outcome(True, to, why)


# --- The provider budget -------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """A call to the model provider this epoch may make now; or, if not, when to ask again."""

    number: int | None
    retry_at: datetime | None = None

    def __bool__(self) -> bool:
        return self.number is not None


def take_provider_slot(*, job_id: int, epoch: int, now: datetime) -> Slot:
    """One of the ``PROVIDER_SLOTS`` calls allowed in flight at once, across all hosts.

    A slot is free when no job holds it or its holder no longer owns its lease (finished,
    recovered, or its worker died and the lease ran out), so nobody has to release the slot
    of a dead worker. While every worker holds off (the provider's 429, ``hold_provider``)
    no slot is given.
    """
    with write_transaction():
        held = ProviderHold.objects.filter(pk=1, hold_until__gt=now).values_list("hold_until", flat=True).first()
        if held is not None:
            return Slot(None, held)
        slots = settings.JOBS["PROVIDER_SLOTS"]
        if ProviderSlot.objects.filter(number__lt=slots).count() < slots:
            ProviderSlot.objects.bulk_create([ProviderSlot(number=n) for n in range(slots)], ignore_conflicts=True)
        holder = Job.objects.filter(pk=OuterRef("job_id"), epoch=OuterRef("epoch"), state=LEASED,
                                    lease_expires_at__gt=now)
        free = (ProviderSlot.objects.filter(number__lt=slots).exclude(Exists(holder)).order_by("number")
                .select_for_update(skip_locked=True).values_list("number", flat=True).first())
        if free is None:
            return Slot(None, now + timedelta(seconds=1 + random.random() * 2))  # noqa: S311  jitter, not a secret
        ProviderSlot.objects.filter(number=free).update(job_id=job_id, epoch=epoch, taken_at=now)
    return Slot(free)


def release_provider_slot(*, job_id: int, epoch: int, number: int) -> None:
    """Give the slot back as soon as the call is over (its lease would free it later anyway)."""
    with write_transaction():
        ProviderSlot.objects.filter(number=number, job_id=job_id, epoch=epoch).update(job=None, taken_at=None)


def hold_provider(*, until: datetime) -> None:
    """Every worker holds off calling the provider until ``until`` (it answered 429)."""
    with write_transaction():
        later = Greatest(F("hold_until"), Value(until, output_field=DateTimeField()))
        if not ProviderHold.objects.filter(pk=1).update(hold_until=later):
            ProviderHold.objects.get_or_create(pk=1, defaults={"hold_until": until})


# --- A completed result, amended by its tenant's members ------------------------------


class NotAmendable(Exception):
    """The job is no completed job of the caller's tenant: ``state`` is None for an unknown or
    another tenant's id (alike), else the state it is in."""

    def __init__(self, state: str | None) -> None:
        super().__init__(f"a {state} job's result cannot be amended" if state else "no such job")
        self.state = state


@dataclass(frozen=True)
class Amendment:
    """The completed job being amended, and how its summary follows the amended result."""

    job: Job  # id, kind, epoch, result, document and its name, as they are inside the transaction

    def restate(self, result: dict[str, Any]) -> kinds.Summary | None:
        """Store the kind's summary of ``result`` (the list's outcome, needs-action, reference) and
        return it; the stored result stays the one the job completed with."""
        spec = kinds.get(self.job.kind)
        if spec is None or spec.summarize is None:
            return None
        summary = spec.summarize(result)
        outcome, text, needs_action, reference = statements.summary_values(summary)
        Job.objects.filter(pk=self.job.pk, state=COMPLETED).update(
            outcome=outcome, outcome_text=text, needs_action=needs_action, reference=reference)
        return summary


@contextmanager
def amending(*, job_id: int, tenant_id: int | None, actor: str, reason: str, now: datetime) -> Iterator[Amendment]:
    """A transaction that holds only while the job is completed and the tenant's: the app that
    owns the job's kind writes its rows about the result inside it (a member's corrections) and
    may restate the job's summary. The note ``reason`` (never a value from the document) goes on
    the job's event timeline, for staff. Raises ``NotAmendable`` before anything is written.

    The guarded UPDATE comes first: on PostgreSQL it holds the job's row lock until the commit, so
    two amendments of one job run one after the other and each sees the other's rows (SQLite's
    write lock orders them anyway).
    """
    if tenant_id is None:  # a member of no tenant has no jobs
        raise NotAmendable(None)
    with write_transaction():
        if not Job.objects.filter(pk=job_id, tenant_id=tenant_id, state=COMPLETED).update(updated_at=now):
            state = Job.objects.filter(pk=job_id, tenant_id=tenant_id).values_list("state", flat=True).first()
            raise NotAmendable(state)
        job = Job.objects.only("id", "tenant_id", "kind", "epoch", "result", "document", "document_name").get(pk=job_id)
        _record(job_id, COMPLETED, "", job.epoch, actor, reason, now)
        yield Amendment(job)


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
        gone_dead = doomed.filter(state=DEAD).exists()
        _, deleted = doomed.delete()
        if gone_dead:  # dead jobs deleted: fewer may need a human now
            _needs_human_changed(cutoff)
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
        cursor.execute(statements.EVENT_SQL, [job_id, from_state, to_state, epoch, actor[:150], reason[:300],
                                              _db_time(now)])
    if _moves_needs_human(from_state, to_state):
        _needs_human_changed(now)
    if from_state in LIVE and to_state in FINISHED:
        _left_live([job_id], now)


# --- What the apps hear -------------------------------------------------------------------
#
# Both signals are sent *inside* the transaction of the transition that causes them, so what
# a listener writes (agent.notifications enqueues its email jobs with ``accept``) commits with
# the transition or not at all: no process death between the state change and the email can
# lose the email, and no rolled-back transition sends one. A listener must be quick, write
# only through the database, and send nothing outside it itself (a job does that). Each runs
# in a savepoint: what it raises is logged and undoes its writes, never the transition.
# The queue knows no listener.

# A move into or out of ``dead``/``unknown`` (the jobs needing a human), with ``now``: the
# listener counts them in the same transaction.
needs_human_changed = Signal()
# A batch (``tenant_id``, ``batch``) whose last live job left ``queued``/``leased`` by any
# path but a completion: a cancel, a failure or deferral to ``dead``/``unknown``, recovery.
# A completion's follow-up is its kind's (a kind may schedule it when its handler starts).
batch_finished = Signal()

LIVE = frozenset({QUEUED, LEASED})
FINISHED = frozenset({COMPLETED, DEAD, UNKNOWN, CANCELLED})
_BATCH_LOCK = 0x6A0B  # the advisory-lock namespace of "a batch's last live job" (PostgreSQL)


def _moves_needs_human(from_state: str, to_state: str) -> bool:
    return bool(to_state) and to_state != from_state and (to_state in NEEDS_HUMAN or from_state in NEEDS_HUMAN)


def _needs_human_changed(now: datetime) -> None:
    _send(needs_human_changed, now=now)


def _left_live(job_ids: Iterable[int], now: datetime) -> None:
    """Jobs left ``queued``/``leased`` for good, in this transaction: announce each batch of
    theirs that has no live job left.

    PostgreSQL: two transactions finishing a batch's last two jobs would each still see the
    other's job live; a transaction-scoped advisory lock per batch, taken after the
    transaction's own writes, orders them, so the second one sees the first's commit and
    announces the batch (one of them does; a listener's work is idempotent either way).
    """
    batches = sorted(set(Job.objects.filter(pk__in=list(job_ids)).exclude(batch="")
                         .values_list("tenant_id", "batch")))
    for tenant_id, batch in batches:
        if connection.vendor == "postgresql":
            digest = hashlib.sha256(f"{tenant_id}:{batch}".encode()).digest()
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                               [_BATCH_LOCK, int.from_bytes(digest[:4], "big", signed=True)])
        if not Job.objects.filter(tenant_id=tenant_id, batch=batch, state__in=LIVE).exists():
            _send(batch_finished, tenant_id=tenant_id, batch=batch, now=now)


def _send(signal: Signal, **kwargs: Any) -> None:
    """Run the signal's listeners inside the current transaction, in a savepoint."""
    try:
        with transaction.atomic():
            signal.send(sender=Job, **kwargs)
    except Exception:  # a listener's failure is logged, never the transition's
        log.exception("a listener of the queue's %s signal failed", "needs-human" if signal is needs_human_changed
                      else "batch-finished")


def _db_time(value: datetime) -> Any:
    return connection.ops.adapt_datetimefield_value(value)


def _py_time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    return datetime.fromisoformat(value).replace(tzinfo=timezone.utc)
