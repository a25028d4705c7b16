"""Value parsers: the value at the start of a text, as (value, start, end), and what is a name."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import date
from decimal import Decimal

from .. import labels
from .checks import MAX_VALUE_CHARS, SYMBOLS
from .patterns import (
    AMOUNT,
    BUYER_HEADING,
    CONTACT,
    CURRENCY_CODE,
    CURRENCY_NAME,
    CURRENCY_NAMES,
    CURRENCY_SIGN,
    DAY_MONTH,
    IBAN_HEAD,
    IBAN_SHAPE,
    ID_TOKEN,
    INVOICE_TITLE,
    MONTH_DAY,
    NAME_LABEL,
    NOT_A_NAME,
    NUMBER_SHAPE,
    NUMERIC_DATE,
    PERIOD,
    POSTCODE,
    SELLER_HEADING,
    SERIES_ID,
    STREET,
    STRIP_PARTS,
    SWISS_VAT,
    TITLE_ALONE,
    VAT_SHAPE,
)

# A heading printed down its block's side, one character a line (a Chinese invoice's 销售方 and 购买方):
# its first character starts the block's first row.
SIDE_HEADING = re.compile(r"^\W{0,3}[销购](?!\w)")


def is_heading(text: str) -> bool:
    """A block heading: the label alone, followed by a colon ("Bill to:", "Lieferant: X"), or down the block's side."""
    for pattern in (SELLER_HEADING, BUYER_HEADING):
        match = pattern.match(text)
        if match is not None:
            rest = text[match.end():].strip()
            return not rest or match.group("colon") is not None or SIDE_HEADING.match(text) is not None
    return False


def parse_identifier(text: str) -> tuple[str, int, int] | None:
    """The identifier that starts ``text``; one printed with a space after a slash or hyphen inside it
    ("0549/21/ 0786-28186123") is read whole: no number ends on its separator."""
    match = SERIES_ID.match(text) or ID_TOKEN.match(text)
    if match is None:
        return None
    raw, end = match.group(), match.end()
    more = _CONTINUED.match(text, end) if raw.endswith(("/", "-")) else None
    if more is not None and re.search(r"\d", more.group(1)):
        raw, end = raw + more.group(1), more.end()
    token = raw.rstrip("._-/")
    if not re.search(r"\d", token) or date_in_text(token, whole=True) or (AMOUNT.fullmatch(token) and "," in token):
        return None
    return token, 0, end - (len(raw) - len(token))


# The rest of an identifier after a space that follows its separator.
_CONTINUED = re.compile(r" ([A-Za-z0-9][A-Za-z0-9\-/._]{0,39})")


def date_in_text(text: str, *, whole: bool = False, month_first: bool = False) -> tuple[str, int, int] | None:
    """The first date in ``text`` as ISO (or the whole text when ``whole``)."""
    best: tuple[str, int, int] | None = None
    for pattern in (NUMERIC_DATE, DAY_MONTH, MONTH_DAY):
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
            if groups.get("s") == "/" and ((month > 12 and day <= 12) or month_first):
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


def parse_amount(text: str) -> tuple[str, int, int] | None:
    """The first amount with decimals in ``text`` (a count or a year may come before it), else the first."""
    first = None
    for match, amount in amounts_in(text[:200]):
        if match.group("dec"):
            return str(amount), match.start(), match.end()
        first = first or (str(amount), match.start(), match.end())
    return first


def amounts_in(text: str) -> Iterator[tuple[re.Match[str], Decimal]]:
    """The amounts printed in ``text``, dates and percentages left out."""
    # Dates, periods, and the digit groups of an IBAN or VAT id ("NL91 ABNA 0417 1643 00"), are no amounts.
    taken = spans_of(text, NUMERIC_DATE, DAY_MONTH, MONTH_DAY, IBAN_SHAPE, PERIOD)
    # "DKK 2.000,00", "CZK 1 210,00": a currency code, not a VAT id's country prefix.
    taken += [(m.start(), m.end()) for m in VAT_SHAPE.finditer(text) if not CURRENCY_CODE.match(text, m.start())]
    for match in AMOUNT.finditer(text):
        if inside(match.start(), taken):
            continue
        amount = _decimal(match)
        if amount is not None:
            yield match, amount


def spans_of(text: str, *patterns: re.Pattern[str]) -> list[tuple[int, int]]:
    """Where the patterns match in ``text``: places another reading must leave alone."""
    return [(m.start(), m.end()) for pattern in patterns for m in pattern.finditer(text)]


def inside(at: int, spans: list[tuple[int, int]]) -> bool:
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


def currency_near(text: str, start: int, end: int) -> str | None:
    """The currency code or symbol printed right before or after an amount."""
    for window in (text[end:end + 6], text[max(0, start - 6):start]):
        code = CURRENCY_CODE.search(window) or CURRENCY_SIGN.search(window)
        if code is not None:
            return SYMBOLS.get(code.group(), code.group())
    return None


def parse_vat(text: str) -> tuple[str, int, int] | None:
    swiss = SWISS_VAT.match(text)
    if swiss is not None:
        return swiss.group(), 0, swiss.end()
    match = VAT_SHAPE.match(text) or NUMBER_SHAPE.match(text)
    if match is None:
        return None
    token = valid_prefix(match.group(), vat_valid) or _vat_words(match.group())
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


def parse_iban(text: str) -> tuple[str, int, int] | None:
    # After its label, an IBAN's first part may be short: a narrow column carries the rest on the next line.
    match = IBAN_SHAPE.match(text) or IBAN_HEAD.match(text)
    if match is None:
        return None
    token = valid_prefix(match.group(), iban_valid) or match.group()
    return token, 0, len(token)


def valid_prefix(text: str, valid: Callable[[str], bool]) -> str | None:
    """The longest run of ``text``'s words (from its first) that passes its check digits.

    Only runs of a length an identifier can have are checked (VAT ids 8-16 characters, IBANs 15-34).
    """
    words = text.split()
    shortest, longest = (15, 34) if valid is iban_valid else (8, 17)
    for count in range(len(words), 0, -1):
        candidate = " ".join(words[:count]).rstrip(".,;-")
        if shortest <= len(re.sub(r"[\s.\-]", "", candidate)) <= longest and valid(candidate):
            return candidate
    return None


def vat_valid(value: str) -> bool:
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


def iban_valid(value: str) -> bool:
    from stdnum import iban

    return bool(iban.is_valid(value))


def parse_currency(text: str) -> tuple[str, int, int] | None:
    match = CURRENCY_CODE.match(text) or CURRENCY_SIGN.match(text)
    if match is not None:
        return SYMBOLS.get(match.group(), match.group()), 0, match.end()
    named = CURRENCY_NAME.match(text)
    if named is None:
        return None
    return currency_name(named.group()), 0, named.end()


def currency_name(name: str) -> str:
    """The code (or shared symbol) of a currency written out: "Euros" -> EUR, "pesos" -> "$"."""
    name = " ".join(name.lower().split())
    return CURRENCY_NAMES.get(name) or CURRENCY_NAMES.get(name[:-1]) or CURRENCY_NAMES[name.rstrip("s")]


def parse_name(text: str) -> tuple[str, int, int] | None:
    named = NAME_LABEL.match(text)  # "Name: Acme", "Nom : Le Fournisseur"
    at = named.end() if named else 0
    name = text[at:].strip().rstrip(",;")
    if not name_like(name):
        return None
    return name[:MAX_VALUE_CHARS], at, at + len(name)


def name_like(text: str) -> bool:
    """A line that can be a company's name: letters, not an address, a contact or a label."""
    if len(re.findall(r"[^\W\d_]", text)) < 2 or text[:1].isdigit() or text[:1] in "([*†•-":
        return False
    if CONTACT.search(text):
        return False
    if date_in_text(text) is not None or NOT_A_NAME.search(text):
        return False
    if TITLE_ALONE.fullmatch(text) or (INVOICE_TITLE.match(text) and re.search(r"\d", text)):
        return False  # the document's title ("FACTURE", "INVOICE 2024-17")
    if len(STRIP_PARTS.findall(text)) >= 2 and (POSTCODE.search(text) or STREET.search(text)):
        return False  # an owner-and-address strip ("J. DOE · MAIN ST 15 · 12345 TOWN")
    return not is_heading(text)
