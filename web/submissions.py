"""What a request asks of the queue: submit a job, a form of several documents as a batch, a
failed job again, a cancel, a correction. Each reads what the request sent (``web.parsing``),
calls ``jobs.queue`` and answers an ``HttpError`` when it cannot be done."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest
from django.http.multipartparser import MultiPartParserError

from documents import acceptance, rules
from documents import store as document_store
from documents.models import of as document_of
from documents.store import Upload
from jobs import kinds, queue
from jobs.clock import queue_clock
from jobs.errors import AcceptanceError
from jobs.models import Job

from . import photos, schemas, status
from .edge import MAX_BATCH_FILES, EdgeRequest, FormRefused, HttpError, Refusal, too_many_files
from .parsing import check_storable, loads_json, media_type, parse_submission, validated
from .refusals import refusal, size_words

# Retry-After hints, in seconds.
RETRY_AFTER_ACCEPTED = 1


def cancel(asked: EdgeRequest, job_id: int) -> queue.Outcome:
    """Cancel one of the caller's tenant's jobs; an HttpError when it is not cancellable.

    Other tenants' jobs raise the same 404 as unknown ids (the read scopes the job first).
    """
    job = status.job_status(tenant_id=asked.tenant_id, job_id=job_id).job
    outcome = queue.cancel(job_id=job.pk, actor=f"user:{asked.identity.user.pk}", reason="", now=queue_clock.now())
    if not outcome:
        raise HttpError(409, "not_cancellable", f"a {outcome.state} job cannot be cancelled", state=outcome.state)
    return outcome


def correction(asked: EdgeRequest) -> tuple[str | None, bool]:
    """The value, or the confirmation, a correction of a field sends: a JSON body
    (``schemas.CorrectionRequest``) or the job page's form (``value``, or ``confirm``)."""
    request = asked.request
    if request.content_type == "application/json":
        try:
            body = loads_json(request.body or b"null")
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise HttpError(400, "malformed_json", "the body is not valid JSON") from None
        if not isinstance(body, dict):
            raise HttpError(400, "invalid", 'the body must be a JSON object: {"value": "..."} or {"confirm": true}')
        parsed = validated(schemas.CorrectionRequest, body)
        value, confirm = parsed.value, parsed.confirm
    elif request.method == "POST" and request.content_type in ("multipart/form-data",
                                                                "application/x-www-form-urlencoded"):
        value, confirm = request.POST.get("value"), request.POST.get("confirm", "") in ("1", "true", "on")
    else:
        raise HttpError(415, "unsupported_media_type", 'send application/json: {"value": "..."} or {"confirm": true}',
                        field="Content-Type")
    if confirm and value is not None:
        raise HttpError(400, "invalid", "send a value or confirm the one there is, not both", field="confirm")
    return value, confirm


def submit(asked: EdgeRequest) -> queue.Acceptance:
    """Parse the request and accept it as the caller: one transaction, or an HttpError."""
    if asked.tenant_id is None:
        raise HttpError(403, "no_tenant", "your account belongs to no tenant, so it cannot submit jobs")
    submission = parse_submission(asked.request)
    try:
        return acceptance.accept(
            scope_id=asked.tenant_id, user_id=asked.identity.user.pk, kind=submission.kind,
            payload=submission.payload, operation_key=submission.operation_key,
            document=submission.document, now=queue_clock.now(),
        )
    except AcceptanceError as exc:
        raise HttpError.from_acceptance(exc) from None


# The time the documents of one submission may take to check, in all: well under the web's
# request timeout (gunicorn's 30 s, deploy/gunicorn.conf.py), so the person who sent them
# always gets the page of what was accepted. A document whose check would run past it is
# refused by name, to be sent again on its own.
BATCH_CHECK_SECONDS = 15.0


# A file past ``MAX_BATCH_FILES`` in one submission of the form: not sent, said by name.
LEFT_OUT = "Not sent: at most {limit} files go in one batch. Send it again with the next ones."


@dataclass(frozen=True)
class Sent:
    """What one submission of the form made: its jobs (one per document), and what was refused."""

    batch: str  # empty for a single document
    jobs: list[Job] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)


def submit_form(asked: EdgeRequest) -> Sent:
    """Accept each file of the browser's form (and the pasted text) as a job of its own.

    Operation keys derive from the form's key and what it carries (kind, options, text, each
    file's name and SHA-256): a double click, a retried request or the same batch sent again
    after Back finds the jobs it made; the same form with other files makes new ones. A file
    refused (too large, not a document) is named with the reason while the others go through.
    Raises ``FormRefused`` when nothing was accepted.
    """
    if asked.tenant_id is None:
        raise HttpError(403, "no_tenant", "your account belongs to no tenant, so it cannot submit jobs")
    post, files = _form_parts(asked.request)
    taken = asked.request.FILES.getlist("photo")  # read already, with the documents
    form, kind = _form_and_kind(post)
    key = (asked.request.headers.get("Idempotency-Key") or form.idempotency_key).strip()
    if not key:
        raise FormRefused([refusal(400, "invalid_operation_key", "", "operation_key")])
    options = _form_options(form.payload)
    text = _form_text(form.text, kind)
    carried = [key, form.kind, options, text, [(f.name, f.size, _sha256(f)) for f in files]]
    if taken:
        carried.append([(f.name, f.size, _sha256(f)) for f in taken])
    digest = hashlib.sha256(json.dumps(carried).encode()).hexdigest()
    several = len(files) + bool(taken) + bool(text) > 1
    batch = _Batch(asked, asked.tenant_id, kind, digest, Sent(batch=f"b{digest[:23]}" if several else ""))
    # What fits in one batch goes; each file past the limit is named, to be sent in the next one.
    # The photos taken are one document of the batch.
    fits = MAX_BATCH_FILES - bool(taken)
    files, left_out = files[:fits], files[fits:]
    with document_store.checks_end_by(time.monotonic() + BATCH_CHECK_SECONDS):
        for index, upload_file in enumerate(files):
            batch.accept_file(options, index, upload_file)
        if taken:
            batch.accept_photos(options, taken)
    for upload_file in left_out:
        batch.sent.refused.append(Refusal("document", LEFT_OUT.format(limit=MAX_BATCH_FILES),
                                          os.path.basename(upload_file.name or "document")))
    if text:
        batch.accept({**options, "text": text}, "text", name="Pasted text" if files else "")
    if not files and not taken and not text:
        batch.accept(options, "form")
    if not batch.sent.jobs:
        raise FormRefused(batch.sent.refused)
    return batch.sent


def _form_parts(request: HttpRequest) -> tuple[Any, list[Any]]:
    """The form's fields and its files, or the refusal of a body Django cannot read."""
    try:
        return request.POST, request.FILES.getlist("document")
    except RequestDataTooBig:
        raise HttpError(413, "too_large", "the request body is too large") from None
    except TooManyFilesSent:
        raise too_many_files() from None
    except (MultiPartParserError, TooManyFieldsSent) as exc:
        raise HttpError(400, "malformed_body", f"the form could not be read: {exc}") from None


def _form_and_kind(post: Any) -> tuple[schemas.JobForm, kinds.Kind]:
    """The form's fields as ``schemas.JobForm`` reads them, and the offered kind they name."""
    try:
        form = validated(schemas.JobForm, {name: post[name] for name in schemas.JobForm.model_fields if name in post})
    except HttpError as exc:
        raise FormRefused([refusal(exc.status, exc.code, exc.detail, exc.field, reason=exc.reason)]) from None
    kind = kinds.offered(form.kind)
    if kind is None:
        raise FormRefused([refusal(400, "unknown_kind", "", "kind")])
    return form, kind


def _form_text(text: str, kind: kinds.Kind) -> str:
    """The pasted text, if any was typed, as it can be stored."""
    text = text if text.strip() else ""
    try:
        check_storable(text, "payload.text")
    except HttpError as exc:
        raise FormRefused([refusal(exc.status, exc.code, exc.detail, exc.field, reason=exc.reason,
                                   kind=kind)]) from None
    return text


@dataclass(frozen=True)
class _Batch:
    """One submission of the form as it is accepted: a job per document, or its refusal by name."""

    asked: EdgeRequest
    tenant_id: int
    kind: kinds.Kind
    digest: str  # of the form's key and all it carries: the jobs' operation keys derive from it
    sent: Sent

    def accept_file(self, options: dict[str, Any], index: int, upload_file: Any) -> None:
        name = os.path.basename(upload_file.name or "document")
        size = upload_file.size or 0  # Django's parser sets it on every file it hands over
        limit = rules.max_bytes(self.kind.name)
        if limit and size > limit:  # never read into memory
            self.sent.refused.append(refusal(413, "too_large", "", "document", name=name, kind=self.kind, size=size))
            return
        upload = Upload(content=upload_file.read(), name=upload_file.name or "document",
                        content_type=media_type(upload_file.content_type))
        self.accept(options, str(index), upload, name)

    def accept_photos(self, options: dict[str, Any], taken: list[Any]) -> None:
        """The photos taken with the camera: the pages of one document, a PDF of them (one photo
        goes as it is); refused whole, by the first photo's name, when one cannot be a page."""
        first = os.path.basename(taken[0].name or "photo.jpg")
        limit = rules.max_bytes(self.kind.name)
        size = sum(f.size or 0 for f in taken)
        if limit and size > limit:  # never read into memory
            self.sent.refused.append(Refusal("photo", f"These {len(taken)} photos add up to {size_words(size)}; the "
                                                      f"limit is {size_words(limit)} per document. Take fewer pages, "
                                                      "or send the rest as another document.", status=413))
            return
        if len(taken) == 1:
            upload = Upload(content=taken[0].read(), name=first, content_type=media_type(taken[0].content_type))
            self.accept(options, "photos", upload, first)
            return
        try:
            content = photos.photos_pdf([(os.path.basename(f.name or "photo"), f.read()) for f in taken])
        except photos.PhotoRefused as exc:
            self.sent.refused.append(Refusal("photo", str(exc), status=400))
            return
        name = photos.document_name(first, len(taken))
        self.accept(options, "photos", Upload(content=content, name=name, content_type="application/pdf"), name)

    def accept(self, payload: dict[str, Any], suffix: str, upload: Upload | None = None, name: str = "") -> None:
        try:
            accepted = acceptance.accept(
                scope_id=self.tenant_id, user_id=self.asked.identity.user.pk, kind=self.kind.name, payload=payload,
                operation_key=f"form-{self.digest}-{suffix}", document=upload, batch=self.sent.batch,
                now=queue_clock.now(),
            )
        except AcceptanceError as exc:
            size = len(upload.content) if upload else None
            self.sent.refused.append(refusal(exc.status, exc.code, exc.message, exc.field, reason=exc.reason,
                                             name=name, kind=self.kind, size=size))
            return
        self.sent.jobs.append(accepted.job)


def _sha256(upload_file: Any) -> str:
    digest = hashlib.sha256()
    for chunk in upload_file.chunks():
        digest.update(chunk)
    upload_file.seek(0)
    return digest.hexdigest()


def _form_options(text: str) -> dict[str, Any]:
    """The form's advanced options (a JSON object), for every document it sends."""
    if not text.strip():
        return {}
    try:
        options = loads_json(text)
    except ValueError:
        raise FormRefused([Refusal("payload", "The advanced options are not valid JSON.")]) from None
    except RecursionError:
        raise FormRefused([Refusal("payload", "The advanced options nest too deeply.")]) from None
    if not isinstance(options, dict):
        raise FormRefused([Refusal("payload", 'The advanced options must be a JSON object, like {"seconds": 2}.')])
    try:
        check_storable(options)
    except HttpError as exc:
        raise FormRefused([Refusal("payload", f"The advanced options cannot be stored: {exc.detail}.")]) from None
    return options


def submit_again(asked: EdgeRequest, job_id: int) -> queue.Acceptance:
    """A failed job's input (its document or text) as a new job, under a new key (the form's)."""
    if asked.tenant_id is None:
        raise HttpError(403, "no_tenant", "your account belongs to no tenant, so it cannot submit jobs")
    job = (Job.objects.for_scope(asked.tenant_id).filter(pk=job_id).select_related("document")
           .only("kind", "state", "epoch", "payload", "document__name", "document__original_name",
                 "document__content_type").first())
    if job is None:
        raise HttpError(404, "not_found", "no such job")
    if job.state != Job.State.DEAD:
        raise HttpError(409, "not_failed", "only a failed job can be submitted again")
    key = (asked.request.POST.get("idempotency_key") or "").strip()
    upload = None
    document = document_of(job)
    if document is not None:
        try:
            content = document_store.read(document.name)
        except FileNotFoundError:
            raise HttpError(409, "document_gone", "this job's document is no longer kept: choose the file "
                                                  "again on the submit page") from None
        except document_store.StoreUnavailable:
            raise HttpError(503, "store_unavailable", "the document store is unavailable; retry later",
                            headers={"Retry-After": str(document_store.STORE_RETRY_SECONDS)}) from None
        upload = Upload(content=content, name=document.original_name or "document",
                        content_type=document.content_type)
    now = queue_clock.now()
    try:
        accepted = acceptance.accept(scope_id=asked.tenant_id, user_id=asked.identity.user.pk, kind=job.kind,
                                     payload=job.payload, operation_key=f"again-{job.pk}-{key}" if key else "",
                                     document=upload, now=now)
    except AcceptanceError as exc:
        raise HttpError.from_acceptance(exc) from None
    if accepted.created:  # the submitter's history says who sent it again (a teammate, perhaps)
        queue.record_resubmission(job_id=job.pk, epoch=job.epoch, new_job_id=accepted.job.pk,
                                  actor=f"user:{asked.identity.user.pk}", now=now)
    return accepted
