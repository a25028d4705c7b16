"""The field checks on values suppliers really print, and the note's wording per tone."""

from __future__ import annotations

from datetime import date

import pytest

from agent import fields, tools

TODAY = date(2026, 6, 1)


@pytest.mark.parametrize("value, status, shown", [
    ("DE136695976", "present", "DE136695976"),
    ("DE 136 695 976", "present", "DE136695976"),
    ("DE136695977", "malformed", "DE136695977"),  # one check digit off
    ("FR40303265045", "present", "FR40303265045"),
    ("EL094259216", "present", "EL094259216"),  # Greece prints EL, not GR
    ("123456789", "malformed", "123456789"),  # no country prefix and no country given
])
def test_vat_ids_are_checked_per_country(value, status, shown):
    field = fields.check_vat_id(value)
    assert (field.status, field.value) == (status, shown), field


def test_a_vat_id_without_prefix_is_checked_against_the_given_country():
    assert fields.check_vat_id("136695976", country="DE").value == "DE136695976"


@pytest.mark.parametrize("value, status, shown, detail", [
    ("14 March 2026", "present", "2026-03-14", ""),
    ("14.03.2026", "present", "2026-03-14", ""),
    ("03/04/2026", "present", "2026-04-03", "day and month are ambiguous; read as day first"),
    ("14 March", "malformed", "14 March", "not a full date (day, month and year)"),  # no year: not 2000
    ("March 2026", "malformed", "March 2026", "not a full date (day, month and year)"),
    ("31.02.2026", "malformed", "31.02.2026", "not a date"),
    ("14 March 2027", "malformed", "2027-03-14", "the invoice date is in the future"),
])
def test_invoice_dates(value, status, shown, detail):
    assert fields.check_invoice_date(value, today=TODAY) == fields.Field(status, shown, detail)


@pytest.mark.parametrize("value, status, shown", [
    ("EUR 1,333.87", "present", "1333.87"),
    ("1.333,87 €", "present", "1333.87"),
    ("EUR -1,333.87", "malformed", "-1333.87"),  # price-parser alone drops the sign
    ("-€120", "malformed", "-120"),
    ("(100.00)", "malformed", "-100.00"),
    ("0.00", "malformed", "0.00"),
    ("to be confirmed", "malformed", "to be confirmed"),
])
def test_total_amounts(value, status, shown):
    field = fields.check_total_amount(value)
    assert (field.status, field.value) == (status, shown), field


def test_an_iban_is_checked_by_mod_97():
    assert fields.check_iban("DE89 3704 0044 0532 0130 00").status == "present"
    bad = fields.check_iban("DE89 3704 0044 0532 0130 01")
    assert bad.status == "malformed" and "check digits" in bad.detail


@pytest.mark.parametrize("tone, opening, closing", [
    ("neutral", "Regarding your invoice INV-7 of 2 March 2026: ", "Thank you."),
    ("friendly", "Hi, thanks for your invoice INV-7 of 2 March 2026! ", "Thanks a lot!"),
    ("formal", "Dear Sir or Madam, regarding your invoice INV-7 of 2 March 2026: ", "We look forward to your reply."),
])
def test_the_note_for_the_supplier_follows_the_tone(tone, opening, closing):
    text = ("Supplier: Zebra Ltd\nVAT ID: DE136695976\nInvoice no.: INV-7\nInvoice date: 2 March 2026\n"
            "Total due: EUR -5.00\n")
    checked = {"fields": fields.check_all(text), "pages": 1, "has_text": True, "source": "inline",
               "document_name": "", "warnings": []}
    note = tools.review_note(checked, tone=tone)
    supplier = note.split("To ask the supplier (ready to paste into your email):\n")[1].split("\n")
    assert supplier[0].startswith(opening) and supplier[-1].endswith(closing)
    assert "- The total amount due: the invoice shows -5.00 (the total is negative" in note
    assert "- The IBAN of the account we should pay into: it is not on the invoice." in note
