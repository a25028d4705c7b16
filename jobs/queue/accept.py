"""Accept: commit a queued job, after every check, idempotently per scope, user and operation key."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import jsonschema
from django.db import IntegrityError

from jobs import kinds, sql
from jobs.errors import (
    InvalidOperationKey,
    InvalidPayload,
    OperationKeyConflict,
    PayloadTooLarge,
    Reason,
    ScopeQueueFull,
    UnknownKind,
)
from jobs.models import Job, Scope
from jobs.writelock import write_transaction

from ..conf import queue_settings
from .events import record
from .terms import MAX_OPERATION_KEY, QUEUED, Acceptance, KeptInput


def accept(
    *,
    scope_id: int,
    user_id: int,
    kind: str,
    payload: Any,
    operation_key: str,
    now: datetime,
    keep_input: Callable[[kinds.Kind], KeptInput] | None = None,
    offered_only: bool = True,
    batch: str = "",
    priority: int = 0,
    available_at: datetime | None = None,
    max_attempts: int | None = None,
    deadline: timedelta | None = None,
) -> Acceptance:
    """Commit a queued job, idempotently per scope + user + operation key.

    All validation happens before anything is written. The unique constraint, not a
    prior look-up, decides a race between two requests carrying one key. ``available_at``
    holds the job back until then (its deadline counts from then); ``max_attempts`` and
    ``deadline`` override the defaults for this job; ``batch`` groups jobs submitted
    together; ``priority`` orders claims within the fairness rule.

    An input kept beside the payload (another app's: ``documents`` keeps a document) is the
    caller's: ``keep_input(kind)`` keeps it once the request has passed every check (nothing is
    kept for a request refused anyway) and answers a ``KeptInput``, whose digest goes in the
    request's fingerprint (a retry must repeat it) and whose ``attach(job)`` writes its row in the
    insert's transaction, right after the job's, so both commit or neither; a retry answered with
    the job already accepted attaches nothing.
    """
    kind_spec, key, payload, encoded = _checked(kind, payload, operation_key, attached=keep_input is not None,
                                                offered_only=offered_only)
    _check_waiting(scope_id, user_id, key)
    kept = keep_input(kind_spec) if keep_input is not None else None

    start = max(available_at or now, now)
    fingerprint = _fingerprint(kind, encoded, kept.digest if kept else "", [
        priority, start.isoformat() if available_at else "", max_attempts or 0,
        deadline.total_seconds() if deadline else 0])
    row = Job(scope_id=scope_id, submitted_by_id=user_id, kind=kind, payload=payload, operation_key=key,
              request_fingerprint=fingerprint, state=QUEUED, available_at=start,
              max_attempts=max_attempts or queue_settings().max_attempts,
              deadline=start + (deadline or kind_spec.deadline), batch=batch[:64], priority=priority,
              created_at=now, updated_at=now)
    try:
        _commit(row, now, kept.attach if kept else None)
    except IntegrityError:
        existing = Job.objects.filter(scope_id=scope_id, submitted_by_id=user_id, operation_key=key).first()
        if existing is None:  # the constraint that fired was not ours
            raise
        if existing.request_fingerprint != fingerprint:
            raise OperationKeyConflict(
                "this Idempotency-Key was already used for a different request", field="operation_key"
            ) from None
        return Acceptance(existing, created=False)
    return Acceptance(row, created=True)


def _fingerprint(kind: str, encoded: str, input_digest: str, options: list[Any]) -> str:
    """What a retry of the same request must repeat: its kind, payload, attached input and options
    (the options only when one of them is not its default)."""
    return hashlib.sha256(
        json.dumps([kind, encoded, input_digest, *(options if any(options) else [])]).encode()
    ).hexdigest()


def _checked(kind: str, payload: Any, operation_key: str, *, attached: bool,
             offered_only: bool = True) -> tuple[kinds.Kind, str, dict[str, Any], str]:
    """The kind, operation key, payload and its canonical JSON, once every check passed; ``attached``:
    an input comes beside the payload. Writes nothing."""
    kind_spec = kinds.offered(kind) if offered_only else kinds.get(kind)
    if kind_spec is None:
        raise UnknownKind(f"unknown job kind {kind!r}", field="kind")
    key = _check_operation_key(operation_key)
    payload = {} if payload is None else payload
    if not isinstance(payload, dict):
        raise InvalidPayload("payload must be a JSON object", field="payload")
    encoded = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if len(encoded.encode()) > kind_spec.max_payload_bytes:
        raise PayloadTooLarge(
            f"payload is larger than {kind_spec.max_payload_bytes} bytes for kind {kind!r}", field="payload"
        )
    _check_schema(kind_spec, payload)
    if kind_spec.check_input is not None:
        kind_spec.check_input(payload=payload, attached=attached)
    return kind_spec, key, payload, encoded


def _commit(job: Job, now: datetime, attach: Callable[[Job], object] | None) -> None:
    """Insert the job with its event (and the caller's row about its input); one claimable now
    gets its place among the scopes' turns."""
    with write_transaction():
        job.save(force_insert=True)
        if attach is not None:
            attach(job)
        if job.available_at <= now:
            sql.current().stamp_one(job.pk, fair=queue_settings().fair_claims)
        record(job.pk, "", QUEUED, 0, actor=f"user:{job.submitted_by_id}", reason="accepted", now=now)
        notify_accepted()


def _check_waiting(scope_id: int, user_id: int, key: str) -> None:
    """Refuse a new job of a scope that has its limit of jobs waiting (429), writing nothing.

    A retry of a request already accepted is not a new job: it gets its job, full or not.
    Two submissions racing for the last place may both get in; the limit holds within that.
    """
    limit = waiting_limit(scope_id)
    if not limit:
        return
    if waiting(scope_id, upto=limit) < limit:
        return
    if Job.objects.filter(scope_id=scope_id, submitted_by_id=user_id, operation_key=key).exists():
        return
    raise ScopeQueueFull(
        f"your organisation already has {limit} jobs waiting; submit more once some have started",
        retry_after=queue_settings().scope_full_retry_after,
    )


def waiting_limit(scope_id: int) -> int | None:
    """The scope's own limit of waiting jobs, else the default (settings); None: no limit."""
    own = Scope.objects.filter(pk=scope_id).values_list("max_waiting", flat=True).first()
    return own or queue_settings().scope_max_waiting or None


def waiting(scope_id: int, *, upto: int) -> int:
    """How many of the scope's jobs wait (queued), counted up to ``upto`` (job_waiting_idx)."""
    return Job.objects.filter(scope_id=scope_id, state=QUEUED).order_by()[:upto].count()


def _check_operation_key(key: str | None) -> str:
    key = (key or "").strip()
    if not key:
        raise InvalidOperationKey("an operation key (Idempotency-Key) is required", field="operation_key")
    if len(key) > MAX_OPERATION_KEY or not key.isprintable():
        raise InvalidOperationKey(
            f"the operation key must be at most {MAX_OPERATION_KEY} printable characters", field="operation_key"
        )
    return key


def _check_schema(kind: kinds.Kind, payload: dict[str, Any]) -> None:
    try:
        jsonschema.validate(payload, kind.payload_schema)
    except jsonschema.ValidationError as exc:
        where = "payload" + "".join(f".{p}" for p in exc.absolute_path)
        reason = Reason.TOO_LONG if exc.validator == "maxLength" else ""
        raise InvalidPayload(f"{where}: {exc.message}", field=where, reason=reason) from None


def notify_accepted() -> None:
    """Wake idle PostgreSQL workers (LISTEN jobs_accepted); SQLite workers poll.

    Sent inside the accepting transaction: PostgreSQL delivers it at commit, and a failure
    rolls the row back, so an accepted request is never answered with an error.
    """
    sql.current().notify_accepted()
