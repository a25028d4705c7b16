"""A finished review, corrected or confirmed field by field by the members of its tenant.

When the review read a value wrong, or could not be sure of it, Alice types the right one
(``correct``) or says she checked it (``confirm``). ``correct`` is the one function that
writes a ``FieldCorrection``: only on a completed job of her tenant, only for one of the
required fields, inside the queue's guarded amendment (``jobs.queue.amending``), which also
restates the job's summary so the list's outcome and *Needs my action* follow. Her value goes
through the same check the review runs (``fields.check_value``): a corrected IBAN with wrong
check digits is still *to correct*.

The review's own result is never rewritten. ``revise`` (``agent.review.revision``) reads a
result as its corrections make it, for every place that shows one (the page, the note, the message to the supplier, the
``.json`` and the CSV): each corrected field with its new value and check, and under
``correction`` who did it, when, and what the review had read; the note is written again with
the corrected values (in the review's tone), the review's own kept as ``review_draft``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from accounts.models import User
from agent.models import FieldCorrection
from agent.reading import fields
from agent.review import duplicates, register
from agent.review.revision import MAX_CORRECTIONS, is_review, review_field, revise, with_corrections
from documents.models import Document
from jobs import queue
from jobs.models import Job
from web.kind_pages import Correction, Refused, Remark

from . import acceptances

# The longest value a member may type (the longest field, a supplier's legal name, is far shorter).
MAX_VALUE_CHARS = 200
_FIRST_PRINTABLE = 0x20  # below it: control characters (NUL, tab, line breaks), never part of one value
COMPLETED = Job.State.COMPLETED.value


def correct(*, job_id: int, tenant_id: int | None, user: User, field: str, value: str | None = None,
            confirm: bool = False, now: datetime) -> Correction:
    """Correct ``field`` of a finished review to ``value``, or confirm the value it has
    (``confirm``), as ``user``; the field's check runs on the value and decides its status.

    Raises ``Refused`` and writes nothing: 400 for a field that is not one of the review's
    or a value that is empty or cannot be stored; 404 for a job that is not the tenant's (unknown
    and foreign ids alike); 409 for a job that is not completed, a result without fields, or a
    value to confirm that is missing or fails its check.
    """
    if field not in fields.REQUIRED:
        raise Refused(400, "unknown_field", f"there is no field {field!r} to correct; the fields are "
                      + ", ".join(fields.REQUIRED), field="field")
    typed = "" if confirm else _typed(value)
    verb = "confirmed" if confirm else "corrected"
    try:
        with queue.amending(job_id=job_id, scope_id=tenant_id, actor=f"user:{user.pk}",
                            reason=f"{verb} the field {field}", now=now) as amendment:
            result = amendment.job.result
            if not isinstance(result, dict) or not isinstance(result.get("fields"), dict):
                raise Refused(409, "not_correctable", "this result has no fields to correct", state=COMPLETED)
            records = list(FieldCorrection.objects.filter(job_id=job_id).order_by("id")[:MAX_CORRECTIONS])
            before = with_corrections(result, records)[field].get("value")
            if confirm:
                if before in (None, ""):
                    raise Refused(409, "cannot_confirm", "the field has no value to confirm: correct it instead",
                                  state=COMPLETED)
                typed = str(before)
            checked = fields.check_value(field, typed, today=now.date(),
                                         paid=register.currencies(amendment.job.scope_id))
            if confirm and checked.status != "present":
                raise Refused(409, "cannot_confirm", f"the value does not pass its check ({checked.detail}): "
                              "correct it instead", state=COMPLETED)
            record = FieldCorrection.objects.create(
                job_id=job_id, field=field, previous_value="" if before is None else str(before), value=typed,
                checked_value=checked.value or "", status=checked.status, detail=checked.detail[:300],
                confirmed=confirm, by=user, by_name=user.get_username(), at=now)
            revised = revise({job_id: result})[job_id]
            # Matched again as corrected or confirmed: a number or supplier read wrong may hide the
            # same invoice, and the register may know more of the supplier than at the review.
            duplicates.record(job_id=job_id, tenant_id=amendment.job.scope_id, sha256=_sha256(job_id),
                              fields=revised["fields"], now=now)
            summary = amendment.restate(revise({job_id: result})[job_id])  # with the duplicate finding now
    except queue.NotAmendable as exc:
        if exc.state is None:
            raise Refused(404, "not_found", "no such job") from None
        raise Refused(409, "not_completed", f"only a finished review can be corrected; this job is {exc.state}",
                      state=exc.state) from None
    review = review_field(result, field)
    return Correction(
        field=field, label=fields.LABELS[field], value=record.checked_value or None, status=record.status,
        detail=record.detail, confirmed=confirm, previous_value=record.previous_value or None,
        original_value=None if review.get("value") is None else str(review["value"]),
        original_status=str(review.get("status", "")), by=record.by_name, at=now,
        summary=summary)


def _sha256(job_id: int) -> str:
    return Document.objects.filter(job_id=job_id).values_list("sha256", flat=True).first() or ""


def _typed(value: str | None) -> str:
    typed = (value or "").strip()
    if not typed:
        raise Refused(400, "empty_value", "type the value, or confirm the one the review read", field="value")
    if len(typed) > MAX_VALUE_CHARS:
        raise Refused(400, "invalid_value", f"the value is longer than {MAX_VALUE_CHARS} characters",
                      field="value")
    if any(ord(c) < _FIRST_PRINTABLE for c in typed) or not _encodable(typed):
        raise Refused(400, "invalid_value", "the value contains characters that cannot be stored: type it "
                      "on one line, as plain text", field="value")
    return typed


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")  # a lone surrogate is no text either database stores
    except UnicodeEncodeError:
        return False
    return True


def confirm_passing(amendment: Any, *, user: User, now: datetime) -> list[str]:
    """Inside an amendment the caller holds: confirm, as ``user``, every required field of the job
    whose value passes its check and that no member corrected or confirmed yet; returns their names."""
    job = amendment.job
    result = job.result
    if not is_review(result):
        return []
    shown = revise({job.pk: result})[job.pk]["fields"]
    done = []
    for name in fields.REQUIRED:
        field = shown.get(name)
        if (not isinstance(field, dict) or field.get("status") != "present" or field.get("value") in (None, "")
                or isinstance(field.get("correction"), dict)):
            continue
        value = str(field["value"])
        FieldCorrection.objects.create(job_id=job.pk, field=name, previous_value=value, value=value,
                                       checked_value=value, status="present",
                                       detail=str(field.get("detail") or "")[:300], confirmed=True, by=user,
                                       by_name=user.get_username(), at=now)
        done.append(name)
    return done


def history(job_id: int, viewer_id: int | None = None) -> list[Remark]:
    """Each correction and confirmation of the job, for its history: who (you, or their name),
    which field, the value before and after, and whether it passes its check now."""
    remarks = []
    for record in FieldCorrection.objects.filter(job_id=job_id).order_by("id")[:MAX_CORRECTIONS]:
        who = "you" if viewer_id is not None and record.by_id == viewer_id else record.by_name
        label = fields.LABELS.get(record.field, record.field)
        value = record.checked_value or record.value
        if record.confirmed:
            remarks.append(Remark(record.at, f"{label} confirmed by {who}: {value}", "good"))
            continue
        before = f"was {record.previous_value}" if record.previous_value else "none was found"
        check = "passes its check" if record.status == "present" else f"still to correct: {record.detail}"
        remarks.append(Remark(record.at, f"{label} corrected by {who}: {value} ({before}); {check}",
                              "good" if record.status == "present" else "attention"))
    return sorted([*remarks, *acceptances.history(job_id, viewer_id)], key=lambda remark: remark.at)
