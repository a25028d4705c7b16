"""The invoice date: labelled, after the invoice number, in the title banner, else the first date."""

from __future__ import annotations

import re
from datetime import date

from .. import labels
from .page import Column, Found, Page, find_labelled, labelled_value
from .patterns import DATE_GENERIC, INVOICE_TITLE, LABELLED_DATE, LETTER_DATE

# "Votre facture", "Ihre Rechnung": a letter's reference to the invoice it sends.
_YOUR_INVOICE = re.compile(labels.YOUR_INVOICE, re.IGNORECASE)
# The word before the date of a document: "du", "vom", "del", "of", "dated", "z dnia".
_DATE_WORD = re.compile(labels.DATE_BEFORE, re.IGNORECASE)


def find_invoice_date(page: Page, number: Found | None) -> Found | None:
    """The invoice date: its label first, then weaker signs, each only when the stronger ones found none."""
    parse = page.parse_date
    found = find_labelled(page, LABELLED_DATE, parse) or find_labelled(page, LETTER_DATE, parse)
    if found is not None:
        return found
    # A bare "Date"/"Datum", not the due or delivery date.
    generic = [(column, match) for column in page.columns
               if (match := DATE_GENERIC.search(column.head)) and not labels.OTHER_DATE.search(column.head)]
    for column, match in generic:
        value = labelled_value(page, column, match.end(), parse, below=False)
        if value is not None:
            return value[0]
    found = _after_number(page, number) if number is not None else None
    if found is not None:
        return found
    for column, match in generic:  # a bare "Date" over its value (a header row), after the rules above
        value = labelled_value(page, column, match.end(), parse)
        if value is not None:
            return value[0]
    return _in_title(page, number) or _first_date(page, number)


def _text(column: Column, number: Found | None) -> str:
    """The column's text with the invoice number blanked out: a number shaped like a date ("2024-03-15",
    "15.03.24") is not the invoice's date."""
    if number is None or number.column is not column:
        return column.text
    return column.text[:number.start] + " " * (number.end - number.start) + column.text[number.end:]


def _after_number(page: Page, number: Found) -> Found | None:
    """The date printed after the invoice number: "Rechnung 42 vom 5.3.2018", or at the start of the next line."""
    column = number.column
    date_found = page.date_in(column.text[number.end:])
    if date_found is not None:
        return Found(date_found[0], column, number.end + date_found[1], number.end + date_found[2])
    following = page.by_line[column.line + 1] if column.line + 1 < len(page.by_line) else []
    if following:
        date_found = page.date_in(following[0].text)
        if date_found is not None and date_found[1] <= 6:
            return Found(date_found[0], following[0], date_found[1], date_found[2])
    return None


def _in_title(page: Page, number: Found | None = None) -> Found | None:
    """The title banner's date: "Facture du 8 septembre 2024", "Ihre Rechnung vom ..."."""
    for column in page.columns[:200]:
        title = INVOICE_TITLE.search(column.head) or _YOUR_INVOICE.search(column.head)
        if title is None:
            continue
        rest = _text(column, number)[title.end():title.end() + 120]
        phrase = _DATE_WORD.search(rest)
        date_found = page.parse_date(rest[phrase.end():]) if phrase is not None else None
        if date_found is not None and phrase is not None:
            at = title.end() + phrase.end()
            return Found(date_found[0], column, at + date_found[1], at + date_found[2], rank=1)
        date_found = page.date_in(rest)
        if date_found is not None and not labels.OTHER_DATE.search(rest[:date_found[1]]):
            return Found(date_found[0], column, title.end() + date_found[1], title.end() + date_found[2], rank=1)
    return None


def _first_date(page: Page, number: Found | None = None) -> Found | None:
    """The first date on the page that is not labelled as another date, nor the invoice number."""
    for column in page.columns:
        date_found = page.date_in(_text(column, number))
        if date_found is not None and not labels.OTHER_DATE.search(page.layout.lines[column.line].text):
            return Found(date_found[0], column, date_found[1], date_found[2], rank=1)
    return None


# Digits OCR reads for a 0 in a printed year: "2822" for 2022, "2016" for 2010 stays a year of its own.
_ZERO_MISREAD = "869"


def ocr_year(found: Found | None, iso: str, *, today: date) -> str | None:
    """A date OCR read with an impossible year ("11/12/2822", in the future) that one 0 misread as 8, 6 or 9
    makes a year of the last ten: that date, as ISO; None when no such single reading exists or the words
    were not read by OCR (a text layer's year is as printed)."""
    if found is None or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", iso) or \
            not any(w.conf is not None for w in found.column.words or []):
        return None
    year, rest = iso[:4], iso[4:]
    readings = set()
    for at, digit in enumerate(year):
        if digit in _ZERO_MISREAD:
            candidate = year[:at] + "0" + year[at + 1:]
            if today.year - 10 <= int(candidate) and candidate + rest <= today.isoformat():
                readings.add(candidate + rest)
    return readings.pop() if len(readings) == 1 else None
