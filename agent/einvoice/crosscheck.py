"""The visible page against the XML: where they disagree on the total, invoice number or IBAN."""

from __future__ import annotations

import re
from typing import Any

from .invoice import _decimal, _short


def compare(xml_fields: dict[str, Any], text_fields: dict[str, Any]) -> list[str]:
    """Where the visible page disagrees with the XML on the total, invoice number or IBAN.

    Only fields both have a value for are compared: spaces, dots, dashes and case do not
    count, amounts compare as numbers.
    """
    findings: list[str] = []
    for name in ("total_amount", "invoice_number", "iban"):
        in_xml = (xml_fields.get(name) or {}).get("value")
        on_page = (text_fields.get(name) or {}).get("value")
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
    return findings


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
    return re.sub(r"[\s.\-]", "", value).upper()
