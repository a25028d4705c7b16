"""The invoice number: labelled, beside a bare number sign, or under or after the invoice's title."""

from __future__ import annotations

import re

from .. import labels
from .page import Column, Found, Page, find_labelled, labelled_value
from .patterns import (
    BARE_NUMBER,
    DOCUMENT_REFERENCE,
    INVOICE_NUMBER,
    INVOICE_TITLE,
    INVOICE_TITLE_NUMBER,
    NUMBER_SIGN_FIRST,
    POINT_OF_SALE,
    RECEIPT_NUMBER,
    SPLIT_LABEL,
    TITLE_ALONE,
    TRANSACTION_NUMBER,
    WORD_NR,
)
from .values import date_in_text, parse_identifier


def find_invoice_number(page: Page) -> Found | None:
    """The invoice number: its label first, then weaker signs, each only when the stronger ones found none."""
    receipt = _titled_receipt(page) and find_labelled(page, RECEIPT_NUMBER, _parse_labelled_number)
    found = (receipt or find_labelled(page, INVOICE_NUMBER, _parse_labelled_number)
             or find_labelled(page, INVOICE_TITLE_NUMBER, _parse_labelled_number, below=False)
             or find_labelled(page, RECEIPT_NUMBER, _parse_labelled_number)
             or _beside_bare_sign(page))
    if found is not None:
        return _at_point_of_sale(page, found)
    titles = [c for c in page.columns[:80] if len(c.text) < 30 and TITLE_ALONE.fullmatch(c.text)]
    return (_near_bare_sign(page, titles) or _under_word_nr(page, titles) or _under_title(page, titles)
            or _after_title(page) or _document_reference(page) or _bare_sign_in_header(page)
            # a transaction's, terminal's or card's id: the receipt's number only when nothing else is one
            or find_labelled(page, TRANSACTION_NUMBER, _parse_labelled_number, below=False))


# Lines at the top of a page a till slip prints its own number in.
_HEADER_LINES = 25


def _bare_sign_in_header(page: Page) -> Found | None:
    """A till slip's own number after a bare sign in its header, a column of its own ("Förs: 14129   Nr: 1011"):
    read only where nothing names a number, before a terminal's or a card's id."""
    for column in page.columns:
        if column.line >= _HEADER_LINES:
            break
        bare = BARE_NUMBER.match(column.head)
        if bare is None or not column.head[:1].isalpha() or SPLIT_LABEL.match(column.head):
            continue
        if _NAMED_REGISTER.match(column.text, bare.end()):
            continue  # "Nr BDO 000013346": the number of the register it names, not the slip's
        value = labelled_value(page, column, bare.end(), _parse_labelled_number, below=False)
        if value is not None and sum(ch.isdigit() for ch in value[0].value) >= _RECEIPT_DIGITS:
            return value[0]
    return None


# A word of letters alone after a number's sign: what the number is of ("Nr BDO", "No. KRS", "Nr rej.").
_NAMED_REGISTER = re.compile(r"\s*[^\W\d_]{2,}\.?\s+\S*\d")


# Digits a till slip's number has at least (a bare "Nr: 6" is a till's or a table's).
_RECEIPT_DIGITS = 3


def _at_point_of_sale(page: Page, found: Found) -> Found:
    """The number with its point of sale before it, when its line prints that apart ("Punto de Venta: 00003
    Comp. Nro: 00001360" is 00003-00001360)."""
    if not found.value.isdigit():
        return found
    point = POINT_OF_SALE.search(page.layout.lines[found.column.line].text)
    if point is not None and point.group("number") != found.value:
        found.value = f"{point.group('number')}-{found.value}"
    return found


# A receipt's or a refund's title alone on its line ("Receipt", "Refund", "Kassenbon", "Paragon fiskalny").
_RECEIPT_TITLE = re.compile(labels.RECEIPT_TITLE, re.IGNORECASE)
# Columns at the top of a page its title stands in.
_TITLE_COLUMNS = 12


def _titled_receipt(page: Page) -> bool:
    """Whether the document's title is a receipt's (its receipt number is then its own, before an invoice's it
    refers to), and no invoice's title stands above it."""
    for column in page.columns[:_TITLE_COLUMNS]:
        if TITLE_ALONE.fullmatch(column.text) or INVOICE_TITLE.match(column.text):
            return False
        if _RECEIPT_TITLE.fullmatch(column.text):
            return True
    return False


def _document_reference(page: Page) -> Found | None:
    """A bare "Reference: 2024-117" beside its value (never a table's "Reference" column), when nothing else
    names the invoice number."""
    for column in page.columns:
        label = DOCUMENT_REFERENCE.match(column.head)
        if label is not None and not _table_header(page, column.line):
            value = labelled_value(page, column, label.end(), _parse_labelled_number, below=False)
            if value is not None:
                return value[0]
    return None


def _beside_bare_sign(page: Page) -> Found | None:
    """A bare "Nº" / "No." next to its number, on a page titled as an invoice."""
    for column in page.columns:
        if BARE_NUMBER.fullmatch(column.head) and any(INVOICE_TITLE.search(c.head) for c in page.columns[:40]):
            value = labelled_value(page, column, len(column.text), _parse_labelled_number, below=False)
            if value is not None:
                return value[0]
    return None


def _near_bare_sign(page: Page, titles: list[Column]) -> Found | None:
    """A bare "Número" / "N° :" in the block under or beside the title word."""
    for column in page.columns:
        bare = BARE_NUMBER.match(column.head)
        if (bare is not None and column.head[:1].isalpha() and not SPLIT_LABEL.match(column.head)
                and any(_near_title(page, t, column) for t in titles)):
            value = labelled_value(page, column, bare.end(), _parse_labelled_number)
            if value is not None:
                return value[0]
    return None


def _under_word_nr(page: Page, titles: list[Column]) -> Found | None:
    """"Folio-Nr." over its value, on a page titled as an invoice."""
    for column in page.columns:
        word = WORD_NR.fullmatch(column.head)
        if word is not None and not labels.OTHER_NUMBER.match(word.group("word")) and titles:
            value = labelled_value(page, column, word.end(), parse_identifier)
            if value is not None:
                return value[0]
    return None


def _under_title(page: Page, titles: list[Column]) -> Found | None:
    """A table header "Factuur" over its number, "FAKTURA" over "nr 2024/0087"."""
    for column in titles:
        value = labelled_value(page, column, len(column.text), _parse_numbered)
        if value is not None and value[1] != "same" and not _table_header(page, value[0].column.line - 1):
            return value[0]
    return None


def _after_title(page: Page) -> Found | None:
    """A title followed straight by a number: "Facture FA-2017-0010"."""
    for column in page.columns:
        for match in INVOICE_TITLE.finditer(column.head):
            parsed = parse_identifier(column.text[match.end():])
            if parsed is not None:
                return Found(parsed[0], column, match.end(), match.end() + parsed[2])
    return None


def _near_title(page: Page, title: Column, column: Column) -> bool:
    """Whether ``column`` stands in the block under the title word, or beside it on its line."""
    if title.page != column.page or column is title:
        return False
    if column.line == title.line:
        return column.x0 >= title.x1
    if _table_header(page, column.line):
        return False  # a table's header row ("No.  Description  Qty"), not a label block
    return 0 < column.top - title.bottom < 6 * title.height and column.x0 > title.x0 - 12 * column.height


# Words of a line-items table's header ("No.  Description  Qty  Price"), in every language;
# a row of labels over their values ("Customer  Order  Invoice date  Invoice") has none.
ITEM_HEADER = re.compile(labels.ITEM_HEADER, re.IGNORECASE)


def _table_header(page: Page, line: int) -> bool:
    """Whether a line is a line-items table's header row: three columns or more, none with a
    digit, one of them naming what items have (a description, a quantity, a price)."""
    if not 0 <= line < len(page.by_line):
        return False
    columns = [c for c in page.by_line[line] if not re.search(r"\d", c.text)]
    return len(columns) > 2 and any(ITEM_HEADER.search(c.text) for c in columns)


def _parse_numbered(text: str) -> tuple[str, int, int] | None:
    """An identifier, after a number sign at most ("nr 2024/11/0087")."""
    sign = None if SPLIT_LABEL.match(text) else NUMBER_SIGN_FIRST.match(text)
    at = sign.end() if sign is not None else 0
    parsed = parse_identifier(text[at:])
    if parsed is None or _AMOUNT_CUT.match(text, at + parsed[2]):
        return None  # "TOTAL 3,40" under a title: an amount's line, no number
    return parsed[0], at + parsed[1], at + parsed[2]


# An amount's decimals right after what was read as a number: the number was an amount's first digits.
_AMOUNT_CUT = re.compile(r"[.,]\d")


# A further group of an invoice number printed with spaces inside ("2024 00123", "C11 206136"), or after a spaced
# hyphen or slash ("0012 - 0034", a till's day and its document's number as OCR reads them; a series and its
# number, "A5 / 3127"): digits (a few capitals at most), three characters or more.
_NUMBER_GROUP = re.compile(r"(?P<sep> ?[-/] ?| )([A-Z]{0,3}\d[0-9A-Z/-]{2,15})(?![^\s])")
# A time of day after the number ("Beleg-Nr. 2026 0042 15:32"): the end of the number, like the column's.
_TIME = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?(?!\d)")
# Groups an invoice number is printed in, at most.
_MAX_GROUPS = 4
# A word before the invoice's date after its number ("vom ", "dated ", "z dnia ").
_DATE_WORD_CHARS = 8


def _parse_labelled_number(text: str) -> tuple[str, int, int] | None:
    """An identifier after an invoice-number label, with the groups printed after it ("Invoice no. 2024 00123"):
    the label says they are one number when nothing but the end of the column, more groups, or the invoice's
    date ("vom 5.3.2024") follows them."""
    parsed = parse_identifier(text)
    if parsed is None:
        return None
    value, start, end = parsed
    groups: list[re.Match[str]] = []
    at = end
    while len(groups) < _MAX_GROUPS - 1:
        group = _NUMBER_GROUP.match(text, at)
        if group is None or date_in_text(group.group(2), whole=True) or re.search(r"\d[.,]\d{2}$", group.group(2)):
            break
        groups.append(group)
        at = group.end()
    rest = text[at:].strip()
    dated = date_in_text(rest[:40]) if rest else None
    if groups and (not rest or _TIME.match(rest) or (dated is not None and dated[1] <= _DATE_WORD_CHARS)):
        value, end = value + "".join((g.group("sep").strip() or " ") + g.group(2) for g in groups), at
    return value, start, end
