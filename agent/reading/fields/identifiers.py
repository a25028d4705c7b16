"""The supplier's VAT id and IBAN: labelled or found by their check digits, never the buyer's."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import labels
from . import taxids
from .page import Column, Found, Page, labelled_value
from .patterns import ANY_VAT_LABEL, IBAN_LABEL, IBAN_SHAPE, SWISS_VAT, VAT_LABELS, VAT_SHAPE
from .values import iban_valid, parse_iban, parse_vat, spans_of, valid_prefix, vat_valid

# Identifiers tried against their check digits per document (bounds hostile text).
_MAX_IDENTIFIERS = 100

# Countries written out in an address (each language's names), by their VAT prefix.
_COUNTRY_NAMES = labels.COUNTRY_NAMES
COUNTRY_NAME = re.compile(r"(?<![^\W\d_])(?:" + "|".join(_COUNTRY_NAMES) + r")(?![^\W\d_])", re.IGNORECASE)


@dataclass
class TaxFound(Found):
    """A tax id read off the page, with the schemes its label names (none: an EU VAT label or a shape)."""

    schemes: tuple[str, ...] = ()


def supplier_country(page: Page, found: dict[str, Found | None]) -> str | None:
    """The supplier's country: its tax id's (its prefix, shape or label's scheme), else its IBAN's, else
    the country written in its block or letterhead."""
    vat = found.get("vat_id")
    if vat is not None:
        schemes = vat.schemes if isinstance(vat, TaxFound) else ()
        label_country = vat.role if len(vat.role) == 2 else None
        tax = taxids.identify(vat.value, country=label_country, keys=schemes)
        if tax is not None and tax.country != "EU":
            return tax.country
    iban = found.get("iban")
    if iban is not None and iban_valid(iban.value):
        return iban.value[:2].upper()
    if vat is None:
        return None
    column = vat.column
    lines = page.layout.lines
    for line in range(max(0, column.line - 8), min(column.line + 3, len(lines))):
        named = COUNTRY_NAME.search(lines[line].text[:300])
        if named is not None:
            return _COUNTRY_NAMES[named.group().lower()]
    return None


def find_vat_id(page: Page) -> Found | None:
    """The supplier's VAT id: labelled or found by its check digits anywhere, never the buyer's."""
    found: list[Found] = []
    tried = 0
    for column in page.columns:
        if len(found) > _MAX_IDENTIFIERS:
            break  # a page of VAT lines is no invoice's: the first ones are enough
        for label, label_country in VAT_LABELS if ANY_VAT_LABEL.search(column.head) else ():
            match = label.search(column.head)
            if match is None:
                continue
            value = labelled_value(page, column, match.end(), parse_vat)
            if value is not None:
                item = value[0]
                whose = _whose(page, item, _label_text(column, item))
                item.role = whose or (label_country or "")
                valid = vat_valid(item.value) or taxids.eu_vat(item.value, label_country) is not None
                item.rank = 0 if valid else 2
                found.append(item)
            break
        if taxids.ANY_WORLD_LABEL.search(column.head):
            _world_labelled(page, column, found)
        for match, key in taxids.shapes_in(column.text) if _DIGITS.search(column.text) else ():
            tax = taxids.validate(match.group(), key)
            if tax is not None and not any(f.column is column and f.start == match.start() for f in found):
                item = TaxFound(match.group(), column, match.start(), match.end(), rank=1, schemes=(key,))
                item.role = _whose(page, item, column.text[max(0, match.start() - 40):match.start()])
                found.append(item)
        ibans: list[tuple[int, int]] | None = None  # looked for only once a VAT shape turns up
        for match in VAT_SHAPE.finditer(column.text):
            ibans = spans_of(column.text, IBAN_SHAPE) if ibans is None else ibans
            tried += 1
            if tried > _MAX_IDENTIFIERS:
                break
            swiss = SWISS_VAT.match(column.text, match.start())
            token = swiss.group() if swiss and vat_valid(swiss.group()) else valid_prefix(match.group(), vat_valid)
            if token is None or _in_iban(match.start(), len(token), ibans):
                continue
            item = Found(token, column, match.start(), match.start() + len(token), rank=1)
            before = column.text[:match.start()]
            line_text = page.layout.lines[column.line].text
            buyer = bool(labels.BUYER_MARK.search(before)) or page.role(column) == "buyer"
            if not buyer and not before.strip() and column is not page.by_line[column.line][0]:
                left = line_text[:line_text.find(column.text)] if column.text in line_text else ""
                buyer = bool(labels.BUYER_MARK.search(left[-40:]))
            item.role = "buyer" if buyer else ("third" if _whose(page, item, "") == "third" else "")
            found.append(item)
    return _best_identifier(page, found)


def _in_iban(at: int, length: int, ibans: list[tuple[int, int]]) -> bool:
    """Whether a VAT id's digits are an IBAN's first ("PL89 6269 2554 ..."): its run goes on past them. A VAT id
    the IBAN's shape merely fits, and no more ("SE556036079301"), is the VAT id."""
    return any(start <= at < end and end - at > length + _IBAN_TAIL for start, end in ibans)


# Characters an IBAN runs on past a VAT id's shape at its start, at least (its shortest, Norway's, has 15).
_IBAN_TAIL = 3


def _world_labelled(page: Page, column: Column, found: list[Found]) -> None:
    """A tax id under a label naming its scheme ("CUIT:", "ABN", "GSTIN", "Org.nr."), the buyer's told apart."""
    for label, keys in taxids.WORLD_LABELS:
        match = label.search(column.head)
        if match is None:
            continue

        ocr = any(w.conf is not None for w in column.words or [])

        def parse(text: str, keys: tuple[str, ...] = keys, ocr: bool = ocr) -> tuple[str, int, int] | None:
            parsed = taxids.parse_labelled(text, keys, ocr=ocr)
            return (parsed[0].printed, parsed[1], parsed[2]) if parsed is not None else None

        value = labelled_value(page, column, match.end(), parse)
        rank = 0
        if value is None:  # the label's number fails every scheme it names: read as printed, to be reported
            value, rank = labelled_value(page, column, match.end(), parse_vat) or \
                labelled_value(page, column, match.end(), taxids.parse_token), 2
        if value is None or taxids.placeholder(value[0].value):
            continue
        got = value[0]
        item = TaxFound(got.value, got.column, got.start, got.end, rank=rank, schemes=keys)
        item.role = _whose(page, item, _label_text(column, got))
        found.append(item)
        return


_THIRD_PARTY = re.compile(labels.THIRD_PARTY, re.IGNORECASE)
_DIGITS = re.compile(r"\d{3}")  # every tax id's shape has three digits in a row


def _whose(page: Page, item: Found, label: str) -> str:
    """buyer, third (an agent's, a payment service's, a carrier's: said before it) or "" (the seller's)."""
    if labels.BUYER_MARK.search(label) or page.role(item.column) == "buyer":
        return "buyer"
    before = f"{label} {item.column.text[:item.start]}"
    return "third" if _THIRD_PARTY.search(before[-120:]) else ""


def _label_text(column: Column, item: Found) -> str:
    """What is printed before a labelled value: its label and the words around it ("N° TVA client")."""
    return column.text[max(0, item.start - 40):item.start] if item.column is column else column.head


def _best_identifier(page: Page, found: list[Found]) -> Found | None:
    """The issuer's: in the seller's block, header or footer before the body; never the buyer's."""
    own = [f for f in found if f.role not in ("buyer", "third")]
    if not own:
        return None

    def strength(item: Found) -> tuple[int, int, int, int]:
        block = page.role(item.column)
        region = page.region(item.column)  # a footer is the issuer's; a header may hold the buyer's window
        place = 0 if block == "seller" else 1 if region == "footer" else 2 if region == "header" else 3
        # A national tax or register number (a Steuernummer, an organisationsnummer) only when no VAT id is printed.
        secondary = isinstance(item, TaxFound) and _secondary(item)
        return (int(secondary), place, 0 if item.rank < 2 else 1, item.rank)

    return min(own, key=strength)


def _secondary(item: TaxFound) -> bool:
    """Whether a tax id is a national number of the kind a VAT id outranks: by the schemes its check digits pass
    (a label may name several: "Org.nr" a Norwegian MVA number or a Swedish organisationsnummer)."""
    passed = [key for key in item.schemes if taxids.validate(item.value, key) is not None]
    return bool(item.schemes) and set(passed or item.schemes) <= taxids.SECONDARY


def find_iban(page: Page) -> Found | None:
    found: list[Found] = []
    tried = 0
    for column in page.columns:
        if len(found) > _MAX_IDENTIFIERS:
            break  # a page of IBAN lines is no invoice's: the first ones are enough
        match = IBAN_LABEL.search(column.head)
        if match is not None:
            value = labelled_value(page, column, match.end(), parse_iban)
            if value is not None:
                item = _iban_continued(page, value[0])
                item.rank = 0 if iban_valid(item.value) else 2
                item.role = "buyer" if labels.BUYER_MARK.search(_label_text(column, item)) else ""
                found.append(item)
                continue
        for shape in IBAN_SHAPE.finditer(column.text):
            tried += 1
            if tried > _MAX_IDENTIFIERS:
                break
            token = valid_prefix(shape.group(), iban_valid)
            if token is not None:
                found.append(Found(token, column, shape.start(), shape.start() + len(token), rank=1,
                                    role="buyer" if page.role(column) == "buyer" else ""))
    best = _best_identifier(page, found)
    if best is not None and iban_valid(best.value):
        page.memo["iban_rivals"] = _other_accounts(best, found)
    return best


def _other_accounts(best: Found, found: list[Found]) -> list[Found]:
    """The issuer's other valid IBANs on the page, once each: two accounts to pay into are two
    readings of one field (a "new bank details" line beside the old account is a known fraud)."""
    own = "".join(best.value.split()).upper()
    others: dict[str, Found] = {}
    for item in found:
        account = "".join(item.value.split()).upper()
        if item.role not in ("buyer", "third") and account != own and iban_valid(item.value):
            others.setdefault(account, item)
    return list(others.values())


def _iban_continued(page: Page, item: Found) -> Found:
    """An IBAN broken over two lines in a narrow column: its rest is right under it."""
    if iban_valid(item.value):
        return item
    for under in page.below(item.column)[:1]:
        rest = re.match(r"[A-Z0-9]{1,4}(?: [A-Z0-9]{1,4})*", under.text)
        if rest is not None and iban_valid(f"{item.value} {rest.group()}"):
            return Found(f"{item.value} {rest.group()}", item.column, item.start, item.end)
    return item
