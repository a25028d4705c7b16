"""What the invoice XML says (``EInvoice``), each value checked as a printed one is."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from agent.reading import fields

# What each field is called in a finding, and whether EN 16931 requires it.
NAMES = {
    "supplier_name": "seller name",
    "vat_id": "seller VAT id",
    "invoice_number": "invoice number",
    "invoice_date": "issue date",
    "currency": "invoice currency",
    "total_amount": "total amount with VAT",
    "iban": "payee IBAN",
}
REQUIRED_BY_EN16931 = ("supplier_name", "invoice_number", "invoice_date", "currency", "total_amount")
EVIDENCE_CHARS = 200
CENT = Decimal("0.01")


@dataclass
class EInvoice:
    """What the invoice XML says: its profile, the seven fields, and its defects in words.

    ``profile`` is "" when nothing could be read (not well-formed, not an invoice, refused).
    """

    profile: str
    fields: dict[str, dict[str, Any]]
    findings: list[str] = field(default_factory=list)
    also_read: dict[str, dict[str, Any]] = field(default_factory=dict)  # fields.(XML_)ALSO_READ the XML gives

    @property
    def readable(self) -> bool:
        return bool(self.profile)

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile, "fields": self.fields, "findings": list(self.findings),
                "also_read": self.also_read}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EInvoice:
        return cls(profile=data.get("profile") or "", fields=dict(data.get("fields") or {}),
                   findings=list(data.get("findings") or []), also_read=dict(data.get("also_read") or {}))


def unread(finding: str) -> EInvoice:
    return EInvoice(profile="", fields={name: missing(name) for name in fields.REQUIRED}, findings=[finding])


def missing(name: str) -> dict[str, Any]:
    return {"status": "missing", "value": None, "detail": f"not in the e-invoice XML ({NAMES[name]})",
            "evidence": None}


def short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def decimal(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def money(amount: Decimal) -> str:
    return str(amount.quantize(CENT))


def checked_field(name: str, raw: str, *, today: date | None) -> dict[str, Any]:
    """A field read from the XML, its status decided by the same checks as a printed one.

    The value stays the XML's own, normalised, even when a check finds it malformed: it is
    what the supplier sent.
    """
    from stdnum import iban
    from stdnum.util import clean

    value: str | None = raw
    if name == "supplier_name":
        checked = fields.check_supplier_name(raw)
    elif name == "vat_id":
        checked = fields.check_vat_id(raw)
        value = checked.value if checked.status == "present" else clean(raw, " -./,:").upper()
    elif name == "invoice_number":
        checked = fields.check_invoice_number(raw)
    elif name == "invoice_date":
        iso = _iso_date(raw)
        if iso is None:
            return _field("malformed", raw[:fields.MAX_VALUE_CHARS], "not a date (CII format 102 is YYYYMMDD)")
        checked = fields.check_invoice_date(iso, today=today)
        value = iso
    elif name == "currency":
        value = raw.upper()
        checked = fields.check_currency(value)
    elif name == "total_amount":
        amount = decimal(raw)
        if amount is None:
            return _field("malformed", raw[:fields.MAX_VALUE_CHARS], "not an amount")
        value = money(amount)
        checked = fields.check_total_amount(value)
    else:
        checked = fields.check_iban(raw)
        value = checked.value if checked.status == "present" else iban.format(raw)
    return _field(checked.status, (value or raw)[:fields.MAX_VALUE_CHARS], checked.detail)


def also_checked(name: str, raw: str) -> dict[str, Any]:
    """A field of ``fields.ALSO_READ`` read from the XML: a date as ISO, an amount to the cent, a name as sent."""
    if name == "due_date":
        iso = _iso_date(raw)
        return _field("present", iso, "") if iso else _field("malformed", raw[:fields.MAX_VALUE_CHARS], "not a date")
    if name in ("net_amount", "vat_amount"):
        amount = decimal(raw)
        return (_field("present", money(amount), "") if amount is not None else
                _field("malformed", raw[:fields.MAX_VALUE_CHARS], "not an amount"))
    return _field("present", " ".join(raw.split())[:fields.MAX_VALUE_CHARS], "")


def _field(status: str, value: str | None, detail: str) -> dict[str, Any]:
    return {"status": status, "value": value, "detail": detail, "evidence": None}


def _iso_date(raw: str) -> str | None:
    """An ISO date from CII's format 102 (YYYYMMDD) or UBL's YYYY-MM-DD; None if neither."""
    match = re.fullmatch(r"(\d{4})-?(\d{2})-?(\d{2})", raw.strip())
    if not match:
        return None
    try:
        return date(*(int(part) for part in match.groups())).isoformat()
    except ValueError:
        return None
