"""HTTP plumbing for the job endpoints: who is asking, what they want back, what they sent.

The same URLs serve browsers (session, HTML) and API clients (bearer token, JSON). Views
stay thin by asking this module three questions: the caller's identity, whether to answer
in JSON, and the submission parsed into what ``queue.accept`` takes. Errors are raised as
``HttpError`` and rendered as ``{"error": code, "detail": text}`` for API clients.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.middleware.csrf import CsrfViewMiddleware

from . import kinds, queue, tokens
from .clock import system_clock
from .documents import Upload
from .errors import AcceptanceError
from .models import User

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

# Generic codes for errors that carry no code of their own (Http404, 405 from a decorator).
STATUS_CODES = {
    400: ("invalid", "the request is invalid"),
    401: ("unauthenticated", "authentication is required: send 'Authorization: Bearer <token>'"),
    403: ("forbidden", "you may not do this"),
    404: ("not_found", "no such resource"),
    405: ("method_not_allowed", "this method is not allowed here"),
    409: ("conflict", "the request conflicts with an earlier one"),
    413: ("too_large", "the request body is too large"),
    415: ("unsupported_media_type", "unsupported media type"),
    500: ("internal_error", "something went wrong on our side; nothing was accepted"),
    503: ("unavailable", "the job store is unavailable; retry later"),
}


class HttpError(Exception):
    """An error answer: a stable code, a human text, and for 400s the field at fault."""

    def __init__(self, status: int, code: str, detail: str, *, field: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail, self.field = status, code, detail, field
        self.headers = headers or {}

    @classmethod
    def from_acceptance(cls, exc) -> "HttpError":
        """Wrap a ``jobs.errors.AcceptanceError`` (it already knows its status and code)."""
        return cls(exc.status, exc.code, exc.message, field=exc.field)


def json_error(status: int, code: str | None = None, detail: str | None = None, *,
               field: str | None = None, headers: dict[str, str] | None = None) -> JsonResponse:
    default_code, default_detail = STATUS_CODES.get(status, ("error", "the request failed"))
    body: dict[str, Any] = {"error": code or default_code, "detail": detail or default_detail}
    if field:
        body["field"] = field
    response = JsonResponse(body, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="jobs"'
    return response


def error_response(exc: HttpError) -> JsonResponse:
    return json_error(exc.status, exc.code, exc.detail, field=exc.field, headers=exc.headers)


# --- Content negotiation ---------------------------------------------------------------


def wants_json(request: HttpRequest) -> bool:
    """API clients get JSON: a bearer token, a JSON body, or an Accept that is not HTML.

    Browsers (and htmx) always send ``text/html`` in Accept; curl sends ``*/*``.
    """
    if request.headers.get("HX-Request") == "true":
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


class _CsrfCheck(CsrfViewMiddleware):
    def _reject(self, request, reason):  # return the reason instead of a response
        return reason


def identify(request: HttpRequest) -> Identity | None:
    """The caller, from a bearer token or else the session; None if neither.

    A request that presents an Authorization header is judged by it alone (never by a
    session cookie it also carries), so it needs no CSRF token: a cross-site form cannot
    set that header. Session requests that change state must pass the CSRF check.
    """
    header = request.META.get("HTTP_AUTHORIZATION")
    if header is not None:
        scheme, _, token = header.partition(" ")
        user = tokens.user_for(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            raise HttpError(401, "invalid_token", "the bearer token is missing, malformed or revoked")
        return Identity(user, "token")
    if not request.user.is_authenticated:
        return None
    if request.method not in ("GET", "HEAD", "OPTIONS", "TRACE"):
        check = _CsrfCheck(lambda r: None)
        check.process_request(request)
        try:
            reason = check.process_view(request, None, (), {})  # reads the form for its token
        except RequestDataTooBig:
            raise HttpError(413, "too_large", "the form's fields are too large") from None
        if reason:
            raise HttpError(403, "csrf_failed", f"CSRF check failed: {reason}")
    return Identity(request.user, "session")


# --- The submission ----------------------------------------------------------------------


@dataclass(frozen=True)
class Submission:
    kind: str
    payload: Any
    operation_key: str
    document: Upload | None


def max_request_bytes() -> int:
    """The largest body worth reading: the largest document any kind takes, plus the form."""
    largest = max((k.max_document_bytes for k in kinds.offered_kinds()), default=0)
    return largest + settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def refuse_oversized(request: HttpRequest) -> None:
    """413 on the declared length alone, before anything reads the body.

    Call it before the CSRF check too: that check reads the form to find its token.
    """
    length = request.META.get("CONTENT_LENGTH") or "0"
    if length.isdigit() and int(length) > max_request_bytes():
        raise HttpError(413, "too_large", f"the request body is larger than {max_request_bytes()} bytes")


def parse_submission(request: HttpRequest) -> Submission:
    """JSON ``{"kind", "payload"}`` or a form (multipart with an optional ``document``).

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
    raise HttpError(415, "unsupported_media_type",
                    "send application/json or multipart/form-data", field="Content-Type")


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
            raise HttpError(400, "invalid_payload", f"{where} contains an unpaired surrogate", field=where) from None
        if "\x00" in value:
            raise HttpError(400, "invalid_payload", f"{where} contains a NUL character", field=where)
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
    payload = body.get("payload", {})
    check_storable(payload)
    return Submission(
        kind=_kind(body.get("kind")),
        payload=payload,
        operation_key=request.headers.get("Idempotency-Key", ""),
        document=None,
    )


def _parse_form(request: HttpRequest) -> Submission:
    form = request.POST
    payload: Any = {}
    if form.get("payload", "").strip():
        try:
            payload = _loads(form["payload"])
        except ValueError:
            raise HttpError(400, "invalid_payload", "payload is not valid JSON", field="payload") from None
    if form.get("text", "").strip():
        if not isinstance(payload, dict):
            raise HttpError(400, "invalid_payload", "payload must be a JSON object", field="payload")
        payload = {**payload, "text": form["text"]}
    check_storable(payload)
    upload = request.FILES.get("document")
    document = None
    if upload is not None:
        document = Upload(content=upload.read(), name=upload.name or "document",
                          content_type=_media_type(upload.content_type))
    return Submission(
        kind=_kind(form.get("kind")),
        payload=payload,
        operation_key=request.headers.get("Idempotency-Key") or form.get("idempotency_key", ""),
        document=document,
    )


def _media_type(claimed: str | None) -> str:
    claimed = (claimed or "").strip()
    if len(claimed) <= MAX_MEDIA_TYPE and _MEDIA_TYPE.fullmatch(claimed):
        return claimed
    return "application/octet-stream"


def _kind(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise HttpError(400, "invalid", "kind is required: one of the offered job kinds", field="kind")
    return value.strip()


def submit(request: HttpRequest, identity: Identity) -> queue.Acceptance:
    """Parse the request and accept it as the caller: one transaction, or an HttpError."""
    if identity.tenant_id is None:
        raise HttpError(403, "no_tenant", "your account belongs to no tenant, so it cannot submit jobs")
    submission = parse_submission(request)
    try:
        return queue.accept(
            tenant_id=identity.tenant_id, user_id=identity.user.pk, kind=submission.kind,
            payload=submission.payload, operation_key=submission.operation_key,
            document=submission.document, now=system_clock.now(),
        )
    except AcceptanceError as exc:
        raise HttpError.from_acceptance(exc) from None
