"""What daily use needs of the pages: finance's exports opened by real readers, reviews said to be
delayed when no worker takes them (and staff told), one set of words per failure on every surface,
a batch's summary that counts what was not found apart, and staff's landing."""

from __future__ import annotations

import csv
import io
from datetime import date, datetime, timedelta

import pytest
from django.core import mail
from openpyxl import load_workbook

from accounts.models import User
from agent.inbox import notifications
from agent.models import TriageAlert
from documents import acceptance
from documents.store import Upload
from jobs import queue
from jobs.admin import guidance
from jobs.clock import queue_clock
from jobs.models import Job
from tests.conftest import drive_to
from web import exports, wording

from .conftest import review_result

pytestmark = pytest.mark.django_db


def finance_result(*, supplier="Nordlicht\nBürobedarf GmbH") -> dict:
    result = review_result(supplier=supplier)
    result["also_read"] = {"due_date": {"status": "present", "value": "2026-04-13", "detail": ""},
                           "net_amount": {"status": "present", "value": "1037.39", "detail": ""},
                           "vat_amount": {"status": "present", "value": "197.11", "detail": ""},
                           "payment_reference": {"status": "present", "value": "RE 2026-0142", "detail": ""}}
    return result


# --- Finance's export ------------------------------------------------------------------------------


def test_a_german_reader_gets_semicolons_and_decimal_commas_and_one_line_per_value(browser_client, alice,
                                                                                   reviewed):
    job = reviewed(finance_result())
    response = browser_client(alice).get("/jobs/export.csv?tz=Europe/Berlin", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9")
    text = response.content.decode("utf-8").removeprefix("\ufeff")
    rows = list(csv.DictReader(io.StringIO(text), delimiter=";"))
    assert len(rows) == 1 and rows[0]["Job"] == str(job.pk)
    row = rows[0]
    assert row["Supplier name"] == "Nordlicht Bürobedarf GmbH"  # the line break flattened
    assert (row["Total amount"], row["Net amount"], row["VAT amount"]) == ("1234,50", "1037,39", "197,11")
    assert (row["Invoice date"], row["Due date"]) == ("2026-03-14", "2026-04-13")
    assert row["Payment reference"] == "RE 2026-0142"
    assert "Submitted (Europe/Berlin)" in row and "Reviewed at (Europe/Berlin)" in row
    # Chosen over the browser's language: commas and points.
    chosen = browser_client(alice).get("/jobs/export.csv?sep=comma", HTTP_ACCEPT_LANGUAGE="de-DE")
    assert next(csv.DictReader(io.StringIO(chosen.content.decode()[1:])))["Total amount"] == "1234.50"
    assert exports.csv_format("", "fr-CH,fr;q=0.8") == exports.SEMICOLON
    assert exports.csv_format("", "en-GB,en;q=0.8") == exports.COMMA


def test_the_list_and_the_batch_page_offer_the_other_separator_too(browser_client, alice, reviewed):
    job = reviewed(finance_result(), batch="b-sep")
    browser = browser_client(alice)
    listed = browser.get("/jobs", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9").content.decode()
    assert 'title="Cells separated by semicolons, as your browser\'s language expects" data-tz-link' in listed
    assert 'href="/jobs/export.csv?sep=comma" download id="export-csv-other">CSV with commas</a>' in listed
    chosen = browser.get("/jobs/export.csv?sep=comma", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9").content.decode()
    assert next(csv.DictReader(io.StringIO(chosen[1:])))["Job"] == str(job.pk)
    batch = browser.get("/batches/b-sep", HTTP_ACCEPT_LANGUAGE="en-GB").content.decode()
    assert 'href="/batches/b-sep/export.csv?sep=semicolon" download id="export-batch-other">CSV with semicolons</a>' \
        in batch


def test_every_time_of_the_export_is_in_its_one_zone(reviewed, browser_client, alice):
    from web.kind_pages import Duplicate

    job = reviewed(review_result())
    text = browser_client(alice).get("/jobs/export.csv?tz=Asia/Tokyo").content.decode()[1:]
    row = next(csv.DictReader(io.StringIO(text)))
    tokyo = job.created_at.astimezone(exports.zones.zone_of("Asia/Tokyo"))
    assert row["Submitted (Asia/Tokyo)"] == tokyo.strftime("%Y-%m-%d %H:%M")
    earlier = Duplicate(job_id=job.pk, sent_at=job.created_at, by="alice", by_id=alice.pk, document_name="a.pdf",
                        match="same file")
    assert exports.duplicate_words(earlier, "Asia/Tokyo") == (
        f"#{job.pk} (same file; sent {tokyo:%Y-%m-%d %H:%M} Asia/Tokyo by alice)")


def test_the_xlsx_export_reads_back_with_typed_dates_and_amounts(browser_client, alice, reviewed):
    job = reviewed(finance_result(supplier='=HYPERLINK("http://evil")'))
    response = browser_client(alice).get("/jobs/export.xlsx?tz=Europe/Berlin")
    assert response.status_code == 200 and response["Content-Type"] == exports_type()
    assert response["Content-Disposition"].endswith('.xlsx"')
    sheet = load_workbook(io.BytesIO(response.content)).active
    header, row = ([cell.value for cell in line] for line in sheet.iter_rows(max_row=2))
    cells = dict(zip(header, row, strict=True))
    assert cells["Job"] == job.pk
    assert cells["Total amount"] == pytest.approx(1234.50) and isinstance(cells["Total amount"], float)
    assert isinstance(cells["VAT amount"], float) and cells["VAT amount"] == pytest.approx(197.11)
    assert isinstance(cells["Invoice date"], datetime) and cells["Invoice date"].date() == date(2026, 3, 14)
    assert cells["Due date"].date() == date(2026, 4, 13)
    submitted = cells["Submitted (Europe/Berlin)"]
    assert isinstance(submitted, datetime)
    assert submitted == job.created_at.astimezone(exports.zones.zone_of("Europe/Berlin")).replace(tzinfo=None,
                                                                                                   microsecond=0) \
        or abs(submitted - job.created_at.astimezone(exports.zones.zone_of("Europe/Berlin")).replace(
            tzinfo=None)) < timedelta(seconds=1)
    assert cells["Supplier name"] == '=HYPERLINK("http://evil")'  # kept as text, never a formula
    assert sheet["A1"].font.bold


def exports_type() -> str:
    from web.views import XLSX_TYPE

    return XLSX_TYPE


# --- Honest waiting ----------------------------------------------------------------------------------


@pytest.fixture
def stopped_workers(settings, alice):
    """The queue with no worker: a document accepted 10 minutes ago that nobody has taken, past
    an expected wait of 2 minutes."""
    settings.JOBS = {**settings.JOBS, "EXPECTED_WAIT_SECONDS": 120}
    now = queue_clock.now()
    return acceptance.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="document_review", payload={},
                             operation_key="late-1", now=now - timedelta(minutes=10), batch="b-late",
                             document=Upload(b"Invoice 7", "late.txt", "text/plain")).job


def test_with_the_workers_stopped_alices_pages_say_reviews_are_delayed_and_staff_are_told(
        browser_client, alice, stopped_workers, make_member):
    staff = make_member("ops", "watcher", staff=True)
    staff.email = "watcher@example.com"
    staff.save(update_fields=["email"])
    assert staff.has_perm("jobs.view_job")
    client = browser_client(alice)
    page = client.get(f"/jobs/{stopped_workers.pk}").content.decode()
    assert "Waiting</span><span class=\"status-detail\"> — delayed: reviews are taking longer than usual" in page
    assert 'id="delay-notice"' in page and "has waited 10 minutes. Staff have been told." in page
    batch = client.get("/batches/b-late").content.decode()
    assert 'id="delay-notice"' in batch and "in line for review" not in batch
    assert 'id="delay-notice"' in client.get("/jobs").content.decode()
    # Staff: the alert raised once, however many pages noticed, with one email job queued.
    alert = TriageAlert.objects.get(pk=1)
    assert alert.delayed_since is not None and alert.delays == 1
    emails = Job.objects.filter(kind=notifications.TRIAGE, payload={"delay": 1})
    assert emails.count() == 1
    # The admin's landing says it too.
    admin = browser_client(staff).get("/admin/").content.decode()
    assert 'id="queue-late"' in admin and "1 job could run but has waited longer than expected" in admin
    # The email, once a worker runs its job.
    from jobs.clock import LogicalClock
    from tests.agent.test_notifications import run_due

    assert run_due(LogicalClock(queue_clock.now())) == [{"sent": True, "recipients": 1, "late": 1}]
    (email,) = mail.outbox
    assert email.subject == "Docket: 1 job waiting longer than expected" and email.bcc == ["watcher@example.com"]
    assert "the longest for 10 min" in email.body and "manage.py runworkers" in email.body


def test_one_alert_per_delay_lowered_once_staff_find_the_queue_on_time(browser_client, alice, stopped_workers,
                                                                       make_member):
    from jobs.queue import lateness

    staff = make_member("ops", "lander", staff=True)
    browser_client(alice).get(f"/jobs/{stopped_workers.pk}")
    browser_client(alice).get("/batches/b-late")  # noticed again: the same delay
    assert TriageAlert.objects.get(pk=1).delays == 1
    queue.cancel(job_id=stopped_workers.pk, actor="test", reason="", now=queue_clock.now())
    lateness.forget()
    fresh = acceptance.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="document_review", payload={},
                              operation_key="fresh", now=queue_clock.now(),
                              document=Upload(b"Invoice 8", "fresh.txt", "text/plain")).job
    page = browser_client(alice).get(f"/jobs/{fresh.pk}").content.decode()
    assert 'id="delay-notice"' not in page and "in line for review" in page
    admin = browser_client(staff).get("/admin/").content.decode()
    assert 'id="queue-late"' not in admin and TriageAlert.objects.get(pk=1).delayed_since is None
    # The workers stop again: a new delay, a new alert.
    acceptance.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="document_review", payload={},
                      operation_key="late-again", now=queue_clock.now() - timedelta(minutes=5),
                      document=Upload(b"Invoice 9", "again.txt", "text/plain"))
    lateness.forget()
    browser_client(alice).get(f"/jobs/{fresh.pk}")
    assert TriageAlert.objects.get(pk=1).delays == 2


# --- One set of words per failure ----------------------------------------------------------------


def test_a_document_too_long_is_said_alike_on_her_page_staffs_page_and_her_email(
        browser_client, alice, accept, clock, make_member):
    alice.email = "alice@example.com"
    alice.save(update_fields=["email"])
    job = acceptance.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="document_review", payload={},
                            operation_key="long-docx", now=clock.now() - timedelta(seconds=5),
                            document=Upload(b"Invoice", "contract.docx", "text/plain")).job
    notifications.schedule(user_id=alice.pk, now=clock.now())  # as the review does when it starts
    clock.advance(seconds=1)
    job = drive_to(job, "leased", now=clock.now())
    assert queue.fail(job_id=job.pk, epoch=job.epoch, now=clock.now(), retryable=False, code="too_complex",
                      error="too_complex: the DOCX has more than 100,000 XML elements in its text")
    job.refresh_from_db()
    words = wording.failure_words("document_review", "too_complex")
    told = wording.failure(job)
    assert (told.why, told.advice) == (words.why, words.advice) and told.resubmit
    page = browser_client(alice).get(f"/jobs/{job.pk}").content.decode()
    assert f"<strong>Why:</strong> {wording.sentence(words.why)[:-1]}." in page
    assert f"<strong>What to do:</strong> {words.advice[0].upper()}{words.advice[1:]}." in page
    assert "could not be read" not in page and "staff's answer" not in page
    staff_line = guidance(job, clock.now())
    assert staff_line == words.staff and "send it in parts or a simpler copy" in staff_line
    clock.advance(minutes=5)
    from tests.agent.test_notifications import run_due

    assert any(result.get("sent") for result in run_due(clock))
    body = mail.outbox[-1].body
    assert f"contract.docx: {wording.sentence(words.why)} What to do: {wording.sentence(words.advice)}" in body


# --- The batch's summary ---------------------------------------------------------------------------


def test_a_batch_counts_values_not_found_apart_from_values_to_correct(browser_client, alice, reviewed):
    missing = review_result()
    missing["fields"]["vat_id"] = {"status": "missing", "value": None, "detail": "no VAT id found"}
    reviewed(review_result(), batch="b-sum")
    reviewed(review_result(iban_status="malformed"), batch="b-sum")
    reviewed(missing, batch="b-sum")
    reviewed(missing, batch="b-sum")
    html = browser_client(alice).get("/batches/b-sum").content.decode()
    assert "Finished: 1 OK, 1 to correct, 2 not found" in html


# --- Staff's landing ----------------------------------------------------------------------------------


def test_staff_land_on_how_many_jobs_need_a_human(browser_client, make_member, accept, clock):
    staff = make_member("ops", "lander", staff=True)
    drive_to(accept(), "dead", now=clock.now())
    drive_to(accept(now=clock.now() - timedelta(seconds=3)), "unknown", now=clock.now())
    html = browser_client(staff).get("/admin/").content.decode()
    assert ('<a href="/admin/jobs/job/?state=needs_human"><strong>2 jobs need a human</strong></a>: '
            "1 unknown, 1 dead." in html)
    assert 'id="queue-late"' not in html


# --- Settings that work -----------------------------------------------------------------------------


def test_the_demo_makes_alice_her_teams_admin_so_the_webhooks_page_opens(browser_client, settings):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("setupdemo", stdout=out)
    call_command("setupdemo", stdout=StringIO())  # a second run changes passwords only
    alice = User.objects.get(username="alice")
    assert f"(team admin: {settings.SITE_URL}/account/webhooks)" in out.getvalue()
    assert browser_client(alice).get("/account/webhooks").status_code == 200
    assert browser_client(User.objects.get(username="bob")).get("/account/webhooks").status_code == 403
    assert alice.has_perm("mailin.manage_inbox")  # her team's allowed e-mail senders too
    assert alice.has_perm("suppliers.change_supplier")  # and its supplier register
    assert not User.objects.get(username="bob").has_perm("mailin.manage_inbox")


def test_a_refused_webhook_url_comes_back_by_its_field(browser_client, alice, settings):
    from django.contrib.auth.models import Permission

    from agent.models import WebhookEndpoint

    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": False}
    alice.user_permissions.add(Permission.objects.get(codename="change_webhookendpoint"))
    client = browser_client(alice)
    page = client.get("/account/webhooks").content.decode()
    token = page.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    response = client.post("/account/webhooks", {"csrfmiddlewaretoken": token, "url": "http://127.0.0.1:9/hook",
                                                 "document_finished": "on"})
    html = response.content.decode()
    assert response.status_code == 400 and not WebhookEndpoint.objects.exists()
    assert 'id="webhook-new"' in html and '<p class="field-error" id="error-url">' in html
    assert 'value="http://127.0.0.1:9/hook" aria-invalid="true" aria-describedby="error-url"' in html
    assert 'name="document_needs_action" checked' not in html and 'name="document_finished" checked' in html


def test_without_an_email_address_the_digest_is_off_and_she_is_asked_for_one(browser_client, make_member):
    from agent.models import NotificationPreference

    nomail = make_member("acme", "nomail")
    assert not nomail.email
    client = browser_client(nomail)
    page = client.get("/account/notifications").content.decode()
    assert 'id="no-email"' in page and 'id="email-me" disabled' in page and "checked" not in page
    token = page.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    refused = client.post("/account/notifications", {"csrfmiddlewaretoken": token, "every_minutes": "0"})
    html = refused.content.decode()
    assert refused.status_code == 400 and '<p class="field-error" id="error-every-minutes">' in html
    assert 'value="0" required inputmode="numeric" aria-invalid="true"' in html
    assert client.post("/account/notifications", {"csrfmiddlewaretoken": token, "every_minutes": "45"}
                       ).status_code == 303
    kept = NotificationPreference.objects.get(pk=nomail.pk)
    assert (kept.enabled, kept.every_minutes) == (True, 45)  # her choice kept for when she has an address
