"""Every page works under the Content-Security-Policy: nothing is refused, htmx included.

The live server sends the same policy as production (it is on in every environment). The
browser reports each refusal as a ``securitypolicyviolation`` event and a console error;
both are collected from the first script on each page and must stay empty while members
and staff use the pages, htmx's swaps and polls included.
"""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from jobs import queue

from .conftest import ARTIFACTS, off_loop
from .csp import refused, watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

def test_the_job_pages_and_the_submit_form_work_under_the_policy(make_member, login, browser_settings):
    off_loop(make_member, "acme", "alice", password="alice-pass-123")
    page = login("alice", "alice-pass-123")
    console = watch(page)
    page.goto("/jobs/new")
    assert page.evaluate("htmx.config.allowEval") is False
    assert page.evaluate("htmx.config.includeIndicatorStyles") is False
    # site.css applies: the header is styled without any inline style.
    assert page.eval_on_selector("header", "e => getComputedStyle(e).display") == "flex"
    assert page.eval_on_selector(".button-primary", "e => getComputedStyle(e).backgroundColor") == "rgb(29, 78, 216)"

    # htmx posts the form; static/jobs.js swaps the 400 answer in place.
    page.select_option("#id_kind", "diagnostic.sleep")
    page.click("details summary")
    page.fill("#id_payload", '{"seconds": "soon"}')
    page.click("#submit-form button[type=submit]")
    assert "payload.seconds" in page.text_content("#form-error")
    assert refused(page, console) == []

    # A job is accepted and its page polls its status (no worker: it stays queued).
    page.fill("#id_payload", '{"seconds": 1}')
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/jobs/\d+$"))
    with page.expect_response(lambda r: "?poll=" in r.url and r.status == 200, timeout=10_000):
        pass  # the status partial's first htmx poll
    assert page.text_content("#job-state") == "Waiting"
    assert page.eval_on_selector("time[data-when]", "e => e.textContent") == "just now"  # static/jobs.js, local time
    assert refused(page, console) == []

    # The job list's state filter submits itself on change (static/jobs.js, no onchange=), empty fields left out.
    page.goto("/jobs")
    with page.expect_navigation():
        page.select_option("#id_state", "queued")
    assert page.url.endswith("/jobs?state=queued")
    assert page.is_visible("#rows a")
    assert refused(page, console) == []


def accept_a_job(user):
    return queue.accept(scope_id=user.tenant_id, user_id=user.pk, kind="diagnostic.sleep", payload={"seconds": 1},
                        operation_key="csp-admin", now=timezone.now(), offered_only=False).job


def test_staff_pages_and_the_admin_work_under_the_policy(make_member, login):
    staff = off_loop(make_member, "ops", "operator", password="operator-pass-123", staff=True)
    job = off_loop(accept_a_job, staff)
    page = login("operator", "operator-pass-123")
    console = watch(page)

    page.goto("/ops/lab/?lease=10&crash=before-effect")
    page.wait_for_selector("#timeline")
    page.click("#step-next")  # static/lab.js steps through the timeline
    assert page.text_content("#step-count").startswith("step 2 of")

    page.goto("/ops/capacity/")
    page.click("#capacity-form button[type=submit]")  # htmx swaps the plan in
    page.wait_for_selector("#figures")

    page.goto("/admin/jobs/job/")
    assert page.is_visible(".triage-counts")
    assert page.eval_on_selector(".triage-counts", "e => getComputedStyle(e).display") == "flex"  # jobs-admin.css
    assert page.eval_on_selector(".triage-counts li", "e => getComputedStyle(e).listStyleType") == "none"  # no bullets
    assert "Docket staff" in page.text_content("#site-name")
    page.screenshot(path=str(ARTIFACTS / "admin-jobs-1280.png"), full_page=True)
    page.goto(f"/admin/jobs/job/{job.pk}/change/")
    page.wait_for_selector("#content-main")

    response = page.goto("/no-such-page")
    assert response.status == 404
    assert refused(page, console) == []
