"""The supplier fields finance requires on an invoice, read off any supplier's layout and checked.

Each field is one declaration (``registry.FIELDS``: its label, reader, check, the note's and the model's words),
and what the rest of the review asks of the fields are views of those (docs/fields.md).

Reading (``read_fields``) works on a positioned layout (``agent.reading.layout``): a label in any of
the languages (``agent.reading.labels``) and its value after any separator, in the next column or
under the label; VAT ids and IBANs also anywhere by their check digits, the buyer's told apart
by the block they stand in; the total due told apart from its parts. Every value comes with its
evidence: the page, the printed line and, for a PDF, the box of its words.

Checking is a library's job: python-stdnum for the IBAN (mod-97) and VAT ids (per-country
format and check digits), python-dateutil for dates, price-parser for amounts. Each field comes
back ``present``, ``missing``, ``malformed`` or (two totals that disagree) ``to_check``, with a
short detail for Alice's note.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from ..layout import Layout
from .checks import (
    CURRENCIES,
    MAX_TOTAL_DIGITS,
    MAX_VALUE_CHARS,
    PRINTED_CURRENCIES,
    ROUNDING,
    SHARED_SYMBOLS,
    SYMBOLS,
    Field,
    check_currency,
    check_iban,
    check_invoice_date,
    check_invoice_number,
    check_supplier_name,
    check_total_amount,
    check_vat_id,
    judge_currency,
)
from .page import Page
from .registry import (
    AMOUNT,
    ASKED,
    BY_NAME,
    DATE,
    FIELDS,
    FROM_XML,
    NAME,
    READ_ALSO,
    Declared,
    check_value,
    named,
    read_fields,
    read_page,
    valued,
)

__all__ = [
    "ALSO_READ", "AMOUNT_FIELDS", "ASK", "BY_NAME", "CURRENCIES", "DATE_FIELDS", "DESCRIPTIONS", "FIELDS", "LABELS",
    "MAX_TOTAL_DIGITS", "MAX_VALUE_CHARS", "NAME_FIELDS", "PRINTED_CURRENCIES", "REQUIRED", "ROUNDING",
    "SHARED_SYMBOLS", "SYMBOLS", "XML_ALSO_READ",
    "Declared", "Field", "check_all", "check_currency", "check_iban", "check_invoice_date", "check_invoice_number",
    "check_supplier_name", "check_total_amount", "check_value", "check_vat_id", "find", "judge_currency",
    "read_fields",
]

# Views of the declarations (``registry.FIELDS``), by what the rest of the review asks of them: never written here.
REQUIRED = named(ASKED)
ALSO_READ = named(READ_ALSO)
XML_ALSO_READ = named(FROM_XML)
DATE_FIELDS = valued(DATE)
AMOUNT_FIELDS = valued(AMOUNT)
NAME_FIELDS = valued(NAME)
LABELS = {declared.name: declared.label for declared in FIELDS}
ASK = {declared.name: declared.ask for declared in FIELDS if declared.ask}
DESCRIPTIONS = {declared.name: declared.describe for declared in FIELDS if declared.describe}


def check_all(text: str, *, country: str | None = None, today: date | None = None) -> dict[str, dict[str, Any]]:
    """Every required field, read off plain text and checked (dates against ``today``)."""
    return read_fields(Layout.from_text(text), country=country, today=today)


def find(text: str, name: str) -> str | None:
    """A field's value as printed in plain text ("EUR 12.00"), or None: what the reader found, unchecked."""
    reading = read_page(Page(Layout.from_text(text)))
    item = reading.account if name == "account" else reading.found.get(name)
    if item is None:
        return None
    return (item.printed or item.value).strip()[:MAX_VALUE_CHARS] or None
