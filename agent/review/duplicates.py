"""Possible duplicates: the same invoice sent again, however it arrives.

Paying an invoice twice is the classic loss of accounts payable, and it starts with the same
invoice sent again: the same file, the supplier's copy of it in another file, a PDF and a scan
of it (the VAT id read on one, not the other). Once a review has read its document, ``record``
writes the job's fingerprint with the earliest earlier job of the same tenant it matches, by
the first of its keys (``keys``) that matches: the same bytes; the same supplier (VAT id, else
name) and invoice number; the same supplier name and number (one copy carries a VAT id, the
other not); the register's supplier and number; the same number, total and date whatever the
supplier. A correction or confirmation records the fingerprint again (``agent.inbox.corrections``),
and a result is shown with the duplicate finding its fingerprint gives now
(``agent.review.revision.findings_now``).
Never across tenants: every look-up names the tenant, on an index that starts with it.

Which jobs count as the earlier one: those whose review read their document to the end (they
have a fingerprint). A job that failed or was cancelled before its review finished was never
reviewed, so never paid from Docket: it is no original, and "Submit again" of a failed job
is not flagged against it (though it is against an earlier review of the same invoice).

A job that finishes before an earlier one of the same invoice (two workers, two copies in one
batch) is flagged when the earlier one finishes: ``record`` also settles the later jobs that
match. So that two such writes of one tenant never miss each other, they take turns: SQLite
has one writer at a time, and on PostgreSQL a transaction-scoped advisory lock per tenant.
"""

from __future__ import annotations

import functools
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import connection
from django.db.models import F, QuerySet

from accounts.models import User
from agent.models import DocumentFingerprint
from jobs import queue
from jobs.models import Job
from suppliers import keys as supplier_keys
from suppliers import review as register
from web.kind_pages import Duplicate

from . import revision

Match = DocumentFingerprint.Match
# The advisory lock's first key on PostgreSQL (the second is the tenant): "dup" in ASCII.
LOCK_SPACE = 0x647570
# At most this many later jobs are settled again by one record (duplicates are few).
MAX_LATER = 100


def supplier_key(fields: dict[str, Any]) -> str:
    """The supplier as a key: its VAT id (its normal form when read: one printed with and one without its
    country prefix are the same; letters and digits, upper case), else its name (case
    folded, whitespace collapsed); empty when the review read neither."""
    vat_field = fields.get("vat_id") if isinstance(fields, dict) else None
    normalized = vat_field.get("normalized") if isinstance(vat_field, dict) else None  # with its country prefix
    printed = normalized if isinstance(normalized, str) and normalized else _value(fields, "vat_id")
    vat = "".join(ch for ch in printed if ch.isalnum()).upper()
    if vat:
        return f"vat:{vat}"[:255]
    name = " ".join(_value(fields, "supplier_name").casefold().split())
    return f"name:{name}"[:255] if name else ""


def invoice_number_key(fields: dict[str, Any]) -> str:
    """The invoice number, case folded, whitespace collapsed; empty when not read."""
    return " ".join(_value(fields, "invoice_number").casefold().split())[:100]


def _value(fields: dict[str, Any], name: str) -> str:
    """A field's value as read (whatever its check says: a malformed VAT id is still the one
    printed on both copies); empty when it was not found."""
    field = fields.get(name) if isinstance(fields, dict) else None
    value = field.get("value") if isinstance(field, dict) else None
    return value.strip() if isinstance(value, str) else ""


def name_key(fields: dict[str, Any]) -> str:
    """The supplier's name as the register compares it, whether or not a VAT id was read."""
    return supplier_keys.name(_value(fields, "supplier_name"))[:200]


def total_key(fields: dict[str, Any]) -> str:
    """The total with two decimals; empty when not read."""
    try:
        return f"{Decimal(_value(fields, 'total_amount')).quantize(Decimal('0.01'))}"[:32]
    except (InvalidOperation, ValueError):
        return ""


def date_key(fields: dict[str, Any]) -> str:
    value = _value(fields, "invoice_date")
    return value if len(value) == 10 and value[4] == "-" else ""  # noqa: PLR2004 (an ISO date)


def fingerprint_of(*, job_id: int, tenant_id: int, sha256: str, fields: dict[str, Any], now: datetime,
                   register_supplier_id: int | None = None) -> DocumentFingerprint:
    """The fingerprint of a reviewed invoice (unsaved)."""
    return DocumentFingerprint(job_id=job_id, tenant_id=tenant_id, sha256=sha256 or "",
                               supplier_key=supplier_key(fields), name_key=name_key(fields),
                               register_supplier_id=register_supplier_id, invoice_number=invoice_number_key(fields),
                               total=total_key(fields), invoice_date=date_key(fields), recorded_at=now)


def keys(fingerprint: DocumentFingerprint) -> list[tuple[str, dict[str, Any]]]:
    """The keys a fingerprint matches by, in the order they are tried, each with its columns."""
    found: list[tuple[str, dict[str, Any]]] = []
    if fingerprint.sha256:
        found.append((Match.SAME_FILE.value, {"sha256": fingerprint.sha256}))
    number = fingerprint.invoice_number
    if not number:
        return found
    if fingerprint.supplier_key:
        found.append((Match.SAME_INVOICE.value, {"supplier_key": fingerprint.supplier_key, "invoice_number": number}))
    if fingerprint.name_key:
        found.append((Match.SAME_NAME.value, {"name_key": fingerprint.name_key, "invoice_number": number}))
    if fingerprint.register_supplier_id:
        found.append((Match.SAME_REGISTERED.value, {"register_supplier_id": fingerprint.register_supplier_id,
                                                    "invoice_number": number}))
    if fingerprint.total and fingerprint.invoice_date:
        found.append((Match.SAME_AMOUNT.value, {"invoice_number": number, "total": fingerprint.total,
                                                "invoice_date": fingerprint.invoice_date}))
    return found


def match_among(fingerprint: DocumentFingerprint, earlier: list[DocumentFingerprint]) -> tuple[int, str] | None:
    """The earliest of ``earlier`` (fingerprints of the same tenant, unsaved or not) this one
    matches, and how: the same rules as ``record``, in memory (the fraud bench's)."""
    ordered = sorted((f for f in earlier if f.job_id < fingerprint.job_id), key=lambda f: f.job_id)
    for match, columns in keys(fingerprint):
        first = next((f for f in ordered if all(getattr(f, k) == v for k, v in columns.items())), None)
        if first is not None:
            return first.job_id, match
    return None


def record(*, job_id: int, tenant_id: int, sha256: str, fields: dict[str, Any], now: datetime) -> DocumentFingerprint:
    """Write the job's fingerprint and the earlier job it possibly repeats; settle again the later
    jobs it matches (or that matched it before). The one writer of fingerprints: call it inside
    the job's fenced transaction (or a correction's), so only the claim that owns the job writes one."""
    _one_tenant_at_a_time(tenant_id)
    previous = DocumentFingerprint.objects.filter(job_id=job_id).first()
    registered = register.supplier_id(tenant_id=tenant_id, fields=fields) if invoice_number_key(fields) else None
    fingerprint = fingerprint_of(job_id=job_id, tenant_id=tenant_id, sha256=sha256, fields=fields, now=now,
                                 register_supplier_id=registered)
    fingerprint.duplicate_of_id, fingerprint.match = _original(fingerprint) or (None, "")
    fingerprint.save(force_insert=previous is None)
    moved = []
    for later in _later(fingerprint, previous):
        found = _original(later) or (None, "")
        if (later.duplicate_of_id, later.match) != found:
            later.duplicate_of_id, later.match = found
            later.save(update_fields=["duplicate_of", "match"])
            moved.append(later.job_id)
    _restate(moved)
    return fingerprint


def _restate(job_ids: list[int]) -> None:
    """The list's summary (outcome, needs action) of completed jobs whose duplicate finding changed
    with another job's record, as their results now read (in the caller's transaction)."""
    if not job_ids:
        return
    jobs = list(Job.objects.filter(pk__in=job_ids, state=Job.State.COMPLETED).only("id", "kind", "result"))
    shown = revision.revise({job.pk: job.result for job in jobs if isinstance(job.result, dict)})
    for job in jobs:
        if isinstance(shown.get(job.pk), dict):
            queue.Amendment(job).restate(shown[job.pk])


def finding(fingerprint: DocumentFingerprint) -> dict[str, Any] | None:
    """The duplicate finding of a fingerprint that matches an earlier job (code, field, words, blocks)."""
    return revision.duplicate_finding(fingerprint.duplicate_of_id, fingerprint.match)


def _one_tenant_at_a_time(tenant_id: int) -> None:
    """Hold the tenant's fingerprint lock until the transaction ends (PostgreSQL; SQLite's
    transaction already holds the database's one write lock)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_SPACE, tenant_id])


def _original(fingerprint: DocumentFingerprint) -> tuple[int, str] | None:
    """The tenant's earliest earlier job matching by the first key that matches, and which; None when none does."""
    earlier = DocumentFingerprint.objects.filter(tenant_id=fingerprint.tenant_id, job_id__lt=fingerprint.job_id)
    for match, columns in keys(fingerprint):
        first = earlier.filter(**columns).order_by("job_id").values_list("job_id", flat=True).first()
        if first is not None:
            return first, match
    return None


def _later(fingerprint: DocumentFingerprint, previous: DocumentFingerprint | None) -> list[DocumentFingerprint]:
    """The tenant's later jobs that match this one now, or matched what it was before (a review
    run again, a correction), or point at it: each may have to point at another job now."""
    later = DocumentFingerprint.objects.filter(tenant_id=fingerprint.tenant_id, job_id__gt=fingerprint.job_id)
    found: dict[int, DocumentFingerprint] = {}
    for shape in (fingerprint, previous):
        if shape is None:
            continue
        for _match, columns in keys(shape):
            found.update((f.job_id, f) for f in later.filter(**columns).order_by("job_id")[:MAX_LATER])
    if previous is not None:
        found.update((f.job_id, f) for f in later.filter(duplicate_of_id=fingerprint.job_id)[:MAX_LATER])
    return [found[job_id] for job_id in sorted(found)]


# --- Read by the pages (web.kind_pages.KindPages) -------------------------------------------------


def of_jobs(job_ids: list[int]) -> dict[int, Duplicate]:
    """The earlier job each of these possibly repeats, for those that do (one query). The earlier
    job is of the same tenant by construction, and the query says so again."""
    rows = (DocumentFingerprint.objects.filter(job_id__in=job_ids, duplicate_of__isnull=False,
                                               duplicate_of__scope_id=F("tenant_id"))
            .values_list("job_id", "match", "duplicate_of_id", "duplicate_of__created_at",
                         "duplicate_of__submitted_by_id", "duplicate_of__submitted_by__username",
                         "duplicate_of__document__original_name"))
    return {job_id: Duplicate(job_id=original, sent_at=sent_at, by=username or "", by_id=by_id,
                              document_name=name or "", match=match)
            for job_id, match, original, sent_at, by_id, username, name in rows}


@functools.cache
def version_sql(job: str) -> tuple[str, ...]:
    """What changes the earlier job ``of_jobs`` names for the job, as SQL beside the job's row
    (``job``: its id column): the earlier job and the match (a later ``record`` settles them
    without touching the job's row) and its submitter's name (the rest of it never changes)."""
    q = connection.ops.quote_name
    fingerprint, jobs, user = q(DocumentFingerprint._meta.db_table), q(Job._meta.db_table), q(User._meta.db_table)
    earlier = (f"FROM {fingerprint} f JOIN {jobs} d ON d.{q('id')} = f.{q('duplicate_of_id')} "
               f"AND d.{q(Job._meta.get_field('scope').column)} = f.{q('tenant_id')}")
    mine = f"WHERE f.{q('job_id')} = {job}"
    return (f"(SELECT d.{q('id')} {earlier} {mine})",
            f"(SELECT f.{q('match')} {earlier} {mine})",
            f"(SELECT u.{q('username')} {earlier} JOIN {user} u ON u.{q('id')} = d.{q('submitted_by_id')} {mine})")


def flagged(tenant_id: int | None) -> QuerySet[Any, Any]:
    """The ids of the tenant's jobs flagged as possible duplicates, as a subquery (none without a tenant)."""
    found = DocumentFingerprint.objects.filter(duplicate_of__isnull=False)
    return (found.filter(tenant_id=tenant_id) if tenant_id is not None else found.none()).values("job_id")
