"""Identifiers compared as a bank compares them, and letters that only look Latin named.

A bank reads an IBAN, a VAT id or an invoice number as its characters, not as their look:
``DE89-3704-0044…``, ``DE89 3704 0044…`` and one in full-width letters (U+FF24…) are one
account once Unicode is normalised (NFKC) and the separators are gone, while ``DE89…`` written
with a Cyrillic E (U+0415) is another string altogether (and no valid IBAN). So a comparison normalises first, and
a letter from another script inside an identifier is a finding of its own, wherever it is read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

# Spaces, dots, dashes (all of Unicode's), slashes, underscores, colons, commas, and the invisible
# format characters (zero-width space and joiners, soft hyphen): separators a bank drops.
_SEPARATORS = re.compile(r"[\s.\-/_:,\u00ad\u2010-\u2015\u2212\u200b-\u200d\u2060\ufeff]")

# Letters of other scripts drawn like Latin capitals (and the lower-case ones used alike): what
# an IBAN or VAT id on the page may hide. Folded only to *find* such an identifier, never to read it.
_LATIN_LOOKALIKES = str.maketrans(
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0423\u0406\u0408\u0405"
    "\u0430\u0435\u043e\u0440\u0441\u0445\u0443\u0456\u0458\u0455"  # Cyrillic
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7\u03bf",  # Greek
    "ABEKMHOPCTXYIJSaeopcxyijs"
    "ABEZHIKMNOPTYXo",
)
# An IBAN as printed: a country, two check digits, then letters and digits with separators between.
_IBAN_SHAPE = re.compile(r"(?<![^\W_])[A-Z]{2}[ \-.]?\d{2}(?:[ \-.\u2010-\u2015\u00a0\u200b]?[A-Z0-9]){10,32}",
                         re.IGNORECASE)
_SHORTEST_IBAN = 15
_LONGEST_IBAN = 34
_MAX_SHAPES = 200  # IBAN shapes looked at per document (bounds hostile text)
_MAX_NAMED = 3  # identifiers a finding names
# A token with a digit: where a letter of another script among Latin ones is a disguise.
_TOKEN = re.compile(r"[^\W_](?:[^\W_]|[\-./](?=[^\W_]))*")
IDENTIFIER_NAMES = {"iban": "IBAN", "vat_id": "VAT id", "invoice_number": "invoice number"}


def compact(value: str) -> str:
    """The identifier as a bank reads it: NFKC, separators removed, upper case."""
    return _SEPARATORS.sub("", unicodedata.normalize("NFKC", value)).upper()


def script(char: str) -> str:
    """The script a letter belongs to, in words ("Latin", "Cyrillic", "Greek"), from its Unicode name."""
    try:
        name = unicodedata.name(char)
    except ValueError:
        return "unnamed"
    first = name.split()[0]
    return "Latin" if first == "LATIN" else first.capitalize()


def other_scripts(value: str) -> list[tuple[str, str]]:
    """The letters of ``value`` (after NFKC) that are not Latin, each with its script, in order, once each."""
    found: dict[str, str] = {}
    for char in unicodedata.normalize("NFKC", value):
        if char.isalpha() and script(char) != "Latin":
            found.setdefault(char, script(char))
    return list(found.items())


def script_finding(what: str, value: str, where: str) -> str:
    """``the IBAN on the visible page contains a Cyrillic letter (… U+0415) …``, or "" when every letter is Latin."""
    letters = other_scripts(value)
    if not letters:
        return ""
    scripts = sorted({name for _, name in letters})
    shown = ", ".join(f"{char} U+{ord(char):04X}" for char, _ in letters[:_MAX_NAMED])
    article = "an" if scripts[0][0] in "AEIOU" else "a"
    return (f"the {what} {where} contains {article} {' and '.join(scripts)} letter ({shown}) that looks like a "
            "Latin one: a bank reads it as another character; ask the supplier, on a number you already know, for the "
            "right one before paying")


def iban_shapes(text: str) -> Iterator[tuple[str, str]]:
    """Every IBAN printed in ``text``, however it is spaced or hyphenated and whatever lookalike letters
    it is written with: (as printed, as a bank would read it once the lookalikes are Latin).

    Only shapes whose check digits hold (once folded) are given: a reference number is no IBAN.
    """
    from stdnum import iban

    normal = unicodedata.normalize("NFKC", text)
    folded = normal.translate(_LATIN_LOOKALIKES)  # same length: the translation is one to one
    for count, match in enumerate(_IBAN_SHAPE.finditer(folded)):
        if count >= _MAX_SHAPES:
            return
        run = match.group()
        for end in range(len(run), 0, -1):  # the longest prefix that is a valid IBAN ("… BIC COBA…" cut off)
            candidate = compact(run[:end])
            if len(candidate) < _SHORTEST_IBAN:
                break
            if len(candidate) <= _LONGEST_IBAN and iban.is_valid(candidate):
                yield normal[match.start():match.start() + end], candidate
                break


def mixed_identifiers(text: str) -> Iterator[str]:
    """Tokens of ``text`` with a digit, a Latin letter and a letter of another script: identifiers in disguise."""
    normal = unicodedata.normalize("NFKC", text)
    for match in _TOKEN.finditer(normal):
        token = match.group()
        if not any(c.isdigit() for c in token) or not other_scripts(token):
            continue
        if any(c.isalpha() and script(c) == "Latin" for c in token):
            yield token


def page_findings(text: str) -> list[str]:
    """Identifiers on the page with letters of another script among Latin ones, an IBAN named as such."""
    findings: list[str] = []
    named: set[str] = set()
    for printed, _ in iban_shapes(text):
        if other_scripts(printed) and printed not in named:
            named.add(printed)
            findings.append(script_finding("IBAN", printed, f"on the visible page ({_short(printed)})"))
    for token in mixed_identifiers(text):
        if len(named) >= _MAX_SHAPES:
            break
        if any(token in printed or printed in token for printed in named):
            continue
        named.add(token)
        findings.append(script_finding("identifier", token, f"on the visible page ({_short(token)})"))
    return [finding for finding in findings if finding][:_MAX_NAMED * 2]


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
