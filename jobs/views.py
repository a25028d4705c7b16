"""Thin views: one URL scheme for browsers (HTML, htmx partials) and API clients (JSON).

Identity, negotiation and parsing live in ``jobs.http``; reads in ``jobs.status``; every
write in ``jobs.queue``. ``HttpError`` raised here is rendered by ``jobs.middleware``.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from . import http, kinds, status
from .clock import system_clock
from .http import HttpError, Identity
from .models import Job
from .openapi import openapi


def caller(request: HttpRequest) -> Identity:
    identity = http.identify(request)
    if identity is None:
        raise HttpError(401, "unauthenticated", "log in, or send 'Authorization: Bearer <token>'")
    return identity


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return redirect("job_new")


@csrf_exempt  # bearer-token requests need none; identify() checks it for session POSTs
@require_http_methods(["GET", "HEAD", "POST"])
def jobs(request: HttpRequest) -> HttpResponse:
    return submit(request) if request.method == "POST" else job_list(request)


def submit(request: HttpRequest) -> HttpResponse:
    try:
        http.refuse_oversized(request)  # first: the CSRF check in caller() reads the form
        identity = caller(request)
    except HttpError as exc:
        if exc.status != 413:
            raise
        return refused(request, exc)
    try:
        acceptance = http.submit(request, identity)
    except HttpError as exc:
        return refused(request, exc)
    url = status.status_url(acceptance.job.pk)
    if http.wants_json(request):
        return JsonResponse(status.accepted_json(acceptance.job), status=202,
                            headers={"Location": url, "Retry-After": str(http.RETRY_AFTER_ACCEPTED)})
    return HttpResponseClientRedirect(url) if request.htmx else see_other(url)


def refused(request: HttpRequest, exc: HttpError) -> HttpResponse:
    """API clients get the JSON error (via the middleware); browsers the form with the reason."""
    if http.wants_json(request):
        raise exc
    return render_form(request, code=exc.status, error=exc)


def job_list(request: HttpRequest) -> HttpResponse:
    identity = caller(request)
    state = request.GET.get("state", "")
    if state and state not in Job.State.values:
        raise HttpError(400, "invalid", f"state must be one of {', '.join(Job.State.values)}", field="state")
    page = status.job_page(tenant_id=identity.tenant_id, state=state, page=request.GET.get("page"))
    if http.wants_json(request):
        return JsonResponse(status.list_json(page, state))
    template = "jobs/job_list.html" + ("#rows" if request.htmx else "")
    return render(request, template, {
        "page": page, "state": state, "states": Job.State.values, "poll_seconds": status.LIST_POLL_SECONDS,
        "live": any(not job.is_terminal for job in page), "query": urlencode({"state": state, "page": page.number}),
    })


@csrf_exempt  # read-only: other methods get a 405, not a CSRF failure
@require_http_methods(["GET", "HEAD"])
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    identity = caller(request)
    found = status.job_status(tenant_id=identity.tenant_id, job_id=job_id)
    if http.wants_json(request):
        live = {} if found.job.is_terminal else {"Retry-After": str(status.retry_after(found.job, system_clock.now()))}
        return JsonResponse(status.job_json(found), headers=live)
    polls = status.poll_count(request.GET.get("poll"))
    template = "jobs/job_detail.html" + ("#status" if request.htmx else "")
    return render(request, template, {
        "job": found.job, "events": found.events, "review": status.is_review_result(found.job.result),
        "delay": status.poll_delay(polls), "next_poll": polls + 1,
    })


@require_GET
def job_new(request: HttpRequest) -> HttpResponse:
    caller(request)
    return render_form(request)


def render_form(request: HttpRequest, *, code: int = 200, error: HttpError | None = None) -> HttpResponse:
    """The submit form with a fresh operation key, or the same key again after an error.

    A conflict (409) means this form's key is spent, so the form gets a new one. A body
    refused as too large (413) is never read, not even to refill the form: its key was
    never used, so a fresh one is as good.
    """
    values = request.POST if error and error.status != 413 else {}
    key = values.get("idempotency_key") if error and error.status != 409 else None
    template = "jobs/job_new.html" + ("#form" if request.htmx else "")
    return render(request, template, {
        "kinds": kinds.offered_kinds(), "operation_key": key or uuid.uuid4().hex, "error": error,
        "values": values,
    }, status=code)


def see_other(url: str) -> HttpResponse:
    """303: a reload of the page we land on is a GET, never a second POST."""
    response = HttpResponseRedirect(url)
    response.status_code = 303
    return response


@require_GET
def openapi_json(request: HttpRequest) -> HttpResponse:
    return JsonResponse(openapi())
