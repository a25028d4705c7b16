"""The visible page against the XML: where they disagree on the total, invoice number or IBAN."""

from __future__ import annotations

from typing import Any

from agent import lookalikes

from .invoice import _decimal, _short


def compare(xml_fields: dict[str, Any], text_fields: dict[str, Any], *, text: str = "") -> list[str]:
    """Where the visible page disagrees with the XML on the total, invoice number or IBAN.

    Identifiers compare as a bank reads them (``lookalikes.compact``: NFKC, no separators, upper
    case), amounts as numbers. The page's IBAN is its reading's, and also every IBAN printed in
    ``text`` however spaced, hyphenated or disguised with lookalike letters: the XML's account
    must be one of them, and one written with a Cyrillic E (U+0415) is not.
    """
    findings: list[str] = []
    for name in ("total_amount", "invoice_number", "iban"):
        in_xml = (xml_fields.get(name) or {}).get("value")
        on_page = (text_fields.get(name) or {}).get("value")
        if name == "iban" and in_xml and not _debited(xml_fields["iban"]):
            on_page = _page_iban(str(in_xml), on_page, text)
        if not in_xml or not on_page or _same(name, str(in_xml), str(on_page)):
            continue
        if name == "iban" and _debited(xml_fields["iban"]):
            continue  # the buyer's account a direct debit takes from: the page may print the supplier's own
        shown, read = _short(str(on_page), 50), _short(str(in_xml), 50)
        if name == "total_amount":
            findings.append(f"the visible page shows a total of {shown} but the e-invoice XML says {read}: "
                            "check which one the supplier means before paying")
        elif name == "invoice_number":
            findings.append(f"the visible page shows invoice number {shown} but the e-invoice XML says {read}")
        else:
            findings.append(f"the IBAN on the visible page ({shown}) differs from the one in the e-invoice XML "
                            f"({read}): a changed IBAN is a known fraud pattern; check with the supplier by phone, "
                            "on a number you already know, before paying")
    return [finding for finding in findings if finding]


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
    if name == "total_amount":
        a, b = _decimal(first.replace(",", "")), _decimal(second.replace(",", ""))
        if a is not None and b is not None:
            return a == b
    return _identifier(first) == _identifier(second)


def _identifier(value: str) -> str:
    return lookalikes.compact(value)
