"""The inbox's side of the tenant's supplier register (the ``suppliers`` app).

When a member marks a document handled, ``remember`` records what its review read (as
corrected) into the register: that is how the register learns the accounts a supplier is
really paid on. What the register says of an invoice at review is the review's
(``agent.review.register``).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from accounts.models import User
from agent.review.revision import revise
from jobs.models import Job
from suppliers import services

RegisterRefused = services.RegisterRefused  # a register write that another one came between


def remember(*, job_id: int, tenant_id: int, by_id: int | None, now: datetime) -> None:
    """Record a handled document's supplier, tax id, IBAN, currency and total into the register
    (inside the work state's transaction: both are written, or neither)."""
    job = Job.objects.filter(pk=job_id, scope_id=tenant_id, state=Job.State.COMPLETED).only("id", "result").first()
    if job is None or not isinstance(job.result, dict) or not isinstance(job.result.get("fields"), dict):
        return
    fields = revise({job.pk: job.result})[job.pk]["fields"]  # the result as corrected: what the member settled on
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
