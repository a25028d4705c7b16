"""Languages, one module each: the labels an invoice prints in it, the words ``agent.labels`` splices into the
patterns languages share, and its month names. A language is its module and nothing else.

``agent.labels`` assembles every language's entries into the patterns the reader uses. A module defines only
what its language has; each entry is a list of regular expression sources (labels) or of alternatives (words
spliced into a larger pattern), with the same rules as ``agent.labels``: literal alternatives, optional parts,
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
# What a language module may define: each is assembled by ``agent.labels`` (``MONTHS`` into the month names).
ENTRIES = ("ORDER", "INVOICE_NUMBER", "RECEIPT_NUMBER", "TRANSACTION_NUMBER", "INVOICE_TITLE",
           "INVOICE_DATE", "DUE_DATE", "OTHER_DATE",
           "TOTAL_GROSS", "TOTAL_DUE", "TOTAL_PLAIN", "NOT_TOTAL", "GROSS_MARK", "NET", "VAT_AMOUNT", "DEPOSIT",
           "CURRENCY", "MONTHS",
           # words spliced into the patterns ``agent.labels`` shares between languages: the invoice number's...
           "NUMBER_SIGN", "NUMBERED_TITLE", "REFERENCE", "OF", "INVOICE_OF", "TITLE_BEFORE_NUMBER", "NUMBER_WORD",
           "DOCUMENT_REFERENCE", "OTHER_NUMBER", "TITLE_ALONE",
           # ...a receipt's number and its payment's, its lines that are no total, its total...
           "RECEIPT", "RECEIPT_SIGN", "RECEIPT_BEFORE_SIGN", "RECEIPT_OF", "RECEIPT_AFTER_SIGN", "TRANSACTION",
           "RECEIPT_PAYMENT", "RECEIPT_SUM", "RECEIPT_TITLE", "GREETING",
           # ...a bare date, a letter's date ("München, den"), a total "(incl. VAT)", a gross amount...
           "DATE_WORD", "LETTER_DATE", "TOTAL_WORD", "VAT_WORD", "INCLUDED", "INCLUDED_ENDING", "INCLUDED_TOTAL",
           "VAT_INCLUDED", "GROSS_WORD",
           # ...the account, its holder, the parties' headings, a third party, the VAT id labels (with a country)
           "ACCOUNT", "PAYEE", "SELLER", "BUYER", "BUYER_HEADING", "BUYER_MARK", "BUYER_MARK_INSIDE", "THIRD_PARTY",
           "VAT_ID", "VAT_ID_ORDER",
           # words the field readers look for beside the labels (``agent.fields``)
           "HEADING_END", "NAME_LABEL", "PERIOD", "YOUR_INVOICE", "DATE_BEFORE", "SPLIT_NUMBER")
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


def months() -> dict[int, str]:
    """Each month's names in every language here, space-separated."""
    names: dict[int, str] = {}
    for module in MODULES:
        for number, words in getattr(module, "MONTHS", {}).items():
            names[number] = f"{names.get(number, '')} {words}".strip()
    return names
