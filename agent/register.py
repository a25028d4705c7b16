"""The review's side of the tenant's supplier register (the ``suppliers`` app).

At review, ``findings`` adds what the register says of the invoice (a new supplier, a bank
account it has never been paid on, a tax id of another supplier, an unusual total, an invoice
addressed to someone else); ``currencies`` is the tenant's own list of those it pays in.
When a member marks a document handled, ``remember`` records what its review read (as
corrected) into the register: that is how the register learns the accounts a supplier is
really paid on.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from accounts.models import User
from jobs.models import Job
from suppliers import review, services

RegisterRefused = services.RegisterRefused  # a register write that another one came between


def findings(*, tenant_id: int, fields: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """The register's findings on one of the tenant's invoices (structured: code, field, words, blocks)."""
    return review.review(tenant_id=tenant_id, fields=fields, text=text)


def currencies(tenant_id: int) -> frozenset[str] | None:
    """The currencies the tenant pays in, as set in its register settings; None: the review's default list."""
    return frozenset(services.currencies(tenant_id)) or None


def remember(*, job_id: int, tenant_id: int, by_id: int | None, now: datetime) -> None:
    """Record a handled document's supplier, tax id, IBAN, currency and total into the register
    (inside the work state's transaction: both are written, or neither)."""
    from .corrections import revise  # the result as corrected: what the member settled on

    job = Job.objects.filter(pk=job_id, tenant_id=tenant_id, state=Job.State.COMPLETED).only("id", "result").first()
    if job is None or not isinstance(job.result, dict) or not isinstance(job.result.get("fields"), dict):
        return
    fields = revise({job.pk: job.result})[job.pk]["fields"]
    user = User.objects.filter(pk=by_id).only("username").first() if by_id is not None else None
    services.remember(tenant_id=tenant_id, job_id=job.pk, fields=fields, on=_invoice_date(fields) or now.date(),
                      now=now, by=services.By(user_id=by_id, name=user.get_username() if user else ""))


def _invoice_date(fields: dict[str, Any]) -> date | None:
    found = fields.get("invoice_date")
    value = found.get("value") if isinstance(found, dict) and found.get("status") == "present" else None
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
