"""The supplier fields finance requires on an invoice, read off any supplier's layout and checked.

Reading (``read_fields``) works on a positioned layout (``agent.layout``): a label in any of
seven languages (``agent.labels``) and its value after any separator, in the next column or
under the label; VAT ids and IBANs also anywhere by their check digits, the buyer's told apart
by the block they stand in; the total due told apart from its parts. Every value comes with its
evidence: the page, the printed line and, for a PDF, the box of its words.

Checking is a library's job: python-stdnum for the IBAN (mod-97) and VAT ids (per-country
format and check digits), python-dateutil for dates, price-parser for amounts. Each field comes
back ``present``, ``missing``, ``malformed`` or (two totals that disagree) ``to_check``, with a
short detail for Alice's note.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from ..layout import Layout
from .amounts import find_currency, find_total
from .checks import (
    ALSO_READ,
    AMOUNT_FIELDS,
    ASK,
    CURRENCIES,
    DATE_FIELDS,
    LABELS,
    MAX_TOTAL_DIGITS,
    MAX_VALUE_CHARS,
    PRINTED_CURRENCIES,
    REQUIRED,
    ROUNDING,
    SHARED_SYMBOLS,
    SYMBOLS,
    XML_ALSO_READ,
    Field,
    check_currency,
    check_iban,
    check_invoice_date,
    check_invoice_number,
    check_supplier_name,
    check_total_amount,
    check_value,
    check_vat_id,
    judge_currency,
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

__all__ = [
    "ALSO_READ", "AMOUNT_FIELDS", "ASK", "CURRENCIES", "DATE_FIELDS", "LABELS", "MAX_TOTAL_DIGITS",
    "MAX_VALUE_CHARS", "PRINTED_CURRENCIES", "REQUIRED", "ROUNDING", "SHARED_SYMBOLS", "SYMBOLS",
    "XML_ALSO_READ",
    "Field", "check_all", "check_currency", "check_iban", "check_invoice_date", "check_invoice_number",
    "check_supplier_name", "check_total_amount", "check_value", "check_vat_id", "find", "judge_currency",
    "read_fields",
]


def check_all(text: str, *, country: str | None = None, today: date | None = None) -> dict[str, dict[str, Any]]:
    """Every required field, read off plain text and checked (dates against ``today``)."""
    return read_fields(Layout.from_text(text), country=country, today=today)


# --- the fields ---------------------------------------------------------------------------


def _read(page: Page) -> tuple[dict[str, Found | None], Found | None, str, list[Found]]:
    """Each field's reading (before its check), a bank account when no IBAN, and the total's note and candidates."""
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
    return found, account, total_note, candidates


def find(text: str, name: str) -> str | None:
    """A field's value as printed in plain text ("EUR 12.00"), or None: what the reader found, unchecked."""
    found, account, _note, _candidates = _read(Page(Layout.from_text(text)))
    item = account if name == "account" else found.get(name)
    if item is None:
        return None
    return (item.printed or item.value).strip()[:MAX_VALUE_CHARS] or None


# The page prints more than one account of the issuer's to pay into.
TWO_ACCOUNTS = ("the invoice prints more than one bank account: check which one to pay (a changed account is a "
                "known fraud pattern: confirm a new one with the supplier, on a number you already know)")


def _two_accounts(result: dict[str, Any], item: Found | None, page: Page) -> None:
    """An IBAN read while the page prints another of the issuer's: to check, with each account."""
    rivals = page.memo.get("iban_rivals")
    if rivals and item is not None and result.get("status") == "present":
        result.update(status="to_check", detail=TWO_ACCOUNTS,
                      candidates=[{"value": c.value, "evidence": c.evidence(page.layout)} for c in (item, *rivals)])


def read_fields(layout: Layout, *, country: str | None = None, today: date | None = None) -> dict[str, dict[str, Any]]:
    """Every required checked read off the layout and checked, each with its evidence."""
    page = Page(layout)
    found, account, total_note, candidates = _read(page)
    results: dict[str, dict[str, Any]] = {}
    tax: TaxId | None = None
    for name in REQUIRED:
        item = found[name]
        value = item.value if item else None
        if name == "vat_id":
            label_country = item.role if item and len(item.role) == 2 else None
            checked, tax = _checked_tax_id(item, country or label_country or supplier_country(page, found))
        elif name == "invoice_date":
            checked = check_invoice_date(value, today=today)
            printed = checked.value or ""
            misread = ocr_year(item, printed, today=today or date.today()) if checked.status == "malformed" else None
            if misread is not None:
                checked = Field("to_check", misread, f"the year was read from a scan as {printed[:4]}, "
                                "an impossible year; read as a 0 misread: check it")
        elif name == "total_amount":
            checked = check_total_amount(value)
        elif name == "currency":
            checked = check_currency(value)
            if item is not None and item.rank and checked.status == "present":
                checked = Field(checked.status, checked.value, "read from the total" if item.rank == 1 else
                              "the currency printed most on the invoice" if item.rank == 2 else
                              "the currency's name written on the invoice")
            if item is not None and len(item.role) == 2 and checked.status == "present":
                checked = Field(checked.status, checked.value, "a symbol several currencies use, read by the "
                                f"country the invoice is from ({item.role})")
        elif name == "iban":
            checked = check_iban(value, account=account.value if account else None)
            item = item or account
        else:
            checked = _CHECKS[name](value)
        result = checked.as_dict()
        if name == "vat_id" and tax is not None:  # as printed; its country and normal form beside it
            result.update(country=tax.country, normalized=tax.normalized)
        result["evidence"] = item.evidence(layout) if item is not None and result["value"] is not None else None
        if name == "supplier_name" and isinstance(item, Named) and item.alternatives and checked.status == "present":
            result.update(status="to_check", detail="two names on the page could be the supplier's: check which",
                          candidates=[{"value": c.value, "evidence": c.evidence(layout)}
                                      for c in (item, *item.alternatives)])
        if name == "total_amount":
            if candidates and checked.status == "present":
                result["status"] = "to_check"
                result["detail"] = total_note
                result["candidates"] = [{"value": c.value, "evidence": c.evidence(layout)} for c in candidates]
            elif total_note and checked.status == "present":
                result["detail"] = total_note
        results[name] = result
    _two_accounts(results["iban"], found["iban"], page)
    results.update(read_terms(page, layout, found))  # the due date, net and VAT amounts (ALSO_READ)
    buyer = find_buyer(page)
    results["buyer_name"] = {**(Field("present", buyer.value, "read from the buyer's block") if buyer else
                                Field("missing", None, "no buyer name found")).as_dict(),
                             "evidence": buyer.evidence(layout) if buyer else None}
    return results


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


_CHECKS: dict[str, Callable[[str | None], Field]] = {
    "supplier_name": check_supplier_name,
    "invoice_number": check_invoice_number,
}
