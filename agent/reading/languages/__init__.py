"""Languages, one module each: the labels an invoice prints in it, the words ``agent.reading.labels`` splices into the
patterns languages share, and its month names. A language is its module and nothing else.

``agent.reading.labels`` assembles every language's entries into the patterns the reader uses. A module defines only
what its language has; each entry is a list of regular expression sources (labels) or of alternatives (words
spliced into a larger pattern), with the same rules as ``agent.reading.labels``: literal alternatives, optional parts,
nothing that repeats a group over characters another part of it can also take.

Every module in this package is a language: ``MODULES`` finds them, ordered by each one's ``ORDER``, which is the
order of the alternatives in each assembled pattern (where two languages' labels match at the same place, the
earlier language's wins). Adding a language: docs/languages.md.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def _discovered() -> tuple[ModuleType, ...]:
    """Every module of this package, in the order each declares: no list to edit when a language is added."""
    found = [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)]
    return tuple(sorted(found, key=lambda module: int(module.ORDER)))


MODULES = _discovered()
# What a language module may define: each is assembled by ``agent.reading.labels`` (``MONTHS`` into the month names).
ENTRIES = ("ORDER", "INVOICE_NUMBER", "RECEIPT_NUMBER", "TRANSACTION_NUMBER", "INVOICE_TITLE",
           "INVOICE_DATE", "DUE_DATE", "OTHER_DATE",
           "TOTAL_GROSS", "TOTAL_DUE", "TOTAL_PLAIN", "NOT_TOTAL", "GROSS_MARK", "NET", "VAT_AMOUNT", "DEPOSIT",
           "CURRENCY", "MONTHS",
           # words spliced into the patterns ``agent.reading.labels`` shares between languages: the invoice number's...
           "NUMBER_SIGN", "NUMBERED_TITLE", "REFERENCE", "OF", "INVOICE_OF", "TITLE_BEFORE_NUMBER", "NUMBER_WORD",
           "DOCUMENT_REFERENCE", "OTHER_NUMBER", "TITLE_ALONE",
           # ...a receipt's number and its payment's, its lines that are no total, its total...
           "RECEIPT", "RECEIPT_SIGN", "RECEIPT_BEFORE_SIGN", "RECEIPT_OF", "RECEIPT_AFTER_SIGN", "TRANSACTION",
           "RECEIPT_PAYMENT", "RECEIPT_SUM", "SLIP_TITLE", "GREETING",
           # ...a bare date, a letter's date ("München, den"), a total "(incl. VAT)", a gross amount...
           "DATE_WORD", "LETTER_DATE", "TOTAL_WORD", "VAT_WORD", "INCLUDED", "INCLUDED_ENDING", "INCLUDED_TOTAL",
           "VAT_INCLUDED", "GROSS_WORD",
           # ...the account, its holder, the parties' headings, a third party, the VAT id labels (with a country)
           "ACCOUNT", "PAYEE", "SELLER", "BUYER", "BUYER_HEADING", "BUYER_MARK", "BUYER_MARK_INSIDE", "THIRD_PARTY",
           "VAT_ID", "VAT_ID_ORDER",
           # words the field readers look for beside the labels (``agent.reading.fields``)
           "HEADING_END", "NAME_LABEL", "PARTY_NAME", "PERIOD", "YOUR_INVOICE", "DATE_BEFORE", "SPLIT_NUMBER",
           "POINT_OF_SALE",
           # ...a written date's ordinals and small words ("1er mars", "5 de mayo de 2020", "March 3rd"), a company
           # register's name, a street's ("Rue", "Via", "-straße"), a written currency ("Schweizer Franken") and
           # country ("Deutschland"), each with its code (``named``), the words of a VAT id's label, a receipt's
           # title, the titles that start another document appended to an invoice and the word "number" after them
           # (``agent.reading.appended``), a line-items table's header, a contact's or a page's word ("Tel", "Seite")
           "DAY_ORDINAL", "MONTH_DAY_ORDINAL", "DAY_OF", "YEAR_OF", "REGISTER", "STREET_MARK", "STREET_TYPE",
           "STREET_BEFORE_NAME", "STREET_ENDING", "CURRENCY_NAME", "CURRENCY_COUNTRY", "CURRENCY_NOUN",
           "COUNTRY_NAME", "VAT_ID_TAX", "VAT_ID_WORD", "RECEIPT_TITLE", "RECEIPT_WORD", "APPENDED_INVOICE",
           "APPENDED_OTHER", "NUMBER_NAME", "ITEM_HEADER", "CONTACT",
           # ...and the parties' (``fields.parties``): a label naming a number, a salutation, a bank, a name's
           # heading, a document's own words, a public body ("City of"), a postal mark, a place, the small words
           # inside a company's name, a form's fields, a signature and a signer's role, a phone, a street's kind
           "NAMES_A_NUMBER", "NOT_A_BUYER", "BANK_WORD", "NAME_HEADING", "NOT_A_PARTY", "PUBLIC_BODY",
           "PUBLIC_BODY_OF", "POSTAL", "PLACE_WORD", "CONNECTOR", "FORM_WORD", "SIGNATURE", "SIGNER_ROLE", "PHONE",
           "STREET_KIND")
# The entries that name something: each a dict of the words to what they name (a currency's or a country's code).
NAMED = ("CURRENCY_NAME", "CURRENCY_COUNTRY", "COUNTRY_NAME")
# In a label, where any language's number sign goes ("<number>": "n°", "Nr.", "No.", "#"...).
NUMBER = "<number>"
# What every language module defines: its place, the labels of the dates, the totals and the amounts, its months.
REQUIRED = ("ORDER", "INVOICE_DATE", "DUE_DATE", "OTHER_DATE", "TOTAL_GROSS", "TOTAL_DUE", "NOT_TOTAL", "NET",
            "VAT_AMOUNT", "DEPOSIT", "MONTHS")


def gather(name: str) -> list[str]:
    """Every language's entries for ``name`` (labels, or words to splice), in the order of ``MODULES``."""
    return [entry for module in MODULES for entry in getattr(module, name, [])]


def pairs(name: str) -> list[tuple[str, str | None]]:
    """Every language's labels for ``name`` that each come with a value (a VAT id label with its country), in the
    order of ``MODULES`` unless a module puts its own elsewhere (``VAT_ID_ORDER`` instead of ``ORDER``)."""
    ordered = sorted(MODULES, key=lambda module: int(getattr(module, f"{name}_ORDER", module.ORDER)))
    return [pair for module in ordered for pair in getattr(module, name, [])]


def alternatives(name: str) -> str:
    """Every language's words for ``name`` as one alternation to append to a pattern ("" when none has any)."""
    words = gather(name)
    return "|" + "|".join(words) if words else ""


def named(name: str) -> dict[str, str]:
    """Every language's words for ``name`` with what each names (``NAMED``), in the order of ``MODULES``."""
    words: dict[str, str] = {}
    for module in MODULES:
        words.update(getattr(module, name, {}))
    return words


def months() -> dict[int, str]:
    """Each month's names in every language here, space-separated."""
    names: dict[int, str] = {}
    for module in MODULES:
        for number, words in getattr(module, "MONTHS", {}).items():
            names[number] = f"{names.get(number, '')} {words}".strip()
    return names
