"""Staff triage in the admin, in Chromium: at 1280 px every column staff triage by is in view with no
sideways scrolling, even for long names; an unknown job's page shows its guidance and its evidence;
both pages at 1280 and 390 px with no serious or critical axe-core finding (see ``audit``)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from documents import acceptance
from documents.store import Upload
from jobs import queue
from jobs.clock import system_clock
from jobs.models import Job

from .audit import audit
from .conftest import off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STAFF = ("triage-lead", "Quiet-otter-4417")
COLUMNS = ["id", "document / kind", "scope", "submitter", "state", "attempts", "age", "last error"]
LONG_ERROR = ("planner_misconfigured: AGENT_PLANNER_URL must be an http:// or https:// URL; the planner was "
              "never asked, and every later attempt would fail the same way")


def staff_and_jobs(make_member) -> Job:
    """Staff of acme; alice's demo jobs (one failed, one unknown); and a tenant whose names are long."""
    make_member("acme", STAFF[0], password=STAFF[1], staff=True)
    make_member("acme", "alice", password="alice-pass-123")
    call_command("seedtriage", "alice", stdout=StringIO())
    margaret = make_member("northwind-traders", "margaret.hamilton-smith")
    margaret.first_name, margaret.last_name = "Margaret", "Hamilton-Smith"
    margaret.save()
    for n, name in enumerate(["Rechnung-2026-000471102-Muster-Handels-GmbH-Berlin-final-v2.pdf", "x" * 90 + ".txt"]):
        now = system_clock.now()
        job = acceptance.accept(scope_id=margaret.tenant_id, user_id=margaret.pk, kind="document_review", payload={},
                                operation_key=f"long-{n}", now=now - timedelta(days=12, hours=23), available_at=now,
                                document=Upload(f"Invoice {n}".encode(), name, "text/plain")).job
        claim = queue.claim(now=now, worker="browser-test")
        assert claim is not None and claim.job_id == job.pk
        assert queue.start(job_id=job.pk, epoch=claim.epoch, now=now)
        assert queue.fail(job_id=job.pk, epoch=claim.epoch, error=LONG_ERROR, code="planner_misconfigured",
                          retryable=False, now=now).state == "dead"
    return Job.objects.get(state="unknown")


def inside_width(box: dict, width: float) -> bool:
    return box["x"] >= -0.5 and box["x"] + box["width"] <= width + 0.5


def test_the_list_shows_every_triage_column_at_1280_without_scrolling_sideways(make_member, login):
    off_loop(staff_and_jobs, make_member)
    page = login(*STAFF)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/admin/jobs/job/?state=needs_human")
    assert page.locator("#result_list tbody tr").count() == 4
    assert page.locator("#nav-sidebar").count() == 0  # the app sidebar would take the columns' room

    heads = page.locator("#result_list thead th:not(.action-checkbox-column)")
    assert [h.strip().lower() for h in heads.all_text_contents()] == COLUMNS
    widths = page.eval_on_selector("#result_list", "t => ({table: t.scrollWidth, box: t.parentElement.clientWidth})")
    assert widths["table"] <= widths["box"], widths
    for index in range(heads.count()):
        box = heads.nth(index).bounding_box()
        assert box and inside_width(box, 1280), (COLUMNS[index], box)
    # Long names stay inside their columns: the kind under the document, the whole name on hover.
    long_row = page.locator("#result_list tbody tr", has=page.locator("span.job-document[title^='Rechnung-2026']"))
    assert long_row.locator(".job-kind").inner_text() == "document_review"
    assert long_row.locator("td.field-submitter").inner_text().split() == ["Margaret", "Hamilton-Smith"]
    assert long_row.locator(".job-error").get_attribute("title") == LONG_ERROR
    audit(page, "admin-triage-list")


def test_an_unknown_jobs_page_shows_its_guidance_and_evidence(make_member, login):
    unknown = off_loop(staff_and_jobs, make_member)
    page = login(*STAFF)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"/admin/jobs/job/{unknown.pk}/change/")
    assert page.inner_text("#guidance").startswith("What to do: The connection to the provider broke after the call")
    rows = page.locator(".job-evidence tr")
    shown = {rows.nth(i).locator("th").inner_text(): rows.nth(i).locator("td").inner_text()
             for i in range(rows.count())}
    assert shown["Idempotency key"] == f"job-{unknown.pk}-epoch-1-step-0"
    assert shown["Step"] == "1 of 3: extract" and shown["Provider's request id"] == "none: no answer was received"
    assert shown["External call marked started"].endswith("model provider (the demo's stand-in: nothing is sent)")
    assert page.get_attribute("#submitters-page", "href") == f"/jobs/{unknown.pk}"  # staff of acme may open it
    for width, height in ((1280, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(150)
        for cell in page.locator(".job-evidence th, .job-evidence td, .job-timeline td").all():
            box = cell.bounding_box()
            assert box and inside_width(box, width), (width, cell.inner_text(), box)
    audit(page, "admin-triage-unknown-job")
