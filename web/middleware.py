"""Errors as API clients and browsers each expect them, and 503 when the store is away.

API clients (see ``edge.wants_json``) never get an HTML error page or a stack trace: any
error response for them is rewritten to ``{"error": code, "detail": text}``, keeping its
status and headers (``Allow`` on a 405, say). A database that is unreachable or locked past
its busy timeout is a ``503`` with ``Retry-After`` rather than a 500: the client did
nothing wrong and nothing was accepted (acceptance is one transaction).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from http import HTTPStatus

from django.conf import settings
from django.core.signals import got_request_exception
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers

from . import edge

log = logging.getLogger("jobs.web")

UNAVAILABLE = (OperationalError, InterfaceError)
_KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate", "Vary")


class _Request(edge.HtmxHttpRequest):
    # Set by ``_mark_unavailable`` when an exception outside a view found the store away.
    _jobs_store_unavailable: bool


class SecurityHeadersMiddleware:
    """The headers Django's SecurityMiddleware does not send: ``Permissions-Policy``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.PERMISSIONS_POLICY:
            response.headers.setdefault("Permissions-Policy", settings.PERMISSIONS_POLICY)
        return response


class ApiErrorsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: _Request) -> HttpResponse:
        response = self.get_response(request)
        failed = response.status_code == HTTPStatus.INTERNAL_SERVER_ERROR
        if failed and getattr(request, "_jobs_store_unavailable", False):
            response = unavailable(request)  # raised in a middleware, not a view
        if response.status_code >= HTTPStatus.BAD_REQUEST and edge.wants_json(request) and not _is_json(response):
            rewritten = edge.json_error(response.status_code)
            for name in _KEPT_HEADERS:
                if name in response:
                    rewritten[name] = response[name]
            response = rewritten
        patch_vary_headers(response, ("Accept", "Authorization"))  # one URL, two representations
        return response

    def process_exception(self, request: edge.HtmxHttpRequest, exc: Exception) -> HttpResponse | None:
        if isinstance(exc, UNAVAILABLE):
            log.warning("job store unavailable: %s %s: %s", request.method, request.path, exc)
            return unavailable(request)
        return None


def unavailable(request: edge.HtmxHttpRequest) -> HttpResponse:
    """503 without touching the database again (no session, no user in the template)."""
    headers = {"Retry-After": str(edge.RETRY_AFTER_UNAVAILABLE)}
    if edge.wants_json(request):
        return edge.json_error(503, headers=headers)
    return HttpResponse(render_to_string("503.html"), status=503, headers=headers)


def _is_json(response: HttpResponse) -> bool:
    return response.get("Content-Type", "").startswith("application/json")


def _mark_unavailable(sender: object, request: _Request | None = None, **kwargs: object) -> None:
    """An exception outside a view (a session save, say): remember if the store was away."""
    exc = sys.exc_info()[1]
    if request is not None and isinstance(exc, UNAVAILABLE):
        request._jobs_store_unavailable = True


got_request_exception.connect(_mark_unavailable, dispatch_uid="web.middleware.unavailable")
