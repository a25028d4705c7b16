"""Accept a job with its document: the queue's acceptance, the document checked and stored
first, and its row committed in the job's own transaction.

The order is the queue's: the request is checked (its kind, key, payload) and the scope's room
for it before the queue asks for the document (``keep_input``), so nothing is stored for a
request refused anyway; the document is checked and stored (named by its digest, written once)
before the row that names it commits. Its digest is the request's input in the fingerprint, as
the queue asks, so a retry of the same request gets its job and one with other bytes under the
same key is a conflict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jobs import queue
from jobs.kinds import Kind
from jobs.models import Job
from jobs.queue import KeptInput

from . import rules
from .errors import UnsupportedDocument
from .models import Document
from .store import Stored, Upload, check_and_store


def accept(*, scope_id: int, user_id: int, kind: str, payload: Any, operation_key: str,
           document: Upload | None = None, offered_only: bool = True, **options: Any) -> queue.Acceptance:
    """``jobs.queue.accept`` with ``document`` (None: the payload is the whole input); the other
    keyword arguments are the queue's (``now``, ``batch``, ``priority``...)."""
    if document is None:
        return queue.accept(scope_id=scope_id, user_id=user_id, kind=kind, payload=payload,
                            operation_key=operation_key, offered_only=offered_only, **options)

    def keep(kind_spec: Kind) -> KeptInput:
        kind_rules = rules.of(kind)
        if kind_rules is None:
            raise UnsupportedDocument(f"kind {kind!r} takes no document", field="document")
        stored = check_and_store(document, kind_spec, kind_rules, scope_id=scope_id)
        return KeptInput(stored.sha256, attaching(stored))

    return queue.accept(scope_id=scope_id, user_id=user_id, kind=kind, payload=payload, operation_key=operation_key,
                        offered_only=offered_only, keep_input=keep, **options)


def attaching(stored: Stored) -> Callable[[Job], None]:
    """What the queue runs right after inserting the job: the row of its document."""

    def attach(job: Job) -> None:
        Document.objects.create(job=job, name=stored.name, original_name=stored.original_name,
                                content_type=stored.content_type, size=stored.size, sha256=stored.sha256)

    return attach
