"""The supplier's name, found by evidence: the candidates any invoice offers (its letterhead, legal-form
names, the seller's block, the footer's legal line, the return address, the payee) ranked by what
real invoices share: position and size on the first page, a legal form, nearness to the seller's
tax id and bank lines, the domain of its e-mail or web address, repetition. A buyer block, a column
header, a label, an address line or postal indicia never name the supplier; the name in an envelope's
window, a bank's name or an item's line count against it. Two candidates that stay close make the
field "to check" with both. The buyer's name is read from its block (``find_buyer``)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from .. import labels
from . import partywords
from .checks import MAX_VALUE_CHARS
from .identifiers import COUNTRY_NAME
from .page import BLOCK_HEIGHTS, BLOCK_WIDTH, Column, Found, Page, find_labelled
from .patterns import (
    BUYER_HEADING,
    CURRENCY_LABEL,
    IBAN_LABEL,
    INVOICE_DATE,
    INVOICE_NUMBER,
    INVOICE_TITLE,
    LEGAL_NAME,
    NAME_LABEL,
    PARTY_WORD,
    PAYEE_LABEL,
    POSTCODE,
    RECEIPT_NUMBER,
    SELLER_HEADING,
    SENDER_SEPARATOR,
    STREET,
    TITLE_ALONE,
    TOTAL_PLAIN,
    VAT_LABELS,
)
from .values import SIDE_HEADING, is_heading, name_like, parse_name

# A letterhead's name is short.
_MAX_NAME = 60


def find_supplier(page: Page, vat: Found | None) -> Found | None:
    """The issuer's name, ranked by the evidence real invoices share (``rank_names``): the block rules'
    reading is one candidate among the letterhead, legal-form names, the footer's legal line."""
    return rank_names(page, vat, _by_rules(page, vat))


def _by_rules(page: Page, vat: Found | None) -> Found | None:
    """The issuer's name by the block rules: its block, a legal-form name outside the buyer's, the VAT id's block."""
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
    found = _from_sender(page) or find_labelled(page, PAYEE_LABEL, parse_name)
    if found is not None:
        return found
    return legal[0] if legal else None  # the lines above the VAT id and the letterhead are the evidence's


def find_buyer(page: Page) -> Found | None:
    """The buyer's name (``_read_buyer``), read once per page: the supplier's evidence weighs it too."""
    if "buyer" not in page.memo:
        page.memo["buyer"] = _read_buyer(page)
    found: Found | None = page.memo["buyer"]
    return found


def _read_buyer(page: Page) -> Found | None:
    """The buyer's name: on its heading ("Bill to: X") or beside it, else the first name in its block (a legal
    name first), else the first name under the return address over the envelope window."""
    for heading, role in page.headings:
        if role != "buyer" or heading.page != 1 or SELLER_HEADING.match(heading.text):  # "Payable to:" is the seller's
            continue
        match = None if heading in page.senders else BUYER_HEADING.match(heading.text)
        if match is not None:
            rest = heading.text[match.end():]
            at = match.end() + len(rest) - len(rest.lstrip(" :"))
            inline = _buyer_name(heading.text[at:])
            if inline is not None:
                return Found(inline, heading, at, at + len(inline))
            beside = page.right_of(heading)[:1]
            name = _buyer_name(beside[0].text) if beside and beside[0].x0 - heading.x1 < BLOCK_WIDTH else None
            if name is not None:
                return Found(name, beside[0], 0, len(name))
            side = _beside_side_heading(page, heading)
            if side is not None:
                return side
        names = []
        for column in _block(page, heading)[:4]:
            if BUYER_HEADING.match(column.text) or SELLER_HEADING.match(column.text) or _labelled(column.head) \
                    or _table_header(page, column):
                continue
            name = _buyer_name(column.text)
            if name is not None:
                names.append(Found(name, column, 0, len(name)))
        if names:
            return next((n for n in names[:2] if _legal(n.value)), names[0])
    for column in itertools.takewhile(lambda c: c.page == 1, page.columns[:_MAX_COLUMNS]):
        labelled = _buyer_beside(page, column)
        if labelled is not None:  # "Buyer Name   Acme LLC", "Customer   Acme LLC"
            return labelled
    for column in itertools.takewhile(lambda c: c.page == 1, page.columns[:_MAX_COLUMNS]):
        name = _buyer_name(column.text) if _in_window(page, column) else None
        if name is not None and (_legal(name) or not re.search(r"\d", name)):  # no heading: the window's name
            return Found(name, column, 0, len(name))
    return None


def _buyer_beside(page: Page, column: Column) -> Found | None:
    """The name beside a short buyer's label on its line ("Buyer Name   Acme LLC")."""
    if len(column.text.split()) > 3 or not BUYER_HEADING.match(column.text) or SELLER_HEADING.match(column.text):
        return None
    if _SIGNATURE.match(column.text[:_MAX_NAME]):
        return None  # "Customer Signature" beside the other party's signature line
    if _NUMBER_WORD.search(column.text):
        return None  # a customer's number, reference or order: not the customer's name
    beside = page.right_of(column)[:1]
    name = _buyer_name(beside[0].text) if beside else None
    return Found(name, beside[0], 0, len(name)) if beside and name is not None else None


def _buyer_name(text: str) -> str | None:
    """A recipient's name: a company with its legal form (even "3Qcode Sp. z o.o."), else a name-like line that
    is no salutation, label or address."""
    named = NAME_LABEL.match(text)  # "Nazwa: Acme sp. z o.o."
    text = text[named.end() if named else 0:].strip().rstrip(",;")
    if _NOT_A_BUYER.match(text) or _NAME_HEADING.match(text) or _NOT_A_PARTY.match(text) or len(text) > _MAX_NAME:
        return None
    if _NUMBER_FIRST.match(text):
        return None  # a number's label ("Nº DA INSTALAÇÃO", "# of items")
    if _labelled(text, party=False):
        return None
    if _legal(text) and re.search(r"[^\W\d_]{2}", text) and not re.search(r"@|www\.|https?:", text):
        return text
    parsed = parse_name(text)
    if parsed is None or POSTCODE.search(parsed[0]) or _ZIP.search(parsed[0]) or STREET.search(parsed[0]):
        return None
    return None if _HOUSE_NUMBER.search(parsed[0]) else parsed[0]


# A number's sign opening a line: a label's ("Nº do cliente"), never a name's.
_NUMBER_FIRST = re.compile(r"\W{0,2}(?:n[°º]|#)", re.IGNORECASE)
# A street and its house number ("Czyżewska 10", "Main St 4b", "Kungsgatan 12/3").
_HOUSE_NUMBER = re.compile(r"[^\W\d_]{2,}\.? \d{1,5}[a-zA-Z]?(?:[/-]\d{1,4})?$")
# A label naming a number rather than a name.
_NUMBER_WORD = re.compile(labels.NAMES_A_NUMBER, re.IGNORECASE)


# Words before a recipient's name that are no name: a salutation, a department.
_NOT_A_BUYER = re.compile(labels.NOT_A_BUYER, re.IGNORECASE)


def _in_seller_block(page: Page) -> Found | None:
    """The name on the seller's heading ("Lieferant: X"), else the one in its block, a legal name first."""
    for heading, role in page.headings:
        if role != "seller":
            continue
        match = SELLER_HEADING.match(heading.text)
        assert match is not None  # noqa: S101  a heading matched it
        inline = parse_name(heading.text[match.end():])
        if inline is not None:
            return Found(inline[0], heading, match.end() + inline[1], match.end() + inline[2])
        side = _beside_side_heading(page, heading)
        if side is not None:
            return side
        names = []
        for column in _block(page, heading):
            name = parse_name(column.text)
            after = page.right_of(column)[:1]
            if name is not None and not (after and after[0].text.startswith(":")):
                names.append(Found(name[0].rstrip(",;"), column, 0, len(column.text)))
        if names:  # a name with a legal form is the company; else the block's first name
            return next((n for n in names if LEGAL_NAME.search(n.value)), names[0])
    return None


def _beside_side_heading(page: Page, heading: Column) -> Found | None:
    """The company named in the first row of a block whose heading runs down its side ("销 名称: X有限公司")."""
    if not SIDE_HEADING.match(heading.text):
        return None
    for column in page.right_of(heading):
        legal = LEGAL_NAME.search(column.head)
        name = _name_before(column.text, legal.end()) if legal is not None else None
        if legal is not None and name is not None:
            return Found(name, column, 0, legal.end())
    return None


def _legal_names(page: Page) -> list[Found]:
    """Names with a legal form outside the buyer's block: on the first page, else in the second's footer."""
    legal: list[Found] = []
    for column in page.columns:
        if column.page > 2 or (column.page == 2 and legal):
            break
        for match in LEGAL_NAME.finditer(column.head):
            legal_name = _name_before(column.text, match.end())
            if legal_name is not None and page.role(column) != "buyer" and not BUYER_HEADING.match(column.text):
                legal.append(Found(legal_name, column, 0, match.end()))
                break
    return legal


def _from_sender(page: Page) -> Found | None:
    """The return address names the issuer first."""
    for sender in page.senders:
        first = SENDER_SEPARATOR.split(sender.text)[0]
        if name_like(first):
            return Found(first.strip(), sender, 0, len(first))
    return None


def _title_case(text: str) -> bool:
    """A name, not a sentence: most of its words start with a capital, and it does not end with a full stop."""
    words = [w for w in text.split() if w[:1].isalpha()]
    capitals = sum(1 for w in words if w[:1].isupper())
    return bool(words) and capitals * 2 >= len(words) and not re.search(r"[a-z]{3}[.!?]$", text)


def _labelled(text: str, *, party: bool = True) -> bool:
    """Whether a line is a field's label and value (or, with ``party``, names a party) rather than a name."""
    patterns = (INVOICE_NUMBER, INVOICE_DATE, IBAN_LABEL, CURRENCY_LABEL, TOTAL_PLAIN,
                *((PARTY_WORD,) if party else ()), *(label for label, _country in VAT_LABELS))
    return len(text) > _MAX_NAME or any(p.search(text) for p in patterns)


def _legal_name_near(page: Page, column: Column) -> Found | None:
    """A name with a legal form on ``column``'s line, else in the lines above it in its column band."""
    for other in [*page.by_line[column.line], *reversed(_block_above(page, column))]:
        for match in LEGAL_NAME.finditer(other.head):
            name = _name_before(other.text, match.end())
            if name is not None and page.role(other) != "buyer":
                return Found(name, other, 0, match.end())
    return None


_NAME_SEPARATORS = (" - ", " | ", " · ", " • ", ", ")
# Legal forms printed after a comma that belongs to the name ("Acme, Inc."; not "Sitz Köln, AG Köln": a court).
_AFTER_COMMA = re.compile(r"Inc\.?|INC\.?|LLC|L\.L\.C\.|Ltd\.?|LTD\.?|Limited|LIMITED|Corp\.?|CORP\.?|LLP|PLC|plc|"
                          r"S\.\s?A\.|S\.\s?L\.|S\.\s?R\.\s?L\.|S\.\s?A\.\s?S\.|Ltda\.?|LTDA\.?")


def _name_before(text: str, end: int) -> str | None:
    """The company name ending with a legal form at ``end``: the words before it in the column."""
    start = 0
    for separator in _NAME_SEPARATORS:
        at = text.rfind(separator, 0, end - 1)
        if at >= 0:
            start = max(start, at + len(separator))
    if text[max(0, start - 2):start] == ", " and _AFTER_COMMA.fullmatch(text[start:end].strip()):
        # "Acme, Inc.": the comma is the name's own; the name starts at the separator before it
        before = [text.rfind(s, 0, start - 2) + len(s) for s in _NAME_SEPARATORS if text.rfind(s, 0, start - 2) >= 0]
        start = max([0, *before])
    name = text[start:end].strip(" -|·•,;")
    name = re.sub(r"^(?:[^\W\d_]+\s*:\s*)", "", name)  # "Seller: Acme GmbH"
    if not name_like(name) or len(name) > MAX_VALUE_CHARS or LEGAL_NAME.fullmatch(name):
        return None  # a legal form alone ("SARL au capital de ...") names nobody
    return name


def _block(page: Page, heading: Column) -> list[Column]:
    """The columns under a block heading, in its column band, until the next heading."""
    columns = []
    for index in range(heading.line + 1, min(heading.line + 8, len(page.by_line))):
        for column in page.by_line[index]:
            if column.page != heading.page or column.top - heading.bottom > BLOCK_HEIGHTS * heading.height:
                continue
            if abs(column.x0 - heading.x0) < 3 * heading.height:
                columns.append(column)
    return columns


def _block_above(page: Page, column: Column) -> list[Column]:
    """The columns above ``column`` in its column band, nearest last (a VAT id ends its block)."""
    above = []
    for index in range(max(0, column.line - 6), column.line):
        for other in page.by_line[index]:
            if other.page == column.page and abs(other.x0 - column.x0) < 3 * column.height:
                above.append(other)
    return above


# --- the evidence ------------------------------------------------------------------------------
# Points per piece of evidence (a name needs some to be taken at all).
_LEGAL_FORM = 3.0
_SELLER_BLOCK = 4.0
_BY_RULES = 2.0
_LETTERHEAD = 2.0  # at the very top of the first page, scaled down the page
_LARGER = 2.0  # at most, for print larger than the page's usual
_NEAR_TAX_ID = 2.0
_NEAR_BANK = 1.0
_FOOTER_LEGAL = 1.5
_DOMAIN = 3.0
_REPEATED = 1.0
_SENDER = 2.0
_BANK_NAME = -4.0
_UNDER_NAME_LABEL = 3.0  # under a label "Name", "Razão social", "Nome empresarial"
_DIGITS = -3.0  # an address, a number or a title with its number ("Suite 5A-1204", "ARVE NR 2745")
_LABEL = -2.0  # a label with its value beside it ("Order Number   12345")
_A4 = 842.0  # points
_FEW_WORDS = 0.5
_TABLE_ROW = -1.5
_WINDOW = -3.0  # the recipient's name in the envelope's window
_PRICE = re.compile(r"\d[.,]\d{2}(?!\d)")
_UNSURE = -3.0  # OCR read its words with little confidence
_RECEIPT_HEAD = 3.0  # a receipt's first name over its address block (a tagline above it has none)
_SIGNED = 3.0  # a company's own signature line ("Acme Signature" beside "Buyer Signature")
_BUYERS_NAME = -4.0  # the name the page gives the buyer, printed again elsewhere (an address block, a table)
_MIN_BUYER = 4  # characters: a buyer's name this short matches too much to count against another
_SURE_OCR = 60  # OCR's confidence (0-100) below which a name's words are a guess
# A word of a name: three letters in a row, or a CJK character.
_WORD = re.compile(r"[^\W\d_]{3}|[\u3040-\u30ff\u4e00-\u9fff]")
# Two names closer than this stay "to check" with both.
_CLOSE = 0.75
# Lines above a tax id (or a bank line) that its company's name may stand in.
_NEAR_LINES = 6
_MAX_CANDIDATES = 60
# A table's header: this many cells or more, each this short at most.
_HEADER_CELLS = 3
_HEADER_CELL = 25
# Columns of the first page looked at: its top, and the last ones (its foot).
_MAX_COLUMNS = 600
_FOOT_COLUMNS = 60
_DOMAIN_WORD = re.compile(r"(?:@|www\.|https?://)(?:[a-z0-9-]+\.)*?([a-z0-9-]{2,})\.[a-z]{2,}(?:\.[a-z]{2})?\b|"
                          # a web address printed without "www." ("my.acme.com", "acme.de/pay"): a common ending
                          r"(?<![\w@./-])(?:[a-z0-9-]+\.)?((?=[a-z0-9-]*[a-z])[a-z0-9-]+)\.(?:com|net|org|biz|info|io|co|"
                          r"eu|de|at|ch|fr|be|nl|lu|es|pt|it|pl|cz|sk|ee|lv|lt|fi|se|no|dk|uk|ie|us|ca|au|nz|in|br|ar|mx)"
                          r"(?:\.[a-z]{2})?(?![\w-])", re.IGNORECASE)
_FREE_MAIL = frozenset({"gmail", "yahoo", "hotmail", "outlook", "gmx", "web", "icloud", "aol", "live", "mail",
                        "orange", "free", "wanadoo", "libero", "wp", "onet", "interia", "seznam", "t-online"})
_BANK_WORD = re.compile(labels.BANK_WORD, re.IGNORECASE)
# A label over a company's name ("Nome / Nome Empresarial", "Company name", "Raison sociale").
_NAME_HEADING = re.compile(labels.NAME_HEADING, re.IGNORECASE)
# A document's own words, copy marks and greetings: never a name.
_NOT_A_PARTY = re.compile(rf"^\W{{0,3}}(?:{labels.SLIP_TITLE}|{labels.GREETING})\b|{labels.NOT_A_PARTY}", re.IGNORECASE)
# A greeting and the shop it names on one line ("Welcome to Sunrise Mart", "Willkommen bei Bäckerei Krume"): a
# short word between them at most ("to", "bei", "w", "da", "til").
_GREETED = re.compile(rf"^\W{{0,3}}(?:{labels.GREETING})\s+(?:[^\W\d_]{{1,3}}\s+)?(?=[^\W\d_])", re.IGNORECASE)
# A public body's name: as good as a legal form ("City of Palo Alto", "Stadt Linz", "Comune di Roma").
_PUBLIC_BODY = re.compile(labels.PUBLIC_BODY, re.IGNORECASE)
# Postcodes POSTCODE leaves out: a British one ("HX7 8AB"), a US state and ZIP ("AZ 12345").
_ZIP = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}\b|\b[A-Z]{2} \d{5}(?:-\d{4})?\b")
# Postal indicia and envelope marks: never a sender's name.
_POSTAL = re.compile(labels.POSTAL, re.IGNORECASE)


def rank_names(page: Page, vat: Found | None, by_rules: Found | None) -> Found | None:
    """The best-supported name on the first page, with the runner-up when it stays close."""
    if by_rules is not None:  # its name alone: not the sentence before it, not the address after it
        legal = LEGAL_NAME.search(by_rules.value)
        cut = _before_address(_after_sentence(by_rules.value) if legal else by_rules.value)
        if cut != by_rules.value:
            at = by_rules.column.text.find(cut)
            by_rules = Found(cut, by_rules.column, max(at, 0), max(at, 0) + len(cut))
    candidates = _candidates(page, by_rules)
    if not candidates:
        return None
    context = _Context(page, vat)
    near = [f for f in candidates
            if vat is not None and vat.column.page == f.column.page and _near(f.column, vat.column)]
    context.heads = {id(f) for f in near if f.column.line == min(n.column.line for n in near)}
    scored = sorted(((context.score(found, found is by_rules), index, found)
                     for index, found in enumerate(candidates)), key=lambda s: (-s[0], s[1]))
    best_score, _index, best = scored[0]
    if best_score <= 0 and best is not by_rules:
        return None  # nothing on the page is evidence of a name
    if best.column is context.receipt_head:
        best.value = _spelled_as_repeated(best.value, context.text)
    bare = _TRAILING_MARK.sub("", best.value)
    if bare != best.value and _WORD.search(bare):  # "Restaurant Le Grill §": OCR's speck after the name
        best.value = bare
        best.end = best.start + len(bare)
    for score, _index, other in scored[1:]:
        if best_score - score > _CLOSE:
            break
        if _same_name(other.value, best.value):
            continue
        best = Named(best.value, best.column, best.start, best.end, best.rank, best.role, best.printed,
                      alternatives=[other])
        break
    return best


# A lone mark after a name ("§", "|", "¦"): a speck OCR read, no part of it.
_TRAILING_MARK = re.compile(r"\s+[§|¦¤°*~^_=<>]+$")


@dataclass
class Named(Found):
    """A supplier's name with the candidates that stay as close to being it."""

    alternatives: list[Found] = field(default_factory=list)


def _before_address(name: str) -> str:
    """A name with its address after a comma ("Maison Dupont, Place de la Gare 3"): the name alone."""
    head, _comma, tail = name.partition(", ")
    if tail and (STREET.search(tail) or _PLACE_WORD.search(tail) or re.search(r"\d", tail)):
        return head
    return name


# Words of an address that STREET leaves out (it wants a house number after some of them).
_PLACE_WORD = re.compile(labels.PLACE_WORD, re.IGNORECASE)


def _after_sentence(name: str) -> str:
    """A company's name at the end of a sentence: the words after its last two lower-case words ("... is a
    trading name of Corvid Media Ltd"); one lower-case word belongs to the name ("Jiná firma s.r.o.")."""
    words = name.split(" ")
    for index in range(len(words) - 1, 0, -1):
        if all(w[:1].islower() and w.lower() not in _CONNECTORS for w in words[index - 1:index + 1]):
            rest = words[index + 1:]
            while rest and rest[0].lower() in _CONNECTORS:
                rest = rest[1:]
            return " ".join(rest) if len(rest) >= 2 else name  # a name and its legal form
    return name


# Small words inside company names ("Rør og Rygg", "Marlow & Finch", "Banco de Chile").
_CONNECTORS = labels.CONNECTORS


def _legal(name: str) -> bool:
    """Whether a name ends with a legal form, a word of its own ("Acme GmbH", not "HX7 8AB")."""
    return any(m.start() > 0 and (name[m.start() - 1] in " ,." or _GLUED_FORM.fullmatch(m.group()) is not None)
               and not name[m.end():].strip(" .,") for m in LEGAL_NAME.finditer(name))


# Chinese and Japanese forms are written onto the name ("…有限公司"): a word of their own all the same.
_GLUED_FORM = re.compile(partywords.GLUED_LEGAL_FORM)


def _same_name(first: str, second: str) -> bool:
    a, b = (" ".join(n.casefold().split()) for n in (first, second))
    return a in b or b in a


def _candidates(page: Page, by_rules: Found | None) -> list[Found]:
    """Name-like lines of the first page (a legal-form name cut at its form), none a buyer's, a label or a header."""
    found: list[Found] = [by_rules] if by_rules is not None and _acceptable(page, by_rules.column, by_rules.value) \
        else []
    first = list(itertools.takewhile(lambda c: c.page == 1, page.columns))
    # The top of the page and its foot (the legal line), however many item lines stand between them.
    head = first[:max(0, min(_MAX_COLUMNS, len(first) - _FOOT_COLUMNS))]
    foot = first[len(head):][-_FOOT_COLUMNS:][::-1]  # from the bottom up
    for part, limit in ((head, _MAX_CANDIDATES), (foot, _MAX_CANDIDATES // 3)):
        taken = 0
        for column in part:
            if taken >= limit:
                break
            name = _candidate(page, column)
            if name is not None:
                found.append(name)
                taken += 1
    return found


def _candidate(page: Page, column: Column) -> Found | None:
    """The name a column offers: a legal-form name cut at its form, the company named on its signature line
    ("Acme Signature"), else a name-like line in title case."""
    signed = _signer(column.text) if len(column.text) <= _MAX_NAME else None
    if signed is not None:
        return Found(signed, column, 0, len(signed))
    greeted = _GREETED.match(column.text)
    if greeted is not None:
        return _greeted(page, column, greeted.end())
    legal = next(iter(LEGAL_NAME.finditer(column.head)), None)
    name = _name_before(column.text, legal.end()) if legal is not None else None
    name = _after_sentence(name) if name is not None else None
    if name is not None and _acceptable(page, column, name):
        at = max(column.text.find(name), 0)
        return Found(name, column, at, at + len(name))
    if not _acceptable(page, column, column.text):
        return None
    parsed = parse_name(column.text)
    if parsed is None or not _title_case(parsed[0]) or len(parsed[0]) > _MAX_NAME:
        return None
    name = _before_address(parsed[0])
    return Found(name, column, parsed[1], parsed[1] + len(name))


def _greeted(page: Page, column: Column, at: int) -> Found | None:
    """The shop a greeting names on its line ("Welcome to Sunrise Mart"): the name after it, as a line's."""
    parsed = parse_name(column.text[at:])
    if parsed is None or not _title_case(parsed[0]) or not _acceptable(page, column, parsed[0]):
        return None
    name = _before_address(parsed[0])
    return Found(name, column, at + parsed[1], at + parsed[1] + len(name))


# Fields a form asks for, joined by slashes: "Name/Company", "Firma / Name", "Nom/Date".
_FORM_FIELDS = re.compile(labels.FORM_FIELDS, re.IGNORECASE)
# A signature line: "<who> Signature", "Signature <who>", "Unterschrift <who>".
_SIGNATURE = re.compile(labels.SIGNATURE, re.IGNORECASE)
# Who signs that is no company: a party's role, the person's own ("Buyer Signature", "Authorised Signature").
_SIGNER_ROLE = re.compile(labels.SIGNER_ROLE, re.IGNORECASE)


def _signer(text: str) -> str | None:
    """The company a signature line names ("IAA Signature", "Signature Nordwind Logistics"), not a party's role."""
    match = _SIGNATURE.match(text)
    if match is None:
        return None
    name = (match.group("before") or match.group("after") or "").strip()
    if not _WORD.search(name) or _SIGNER_ROLE.search(name) or len(name.split()) > 4:
        return None
    return name


def _acceptable(page: Page, column: Column, name: str) -> bool:
    """Whether a name read in a column may be the supplier's: not the buyer's, a heading, a label, a title,
    a table's header or postal indicia, and with a word of its own (not OCR's specks: "Sc B", "Pa")."""
    if not _WORD.search(name):
        return False
    sender = column in page.senders  # the return address over the window: its own heading, the issuer's
    if (page.role(column) == "buyer" and not sender) or BUYER_HEADING.match(column.text) or is_heading(name):
        return False
    left = [c for c in page.by_line[column.line] if c.x1 <= column.x0 + 0.5][-1:]
    if left and len(left[0].text.split()) <= 3 and BUYER_HEADING.match(left[0].text):
        return False  # the value of a buyer's label beside it ("Buyer Name   Acme LLC")
    if left and left[0].text.endswith((":", "\uff1a")) and not _legal(name) and not _names_a_party(left[0].text):
        return False  # another label's value beside it ("Condición de venta:   Cuenta Corriente")
    if not _legal(name) and (SELLER_HEADING.match(name) or BUYER_HEADING.match(name) or PAYEE_LABEL.fullmatch(name)):
        return False  # a party's label ("Supplier name", "Beneficiary")
    if not _legal(name) and (POSTCODE.search(name) or _ZIP.search(name) or STREET.search(name)):
        return False  # an address line
    title = INVOICE_TITLE.match(name)
    if (title and (title.end() == len(name) or name[title.end():][:1].isdigit())) or TITLE_ALONE.fullmatch(name):
        return False
    if _labelled(name, party=False) or _POSTAL.match(name) or _NAME_HEADING.match(name) or _NOT_A_PARTY.match(name):
        return False
    if COUNTRY_NAME.fullmatch(column.text.strip(" ,.")):
        return False  # an address's last line
    if _FORM_FIELDS.search(column.head):
        return False  # a form's label for a name ("Print Name/Company/Title"), not a name
    if len(column.text) <= _MAX_NAME and _SIGNATURE.match(column.text) and _signer(column.text) is None:
        return False  # a party's signature line ("Authorised Signature")
    return not _table_header(page, column)


def _names_a_party(label: str) -> bool:
    """Whether a label asks for a party's name ("Razón social:", "Supplier:", "Nazwa:")."""
    return bool(NAME_LABEL.match(label) or _NAME_HEADING.match(label) or SELLER_HEADING.match(label)
                or BUYER_HEADING.match(label) or PAYEE_LABEL.match(label))


def _table_header(page: Page, column: Column) -> bool:
    """Whether a column stands in a table's header: three or more short columns on its line, none with digits
    or a label's value after its colon."""
    line = page.by_line[column.line]
    short = [c for c in line if len(c.text) <= _HEADER_CELL and not re.search(r"\d|[:\uff1a]\s*[^\W\d_]", c.text)]
    return len(line) >= _HEADER_CELLS and len(short) == len(line)


class _Context:
    """What the page says about its issuer: its tax id's place, its bank lines, its domains, its text."""

    def __init__(self, page: Page, vat: Found | None) -> None:
        self.page = page
        self.vat = vat
        self.text = page.layout.text[:20000].casefold()
        self.domains = {(m.group(1) or m.group(2)).casefold() for m in _DOMAIN_WORD.finditer(self.text)} - _FREE_MAIL
        self.banks = [c for c in page.columns[:400] if IBAN_LABEL.search(c.head) or _BANK_WORD.search(c.head)]
        self.sizes = sorted(c.height for c in page.columns[:400] if c.page == 1) or [1.0]
        self.usual = self.sizes[len(self.sizes) // 2]
        self.heads: set[int] = set()  # the candidates heading the block above the tax id
        self.receipt_head = _receipt_head(page)
        buyer = find_buyer(page)
        self.buyer = buyer.value if buyer is not None and len(buyer.value) >= _MIN_BUYER else None

    def score(self, found: Found, by_rules: bool) -> float:
        """The evidence for a name: where it stands, then what it says."""
        rules = _BY_RULES if by_rules and not _in_window(self.page, found.column) else 0.0  # a window's is the buyer's
        return rules + self._place(found) + self._words(found)

    def _place(self, found: Found) -> float:
        """Evidence from the name's place: the seller's block, the letterhead, larger print, the seller's tax id
        and bank lines under it, the footer's legal line, the return address."""
        page, column = self.page, found.column
        points = _SELLER_BLOCK if page.role(column) == "seller" else 0.0
        if column.page == 1:  # (a text without sizes is as tall as its lines: an A4 page at the least)
            points += _LETTERHEAD * max(0.0, 1 - 4 * column.top / max(page.heights.get(column.page, 1.0), _A4))
        if column.height > 1.15 * self.usual:
            points += min(_LARGER, 2 * (column.height / self.usual - 1))
        if self.vat is not None and self.vat.column.page == column.page and _near(column, self.vat.column):
            # the block a tax id ends is headed by its company's name: its first line most of all
            points += _NEAR_TAX_ID if id(found) in self.heads else _NEAR_TAX_ID / 2
        if any(b.page == column.page and _near(column, b) for b in self.banks):
            points += _NEAR_BANK
        if page.region(column) == "footer" and _legal(found.value):
            points += _FOOTER_LEGAL
        if column in page.senders:
            points += _SENDER
        if column is self.receipt_head:
            points += _RECEIPT_HEAD
        if len(column.text) <= _MAX_NAME and _signer(column.text) is not None:
            points += _SIGNED
        if _in_window(self.page, column):
            points += _WINDOW
        if any(_NAME_HEADING.match(c.text) for c in _just_above(page, column)):
            points += _UNDER_NAME_LABEL
        under = page.below(column)[:1]
        if under and under[0].height > 1.1 * column.height and len(found.value.split()) <= 3 and \
                abs(under[0].x0 - column.x0) < column.height / 2:
            points += _LABEL  # a small label over its value (the value printed larger)
        after = page.right_of(column)[:1]
        if after and re.match(r"\W{0,3}\d", after[0].text) and len(found.value.split()) <= 3:
            points += _LABEL  # a label with its number beside it
        if any(_PRICE.search(c.text) for c in page.right_of(column)):
            points += _TABLE_ROW  # an item's line, with its price
        return points

    def _words(self, found: Found) -> float:
        """Evidence from the name's words: a legal form, its domain on the page, repetition; digits and a
        bank's name count against it."""
        name = found.value
        points = _LEGAL_FORM if _legal(name) or _PUBLIC_BODY.match(name) else 0.0
        if 1 < len(name.split()) <= 5:  # a name of a few words over a word alone (a job title, a heading)
            points += _FEW_WORDS
        if self._domain(name):
            points += _DOMAIN
        if self.buyer is not None and _same_name(name, self.buyer):
            points += _BUYERS_NAME
        if self.text.count(name.casefold()) > 1 and (len(name.split()) > 1 or _legal(name)):  # not a common word
            points += _REPEATED
        if re.search(r"\d", name) and not _legal(name):
            points += _DIGITS
        confidences = [w.conf for w in found.column.words or [] if w.conf is not None]
        if confidences and sum(confidences) / len(confidences) < _SURE_OCR:
            points += _UNSURE
        line = self.page.layout.lines[found.column.line].text
        if _BANK_WORD.search(name) or _BANK_WORD.search(line[:max(0, line.find(name))][-40:]):
            points += _BANK_NAME
        return points

    def _domain(self, name: str) -> bool:
        """Whether the name's words spell an e-mail or web domain printed on the page ("acme" in acme.com)."""
        letters = re.sub(r"[^a-z0-9]", "", name.casefold())
        first = re.sub(r"[^a-z0-9]", "", (name.split() or [""])[0].casefold())
        return any(len(d) >= 3 and (d in letters or (len(first) >= 3 and d.startswith(first)))
                   for d in (re.sub(r"[^a-z0-9]", "", d) for d in self.domains))


def _in_window(page: Page, column: Column) -> bool:
    """Whether a line heads an address in an envelope's window: on a page with sizes, left of the middle
    and between a seventh and a third of the page down (DIN 5008's window, and most others), with a
    postcode and town in the lines right under it, and no seller's heading above it."""
    sizes = page.layout.sizes
    if column.page != 1 or not sizes or page.role(column) == "seller":
        return False
    width, height = sizes[0]
    if column.x0 > width / 2 or not height / 7 <= column.top <= height / 3:
        return False
    rows = [page.by_line[index] for index in range(column.line + 1, min(column.line + 5, len(page.by_line)))]
    under = [c for row in rows if not any(_AMOUNT_CELL.match(cell.text) for cell in row)
             for c in row if abs(c.x0 - column.x0) < 2 * column.height]
    return any(POSTCODE.search(c.text) or _ZIP.search(c.text) for c in under)


# A cell that is an amount alone ("1.00", "1.234,56"): its row is an item's or a total's, no address line, even
# when its article code looks like a postcode ("004957 DETERGENTE").
_AMOUNT_CELL = re.compile(r"-?\d{1,3}(?:[.,' ]\d{3})*[.,]\d{2}$")


def _near(column: Column, anchor: Column) -> bool:
    """Whether ``column`` stands on ``anchor``'s line or in the lines above it, in its column band: starting
    where it starts, or centred on the same middle (a receipt's or a letterhead's centred block)."""
    if column.line == anchor.line:
        return True
    if not 0 < anchor.line - column.line <= _NEAR_LINES:
        return False
    middle = abs((column.x0 + column.x1) - (anchor.x0 + anchor.x1)) / 2
    return abs(column.x0 - anchor.x0) < 3 * anchor.height or middle < anchor.height


def _just_above(page: Page, column: Column) -> list[Column]:
    """The columns on the line just above ``column`` that overlap it (a label over its value)."""
    if column.line == 0:
        return []
    return [c for c in page.by_line[column.line - 1]
            if c.page == column.page and c.x0 < column.x1 and c.x1 > column.x0 and column.top - c.bottom < 2 * c.height]


# What only a shop's receipt prints: its own number's label, a receipt's title, the change, cash or a card's line.
_RECEIPT_TITLE = re.compile(r"(?<![^\W\d_])(?:"
                            + "|".join([*labels.RECEIPT_WORD, labels.SLIP_TITLE])
                            + r")(?![^\W\d_])", re.IGNORECASE)
_RECEIPT_PAYMENT = re.compile(labels.RECEIPT_NOT_TOTAL.lstrip("|"), re.IGNORECASE)
# A line of a shop's address block: its street or postcode, its phone, its tax id.
_PHONE = re.compile(labels.PHONE, re.IGNORECASE)
# Lines at the top of a receipt its shop's name may stand in.
_RECEIPT_TOP_LINES = 8


def _receipt_head(page: Page) -> Column | None:
    """On a receipt, the first name-like line at its top with an address, phone or tax-id line just under it:
    the shop's name (a tagline or a greeting above it has no address block under it)."""
    columns = list(itertools.takewhile(lambda c: c.page == 1, page.columns[:_MAX_COLUMNS]))
    if not any(_RECEIPT_TITLE.search(c.text) or RECEIPT_NUMBER.search(c.head) or _RECEIPT_PAYMENT.search(c.head)
               for c in columns):
        return None
    for column in columns:
        if column.line >= _RECEIPT_TOP_LINES:
            break
        if _address_line(column.text) or _candidate(page, column) is None:
            continue
        under = page.by_line[column.line + 1] if column.line + 1 < len(page.by_line) else []
        if any(_address_line(c.text) for c in under):
            return column
    return None


# A house number and a street's abbreviated kind ("191 E 3RD AVE", "55 Main St"): STREET wants more.
_STREET_ABBREVIATED = re.compile(labels.STREET_ABBREVIATED, re.IGNORECASE)


def _address_line(text: str) -> bool:
    return bool(STREET.search(text) or _STREET_ABBREVIATED.search(text) or POSTCODE.search(text)
                or _ZIP.search(text) or _PHONE.search(text)
                or any(label.search(text) for label, _country in VAT_LABELS))


# A word of a receipt's header OCR misread by a letter: the page's spelling, printed there this often at least.
_REPEATS = 2
_MIN_SPELLED = 5


def _spelled_as_repeated(name: str, text: str) -> str:
    """A receipt's header name with a word printed once that differs by one letter from a word the receipt
    repeats ("Walgreeni" beside "THANK YOU FOR SHOPPING AT WALGREENS"): that word, in the header's case."""
    counts: dict[str, int] = {}
    for word in re.findall(r"[^\W\d_]{5,}", text):
        counts[word] = counts.get(word, 0) + 1
    words = name.split(" ")
    for index, word in enumerate(words):
        folded = word.casefold()
        if len(folded) < _MIN_SPELLED or not folded.isalpha() or counts.get(folded, 0) > 1:
            continue
        near = [w for w, n in counts.items() if n >= _REPEATS and _one_letter_apart(folded, w)]
        if len(near) == 1:
            spelled = near[0].capitalize() if word[:1].isupper() else near[0]
            words[index] = spelled.upper() if word.isupper() else spelled
    return " ".join(words)


def _one_letter_apart(first: str, second: str) -> bool:
    """Whether two words differ by one letter changed, added or dropped."""
    if first == second or abs(len(first) - len(second)) > 1:
        return False
    if len(first) == len(second):
        return sum(a != b for a, b in zip(first, second, strict=True)) == 1
    short, long = sorted((first, second), key=len)
    at = next((i for i, (a, b) in enumerate(zip(short, long, strict=False)) if a != b), len(short))
    return short[at:] == long[at + 1:]
