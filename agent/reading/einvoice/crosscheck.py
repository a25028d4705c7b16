"""The visible page against the XML: every field on which they disagree, as a finding with both readings."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from agent.reading import findings as finding_
from agent.reading import lookalikes

from .invoice import decimal, short

CODE = "page_disagrees"
# The fields compared, in the order Alice reads them.
COMPARED = ("supplier_name", "vat_id", "invoice_number", "invoice_date", "currency", "total_amount", "iban")
# The fields compared only when both sides passed their check (their values are then normal forms).
CHECKED_FIRST = frozenset({"vat_id", "invoice_date", "currency"})
WORDS = {
    "total_amount": "the visible page shows a total of {page} but the e-invoice XML says {xml}: "
                    "check which one the supplier means before paying",
    "invoice_number": "the visible page shows invoice number {page} but the e-invoice XML says {xml}",
    "iban": "the IBAN on the visible page ({page}) differs from the one in the e-invoice XML ({xml}): a changed "
            "IBAN is a known fraud pattern; check with the supplier by phone, on a number you already know, "
            "before paying",
    "supplier_name": "the visible page names the supplier {page} but the e-invoice XML says {xml}",
    "vat_id": "the visible page shows the VAT id {page} but the e-invoice XML says {xml}",
    "invoice_date": "the visible page shows the invoice date {page} but the e-invoice XML says {xml}",
    "currency": "the visible page shows the currency {page} but the e-invoice XML says {xml}",
}


def compare(xml_fields: dict[str, Any], text_fields: dict[str, Any], *, text: str = "") -> list[dict[str, Any]]:
    """Where the visible page disagrees with the XML: one finding per field (``agent.reading.findings``,
    code ``page_disagrees``), with the XML's reading and the page's, each with its evidence.

    Identifiers compare as a bank reads them (``lookalikes.compact``: NFKC, no separators, upper
    case), amounts as numbers, supplier names without case, punctuation or a shortened legal name.
    The page's IBAN is its reading's, and also every IBAN printed in ``text`` however spaced,
    hyphenated or disguised with lookalike letters: the XML's account must be one of them, and
    one written with a Cyrillic E (U+0415) is not.
    """
    found: list[dict[str, Any]] = []
    for name in COMPARED:
        xml_field = xml_fields.get(name) or {}
        page_field = text_fields.get(name) or {}
        in_xml, on_page = xml_field.get("value"), page_field.get("value")
        page_evidence = page_field.get("evidence")
        if name in CHECKED_FIRST and (xml_field.get("status") != "present" or page_field.get("status") != "present"):
            continue
        if name == "iban" and in_xml and not _debited(xml_field):
            shown = _page_iban(str(in_xml), on_page, text)
            if shown is not None and shown != on_page:
                page_evidence = {"source": "text", "text": short(shown, 50)}
            on_page = shown
        if not in_xml or not on_page or _same(name, str(in_xml), str(on_page)):
            continue
        if name == "iban" and _debited(xml_field):
            continue  # the buyer's account a direct debit takes from: the page may print the supplier's own
        words = WORDS[name].format(page=short(str(on_page), 50), xml=short(str(in_xml), 50))
        found.append(finding_.make(CODE, words, field=name, readings=[
            finding_.reading(in_xml, xml_field.get("evidence"), "xml"),
            finding_.reading(on_page, page_evidence, "page")]))
    return found


def _page_iban(in_xml: str, read: Any, text: str) -> str | None:
    """The IBAN the page shows against the XML's: its reading's unless that is the XML's, else a
    printed one that is not the XML's (as printed), else None (the page shows the XML's or none)."""
    wanted = lookalikes.compact(in_xml)
    printed = list(lookalikes.iban_shapes(text)) if text else []
    if read and lookalikes.compact(str(read)) != wanted:
        return str(read)
    if any(lookalikes.compact(shown) == wanted for shown, _ in printed):
        return None  # the XML's account is printed, as it is, whatever else the page lists
    return printed[0][0] if printed else (str(read) if read else None)


def _debited(field: dict[str, Any]) -> bool:
    """Whether the XML's account is the one a direct debit takes from (the payer's), not the payee's."""
    return "Payer" in str((field.get("evidence") or {}).get("element") or "")


def _same(name: str, first: str, second: str) -> bool:
    if name == "supplier_name":
        one, other = _name(first), _name(second)
        return bool(one and other) and (one in other or other in one)
    if name == "total_amount":
        a, b = decimal(first.replace(",", "")), decimal(second.replace(",", ""))
        if a is not None and b is not None:
            return a == b
    return _identifier(first) == _identifier(second)


def _identifier(value: str) -> str:
    return lookalikes.compact(value)


def _name(value: str) -> str:
    """A supplier's name as compared: NFKC, without case, spaces or punctuation."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", value).casefold())
