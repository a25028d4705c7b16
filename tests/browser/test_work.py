"""A document's work state in a real browser, at 1280 px and 390 px: marking the selected rows handled
makes "Needs my action" go down; assigning one to a teammate takes it off her count too; the job page
marks one sent to the supplier and shows the change in its history. The new controls are at least 44
px at 390 px, and no page has a serious or critical axe-core finding (see ``audit``)."""

from __future__ import annotations

import pytest

from documents import acceptance
from documents.store import Upload
from jobs import kinds, queue
from jobs.clock import system_clock
from jobs.models import Job
from tests.web.conftest import review_result

from .audit import audit
from .conftest import completed_review, off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")
TAP = 44


def reviewed(user, name: str) -> Job:
    """A review of ``name`` completed with an IBAN to correct (it needs action), as a worker completes one."""
    result = review_result(iban_status="malformed")
    return completed_review(user, name, result, key=f"work-{name}")


def needing(page) -> int:
    return int(page.inner_text("#needs-action-filter .count"))


def tall_enough(page, selectors: list[str]) -> None:
    """At 390 px, each control is a tap target of at least 44 x 44 px (buttons: 44 px high)."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(150)
    for selector in selectors:
        box = page.locator(selector).first.bounding_box()
        assert box and box["height"] >= TAP and box["width"] >= TAP, (selector, box)
        assert box["x"] + box["width"] <= 390, (selector, box)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_marking_handled_and_assigning_take_documents_off_needs_my_action(make_member, login):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    off_loop(make_member, "acme", "carol")
    jobs = [off_loop(reviewed, alice, f"invoice-{n}.txt") for n in range(4)]

    page = login(*ALICE, start="/jobs")
    assert needing(page) == 4
    # Two rows selected (by their labels, as a finger would), marked handled: the count goes down.
    # The bulk bar shows once a row is selected.
    assert page.is_hidden("#bulk")
    page.click(f"#job-{jobs[0].pk} .select-row")
    tall_enough(page, [f"#job-{jobs[0].pk} .select-row", "#bulk-handled", "#bulk-assignee", "#bulk-assign",
                       "#bulk-export"])
    audit(page, "list-work")
    page.click(f"#job-{jobs[1].pk} .select-row")
    assert page.is_checked(f"#select-{jobs[0].pk}")
    page.click("#bulk-handled")
    page.wait_for_selector("#work-message")
    assert page.inner_text("#work-message") == "2 documents marked handled."
    assert needing(page) == 2
    assert page.inner_text(f"#job-{jobs[0].pk} .col-work").strip() == "Handled"

    # One assigned to carol: off alice's count, and the row says whose it is.
    page.click(f"#job-{jobs[2].pk} .select-row")
    page.select_option("#bulk-assignee", label="carol")
    page.click("#bulk-assign")
    page.wait_for_selector("#work-message")
    assert needing(page) == 1
    assert " ".join(page.inner_text(f"#job-{jobs[2].pk} .col-work").split()) == "To do · carol"

    # The last one from its page: sent to the supplier, then in its history; off the count too.
    page.goto(f"/jobs/{jobs[3].pk}")
    assert page.inner_text("#work-state-words") == "To do"
    tall_enough(page, ["#work-sent", "#work-handled", "#work-state", "#work-assignee", "#work-note", "#work-save"])
    audit(page, "job-work")
    page.click("#work-sent")
    page.wait_for_selector("#work-message")
    assert page.inner_text("#work-state-words") == "Waiting for the supplier"
    assert "alice: To do → Waiting for the supplier" in page.inner_text("#events")
    page.fill("#work-note", "asked by email")
    page.select_option("#work-assignee", label="me (alice)")
    page.click("#work-save")
    page.wait_for_selector("#work-message")
    assert "Note: asked by email" in page.inner_text("#work-now")
    assert "alice: assigned to alice; note: “asked by email”" in page.inner_text("#events")
    audit(page, "job-work-saved")

    page.goto("/jobs")
    assert needing(page) == 0


def finish(job: Job) -> None:
    """A worker's finish of ``job``: a review whose every field passes."""
    now = system_clock.now()
    claim = queue.claim(now=now, worker="browser-test")
    assert claim is not None and claim.job_id == job.pk
    result = review_result()
    assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=system_clock.now(),
                          summary=kinds.get("document_review").summarize(result))


def test_the_work_panel_follows_a_review_that_finishes_while_the_page_is_open(make_member, login):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    job = off_loop(lambda: acceptance.accept(
        scope_id=alice.tenant_id, user_id=alice.pk, kind="document_review", payload={}, operation_key="live-1",
        now=system_clock.now(), document=Upload(b"Invoice live", "live.txt", "text/plain")).job)
    page = login(*ALICE, start=f"/jobs/{job.pk}")
    # Waiting: nothing to approve, send or mark handled yet, and the panel says so.
    assert page.inner_text("#work-state-words") == "Not reviewed yet" and page.is_visible("#work-wait")
    assert page.locator("#work-approve, #work-handled, #work-state option[value=waiting]").count() == 0
    page.evaluate("window.__sameDocument = true")
    off_loop(finish, job)
    page.wait_for_selector("#status[data-state=completed]", timeout=30_000)
    # The poll that brought the result brought the panel along: its actions now fit the finished review.
    page.wait_for_selector("#work-approve")
    assert page.evaluate("window.__sameDocument") is True
    assert page.is_hidden("#work-wait") and page.inner_text("#work-state-words") == "No action needed"
    assert page.locator("#work-state option[value=handled]").count() == 1
