"""The field checks on values suppliers really print, and the note's wording per tone."""

from __future__ import annotations

import signal
from contextlib import contextmanager
from datetime import date

import pytest

from agent import fields, tools, workflow
from tests import hostile

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


# --- the field patterns on hostile text ---------------------------------------------------
#
# Inline text may be 100,000 characters. A pattern whose quantifiers share the blanks after
# a label tries every way of splitting them before it gives up: cubic time, minutes for a
# few KB. Each case below is at the maximum size and must finish within a generous bound
# (an interval timer interrupts the regex engine if it does not).

MAX_TEXT = workflow.MAX_INLINE_CHARS
BOUND = 1.0  # seconds, for work the patterns do in a few milliseconds
SAMPLE_LABELS = [
    ("supplier_name", "Supplier"), ("supplier_name", "Supplier name"), ("vat_id", "VAT"),
    ("vat_id", "VAT reg no"), ("vat_id", "Tax id"), ("invoice_number", "Invoice no"),
    ("invoice_number", "Invoice number"), ("invoice_date", "Invoice date"), ("invoice_date", "Date of issue"),
    ("currency", "Currency"), ("total_amount", "Total"), ("total_amount", "Total amount"),
    ("total_amount", "Grand total"), ("iban", "IBAN"), ("account", "Bank account no"),
]


def _fill(unit: str, size: int = MAX_TEXT) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def hostile_texts(label: str) -> dict[str, tuple[str, str | None]]:
    """Shapes of text that make a backtracking label pattern slow: text, the value to find."""
    rest = MAX_TEXT - len(label)
    return {
        "blanks after the label": (label + " " * rest, None),
        "tabs after the label": (label + "\t" * rest, None),
        "blanks and tabs mixed": (label + _fill(" \t", rest), None),
        "blanks then a colon": (label + " " * (rest - 1) + ":", None),
        "blanks around a colon": (label + " " * (rest // 2) + ":" + " " * (rest - rest // 2 - 1), None),
        "colons and blanks": (label + _fill(" :", rest), None),
        "the label repeated": (_fill(label + " "), None),
        "many lines of label and blanks": (_fill(label + " " * 200 + "\n"), None),
        "many lines of label, blanks, colon": (_fill(label + " " * 100 + ":\n"), None),
        "a value, then blanks to the end": (label + ": 42" + " " * (rest - 4), "42"),
        "a value, blanks, one more word": (label + ": 42" + " " * (rest - 6) + " x",
                                           ("42" + " " * rest)[:fields.MAX_VALUE_CHARS]),
    }


@contextmanager
def finishes_within(seconds: float):
    """Fail (TimeoutError) if the block runs longer than ``seconds``; the regex engine checks signals."""
    def interrupt(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# What the reader makes of "<label>: 42" for each sample label's field ("account" is the IBAN's fallback).
VALUE_42 = {"invoice_number": "42", "total_amount": "42.00", "account": "42"}


@pytest.mark.parametrize("shape", list(hostile_texts("Total")))
@pytest.mark.parametrize("name, label", SAMPLE_LABELS)
def test_each_field_pattern_is_fast_on_hostile_text(name, label, shape):
    text, expected = hostile_texts(label)[shape]
    assert len(text) == MAX_TEXT
    with finishes_within(BOUND):
        checked = fields.check_all(text, today=TODAY)
    value = checked["iban" if name == "account" else name]["value"]
    if expected is None:
        assert value is None or name == "invoice_date", (name, value)  # a date label alone finds nothing either
    elif name in VALUE_42:
        assert value == VALUE_42[name]


@pytest.mark.parametrize("shape", list(hostile_texts("Total")))
def test_checking_every_field_is_fast_on_hostile_text(shape):
    # Every label's hostile lines in one text of the maximum size, checked as the workflow does.
    lines = [hostile_texts(label)[shape][0][:MAX_TEXT // len(SAMPLE_LABELS)] for _, label in SAMPLE_LABELS]
    text = "\n".join(lines)[:MAX_TEXT]
    with finishes_within(BOUND * 2):
        checked = fields.check_all(text, today=TODAY)
    assert set(checked) == set(fields.REQUIRED)


def test_three_and_a_half_kb_of_total_and_spaces_is_checked_at_once():
    text = hostile.total_and_spaces()
    assert len(text) == 3_600
    with finishes_within(BOUND):
        checked = fields.check_all(text, today=TODAY)
    assert checked["total_amount"]["status"] == "missing"


def test_a_label_split_over_two_lines_is_not_a_label():
    # "Invoice" at the end of one line and "number: 7" on the next are not a label and its value.
    assert fields.check_all("Invoice\nnumber: 7")["invoice_number"]["value"] is None
    assert fields.check_all("Invoice\nInvoice number: 7")["invoice_number"]["value"] == "7"
    assert fields.check_all("Total amount:\nTotal:  EUR 5.00 \r\n")["total_amount"]["value"] == "5.00"
