"""Thin views for staff: the lease lab, the capacity planner, and the metrics endpoint."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from jobs.clock import queue_clock
from web.edge import HtmxHttpRequest

from . import capacity, lab, measures, metrics
from .access import staff_only, staff_or_scrape_token
from .forms import CapacityForm, LabForm

# Linked from the lab page: a healthy run, a crash before the effect with a short and a long
# lease, and a crash after the external-start marker.
LAB_CASES = [(10, "none"), (10, "before-effect"), (30, "before-effect"), (10, "after-marker")]


@require_GET
@staff_only
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "ops/index.html")


@require_GET
@staff_only
def lab_page(request: HttpRequest) -> HttpResponse:
    """Runs the experiment (in a child process, on a throwaway file) when the form is submitted."""
    form = LabForm(request.GET or None)
    timeline, error = None, ""
    if form.is_valid():
        try:
            timeline = lab.run(**form.cleaned_data)
        except lab.LabError as exc:
            error = str(exc)
    return render(request, "ops/lab.html", {"form": form, "timeline": timeline, "error": error,
                                            "lab_cases": LAB_CASES})


@require_GET
@staff_only
def capacity_page(request: HtmxHttpRequest) -> HttpResponse:
    # Without a query the page opens on the form's example workload, already computed.
    form = CapacityForm(request.GET or CapacityForm.example())
    plan, seen, error = None, None, ""
    if form.is_valid():
        given = dict(form.cleaned_data)  # blank optional fields are None: the Workload's defaults apply
        window, rate = given.pop("observed"), given.pop("rate")
        try:
            if window:
                workload, seen = measures.observed_workload(window=window, now=queue_clock.now(), **given)
            else:
                workload = capacity.workload(rate=rate, **given)
            plan = capacity.plan(workload)
        except ValueError as exc:
            error = str(exc)
    template = "ops/capacity.html" + ("#plan" if request.htmx else "")
    return render(request, template, {"form": form, "plan": plan, "seen": seen, "error": error})


@require_GET
@staff_or_scrape_token
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text: staff sessions, or ``Authorization: Bearer $METRICS_TOKEN``."""
    return HttpResponse(metrics.exposition(), content_type=metrics.CONTENT_TYPE)
