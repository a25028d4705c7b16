"""Thin views for staff: the lease lab, the capacity planner, and the metrics endpoint."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from jobs.clock import system_clock

from . import capacity, lab, measures, metrics
from .access import staff_only, staff_or_scrape_token
from .forms import CapacityForm, LabForm

SEED_CASES = [(10, "none"), (10, "before-effect"), (30, "before-effect"), (10, "after-marker")]


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
                                            "seed_cases": SEED_CASES})


@require_GET
@staff_only
def capacity_page(request: HttpRequest) -> HttpResponse:
    # Without a query the page opens on the seed's worked example, already computed.
    form = CapacityForm(request.GET or CapacityForm.seed_example())
    plan, seen, error = None, None, ""
    if form.is_valid():
        d = form.cleaned_data
        given = dict(workers=d["workers"], deadline=d["deadline"], burst=d["burst"] or 0,
                     pollers=d["pollers"] or 0, poll_interval=d["poll_interval"] or 1,
                     writes_per_job=5 if d["writes_per_job"] is None else d["writes_per_job"])
        try:
            if d["observed"]:
                workload, seen = measures.observed_workload(window=d["observed"], now=system_clock.now(),
                                                            service=d["service"], **given)
            else:
                workload = capacity.Workload(rate=d["rate"], service=d["service"], **given)
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
