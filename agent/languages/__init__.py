"""Languages, one module each: the labels an invoice prints in it and its month names.

``agent.labels`` assembles every language's entries into the patterns the reader uses. A module defines only
what its language has; each entry is a list of regular expression sources (labels) or of alternatives (words
spliced into a larger pattern), with the same rules as ``agent.labels``: literal alternatives, optional parts,
nothing that repeats a group over characters another part of it can also take.

English, German, French, Dutch, Spanish, Italian and Polish keep here their dates', totals' and amounts' labels,
the words that make a date or a total another one, their invoice titles, their currency labels and their month
names; their number, party and VAT id labels still share patterns in ``agent.labels``.
The order of ``MODULES`` is the order of the alternatives in each assembled pattern: where two languages' labels
match at the same place, the earlier language's wins. Adding a language: docs/languages.md.
"""

from __future__ import annotations

from types import ModuleType

from . import cs, da, de, en, es, et, fr, it, nl, no, pl, pt, sv, zh

MODULES: tuple[ModuleType, ...] = (en, de, fr, nl, es, it, pl, no, sv, da, pt, cs, et, zh)
# What a language module may define: each is assembled by ``agent.labels`` (``MONTHS`` into the month names).
ENTRIES = ("INVOICE_NUMBER", "RECEIPT_NUMBER", "TRANSACTION_NUMBER", "INVOICE_TITLE",
           "INVOICE_DATE", "DUE_DATE", "OTHER_DATE",
           "TOTAL_GROSS", "TOTAL_DUE", "TOTAL_PLAIN", "NOT_TOTAL", "GROSS_MARK", "NET", "VAT_AMOUNT", "DEPOSIT",
           "CURRENCY", "MONTHS")
# What every language module defines: the labels of the dates, the totals and the amounts, and the month names.
REQUIRED = ("INVOICE_DATE", "DUE_DATE", "OTHER_DATE", "TOTAL_GROSS", "TOTAL_DUE", "NOT_TOTAL", "NET", "VAT_AMOUNT",
            "DEPOSIT", "MONTHS")


def gather(name: str) -> list[str]:
    """Every language's entries for ``name`` (labels, or words to splice), in the order of ``MODULES``."""
    return [entry for module in MODULES for entry in getattr(module, name, [])]


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
