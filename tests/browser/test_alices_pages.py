"""Alice's day in a real browser: her list, a batch of the sample invoices, their outcomes, the job
page at each state, a failed job submitted again, the CSV export; every page at 1280 px and 390 px
with no sideways scrolling and no serious or critical axe-core finding (see ``audit``)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from agent import samples
from agent.models import Checkpoint
from agent.reading import ocr
from documents import acceptance
from documents.store import Upload
from jobs import kinds, queue
from jobs.clock import system_clock
from jobs.models import Job
from jobs.writelock import write_transaction
from tests.web.conftest import review_result

from .audit import audit
from .conftest import off_loop
from .csp import refused, watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TIMEOUT_MS = 60_000
SAMPLE_FILES = [samples.CLEAN_PDF, samples.MISSING_FIELDS_PDF, samples.BAD_IBAN_PDF, samples.SCANNED_PDF,
                samples.PLAIN_TEXT, samples.DOCX, samples.TOO_MANY_PAGES_PDF]
ALICE = ("alice", "alice-pass-123")
# The scanned sample is read by OCR where Tesseract is installed (all its fields found), and
# is unreadable where it is not. The samples are one invoice (its supplier and number) with a
# defect each: every one read after the clean one is also its possible duplicate, to check.
SCANNED_READ = ocr.available() is None
SCANNED_OUTCOME = "1 to check" if SCANNED_READ else "unreadable"


def row_of(page, name: str):
    return page.locator("tr", has=page.locator(f"th.col-document a:text-is('{name}')"))


def outcome_of(page, name: str) -> str:
    return row_of(page, name).locator(".outcome").inner_text()


def job_count() -> int:
    return off_loop(Job.objects.count)


@pytest.mark.slow
def test_alice_lands_on_her_list_reviews_the_samples_as_a_batch_and_finds_what_needs_her(
        make_member, new_context, start_worker, tmp_path):
    off_loop(make_member, "acme", *ALICE[:1], password=ALICE[1])
    page = new_context(permissions=["clipboard-read", "clipboard-write"]).new_page()
    console = watch(page)  # and nothing the Content-Security-Policy refuses, on any of these pages

    logs_in_to_her_empty_list(page)
    a_refused_file_comes_back_named_and_still_chosen(page)
    key, batch_url = sends_the_samples_as_one_batch(page)
    the_batch_page_follows_the_worker(page, start_worker)
    the_batch_exports_as_csv(page)
    the_same_batch_again_makes_no_new_job(page, key, batch_url)
    her_list_shows_what_needs_her(page)
    the_job_pages_read_as_done(page)
    assert refused(page, console) == []


def logs_in_to_her_empty_list(page):
    # Landing: the site's home asks her to log in, then shows her list.
    page.goto("/")
    assert page.url.endswith("/accounts/login/?next=/jobs")
    audit(page, "login")
    page.fill("#id_username", ALICE[0])
    page.fill("#id_password", ALICE[1])
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs")
    assert page.text_content("h1") == "My documents" and "No documents yet." in page.text_content("#rows")
    audit(page, "list-empty")


def a_refused_file_comes_back_named_and_still_chosen(page):
    # A form whose only file is refused comes back with the reason next to the field, the file still chosen.
    page.click("text=Review documents >> nth=0")
    page.wait_for_url("**/jobs/new")
    page.set_input_files("#id_document", str(samples.TOO_MANY_PAGES_PDF))
    page.click("#submit-form button[type=submit]")
    page.wait_for_selector("#error-document")
    assert page.text_content("#error-document").strip() == (
        "invoice-too-many-pages.pdf: The document has 25 pages; at most 20 are accepted.")
    assert page.get_attribute("#id_document", "aria-invalid") == "true"
    assert page.eval_on_selector("#id_document", "e => [...e.files].map(f => f.name)") == ["invoice-too-many-pages.pdf"]
    assert job_count() == 0
    audit(page, "submit-with-errors")


def sends_the_samples_as_one_batch(page):
    # All the samples at once: one job each; the refused one is named while the others go through.
    page.set_input_files("#id_document", [str(p) for p in SAMPLE_FILES])
    key = page.get_attribute("input[name=idempotency_key]", "value")
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/batches/b[0-9a-f]+$"))
    batch_url = page.url
    assert "invoice-too-many-pages.pdf: The document has 25 pages; at most 20 are accepted." in page.text_content(
        "#refused")
    assert page.locator("#batch-rows tr").count() == 6 and job_count() == 6
    assert page.text_content("#batch-summary").strip() == "0 of 6 done"
    return key, batch_url


def the_batch_page_follows_the_worker(page, start_worker):
    # The batch page follows the worker without reloading.
    page.evaluate("window.__sameDocument = true")
    start_worker()
    page.wait_for_selector("#progress[data-done='6']", timeout=TIMEOUT_MS)  # no wait_for_function: the CSP has no eval
    assert page.text_content("#batch-summary").startswith("Finished: ")  # every one done: no "6 of 6", no bar
    assert page.locator("#progress progress").count() == 0 and page.locator("#cancel-batch").count() == 0
    assert page.evaluate("window.__sameDocument") is True
    assert outcome_of(page, "invoice-clean.pdf") == "OK"
    assert outcome_of(page, "invoice-bad-iban.pdf") == "1 to correct, 1 to check"
    assert outcome_of(page, "invoice-scanned.pdf") == SCANNED_OUTCOME
    assert outcome_of(page, "invoice-missing-fields.pdf") == "1 to check, 3 not found"
    audit(page, "batch")


def the_batch_exports_as_csv(page):
    # The batch as CSV: one row per document, each field's value and status.
    with page.expect_download() as download:
        page.click("#export-batch")
    with open(download.value.path(), encoding="utf-8-sig") as f:
        rows = {row["Document"]: row for row in csv.DictReader(f)}
    assert set(rows) == {p.name for p in SAMPLE_FILES[:-1]}
    assert rows["invoice-clean.pdf"]["Outcome"] == "OK"
    assert rows["invoice-bad-iban.pdf"]["Issues"].startswith("IBAN / bank account: to correct")
    assert rows["invoice-scanned.pdf"]["Outcome"] == SCANNED_OUTCOME
    assert rows["invoice-clean.pdf"]["Issues"] == "" and rows["invoice-clean.pdf"]["Supplier name"]


def the_same_batch_again_makes_no_new_job(page, key, batch_url):
    # Sending the same batch again (Back, the same form and files) makes no new job.
    page.go_back()
    page.wait_for_url("**/jobs/new")
    page.evaluate("key => document.querySelector('input[name=idempotency_key]').value = key", key)
    page.set_input_files("#id_document", [str(p) for p in SAMPLE_FILES])
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(batch_url)
    assert job_count() == 6


def her_list_shows_what_needs_her(page):
    # Her list: outcomes in words; "needs my action" shows exactly the ones to act on.
    page.goto("/jobs")
    assert outcome_of(page, "invoice-clean.pdf") == "OK" and outcome_of(page, "invoice-scanned.pdf") == SCANNED_OUTCOME
    audit(page, "list")
    page.click("#needs-action-filter")
    page.wait_for_url("**/jobs?needs_action=1")
    shown = set(page.locator("#rows th.col-document a").all_inner_texts())
    assert shown == {"invoice-bad-iban.pdf", "invoice-missing-fields.pdf", "invoice-scanned.pdf"}
    audit(page, "list-needs-action")


def the_job_pages_read_as_done(page):
    # The job pages of a clean, a wrong and an unreadable invoice.
    for name, state in [("invoice-clean.pdf", "Done — OK"), ("invoice-bad-iban.pdf", "Done — 1 to correct, 1 to check"),
                        ("invoice-scanned.pdf", f"Done — {SCANNED_OUTCOME}")]:
        page.goto("/jobs?q=" + name)
        page.click(f"#rows a:text-is('{name}')")
        page.wait_for_url(re.compile(r".*/jobs/\d+$"))
        assert page.inner_text("#status-heading").strip() == state
        audit(page, "job-done-" + name.removeprefix("invoice-").removesuffix(".pdf"))
        if name == "invoice-bad-iban.pdf":
            assert page.inner_text("#fields").count("To correct") == 1
            page.click("text=Copy message to supplier")
            page.wait_for_selector("[data-copied]:visible")
            copied = page.evaluate("navigator.clipboard.readText()")
            assert copied == page.inner_text("#supplier-message") and "Review of" not in copied
            with page.expect_download() as note:
                page.click("#download-note")
            assert "To ask the supplier" in Path(note.value.path()).read_text(encoding="utf-8")


def accept_document(alice, name: str = "invoice-clean.pdf", path=samples.CLEAN_PDF, **kwargs):
    return acceptance.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="document_review", payload={},
                             operation_key=f"browser-{name}-{kwargs.get('now', '')}",
                             now=kwargs.pop("now", system_clock.now()),
                             document=Upload(path.read_bytes(), name, "application/pdf"), **kwargs).job


def test_the_job_page_speaks_alices_words_while_waiting_reviewing_and_done(make_member, login):
    alice = off_loop(make_member, "acme", *ALICE[:1], password=ALICE[1])
    job = off_loop(accept_document, alice)
    page = login(*ALICE, start=f"/jobs/{job.pk}")
    assert page.inner_text("#status-heading").strip() == "Waiting — in line for review"
    audit(page, "job-waiting")
    page.evaluate("window.__sameDocument = true")

    def start_reviewing():
        # Claimed with its first step done in one commit: a poll in between would show step 1.
        with write_transaction():
            claim = queue.claim(now=system_clock.now(), worker="browser-test")
            Checkpoint.objects.create(job_id=claim.job_id, step_index=1, next_step="validate",
                                      updated_at=system_clock.now())
        return claim

    claim = off_loop(start_reviewing)
    page.wait_for_selector("#status[data-state=leased]", timeout=TIMEOUT_MS)
    assert page.inner_text("#status-heading").strip() == "Reviewing — validating, step 2 of 3"
    audit(page, "job-reviewing")

    result = review_result(iban_status="malformed")
    summary = kinds.get("document_review").summarize(result)
    assert off_loop(queue.complete, job_id=job.pk, epoch=claim.epoch, result=result, now=system_clock.now(),
                    summary=summary)
    page.wait_for_selector("#status[data-state=completed]", timeout=TIMEOUT_MS)
    assert page.inner_text("#status-heading").strip() == "Done — 1 to correct"
    assert page.evaluate("window.__sameDocument") is True
    assert "Review started" in page.inner_text("#events")


def test_a_failed_job_says_why_and_submit_again_makes_a_new_job(make_member, login):
    alice = off_loop(make_member, "acme", *ALICE[:1], password=ALICE[1])

    def failed(name: str, error: str, code: str, *, unknown: bool = False) -> Job:
        job = accept_document(alice, name)
        claim = queue.claim(now=system_clock.now(), worker="browser-test")
        if unknown:
            queue.mark_external_start(job_id=job.pk, epoch=claim.epoch, now=system_clock.now())
        queue.fail(job_id=job.pk, epoch=claim.epoch, error=error, code=code, now=system_clock.now(), retryable=False)
        return job

    dead = off_loop(failed, "damaged.pdf", "damaged_document: the PDF is damaged and cannot be read",
                    "damaged_document")
    unknown = off_loop(failed, "checking.pdf", "TimeoutError: the planner did not answer", "handler_error",
                       unknown=True)

    page = login(*ALICE, start=f"/jobs/{unknown.pk}")
    assert page.inner_text("#status-heading").startswith("Needs checking — staff are confirming whether")
    audit(page, "job-unknown")

    page.goto(f"/jobs/{dead.pk}")
    assert page.inner_text("#status-heading").strip() == "Failed"
    assert page.inner_text("#failure-reason") == (
        "Why: The document could not be read. The PDF is damaged and cannot be read.")
    audit(page, "job-dead")
    page.click("#submit-again")
    page.wait_for_url(re.compile(r".*/jobs/\d+$"))
    again = int(page.url.rsplit("/", 1)[1])
    assert again not in (dead.pk, unknown.pk)
    assert page.inner_text("#status-heading").strip() == "Waiting — in line for review"
    assert page.inner_text("h1") == "damaged.pdf"
    stored, sent = off_loop(lambda: [Job.objects.select_related("document").get(pk=pk) for pk in (again, dead.pk)])
    assert stored.document.sha256 == sent.document.sha256 and stored.operation_key != dead.operation_key


def test_files_dropped_on_the_form_are_listed_flagged_and_removable(make_member, login):
    off_loop(make_member, "acme", *ALICE[:1], password=ALICE[1])
    page = login(*ALICE)
    page.evaluate("""() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(["Supplier: ACME"], "a.txt", {type: "text/plain"}));
      transfer.items.add(new File([new Uint8Array(6 * 1024 * 1024)], "scan.pdf", {type: "application/pdf"}));
      transfer.items.add(new File(["x"], "sheet.xlsx"));
      const zone = document.querySelector("[data-dropzone]");
      zone.dispatchEvent(new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true}));
    }""")
    items = page.locator("[data-chosen] li")
    assert items.count() == 3 and page.eval_on_selector("#id_document", "e => e.files.length") == 3
    assert "This file is 6 MB; the limit is 5 MB per file." in items.nth(1).inner_text()
    assert "not a PDF, a Word document (.docx), a text file or an e-invoice (XML)" in items.nth(2).inner_text()
    page.click("button[aria-label='Remove sheet.xlsx']")
    assert page.eval_on_selector("#id_document", "e => [...e.files].map(f => f.name)") == ["a.txt", "scan.pdf"]

    # Sent: the oversized file is refused by name, the other goes through.
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/batches/b[0-9a-f]+$"))
    assert "scan.pdf: This file is 6 MB; the limit is 5 MB per file." in page.inner_text("#refused")
    assert page.locator("#batch-rows tr").count() == 1


def test_the_error_pages_and_the_lockout_are_the_products_own(make_member, new_context, login, settings):
    from django.conf import settings as django_settings

    off_loop(make_member, "acme", *ALICE[:1], password=ALICE[1])
    page = login(*ALICE, start="/jobs")
    response = page.goto("/jobs/999999")
    assert response.status == 404 and page.inner_text("h1") == "Not found"
    audit(page, "404")

    settings.ROOT_URLCONF = "tests.browser.urls"  # adds /__500, which renders the product's 500 page
    response = page.goto("/__500")
    assert response.status == 500 and page.inner_text("h1") == "Something went wrong"
    assert page.eval_on_selector(".error-page .button", "e => getComputedStyle(e).display") == "inline-flex"
    audit(page, "500")

    response = page.goto("/jobs?state=bogus")
    assert response.status == 200 and "was not understood" in page.inner_text("main")

    stranger = new_context().new_page()
    for _ in range(django_settings.AXES_FAILURE_LIMIT):
        stranger.goto("/accounts/login/")
        stranger.fill("#id_username", "mallory")
        stranger.fill("#id_password", "wrong-password")
        stranger.click("button[type=submit]")
    assert "Too many failed log-ins" in stranger.inner_text("#locked-out")
    audit(stranger, "login-locked-out")
