"""How the register compares what an invoice prints with what it knows: as a bank would.

Identifiers (tax ids, IBANs) are compared in their NFKC form without separators, in upper case:
"de 136-695-976" and "DE136695976" are the same. Names are compared case folded, without
punctuation and without their legal form ("Nordlicht Werkzeugbau GmbH" is "nordlicht werkzeugbau").
"""

from __future__ import annotations

import re
import unicodedata

# Legal forms left off a name when comparing (a supplier writes its form one way, the books another).
LEGAL_FORMS = frozenset({
    "ag", "bv", "co", "corp", "corporation", "gmbh", "inc", "kg", "kgaa", "llc", "llp", "ltd", "limited", "nv",
    "oy", "plc", "sa", "sarl", "sas", "se", "spa", "srl", "ug", "company", "ohg", "ab", "as", "aps", "sl",
})
_NOT_WORD = re.compile(r"[\W_]+")


def identifier(value: str | None) -> str:
    """A tax id or IBAN as compared: NFKC, letters and digits only, upper case; "" for none."""
    if not value:
        return ""
    return "".join(ch for ch in unicodedata.normalize("NFKC", value) if ch.isalnum()).upper()


def name(value: str | None) -> str:
    """A supplier's name as compared: NFKC, case folded, punctuation and legal forms left off."""
    if not value:
        return ""
    words = _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", value).casefold()).split()
    kept = [word for word in words if word not in LEGAL_FORMS]
    return " ".join(kept or words)[:200]


def grouped(iban: str) -> str:
    """An IBAN as people read it: in groups of four."""
    compact = identifier(iban)
    return " ".join(compact[i:i + 4] for i in range(0, len(compact), 4))
