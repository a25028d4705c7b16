"""The HTTP edge of the job endpoints: one trip per request, then the view.

The same URLs serve browsers (session, HTML, htmx) and API clients (bearer token, JSON).
``endpoint`` wraps a view and resolves everything the view needs once, in an order that
matters: the method (405), the declared body size (413, before anything reads the body),
the caller (bearer token or session, 401), Django's CSRF check for session requests that
change state, and whether to answer in JSON. The view gets a ``Call`` and raises
``HttpError`` for a refusal, which is answered here: JSON (``schemas.Error``) for API
clients, the login page, the submit form again or the error page for browsers.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.cache import patch_cache_control
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods
from django_htmx.middleware import HtmxDetails
from pydantic import BaseModel, ValidationError

from jobs import documents, kinds, queue, tokens
from jobs.clock import queue_clock
from jobs.documents import Upload
from jobs.errors import AcceptanceError, Reason
from jobs.models import Job, User

from . import schemas, status, wording

# How deep a payload may nest. Deeper JSON is refused as a 400 rather than risking a
# RecursionError (a 500) while it is parsed, validated or encoded.
MAX_PAYLOAD_DEPTH = 32
# A claimed media type worth storing (the column holds 100 characters); anything else is
# stored as application/octet-stream: the client's claim is not evidence anyway.
_MEDIA_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*")
MAX_MEDIA_TYPE = 100

# Retry-After hints, in seconds.
RETRY_AFTER_ACCEPTED = 1
RETRY_AFTER_UNAVAILABLE = 2

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})

# Generic codes for errors that carry no code of their own (Http404, 405 from a decorator).
STATUS_CODES = {
    400: ("invalid", "the request is invalid"),
    401: ("unauthenticated", "authentication is required: send 'Authorization: Bearer <token>'"),
    403: ("forbidden", "you may not do this"),
    404: ("not_found", "no such resource"),
    405: ("method_not_allowed", "this method is not allowed here"),
    409: ("conflict", "the request conflicts with an earlier one"),
    413: ("too_large", "the request body is too large"),
    429: ("too_many_requests", "too many requests; retry later"),
    415: ("unsupported_media_type", "unsupported media type"),
    500: ("internal_error", "something went wrong on our side; nothing was accepted"),
    503: ("unavailable", "the job store is unavailable; retry later"),
}


class HtmxHttpRequest(HttpRequest):
    """A request as views and the middleware after django-htmx's see it (settings.MIDDLEWARE).

    For annotations only: Django makes plain ``HttpRequest`` objects, and the middleware sets
    ``htmx`` on each.
    """

    htmx: HtmxDetails


class HttpError(Exception):
    """An error answer: a stable code, a human text, and for 400s the field at fault.

    ``reason`` (``jobs.errors.Reason``) tells apart refusals of one code that the submit form
    words differently; API clients get the code alone."""

    def __init__(self, status: int, code: str, detail: str, *, field: str | None = None,
                 headers: dict[str, str] | None = None, state: str | None = None, reason: str = "") -> None:
        super().__init__(detail)
        self.status, self.code, self.detail, self.field = status, code, detail, field
        self.headers = headers or {}
        self.state = state  # the job's state, for an answer about what it cannot do now
        self.reason = reason

    @classmethod
    def from_acceptance(cls, exc: AcceptanceError) -> HttpError:
        """Wrap a ``jobs.errors.AcceptanceError`` (it already knows its status and code)."""
        retry_after = getattr(exc, "retry_after", None)
        headers = {"Retry-After": str(retry_after)} if retry_after else None
        return cls(exc.status, exc.code, exc.message, field=exc.field, headers=headers, reason=exc.reason)


def json_error(status: int, code: str | None = None, detail: str | None = None, *,
               field: str | None = None, headers: dict[str, str] | None = None,
               state: str | None = None) -> JsonResponse:
    default_code, default_detail = STATUS_CODES.get(status, ("error", "the request failed"))
    body = schemas.Error.of(code or default_code, detail or default_detail, field, state=state)
    response = JsonResponse(body.to_json(), status=status, headers=headers)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="jobs"'
    return response


def error_response(request: HtmxHttpRequest, exc: HttpError, *, as_json: bool | None = None) -> HttpResponse:
    """The error as this caller expects it: JSON, the login page on a 401, or the error page."""
    if as_json is None:
        as_json = wants_json(request)
    if as_json:
        return json_error(exc.status, exc.code, exc.detail, field=exc.field, headers=exc.headers, state=exc.state)
    if exc.status == 401:
        login = redirect_to_login(request.get_full_path())
        if request.htmx:  # a poll whose session expired: send the whole page to log in
            return HttpResponse(status=204, headers={"HX-Redirect": login["Location"]})
        return login
    title, detail = ERROR_PAGES.get(exc.code) or (
        ERROR_TITLES.get(exc.status, "That did not work"), wording.sentence(exc.detail))
    body = render_to_string("error.html", {"status": exc.status, "title": title, "detail": detail}, request=request)
    return HttpResponse(body, status=exc.status, headers=exc.headers)


# Error pages for browsers, in people's words (API clients get the codes and messages).
ERROR_PAGES = {
    "csrf_failed": ("This page has expired", "It was open for a long time, or you logged in again elsewhere. "
                    "Go back, reload the page and send it again: nothing is sent twice."),
    "no_tenant": ("No team", "Your account belongs to no team, so it cannot send documents. "
                  "Ask your staff to add you to one."),
    "not_failed": ("Not failed", "Only a failed document can be submitted again."),
    "document_gone": ("The document is no longer kept", "Choose the file again on the Review documents page."),
    "not_cancellable": ("Already finished", "This document's review has already ended, so there is nothing "
                        "to cancel."),
}
ERROR_TITLES = {
    400: "That request could not be used", 403: "Not allowed", 404: "Not found", 405: "Not possible here",
    409: "Not possible now", 413: "Too large", 415: "Not a supported kind of file", 429: "Please wait",
}


# --- Content negotiation ---------------------------------------------------------------


def wants_json(request: HtmxHttpRequest) -> bool:
    """API clients get JSON: a bearer token, a JSON body, or an Accept that is not HTML.

    Browsers (and htmx) always send ``text/html`` in Accept; curl sends ``*/*``.
    """
    if request.htmx:
        return False
    if "HTTP_AUTHORIZATION" in request.META:
        return True
    if request.content_type == "application/json":
        return True
    accept = request.META.get("HTTP_ACCEPT", "")
    return "text/html" not in accept and "application/xhtml+xml" not in accept


# --- Identity ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    user: User
    via: str  # "token" or "session"

    @property
    def tenant_id(self) -> int | None:
        return self.user.tenant_id


def identify(request: HttpRequest) -> Identity:
    """The caller, from a bearer token or else the session; 401 if neither.

    A request that presents an Authorization header is judged by it alone (never by a
    session cookie it also carries), so it needs no CSRF token: a cross-site form cannot
    set that header.
    """
    header = request.META.get("HTTP_AUTHORIZATION")
    if header is not None:
        scheme, _, token = header.partition(" ")
        user = tokens.user_for(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            raise HttpError(401, "invalid_token", "the bearer token is missing, malformed or revoked")
        return Identity(user, "token")
    if not request.user.is_authenticated:
        raise HttpError(401, "unauthenticated", "log in, or send 'Authorization: Bearer <token>'")
    return Identity(request.user, "session")


# --- The endpoint ------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One request to a job endpoint, resolved once: who asks, and in what to answer."""

    request: HtmxHttpRequest
    identity: Identity
    wants_json: bool

    @property
    def tenant_id(self) -> int | None:
        return self.identity.tenant_id

    @property
    def htmx(self) -> bool:
        return bool(self.request.htmx)

    def json(self, body: schemas.Body, *, status: int = 200, headers: dict[str, str] | None = None) -> JsonResponse:
        return JsonResponse(body.to_json(), status=status, headers=headers)

    def page(self, template: str, context: dict[str, Any], *, partial: str | None = None,
             status: int = 200) -> HttpResponse:
        """The page, or only its ``partial`` when htmx asks for it."""
        name = f"{template}#{partial}" if partial and self.htmx else template
        return render(self.request, name, context, status=status)


View = Callable[..., HttpResponseBase]  # a page, JSON, or a file (FileResponse streams)
Refused = Callable[[HtmxHttpRequest, HttpError], HttpResponse]


def endpoint(*methods: str, refused: Refused | None = None) -> Callable[[View], View]:
    """Make a job endpoint of ``view(call, *args, **kwargs)``.

    ``refused(request, error)`` answers a browser whose state-changing request was refused
    (the submit form again, with the reason); every other error goes to ``error_response``.
    """
    def decorate(view: View) -> View:
        def run(request: HtmxHttpRequest, *args: Any, call: Call, **kwargs: Any) -> HttpResponseBase:
            return view(call, *args, **kwargs)

        # Django's CSRF check as its middleware runs it; settings.CSRF_FAILURE_VIEW answers a failure.
        checked = csrf_protect(run)

        @csrf_exempt  # applied below, and only where it belongs: after the size check, for sessions
        @require_http_methods(list(methods))
        @functools.wraps(view)
        def wrapper(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            # A tenant's documents, results and exports: kept by no cache, shared or the browser's own.
            response = answer(request, *args, **kwargs)
            patch_cache_control(response, no_store=True, private=True)
            return response

        def answer(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            as_json = wants_json(request)
            changes_state = request.method not in SAFE_METHODS
            try:
                if changes_state:
                    refuse_oversized(request, batch=not as_json)  # first: the CSRF check reads the form
                call = Call(request, identify(request), as_json)
                if call.identity.via == "session" and changes_state:
                    try:
                        return checked(request, *args, call=call, **kwargs)
                    except RequestDataTooBig:  # the CSRF check read a form whose fields are too large
                        raise HttpError(413, "too_large", "the form's fields are too large") from None
                    except TooManyFilesSent:  # ... or one with more files than Django parses
                        raise too_many_files() from None
                return run(request, *args, call=call, **kwargs)
            except HttpError as exc:
                if refused is not None and changes_state and not as_json and exc.status != 401:
                    return refused(request, exc)
                return error_response(request, exc, as_json=as_json)

        return wrapper

    return decorate


# --- The submission ----------------------------------------------------------------------


@dataclass(frozen=True)
class Submission:
    kind: str
    payload: Any
    operation_key: str
    document: Upload | None


def max_request_bytes(*, batch: bool = False) -> int:
    """The largest body worth reading: the largest document any kind takes (``MAX_BATCH_FILES``
    of them for the browser's form, which sends several at once), plus the form."""
    largest = max((k.max_document_bytes for k in kinds.offered_kinds()), default=0)
    return largest * (MAX_BATCH_FILES if batch else 1) + settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def refuse_oversized(request: HttpRequest, *, batch: bool = False) -> None:
    """413 on the declared length alone, before anything reads the body."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    limit = max_request_bytes(batch=batch)
    if length.isdigit() and int(length) > limit:
        raise HttpError(413, "too_large", f"the request body is larger than {limit} bytes")


def parse_submission(request: HttpRequest) -> Submission:
    """JSON (``schemas.JobRequest``) or a form (``schemas.JobForm``, with an optional ``document``).

    Owner or tenant fields in the body are ignored: identity decides them. Raises
    ``HttpError`` (400, 413, 415) before anything is written.
    """
    refuse_oversized(request)
    try:
        if request.content_type == "application/json":
            return _parse_json(request)
        if request.content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
            return _parse_form(request)
    except RequestDataTooBig:
        raise HttpError(413, "too_large", "the request body is too large") from None
    except RecursionError:
        raise HttpError(400, "invalid_payload", f"the JSON nests deeper than {MAX_PAYLOAD_DEPTH} levels",
                        field="payload") from None
    except (MultiPartParserError, TooManyFieldsSent) as exc:
        raise HttpError(400, "malformed_body", f"the form could not be read: {exc}") from None
    except TooManyFilesSent:
        raise HttpError(400, "too_many_files", f"at most {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files in one request; "
                        "send one document per request", field="document") from None
    raise HttpError(415, "unsupported_media_type",
                    "send application/json or multipart/form-data", field="Content-Type")


Model = TypeVar("Model", bound=BaseModel)


def validated(model: type[Model], data: Any) -> Model:
    """``data`` read through ``model``, or a 400 that names the first field at fault."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0])  # the models are flat: their fields are the inputs
        described = model.model_fields[field].description
        detail = f"{field}: {error['msg']}" + (f" ({described})" if described else "")
        code = "invalid_payload" if field == "payload" else "invalid"
        raise HttpError(400, code, detail, field=field) from None


def _loads(text: str | bytes) -> Any:
    """Strict JSON: no NaN or Infinity, spelt out or overflowed to (1e400); neither is JSON."""
    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON value")

    def finite(literal: str) -> float:
        number = float(literal)
        if not math.isfinite(number):
            raise ValueError(f"{literal} is out of range")
        return number

    return json.loads(text, parse_constant=constant, parse_float=finite)


def check_storable(value: Any, where: str = "payload", depth: int = 0) -> None:
    """Refuse what JSON parsing lets through but neither database stores.

    NUL characters (PostgreSQL's jsonb refuses them), lone UTF-16 surrogates (not UTF-8),
    and nesting past ``MAX_PAYLOAD_DEPTH``: each would otherwise fail inside the accepting
    transaction as a 500 instead of a 400 that names the field.
    """
    if depth > MAX_PAYLOAD_DEPTH:
        raise HttpError(400, "invalid_payload", f"{where} nests deeper than {MAX_PAYLOAD_DEPTH} levels", field=where)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise HttpError(400, "invalid_payload", f"{where} contains an unpaired surrogate", field=where,
                            reason=Reason.NOT_STORABLE) from None
        if "\x00" in value:
            raise HttpError(400, "invalid_payload", f"{where} contains a NUL character", field=where,
                            reason=Reason.NOT_STORABLE)
    elif isinstance(value, dict):
        for name, item in value.items():
            check_storable(name, where, depth + 1)
            check_storable(item, f"{where}.{name}", depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_storable(item, f"{where}.{index}", depth + 1)


def _parse_json(request: HttpRequest) -> Submission:
    try:
        body = _loads(request.body or b"null")
    except (ValueError, UnicodeDecodeError):
        raise HttpError(400, "malformed_json", "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise HttpError(400, "invalid", 'the body must be a JSON object {"kind": ..., "payload": {...}}')
    check_storable(body.get("payload"))
    parsed = validated(schemas.JobRequest, body)
    return Submission(kind=parsed.kind, payload=parsed.payload,
                      operation_key=request.headers.get("Idempotency-Key", ""), document=None)


def _parse_form(request: HttpRequest) -> Submission:
    fields = {name: request.POST[name] for name in schemas.JobForm.model_fields if name in request.POST}
    form = validated(schemas.JobForm, {**fields, "document": request.FILES.get("document")})
    payload: Any = {}
    if form.payload.strip():
        try:
            payload = _loads(form.payload)
        except ValueError:
            raise HttpError(400, "invalid_payload", "payload is not valid JSON", field="payload") from None
    if form.text.strip():
        if not isinstance(payload, dict):
            raise HttpError(400, "invalid_payload", "payload must be a JSON object", field="payload")
        payload = {**payload, "text": form.text}
    check_storable(payload)
    document = None
    if form.document is not None:
        document = Upload(content=form.document.read(), name=form.document.name or "document",
                          content_type=_media_type(form.document.content_type))
    return Submission(
        kind=form.kind,
        payload=payload,
        operation_key=request.headers.get("Idempotency-Key") or form.idempotency_key,
        document=document,
    )


def _media_type(claimed: str | None) -> str:
    claimed = (claimed or "").strip()
    if len(claimed) <= MAX_MEDIA_TYPE and _MEDIA_TYPE.fullmatch(claimed):
        return claimed
    return "application/octet-stream"


def cancel(call: Call, job_id: int) -> queue.Outcome:
    """Cancel one of the caller's tenant's jobs; an HttpError when it is not cancellable.

    Other tenants' jobs raise the same 404 as unknown ids (the read scopes the job first).
    """
    job = status.job_status(tenant_id=call.tenant_id, job_id=job_id).job
    outcome = queue.cancel(job_id=job.pk, actor=f"user:{call.identity.user.pk}", reason="", now=queue_clock.now())
    if not outcome:
        raise HttpError(409, "not_cancellable", f"a {outcome.state} job cannot be cancelled", state=outcome.state)
    return outcome


def correction(call: Call) -> tuple[str | None, bool]:
    """The value, or the confirmation, a correction of a field sends: a JSON body
    (``schemas.CorrectionRequest``) or the job page's form (``value``, or ``confirm``)."""
    request = call.request
    if request.content_type == "application/json":
        try:
            body = _loads(request.body or b"null")
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


def submit(call: Call) -> queue.Acceptance:
    """Parse the request and accept it as the caller: one transaction, or an HttpError."""
    if call.tenant_id is None:
        raise HttpError(403, "no_tenant", "your account belongs to no tenant, so it cannot submit jobs")
    submission = parse_submission(call.request)
    try:
        return queue.accept(
            tenant_id=call.tenant_id, user_id=call.identity.user.pk, kind=submission.kind,
            payload=submission.payload, operation_key=submission.operation_key,
            document=submission.document, now=queue_clock.now(),
        )
    except AcceptanceError as exc:
        raise HttpError.from_acceptance(exc) from None


# --- The browser's form: several documents at once -------------------------------------

# How many files one submission of the form may carry; each becomes a job of its own.
MAX_BATCH_FILES = 20
# The time the documents of one submission may take to check, in all: well under the web's
# request timeout (gunicorn's 30 s, deploy/gunicorn.conf.py), so the person who sent them
# always gets the page of what was accepted. A document whose check would run past it is
# refused by name, to be sent again on its own.
BATCH_CHECK_SECONDS = 15.0
MB = 1024 * 1024


@dataclass(frozen=True)
class Refusal:
    """A refused part of the submit form, in the words of the person who sent it."""

    field: str  # the form's field: "document", "text", "kind", "payload", or "" for the whole form
    message: str
    name: str = ""  # the refused file's name
    status: int = 400


class FormRefused(HttpError):
    """Nothing the form sent was accepted; each refusal is shown next to its field."""

    def __init__(self, refusals: list[Refusal]) -> None:
        first = refusals[0]
        super().__init__(first.status, "form_refused", first.message, field=first.field or None)
        self.refusals = refusals


def too_many_files() -> FormRefused:
    """More files than Django reads in one body (``DATA_UPLOAD_MAX_NUMBER_FILES``): said as the
    form says a batch too large, not as Django's bare "Bad Request (400)"."""
    return FormRefused([Refusal("document", f"You chose more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files; "
                                            f"at most {MAX_BATCH_FILES} can be sent at once. "
                                            "Send them in smaller groups.")])


@dataclass(frozen=True)
class Sent:
    """What one submission of the form made: its jobs (one per document), and what was refused."""

    batch: str  # empty for a single document
    jobs: list[Job] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)


def submit_form(call: Call) -> Sent:
    """Accept each file of the browser's form (and the pasted text) as a job of its own.

    Operation keys derive from the form's key and what it carries (kind, options, text, each
    file's name and SHA-256): a double click, a retried request or the same batch sent again
    after Back finds the jobs it made; the same form with other files makes new ones. A file
    refused (too large, not a document) is named with the reason while the others go through.
    Raises ``FormRefused`` when nothing was accepted.
    """
    tenant_id = call.tenant_id
    if tenant_id is None:
        raise HttpError(403, "no_tenant", "your account belongs to no tenant, so it cannot submit jobs")
    request = call.request
    try:
        post, files = request.POST, request.FILES.getlist("document")
    except RequestDataTooBig:
        raise HttpError(413, "too_large", "the request body is too large") from None
    except TooManyFilesSent:
        raise too_many_files() from None
    except (MultiPartParserError, TooManyFieldsSent) as exc:
        raise HttpError(400, "malformed_body", f"the form could not be read: {exc}") from None
    try:
        form = validated(schemas.JobForm, {name: post[name] for name in schemas.JobForm.model_fields if name in post})
    except HttpError as exc:
        raise FormRefused([refusal(exc.status, exc.code, exc.detail, exc.field, reason=exc.reason)]) from None
    spec = kinds.offered(form.kind)
    if spec is None:
        raise FormRefused([refusal(400, "unknown_kind", "", "kind")])
    if len(files) > MAX_BATCH_FILES:
        raise FormRefused([Refusal("document", f"You chose {len(files)} files; at most {MAX_BATCH_FILES} can be "
                                               "sent at once. Send them in smaller groups.")])
    key = (request.headers.get("Idempotency-Key") or form.idempotency_key).strip()
    if not key:
        raise FormRefused([refusal(400, "invalid_operation_key", "", "operation_key")])
    options = _form_options(form.payload)
    text = form.text if form.text.strip() else ""
    try:
        check_storable(text, "payload.text")
    except HttpError as exc:
        raise FormRefused([refusal(exc.status, exc.code, exc.detail, exc.field, reason=exc.reason,
                                   spec=spec)]) from None

    digest = hashlib.sha256(json.dumps(
        [key, form.kind, options, text, [(f.name, f.size, _sha256(f)) for f in files]]).encode()).hexdigest()
    several = len(files) + bool(text) > 1
    sent = Sent(batch=f"b{digest[:23]}" if several else "")

    def accept(payload: dict[str, Any], suffix: str, upload: Upload | None = None, name: str = "") -> None:
        try:
            accepted = queue.accept(
                tenant_id=tenant_id, user_id=call.identity.user.pk, kind=form.kind, payload=payload,
                operation_key=f"form-{digest}-{suffix}", document=upload, batch=sent.batch, now=queue_clock.now(),
            )
        except AcceptanceError as exc:
            size = len(upload.content) if upload else None
            sent.refused.append(refusal(exc.status, exc.code, exc.message, exc.field, reason=exc.reason, name=name,
                                        spec=spec, size=size))
            return
        sent.jobs.append(accepted.job)

    with documents.checks_end_by(time.monotonic() + BATCH_CHECK_SECONDS):
        for index, upload_file in enumerate(files):
            name = os.path.basename(upload_file.name or "document")
            size = upload_file.size or 0  # Django's parser sets it on every file it hands over
            if spec.max_document_bytes and size > spec.max_document_bytes:  # never read into memory
                sent.refused.append(refusal(413, "too_large", "", "document", name=name, spec=spec, size=size))
                continue
            upload = Upload(content=upload_file.read(), name=upload_file.name or "document",
                            content_type=_media_type(upload_file.content_type))
            accept(options, str(index), upload, name)
    if text:
        accept({**options, "text": text}, "text", name="Pasted text" if files else "")
    if not files and not text:
        accept(options, "form")
    if not sent.jobs:
        raise FormRefused(sent.refused)
    return sent


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
        options = _loads(text)
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


def submit_again(call: Call, job_id: int) -> queue.Acceptance:
    """A failed job's input (its document or text) as a new job, under a new key (the form's)."""
    if call.tenant_id is None:
        raise HttpError(403, "no_tenant", "your account belongs to no tenant, so it cannot submit jobs")
    job = (Job.objects.for_tenant(call.tenant_id).filter(pk=job_id)
           .only("kind", "state", "epoch", "payload", "document", "document_name", "document_type").first())
    if job is None:
        raise HttpError(404, "not_found", "no such job")
    if job.state != Job.State.DEAD:
        raise HttpError(409, "not_failed", "only a failed job can be submitted again")
    key = (call.request.POST.get("idempotency_key") or "").strip()
    upload = None
    if job.document:
        try:
            content = documents.read(job.document)
        except FileNotFoundError:
            raise HttpError(409, "document_gone", "this job's document is no longer kept: choose the file "
                                                  "again on the submit page") from None
        upload = Upload(content=content, name=job.document_name or "document", content_type=job.document_type)
    now = queue_clock.now()
    try:
        acceptance = queue.accept(tenant_id=call.tenant_id, user_id=call.identity.user.pk, kind=job.kind,
                                  payload=job.payload, operation_key=f"again-{job.pk}-{key}" if key else "",
                                  document=upload, now=now)
    except AcceptanceError as exc:
        raise HttpError.from_acceptance(exc) from None
    if acceptance.created:  # the submitter's history says who sent it again (a teammate, perhaps)
        queue.record_resubmission(job_id=job.pk, epoch=job.epoch, new_job_id=acceptance.job.pk,
                                  actor=f"user:{call.identity.user.pk}", now=now)
    return acceptance


# --- Refusals in people's words ---------------------------------------------------------


def form_field(field_name: str | None) -> str:
    """The submit form's field an API field name is about."""
    name = field_name or ""
    if name in ("document", "kind"):
        return name
    if name in ("text", "payload.text"):
        return "text"
    if name.startswith("payload"):
        return "payload"
    return ""


def refusal(status: int, code: str, message: str, field_name: str | None, *, reason: str = "", name: str = "",
            spec: kinds.Kind | None = None, size: int | None = None) -> Refusal:
    """An API refusal (its code, reason, message and field) as the submit form says it."""
    where = form_field(field_name)
    return Refusal(where, in_words(code, message, field_name or "", reason=reason, spec=spec, size=size), name,
                   status)


def refusals(request: HttpRequest, error: HttpError) -> list[Refusal]:
    """What the form shows for ``error``: its own refusals, or the one error in words."""
    if isinstance(error, FormRefused):
        return error.refusals
    size = None
    if error.status == 413 and error.code == "too_large":
        length = request.META.get("CONTENT_LENGTH") or ""
        size = int(length) if length.isdigit() else None
        if size and size > max_request_bytes(batch=True):
            return [Refusal("document", f"These files add up to {size_words(size)}; at most "
                                        f"{size_words(max_request_bytes(batch=True))} can be sent at once. "
                                        "Send them in smaller groups.", status=413)]
    return [refusal(error.status, error.code, error.detail, error.field, reason=error.reason)]


def in_words(code: str, message: str, field_name: str, *, reason: str = "", spec: kinds.Kind | None = None,
             size: int | None = None) -> str:
    """The API's refusal (stable code, finer reason, technical message) as a sentence for the
    person at the form. Chosen by code, reason and field; the message is never matched: it is
    shown, as a sentence, only where no words of our own fit."""
    limit = spec.max_document_bytes if spec else 0
    if code == "too_large" and field_name == "document" and size and limit and size > limit:
        return f"This file is {size_words(size)}; the limit is {size_words(limit)} per file."
    if code == "too_large" and field_name.startswith("payload"):
        return "The pasted text is too long" + (
            f": at most {size_words(spec.max_payload_bytes)} can be reviewed at once." if spec else ".")
    if code == "too_large" and not field_name:
        return "The pasted text is too long to send. Choose it as a file instead."
    if code == "unsupported_media_type" and reason == Reason.UNRECOGNISED_TYPE:
        return ("This file is not a PDF, a Word document (.docx), a text file or an e-invoice (XML), nor a scan or "
                "photo (PNG, JPEG, TIFF).")
    if field_name.startswith("payload.text") or field_name == "text":
        if reason == Reason.TOO_LONG:
            longest = _schema_limit(spec, "maxLength")
            return "The pasted text is too long" + (f": at most {longest:,} characters." if longest else ".")
        if reason == Reason.NOT_STORABLE:
            return "The pasted text contains characters that cannot be stored. Paste it again as plain text."
        if reason == Reason.NO_INPUT:
            return "Choose a file, or paste the text of a document."
        if reason == Reason.INPUT_TWICE:
            return "Send a file or pasted text in the advanced options, not both."
    if code == "invalid_payload" and field_name.startswith("payload"):
        return f"The advanced options are not valid: {message}."
    if code == "unknown_kind":
        return "Choose one of the offered kinds of work."
    if code == "invalid_operation_key":
        return "This form has expired. Reload the page, then send it again."
    if code == "operation_key_conflict":
        return "This form was already used for other documents. It has been renewed: send it again."
    if code == "malformed_body":
        return "The upload was interrupted or could not be read. Choose the files and send them again."
    if code == "no_tenant":
        return "Your account belongs to no team, so it cannot send documents. Ask your staff to add you to one."
    if code == "not_checked_in_time":
        return "Not checked in time: send it again on its own."
    if code == "tenant_queue_full":
        return ("Your team already has as many documents waiting as it may. Send this one again once some "
                "of them have started.")
    return wording.sentence(message) or "This could not be accepted."


def _schema_limit(spec: kinds.Kind | None, keyword: str) -> int | None:
    if spec is None:
        return None
    text = spec.payload_schema.get("properties", {}).get("text", {})
    value = text.get(keyword) if isinstance(text, dict) else None
    return value if isinstance(value, int) else None


def size_words(size: int) -> str:
    """30 MB, 5.1 MB, 812 KB: rounded up, so a file just over a limit never reads as at it."""
    for unit, scale in (("MB", MB), ("KB", 1024)):
        if size >= scale:
            value = math.ceil(size / scale * 10) / 10
            return f"{value:.0f} {unit}" if value >= 10 or value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"
