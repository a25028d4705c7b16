"""Cancel asks first, with and without script; a provider outage asks nothing of her and offers no
Submit again; the controls are at least 44 px tall at 390 px, and a batch's card is one link there.
At 1280 px and 390 px with no sideways scrolling and no serious or critical axe-core finding."""

from __future__ import annotations

import pytest

from documents import acceptance
from documents.store import Upload
from jobs import queue
from jobs.clock import system_clock
from jobs.models import Job

from .audit import audit
from .conftest import off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")
TAP = 44


def waiting(user, name: str, batch: str = "") -> Job:
    """A document that waits (no worker runs in these tests)."""
    return acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                             operation_key=f"controls-{name}", now=system_clock.now(), batch=batch,
                             document=Upload(b"Supplier: ACME GmbH\nInvoice number: 7", name, "text/plain")).job


def provider_outage(user) -> Job:
    """A review whose model provider answered 502: our side's failure (agent.presentation.FAILURES)."""
    job = waiting(user, "outage.txt")
    claim = queue.claim(now=system_clock.now(), worker="browser-test")
    assert claim is not None and claim.job_id == job.pk
    assert queue.fail(job_id=job.pk, epoch=claim.epoch, error="model_error: model provider call failed: HTTP 502",
                      code="model_error", now=system_clock.now(), retryable=False)
    return job


def state(job: Job) -> str:
    return off_loop(lambda: Job.objects.get(pk=job.pk).state)


def tall_enough(page, selector: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    box = page.locator(selector).bounding_box()
    assert box and box["height"] >= TAP and box["width"] >= TAP, (selector, box)


def test_cancel_asks_first_and_keep_it_keeps_it(make_member, login):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    job = off_loop(waiting, alice, "invoice-7.txt")
    page = login(*ALICE, start=f"/jobs/{job.pk}")
    tall_enough(page, "#cancel-job")

    page.click("#cancel-job")
    page.wait_for_url(f"**/jobs/{job.pk}/cancel")
    assert page.inner_text("h1") == "Cancel the review of invoice-7.txt?"
    tall_enough(page, "#confirm-cancel")
    tall_enough(page, "#keep")
    audit(page, "cancel-confirm")
    page.click("#keep")
    page.wait_for_url(f"**/jobs/{job.pk}")
    assert state(job) == "queued"

    page.click("#cancel-job")
    page.click("#confirm-cancel")
    page.wait_for_url(f"**/jobs/{job.pk}")
    assert page.inner_text("#job-state") == "Cancelled" and state(job) == "cancelled"
    assert page.locator("#cancel-job").count() == 0


def test_cancel_the_unfinished_asks_first_without_script(make_member, login):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    jobs = [off_loop(waiting, alice, f"batch-{n}.txt", "b-controls") for n in range(2)]
    page = login(*ALICE, start="/batches/b-controls", java_script_enabled=False)
    tall_enough(page, "#cancel-batch")
    # A card is one link on a phone: a tap on its date opens the document.
    cell = page.locator(f"#job-{jobs[0].pk} td[data-label=Submitted]").bounding_box()
    assert cell
    page.mouse.click(cell["x"] + cell["width"] - 10, cell["y"] + cell["height"] / 2)
    page.wait_for_url(f"**/jobs/{jobs[0].pk}")
    page.goto("/batches/b-controls")

    page.click("#cancel-batch")
    page.wait_for_url("**/batches/b-controls/cancel")
    assert [state(job) for job in jobs] == ["queued", "queued"]
    page.click("#confirm-cancel")
    page.wait_for_url("**/batches/b-controls")

    assert [state(job) for job in jobs] == ["cancelled", "cancelled"]
    assert page.inner_text("#batch-summary") == "Finished: 2 cancelled"
    assert page.locator("#cancel-batch").count() == 0 and page.locator("progress").count() == 0


def test_a_provider_outage_asks_nothing_of_her_and_offers_no_submit_again(make_member, login):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    job = off_loop(provider_outage, alice)
    page = login(*ALICE, start=f"/jobs/{job.pk}")

    assert page.inner_text("#job-state") == "Failed"
    assert page.inner_text("#failure-reason") == "Why: Our review service had a problem."
    assert "staff have been told and will run it again" in page.inner_text("#status")
    assert page.locator("#submit-again").count() == 0 and "HTTP 502" not in page.content()
    audit(page, "job-provider-outage")
