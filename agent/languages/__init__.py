"""Languages, one module each: the labels an invoice prints in it and its month names.

``agent.labels`` assembles every language's entries into the patterns the reader uses. A module defines only
what its language has; each entry is a list of regular expression sources (labels) or of alternatives (words
spliced into a larger pattern), with the same rules as ``agent.labels``: literal alternatives, optional parts,
nothing that repeats a group over characters another part of it can also take.

English, German, French, Dutch, Spanish, Italian and Polish still live together in ``agent.labels`` (their
labels share patterns there); the languages below were added one module each, and the others move here when
their patterns are next touched.
"""

from __future__ import annotations

from types import ModuleType

from . import cs, da, no, pt, sv

MODULES: tuple[ModuleType, ...] = (no, sv, da, pt, cs)
# What a language module may define: each is assembled by ``agent.labels`` (``MONTHS`` into the month names).
ENTRIES = ("INVOICE_NUMBER", "RECEIPT_NUMBER", "TRANSACTION_NUMBER", "INVOICE_TITLE",
           "INVOICE_DATE", "DUE_DATE", "OTHER_DATE",
           "TOTAL_GROSS", "TOTAL_DUE", "TOTAL_PLAIN", "NOT_TOTAL", "GROSS_MARK", "NET", "VAT_AMOUNT", "DEPOSIT",
           "CURRENCY", "MONTHS")


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
