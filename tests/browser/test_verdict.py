"""The verdict in a real browser, at 1280 px and 390 px: a Factur-X invoice whose visible page
disagrees with its XML shows each disagreeing field *to check* with both readings and where each
was read; Alice accepts a finding with a reason and the page says by whom and why; *Approve* asks
for the reason while a finding stands, then confirms every field and marks the document handled.
Marking handled and *Approve* in bulk over a document with a finding leave it, name the finding
and ask again; a reason accepts it. No serious or critical axe-core finding, nothing scrolling
sideways (see ``audit``)."""

from __future__ import annotations

import pytest

from jobs.models import Job
from tests.pdfs import factur_x_with_page
from tests.web.conftest import review_document

from .audit import audit
from .conftest import completed_review, off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")
# The XML (tests.pdfs.WITH_IBAN) pays DE88 2008 …, for 571.04 on RE-20190610/507; the page says otherwise.
PAGE = ["Supplier: Bei Spiel GmbH", "VAT ID: DE136695976", "Invoice number: RE-20190610/508",
        "Invoice date: 10 June 2019", "Total due: EUR 671.04", "IBAN: NL91 ABNA 0417 1643 00"]


def field_row(page, label: str):
    return page.locator("#fields tr", has=page.locator(f"th:text-is('{label}')"))


def work_state(job_id: int) -> str:
    from web import status

    return status.work_of([Job.objects.get(pk=job_id)])[job_id].state


def test_a_disagreement_is_to_check_a_finding_is_accepted_and_the_document_approved(make_member, login):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    job = off_loop(review_document, alice, factur_x_with_page(PAGE), "facturx-disagrees.pdf",
                   media_type="application/pdf")

    page = login(*ALICE, start=f"/jobs/{job.pk}")
    # Each field the page and the XML disagree on: to check, with both readings and where each was read.
    for label, xml, printed in (("Invoice number", "RE-20190610/507", "RE-20190610/508"),
                                ("Total amount", "571.04", "671.04"),
                                ("IBAN / bank account", "DE88 2008 0000 0970 3757 00", "NL91 ABNA 0417 1643 00")):
        row = field_row(page, label)
        assert row.locator(".badge").inner_text() == "To check", label
        readings = row.locator("ul.candidates li")
        assert readings.count() == 2, label
        text = row.inner_text()
        assert xml in text and printed in text and "read from the e-invoice" in text and "read from page 1" in text
    assert field_row(page, "VAT / tax id").locator(".badge").inner_text() == "OK"  # the same on both
    assert page.is_visible("#work-standing") and page.inner_text("#work-approve") == "Accept and approve"
    audit(page, "verdict-disagreement")

    # Accepting one finding: its reason and name, and it stands no more.
    iban = page.locator("#findings li.finding", has_text="The IBAN on the visible page")
    iban.locator("details.accept summary").click()
    iban.locator("input[name=reason]").fill("phoned the supplier on the number we know")
    iban.locator("button[type=submit]").click()
    page.wait_for_selector("#findings li.finding-accepted")
    accepted = page.locator("#findings li.finding-accepted")
    assert "Accepted by alice" in accepted.inner_text()
    assert "phoned the supplier on the number we know" in accepted.inner_text()
    assert field_row(page, "IBAN / bank account").locator(".badge").inner_text() == "OK"
    audit(page, "verdict-accepted")

    # Approve, still with findings standing: it asks for a reason; given, every field is confirmed.
    page.locator("#work-approve").click()  # the reason is required: the browser asks for it first
    assert off_loop(work_state, job.pk) != "handled"
    page.fill("#approve-reason", "the XML is what we pay; the page was an old draft")
    page.locator("#work-approve").click()
    page.wait_for_selector("#work-message")
    assert page.inner_text("#work-message").startswith("Approved")
    assert page.inner_text("#work-state-words") == "Handled"
    assert not page.is_visible("#work-approve") and not page.is_visible("#work-handled")
    assert field_row(page, "Total amount").locator(".badge").inner_text() == "OK"
    assert "Confirmed by alice" in field_row(page, "Total amount").inner_text()
    assert off_loop(work_state, job.pk) == "handled"
    audit(page, "verdict-approved")


def test_alice_unticks_a_request_before_copying_the_message(make_member, login):
    from tests.browser.test_work import reviewed

    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    job = off_loop(reviewed, alice, "two-asks.txt")
    message = ["Regarding your invoice: before we can process it, we need your help with the following.",
               "- Could you confirm the IBAN of the account we should pay into?",
               "- Could you confirm your VAT id?", "Thank you."]

    def with_two_asks():
        Job.objects.filter(pk=job.pk).update(result={**Job.objects.get(pk=job.pk).result, "draft": "Review\n\n"
                                             "To ask the supplier (ready to paste into your email):\n"
                                             + "\n".join(message)})

    off_loop(with_two_asks)
    page = login(*ALICE, start=f"/jobs/{job.pk}")
    boxes = page.locator("[data-message-lines] input[type=checkbox]")
    assert boxes.count() == 2 and page.is_visible("[data-message-lines]")
    page.locator("label", has_text="Could you confirm your VAT id?").click()
    assert page.inner_text("#supplier-message") == "\n".join(message[:2] + message[3:])
    audit(page, "verdict-message-lines")


def completed(user, name: str, result: dict) -> Job:
    """A review of ``name`` completed with ``result``, as a worker completes one."""
    return completed_review(user, name, result, key=f"verdict-{name}")


def accepted_reasons(job_id: int) -> list[str]:
    from agent.models import FindingAcceptance

    return list(FindingAcceptance.objects.filter(job_id=job_id).values_list("reason", flat=True))


def test_bulk_handled_and_bulk_approve_ask_again_naming_the_finding(make_member, login):
    from agent.reading import findings
    from tests.web.conftest import review_result

    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    changed = findings.make("bank_details_changed", "bank details changed: the IBAN GB82 WEST 1234 5698 7654 32 is "
                            "one this supplier has never been paid on", field="iban")
    flagged, clean, to_approve = (
        off_loop(completed, alice, "flagged.txt", {**review_result(), "findings": [changed]}),
        off_loop(completed, alice, "clean.txt", review_result()),
        off_loop(completed, alice, "approve-me.txt", {**review_result(), "findings": [changed]}))

    # Marking two handled: the clean one is, the flagged one is held and its finding named.
    page = login(*ALICE, start="/jobs")
    page.click(f"#job-{flagged.pk} .select-row")
    page.click(f"#job-{clean.pk} .select-row")
    page.click("#bulk-handled")
    page.wait_for_selector("#held-findings")
    assert page.inner_text("#bulk-done") == "1 document marked handled."
    held = page.inner_text(f"#held-{flagged.pk}")
    assert "flagged.txt" in held and "Bank details changed: the IBAN GB82 WEST 1234 5698 7654 32" in held
    assert (off_loop(work_state, flagged.pk), off_loop(work_state, clean.pk)) == ("todo", "handled")
    audit(page, "bulk-handled-asked")
    page.locator("#accept-and-go").click()  # the reason is required: the browser asks for it first
    assert off_loop(work_state, flagged.pk) == "todo"
    page.fill("#accept-reason", "phoned the supplier on the number we know")
    page.locator("#accept-and-go").click()
    page.wait_for_selector("#work-message")
    assert page.inner_text("#work-message") == "1 document marked handled."
    assert off_loop(work_state, flagged.pk) == "handled"
    assert off_loop(accepted_reasons, flagged.pk) == ["phoned the supplier on the number we know"]

    # Approve in bulk: asked again the same way, naming the finding; the reason approves it.
    page.click(f"#job-{to_approve.pk} .select-row")
    page.click("#bulk-approve")
    page.wait_for_selector("#held-findings")
    assert "not approved" in page.inner_text("#confirm-what")
    assert "Bank details changed" in page.inner_text(f"#held-{to_approve.pk}")
    assert page.inner_text("#accept-and-go") == "Accept and approve"
    assert off_loop(work_state, to_approve.pk) == "todo"
    audit(page, "bulk-approve-asked")
    page.fill("#accept-reason", "the new account is on the supplier's letter we hold")
    page.locator("#accept-and-go").click()
    page.wait_for_selector("#work-message")
    assert page.inner_text("#work-message") == "1 document approved."
    assert off_loop(work_state, to_approve.pk) == "handled"
    assert off_loop(accepted_reasons, to_approve.pk) == ["the new account is on the supplier's letter we hold"]
