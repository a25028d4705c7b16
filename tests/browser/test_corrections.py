"""Alice corrects a value the review read wrong, and confirms one she checked, on a real review in
a real browser, at 1280 px and at 390 px (htmx swapping the page's status in place) and without
script (the forms post, the page comes back at the field): the row, the history, the message to
the supplier, the note, the .json and the CSV all follow; no serious or critical axe-core finding,
nothing scrolling sideways, nothing the Content-Security-Policy refuses."""

from __future__ import annotations

import csv
import json

import pytest

from agent import samples
from tests.web.conftest import review_document

from .audit import audit
from .conftest import off_loop
from .csp import refused, watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")
GOOD_IBAN = "DE89 3704 0044 0532 0130 00"
BAD_IBAN = "DE89 3704 0044 0532 0130 02"  # the sample prints ...01: wrong again, differently


def field_row(page, label: str):
    return page.locator("#fields tr", has=page.locator(f"th:text-is('{label}')"))


def correct(page, label: str, value: str) -> None:
    row = field_row(page, label)
    row.locator("details.correct summary").click()
    row.locator("input[name=value]").fill(value)
    row.locator(".correct-form button[type=submit]").click()


def downloads(page, job_id: int) -> tuple[str, dict, dict[str, str]]:
    """The note, the .json and the list's CSV row of the job, as the page's links download them."""
    with page.expect_download() as note:
        page.click("#download-note")
    with page.expect_download() as result:
        page.click("#download-result")
    page.goto("/jobs")
    with page.expect_download() as export:
        page.click("a:text-is('Export CSV')")
    with open(export.value.path(), encoding="utf-8-sig") as f:
        row = next(r for r in csv.DictReader(f) if r["Job"] == str(job_id))
    return (open(note.value.path(), encoding="utf-8").read(),
            json.loads(open(result.value.path(), encoding="utf-8").read()), row)


@pytest.mark.parametrize("width", [1280, 390])
def test_alice_corrects_the_iban_and_confirms_the_currency(make_member, login, width):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    job = off_loop(review_document, alice, samples.BAD_IBAN_PDF.read_bytes(), "invoice-bad-iban.pdf")
    page = login(*ALICE, start=f"/jobs/{job.pk}", viewport={"width": width, "height": 900})
    console = watch(page)
    page.reload()
    assert page.inner_text("#status-heading").strip() == "Done — 1 to correct"
    iban = field_row(page, "IBAN / bank account")
    review_read = iban.locator(".value-text").inner_text()
    assert "IBAN" in page.inner_text("#supplier-message")

    # Still wrong: the same check as the review's says so, in place (htmx), and the row keeps focus.
    correct(page, "IBAN / bank account", BAD_IBAN)
    page.wait_for_selector("#events li:has-text('IBAN / bank account corrected by you')")
    assert page.evaluate("window.location.pathname") == f"/jobs/{job.pk}"
    assert iban.locator(".badge").inner_text() == "To correct"
    assert page.evaluate("document.activeElement.id") == "field-iban"
    # Right now: OK, with who corrected it and what the review had read.
    correct(page, "IBAN / bank account", GOOD_IBAN)
    page.wait_for_selector("#field-iban .badge-present")
    assert iban.locator(".value-text").inner_text() == GOOD_IBAN
    assert "Corrected by alice" in iban.inner_text() and f"The review read {review_read}" in iban.inner_text()
    assert page.inner_text("#status-heading").strip() == "Done — OK"
    assert page.locator("#supplier-message").count() == 0  # nothing left to ask the supplier

    currency = field_row(page, "Currency")
    currency.locator("button:has-text('Confirm')").click()
    page.wait_for_selector("#field-currency .correction")
    assert "Confirmed by alice" in currency.inner_text()
    history = page.inner_text("#events")
    assert f"IBAN / bank account corrected by you: {GOOD_IBAN} (was {BAD_IBAN}); passes its check" in history
    assert "Currency confirmed by you: EUR" in history

    field_row(page, "Supplier name").locator("details.correct summary").click()  # a form open, for the audit
    audit(page, f"job-corrected-from-{width}")
    assert refused(page, console) == []

    note, result, row = downloads(page, job.pk)
    assert f"- IBAN / bank account: {GOOD_IBAN}" in note and f"the review read {review_read}" in note
    assert "Could you check the IBAN" not in note
    assert result["fields"]["iban"]["value"] == GOOD_IBAN
    assert result["fields"]["iban"]["correction"]["review"]["value"] == review_read
    assert result["fields"]["currency"]["correction"]["confirmed"] is True
    assert (row["Outcome"], row["IBAN / bank account"], row["Issues"]) == ("OK", GOOD_IBAN, "")
    assert f"the review read {review_read}" in row["Corrections"]


def test_without_script_the_forms_post_and_come_back_at_the_field(make_member, login):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    job = off_loop(review_document, alice, samples.BAD_IBAN_PDF.read_bytes(), "invoice-bad-iban.pdf")
    page = login(*ALICE, start=f"/jobs/{job.pk}", java_script_enabled=False)
    correct(page, "IBAN / bank account", GOOD_IBAN)
    page.wait_for_url(f"**/jobs/{job.pk}#field-iban")
    assert field_row(page, "IBAN / bank account").locator(".badge").inner_text() == "OK"
    assert page.inner_text("#status-heading").strip() == "Done — OK"
    field_row(page, "Currency").locator("button:has-text('Confirm')").click()
    page.wait_for_url(f"**/jobs/{job.pk}#field-currency")
    assert "Confirmed by alice" in field_row(page, "Currency").inner_text()
    assert "Currency confirmed by you: EUR" in page.inner_text("#events")
