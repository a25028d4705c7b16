"""The job page in Alice's words at every state, its timeline, Submit again, and the downloads."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from agent.models import Checkpoint
from documents import acceptance
from documents.store import Upload
from jobs import queue
from jobs.models import Job
from tests.conftest import drive_to

from .conftest import evidenced_review_result, review_result
from .responses import HTMX

QUEUE_WORDS = ("leased", "epoch", "external start", "attempts", "marker")


def status_line(html: str) -> str:
    line = re.search(r'<h2 id="status-heading" class="status-line" data-announce>(.*?)</h2>', html, re.S).group(1)
    return re.sub(r"<[^>]+>", "", line).strip()


def words(html: str) -> str:
    """What a reader sees: the text, without tags and attributes."""
    return re.sub(r"<[^>]+>", " ", html)


def page(client, job) -> str:
    return client.get(f"/jobs/{job.pk}").content.decode()


@pytest.fixture
def document_job(alice, clock):
    """A document_review job for an uploaded text document, accepted a little in the past."""

    def make(*, now=None):
        return acceptance.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="document_review", payload={},
                                 operation_key=f"doc-{clock.now().timestamp()}-{Job.objects.count()}",
                                 now=now or clock.now() - timedelta(seconds=5),
                                 document=Upload(b"Supplier: ACME GmbH\nInvoice number: 7", "acme-7.txt",
                                                 "text/plain")).job

    return make


def test_waiting_then_reviewing_with_the_step_from_the_checkpoint(browser_client, alice, document_job, clock):
    client = browser_client(alice)
    job = document_job()
    assert status_line(page(client, job)) == "Waiting — in line for review"
    drive_to(job, "leased", now=clock.now())
    assert status_line(page(client, job)) == "Reviewing — reading the document, step 1 of 3"
    Checkpoint.objects.create(job=job, step_index=1, next_step="validate", updated_at=clock.now())
    html = page(client, job)
    assert status_line(html) == "Reviewing — validating, step 2 of 3"
    assert not [word for word in QUEUE_WORDS if word in words(html[html.index('<section id="status"'):])]


def test_waiting_again_after_an_interrupted_try(browser_client, alice, accept, clock):
    job = drive_to(accept(), "leased", now=clock.now())
    assert queue.fail(job_id=job.pk, epoch=job.epoch, error="ConnectionError: reset", code="handler_error",
                      now=clock.now()).state == "queued"
    html = page(browser_client(alice), job)
    assert status_line(html) == "Waiting — trying again shortly: the last try was interrupted"
    assert "Interrupted: it will be tried again shortly" in html


def test_done_says_the_outcome_and_stops_asking(browser_client, alice, reviewed):
    job = reviewed(review_result(iban_status="malformed"))
    html = browser_client(alice).get(f"/jobs/{job.pk}?poll=4", headers=HTMX).content.decode()
    assert status_line(html) == "Done — 1 to correct" and 'status-card tone-attention' in html
    assert "hx-get" not in html
    timeline = re.sub(r"<[^>]+>", " ", html.split('id="events"')[1])
    steps = ["Received", "Review started", "Done"]
    assert [w for w in steps if w in timeline] == steps
    assert not [word for word in QUEUE_WORDS if word in words(html)]


# A kind that says nothing of its work (webtest.echo) is told in generic words; a review in its own.
SERVICE_WHY = "Our service had a problem."
REVIEW_SERVICE_WHY = "Our review service had a problem."
SERVICE_ADVICE = "You need not do anything: staff have been told and will run it again"


@pytest.mark.parametrize("error, code, why, advice, again", [
    ("damaged_document: the DOCX is damaged and cannot be read; submit a new copy", "damaged_document",
     "The document could not be read. The DOCX is damaged and cannot be read; submit a new copy.",
     "Submit a readable copy", True),
    ("time_limit: the document is too complex to read within 20 s", "time_limit",
     "The document is longer or more complex than the service can read. The document is too complex to read "
     "within 20 s.", "Send it in parts (one invoice per file), or a simpler copy", True),
    ("deadline: the job ran out of time", "deadline", "The run ran out of time.", "Submit it again", True),
    ("ConnectionError: connection reset", "handler_error", SERVICE_WHY, SERVICE_ADVICE, False),
    ("handler_crashed: the handler's process died (SIGSEGV)", "handler_crashed", SERVICE_WHY, SERVICE_ADVICE, False),
    ("tool_not_allowed: proposal rejected at step 2", "tool_not_allowed",
     "The run stopped at one of its safety checks.", "Submit it again", True),
])
def test_a_failed_job_says_why_and_what_to_do_and_keeps_asking_slowly(browser_client, alice, accept, clock, error,
                                                                       code, why, advice, again):
    job = drive_to(accept(), "leased", now=clock.now())
    queue.fail(job_id=job.pk, epoch=job.epoch, error=error, code=code, now=clock.now(), retryable=False)
    html = browser_client(alice).get(f"/jobs/{job.pk}?poll=1", headers=HTMX).content.decode()
    assert status_line(html) == "Failed"
    assert failure_reason(html) == f"Why: {why}"
    assert f"<strong>What to do:</strong> {advice}" in html
    assert 'hx-trigger="load delay:30s, poll-retry"' in html  # a staff retry shows without a reload
    assert ('id="submit-again"' in html) is again and code + ":" not in html


def failure_reason(html: str) -> str:
    return re.sub(r"<[^>]+>", "", re.search(r'<p id="failure-reason">(.*?)</p>', html, re.S).group(1))


def test_the_reason_is_chosen_by_the_code_not_the_words(browser_client, alice, accept, clock):
    """The same words under different codes read differently; reworded, under one code, the same."""
    client = browser_client(alice)
    pages = {}
    for name, error, code in [("deadline words, service code", "deadline passed", "handler_crashed"),
                              ("spent words, document code", "lease expired; attempts spent: x", "memory_limit"),
                              ("reworded deadline", "Frist verstrichen", "deadline_passed")]:
        job = drive_to(accept(now=clock.now() - timedelta(seconds=len(pages) + 1)), "leased", now=clock.now())
        queue.fail(job_id=job.pk, epoch=job.epoch, error=error, code=code, now=clock.now(), retryable=False)
        pages[name] = failure_reason(page(client, job))
    assert pages["deadline words, service code"] == f"Why: {SERVICE_WHY}"
    assert pages["spent words, document code"].startswith("Why: The document is longer or more complex than")
    assert pages["reworded deadline"] == "Why: The run ran out of time."


def test_a_provider_failure_asks_nothing_of_her_and_offers_no_submit_again(browser_client, alice, document_job,
                                                                          clock):
    """The review's own provider codes (agent.presentation.FAILURES) are our side's problem."""
    job = drive_to(document_job(), "leased", now=clock.now())
    queue.fail(job_id=job.pk, epoch=job.epoch, error="model_error: model provider call failed: HTTP 502",
               code="model_error", now=clock.now(), retryable=False)
    html = page(browser_client(alice), job)
    assert failure_reason(html) == f"Why: {REVIEW_SERVICE_WHY}"
    assert f"<strong>What to do:</strong> {SERVICE_ADVICE}" in html
    assert 'id="submit-again"' not in html and "Submit again" not in html and "HTTP 502" not in html


def test_a_job_staff_discarded_says_so_and_offers_submit_again(browser_client, alice, accept, clock):
    job = drive_to(accept(), "unknown", now=clock.now())
    assert queue.resolve(job_id=job.pk, expected_state="unknown", expected_epoch=job.epoch, to_state="dead",
                         actor="staff:ops", reason="provider has no record", now=clock.now())
    html = page(browser_client(alice), job)
    assert failure_reason(html) == "Why: Staff closed it: the service could not finish it."
    assert "<strong>What to do:</strong> Submit it again." in html and 'id="submit-again"' in html
    assert "provider has no record" not in html


def test_needs_checking_says_staff_are_confirming(browser_client, alice, accept, clock):
    job = drive_to(accept(), "unknown", now=clock.now())
    html = browser_client(alice).get(f"/jobs/{job.pk}?poll=1", headers=HTMX).content.decode()
    assert status_line(html).startswith("Needs checking — staff are confirming whether the service finished")
    assert "Paused: staff are checking" in html and 'hx-trigger="load delay:30s, poll-retry"' in html
    assert 'id="submit-again"' not in html
    assert not [word for word in QUEUE_WORDS if word in words(html)]


def test_a_staff_confirmation_is_in_alices_timeline(browser_client, alice, accept, clock):
    job = drive_to(accept(), "unknown", now=clock.now())
    assert queue.resolve(job_id=job.pk, expected_state="unknown", expected_epoch=job.epoch, to_state="completed",
                         actor="staff:ops", reason="provider confirmed", now=clock.now(), result={"note": "paid"})
    html = page(browser_client(alice), job)
    assert "Confirmed done by staff" in html and "provider confirmed" not in html


# --- Submit again ----------------------------------------------------------------------------------


def test_submit_again_makes_a_new_job_with_the_same_document_and_a_new_key(browser_client, alice, document_job,
                                                                          clock):
    client = browser_client(alice)
    dead = drive_to(document_job(), "dead", now=clock.now())
    html = page(client, dead)
    key = re.search(r'name="idempotency_key" value="([^"]+)"', html).group(1)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    form = {"idempotency_key": key, "csrfmiddlewaretoken": token}
    first, second = client.post(f"/jobs/{dead.pk}/again", form), client.post(f"/jobs/{dead.pk}/again", form)
    again = Job.objects.exclude(pk=dead.pk).get()  # a double click makes one
    assert first.status_code == 303 and first["Location"] == second["Location"] == f"/jobs/{again.pk}"
    assert (again.state, again.document.sha256, again.document.original_name) == (
        "queued", dead.document.sha256, "acme-7.txt")
    assert again.operation_key != dead.operation_key


def test_only_a_failed_job_of_ones_own_tenant_can_be_submitted_again(browser_client, alice, bob, accept, clock):
    queued = accept()
    dead = drive_to(accept(now=clock.now() - timedelta(seconds=9)), "dead", now=clock.now())
    alices, bobs = browser_client(alice), browser_client(bob)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page(alices, dead)).group(1)
    response = alices.post(f"/jobs/{queued.pk}/again", {"idempotency_key": "k", "csrfmiddlewaretoken": token})
    assert response.status_code == 409 and b"Only a failed document can be submitted again." in response.content
    bobs.get("/jobs")
    bob_token = bobs.cookies["csrftoken"].value
    again = bobs.post(f"/jobs/{dead.pk}/again", {"idempotency_key": "k", "csrfmiddlewaretoken": bob_token})
    assert again.status_code == 404
    assert Job.objects.count() == 2


def test_her_history_names_the_teammate_who_cancelled_or_resubmitted_her_document(browser_client, alice,
                                                                                    make_member, accept, clock):
    carol = make_member("acme", "carol")
    waiting = accept()
    running = accept(now=clock.now() - timedelta(seconds=1))
    dead = drive_to(accept(now=clock.now() - timedelta(seconds=9)), "dead", now=clock.now())
    own = accept(now=clock.now() - timedelta(seconds=2))
    carols = browser_client(carol)
    carols.get("/jobs")
    token = carols.cookies["csrftoken"].value
    assert carols.post(f"/jobs/{waiting.pk}/cancel", headers={"X-CSRFToken": token}).status_code == 303
    drive_to(running, "leased", now=clock.now())
    assert carols.post(f"/jobs/{running.pk}/cancel", headers={"X-CSRFToken": token}).status_code == 303
    assert carols.post(f"/jobs/{dead.pk}/again", {"idempotency_key": "k", "csrfmiddlewaretoken": token}).status_code \
        == 303
    carols.post(f"/jobs/{dead.pk}/again", {"idempotency_key": "k", "csrfmiddlewaretoken": token})  # a double click
    again = Job.objects.get(submitted_by=carol)
    alices = browser_client(alice)
    alices.get("/jobs")
    alices.post(f"/jobs/{own.pk}/cancel", headers={"X-CSRFToken": alices.cookies["csrftoken"].value})

    assert "Cancelled by carol" in words(page(alices, waiting))
    running_page = words(page(alices, running))
    assert "Cancel asked for by carol" in running_page and "try 2" not in running_page
    assert words(page(alices, dead)).count(f"Submitted again by carol, as job {again.pk}") == 1
    assert "Cancelled by you" in words(page(alices, own))
    assert "Cancelled by alice" in words(page(carols, own))


# --- Downloads ---------------------------------------------------------------------------------------


def test_the_note_and_the_result_download_as_files(browser_client, alice, bob, reviewed):
    job = reviewed(review_result(iban_status="malformed"), name="Rechnung März.pdf")
    client = browser_client(alice)
    note = client.get(f"/jobs/{job.pk}/note.txt")
    assert note["Content-Type"] == "text/plain; charset=utf-8"
    assert note["Content-Disposition"] == f'attachment; filename="Rechnung-M-rz-job-{job.pk}-note.txt"'
    assert note.content.decode() == job.result["draft"] + "\n"
    result = client.get(f"/jobs/{job.pk}/result.json")
    assert result["Content-Type"] == "application/json" and result.json() == job.result
    assert browser_client(bob).get(f"/jobs/{job.pk}/note.txt").status_code == 404
    assert browser_client(bob).get(f"/jobs/{job.pk}/result.json").status_code == 404


def test_no_cache_keeps_a_job_its_downloads_or_the_exports(browser_client, api_client, alice, reviewed):
    job = reviewed(review_result(iban_status="malformed"), name="invoice.pdf", batch="b-c")
    client = browser_client(alice)
    urls = [f"/jobs/{job.pk}", f"/jobs/{job.pk}/note.txt", f"/jobs/{job.pk}/result.json", "/jobs",
            "/jobs/export.csv", "/batches/b-c", "/batches/b-c/export.csv"]
    for url in urls:
        response = client.get(url)
        assert {"no-store", "private"} <= set(response["Cache-Control"].replace(" ", "").split(",")), url
    assert "no-store" in client.get(f"/jobs/{job.pk}", headers=HTMX)["Cache-Control"]
    assert "no-store" in api_client(alice).get(f"/jobs/{job.pk}")["Cache-Control"]


def test_every_response_forbids_the_powerful_features_the_site_never_uses(browser_client, api_client, alice,
                                                                          client):
    for response in (client.get("/accounts/login/"), client.get("/no-such-page"), client.get("/openapi.json"),
                     browser_client(alice).get("/jobs"), api_client(alice).get("/jobs/999999")):
        policy = set(response["Permissions-Policy"].split(", "))
        assert {"camera=()", "microphone=()", "geolocation=()", "payment=()"} <= policy


def test_nothing_to_download_before_the_review_is_done(browser_client, alice, accept):
    job = accept()
    client = browser_client(alice)
    assert client.get(f"/jobs/{job.pk}/note.txt").status_code == 404
    assert client.get(f"/jobs/{job.pk}/result.json").status_code == 404
    assert "download-result" not in page(client, job)


def test_times_are_marked_up_for_the_readers_zone(browser_client, alice, accept):
    job = accept()
    html = page(browser_client(alice), job)
    stamp = job.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert f'<time datetime="{stamp}" data-when>' in html and " UTC</time>" in html
    assert "<span data-zone>Times are shown in UTC.</span>" in html


# --- Evidence: where each value was read -----------------------------------------------------------


def field_row(html: str, label: str) -> str:
    """The text of the fields table's row for ``label``, tags and the forms to correct it removed, blanks folded."""
    table = html.split('id="fields"')[1].split("</table>", maxsplit=1)[0]
    row = next(r for r in table.split("<tr") if f">{label}</th>" in r).partition(">")[2]
    row = re.sub(r"<details class=\"correct\".*?</details>|<form .*?</form>", " ", row, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row)).strip()


def test_each_value_shows_the_page_and_the_line_it_was_read_from(browser_client, alice, reviewed):
    job = reviewed(evidenced_review_result())
    html = page(browser_client(alice), job)
    assert "Read from the document&#x27;s text." in html
    assert field_row(html, "Invoice number") == (
        'Invoice number OK 993548900 read from page 1: Factuurnummer: 993548900')
    assert "<code>Factuurnummer: 993548900</code>" in html
    assert field_row(html, "IBAN / bank account").endswith("read from page 2: IBAN NL91ABNA0417164300")
    # The total read twice with two amounts: "to check", both readings with their lines, no guess.
    total = field_row(html, "Total amount")
    assert total.startswith("Total amount To check Two readings disagree:")
    assert "EUR 717.97 read from page 1: Totaal € 717,97" in total
    assert "EUR 593.36 read from page 2: Te betalen 593,36" in total
    assert 'badge-to_check">To check<' in html
    assert "Nothing to ask the supplier: check the points above yourself first." in html
    assert job.outcome_text == "1 to check" and job.needs_action


def test_an_e_invoice_names_its_elements_and_its_findings(browser_client, alice, reviewed):
    job = reviewed(evidenced_review_result(einvoice=True))
    html = page(browser_client(alice), job)
    assert "Read from the e-invoice (Factur-X EN 16931)." in html
    assert field_row(html, "Supplier name") == (
        "Supplier name OK Lieferant GmbH read from the e-invoice: ram:SellerTradeParty/ram:Name")
    findings = words(html.split('id="findings"')[1].split("</section>")[0])
    assert "The IBAN on the visible page (NL91 ABNA 0417 1643 00) is not the e-invoice" in findings
    assert "confirm the bank account by phone" in findings
    assert job.outcome_text == "1 to check"


def test_a_result_from_before_evidence_still_shows_its_values(browser_client, alice, reviewed):
    html = page(browser_client(alice), reviewed(review_result()))
    assert field_row(html, "Invoice number") == "Invoice number OK INV-2026-0142"
    assert 'id="reading"' not in html and 'id="findings"' not in html


def test_a_scan_names_no_source_and_says_each_field_was_not_read(browser_client, alice, reviewed):
    html = page(browser_client(alice), reviewed(review_result(readable=False)))
    assert 'id="reading"' not in html
    assert field_row(html, "IBAN / bank account") == "IBAN / bank account Not read —"


def test_a_date_and_a_total_to_correct_read_like_the_others(browser_client, alice, reviewed):
    result = review_result()
    result["fields"]["invoice_date"] = {"status": "malformed", "value": "2014-11-05",
                                        "detail": "the invoice date is more than ten years old"}
    result["fields"]["total_amount"] = {"status": "malformed", "value": "-12345.67", "detail": "the total is negative"}
    html = page(browser_client(alice), reviewed(result))
    assert field_row(html, "Invoice date").startswith("Invoice date To check 5 November 2014 ")  # old: to check
    assert field_row(html, "Total amount").startswith("Total amount To correct EUR -12,345.67 ")
    assert 'value="2014-11-05"' in html  # the box to correct it holds the value as read
    # A flagged currency still goes with the total, as in the list; its own row says what is wrong.
    result["fields"]["currency"] = {"status": "malformed", "value": "CHF", "detail": "not the supplier's usual"}
    html = page(browser_client(alice), reviewed(result))
    assert field_row(html, "Total amount").startswith("Total amount To correct CHF -12,345.67 ")
