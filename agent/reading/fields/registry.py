"""Every field the review reads, each declared once: its label (the page's, the note's and the export's column),
what the note asks the supplier for, what the model is told it is, what kind of value it holds, how a page is read
for it and how a value given on its own is checked. The readers, the checks, the note, the model's schema and the
export iterate over ``FIELDS``; adding a field is adding its declaration here (docs/fields.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ..layout import Layout
from .amounts import find_currency, find_total
from .checks import (
    Field,
    check_currency,
    check_iban,
    check_invoice_date,
    check_invoice_number,
    check_supplier_name,
    check_total_amount,
    check_vat_id,
)
from .dates import find_invoice_date, ocr_year
from .identifiers import TaxFound, find_iban, find_vat_id, supplier_country
from .numbers import find_invoice_number
from .page import Found, Page, find_labelled
from .parties import Named, find_buyer, find_supplier
from .patterns import ACCOUNT_LABEL
from .taxids import TaxId, identify
from .terms import read_terms
from .values import parse_identifier

# Which fields the review asks for: the seven finance requires (asked of the supplier when missing); those read
# when the invoice prints them, for what accounts payable does next (pay by the due date, book net and VAT apart,
# see whom it is addressed to), never asked; those read from an e-invoice's XML only (no page prints them in one
# agreed place).
ASKED, READ_ALSO, FROM_XML = "required", "also read", "xml only"
# What a value is: compared, shown and exported as such (an ISO date, an amount in the invoice's currency, a
# party's name: the same name when one holds the other).
TEXT, DATE, AMOUNT, NAME = "text", "date", "amount", "name"


@dataclass
class Reading:
    """One page's reading, as every field's reader takes it: what each reader found, before its check."""

    page: Page
    found: dict[str, Found | None]
    account: Found | None  # a bank account, when no IBAN
    total_note: str
    candidates: list[Found]  # totals that could each be the one due
    country: str | None
    today: date | None
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def layout(self) -> Layout:
        return self.page.layout

    def result(self, checked: Field, item: Found | None) -> dict[str, Any]:
        """A checked value as the review gives it, with its evidence when it has a value."""
        result = checked.as_dict()
        result["evidence"] = item.evidence(self.layout) if item is not None and result["value"] is not None else None
        return result

    def terms(self, name: str) -> dict[str, Any]:
        """The due date, net or VAT amount: read together, once (they confirm each other)."""
        if "terms" not in self.memo:
            self.memo["terms"] = read_terms(self.page, self.layout, self.found)
        terms: dict[str, Any] = self.memo["terms"][name]
        return terms


def read_page(page: Page, *, country: str | None = None, today: date | None = None) -> Reading:
    """What each required field's finder reads off the page, a bank account when no IBAN, and the total's note."""
    vat = find_vat_id(page)
    total, total_note, candidates = find_total(page)
    number = find_invoice_number(page)
    found: dict[str, Found | None] = {
        "supplier_name": find_supplier(page, vat),
        "vat_id": vat,
        "invoice_number": number,
        "invoice_date": find_invoice_date(page, number),
        "total_amount": total,
        "iban": find_iban(page),
    }
    found["currency"] = find_currency(page, total, lambda: supplier_country(page, found))
    account = None if found["iban"] else find_labelled(page, ACCOUNT_LABEL, parse_identifier)
    return Reading(page, found, account, total_note, candidates, country, today)


# --- each field's reading of a page, checked --------------------------------------------------------------------


def _value(reading: Reading, name: str) -> tuple[Found | None, str | None]:
    item = reading.found[name]
    return item, item.value if item else None


def _supplier_name(reading: Reading) -> dict[str, Any]:
    item, value = _value(reading, "supplier_name")
    checked = check_supplier_name(value)
    result = reading.result(checked, item)
    if isinstance(item, Named) and item.alternatives and checked.status == "present":
        result.update(status="to_check", detail="two names on the page could be the supplier's: check which",
                      candidates=[{"value": c.value, "evidence": c.evidence(reading.layout)}
                                  for c in (item, *item.alternatives)])
    return result


def _vat_id(reading: Reading) -> dict[str, Any]:
    item, _ = _value(reading, "vat_id")
    label_country = item.role if item and len(item.role) == 2 else None
    country = reading.country or label_country or supplier_country(reading.page, reading.found)
    checked, tax = _checked_tax_id(item, country)
    result = checked.as_dict()
    if tax is not None:  # as printed; its country and normal form beside it
        result.update(country=tax.country, normalized=tax.normalized)
    result["evidence"] = item.evidence(reading.layout) if item is not None and result["value"] is not None else None
    return result


def _checked_tax_id(item: Found | None, country: str | None) -> tuple[Field, TaxId | None]:
    """The seller's tax id as printed, checked by its scheme (its label's, its prefix's or ``country``'s)."""
    if item is None:
        return check_vat_id(None), None
    schemes = item.schemes if isinstance(item, TaxFound) else ()
    tax = identify(item.value, country=country, keys=schemes)
    if tax is None:
        checked = check_vat_id(item.value, country=country)
        return Field(checked.status, item.value if checked.status != "present" else checked.value, checked.detail), None
    how = "format and check digits" if tax.checked else "format only: this scheme has no check digits"
    return Field("present", " ".join(tax.printed.split()), f"valid {tax.country} {tax.scheme} ({how})"), tax


def _invoice_number(reading: Reading) -> dict[str, Any]:
    item, value = _value(reading, "invoice_number")
    return reading.result(check_invoice_number(value), item)


def _invoice_date(reading: Reading) -> dict[str, Any]:
    item, value = _value(reading, "invoice_date")
    checked = check_invoice_date(value, today=reading.today)
    printed = checked.value or ""
    today = reading.today or date.today()
    misread = ocr_year(item, printed, today=today) if checked.status == "malformed" else None
    if misread is not None:
        checked = Field("to_check", misread, f"the year was read from a scan as {printed[:4]}, "
                        "an impossible year; read as a 0 misread: check it")
    return reading.result(checked, item)


def _currency(reading: Reading) -> dict[str, Any]:
    item, value = _value(reading, "currency")
    checked = check_currency(value)
    if item is not None and item.rank and checked.status == "present":
        checked = Field(checked.status, checked.value, "read from the total" if item.rank == 1 else
                        "the currency printed most on the invoice" if item.rank == 2 else
                        "the currency's name written on the invoice")
    if item is not None and len(item.role) == 2 and checked.status == "present":
        checked = Field(checked.status, checked.value, "a symbol several currencies use, read by the "
                        f"country the invoice is from ({item.role})")
    return reading.result(checked, item)


def _total_amount(reading: Reading) -> dict[str, Any]:
    item, value = _value(reading, "total_amount")
    checked = check_total_amount(value)
    result = reading.result(checked, item)
    if reading.candidates and checked.status == "present":
        result["status"] = "to_check"
        result["detail"] = reading.total_note
        result["candidates"] = [{"value": c.value, "evidence": c.evidence(reading.layout)} for c in reading.candidates]
    elif reading.total_note and checked.status == "present":
        result["detail"] = reading.total_note
    return result


# The page prints more than one account of the issuer's to pay into.
TWO_ACCOUNTS = ("the invoice prints more than one bank account: check which one to pay (a changed account is a "
                "known fraud pattern: confirm a new one with the supplier, on a number you already know)")


def _iban(reading: Reading) -> dict[str, Any]:
    item, value = _value(reading, "iban")
    account = reading.account
    result = reading.result(check_iban(value, account=account.value if account else None), item or account)
    rivals = reading.page.memo.get("iban_rivals")  # another of the issuer's accounts printed
    if rivals and item is not None and result.get("status") == "present":
        result.update(status="to_check", detail=TWO_ACCOUNTS,
                      candidates=[{"value": c.value, "evidence": c.evidence(reading.layout)} for c in (item, *rivals)])
    return result


def _buyer_name(reading: Reading) -> dict[str, Any]:
    buyer = find_buyer(reading.page)
    checked = Field("present", buyer.value, "read from the buyer's block") if buyer else \
        Field("missing", None, "no buyer name found")
    return {**checked.as_dict(), "evidence": buyer.evidence(reading.layout) if buyer else None}


def _term(name: str) -> Callable[[Reading], dict[str, Any]]:
    return lambda reading: reading.terms(name)


# --- each field's check of a value given on its own (typed by a person, or suggested by a model) -------------------


def _plain(check: Callable[[str | None], Field]) -> Callable[..., Field]:
    return lambda value, **_context: check(value)


def _checked_currency(value: str | None, *, paid: frozenset[str] | None = None, **_context: Any) -> Field:
    return check_currency(value, paid=paid)


def _checked_vat_id(value: str | None, *, country: str | None = None, **_context: Any) -> Field:
    return check_vat_id(value, country=country)


def _checked_invoice_date(value: str | None, *, today: date | None = None, **_context: Any) -> Field:
    return check_invoice_date(value, today=today)


# --- the declarations ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    """One field: all the review needs to read, check, show, ask for and export it."""

    name: str
    label: str  # on the page, in the note, the export's column
    kind: str  # ASKED, READ_ALSO or FROM_XML
    value: str = TEXT  # TEXT, DATE, AMOUNT or NAME
    read: Callable[[Reading], dict[str, Any]] | None = None  # a page's reading, checked; None: from XML only
    check: Callable[..., Field] | None = None  # a value given on its own: (value, country=, today=, paid=)
    ask: str = ""  # what the note asks the supplier for, when a required field is missing
    describe: str = ""  # what the model is told the field is


FIELDS: tuple[Declared, ...] = (
    Declared("supplier_name", "Supplier name", ASKED, NAME, read=_supplier_name, check=_plain(check_supplier_name),
             ask="your company's legal name", describe="The supplier's (issuer's) legal name, as printed."),
    Declared("vat_id", "VAT / tax id", ASKED, read=_vat_id, check=_checked_vat_id,
             ask="your VAT id, with its country prefix",
             describe="The supplier's VAT id with its country prefix, as printed."),
    Declared("invoice_number", "Invoice number", ASKED, read=_invoice_number, check=_plain(check_invoice_number),
             ask="the invoice number", describe="The invoice number, as printed."),
    Declared("invoice_date", "Invoice date", ASKED, DATE, read=_invoice_date, check=_checked_invoice_date,
             ask="the invoice date", describe="The invoice's issue date as YYYY-MM-DD."),
    Declared("currency", "Currency", ASKED, read=_currency, check=_checked_currency,
             ask="the currency of the invoice",
             describe="The currency of the total as an ISO 4217 code, such as EUR."),
    Declared("total_amount", "Total amount", ASKED, AMOUNT, read=_total_amount, check=_plain(check_total_amount),
             ask="the total amount due",
             describe="The grand total due, VAT included, as a plain decimal such as 1234.50."),
    Declared("iban", "IBAN / bank account", ASKED, read=_iban, check=_plain(check_iban),
             ask="the IBAN of the account we should pay into",
             describe="The IBAN of the supplier's account to pay into, as printed."),
    Declared("due_date", "Due date", READ_ALSO, DATE, read=_term("due_date")),
    Declared("net_amount", "Net amount", READ_ALSO, AMOUNT, read=_term("net_amount")),
    Declared("vat_amount", "VAT amount", READ_ALSO, AMOUNT, read=_term("vat_amount")),
    Declared("buyer_name", "Buyer name", READ_ALSO, NAME, read=_buyer_name),
    # EN 16931 BT-83 (CII's PaymentReference, UBL's PaymentID): the reference the payment must carry.
    Declared("payment_reference", "Payment reference", FROM_XML),
)
BY_NAME = {declared.name: declared for declared in FIELDS}


def named(kind: str) -> tuple[str, ...]:
    """The names of the fields of one kind, in their declared order."""
    return tuple(declared.name for declared in FIELDS if declared.kind == kind)


def valued(value: str) -> tuple[str, ...]:
    """The names of the fields whose value is a date (``DATE``), an amount (``AMOUNT``) or a name (``NAME``)."""
    return tuple(declared.name for declared in FIELDS if declared.value == value)


def check_value(name: str, value: str | None, *, country: str | None = None, today: date | None = None,
                paid: frozenset[str] | None = None) -> Field:
    """The check of one required field's value, given on its own (a value a person typed, or a
    model suggested): the same checks the review runs on what it reads."""
    check = BY_NAME[name].check
    if check is None:
        raise KeyError(name)  # a field read, never typed nor suggested
    return check(value, country=country, today=today, paid=paid)


def read_fields(layout: Layout, *, country: str | None = None, today: date | None = None) -> dict[str, dict[str, Any]]:
    """Every field a page prints, read off the layout and checked, each with its evidence."""
    reading = read_page(Page(layout), country=country, today=today)
    return {declared.name: declared.read(reading) for declared in FIELDS if declared.read is not None}
