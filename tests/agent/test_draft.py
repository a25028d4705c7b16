"""The review note never says a printed value is absent.

Alice's part says what the review knows ("not found by the review"); the supplier's part
asks, as requests, only for what was not found or failed its check; a scan asks only for a
readable copy; values to check and findings (the page against the e-invoice) are Alice's
alone, and a changed IBAN is flagged for a phone call.
"""

from __future__ import annotations

import re
from datetime import date

import pytest

from agent import samples
from agent.reading import fields, reading
from agent.review import tools

TODAY = date(2026, 6, 1)
SUPPLIER_PART = "To ask the supplier (ready to paste into your email):\n"
# What an accusation sounds like: the supplier's part says none of these, whatever the outcome.
ACCUSATIONS = re.compile(r"not on the invoice|missing|absent|does not show|doesn't show|is not printed|"
                         r"you did not|you forgot|no \w+ (?:was )?found|not found|lacks|without (?:a|an|the) ",
                         re.IGNORECASE)
PRINTED = ("Nordlicht Bürobedarf GmbH\nHafenstraße 12, 20457 Hamburg\n\n"
           "Supplier: Nordlicht Bürobedarf GmbH\nVAT ID: DE136695976\nInvoice no.: INV-2026-0142\n"
           "Invoice date: 14 March 2026\nCurrency: EUR\nTotal due: EUR 1,333.87\n"
           "IBAN: DE89 3704 0044 0532 0130 00\n")


def checked_of(text: str | None = None, *, content: bytes | None = None, media_type: str = "text/plain",
               **overrides) -> dict:
    """What the draft step reads (the validate step's output), from text or a document."""
    extracted = reading.extract(content, media_type, text, today=TODAY)
    checked = reading.validate(extracted, today=TODAY)
    return {**checked, "pages": extracted["pages"], "has_text": extracted["has_text"],
            "source": "inline" if content is None else "document", "document_name": "invoice.pdf",
            "warnings": extracted["warnings"], **overrides}


def present(value: str, line: str, page: int = 1) -> dict:
    return {"status": "present", "value": value, "detail": "",
            "evidence": {"source": "text", "page": page, "text": line, "box": None, "element": None}}


def all_present() -> dict:
    return {
        "supplier_name": present("Nordlicht Bürobedarf GmbH", "Nordlicht Bürobedarf GmbH"),
        "vat_id": present("DE136695976", "USt-IdNr. DE136695976"),
        "invoice_number": present("INV-2026-0142", "Rechnungsnr. INV-2026-0142"),
        "invoice_date": present("2026-03-14", "Datum 14. März 2026"),
        "currency": present("EUR", "Gesamtbetrag 1.333,87 €"),
        "total_amount": present("1333.87", "Gesamtbetrag 1.333,87 €"),
        "iban": present("DE89 3704 0044 0532 0130 00", "IBAN DE89370400440532013000"),
    }


def checked_with(found: dict, **overrides) -> dict:
    return {"fields": found, "reading": "text", "findings": [], "readable": True, "pages": 1, "has_text": True,
            "source": "document", "document_name": "invoice.pdf", "warnings": [], **overrides}


def parts(note: str) -> tuple[str, str]:
    """Alice's part and the supplier's part (empty when there is nothing to ask)."""
    alice, _, supplier = note.partition(SUPPLIER_PART)
    return alice, supplier


# --- a document whose values are all printed ----------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: checked_of(PRINTED),
    lambda: checked_of(content=samples.CLEAN_PDF.read_bytes(), media_type="application/pdf"),
    lambda: checked_of(content=samples.DOCX.read_bytes(), media_type=reading.media_type(samples.DOCX.read_bytes())),
], ids=["text", "pdf", "docx"])
def test_a_document_whose_values_are_all_printed_asks_the_supplier_nothing(make):
    checked = make()
    assert {checked["fields"][name]["status"] for name in fields.REQUIRED} == {"present"}
    note = tools.review_note(checked)
    _alice, supplier = parts(note)
    assert supplier == "" and "nothing to ask the supplier" in note
    assert not re.search(r"not on the invoice|missing|not found", note, re.IGNORECASE), note


def test_printed_values_the_review_did_not_read_are_never_said_to_be_absent():
    """Real invoices print their values in ways a reader may miss (other languages, other
    layouts): whatever this reader found, the note never tells anyone they are absent."""
    text = ("Bloemenhandel De Tulp B.V.\nKerkstraat 12, 1017 GC Amsterdam\nBtw-nummer: NL123456782B01\n"
            "Factuurnummer: 993548900\nFactuurdatum: 19 april 2026\n\nTotaal € 717,97\n"
            "Gelieve te betalen op IBAN NL91 ABNA 0417 1643 00\n")
    note = tools.review_note(checked_of(text))
    alice, supplier = parts(note)
    assert not re.search(r"not on the invoice|missing|absent", note, re.IGNORECASE), note
    assert not ACCUSATIONS.search(supplier), supplier
    if "Not found by the review" in alice:  # what it did not read, Alice looks for herself first
        assert "(look on the document before asking the supplier)" in alice


# --- every field outcome's wording --------------------------------------------------------


@pytest.mark.parametrize("name", fields.REQUIRED)
@pytest.mark.parametrize("status", ["missing", "malformed"])
def test_each_field_outcome_is_asked_for_as_a_request(name, status):
    found = all_present()
    if status == "missing":
        found[name] = {"status": "missing", "value": None, "detail": f"no {fields.LABELS[name]} found",
                       "evidence": None}
    else:
        found[name] = {"status": "malformed", "value": "XX00 1", "detail": "not valid: wrong length",
                       "evidence": {"source": "text", "page": 1, "text": "XX00 1", "box": None, "element": None}}
    alice, supplier = parts(tools.review_note(checked_with(found)))
    asks = [line for line in supplier.splitlines() if line.startswith("- ")]
    assert len(asks) == 1, supplier
    ask = asks[0]
    if status == "missing":
        assert ask == f"- Could you confirm {fields.ASK[name]}?"
        assert f"Not found by the review (look on the document before asking the supplier):\n- " \
               f"{fields.LABELS[name]}\n" in alice
    else:
        assert ask == f"- Could you check {fields.ASK[name]}? We read XX00 1 (not valid: wrong length)."
        assert f"Needs correcting:\n- {fields.LABELS[name]}: XX00 1 (not valid: wrong length)\n" in alice
    assert not ACCUSATIONS.search(supplier), supplier
    assert "missing" not in alice.lower() and "not on the invoice" not in alice


def test_a_failed_check_without_a_value_is_asked_for_without_quoting_nothing():
    found = all_present()
    found["vat_id"] = {"status": "malformed", "value": None, "detail": "the e-invoice gives no VAT id scheme",
                       "evidence": None}
    _, supplier = parts(tools.review_note(checked_with(found)))
    assert "- Could you check your VAT id, with its country prefix? The e-invoice gives no VAT id scheme." in supplier
    assert "None" not in supplier


@pytest.mark.parametrize("tone, opening, closing", [
    ("neutral", "Regarding your invoice INV-7 of 2 March 2026: ", "Thank you."),
    ("friendly", "Hi, thanks for your invoice INV-7 of 2 March 2026! ", "Thanks a lot!"),
    ("formal", "Dear Sir or Madam, regarding your invoice INV-7 of 2 March 2026: ", "We look forward to your reply."),
])
def test_the_note_for_the_supplier_follows_the_tone(tone, opening, closing):
    text = ("Supplier: Zebra Ltd\nVAT ID: DE136695976\nInvoice no.: INV-7\nInvoice date: 2 March 2026\n"
            "Total due: EUR -5.00\n")
    note = tools.review_note(checked_of(text), tone=tone)
    supplier = parts(note)[1].split("\n")
    assert supplier[0].startswith(opening) and supplier[-1].endswith(closing)
    # A negative total is the team's own rule (a credit note): Alice's finding, never asked of the supplier.
    assert "total" not in parts(note)[1] and "- The total is negative: this looks like a credit note" in note
    assert "- Could you confirm the IBAN of the account we should pay into?" in note


# --- a document with no text at all -------------------------------------------------------


def test_a_scan_asks_only_for_a_readable_copy_and_names_no_field(no_ocr):
    checked = checked_of(content=samples.SCANNED_PDF.read_bytes(), media_type="application/pdf")
    assert checked["readable"] is False
    note = tools.review_note(checked)
    alice, supplier = parts(note)
    assert "No text could be read from the document, so none of its fields could be checked." in alice
    assert [line for line in supplier.splitlines() if line.startswith("- ")] == [
        "- Please send us a readable copy of the invoice, preferably a PDF with selectable text: we could not read "
        "the details of the copy we received."]
    assert supplier.startswith("Regarding your invoice: ")
    named = [label for label in [*fields.LABELS.values(), *fields.ASK.values()] if label.lower() in note.lower()]
    assert named == [] and "Found:" not in note and "Not found" not in note


def test_an_unreadable_e_invoice_without_visible_text_asks_for_it_again():
    found = {name: {"status": "missing", "value": None, "detail": "", "evidence": None} for name in fields.REQUIRED}
    checked = checked_with(found, readable=False, has_text=False, reading="e-invoice",
                           findings=["The XML is not well-formed (line 3): it cannot be read."])
    alice, supplier = parts(tools.review_note(checked))
    assert "The e-invoice could not be read, and the document has no visible text to read instead." in alice
    assert "Findings:\n- The XML is not well-formed (line 3): it cannot be read.\n" in alice
    assert "- Please send us the e-invoice again, or the invoice as a PDF with selectable text" in supplier
    assert not ACCUSATIONS.search(supplier)


# --- values to check, and findings: Alice's alone ---------------------------------------


def test_a_value_to_check_is_for_alice_with_both_readings_never_asked_of_the_supplier():
    found = all_present()
    found["total_amount"] = {
        "status": "to_check", "value": None, "detail": "two totals that disagree", "evidence": None,
        "candidates": [
            {"value": "1333.87", "evidence": {"source": "text", "page": 1, "text": "Gesamtbetrag 1.333,87 €",
                                              "box": None, "element": None}},
            {"value": "1120.90", "evidence": {"source": "text", "page": 2, "text": "Zu zahlen 1.120,90 €",
                                              "box": None, "element": None}},
        ],
    }
    note = tools.review_note(checked_with(found))
    alice, supplier = parts(note)
    assert "6 of 7 required fields found and valid, 1 to check." in alice
    assert ('- Total amount: EUR 1,333.87 (page 1: "Gesamtbetrag 1.333,87 €") or EUR 1,120.90 '
            '(page 2: "Zu zahlen 1.120,90 €") (two totals that disagree)') in alice
    assert supplier == "" and "Nothing to ask the supplier: check the points above yourself first." in note


def test_a_value_to_check_beside_a_question_for_the_supplier_stays_out_of_the_question():
    found = all_present()
    found["invoice_date"] = {"status": "missing", "value": None, "detail": "", "evidence": None}
    found["total_amount"] = {"status": "to_check", "value": None, "detail": "", "evidence": None,
                             "candidates": [{"value": "1333.87", "evidence": None},
                                            {"value": "1120.90", "evidence": None}]}
    _, supplier = parts(tools.review_note(checked_with(found)))
    asks = [line for line in supplier.splitlines() if line.startswith("- ")]
    assert asks == ["- Could you confirm the invoice date?"]
    assert "total" not in supplier.lower()


def test_an_e_invoice_whose_page_shows_another_iban_is_flagged_for_a_phone_call():
    xml = lambda value, element: {"status": "present", "value": value, "detail": "",  # noqa: E731
                                  "evidence": {"source": "xml", "page": None, "text": value, "box": None,
                                               "element": element}}
    found = {name: xml(field["value"], f"ram:{name}") for name, field in all_present().items()}
    finding = ("The visible page shows the IBAN NL91 ABNA 0417 1643 00, the e-invoice DE89 3704 0044 0532 0130 00: "
               "a changed IBAN is a known fraud pattern.")
    checked = checked_with(found, reading="e-invoice: Factur-X EN 16931", findings=[finding])
    note = tools.review_note(checked)
    alice, supplier = parts(note)
    assert "Read from the e-invoice (Factur-X EN 16931). The visible page was compared with it." in alice
    assert "7 of 7 required fields found and valid, 1 finding." in alice
    assert f"Findings:\n- {finding}\n- {tools.PHONE_CHECK}\n" in alice
    assert "by phone" in tools.PHONE_CHECK and "not one from this invoice" in tools.PHONE_CHECK
    # Nothing about it goes to the supplier: the email may be the very channel that changed it.
    assert supplier == "" and "Nothing to ask the supplier: check the points above yourself first." in note


def test_a_finding_that_is_not_about_the_account_asks_for_no_phone_call():
    checked = checked_with(all_present(), reading="e-invoice: XRechnung 3.0 (UBL)",
                           findings=["The totals do not add up: 100.00 + 19.00 VAT is not 120.00 (EN 16931 BR-CO-15)."])
    alice, _ = parts(tools.review_note(checked))
    assert "BR-CO-15" in alice and tools.PHONE_CHECK not in alice


def test_a_real_factur_x_whose_page_shows_another_iban_tells_alice_and_asks_the_supplier_nothing_about_it():
    from tests.pdfs import CHANGED_IBAN_PAGE, factur_x_with_page

    checked = checked_of(content=factur_x_with_page(CHANGED_IBAN_PAGE), media_type="application/pdf")
    note = tools.review_note(checked)
    alice, supplier = parts(note)
    finding = next(line for line in alice.splitlines() if line.startswith("- The IBAN on the visible page"))
    assert "NL91 ABNA 0417 1643 00" in finding and "by phone" in finding
    assert alice.count("by phone") == 1  # the finding says it; no second reminder
    assert "IBAN" not in supplier and "NL91" not in supplier


# --- what the invoice also says ------------------------------------------------------------


def test_the_due_date_net_vat_and_buyer_are_listed_for_alice_and_never_asked_of_the_supplier():
    also = {"due_date": present("2026-04-13", "Fällig am 13.04.2026"),
            "net_amount": present("1120.90", "Netto 1.120,90"), "vat_amount": present("212.97", "MwSt 19 % 212,97"),
            "buyer_name": present("Hafenbüro KG", "Rechnung an: Hafenbüro KG")}
    note = tools.review_note(checked_with(all_present(), also_read=also))
    alice, supplier = parts(note)
    assert ("Also on the invoice:\n- Due date: 13 April 2026\n- Net amount: EUR 1,120.90\n"
            "- VAT amount: EUR 212.97\n- Buyer name: Hafenbüro KG\n") in alice
    assert supplier == "" and "adds up" not in note and "Net plus VAT" not in note  # 1,120.90 + 212.97 = 1,333.87


def test_net_and_vat_that_do_not_add_up_to_the_total_are_said_with_the_figures():
    also = {"net_amount": present("1120.90", "Netto 1.120,90"), "vat_amount": present("112.97", "MwSt 112,97")}
    alice, _ = parts(tools.review_note(checked_with(all_present(), also_read=also)))
    assert "- Net plus VAT (1,233.87) is not the total (1,333.87): check which amount is due" in alice
    rounded = {**also, "vat_amount": present("212.99", "MwSt 212,99")}  # two cents of rounding are no mismatch
    assert "Net plus VAT" not in tools.review_note(checked_with(all_present(), also_read=rounded))


def test_a_note_without_any_of_them_has_no_such_part():
    assert "Also on the invoice" not in tools.review_note(checked_with(all_present()))
    assert "Also on the invoice" not in tools.review_note(checked_with(all_present(), also_read={}))
