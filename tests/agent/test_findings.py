"""Findings decide the field: a Factur-X invoice whose visible page disagrees with its XML on the
supplier, VAT id, number, date, total and IBAN reads *to check* on each of them, with both
readings and their evidence, and the document cannot read OK; internal rules are Alice's
findings, never requests to the supplier."""

from __future__ import annotations

from datetime import date

from agent import presentation
from agent.reading import findings, reading
from agent.review import tools, workflow
from tests.pdfs import factur_x_with_page

TODAY = date(2026, 3, 20)
# The XML (tests.pdfs.WITH_IBAN) says: Bei Spiel GmbH, DE136695976, RE-20190610/507, 10 June 2019,
# EUR 571.04, DE88 2008 0000 0970 3757 00. The page says something else for six of them.
DISAGREEING_PAGE = ["Supplier: Zander Handelshaus AG", "VAT ID: DE129273398", "Invoice number: RE-20190610/508",
                    "Invoice date: 11 July 2019", "Total due: EUR 671.04", "IBAN: NL91 ABNA 0417 1643 00"]
DISAGREE = ("supplier_name", "vat_id", "invoice_number", "invoice_date", "total_amount", "iban")


def checked_of(lines: list[str]) -> dict:
    pdf = factur_x_with_page(lines)
    return reading.validate(reading.extract(pdf, "application/pdf", today=TODAY), today=TODAY)


def test_every_field_the_page_and_the_xml_disagree_on_is_to_check_with_both_readings():
    checked = checked_of(DISAGREEING_PAGE)
    about = {f["field"]: f for f in checked["findings"] if f["code"] == "page_disagrees"}
    assert set(about) == set(DISAGREE)
    for name in DISAGREE:
        assert about[name]["blocks"] and [r["source"] for r in about[name]["readings"]] == ["xml", "page"]
        xml, page = about[name]["readings"]
        assert xml["evidence"]["source"] == "xml" and page["evidence"]  # each reading says where it was read
    settled = findings.settle(checked)
    for name in DISAGREE:
        field = settled["fields"][name]
        assert field["status"] == "to_check", name
        assert len(field["candidates"]) == 2 and field["detail"] == findings.DISAGREE
    assert settled["fields"]["currency"]["status"] == "present"  # EUR on both
    view = presentation.present(settled)
    rows = {row["name"]: row for row in view["rows"]}
    assert all(rows[name]["status_text"] == "To check" and len(rows[name]["candidates"]) == 2 for name in DISAGREE)
    assert {r["where"] for name in DISAGREE for r in (c["evidence"] for c in rows[name]["candidates"]) if r} >= {
        "read from the e-invoice", "read from page 1"}
    summary = workflow.summarize(checked)
    whole = [f for f in checked["findings"] if not f["field"]]  # the sample XML's own defect, about no field
    assert summary.outcome != "ok" and summary.needs_action and summary.text == f"{len(DISAGREE) + len(whole)} to check"


def test_a_page_that_agrees_with_the_xml_gives_no_finding_and_reads_ok():
    agreeing = ["Supplier: BEI SPIEL GMBH", "VAT ID: DE 136 695 976", "Invoice number: RE-20190610/507",
                "Invoice date: 10.06.2019", "Total due: EUR 571,04", "IBAN: DE88 2008 0000 0970 3757 00"]
    checked = checked_of(agreeing)
    assert [f for f in checked["findings"] if f["code"] == "page_disagrees"] == []


def test_an_internal_rule_is_alices_finding_not_a_request_to_the_supplier():
    text = ("Supplier: Zebra Ltd\nVAT ID: DE136695976\nInvoice no.: INV-7\nInvoice date: 2 March 2026\n"
            "Total due: 5.00 INR\nIBAN: DE89 3704 0044 0532 0130 00\n")
    checked = reading.validate(reading.extract(None, "text/plain", text, today=TODAY), today=TODAY)
    settled = findings.settle(checked)
    (rule,) = [f for f in settled["findings"] if f["code"] == "currency_not_paid"]
    assert rule["field"] == "currency" and rule["blocks"] and "INR" in rule["words"]
    assert settled["fields"]["currency"]["status"] == "to_check"
    note = tools.review_note({**settled, "document_name": "", "source": "inline", "pages": 1, "warnings": []})
    assert "To ask the supplier" not in note and "not a currency your team pays in" in note
    accepted = findings.settle(settled, {findings.key(rule): findings.acceptance(by="alice", at="", reason="ok")})
    assert accepted["fields"]["currency"]["status"] == "present"
    assert workflow.summarize(accepted).outcome == "ok"


def test_a_legacy_string_reads_as_a_blocking_finding_and_what_has_no_words_is_dropped():
    assert findings.read("the page says another total") == {
        "code": "finding", "field": None, "words": "the page says another total", "blocks": True}
    assert findings.read({"code": "x"}) is None and findings.read(42) is None and findings.read("  ") is None
    assert findings.read({"code": "new_supplier", "words": "first invoice", "blocks": False})["blocks"] is False
