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

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Callable, Iterator

from . import labels
from .layout import Layout, Line, Word

REQUIRED = (
    "supplier_name",
    "vat_id",
    "invoice_number",
    "invoice_date",
    "currency",
    "total_amount",
    "iban",
)
LABELS = {
    "supplier_name": "Supplier name",
    "vat_id": "VAT / tax id",
    "invoice_number": "Invoice number",
    "invoice_date": "Invoice date",
    "currency": "Currency",
    "total_amount": "Total amount",
    "iban": "IBAN / bank account",
}
# What to ask the supplier for, per field, in Alice's note.
ASK = {
    "supplier_name": "your company's legal name",
    "vat_id": "your VAT id, with its country prefix",
    "invoice_number": "the invoice number",
    "invoice_date": "the invoice date",
    "currency": "the currency of the invoice",
    "total_amount": "the total amount due",
    "iban": "the IBAN of the account we should pay into",
}
MAX_VALUE_CHARS = 120
# Digits before the decimal point a total may have (a trillion and more is no invoice).
MAX_TOTAL_DIGITS = 13

# Currencies the finance team pays in (a business rule, not a format check), and the
# symbols suppliers print for them.
CURRENCIES = frozenset({"EUR", "USD", "GBP", "CHF", "SEK", "DKK", "NOK", "PLN", "CZK", "HUF", "JPY", "CAD", "AUD"})
SYMBOLS = {"€": "EUR", "$": "USD", "US$": "USD", "£": "GBP", "¥": "JPY", "Fr.": "CHF", "kr": "SEK", "zł": "PLN",
           "₹": "INR", "Rs": "INR", "Rs.": "INR", "Kč": "CZK", "Ft": "HUF"}
# Currencies read off a page: the ones we pay in and others an invoice may be in (then reported
# as printed, and not one we pay in, rather than as missing).
PRINTED_CURRENCIES = CURRENCIES | {"INR", "CNY", "RON", "BGN", "TRY", "BRL", "MXN", "ZAR", "SGD", "HKD", "NZD", "AED",
                                   "SAR", "ILS", "KRW", "ISK", "RSD", "UAH"}

@dataclass(frozen=True)
class Field:
    status: str  # present | missing | malformed
    value: str | None
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "value": self.value, "detail": self.detail}


def check_all(text: str, *, country: str | None = None, today: date | None = None) -> dict[str, dict[str, Any]]:
    """Every required field, read off plain text and checked (dates against ``today``)."""
    return read_fields(Layout.from_text(text), country=country, today=today)


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
        return Field("malformed", parsed.isoformat(), "the invoice date is more than ten years old")
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
        return Field("malformed", str(amount), "the total is negative: a credit note, not an invoice?")
    if amount == 0:
        return Field("malformed", str(amount), "the total is zero")
    if amount.adjusted() >= MAX_TOTAL_DIGITS:  # no invoice's total; quantize would overflow the context
        return Field("malformed", value[:MAX_VALUE_CHARS], f"the total has more than {MAX_TOTAL_DIGITS} digits")
    return Field("present", str(amount.quantize(Decimal("0.01"))), "")


def check_currency(value: str | None, *, total: str | None = None) -> Field:
    """The currency: a labelled code, else the symbol or code printed with the total."""
    from price_parser import Price

    found = value or (Price.fromstring(total).currency if total else None)
    if not found:
        return _missing("currency")
    code = SYMBOLS.get(found.strip(), found.strip().upper())
    if code not in CURRENCIES:
        return Field("malformed", found[:MAX_VALUE_CHARS], "not a currency we pay in")
    return Field("present", code, "" if value else "read from the total")


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


def check_value(name: str, value: str | None, *, country: str | None = None, today: date | None = None) -> Field:
    """The check of one required field's value, given on its own (a value a person typed, or a
    model suggested): the same checks the review runs on what it reads."""
    if name == "vat_id":
        return check_vat_id(value, country=country)
    if name == "invoice_date":
        return check_invoice_date(value, today=today)
    checks: dict[str, Callable[[str | None], Field]] = {
        "supplier_name": check_supplier_name,
        "invoice_number": check_invoice_number,
        "currency": check_currency,
        "total_amount": check_total_amount,
        "iban": check_iban,
    }
    return checks[name](value)


# --- reading the fields off a page ------------------------------------------------------------
#
# The page is cut into columns: a line's words with no wide gap between them. A label is
# searched inside one column; its value is the rest of that column, else the next column to
# its right on the same line, else the column just under it (a label/value block, or a
# table's header over its row). Identifiers with check digits (VAT ids, IBANs) are also
# found anywhere on the page, and whose they are is told by the block they stand in.

# Pseudo positions for lines without boxes (plain text, DOCX): a character is this wide
# and a line this tall, so the same column rules apply to text laid out with spaces.
_CHAR_WIDTH = 5.0
_LINE_HEIGHT = 12.0
# How far under a label its value may stand, in line heights, and lines looked at.
_BELOW_LINES = 3
_BELOW_HEIGHTS = 3.2
# A block (seller, buyer) runs this many line heights under its heading.
_BLOCK_HEIGHTS = 14
# Identifiers tried against their check digits per document (bounds hostile text).
_MAX_IDENTIFIERS = 100

# A block (an address) is at most this wide, in points, from its heading's left edge.
_BLOCK_WIDTH = 220
# Block headings kept (an invoice has a few: seller, buyer, delivery address).
_MAX_HEADINGS = 100
# Total lines weighed (an invoice prints a handful; a page of them is not an invoice's).
_MAX_TOTALS = 60
# Rows of a column of amounts read under a total's header.
_MAX_COLUMN_ROWS = 12
# A letterhead's name is short.
_MAX_NAME = 60
# The letterhead is within the first lines of the first page.
_HEADER_LINES = 8
# Labels stand at most this far into a column.
_LABEL_WINDOW = 160
# Words a label may carry before its value in the next column ("Gesamtsumme brutto", "Total (EUR)").
_MAX_QUALIFIER = 25
_NARROW_SPACES = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2009": " ", "\u2007": " "})
_SPLIT = re.compile(r"\S+(?: \S+)*")  # a column of text: words joined by single spaces
_SEPARATORS = re.compile(r"(?:[\s:#=.–|]|-(?!\d))*+")


def _compile(patterns: list[str] | str) -> re.Pattern[str]:
    """One pattern for a list of labels; a label may be glued to its value's digits ("ZAPŁATY65,00")."""
    sources = [patterns] if isinstance(patterns, str) else patterns
    glued = [source[:-2] + r"(?![^\W\d_])" if source.endswith(r"\b") else source for source in sources]
    return re.compile("|".join(f"(?:{source})" for source in glued), re.IGNORECASE)


_INVOICE_NUMBER = _compile(labels.INVOICE_NUMBER)
_INVOICE_TITLE = _compile(labels.INVOICE_TITLE)
_INVOICE_TITLE_NUMBER = _compile(labels.INVOICE_TITLE_NUMBER)
_INVOICE_DATE = _compile(labels.INVOICE_DATE)
_BARE_NUMBER = _compile(rf"{labels.NUMBER_SIGN}(?:\s?/\s?{labels.NUMBER_SIGN})?\s*:?")  # "NR / NO.:"
# "Invoice" over "number: 7": one label split over two lines, not a title over a bare label.
_SPLIT_LABEL = re.compile(r"\W*number\b", re.IGNORECASE)
_TITLE_ALONE = re.compile(labels.INVOICE_TITLE_ALONE, re.IGNORECASE)
_WORD_NR = re.compile(labels.WORD_NR, re.IGNORECASE)
_NUMBER_SIGN_FIRST = re.compile(rf"\W{{0,2}}{labels.NUMBER_SIGN}\s*:?\s*", re.IGNORECASE)
_DATE_GENERIC = _compile(labels.DATE_GENERIC)
_TOTAL_GROSS = _compile(labels.TOTAL_GROSS)
_TOTAL_DUE = _compile(labels.TOTAL_DUE)
_TOTAL_PLAIN = _compile(labels.TOTAL_PLAIN)
_NET = _compile(labels.NET)
_DEPOSIT = _compile(labels.DEPOSIT)
_VAT_AMOUNT = _compile(labels.VAT_AMOUNT)
_VAT_LABELS = [(_compile(source), country) for source, country in labels.VAT_ID]
_ANY_VAT_LABEL = _compile([source for source, _country in labels.VAT_ID])
_IBAN_LABEL = _compile(labels.IBAN)
_ACCOUNT_LABEL = _compile(labels.ACCOUNT)
_PAYEE_LABEL = _compile(labels.PAYEE)
_CURRENCY_LABEL = _compile(labels.CURRENCY)
# "Käufer/Leistungsempfänger:", "Bill to address:"
_HEADING_END = (r"(?:\s*[/&]\s*[^\W\d_]+)?(?:\s+(?:address|adresse|anschrift|adres|direcci[óo]n|indirizzo|adres|"
                r"details|information|info|data|dane|datos|dati|gegevens|angaben))?\s*(?P<colon>:)?")
_SELLER_HEADING = re.compile(rf"^\W{{0,3}}(?:{labels.SELLER}){_HEADING_END}", re.IGNORECASE)
# A buyer heading may start with a word or two: "Abweichender Warenempfänger:", "Delivery address".
_BUYER_HEADING = re.compile(rf"^\W{{0,3}}(?:[^\W\d_]+ ){{0,2}}?(?:{labels.BUYER}){_HEADING_END}", re.IGNORECASE)
_POSTCODE = re.compile(r"(?:[A-Z]{1,2}[- ]?)?\d{4,5}(?:[- ]\d{3})? [^\W\d_]")
_SENDER_SEPARATOR = re.compile(r" [|·•–-] |, ")
# Columns looked at for a return-address line (it is near the top of the first page).
_SENDER_SCAN = 80
_NAME_LABEL = re.compile(r"\s*(?:name|nom|naam|nombre|nome|nazwa|firma|raison\s+sociale)\s*:\s*", re.IGNORECASE)
_PARTY_WORD = re.compile(rf"{labels.SELLER}|{labels.BUYER}|\bname\b", re.IGNORECASE)
_LEGAL_NAME = re.compile(rf"(?<![^\W\d_])(?:{labels.LEGAL_FORM})(?![^\W\d_])")

# Amounts: 1.234,56 / 1,234.56 / 1 234,56 / 1'234.56 / 1234.5 / 1234; never a percentage.
_AMOUNT = re.compile(r"(?<![\d.,])(?P<sign>[-\u2212]\s?)?(?P<int>\d{1,3}(?:[.,'’\u00a0\u202f ]\d{3})++|\d++)"
                     r"(?:(?P<sep>[.,])(?P<dec>\d{1,2}))?(?![\d%])(?!\s?%)")
_CODES = "|".join(sorted(PRINTED_CURRENCIES))
_CURRENCY_CODE = re.compile(rf"(?<![A-Za-z])(?:{_CODES})(?![A-Za-z])")
# A currency written out after its label ("Devise : Euro", "Währung: Schweizer Franken").
_CURRENCY_NAMES = {"euro": "EUR", "us dollar": "USD", "dollar": "USD", "pound sterling": "GBP", "pound": "GBP",
                   "sterling": "GBP", "schweizer franken": "CHF", "franken": "CHF", "franc suisse": "CHF",
                   "złoty": "PLN", "zloty": "PLN", "złotych": "PLN", "zlotych": "PLN"}
_CURRENCY_NAME = re.compile("|".join(sorted((re.escape(n) + "s?" for n in _CURRENCY_NAMES), key=len, reverse=True))
                            + r"(?![^\W\d_])", re.IGNORECASE)
_CURRENCY_SIGN = re.compile(r"US\$|€|\$|£|¥|₹|zł|(?<![A-Za-z])(?:Fr\.|CHF|kr|Rs\.?|Kč|Ft)(?![A-Za-z])")
# Dates: numeric day-first (or ISO), and with a month name in any of the seven languages.
_NUMERIC_DATE = re.compile(r"(?<!\d)(?:(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})|"
                           r"(?P<d2>\d{1,2})(?P<s>[./-])(?P<m2>\d{1,2})(?P=s)(?P<y2>\d{4}|\d{2}))(?![\d.,]\d)")
_DAY_MONTH = re.compile(r"(?<!\d)(?P<d>\d{1,2})(?:\.|er|st|nd|rd|th|º|°)?[ \t\u00a0\-/]{0,3}(?:de |of )?"
                        r"(?P<m>[^\W\d_]{3,12})\.?[ \t\u00a0\-/,]{0,3}(?:de |del )?(?P<y>\d{4})(?!\d)")
_MONTH_DAY = re.compile(r"(?<![^\W\d_])(?P<m>[^\W\d_]{3,12})\.?[ \t\u00a0]{1,3}(?P<d>\d{1,2})(?:st|nd|rd|th)?"
                        r"[ \t\u00a0]{0,3},?[ \t\u00a0]{0,3}(?P<y>\d{4})(?!\d)")
# A series in capitals, a space, then the number: "FS 616/2025".
_SERIES_ID = re.compile(r"[A-Z]{1,5} \d[A-Za-z0-9\-/._]{0,30}")
_ID_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-/._]{0,39}")
_VAT_SHAPE = re.compile(r"(?<![A-Za-z0-9])(?P<cc>AT|BE|BG|CY|CZ|DE|DK|EE|EL|ES|FI|FR|GB|HR|HU|IE|IT|LT|LU|LV|MT|NL|PL|"
                        r"PT|RO|SE|SI|SK|XI|CHE)[ .\-]?(?P<body>[0-9A-Z][0-9A-Z .\-]{5,20})")
# A Swiss UID printed as a VAT number ends with its tax's name: "CHE-123.456.788 MWST".
_SWISS_VAT = re.compile(r"CHE[ .\-]?\d{3}[ .]?\d{3}[ .]?\d{3}(?: ?(?:MWST|TVA|IVA|VAT))?")
# A count of days, weeks or months ("within 30 days", "zahlbar in 14 Tagen", "à 45 jours") is a
# term of payment, not an amount.
_PERIOD = re.compile(r"(?<![\d.,])\d{1,3}[ \t\u00a0]*(?:days?|dagen|d[ií]as|giorni|dni|jours?|tage?n?|weeks?|wochen|"
                     r"semaines?|weken|semanas|settimane|tygodni|months?|monate?n?|mois|maanden|meses|mesi|"
                     r"miesi[ęe]c[ya]?)\b", re.IGNORECASE)
_IBAN_SHAPE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ \u00a0]?[A-Z0-9]){10,32}")
# A VAT id printed without its country: digits, maybe a letter first ("A31491566") or last ("77029976-D").
_IBAN_HEAD = re.compile(r"[A-Z]{2}\d{2}(?:[ \u00a0]?[A-Z0-9]){4,9}(?![A-Za-z0-9])")
_NUMBER_SHAPE = re.compile(r"(?:[A-Z](?=\d{7}))?\d[\d .\-/]{6,18}(?:-?[A-Z](?![A-Za-z0-9]))?")


@dataclass
class _Column:
    """Words of one line with no wide gap between them, and where they stand."""

    page: int
    line: int  # index in the layout's lines
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    words: list[Word] | None  # None for text without positions
    starts: list[int]  # each word's offset in ``text``
    head: str = field(init=False, default="")

    def box(self, start: int = 0, end: int | None = None) -> list[float] | None:
        """The box of the words holding ``text[start:end]``, or None without positions."""
        if not self.words:
            return None
        end = len(self.text) if end is None else end
        chosen = [w for w, at in zip(self.words, self.starts, strict=False) if at < end and at + len(w.text) > start]
        chosen = chosen or self.words
        return [round(min(w.x0 for w in chosen), 1), round(min(w.top for w in chosen), 1),
                round(max(w.x1 for w in chosen), 1), round(max(w.bottom for w in chosen), 1)]

    def __post_init__(self) -> None:
        # Where a label is looked for: the start of the column (a long column is prose, not a form).
        self.head = self.text[:_LABEL_WINDOW]

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 1.0)


@dataclass
class _Found:
    """A value read off the page, with where it was read and how sure the reading is."""

    value: str
    column: _Column
    start: int
    end: int
    rank: int = 0  # lower is stronger
    role: str = ""  # seller | buyer | "" for identifiers
    printed: str = ""  # the rest of the column from the value on, as printed ("EUR 12.00")

    def evidence(self, layout: Layout) -> dict[str, Any]:
        return {"source": "text", "page": self.column.page, "text": _printed(layout.lines[self.column.line].text),
                "box": self.column.box(self.start, self.end), "element": None}


def _printed(text: str) -> str:
    return re.sub(r" {3,}", "   ", text.strip())[:200]


class _Page:
    """The layout cut into columns, with the blocks (seller, buyer) they stand in."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.columns: list[_Column] = []
        self.by_line: list[list[_Column]] = []
        self.heights: dict[int, float] = {}
        rows: dict[int, int] = {}
        for index, line in enumerate(layout.lines):
            if line.words:
                columns = self._word_columns(index, line)
            else:
                row = rows.get(line.page, 0)
                rows[line.page] = row + 1
                columns = self._text_columns(index, line, row)
            self.by_line.append(columns)
            self.columns.extend(columns)
        for column in self.columns:  # text without sizes: a page is as tall as its lines
            self.heights[column.page] = max(self.heights.get(column.page, 1.0), column.bottom)
        for number, (_width, height) in enumerate(layout.sizes, 1):
            self.heights[number] = height
        self.month_first = _month_first(self.columns)
        self.headings = [(c, "seller") for c in self.columns if _SELLER_HEADING.match(c.head) and _heading(c.head)]
        self.headings += [(c, "buyer") for c in self.columns if _BUYER_HEADING.match(c.head) and _heading(c.head)]
        self.senders = [c for c in self.columns[:_SENDER_SCAN] if self._sender_line(c)]
        self.headings += [(c, "buyer") for c in self.senders]
        self.headings = self.headings[:_MAX_HEADINGS]

    @staticmethod
    def _word_columns(index: int, line: Line) -> list[_Column]:
        columns: list[_Column] = []
        group: list[Word] = []
        heights = sorted(w.bottom - w.top for w in line.words)
        size = max(heights[len(heights) // 2], 1.0)
        for word in line.words:
            if group and word.x0 - group[-1].x1 >= 0.8 * size:
                columns.append(_Page._column(index, line.page, group))
                group = []
            group.append(word)
        if group:
            columns.append(_Page._column(index, line.page, group))
        return columns

    @staticmethod
    def _column(index: int, page: int, words: list[Word]) -> _Column:
        starts, at = [], 0
        for word in words:
            starts.append(at)
            at += len(word.text) + 1
        return _Column(page=page, line=index, text=" ".join(w.text for w in words), x0=min(w.x0 for w in words),
                       top=min(w.top for w in words), x1=max(w.x1 for w in words),
                       bottom=max(w.bottom for w in words), words=words, starts=starts)

    @staticmethod
    def _text_columns(index: int, line: Line, row: int) -> list[_Column]:
        text = line.text.expandtabs(8) if "\t" in line.text else line.text
        text = text.translate(_NARROW_SPACES)  # a thousands separator, not a column gap
        return [_Column(page=line.page, line=index, text=m.group(), x0=m.start() * _CHAR_WIDTH,
                        top=row * _LINE_HEIGHT, x1=m.end() * _CHAR_WIDTH,
                        bottom=row * _LINE_HEIGHT + _LINE_HEIGHT * 0.8,
                        words=None, starts=[]) for m in _SPLIT.finditer(text)]

    def _sender_line(self, column: _Column) -> bool:
        """A return-address line over an envelope window ("Acme GmbH · Main St 1 · 12345 Town"): the lines
        right under it are the buyer's address (a name, a street, a postcode and town)."""
        if column.page != 1 or len(column.text) > 120 or not _POSTCODE.search(column.text):
            return False
        if len(_SENDER_SEPARATOR.findall(column.text)) < 2:
            return False
        under = [c for index in range(column.line + 1, min(column.line + 6, len(self.by_line)))
                 for c in self.by_line[index] if abs(c.x0 - column.x0) < 3 * column.height]
        return bool(under) and _name_like(under[0].text) and any(_POSTCODE.match(c.text) for c in under[1:])

    def date_in(self, text: str) -> tuple[str, int, int] | None:
        return _date_in(text[:200], month_first=self.month_first)

    def parse_date(self, text: str) -> tuple[str, int, int] | None:
        """A date at the start of ``text`` (after a word such as "le", "vom" at most)."""
        found = self.date_in(text[:60])
        return found if found is not None and found[1] <= 4 else None

    def right_of(self, column: _Column) -> list[_Column]:
        return [c for c in self.by_line[column.line] if c.x0 >= column.x1 - 0.5]

    def below(self, column: _Column) -> list[_Column]:
        """Columns under ``column`` on the next few lines, overlapping it horizontally, nearest first."""
        found: list[_Column] = []
        limit = column.bottom + _BELOW_HEIGHTS * column.height
        for index in range(column.line + 1, min(column.line + 1 + _BELOW_LINES, len(self.by_line))):
            for other in self.by_line[index]:
                if other.page != column.page or other.top > limit or other.top < column.top:
                    continue
                if other.x0 < column.x1 + 2 and other.x1 > column.x0 - 2:
                    found.append(other)
        return found

    def role(self, column: _Column) -> str:
        """seller, buyer or "" by the nearest block heading above the column in its column band."""
        best: tuple[float, float, str] | None = None
        for heading, role in self.headings:
            if heading.page != column.page or heading.x0 > column.x0 + 20:
                continue
            if column.x0 > max(heading.x1, heading.x0 + _BLOCK_WIDTH):
                continue  # a block beside this one (an information block right of the address window)
            rise = column.top - heading.top
            if rise < -2 or rise > _BLOCK_HEIGHTS * heading.height:
                continue
            key = (heading.top, heading.x0, role)
            if best is None or key[:2] > best[:2]:
                best = key
        return best[2] if best else ""

    def region(self, column: _Column) -> str:
        """header, footer or body: a letterhead and a footer's legal line are the issuer's."""
        height = self.heights.get(column.page, 1.0)
        if column.top < 0.2 * height:
            return "header"
        if column.top > 0.8 * height:
            return "footer"
        return "body"


def _month_first(columns: list[_Column]) -> bool:
    """Whether the slashed dates of this document put the month first (a 11/17/2017 is printed)."""
    month_first = False
    for column in columns:
        if "/" not in column.text:
            continue
        for match in _NUMERIC_DATE.finditer(column.text):
            if match.group("s") != "/":
                continue
            first, second = int(match.group("d2")), int(match.group("m2"))
            if first > 12:
                return False
            month_first = month_first or second > 12
    return month_first


def _heading(text: str) -> bool:
    """A block heading: the label alone, or followed by a colon ("Bill to:", "Lieferant: X")."""
    for pattern in (_SELLER_HEADING, _BUYER_HEADING):
        match = pattern.match(text)
        if match is not None:
            rest = text[match.end():].strip()
            return not rest or match.group("colon") is not None
    return False


def _values(page: _Page, column: _Column, end: int, parse: Callable[[str], tuple[str, int, int] | None],
            *, below: bool = True) -> tuple[_Found, str] | None:
    """The value for a label ending at ``end`` in ``column``: same column, right, then below."""
    found = _parse_at(column, end, parse)
    if found is not None:
        return found, "same"
    rest = column.text[end:].strip()
    if re.search(r"\d", rest) or len(rest) > _MAX_QUALIFIER:
        return None  # the label is followed by something else: not its value
    for other in page.right_of(column)[:2]:
        found = _parse_at(other, 0, parse)
        if found is not None:
            return found, "right"
    if below:
        for other in page.below(column)[:3]:
            found = _parse_at(other, 0, parse)
            if found is not None:
                return found, "below"
    return None


def _parse_at(column: _Column, at: int, parse: Callable[[str], tuple[str, int, int] | None]) -> _Found | None:
    """The value at ``at`` in the column, after any separator (": ", "#", "n°"...)."""
    at = _SEPARATORS.match(column.text, at).end()  # type: ignore[union-attr]
    parsed = parse(column.text[at:])
    if parsed is None:
        return None
    return _Found(parsed[0], column, at + parsed[1], at + parsed[2], printed=column.text[at:])


# --- value parsers: the value at the start of a text, as (value, start, end) ---------------


def _parse_identifier(text: str) -> tuple[str, int, int] | None:
    match = _SERIES_ID.match(text) or _ID_TOKEN.match(text)
    if match is None:
        return None
    token = match.group().rstrip("._-/")
    if not re.search(r"\d", token) or _date_in(token, whole=True) or _AMOUNT.fullmatch(token) and "," in token:
        return None
    return token, 0, len(token)


def _date_in(text: str, *, whole: bool = False, month_first: bool = False) -> tuple[str, int, int] | None:
    """The first date in ``text`` as ISO (or the whole text when ``whole``)."""
    best: tuple[str, int, int] | None = None
    for pattern in (_NUMERIC_DATE, _DAY_MONTH, _MONTH_DAY):
        for match in pattern.finditer(text):
            iso = _iso(match, month_first=month_first)
            if iso is None:
                continue
            if whole and (match.start() != 0 or match.end() != len(text)):
                continue
            if best is None or match.start() < best[1]:
                best = (iso, match.start(), match.end())
            break
    return best


def _iso(match: re.Match[str], *, month_first: bool = False) -> str | None:
    groups = match.groupdict()
    try:
        if groups.get("d2"):
            day, month, year = int(groups["d2"]), int(groups["m2"]), int(groups["y2"])
            if groups.get("s") == "/" and (month > 12 and day <= 12 or month_first):
                day, month = month, day  # a US date: 12/31/2014
        else:
            day, year = int(groups["d"]), int(groups["y"])
            month_text = groups["m"]
            month = int(month_text) if month_text.isdigit() else labels.MONTHS.get(month_text.lower(), 0)
        if year < 100:
            year += 2000
        return date(year, month, day).isoformat()
    except (ValueError, TypeError):
        return None


def _parse_amount(text: str) -> tuple[str, int, int] | None:
    """The first amount with decimals in ``text`` (a count or a year may come before it), else the first."""
    first = None
    for match, amount in _amounts(text[:200]):
        if match.group("dec"):
            return str(amount), match.start(), match.end()
        first = first or (str(amount), match.start(), match.end())
    return first


def _amounts(text: str) -> Iterator[tuple[re.Match[str], Decimal]]:
    """The amounts printed in ``text``, dates and percentages left out."""
    # Dates, periods, and the digit groups of an IBAN or VAT id ("NL91 ABNA 0417 1643 00"), are no amounts.
    taken = _spans(text, _NUMERIC_DATE, _DAY_MONTH, _MONTH_DAY, _IBAN_SHAPE, _VAT_SHAPE, _PERIOD)
    for match in _AMOUNT.finditer(text):
        if _inside(match.start(), taken):
            continue
        amount = _decimal(match)
        if amount is not None:
            yield match, amount


def _spans(text: str, *patterns: re.Pattern[str]) -> list[tuple[int, int]]:
    """Where the patterns match in ``text``: places another reading must leave alone."""
    return [(m.start(), m.end()) for pattern in patterns for m in pattern.finditer(text)]


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= at < end for start, end in spans)


def _decimal(match: re.Match[str]) -> Decimal | None:
    whole = re.sub(r"[.,'’\u00a0\u202f ]", "", match.group("int"))
    decimals = match.group("dec") or ""
    separators = set(re.findall(r"[.,]", match.group("int")))
    if decimals and match.group("sep") in separators:
        return None  # 1,234,56: not an amount
    try:
        amount = Decimal(f"{whole}.{decimals}" if decimals else whole)
    except ArithmeticError:
        return None
    return -amount if match.group("sign") else amount


def _currency_near(text: str, start: int, end: int) -> str | None:
    """The currency code or symbol printed right before or after an amount."""
    for window in (text[end:end + 6], text[max(0, start - 6):start]):
        code = _CURRENCY_CODE.search(window) or _CURRENCY_SIGN.search(window)
        if code is not None:
            return SYMBOLS.get(code.group(), code.group())
    return None


def _parse_vat(text: str) -> tuple[str, int, int] | None:
    swiss = _SWISS_VAT.match(text)
    if swiss is not None:
        return swiss.group(), 0, swiss.end()
    match = _VAT_SHAPE.match(text) or _NUMBER_SHAPE.match(text)
    if match is None:
        return None
    token = _valid_prefix(match.group(), _vat_valid) or _vat_words(match.group())
    if len(re.sub(r"\W", "", token)) < 8:
        return None
    return token, match.start(), match.start() + len(token)


def _vat_words(text: str) -> str:
    """The words of a VAT id that fails its check: as many as make a VAT id's length (at most 14)."""
    taken: list[str] = []
    for word in text.split():
        if len(re.sub(r"\W", "", "".join([*taken, word]))) > 14:
            break
        taken.append(word)
    return " ".join(taken).rstrip(".,;-")


def _parse_iban(text: str) -> tuple[str, int, int] | None:
    # After its label, an IBAN's first part may be short: a narrow column carries the rest on the next line.
    match = _IBAN_SHAPE.match(text) or _IBAN_HEAD.match(text)
    if match is None:
        return None
    token = _valid_prefix(match.group(), _iban_valid) or match.group()
    return token, 0, len(token)


def _valid_prefix(text: str, valid: Callable[[str], bool]) -> str | None:
    """The longest run of ``text``'s words (from its first) that passes its check digits.

    Only runs of a length an identifier can have are checked (VAT ids 8-16 characters, IBANs 15-34).
    """
    words = text.split()
    shortest, longest = (15, 34) if valid is _iban_valid else (8, 17)
    for count in range(len(words), 0, -1):
        candidate = " ".join(words[:count]).rstrip(".,;-")
        if shortest <= len(re.sub(r"[\s.\-]", "", candidate)) <= longest and valid(candidate):
            return candidate
    return None


def _vat_valid(value: str) -> bool:
    """Whether the VAT id passes its country's check (EU members, and the UK and Switzerland)."""
    from stdnum.ch import vat as ch_vat
    from stdnum.eu import vat as eu_vat
    from stdnum.gb import vat as gb_vat

    compact = re.sub(r"[\s.\-]", "", value).upper()
    if len(compact) < 8:
        return False
    if compact.startswith("CHE"):
        return bool(ch_vat.is_valid(compact))
    if compact.startswith(("GB", "XI")):
        return bool(gb_vat.is_valid(compact[2:]))
    return bool(eu_vat.is_valid(compact))


def _iban_valid(value: str) -> bool:
    from stdnum import iban

    return bool(iban.is_valid(value))


def _parse_currency(text: str) -> tuple[str, int, int] | None:
    match = _CURRENCY_CODE.match(text) or _CURRENCY_SIGN.match(text)
    if match is not None:
        return SYMBOLS.get(match.group(), match.group()), 0, match.end()
    named = _CURRENCY_NAME.match(text)
    if named is None:
        return None
    return _CURRENCY_NAMES[named.group().lower().rstrip("s")], 0, named.end()


def _parse_name(text: str) -> tuple[str, int, int] | None:
    named = _NAME_LABEL.match(text)  # "Name: Acme", "Nom : Le Fournisseur"
    at = named.end() if named else 0
    name = text[at:].strip().rstrip(",;")
    if not _name_like(name):
        return None
    return name[:MAX_VALUE_CHARS], at, at + len(name)


def _name_like(text: str) -> bool:
    """A line that can be a company's name: letters, not an address, a contact or a label."""
    if len(re.findall(r"[^\W\d_]", text)) < 2 or text[:1].isdigit() or text[:1] in "([*†•-":
        return False
    if re.search(r"@|www\.|https?:|\+\d|\btel\b|\bfax\b|\bphone\b|:|\bpage\b|\bseite\b", text, re.IGNORECASE):
        return False
    if _date_in(text) is not None or _NOT_A_NAME.search(text):
        return False
    if _TITLE_ALONE.fullmatch(text) or _INVOICE_TITLE.match(text) and re.search(r"\d", text):
        return False  # the document's title ("FACTURE", "INVOICE 2024-17")
    if len(_STRIP_PARTS.findall(text)) >= 2 and (_POSTCODE.search(text) or _STREET.search(text)):
        return False  # an owner-and-address strip ("J. DOE · MAIN ST 15 · 12345 TOWN")
    return not _heading(text)


# Lines that are never a name: a register entry, a bank label, a street.
_NOT_A_NAME = re.compile(
    r"^\W{0,3}(?:siret|siren|kvk|rcs|hrb|hra|rea|krs|regon|handelsregister|registergericht|amtsgericht|"
    r"registro\s+mercantil|iban|bic|swift)\b|"
    r"^\W{0,3}(?:c/|(?:calle|avda|avenida|via|viale|piazza|corso|rue|avenue|bd|boulevard|ul|plaza|carrer)\b\.?)\D*+\d|"
    r"(?:straat|weg|straße|strasse|str\.)\s?\d", re.IGNORECASE)
_STREET = re.compile(r"(?<![^\W\d_])(?:via|viale|piazza|calle|rue|avenue|ul\.)\s|"
                     r"(?:straat|weg|straße|strasse|str\.)\s?\d", re.IGNORECASE)
_STRIP_PARTS = re.compile(r" [·|•] ")


# --- the fields ---------------------------------------------------------------------------


def _read(page: _Page) -> tuple[dict[str, _Found | None], _Found | None, str, list[_Found]]:
    """Each field's reading (before its check), a bank account when no IBAN, and the total's note and candidates."""
    vat = _find_vat_id(page)
    total, total_note, candidates = _find_total(page)
    number = _find_invoice_number(page)
    found: dict[str, _Found | None] = {
        "supplier_name": _find_supplier(page, vat),
        "vat_id": vat,
        "invoice_number": number,
        "invoice_date": _find_invoice_date(page, number),
        "total_amount": total,
        "iban": _find_iban(page),
    }
    found["currency"] = _find_currency(page, total)
    account = None if found["iban"] else _find_labelled(page, _ACCOUNT_LABEL, _parse_identifier)
    return found, account, total_note, candidates


def find(text: str, name: str) -> str | None:
    """A field's value as printed in plain text ("EUR 12.00"), or None: what the reader found, unchecked."""
    found, account, _note, _candidates = _read(_Page(Layout.from_text(text)))
    item = account if name == "account" else found.get(name)
    if item is None:
        return None
    return (item.printed or item.value).strip()[:MAX_VALUE_CHARS] or None


def read_fields(layout: Layout, *, country: str | None = None, today: date | None = None) -> dict[str, dict[str, Any]]:
    """Every required checked read off the layout and checked, each with its evidence."""
    page = _Page(layout)
    found, account, total_note, candidates = _read(page)
    results: dict[str, dict[str, Any]] = {}
    for name in REQUIRED:
        item = found[name]
        value = item.value if item else None
        if name == "vat_id":
            label_country = item.role if item and len(item.role) == 2 else None
            checked = check_vat_id(value, country=country or label_country or _supplier_country(page, found))
        elif name == "invoice_date":
            checked = check_invoice_date(value, today=today)
        elif name == "total_amount":
            checked = check_total_amount(value)
        elif name == "currency":
            checked = check_currency(value)
            if item is not None and item.rank and checked.status == "present":
                checked = Field(checked.status, checked.value, "read from the total" if item.rank == 1 else
                              "the currency printed most on the invoice")
        elif name == "iban":
            checked = check_iban(value, account=account.value if account else None)
            item = item or account
        else:
            checked = _CHECKS[name](value)
        result = checked.as_dict()
        result["evidence"] = item.evidence(layout) if item is not None and result["value"] is not None else None
        if name == "total_amount":
            if candidates and checked.status == "present":
                result["status"] = "to_check"
                result["detail"] = total_note
                result["candidates"] = [{"value": c.value, "evidence": c.evidence(layout)} for c in candidates]
            elif total_note and checked.status == "present":
                result["detail"] = total_note
        results[name] = result
    return results


# Countries written out in an address, by their VAT prefix.
_COUNTRY_NAMES = {"united kingdom": "GB", "great britain": "GB", "england": "GB", "scotland": "GB", "wales": "GB",
                  "deutschland": "DE", "germany": "DE", "österreich": "AT", "austria": "AT", "france": "FR",
                  "españa": "ES", "espana": "ES", "spain": "ES", "italia": "IT", "italy": "IT", "polska": "PL",
                  "poland": "PL", "nederland": "NL", "netherlands": "NL", "belgique": "BE", "belgië": "BE",
                  "belgium": "BE", "portugal": "PT", "ireland": "IE", "luxembourg": "LU"}
_COUNTRY_NAME = re.compile(r"(?<![^\W\d_])(?:" + "|".join(_COUNTRY_NAMES) + r")(?![^\W\d_])", re.IGNORECASE)


def _supplier_country(page: _Page, found: dict[str, _Found | None]) -> str | None:
    """The supplier's country for a VAT id printed without one under a generic label: its IBAN's, else the
    country written in its block or letterhead."""
    iban = found.get("iban")
    if iban is not None and _iban_valid(iban.value):
        return iban.value[:2].upper()
    vat = found.get("vat_id")
    if vat is None:
        return None
    column = vat.column
    lines = page.layout.lines
    for line in range(max(0, column.line - 8), min(column.line + 3, len(lines))):
        named = _COUNTRY_NAME.search(lines[line].text[:300])
        if named is not None:
            return _COUNTRY_NAMES[named.group().lower()]
    return None


def _find_labelled(page: _Page, label: re.Pattern[str], parse: Callable[[str], tuple[str, int, int] | None],
                   *, below: bool = True) -> _Found | None:
    for column in page.columns:
        match = label.search(column.head)
        if match is not None:
            found = _values(page, column, match.end(), parse, below=below)
            if found is not None:
                return found[0]
    return None


def _find_invoice_number(page: _Page) -> _Found | None:
    found = _find_labelled(page, _INVOICE_NUMBER, _parse_identifier)
    if found is not None:
        return found
    found = _find_labelled(page, _INVOICE_TITLE_NUMBER, _parse_identifier, below=False)
    if found is not None:
        return found
    for column in page.columns:  # a bare "Nº" / "No." next to its number, on a page titled as an invoice
        if _BARE_NUMBER.fullmatch(column.head) and any(_INVOICE_TITLE.search(c.head) for c in page.columns[:40]):
            value = _values(page, column, len(column.text), _parse_identifier, below=False)
            if value is not None:
                return value[0]
    titles = [c for c in page.columns[:80] if len(c.text) < 30 and _TITLE_ALONE.fullmatch(c.text)]
    for column in page.columns:  # a bare "Número" / "N° :" in the block under or beside the title word
        bare = _BARE_NUMBER.match(column.head)
        if (bare is not None and column.head[:1].isalpha() and not _SPLIT_LABEL.match(column.head)
                and any(_near_title(page, t, column) for t in titles)):
            value = _values(page, column, bare.end(), _parse_identifier)
            if value is not None:
                return value[0]
    for column in page.columns:  # "Folio-Nr." over its value, on a page titled as an invoice
        word = _WORD_NR.fullmatch(column.head)
        if word is not None and not labels.OTHER_NUMBER.match(word.group("word")) and titles:
            value = _values(page, column, word.end(), _parse_identifier)
            if value is not None:
                return value[0]
    for column in titles:  # a table header "Factuur" over its number, "FAKTURA" over "nr 2024/0087"
        value = _values(page, column, len(column.text), _parse_numbered)
        if value is not None and value[1] != "same" and not _table_header(page, value[0].column.line - 1):
            return value[0]
    for column in page.columns:  # a title followed straight by a number: "Facture FA-2017-0010"
        for match in _INVOICE_TITLE.finditer(column.head):
            parsed = _parse_identifier(column.text[match.end():])
            if parsed is not None:
                return _Found(parsed[0], column, match.end(), match.end() + parsed[2])
    return None


# "Votre facture", "Ihre Rechnung": a letter's reference to the invoice it sends.
_YOUR_INVOICE = re.compile(r"\b(?:votre\s+facture|ihre\s+rechnung|your\s+invoice|uw\s+factuur|su\s+factura|"
                           r"la\s+vostra\s+fattura|pa[ńn]stwa\s+faktura)\b", re.IGNORECASE)
# The word before the date of a document: "du", "vom", "del", "of", "dated", "z dnia".
_DATE_WORD = re.compile(r"(?<![^\W\d_])(?:du|vom|del|dell'|of|dated|van|de|z\s+dnia|z)\s+", re.IGNORECASE)


def _near_title(page: _Page, title: _Column, column: _Column) -> bool:
    """Whether ``column`` stands in the block under the title word, or beside it on its line."""
    if title.page != column.page or column is title:
        return False
    if column.line == title.line:
        return column.x0 >= title.x1
    if _table_header(page, column.line):
        return False  # a table's header row ("No.  Description  Qty"), not a label block
    return 0 < column.top - title.bottom < 6 * title.height and column.x0 > title.x0 - 12 * column.height


# Words of a line-items table's header ("No.  Description  Qty  Price"), in the seven languages;
# a row of labels over their values ("Customer  Order  Invoice date  Invoice") has none.
_ITEM_HEADER = re.compile(
    r"(?<![^\W\d_])(?:description|descr|qty|quantity|unit\s+price|price|menge|beschreibung|bezeichnung|"
    r"einzelpreis|preis|d[ée]signation|quantit[ée]|qt[ée]|prix|omschrijving|aantal|prijs|descripci[óo]n|"
    r"concepto|cantidad|precio|descrizione|quantit[àa]|q\.t[àa]|prezzo|opis|nazwa\s+towaru|ilo[śs][ćc]|cena)"
    r"(?![^\W\d_])", re.IGNORECASE)


def _table_header(page: _Page, line: int) -> bool:
    """Whether a line is a line-items table's header row: three columns or more, none with a
    digit, one of them naming what items have (a description, a quantity, a price)."""
    if not 0 <= line < len(page.by_line):
        return False
    columns = [c for c in page.by_line[line] if not re.search(r"\d", c.text)]
    return len(columns) > 2 and any(_ITEM_HEADER.search(c.text) for c in columns)


def _parse_numbered(text: str) -> tuple[str, int, int] | None:
    """An identifier, after a number sign at most ("nr 2024/11/0087")."""
    sign = None if _SPLIT_LABEL.match(text) else _NUMBER_SIGN_FIRST.match(text)
    at = sign.end() if sign is not None else 0
    parsed = _parse_identifier(text[at:])
    return None if parsed is None else (parsed[0], at + parsed[1], at + parsed[2])


def _find_invoice_date(page: _Page, number: _Found | None) -> _Found | None:
    parse = page.parse_date
    found = _find_labelled(page, _INVOICE_DATE, parse)
    if found is not None:
        return found
    # A bare "Date"/"Datum", not the due or delivery date.
    generic = [(column, match) for column in page.columns
               if (match := _DATE_GENERIC.search(column.head)) and not labels.OTHER_DATE.search(column.head)]
    for column, match in generic:
        value = _values(page, column, match.end(), parse, below=False)
        if value is not None:
            return value[0]
    if number is not None:  # the date printed after the invoice number: "Rechnung 42 vom 5.3.2018"
        column = number.column
        date_found = page.date_in(column.text[number.end:])
        if date_found is not None:
            return _Found(date_found[0], column, number.end + date_found[1], number.end + date_found[2])
        following = page.by_line[column.line + 1] if column.line + 1 < len(page.by_line) else []
        if following:
            date_found = page.date_in(following[0].text)
            if date_found is not None and date_found[1] <= 6:
                return _Found(date_found[0], following[0], date_found[1], date_found[2])
    for column, match in generic:  # a bare "Date" over its value (a header row), after the rules above
        value = _values(page, column, match.end(), parse)
        if value is not None:
            return value[0]
    for column in page.columns[:200]:  # the title banner's date: "Facture du 8 septembre 2024", "Ihre Rechnung vom ..."
        title = _INVOICE_TITLE.search(column.head) or _YOUR_INVOICE.search(column.head)
        if title is None:
            continue
        rest = column.text[title.end():title.end() + 120]
        phrase = _DATE_WORD.search(rest)
        date_found = page.parse_date(rest[phrase.end():]) if phrase is not None else None
        if date_found is not None:
            at = title.end() + phrase.end()  # type: ignore[union-attr]
            return _Found(date_found[0], column, at + date_found[1], at + date_found[2], rank=1)
        date_found = page.date_in(rest)
        if date_found is not None and not labels.OTHER_DATE.search(rest[:date_found[1]]):
            return _Found(date_found[0], column, title.end() + date_found[1], title.end() + date_found[2], rank=1)
    for column in page.columns:  # the first date on the page that is not labelled as another date
        date_found = page.date_in(column.text)
        if date_found is not None and not labels.OTHER_DATE.search(page.layout.lines[column.line].text):
            return _Found(date_found[0], column, date_found[1], date_found[2], rank=1)
    return None


def _find_total(page: _Page) -> tuple[_Found | None, str, list[_Found]]:
    """The total due: the strongest labels first; disagreeing totals of the same strength are to check."""
    candidates: list[_Found] = []
    for column in page.columns:
        if len(candidates) >= _MAX_TOTALS:
            break
        rank = _total_rank(column.head)
        if rank is None:
            continue
        match = (_TOTAL_GROSS.search(column.head) or _TOTAL_DUE.search(column.head)
                 or _TOTAL_PLAIN.search(column.head))
        assert match is not None  # noqa: S101  _total_rank matched one of them
        value = _values(page, column, match.end(), _parse_amount)
        if value is None:
            continue
        found, how = value
        # A label inside a running sentence ("... le montant restant à payer est de 128,00 €") is prose, not the
        # total's line: it ranks below every labelled total.
        sentence = _SENTENCE.search(column.text[:match.start()][-80:]) is not None
        if how == "below":
            found, sure = _column_total(page, found)
            found.rank = rank + (1 if sure else 2)
        else:
            found = _largest_on_row(page, found)
            found.rank = rank
        if sentence:
            found.rank += 3
        candidates.append(found)
    if not candidates:
        return None, "", []
    best = min(c.rank for c in candidates)
    strongest = [c for c in candidates if c.rank == best]
    values = list(dict.fromkeys(Decimal(c.value) for c in strongest))
    if len(values) == 1:
        found = strongest[0]
        due = [c for c in candidates if c.rank > best and Decimal(c.value) != values[0] and c.rank < 3]
        due = [c for c in due if c.rank == 1]
        note = f"the amount still to pay is {due[0].value}" if due and best == 0 else ""
        return found, note, []
    sums = _net_plus_vat(page)
    confirmed = [c for c in strongest if Decimal(c.value) in sums]
    if len({Decimal(c.value) for c in confirmed}) == 1:
        return confirmed[0], "", []
    if len(values) == 2:  # a total and what is left to pay after a printed deposit
        gross, due_amount = max(values), min(values)
        if gross - due_amount in _deposits(page):
            found = next(c for c in strongest if Decimal(c.value) == gross)
            return found, f"the amount still to pay is {due_amount} after a payment of {gross - due_amount}", []
    if best >= 2:  # several bare "Total" lines: the grand total is the largest
        largest = max(strongest, key=lambda c: Decimal(c.value))
        return largest, "the largest of several totals printed", []
    first: dict[Decimal, _Found] = {}
    for c in strongest:
        first.setdefault(Decimal(c.value), c)
    return strongest[0], "two totals are printed that disagree: check which one is due", list(first.values())


# Three lower-case words in a row before a label: a sentence, not a form's label.
_SENTENCE = re.compile(r"(?<![^\W\d_])[a-zà-ÿ]++\s[a-zà-ÿ']++\s[a-zà-ÿ']++\s")


def _deposits(page: _Page) -> set[Decimal]:
    """Amounts printed as already paid (a deposit, a prepayment), as positive amounts."""
    paid: set[Decimal] = set()
    for column in page.columns:
        match = _DEPOSIT.search(column.head)
        if match is not None:
            value = _values(page, column, match.end(), _parse_amount, below=False)
            if value is not None:
                paid.add(abs(Decimal(value[0].value)))
    return paid


def _column_total(page: _Page, first: _Found) -> tuple[_Found, bool]:
    """Under a total's header: one amount, or a column whose last row sums the rows above it (sure),
    else the first of several amounts (line or per-rate amounts: not sure)."""
    rows = [first]
    while len(rows) < _MAX_COLUMN_ROWS:
        under = [c for c in page.below(rows[-1].column)[:1] if c.x1 > first.column.x0 and c.x0 < first.column.x1]
        if under and any(re.search(r"[^\W\d_]{3}", c.text) and not _CURRENCY_CODE.fullmatch(c.text)
                         for c in page.by_line[under[0].line] if c.x1 <= under[0].x0):
            break  # a labelled line ("Acompte : 10,00"), not the next row of the column
        parsed = _parse_at(under[0], 0, _parse_amount) if under else None
        if parsed is None:
            break
        rows.append(parsed)
    if len(rows) == 1:
        return first, True
    amounts = [Decimal(r.value) for r in rows]
    if amounts[-1] == sum(amounts[:-1]):
        return rows[-1], True
    return first, False


def _largest_on_row(page: _Page, found: _Found) -> _Found:
    """A total row may print net, VAT and gross side by side ("Total  100,00  19,00  119,00"): the gross."""
    best = found
    for column in [found.column, *page.right_of(found.column)[:4]]:
        start = found.end if column is found.column else 0
        for match, amount in _amounts(column.text[start:start + 200]):
            if match.group("dec") and amount > Decimal(best.value):
                best = _Found(str(amount), column, start + match.start(), start + match.end())
    return best


def _total_rank(text: str) -> int | None:
    """0 for a grand total, 1 for an amount due, 2 for a bare total; None for a part of it."""
    gross = _TOTAL_GROSS.search(text)
    due = _TOTAL_DUE.search(text)
    if gross is None and due is None and _TOTAL_PLAIN.search(text) is None:
        return None
    if labels.NOT_TOTAL.search(labels.GROSS_MARK.sub(" ", text)):
        return None
    return 0 if gross is not None else 1 if due is not None else 2


def _net_plus_vat(page: _Page) -> set[Decimal]:
    """Every sum of a printed net total and a printed VAT amount."""
    nets: list[Decimal] = []
    vats: list[Decimal] = []
    for column in page.columns:
        for pattern, into in ((_NET, nets), (_VAT_AMOUNT, vats)):
            match = pattern.search(column.head)
            if match is not None and not labels.GROSS_MARK.search(column.head):
                value = _values(page, column, match.end(), _parse_amount, below=False)
                if value is not None:
                    into.append(Decimal(value[0].value))
    return {n + v for n in nets[:20] for v in vats[:20]}


def _find_vat_id(page: _Page) -> _Found | None:
    """The supplier's VAT id: labelled or found by its check digits anywhere, never the buyer's."""
    found: list[_Found] = []
    tried = 0
    for column in page.columns:
        if len(found) > _MAX_IDENTIFIERS:
            break  # a page of VAT lines is no invoice's: the first ones are enough
        for label, label_country in _VAT_LABELS if _ANY_VAT_LABEL.search(column.head) else ():
            match = label.search(column.head)
            if match is None:
                continue
            value = _values(page, column, match.end(), _parse_vat)
            if value is not None:
                item = value[0]
                buyer = bool(labels.BUYER_MARK.search(_label_text(column, item))) or page.role(item.column) == "buyer"
                item.role = "buyer" if buyer else (label_country or "")
                item.rank = 0 if _vat_valid(item.value) else 2
                found.append(item)
            break
        ibans: list[tuple[int, int]] | None = None  # looked for only once a VAT shape turns up
        for match in _VAT_SHAPE.finditer(column.text):
            ibans = _spans(column.text, _IBAN_SHAPE) if ibans is None else ibans
            if _inside(match.start(), ibans):
                continue  # an IBAN's first digits are no VAT id ("PL89 6269 2554 ...")
            tried += 1
            if tried > _MAX_IDENTIFIERS:
                break
            swiss = _SWISS_VAT.match(column.text, match.start())
            token = swiss.group() if swiss and _vat_valid(swiss.group()) else _valid_prefix(match.group(), _vat_valid)
            if token is None:
                continue
            item = _Found(token, column, match.start(), match.start() + len(token), rank=1)
            before = column.text[:match.start()]
            line_text = page.layout.lines[column.line].text
            buyer = bool(labels.BUYER_MARK.search(before)) or page.role(column) == "buyer"
            if not buyer and not before.strip() and column is not page.by_line[column.line][0]:
                left = line_text[:line_text.find(column.text)] if column.text in line_text else ""
                buyer = bool(labels.BUYER_MARK.search(left[-40:]))
            item.role = "buyer" if buyer else ""
            found.append(item)
    return _best_identifier(page, found)


def _label_text(column: _Column, item: _Found) -> str:
    """What is printed before a labelled value: its label and the words around it ("N° TVA client")."""
    return column.text[max(0, item.start - 40):item.start] if item.column is column else column.head


def _best_identifier(page: _Page, found: list[_Found]) -> _Found | None:
    """The issuer's: in the seller's block, header or footer before the body; never the buyer's."""
    own = [f for f in found if f.role != "buyer"]
    if not own:
        return None

    def strength(item: _Found) -> tuple[int, int, int]:
        block = page.role(item.column)
        region = page.region(item.column)  # a footer is the issuer's; a header may hold the buyer's window
        place = 0 if block == "seller" else 1 if region == "footer" else 2 if region == "header" else 3
        return (place, 0 if item.rank < 2 else 1, item.rank)

    return min(own, key=strength)


def _find_iban(page: _Page) -> _Found | None:
    found: list[_Found] = []
    tried = 0
    for column in page.columns:
        if len(found) > _MAX_IDENTIFIERS:
            break  # a page of IBAN lines is no invoice's: the first ones are enough
        match = _IBAN_LABEL.search(column.head)
        if match is not None:
            value = _values(page, column, match.end(), _parse_iban)
            if value is not None:
                item = _iban_continued(page, value[0])
                item.rank = 0 if _iban_valid(item.value) else 2
                item.role = "buyer" if labels.BUYER_MARK.search(_label_text(column, item)) else ""
                found.append(item)
                continue
        for shape in _IBAN_SHAPE.finditer(column.text):
            tried += 1
            if tried > _MAX_IDENTIFIERS:
                break
            token = _valid_prefix(shape.group(), _iban_valid)
            if token is not None:
                found.append(_Found(token, column, shape.start(), shape.start() + len(token), rank=1,
                                    role="buyer" if page.role(column) == "buyer" else ""))
    return _best_identifier(page, found)


def _iban_continued(page: _Page, item: _Found) -> _Found:
    """An IBAN broken over two lines in a narrow column: its rest is right under it."""
    if _iban_valid(item.value):
        return item
    for under in page.below(item.column)[:1]:
        rest = re.match(r"[A-Z0-9]{1,4}(?: [A-Z0-9]{1,4})*", under.text)
        if rest is not None and _iban_valid(f"{item.value} {rest.group()}"):
            return _Found(f"{item.value} {rest.group()}", item.column, item.start, item.end)
    return item


def _find_currency(page: _Page, total: _Found | None) -> _Found | None:
    """A labelled currency, else the total's code or symbol, else the one printed most."""
    labelled = _find_labelled(page, _CURRENCY_LABEL, _parse_currency)
    if labelled is not None:
        return labelled
    if total is not None:
        text = total.column.text
        code = _currency_near(text, total.start, total.end)
        if code is None:
            line = page.layout.lines[total.column.line].text
            codes = [m.group() for pattern in (_CURRENCY_CODE, _CURRENCY_SIGN) for m in pattern.finditer(line)]
            code = SYMBOLS.get(codes[0], codes[0]) if codes else None
        if code is not None:
            return _Found(code, total.column, total.start, total.end, rank=1)
    counts: dict[str, int] = {}
    first: dict[str, _Found] = {}
    for column in page.columns:
        for pattern in (_CURRENCY_CODE, _CURRENCY_SIGN):
            for match in pattern.finditer(column.text):
                code = SYMBOLS.get(match.group(), match.group())
                counts[code] = counts.get(code, 0) + 1
                first.setdefault(code, _Found(code, column, match.start(), match.end(), rank=2))
    if not counts:
        return None
    return first[max(counts, key=lambda c: counts[c])]


def _find_supplier(page: _Page, vat: _Found | None) -> _Found | None:
    """The issuer's name: its block, a legal-form name outside the buyer's block, the VAT id's block."""
    for heading, role in page.headings:
        if role != "seller":
            continue
        match = _SELLER_HEADING.match(heading.text)
        assert match is not None  # noqa: S101  a heading matched it
        inline = _parse_name(heading.text[match.end():])
        if inline is not None:
            return _Found(inline[0], heading, match.end() + inline[1], match.end() + inline[2])
        names = []
        for column in _block(page, heading):
            name = _parse_name(column.text)
            after = page.right_of(column)[:1]
            if name is not None and not (after and after[0].text.startswith(":")):
                names.append(_Found(name[0].rstrip(",;"), column, 0, len(column.text)))
        if names:  # a name with a legal form is the company; else the block's first name
            return next((n for n in names if _LEGAL_NAME.search(n.value)), names[0])
    if vat is not None:  # the company named on the VAT id's line or in the block it ends
        owner = _legal_name_near(page, vat.column)
        if owner is not None:
            return owner
    legal: list[_Found] = []
    for column in page.columns:
        if column.page > 2 or column.page == 2 and legal:  # the first page, else the second's footer
            break
        for match in _LEGAL_NAME.finditer(column.head):
            legal_name = _name_before(column.text, match.end())
            if legal_name is not None and page.role(column) != "buyer" and not _BUYER_HEADING.match(column.text):
                legal.append(_Found(legal_name, column, 0, match.end()))
                break
    # The footer's legal line is the issuer's; a header may hold the buyer's unlabelled window too.
    placed = ([f for f in legal if page.role(f.column) == "seller"] or
              [f for f in legal if page.region(f.column) == "footer"] or
              [f for f in legal if page.region(f.column) == "header"])
    if placed:
        return placed[0]
    for sender in page.senders:  # the return address names the issuer first
        first = _SENDER_SEPARATOR.split(sender.text)[0]
        if _name_like(first):
            return _Found(first.strip(), sender, 0, len(first))
    payee = _find_labelled(page, _PAYEE_LABEL, _parse_name)
    if payee is not None:
        return payee
    if legal:
        return legal[0]
    if vat is not None:
        for column in reversed(_block_above(page, vat.column)):
            name = _parse_name(column.text)
            if name is not None and not _labelled(column.head, party=False):
                return _Found(name[0], column, 0, len(column.text))
    return _header_name(page)


def _header_name(page: _Page) -> _Found | None:
    """The letterhead: the most prominent name-like line at the top of the first page."""
    best: _Found | None = None
    strength = (0.0, False, False)
    for column in page.columns:
        if column.page != 1 or page.region(column) != "header" or column.line >= _HEADER_LINES:
            break
        if _INVOICE_TITLE.search(column.head) or page.role(column) == "buyer" or _labelled(column.head):
            continue
        name = _parse_name(column.text)
        if name is None or not _title_case(name[0]):
            continue
        # The largest print first; at the same size a legal name, then a name of several words over a
        # single word (a job title over a person's name, "Physiotherapist" over "Jane Doe").
        size = strength[0] if abs(column.height - strength[0]) <= 0.5 else column.height
        candidate = (size, bool(_LEGAL_NAME.search(name[0])), len(name[0].split()) > 1)
        if candidate > strength:
            best, strength = _Found(name[0], column, 0, len(column.text)), candidate
    return best


def _title_case(text: str) -> bool:
    """A name, not a sentence: most of its words start with a capital, and it does not end with a full stop."""
    words = [w for w in text.split() if w[:1].isalpha()]
    capitals = sum(1 for w in words if w[:1].isupper())
    return bool(words) and capitals * 2 >= len(words) and not re.search(r"[a-z]{3}[.!?]$", text)


def _labelled(text: str, *, party: bool = True) -> bool:
    """Whether a line is a field's label and value (or, with ``party``, names a party) rather than a name."""
    patterns = (_INVOICE_NUMBER, _INVOICE_DATE, _IBAN_LABEL, _CURRENCY_LABEL, _TOTAL_PLAIN,
                *((_PARTY_WORD,) if party else ()), *(label for label, _country in _VAT_LABELS))
    return len(text) > _MAX_NAME or any(p.search(text) for p in patterns)


def _legal_name_near(page: _Page, column: _Column) -> _Found | None:
    """A name with a legal form on ``column``'s line, else in the lines above it in its column band."""
    for other in [*page.by_line[column.line], *reversed(_block_above(page, column))]:
        for match in _LEGAL_NAME.finditer(other.head):
            name = _name_before(other.text, match.end())
            if name is not None and page.role(other) != "buyer":
                return _Found(name, other, 0, match.end())
    return None


def _name_before(text: str, end: int) -> str | None:
    """The company name ending with a legal form at ``end``: the words before it in the column."""
    start = 0
    for separator in (" - ", " | ", " · ", " • ", ", "):
        at = text.rfind(separator, 0, end - 1)
        if at >= 0:
            start = max(start, at + len(separator))
    name = text[start:end].strip(" -|·•,;")
    name = re.sub(r"^(?:[^\W\d_]+\s*:\s*)", "", name)  # "Seller: Acme GmbH"
    if not _name_like(name) or len(name) > MAX_VALUE_CHARS or _LEGAL_NAME.fullmatch(name):
        return None  # a legal form alone ("SARL au capital de ...") names nobody
    return name


def _block(page: _Page, heading: _Column) -> list[_Column]:
    """The columns under a block heading, in its column band, until the next heading."""
    columns = []
    for index in range(heading.line + 1, min(heading.line + 8, len(page.by_line))):
        for column in page.by_line[index]:
            if column.page != heading.page or column.top - heading.bottom > _BLOCK_HEIGHTS * heading.height:
                continue
            if abs(column.x0 - heading.x0) < 3 * heading.height:
                columns.append(column)
    return columns


def _block_above(page: _Page, column: _Column) -> list[_Column]:
    """The columns above ``column`` in its column band, nearest last (a VAT id ends its block)."""
    above = []
    for index in range(max(0, column.line - 6), column.line):
        for other in page.by_line[index]:
            if other.page == column.page and abs(other.x0 - column.x0) < 3 * column.height:
                above.append(other)
    return above


_CHECKS: dict[str, Callable[[str | None], Field]] = {
    "supplier_name": lambda value: check_supplier_name(value),
    "invoice_number": lambda value: check_invoice_number(value),
}
