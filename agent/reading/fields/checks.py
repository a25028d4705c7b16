"""The required fields' checks: each value read (or typed) checked by a library, with a detail for Alice.
Which field is checked how is its declaration's (``agent.reading.fields.registry``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

# How far net plus VAT may be from the total: a cent per rate line rounded (a few lines at most).
ROUNDING = Decimal("0.02")
MAX_VALUE_CHARS = 120
# Digits before the decimal point a total may have (a trillion and more is no invoice).
MAX_TOTAL_DIGITS = 13

# Currencies the finance team pays in (a business rule, not a format check), and the
# symbols suppliers print for them.
CURRENCIES = frozenset({"EUR", "USD", "GBP", "CHF", "SEK", "DKK", "NOK", "PLN", "CZK", "HUF", "JPY", "CAD", "AUD"})
SYMBOLS = {"€": "EUR", "US$": "USD", "£": "GBP", "Fr.": "CHF", "zł": "PLN", "₹": "INR", "Rs": "INR", "Rs.": "INR",
           "Kč": "CZK", "Ft": "HUF", "R$": "BRL", "A$": "AUD", "AU$": "AUD", "C$": "CAD", "CA$": "CAD", "NZ$": "NZD",
           "HK$": "HKD", "S$": "SGD", "MX$": "MXN", "元": "CNY", "RMB": "CNY", "円": "JPY",
           "Kr": "kr", "KR": "kr"}  # a till's "Kr": the crown several countries print, as "kr"
# Symbols several countries print for their own currency: "$" alone never means USD, the supplier's country
# decides (else the currency is to check).
SHARED_SYMBOLS = {
    "$": {"US": "USD", "CA": "CAD", "AU": "AUD", "NZ": "NZD", "AR": "ARS", "MX": "MXN", "CL": "CLP", "CO": "COP",
          "SG": "SGD", "HK": "HKD", "TW": "TWD", "UY": "UYU", "EC": "USD", "SV": "USD", "PR": "USD"},
    "kr": {"SE": "SEK", "NO": "NOK", "DK": "DKK", "IS": "ISK"},
    "¥": {"JP": "JPY", "CN": "CNY"},
}
# The details of checks that are the tenant's own rules rather than the supplier's errors
# (agent.reading.findings.RULES makes them Alice's findings, each one she may accept).
OLD_DATE = "the invoice date is more than ten years old"
NOT_PAID_CURRENCY = "not a currency we pay in"
CREDIT_NOTE = "the total is negative: a credit note, not an invoice?"
# Currencies read off a page: the ones we pay in and others an invoice may be in (then reported
# as printed, and not one we pay in, rather than as missing).
PRINTED_CURRENCIES = CURRENCIES | {"INR", "CNY", "RON", "BGN", "TRY", "BRL", "MXN", "ZAR", "SGD", "HKD", "NZD", "AED",
                                   "SAR", "ILS", "KRW", "ISK", "RSD", "UAH", "ARS", "CLP", "COP", "TWD", "UYU", "PEN",
                                   "MYR", "THB", "PHP", "IDR"}


@dataclass(frozen=True)
class Field:
    status: str  # present | missing | malformed
    value: str | None
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "value": self.value, "detail": self.detail}


def _missing(what: str) -> Field:
    return Field("missing", None, f"no {what} found")


def check_supplier_name(value: str | None) -> Field:
    if not value:
        return _missing("supplier name")
    if not re.search(r"[^\W\d_]", value):
        return Field("malformed", value, "the supplier name has no letters")
    return Field("present", value, "")


def check_vat_id(value: str | None, *, country: str | None = None) -> Field:
    """A VAT id with a valid format and check digits for its country (python-stdnum)."""
    from stdnum import get_cc_module
    from stdnum.eu import vat as eu_vat
    from stdnum.exceptions import ValidationError
    from stdnum.util import clean

    if not value:
        return _missing("VAT / tax id")
    other = _other_tax_id(value, country)
    if other is not None:
        return other
    compact = clean(value, " -./,:").upper().strip()
    if not compact[:2].isalpha():
        if not country:
            return Field("malformed", value, "no country prefix, and no country given to check it against")
        compact = country.upper() + compact
    cc = compact[:2]
    in_eu = cc.lower() in eu_vat.MEMBER_STATES or cc == "EL"
    module = eu_vat if in_eu else get_cc_module(cc.lower(), "vat")
    if module is None:
        return Field("malformed", value, f"no VAT id check is known for country {cc}")
    try:
        number = module.validate(compact)
    except ValidationError as exc:
        return Field("malformed", value, f"not a valid {cc} VAT id: {_stdnum_reason(exc)}")
    number = number if number.startswith(cc) else cc + number
    return Field("present", number, f"valid {cc} VAT id format and check digits")


def _other_tax_id(value: str, country: str | None) -> Field | None:
    """A tax id of a scheme outside the EU VAT ids (a CUIT, an ABN, a CNPJ...), as given, when it checks."""
    from .taxids import outside_eu_vat

    found = None if re.match(r"\s*[A-Za-z]{2}", value) else outside_eu_vat(value, country)  # a prefix: a VAT id
    if found is None or found.country == "EU" or found.scheme == "VAT id":
        return None
    how = "format and check digits" if found.checked else "format only: this scheme has no check digits"
    return Field("present", " ".join(value.split()), f"valid {found.country} {found.scheme} ({how})")


def check_invoice_number(value: str | None) -> Field:
    if not value:
        return _missing("invoice number")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9\-/._ ]{0,39}", value):
        return Field("malformed", value, "an invoice number is 1-40 letters, digits and - / . _")
    return Field("present", value, "")


def check_invoice_date(value: str | None, *, today: date | None = None) -> Field:
    """A parseable date, not in the future and not absurdly old (python-dateutil)."""
    from dateutil import parser

    if not value:
        return _missing("invoice date")
    today = today or date.today()
    try:
        # Two different defaults: a part the invoice leaves out (the year, say) shows up as a
        # difference, instead of being silently filled in.
        parsed, other = (
            parser.parse(value, dayfirst=_day_first(value), default=datetime(*fill)).date()
            for fill in ((2000, 1, 1), (2001, 2, 2))
        )
    except (parser.ParserError, ValueError, OverflowError):
        return Field("malformed", value, "not a date")
    if parsed != other:
        return Field("malformed", value, "not a full date (day, month and year)")
    if parsed > today:
        return Field("malformed", parsed.isoformat(), "the invoice date is in the future")
    if parsed.year < today.year - 10:
        return Field("malformed", parsed.isoformat(), OLD_DATE)
    detail = ""
    numbers = re.fullmatch(r"\s*(\d{1,2})[./-](\d{1,2})[./-]\d{2,4}\s*", value)
    if numbers and numbers.group(1) != numbers.group(2) and int(numbers.group(1)) <= 12 and int(numbers.group(2)) <= 12:
        detail = "day and month are ambiguous; read as day first"
    return Field("present", parsed.isoformat(), detail)


def _day_first(value: str) -> bool:
    """Dotted and slashed numeric dates on European invoices put the day first."""
    return bool(re.search(r"\d{1,2}[./]\d{1,2}[./]\d{2,4}", value))


def check_total_amount(value: str | None) -> Field:
    """A positive amount (price-parser reads 1.284,50 and 1,284.50 alike)."""
    from price_parser import Price

    if not value:
        return _missing("total amount")
    amount = Price.fromstring(value).amount
    if amount is None:
        return Field("malformed", value, "no amount could be read")
    # price-parser reads "-120.00" and "EUR -120.00" as 120.00: a sign before the first
    # digit (or accounting brackets) makes it negative.
    first_digit = re.search(r"\d", value)
    if first_digit and (re.search(r"[-\u2212]", value[: first_digit.start()]) or value.strip().startswith("(")):
        amount = -amount
    if amount < 0:
        return Field("malformed", str(amount), CREDIT_NOTE)
    if amount == 0:
        return Field("malformed", str(amount), "the total is zero")
    if amount.adjusted() >= MAX_TOTAL_DIGITS:  # no invoice's total; quantize would overflow the context
        return Field("malformed", value[:MAX_VALUE_CHARS], f"the total has more than {MAX_TOTAL_DIGITS} digits")
    return Field("present", str(amount.quantize(Decimal("0.01"))), "")


def check_currency(value: str | None, *, total: str | None = None, paid: frozenset[str] | None = None) -> Field:
    """The currency: a labelled code, else the symbol or code printed with the total; one the
    tenant does not pay in (``paid``, its own list; None or empty: ``CURRENCIES``) is its rule's."""
    from price_parser import Price

    found = value or (Price.fromstring(total).currency if total else None)
    if not found:
        return _missing("currency")
    if found.strip() in SHARED_SYMBOLS:
        return Field("to_check", None, f"only \"{found.strip()}\" is printed, which several countries' currencies use, "
                                       "and the supplier's country is not known")
    code = SYMBOLS.get(found.strip(), found.strip().upper())
    if code not in (paid or CURRENCIES):
        return Field("malformed", found[:MAX_VALUE_CHARS], NOT_PAID_CURRENCY)
    return Field("present", code, "" if value else "read from the total")


def judge_currency(field: Any, paid: frozenset[str] | None) -> Any:
    """The currency field of a review judged again by the tenant's own list of currencies it pays
    in (None or empty: ``CURRENCIES`` judged it already): a code it does not pay in becomes its
    rule's, one it does pays. Any other status (missing, to check, not a currency) is kept."""
    if not paid or not isinstance(field, dict) or not isinstance(field.get("value"), str):
        return field
    if field.get("status") != "present" and field.get("detail") != NOT_PAID_CURRENCY:
        return field
    again = check_currency(field["value"], paid=paid)
    if again.status == field.get("status"):
        return field
    return {**field, **again.as_dict()}


def check_iban(value: str | None, *, account: str | None = None) -> Field:
    """An IBAN with a valid country format and mod-97 checksum (python-stdnum)."""
    from stdnum import iban
    from stdnum.exceptions import ValidationError

    if not value:
        if account:
            return Field("present", account,
                         "a bank account without an IBAN: not checked, confirm it with the supplier")
        return _missing("IBAN or bank account")
    try:
        number = iban.validate(value)
    except ValidationError as exc:
        return Field("malformed", value, f"not a valid IBAN: {_stdnum_reason(exc)}")
    return Field("present", iban.format(number), "checksum (mod 97) and country format valid")


def _stdnum_reason(exc: Exception) -> str:
    from stdnum.exceptions import InvalidChecksum, InvalidComponent, InvalidFormat, InvalidLength

    if isinstance(exc, InvalidChecksum):
        return "the check digits do not match"
    if isinstance(exc, InvalidLength):
        return "wrong length"
    if isinstance(exc, InvalidComponent):
        return "a part of it (country or bank code) is not valid"
    if isinstance(exc, InvalidFormat):
        return "wrong format"
    return "not valid"
