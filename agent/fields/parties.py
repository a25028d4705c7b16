"""The supplier's name: its block, a legal-form name, the return address, the letterhead."""

from __future__ import annotations

import re

from .checks import MAX_VALUE_CHARS
from .page import _BLOCK_HEIGHTS, _Column, _find_labelled, _Found, _Page
from .patterns import (
    _BUYER_HEADING,
    _CURRENCY_LABEL,
    _IBAN_LABEL,
    _INVOICE_DATE,
    _INVOICE_NUMBER,
    _INVOICE_TITLE,
    _LEGAL_NAME,
    _PARTY_WORD,
    _PAYEE_LABEL,
    _SELLER_HEADING,
    _SENDER_SEPARATOR,
    _TOTAL_PLAIN,
    _VAT_LABELS,
)
from .values import _name_like, _parse_name

# A letterhead's name is short.
_MAX_NAME = 60
# The letterhead is within the first lines of the first page.
_HEADER_LINES = 8


def _find_supplier(page: _Page, vat: _Found | None) -> _Found | None:
    """The issuer's name: its block, a legal-form name outside the buyer's block, the VAT id's block."""
    found = _in_seller_block(page)
    if found is None and vat is not None:  # the company named on the VAT id's line or in the block it ends
        found = _legal_name_near(page, vat.column)
    if found is not None:
        return found
    legal = _legal_names(page)
    # The footer's legal line is the issuer's; a header may hold the buyer's unlabelled window too.
    placed = ([f for f in legal if page.role(f.column) == "seller"] or
              [f for f in legal if page.region(f.column) == "footer"] or
              [f for f in legal if page.region(f.column) == "header"])
    if placed:
        return placed[0]
    found = _from_sender(page) or _find_labelled(page, _PAYEE_LABEL, _parse_name)
    if found is not None:
        return found
    if legal:
        return legal[0]
    found = _above_vat(page, vat) if vat is not None else None
    return found if found is not None else _header_name(page)


def _in_seller_block(page: _Page) -> _Found | None:
    """The name on the seller's heading ("Lieferant: X"), else the one in its block, a legal name first."""
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
    return None


def _legal_names(page: _Page) -> list[_Found]:
    """Names with a legal form outside the buyer's block: on the first page, else in the second's footer."""
    legal: list[_Found] = []
    for column in page.columns:
        if column.page > 2 or (column.page == 2 and legal):
            break
        for match in _LEGAL_NAME.finditer(column.head):
            legal_name = _name_before(column.text, match.end())
            if legal_name is not None and page.role(column) != "buyer" and not _BUYER_HEADING.match(column.text):
                legal.append(_Found(legal_name, column, 0, match.end()))
                break
    return legal


def _from_sender(page: _Page) -> _Found | None:
    """The return address names the issuer first."""
    for sender in page.senders:
        first = _SENDER_SEPARATOR.split(sender.text)[0]
        if _name_like(first):
            return _Found(first.strip(), sender, 0, len(first))
    return None


def _above_vat(page: _Page, vat: _Found) -> _Found | None:
    """A name in the lines above the VAT id, in its column band (a VAT id ends its block)."""
    for column in reversed(_block_above(page, vat.column)):
        name = _parse_name(column.text)
        if name is not None and not _labelled(column.head, party=False):
            return _Found(name[0], column, 0, len(column.text))
    return None


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
