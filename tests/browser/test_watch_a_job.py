"""Alice submits a document in a real browser and watches a real worker finish it; Bob cannot see it."""

from __future__ import annotations

import re

import pytest

from jobs import kinds, queue
from jobs.clock import system_clock

from .conftest import ARTIFACTS, ROOT, off_loop

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SAMPLES = sorted((ROOT / "agent" / "samples").glob("*.pdf"))
TIMEOUT_MS = 30_000


def submit_through_the_form(page) -> str:
    """Upload a sample PDF for document_review when the agent offers it; else a diagnostic job."""
    if kinds.offered("document_review") and SAMPLES:
        page.select_option("#id_kind", "document_review")
        page.set_input_files("#id_document", str(SAMPLES[0]))
        kind = "document_review"
    else:
        page.select_option("#id_kind", "diagnostic.sleep")
        if not page.is_visible("#id_payload"):
            page.click("details summary")
        page.fill("#id_payload", '{"seconds": 1}')
        kind = "diagnostic.sleep"
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/jobs/\d+$"))
    return kind


def test_alice_watches_her_job_complete_without_reloading_and_bob_gets_a_404(
    make_member, login, start_worker, live_server
):
    off_loop(make_member, "acme", "alice", password="alice-pass-123")
    off_loop(make_member, "globex", "bob", password="bob-pass-123")
    page = login("alice", "alice-pass-123")

    # A refused form comes back in place (htmx swaps the 400), with the reason; no job is made.
    page.select_option("#id_kind", "diagnostic.sleep")
    page.click("details summary")
    page.fill("#id_payload", '{"seconds": "soon"}')
    page.click("#submit-form button[type=submit]")
    assert "payload.seconds" in page.text_content("#form-error")
    assert "The advanced options are not valid" in page.text_content("#error-payload")
    assert page.get_attribute("#id_payload", "aria-invalid") == "true"
    assert page.input_value("#id_payload") == '{"seconds": "soon"}'  # nothing typed is lost
    assert page.url.endswith("/jobs/new")
    page.fill("#id_payload", "")

    kind = submit_through_the_form(page)
    job_url = page.url
    assert page.text_content("#job-state") == "Waiting"  # no worker yet: accepted at once, not run
    page.evaluate("window.__sameDocument = true")

    start_worker()
    page.wait_for_selector("#status[data-state=completed]", timeout=TIMEOUT_MS)
    assert page.evaluate("window.__sameDocument") is True  # htmx swapped the status in; no reload
    assert page.text_content("#job-state") == "Done"
    # Said to screen readers once the swap has settled (the announcer is filled just after it).
    from playwright.sync_api import expect

    # (Playwright's own wait: a predicate polled in the page is an eval, which the Content Security Policy refuses.)
    expect(page.locator("#announcer")).to_have_text(re.compile(r"^Done"), timeout=TIMEOUT_MS)
    timeline = page.text_content("#events")
    assert "Received" in timeline and "Review started" in timeline and "Done" in timeline
    assert "leased" not in timeline and "epoch" not in timeline

    if kind == "document_review":
        assert page.text_content("#draft").strip()
        assert page.is_visible("#fields")
        page.click("details.note summary")
        page.click("button[data-copy='#draft']")
    else:
        assert '"slept"' in page.text_content("#result")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "job-completed.png"), full_page=True)

    bobs_page = login("bob", "bob-pass-123")
    response = bobs_page.goto(job_url)
    assert response.status == 404
    assert "Not found" in bobs_page.text_content("h1")
    api = bobs_page.request.get(job_url, headers={"Accept": "application/json"})
    assert api.status == 404 and api.json()["error"] == "not_found"


def test_the_job_list_updates_its_rows_while_jobs_run(make_member, login, start_worker):
    alice = off_loop(make_member, "acme", "alice", password="alice-pass-123")
    job = off_loop(queue.accept, scope_id=alice.tenant_id, user_id=alice.pk, kind="diagnostic.sleep",
                   payload={"seconds": 0.5}, operation_key="list-test", now=system_clock.now()).job
    page = login("alice", "alice-pass-123")
    page.goto("/jobs")
    row = f"#job-{job.pk} .badge"
    assert page.text_content(row) == "Waiting"
    page.evaluate("window.__sameDocument = true")
    start_worker()
    page.wait_for_selector(f"#job-{job.pk} .state-completed", timeout=TIMEOUT_MS)
    assert page.evaluate("window.__sameDocument") is True


def test_a_failed_poll_is_retried_and_the_page_still_reaches_completed(make_member, login, start_worker):
    """A 503 on a status poll is not swapped; without a retry the page would freeze at queued."""
    alice = off_loop(make_member, "acme", "alice", password="alice-pass-123")
    job = off_loop(queue.accept, scope_id=alice.tenant_id, user_id=alice.pk, kind="diagnostic.sleep",
                   payload={"seconds": 0.2}, operation_key="retry-test", now=system_clock.now()).job
    page = login("alice", "alice-pass-123")
    failed = []

    def unavailable_once(route):
        if failed:
            return route.continue_()
        failed.append(route.request.url)
        route.fulfill(status=503, headers={"Retry-After": "1"}, body="unavailable")

    page.route(re.compile(r".*/jobs/\d+\?poll=\d+$"), unavailable_once)
    with page.expect_response(lambda r: r.status == 503, timeout=TIMEOUT_MS):
        page.goto(f"/jobs/{job.pk}")
    assert page.text_content("#job-state") == "Waiting" and failed
    page.evaluate("window.__sameDocument = true")
    start_worker()
    page.wait_for_selector("#status[data-state=completed]", timeout=TIMEOUT_MS)
    assert page.evaluate("window.__sameDocument") is True


def test_a_submit_the_site_cannot_take_says_so_and_a_second_try_makes_one_job(make_member, login, browser_settings):
    """A 503 on submit is not the form's to swap in; the page says so, and retrying is safe."""
    alice = off_loop(make_member, "acme", "alice", password="alice-pass-123")
    page = login("alice", "alice-pass-123")
    refused = []

    def unavailable_once(route):
        if refused or route.request.method != "POST":
            return route.continue_()
        refused.append(route.request.url)
        route.fulfill(status=503, headers={"Retry-After": "1"}, content_type="application/json",
                      body='{"error": "unavailable", "detail": "the job store is unavailable"}')

    page.route(re.compile(r".*/jobs$"), unavailable_once)
    page.select_option("#id_kind", "diagnostic.sleep")
    page.click("details summary")
    page.fill("#id_payload", '{"seconds": 0.1}')
    page.click("#submit-form button[type=submit]")
    note = page.wait_for_selector("[data-submit-failure]", timeout=TIMEOUT_MS)
    assert "HTTP 503" in note.text_content() and "safe" in note.text_content()
    assert refused and page.url.endswith("/jobs/new")

    page.click("#submit-form button[type=submit]")  # the same form, so the same operation key
    page.wait_for_url(re.compile(r".*/jobs/\d+$"))
    assert off_loop(lambda: list(alice.jobs.values_list("state", flat=True))) == ["queued"]
