"""The HTTP edge of the job endpoints: one trip per request, then the view.

The same URLs serve browsers (session, HTML, htmx) and API clients (bearer token, JSON).
``endpoint`` wraps a view and resolves everything the view needs once, in an order that
matters: the method (405), the declared body size (413, before anything reads the body),
the caller (bearer token or session, 401), Django's CSRF check for session requests that
change state, and whether to answer in JSON. The view gets an ``EdgeRequest`` and raises
``HttpError`` for a refusal, which is answered here: JSON (``schemas.Error``) for API
clients, the login page, the submit form again or the error page for browsers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import RequestDataTooBig, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.cache import patch_cache_control
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods
from django_htmx.middleware import HtmxDetails

from accounts import tokens
from accounts.models import User
from documents import rules
from jobs import kinds
from jobs.errors import AcceptanceError, ScopeQueueFull

from . import schemas, wording

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
        """Wrap a ``jobs.errors.AcceptanceError`` (it already knows its status, and its code but
        for the few the API says in the product's words, ``api_code``)."""
        retry_after = getattr(exc, "retry_after", None)
        headers = {"Retry-After": str(retry_after)} if retry_after else None
        return cls(exc.status, api_code(exc.code), exc.message, field=exc.field, headers=headers, reason=exc.reason)


# The queue's codes that the API has always said in the product's words: a scope is a tenant here.
API_CODES = {ScopeQueueFull.code: "tenant_queue_full"}


def api_code(code: str) -> str:
    """The API's code for a refusal's code: the queue's own, but for those in ``API_CODES``."""
    return API_CODES.get(code, code)


def json_error(status: int, code: str | None = None, detail: str | None = None, *,
               field: str | None = None, headers: dict[str, str] | None = None,
               state: str | None = None) -> JsonResponse:
    default_code, default_detail = STATUS_CODES.get(status, ("error", "the request failed"))
    body = schemas.Error.of(code or default_code, detail or default_detail, field, state=state)
    response = JsonResponse(body.to_json(), status=status, headers=headers)
    if status == HTTPStatus.UNAUTHORIZED:
        response["WWW-Authenticate"] = 'Bearer realm="jobs"'
    return response


def error_response(request: HtmxHttpRequest, exc: HttpError, *, as_json: bool | None = None) -> HttpResponse:
    """The error as this caller expects it: JSON, the login page on a 401, or the error page."""
    if as_json is None:
        as_json = wants_json(request)
    if as_json:
        return json_error(exc.status, exc.code, exc.detail, field=exc.field, headers=exc.headers, state=exc.state)
    if exc.status == HTTPStatus.UNAUTHORIZED:
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


@dataclass(frozen=True)
class EdgeRequest:
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
    """Make a job endpoint of ``view(asked, *args, **kwargs)``.

    ``refused(request, error)`` answers a browser whose state-changing request was refused
    (the submit form again, with the reason); every other error goes to ``error_response``.
    """
    def decorate(view: View) -> View:
        def run(request: HtmxHttpRequest, *args: Any, asked: EdgeRequest, **kwargs: Any) -> HttpResponseBase:
            return view(asked, *args, **kwargs)

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
                asked = EdgeRequest(request, identify(request), as_json)
                if asked.identity.via == "session" and changes_state:
                    try:
                        return checked(request, *args, asked=asked, **kwargs)
                    except RequestDataTooBig:  # the CSRF check read a form whose fields are too large
                        raise HttpError(413, "too_large", "the form's fields are too large") from None
                    except TooManyFilesSent:  # ... or one with more files than Django parses
                        raise too_many_files() from None
                return run(request, *args, asked=asked, **kwargs)
            except HttpError as exc:
                if refused is not None and changes_state and not as_json and exc.status != HTTPStatus.UNAUTHORIZED:
                    return refused(request, exc)
                return error_response(request, exc, as_json=as_json)

        return wrapper

    return decorate


def max_request_bytes(*, batch: bool = False) -> int:
    """The largest body worth reading: the largest document any kind takes (``MAX_BATCH_FILES``
    of them for the browser's form, which sends several at once), plus the form."""
    largest = max((rules.max_bytes(k.name) for k in kinds.offered_kinds()), default=0)
    return largest * (MAX_BATCH_FILES if batch else 1) + settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def refuse_oversized(request: HttpRequest, *, batch: bool = False) -> None:
    """413 on the declared length alone, before anything reads the body."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    limit = max_request_bytes(batch=batch)
    if length.isdigit() and int(length) > limit:
        raise HttpError(413, "too_large", f"the request body is larger than {limit} bytes")


# How many files one submission of the form may carry; each becomes a job of its own.
MAX_BATCH_FILES = 20


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
    return FormRefused([Refusal("document", f"Nothing was sent: at most {MAX_BATCH_FILES} files go in one batch, "
                                            f"and this form carried more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES}. "
                                            f"Choose {MAX_BATCH_FILES} or fewer at a time.")])
