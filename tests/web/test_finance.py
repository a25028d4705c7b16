"""The list and the CSV for finance: supplier, invoice number and date, total with its currency in
the list (as the members corrected them), sorting by them, the filters kept on the way back from a
job's page; the CSV with one column per value, the issues in words, the work state, the job's
link, the reviewer's time in the reader's zone and a dated file name."""

from __future__ import annotations

import csv
import io
import re
from zoneinfo import ZoneInfo

import pytest

from agent.inbox import corrections, work
from web import zones

from .conftest import review_result
from .responses import read_csv

pytestmark = pytest.mark.django_db


def invoice(*, supplier="Nordlicht GmbH", number="INV-1", day="2026-03-14", total="1234.50", currency="EUR",
            iban_status="present") -> dict:
    result = review_result(supplier=supplier, number=number, iban_status=iban_status)
    result["fields"]["invoice_date"]["value"] = day
    result["fields"]["total_amount"]["value"] = total
    result["fields"]["currency"]["value"] = currency
    return result


def row_ids(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr id="job-(\d+)"', html)]


def cell(html: str, job, label: str) -> str:
    row = html[html.index(f'<tr id="job-{job.pk}"'):]
    row = row[:row.index("</tr>")]
    found = re.search(rf'data-label="{label}"[^>]*>(.*?)</td>', row, re.S)
    assert found, (label, row)
    return found.group(1).strip()


# --- The list's columns ------------------------------------------------------------------------------


def test_the_list_shows_supplier_number_date_and_total_with_its_currency(browser_client, alice, reviewed):
    job = reviewed(invoice(supplier="Müller & Söhne", number="R-77", total="98765.4", currency="CHF"))
    html = browser_client(alice).get("/jobs").content.decode()
    for label in ("Supplier", "Invoice number", "Invoice date", "Total", "Status", "Work"):
        assert '<th scope="col"' in html and f">{label}</th>" in html
    assert cell(html, job, "Supplier") == "Müller &amp; Söhne"  # escaped like any text from a document
    assert cell(html, job, "Invoice number") == "R-77"
    assert cell(html, job, "Invoice date") == "14 March 2026"
    assert cell(html, job, "Total") == "CHF 98,765.40"


def test_the_list_shows_the_values_as_a_member_corrected_them(browser_client, alice, reviewed, clock):
    job = reviewed(invoice(supplier="Nordlict GmbH", total="100.00"))
    for field, value in (("supplier_name", "Nordlicht GmbH"), ("total_amount", "110.00")):
        corrections.correct(job_id=job.pk, tenant_id=alice.tenant_id, user=alice, field=field, value=value,
                            now=clock.now())
    html = browser_client(alice).get("/jobs").content.decode()
    assert cell(html, job, "Supplier") == "Nordlicht GmbH" and cell(html, job, "Total") == "EUR 110.00"
    row = read_csv(browser_client(alice).get("/jobs/export.csv"))[0]
    assert (row["Supplier name"], row["Total amount"]) == ("Nordlicht GmbH", "110.00")


def test_a_flagged_date_reads_like_the_others_and_a_flagged_currency_stays_beside_its_total(
        browser_client, alice, reviewed):
    old = invoice(day="2014-11-05")
    old["fields"]["invoice_date"].update(status="malformed", detail="the invoice date is more than ten years old")
    unsure = invoice(total="45.9", currency="CHF")
    unsure["fields"]["currency"].update(status="malformed", detail="not the supplier's usual")
    unparsable = invoice(day="31.02.2026")
    unparsable["fields"]["invoice_date"].update(status="malformed", detail="not a date")
    jobs = [reviewed(result) for result in (old, unsure, unparsable)]
    html = browser_client(alice).get("/jobs").content.decode()
    assert cell(html, jobs[0], "Invoice date") == "5 November 2014"  # not 2014-11-05
    assert cell(html, jobs[1], "Total") == "CHF 45.90"
    assert cell(html, jobs[2], "Invoice date") == "31.02.2026"  # what does not parse stays as read


def test_a_job_still_waiting_shows_no_values(browser_client, alice, accept):
    job = accept()
    html = browser_client(alice).get("/jobs").content.decode()
    assert cell(html, job, "Supplier") == "—" and cell(html, job, "Total") == "—"


# --- Sorting --------------------------------------------------------------------------------------------


@pytest.fixture
def three(reviewed):
    """Three invoices whose totals, suppliers and dates sort three different ways, and one unreadable."""
    a = reviewed(invoice(supplier="beta AG", total="900.00", day="2026-01-05"))
    b = reviewed(invoice(supplier="Alpha SA", total="1000.00", day="2026-03-01"))
    c = reviewed(invoice(supplier="Gamma BV", total="95.50", day="2026-02-10"))
    unread = reviewed(review_result(readable=False))
    return a, b, c, unread


@pytest.mark.parametrize(("sort", "order"), [
    ("total", "cab"), ("-total", "bac"),  # as numbers: 95.50 < 900 < 1000 (as text 1000 < 900 < 95.50)
    ("supplier", "bac"), ("-supplier", "cab"),  # without regard to case: Alpha, beta, Gamma
    ("invoice_date", "acb"), ("-invoice_date", "bca"),
    ("submitted", "abc"), ("-submitted", "cba"),
])
def test_the_list_sorts_each_way_with_documents_without_the_value_last(browser_client, alice, three, sort, order):
    a, b, c, unread = three
    by_name = {"a": a.pk, "b": b.pk, "c": c.pk}
    ids = row_ids(browser_client(alice).get(f"/jobs?sort={sort}").content.decode())
    expected = [by_name[x] for x in order]
    if sort == "-submitted":
        assert ids == [unread.pk, *expected]
    elif sort == "submitted":
        assert ids == [*expected, unread.pk]
    else:
        assert ids == [*expected, unread.pk]  # no value: last, either way


def test_a_sort_follows_the_corrected_value(browser_client, alice, three, clock):
    a, b, c, _ = three
    corrections.correct(job_id=c.pk, tenant_id=alice.tenant_id, user=alice, field="total_amount", value="5000",
                        now=clock.now())
    assert row_ids(browser_client(alice).get("/jobs?sort=-total").content.decode())[:3] == [c.pk, b.pk, a.pk]


def test_a_corrected_value_that_fails_its_check_sorts_as_unknown(browser_client, alice, three, clock):
    a, b, c, unread = three
    corrections.correct(job_id=b.pk, tenant_id=alice.tenant_id, user=alice, field="total_amount", value="lots",
                        now=clock.now())
    ids = row_ids(browser_client(alice).get("/jobs?sort=total").content.decode())
    assert ids[:2] == [c.pk, a.pk] and set(ids[2:]) == {b.pk, unread.pk}


def test_a_sort_not_in_the_list_is_refused_for_the_api_and_said_on_the_page(api_client, browser_client, alice,
                                                                           three):
    for sort in ("result", "-id", "document_name", "total;drop"):
        response = api_client(alice).get(f"/jobs?sort={sort}")
        assert response.status_code == 400 and response.json()["error"] == "invalid", sort
        page = browser_client(alice).get(f"/jobs?sort={sort}")
        assert page.status_code == 200
        html = page.content.decode()
        assert "“sort” was not understood, so not applied" in html
        assert row_ids(html)[0] == three[3].pk  # the newest first, as without a sort
    assert [j["id"] for j in api_client(alice).get("/jobs?sort=total").json()["jobs"]][:3] == [
        three[2].pk, three[0].pk, three[1].pk]


def test_the_page_offers_the_sorts_and_keeps_the_chosen_one(browser_client, alice, three):
    html = browser_client(alice).get("/jobs?sort=-total&q=Alpha").content.decode()
    assert '<select id="id_sort" name="sort" data-autosubmit>' in html
    assert '<option value="-total" selected>Total, highest</option>' in html
    assert 'href="/jobs/export.csv?q=Alpha&amp;sort=-total"' in html  # the export follows the order


# --- The way back -----------------------------------------------------------------------------------------


def test_the_job_page_leads_back_to_the_list_as_it_was_filtered(browser_client, alice, three):
    browser = browser_client(alice)
    browser.get("/jobs?scope=team&q=AG&sort=-total&outcome=ok")
    html = browser.get(f"/jobs/{three[0].pk}").content.decode()
    back = re.search(r'<a href="([^"]*)" id="back-to-list">', html).group(1)
    assert back == "/jobs?scope=team&amp;q=AG&amp;outcome=ok&amp;sort=-total&amp;page=1"
    assert row_ids(browser.get(back.replace("&amp;", "&")).content.decode()) == [three[0].pk]


def test_the_way_back_is_the_list_itself_without_a_visit_and_never_another_site(browser_client, alice, three):
    browser = browser_client(alice)
    html = browser.get(f"/jobs/{three[0].pk}?back=https://evil.example/&from=//evil.example").content.decode()
    assert '<a href="/jobs" id="back-to-list">' in html and "evil.example" not in html
    session = browser.session  # a value not written by the list (an older release's, say) is not followed
    session["list-url"] = "//evil.example/jobs?x"
    session.save()
    assert '<a href="/jobs" id="back-to-list">' in browser.get(f"/jobs/{three[0].pk}").content.decode()
    browser.get("/jobs?q=%22%3E%3Cscript%3E")  # what was typed comes back escaped, on the list's own path
    html = browser.get(f"/jobs/{three[0].pk}").content.decode()
    assert '<a href="/jobs?q=%22%3E%3Cscript%3E&amp;page=1" id="back-to-list">' in html


# --- The CSV -------------------------------------------------------------------------------------------------


def test_the_csv_names_the_readers_zone_and_is_dated_in_it(browser_client, alice, reviewed, clock, monkeypatch):
    monkeypatch.setattr("web.views.queue_clock", clock)
    clock.advance(hours=22.5 - clock.now().hour - clock.now().minute / 60)  # 22:30 UTC: the next day in Berlin
    job = reviewed(invoice())
    response = browser_client(alice).get("/jobs/export.csv?tz=Europe/Berlin")
    berlin_day = clock.now().astimezone(ZoneInfo("Europe/Berlin")).date()
    assert berlin_day != clock.now().date()
    assert response["Content-Disposition"] == f'attachment; filename="docket-documents-{berlin_day}.csv"'
    assert response.content.startswith("\ufeff".encode())  # UTF-8 with its byte order mark
    row = read_csv(response)[0]
    berlin = job.finished_at.astimezone(ZoneInfo("Europe/Berlin"))
    assert row["Reviewed at (Europe/Berlin)"] == f"{berlin:%Y-%m-%d %H:%M}" and berlin.day == clock.now().day + 1
    assert row["Submitted (Europe/Berlin)"] == f"{job.created_at.astimezone(ZoneInfo('Europe/Berlin')):%Y-%m-%d %H:%M}"
    utc = browser_client(alice).get("/jobs/export.csv")
    assert utc["Content-Disposition"] == f'attachment; filename="docket-documents-{clock.now().date()}.csv"'
    assert "Reviewed at (UTC)" in read_csv(utc)[0]


def test_the_csv_has_the_work_state_the_assignee_and_the_jobs_link(browser_client, alice, reviewed, make_member, clock):
    teammate = make_member("acme", "@carol")  # a username may start with what a spreadsheet runs
    job = reviewed(invoice(iban_status="malformed"))
    work.change(tenant_id=alice.tenant_id, job_id=job.pk, by_id=alice.pk, now=clock.now(), state="waiting",
                assignee_id=teammate.pk)
    row = read_csv(browser_client(alice).get("/jobs/export.csv", HTTP_HOST="localhost"))[0]
    assert (row["Work state"], row["Assignee"]) == ("Waiting for the supplier", "'@carol")
    assert row["Link"] == f"http://localhost/jobs/{job.pk}"
    assert row["Issues"] == "IBAN / bank account: to correct (not a valid IBAN: checksum)"


def test_the_issues_of_a_field_named_by_the_result_never_become_a_formula(browser_client, alice, reviewed):
    result = invoice()
    result["fields"]["=cmd|' /C calc'!A0"] = {"status": "malformed", "value": "x", "detail": "=1+1"}
    reviewed(result)
    row = read_csv(browser_client(alice).get("/jobs/export.csv"))[0]
    assert row["Issues"] == "'=cmd|' /c calc'!a0: to correct (=1+1)"


def test_an_unknown_zone_is_refused_for_the_api_and_utc_for_a_batch(api_client, browser_client, alice, reviewed):
    reviewed(invoice(), batch="b-z")
    assert api_client(alice).get("/jobs/export.csv?tz=Mars/Olympus").status_code == 400
    header = next(csv.reader(io.StringIO(
        browser_client(alice).get("/batches/b-z/export.csv?tz=Mars/Olympus").content.decode()[1:])))
    assert header[-2:] == ["Submitted (UTC)", "Reviewed at (UTC)"]
    assert zones.zone_name("Asia/Kolkata") == "Asia/Kolkata" and zones.zone_name("") == "UTC"


def test_another_tenants_documents_are_in_neither_the_list_nor_the_csv(browser_client, alice, bob, reviewed):
    mine = reviewed(invoice(supplier="Mine GmbH"))
    theirs = reviewed(invoice(supplier="Theirs GmbH", total="1.00"), user=bob)
    for sort in ("total", "supplier", "-invoice_date"):
        html = browser_client(alice).get(f"/jobs?scope=team&sort={sort}").content.decode()
        assert row_ids(html) == [mine.pk] and "Theirs GmbH" not in html
    rows = read_csv(browser_client(alice).get("/jobs/export.csv?sort=total"))
    assert [r["Job"] for r in rows] == [str(mine.pk)]
    html = browser_client(bob).get(f"/jobs/{mine.pk}")
    assert html.status_code == 404 and theirs.pk


def test_the_selected_documents_export_in_the_zone_the_lists_form_carries(browser_client, alice, reviewed):
    job = reviewed(invoice())
    browser = browser_client(alice)
    assert '<input type="hidden" name="tz" value="" data-tz>' in browser.get("/jobs").content.decode()
    token = browser.cookies["csrftoken"].value
    response = browser.post("/jobs/work", {"csrfmiddlewaretoken": token, "action": "export", "job": [job.pk],
                                           "tz": "America/New_York"})
    row = read_csv(response)[0]
    new_york = job.finished_at.astimezone(ZoneInfo("America/New_York"))
    assert row["Reviewed at (America/New_York)"] == f"{new_york:%Y-%m-%d %H:%M}"
    assert row["Link"] == f"http://testserver/jobs/{job.pk}"


def test_the_due_date_net_vat_and_buyer_are_on_the_page_in_the_json_and_in_the_csv(browser_client, alice,
                                                                                   reviewed):
    result = invoice(total="1190.00")
    result["also_read"] = {
        "due_date": {"status": "present", "value": "2026-04-13", "detail": "",
                     "evidence": {"source": "text", "page": 1, "text": "Zahlbar bis 13.04.2026", "box": None}},
        "net_amount": {"status": "present", "value": "1000.00", "detail": "", "evidence": None},
        "vat_amount": {"status": "present", "value": "190.00", "detail": "", "evidence": None},
    }
    job = reviewed(result)
    client = browser_client(alice)
    page = client.get(f"/jobs/{job.pk}").content.decode()
    also = page[page.index('id="also-read"'):page.index("</section>", page.index('id="also-read"'))]
    assert re.findall(r"<dt>(.*?)</dt>", also) == ["Due date", "Net amount", "VAT amount"]
    assert "13 April 2026" in also and "EUR 1,000.00" in also and "EUR 190.00" in also
    assert "Zahlbar bis 13.04.2026" in also and 'id="totals-mismatch"' not in also
    api = client.get(f"/jobs/{job.pk}", HTTP_ACCEPT="application/json").json()
    assert api["result"]["also_read"]["due_date"]["value"] == "2026-04-13"
    row = read_csv(client.get("/jobs/export.csv"))[0]
    assert (row["Due date"], row["Net amount"], row["VAT amount"], row["Buyer name"]) == ("2026-04-13", "1000.00",
                                                                                     "190.00", "")


def test_net_and_vat_that_miss_the_total_are_flagged_on_the_page(browser_client, alice, reviewed):
    result = invoice(total="1234.50")
    result["also_read"] = {name: {"status": "present", "value": value, "detail": "", "evidence": None}
                           for name, value in (("net_amount", "1000.00"), ("vat_amount", "190.00"))}
    page = browser_client(alice).get(f"/jobs/{reviewed(result).pk}").content.decode()
    assert "Net plus VAT (1,190.00) is not the total (1,234.50)" in page
