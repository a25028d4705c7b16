"""Possible duplicates: the same invoice sent again, by its file or by its supplier and number.

Paying an invoice twice is the classic loss of accounts payable, and it starts with the same
invoice sent again: the same file, or the supplier's copy of it in another file. Once a review
has read its document, ``record`` writes the job's fingerprint (the document's SHA-256, the
supplier and the invoice number) with the earliest earlier job of the same tenant it matches,
by its file first, else by its supplier and number. Never across tenants: every look-up
names the tenant, on an index that starts with it.

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

from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import F, QuerySet

from jobs.kinds import Duplicate

from .models import DocumentFingerprint

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


def record(*, job_id: int, tenant_id: int, sha256: str, fields: dict[str, Any], now: datetime) -> DocumentFingerprint:
    """Write the job's fingerprint and the earlier job it possibly repeats; settle again the later
    jobs it matches (or that matched it before). The one writer of fingerprints: call it inside
    the job's fenced transaction, so only the claim that owns the job writes one."""
    _one_tenant_at_a_time(tenant_id)
    previous = DocumentFingerprint.objects.filter(job_id=job_id).first()
    fingerprint = DocumentFingerprint(job_id=job_id, tenant_id=tenant_id, sha256=sha256 or "",
                                      supplier_key=supplier_key(fields), invoice_number=invoice_number_key(fields),
                                      recorded_at=now)
    fingerprint.duplicate_of_id, fingerprint.match = _original(fingerprint) or (None, "")
    fingerprint.save(force_insert=previous is None)
    for later in _later(fingerprint, previous):
        found = _original(later) or (None, "")
        if (later.duplicate_of_id, later.match) != found:
            later.duplicate_of_id, later.match = found
            later.save(update_fields=["duplicate_of", "match"])
    return fingerprint


def _one_tenant_at_a_time(tenant_id: int) -> None:
    """Hold the tenant's fingerprint lock until the transaction ends (PostgreSQL; SQLite's
    transaction already holds the database's one write lock)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_SPACE, tenant_id])


def _original(fingerprint: DocumentFingerprint) -> tuple[int, str] | None:
    """The tenant's earliest earlier job with the same bytes, else with the same supplier and
    invoice number, and how it matches; None when there is none."""
    earlier = DocumentFingerprint.objects.filter(tenant_id=fingerprint.tenant_id, job_id__lt=fingerprint.job_id)
    if fingerprint.sha256:
        first = earlier.filter(sha256=fingerprint.sha256).order_by("job_id").values_list("job_id", flat=True).first()
        if first is not None:
            return first, Match.SAME_FILE.value
    if fingerprint.supplier_key and fingerprint.invoice_number:
        first = (earlier.filter(supplier_key=fingerprint.supplier_key, invoice_number=fingerprint.invoice_number)
                 .order_by("job_id").values_list("job_id", flat=True).first())
        if first is not None:
            return first, Match.SAME_INVOICE.value
    return None


def _later(fingerprint: DocumentFingerprint, previous: DocumentFingerprint | None) -> list[DocumentFingerprint]:
    """The tenant's later jobs that match this one now, or matched what it was before (a review
    run again), or point at it: each may have to point at another job now."""
    later = DocumentFingerprint.objects.filter(tenant_id=fingerprint.tenant_id, job_id__gt=fingerprint.job_id)
    found: dict[int, DocumentFingerprint] = {}
    for shape in (fingerprint, previous):
        if shape is None:
            continue
        if shape.sha256:
            found.update((f.job_id, f) for f in later.filter(sha256=shape.sha256).order_by("job_id")[:MAX_LATER])
        if shape.supplier_key and shape.invoice_number:
            found.update((f.job_id, f) for f in later.filter(
                supplier_key=shape.supplier_key, invoice_number=shape.invoice_number).order_by("job_id")[:MAX_LATER])
    if previous is not None:
        found.update((f.job_id, f) for f in later.filter(duplicate_of_id=fingerprint.job_id)[:MAX_LATER])
    return [found[job_id] for job_id in sorted(found)]


# --- Read by the pages (jobs.kinds.Presentation) -------------------------------------------------


def of_jobs(job_ids: list[int]) -> dict[int, Duplicate]:
    """The earlier job each of these possibly repeats, for those that do (one query). The earlier
    job is of the same tenant by construction, and the query says so again."""
    rows = (DocumentFingerprint.objects.filter(job_id__in=job_ids, duplicate_of__isnull=False,
                                               duplicate_of__tenant_id=F("tenant_id"))
            .values_list("job_id", "match", "duplicate_of_id", "duplicate_of__created_at",
                         "duplicate_of__submitted_by_id", "duplicate_of__submitted_by__username",
                         "duplicate_of__document_name"))
    return {job_id: Duplicate(job_id=original, sent_at=sent_at, by=username or "", by_id=by_id,
                              document_name=name or "", match=match)
            for job_id, match, original, sent_at, by_id, username, name in rows}


def flagged(tenant_id: int | None) -> QuerySet[Any, Any]:
    """The ids of the tenant's jobs flagged as possible duplicates, as a subquery (none without a tenant)."""
    found = DocumentFingerprint.objects.filter(duplicate_of__isnull=False)
    return (found.filter(tenant_id=tenant_id) if tenant_id is not None else found.none()).values("job_id")
