"""A member's acceptance of a finding, with the reason: the finding then stands no more.

A blocking finding (``agent.reading.findings``) keeps a document from reading OK, from being marked
handled and from being approved. A member who checked it (phoned the supplier about the new
IBAN, knows the old date is right) accepts it with a reason: ``accept`` writes one
``FindingAcceptance`` per finding, inside the queue's guarded amendment (only a completed job of
her tenant), and restates the job's summary. ``agent.review.revision`` reads them back
(``marks``) and shows every result with its acceptances applied (``revise``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction

from accounts.models import User
from agent.models import FindingAcceptance
from agent.reading import findings
from agent.review.revision import revise
from jobs import queue
from web.kind_pages import Refused, Remark

_FIRST_PRINTABLE = 0x20


def checked_reason(reason: str | None) -> str:
    """The reason as stored (spaces collapsed); ``Refused`` 400 for none, too long or unprintable."""
    text = " ".join((reason or "").split())
    if not text:
        raise Refused(400, "reason_required", "say why you accept it: the reason is kept with your name",
                      field="reason")
    if len(text) > findings.MAX_REASON:
        raise Refused(400, "reason_too_long", f"the reason must be at most {findings.MAX_REASON} characters",
                      field="reason")
    if any(ord(c) < _FIRST_PRINTABLE for c in text):
        raise Refused(400, "reason_invalid", "the reason must be plain text on one line", field="reason")
    return text


def shown(job_id: int, result: Any) -> Any:
    """The job's result as its members see it: corrections and acceptances applied."""
    return revise({job_id: result})[job_id]


def standing(job_id: int, result: Any) -> list[dict[str, Any]]:
    """The blocking findings on the job nobody accepted."""
    return findings.standing((shown(job_id, result) or {}).get("findings") if isinstance(result, dict) else None)


def accept(*, job_id: int, tenant_id: int | None, user: User, reason: str | None, now: datetime,
           keys: list[str] | None = None) -> list[dict[str, Any]]:
    """Accept the job's standing blocking findings named by ``keys`` (None: all of them) with
    ``reason``, as ``user``; returns those accepted. Raises ``Refused`` and writes nothing:
    400 for a missing or bad reason, 404 for a job that is not the tenant's, 409 for a job not
    completed or a key that names no standing finding."""
    text = checked_reason(reason)
    try:
        with queue.amending(job_id=job_id, scope_id=tenant_id, actor=f"user:{user.pk}",
                            reason="accepted findings", now=now) as amendment:
            return accept_in(amendment, user=user, reason=text, now=now, keys=keys)
    except queue.NotAmendable as exc:
        if exc.state is None:
            raise Refused(404, "not_found", "no such job") from None
        raise Refused(409, "not_completed", f"only a finished review's findings can be accepted; this job "
                      f"is {exc.state}", state=exc.state) from None


def accept_in(amendment: Any, *, user: User, reason: str, now: datetime,
              keys: list[str] | None = None) -> list[dict[str, Any]]:
    """``accept`` inside an amendment the caller holds (``queue.amending``)."""
    job = amendment.job
    chosen = [f for f in standing(job.pk, job.result) if keys is None or findings.key(f) in keys]
    if keys is not None and len(chosen) < len(set(keys)):
        raise Refused(409, "no_such_finding", "that finding is no longer open on this document: look again",
                      state=job.state)
    for finding in chosen:
        try:
            with transaction.atomic():  # accepted meanwhile by another member: theirs stands
                FindingAcceptance.objects.create(
                    job_id=job.pk, key=findings.key(finding), code=finding["code"], field=finding["field"] or "",
                    words=finding["words"][:400], reason=reason, by=user, by_name=user.get_username(), at=now)
        except IntegrityError:
            continue
    if chosen:
        amendment.restate(shown(job.pk, job.result))
    return chosen


def history(job_id: int, viewer_id: int | None = None) -> list[Remark]:
    """Each acceptance of the job, for its history: "Finding accepted by you: … Reason: …"."""
    remarks = []
    for record in FindingAcceptance.objects.filter(job_id=job_id).order_by("id")[:200]:
        who = "you" if viewer_id is not None and record.by_id == viewer_id else record.by_name
        remarks.append(Remark(record.at, f"Finding accepted by {who}: {record.words} Reason: “{record.reason}”",
                              "attention"))
    return remarks
