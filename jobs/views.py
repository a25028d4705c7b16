"""Thin views: one URL scheme for browsers (HTML, htmx partials) and API clients (JSON).

``http.endpoint`` resolves the caller, the CSRF check and the negotiation once and hands the
view a ``Call``; reads come from ``jobs.status``, every write goes through ``jobs.queue``,
and JSON answers are ``jobs.schemas`` models (the ones ``/openapi.json`` describes).
"""

from __future__ import annotations

import uuid
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseClientRedirect

from . import http, kinds, schemas, status
from .clock import system_clock
from .http import Call, HttpError
from .models import Job
from .openapi import openapi

@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return redirect("job_new")


def render_form(request: HttpRequest, error: HttpError | None = None) -> HttpResponse:
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
    }, status=error.status if error else 200)


@http.endpoint("GET", "HEAD", "POST", refused=render_form)
def jobs(call: Call) -> HttpResponse:
    return submit(call) if call.request.method == "POST" else job_list(call)


def submit(call: Call) -> HttpResponse:
    acceptance = http.submit(call)
    url = schemas.status_url(acceptance.job.pk)
    if call.wants_json:
        return call.json(schemas.Accepted.of(acceptance.job), status=202,
                         headers={"Location": url, "Retry-After": str(http.RETRY_AFTER_ACCEPTED)})
    return HttpResponseClientRedirect(url) if call.htmx else see_other(url)


def job_list(call: Call) -> HttpResponse:
    query = http.validated(schemas.JobListQuery, call.request.GET.dict())
    state = query.state.value if query.state else ""
    page = status.job_page(tenant_id=call.tenant_id, state=state, page=query.page)
    if call.wants_json:
        return call.json(schemas.JobList.of(page, state))
    return call.page("jobs/job_list.html", {
        "page": page, "state": state, "states": Job.State.values, "poll_seconds": status.LIST_POLL_SECONDS,
        "live": any(not job.is_terminal for job in page), "query": urlencode({"state": state, "page": page.number}),
    }, partial="rows")


@http.endpoint("GET", "HEAD")
def job_detail(call: Call, job_id: int) -> HttpResponse:
    found = status.job_status(tenant_id=call.tenant_id, job_id=job_id)
    job = found.job
    if call.wants_json:
        live = {} if job.is_terminal else {"Retry-After": str(status.retry_after(job, system_clock.now()))}
        return call.json(schemas.Job.of(job, found.events), headers=live)
    polls = status.poll_count(call.request.GET.get("poll"))
    kind = kinds.get(job.kind)
    return call.page("jobs/job_detail.html", {
        "job": job, "events": found.events, "result_template": kind.result_template if kind else "",
        "delay": status.poll_delay(polls), "next_poll": polls + 1,
    }, partial="status")


@http.endpoint("GET", "HEAD")
def job_new(call: Call) -> HttpResponse:
    return render_form(call.request)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: a failed check answered like any other error (JSON or the error page)."""
    return http.error_response(request, HttpError(403, "csrf_failed", f"CSRF check failed: {reason}"))


def see_other(url: str) -> HttpResponse:
    """303: a reload of the page we land on is a GET, never a second POST."""
    response = HttpResponseRedirect(url)
    response.status_code = 303
    return response


@require_GET
def openapi_json(request: HttpRequest) -> HttpResponse:
    return JsonResponse(openapi())
