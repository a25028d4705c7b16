"""The CSV export: one row per document (document, outcome, each field's value and status) for Alice's spreadsheet."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from zoneinfo import ZoneInfo

from tests.conftest import drive_to

from .conftest import review_result
from .responses import read_csv


def test_one_row_per_document_with_each_fields_value_and_its_issues(browser_client, alice, reviewed, accept, clock):
    ok = reviewed(review_result(), name="invoice-clean.pdf")
    bad = reviewed(review_result(iban_status="malformed"), name="invoice-bad-iban.pdf")
    dead = drive_to(accept(now=clock.now() - timedelta(seconds=30)), "dead", now=clock.now())
    response = browser_client(alice).get("/jobs/export.csv")
    rows = read_csv(response)
    header = list(rows[0])
    assert header[:15] == ["Document", "Outcome", "Supplier name", "VAT / tax id", "Invoice number", "Invoice date",
                           "Currency", "Total amount", "IBAN / bank account", "Due date", "Net amount", "VAT amount",
                           "Buyer name", "Payment reference", "Issues"]
    assert not [name for name in header if name.endswith(": status")]  # the issues say it in words
    assert header[-7:] == ["Work state", "Assignee", "Job", "Link", "State", "Submitted (UTC)", "Reviewed at (UTC)"]
    by_job = {row["Job"]: row for row in rows}
    assert set(by_job) == {str(ok.pk), str(bad.pk), str(dead.pk)}
    assert by_job[str(ok.pk)]["Document"] == "invoice-clean.pdf" and by_job[str(ok.pk)]["Outcome"] == "OK"
    assert by_job[str(ok.pk)]["Supplier name"] == "Nordlicht Bürobedarf GmbH"
    assert by_job[str(ok.pk)]["Total amount"] == "1234.50" and by_job[str(ok.pk)]["Invoice date"] == "2026-03-14"
    assert by_job[str(bad.pk)]["Outcome"] == "1 to correct"
    assert (by_job[str(bad.pk)]["IBAN / bank account"], by_job[str(bad.pk)]["Issues"]) == (
        "DE00 1234", "IBAN / bank account: to correct (not a valid IBAN: checksum)")
    assert by_job[str(ok.pk)]["Issues"] == ""
    assert by_job[str(bad.pk)]["Work state"] == "To do" and by_job[str(ok.pk)]["Work state"] == "No action needed"
    assert by_job[str(ok.pk)]["Link"] == f"http://testserver/jobs/{ok.pk}"
    assert by_job[str(ok.pk)]["Reviewed at (UTC)"] == ok.finished_at.strftime("%Y-%m-%d %H:%M")
    assert by_job[str(dead.pk)]["Outcome"] == "failed — see why" and by_job[str(dead.pk)]["Supplier name"] == ""


def test_the_export_follows_the_lists_filters(browser_client, alice, reviewed):
    reviewed(review_result(), name="clean.pdf")
    bad = reviewed(review_result(iban_status="malformed"), name="bad.pdf")
    rows = read_csv(browser_client(alice).get("/jobs/export.csv?needs_action=1"))
    assert [row["Job"] for row in rows] == [str(bad.pk)]
    html = browser_client(alice).get("/jobs?needs_action=1").content.decode()
    assert 'href="/jobs/export.csv?needs_action=1" download id="export-csv">Export CSV</a>' in html
    assert 'href="/jobs/export.xlsx?needs_action=1" download id="export-xlsx">Export Excel (.xlsx)</a>' in html


def test_text_from_a_document_never_becomes_a_spreadsheet_formula(browser_client, alice, reviewed):
    reviewed(review_result(supplier="=HYPERLINK(\"http://evil\")", number="-12"), name="@evil.pdf")
    row = read_csv(browser_client(alice).get("/jobs/export.csv"))[0]
    assert row["Supplier name"] == "'=HYPERLINK(\"http://evil\")" and row["Document"] == "'@evil.pdf"
    assert row["Invoice number"] == "-12"  # a number stays a number


def test_a_column_named_by_the_result_never_becomes_a_spreadsheet_formula(browser_client, alice, reviewed):
    """A result set by triage names its own fields, and the export's header is made of them."""
    result = review_result()
    result["fields"]['=HYPERLINK("http://evil")'] = {"status": "present", "value": "x", "detail": ""}
    reviewed(result, name="triaged.pdf", batch="b-t")
    for url in ("/jobs/export.csv", "/batches/b-t/export.csv"):
        response = browser_client(alice).get(url)
        header = next(csv.reader(io.StringIO(response.content.decode("utf-8")[1:])))
        assert not [name for name in header if name[:1] in "=+-@"], header
        assert "'=hyperlink(\"http://evil\")" in header


def test_a_batch_exports_its_documents_in_order(browser_client, alice, reviewed):
    first = reviewed(review_result(), name="one.pdf", batch="b-x")
    second = reviewed(review_result(readable=False), name="two.pdf", batch="b-x")
    reviewed(review_result(), name="elsewhere.pdf")
    rows = read_csv(browser_client(alice).get("/batches/b-x/export.csv"))
    assert [(r["Job"], r["Document"], r["Outcome"]) for r in rows] == [
        (str(first.pk), "one.pdf", "OK"), (str(second.pk), "two.pdf", "unreadable")]
    assert rows[1]["Issues"] == "no readable text: nothing was read"  # a scan: nothing was "not found"


def test_a_batchs_export_is_named_for_the_batch_and_dated_in_the_readers_zone(browser_client, alice, reviewed,
                                                                              clock, monkeypatch):
    monkeypatch.setattr("web.views.queue_clock", clock)
    clock.advance(hours=22.5 - clock.now().hour - clock.now().minute / 60)  # 22:30 UTC: the next day in Berlin
    reviewed(review_result(), name="one.pdf", batch="b-x")
    berlin_day = clock.now().astimezone(ZoneInfo("Europe/Berlin")).date()
    assert berlin_day != clock.now().date()
    browser = browser_client(alice)
    berlin = browser.get("/batches/b-x/export.csv?tz=Europe/Berlin")
    assert berlin["Content-Disposition"] == f'attachment; filename="docket-batch-b-x-{berlin_day}.csv"'
    utc = browser.get("/batches/b-x/export.csv")
    assert utc["Content-Disposition"] == f'attachment; filename="docket-batch-b-x-{clock.now().date()}.csv"'


def test_api_clients_export_with_their_token_and_only_their_tenants_jobs(api_client, alice, bob, reviewed):
    mine = reviewed(review_result())
    reviewed(review_result(), user=bob)
    assert [r["Job"] for r in read_csv(api_client(alice).get("/jobs/export.csv"))] == [str(mine.pk)]


def test_fields_keep_finances_order_whatever_order_the_store_gives_them_back(browser_client, alice, reviewed):
    """PostgreSQL's jsonb returns an object's keys shortest first: the page and the CSV follow the kind's order."""
    result = review_result()
    result["fields"] = dict(reversed(list(result["fields"].items())))
    job = reviewed(result)
    header = list(read_csv(browser_client(alice).get("/jobs/export.csv"))[0])
    assert header[2:9] == ["Supplier name", "VAT / tax id", "Invoice number", "Invoice date", "Currency",
                              "Total amount", "IBAN / bank account"]
    html = browser_client(alice).get(f"/jobs/{job.pk}").content.decode()
    assert html.index(">Supplier name<") < html.index(">VAT / tax id<") < html.index(">IBAN / bank account<")


def test_the_source_and_the_findings_have_their_columns(browser_client, alice, reviewed):
    from .conftest import evidenced_review_result

    einvoice = reviewed(evidenced_review_result(einvoice=True), name="rechnung.pdf")
    text = reviewed(evidenced_review_result(), name="factuur.pdf")
    older = reviewed(review_result(), name="before-evidence.pdf")  # a result from before: empty cells
    by_job = {row["Job"]: row for row in read_csv(browser_client(alice).get("/jobs/export.csv"))}
    assert by_job[str(einvoice.pk)]["Read from"] == "the e-invoice (Factur-X EN 16931)"
    assert by_job[str(einvoice.pk)]["Findings"].startswith("The IBAN on the visible page (NL91 ABNA 0417 1643 00)")
    assert (by_job[str(text.pk)]["Read from"], by_job[str(text.pk)]["Findings"]) == ("the document's text", "")
    assert by_job[str(text.pk)]["Issues"].startswith("Total amount: to check")
    assert (by_job[str(older.pk)]["Read from"], by_job[str(older.pk)]["Findings"]) == ("", "")
