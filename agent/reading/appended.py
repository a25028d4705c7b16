"""Pages of another document appended to an invoice (a work order scanned behind it, a second
invoice), named and kept out of the invoice's layout so their totals and numbers never compete.

A page is another document when it opens with a document title of its own (a line near its
top that is a title alone, or a title and its number) and that title says so: another kind of
document than the invoice with its number (a work order, a delivery note, a quote: the word
alone is a heading inside the invoice), or an invoice with another number, or one that prints
a tax id or IBAN the invoice's first page does not. A page without
a title continues the document of the page before it. The invoice is the first page, unless
that page is titled as another kind of document and a later one as an invoice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import labels
from .layout import Layout, Line

# The titles that start another invoice, or a document of another kind (each language's). Not the buyer's order
# ("Bestellung", "purchase order", "zamówienie"): an invoice for several orders heads each with its number (a
# ZUGFeRD sample does).
_INVOICE_TITLES = labels.APPENDED_INVOICE
_OTHER_TITLES = labels.APPENDED_OTHER
_NUMBER_SIGN = labels.APPENDED_NUMBER_SIGN
_TITLE = re.compile(
    rf"^\W{{0,3}}(?:(?P<invoice>{_INVOICE_TITLES})|(?P<other>{_OTHER_TITLES}))\b"
    rf"(?:\s*{_NUMBER_SIGN})?\s*[:#]?\s*(?P<number>[A-Z0-9][\w/.-]*\d[\w/.-]*)?\s*$", re.IGNORECASE)
_COLUMNS = re.compile(r"\S+(?: \S+)*")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_VAT = re.compile(r"\b[A-Z]{2}[ ]?[0-9A-Z]{2}[0-9A-Z .]{6,14}\b")
_PAGES = 2  # a document of one page has nothing appended
_VAT_CHARS = 8  # the shortest EU VAT id with its country prefix
TOP = 0.4  # a title stands in the top part of its page
TOP_LINES = 15  # or, for text without positions, among its first lines


@dataclass(frozen=True)
class _Title:
    kind: str  # "invoice" | "other"
    name: str  # as printed ("Work order")
    number: str | None


def split(read: Layout) -> tuple[Layout, list[dict[str, object]]]:
    """The invoice's layout without the pages of other documents, and each such page with why."""
    if read.pages < _PAGES:
        return read, []
    titles = {page: _title(read, page) for page in range(1, read.pages + 1)}
    first = 1
    if titles[1] is not None and titles[1].kind == "other" and titles[1].number:
        first = next((p for p, t in titles.items() if t is not None and t.kind == "invoice"), 1)
    invoice = titles[first]
    invoice_text = _page_text(read, first)
    invoice_ids = _identifiers(invoice_text)
    others: list[dict[str, object]] = []
    belongs = True  # whether the page before was the invoice's
    for page in range(1, read.pages + 1):
        title = titles[page]
        if page == first:
            belongs = True
            continue
        if page < first:  # before the invoice, behind a first page titled as another document
            others.append({"page": page, "why": "a page before the invoice"})
            continue
        if title is None:
            if not belongs:
                others.append({"page": page, "why": "it continues the page before"})
            continue
        why = _another(title, invoice, _page_text(read, page), invoice_text, invoice_ids)
        belongs = why is None
        if why is not None:
            others.append({"page": page, "why": why})
    if not others:
        return read, []
    excluded = {int(str(o["page"])) for o in others}
    return Layout(pages=read.pages, lines=[line for line in read.lines if line.page not in excluded],
                  sizes=read.sizes), others


def _another(title: _Title, invoice: _Title | None, text: str, invoice_text: str,
             invoice_ids: set[str]) -> str | None:
    """Why a titled page is another document than the invoice, or None."""
    # Another kind of document names itself with its number ("Arbeitsauftrag Nr. 5521"); the word
    # alone is a heading inside the invoice ("Lieferschein" over the delivery's lines).
    if title.kind == "other" and title.number and (invoice is None or invoice.kind == "invoice"):
        return f"titled \"{title.name}\""
    if title.kind != "invoice":
        return None
    if title.number and invoice is not None and invoice.number and _plain(title.number) != _plain(invoice.number) \
            and _plain(invoice.number) not in _plain(text):
        return f"another invoice, number {title.number}"
    new = _identifiers(text) - invoice_ids
    same_number = title.number is not None and _plain(title.number) in _plain(invoice_text)
    if new and not same_number:
        return f"an invoice with a tax id or IBAN the first page does not print ({sorted(new)[0]})"
    return None


def _title(read: Layout, page: int) -> _Title | None:
    lines = [line for line in read.lines if line.page == page]
    height = read.sizes[page - 1][1] if page <= len(read.sizes) else None
    for index, line in enumerate(lines):
        box = line.box
        if (box is not None and height is not None and box[1] > TOP * height) or (box is None and index >= TOP_LINES):
            break
        found = _line_title(line)
        if found is not None:
            return found
    return None


def _line_title(line: Line) -> _Title | None:
    for column in _COLUMNS.findall(line.text):
        match = _TITLE.match(column)
        if match is not None:
            kind = "invoice" if match.group("invoice") else "other"
            name = match.group("invoice") or match.group("other")
            return _Title(kind, " ".join(name.split()), match.group("number"))
    return None


def _page_text(read: Layout, page: int) -> str:
    return "\n".join(line.text for line in read.lines if line.page == page)


def _identifiers(text: str) -> set[str]:
    """The valid IBANs and EU VAT ids a page prints, compact."""
    from stdnum import iban
    from stdnum.eu import vat

    found = set()
    for match in _IBAN.finditer(text):
        if iban.is_valid(match.group()):
            found.add(iban.compact(match.group()))
    for match in _VAT.finditer(text):
        compact = re.sub(r"[ .]", "", match.group())
        if len(compact) >= _VAT_CHARS and vat.is_valid(compact):
            found.add(compact)
    return found


def _plain(value: str) -> str:
    return re.sub(r"[\s./-]", "", value).upper()
