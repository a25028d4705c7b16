"""The world's tax ids: which country's scheme a printed number belongs to, checked by python-stdnum.

A seller's tax id is printed under a label that names its scheme ("CUIT", "ABN", "GSTIN", "NIP",
"Org.nr.", "CHE-..."), or in a shape only one scheme has (a CNPJ's "00.000.000/0000-00", an Indian
GSTIN, an EU VAT id with its prefix). The label (or the shape) gives the schemes to try, the check
digits decide. What the page prints is kept as the value; the country and the validated normal
form (python-stdnum's compact form, an EU VAT id with its prefix) are given beside it, so a prefix
the page does not print is never added to what is shown as read.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from types import ModuleType

# Each scheme: its country, its name, the stdnum module that checks it (None: a format only).
# The Malaysian SST and GST numbers have no check digits (stdnum has no module for them): their
# format is all that can be checked, and the detail says so.
_MY_SST = re.compile(r"[A-Z]\d{2}-?\d{4}-?\d{8}")
_MY_GST = re.compile(r"\d{12}")


@dataclass(frozen=True)
class Scheme:
    country: str
    name: str
    module: str | None  # a python-stdnum module, or None when only the format can be checked
    pattern: re.Pattern[str] | None = None  # the compact format when ``module`` is None


EU_VAT = Scheme("EU", "VAT id", "stdnum.eu.vat")
_SCHEMES = {
    "AR": Scheme("AR", "CUIT", "stdnum.ar.cuit"),
    "AU": Scheme("AU", "ABN", "stdnum.au.abn"),
    "IN": Scheme("IN", "GSTIN", "stdnum.in_.gstin"),
    "MY-SST": Scheme("MY", "SST registration number", None, _MY_SST),
    "MY-GST": Scheme("MY", "GST id", None, _MY_GST),
    "US": Scheme("US", "EIN", "stdnum.us.ein"),
    "BR": Scheme("BR", "CNPJ", "stdnum.br.cnpj"),
    "BR-CPF": Scheme("BR", "CPF", "stdnum.br.cpf"),
    "MX": Scheme("MX", "RFC", "stdnum.mx.rfc"),
    "NO": Scheme("NO", "MVA number", "stdnum.no.mva"),
    "NO-ORG": Scheme("NO", "organisation number", "stdnum.no.orgnr"),
    "CH": Scheme("CH", "UID", "stdnum.ch.uid"),
    "CA": Scheme("CA", "business number", "stdnum.ca.bn"),
    "CN": Scheme("CN", "unified social credit code", "stdnum.cn.uscc"),
    "CO": Scheme("CO", "NIT", "stdnum.co.nit"),
    "CL": Scheme("CL", "RUT", "stdnum.cl.rut"),
    "PE": Scheme("PE", "RUC", "stdnum.pe.ruc"),
    "EC": Scheme("EC", "RUC", "stdnum.ec.ruc"),
    "UY": Scheme("UY", "RUT", "stdnum.uy.rut"),
    "NZ": Scheme("NZ", "IRD number", "stdnum.nz.ird"),
    "SG": Scheme("SG", "UEN", "stdnum.sg.uen"),
    "DE-STNR": Scheme("DE", "Steuernummer", "stdnum.de.stnr"),
    "PL": Scheme("PL", "NIP", "stdnum.pl.nip"),
    "CZ": Scheme("CZ", "DIČ", "stdnum.cz.dic"),
    "SK": Scheme("SK", "DIČ", "stdnum.sk.dph"),
    "EU-OSS": Scheme("EU", "OSS VAT id", "stdnum.eu.oss"),
    "GB": Scheme("GB", "VAT registration number", "stdnum.gb.vat"),
    "SE-ORG": Scheme("SE", "organisationsnummer", "stdnum.se.orgnr"),
    "DK": Scheme("DK", "CVR number", "stdnum.dk.cvr"),
    "FI": Scheme("FI", "Y-tunnus", "stdnum.fi.ytunnus"),
    "PT": Scheme("PT", "NIF", "stdnum.pt.nif"),
    "HR": Scheme("HR", "OIB", "stdnum.hr.oib"),
    "RU": Scheme("RU", "INN", "stdnum.ru.inn"),
}

# Labels of tax ids outside the EU VAT labels (``agent.reading.labels.VAT_ID``), each with the schemes
# it may name, tried in order: the check digits decide between them.
WORLD_LABELS: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(r"\bC\.?U\.?I\.?T\.?(?![^\W\d_])(?:\s*n?[°º]\.?)?", re.IGNORECASE), ("AR",)),
    (re.compile(r"\bA\.?B\.?N\.?(?![^\W\d_])|\baustralian\s+business\s+number\b", re.IGNORECASE), ("AU",)),
    (re.compile(r"\bGSTIN\b(?:\s*(?:no\b\.?|number|#))?", re.IGNORECASE), ("IN",)),
    (re.compile(r"\bSST(?:\s*(?:reg(?:istration)?\b\.?|no\b\.?|number|id\b|#)){0,3}", re.IGNORECASE), ("MY-SST",)),
    (re.compile(r"\b(?:GST/HST|HST/GST|GST|HST)"
                r"(?:\s*(?:reg(?:istration)?\b\.?|no\b\.?|nos\b\.?|number|id\b|#|in\b)){0,3}", re.IGNORECASE),
     ("IN", "AU", "CA", "NZ", "SG", "MY-GST")),
    (re.compile(r"\b(?:federal\s+)?(?:EIN|FEIN|employer\s+identification\s+number|federal\s+tax\s+id)\b(?:\s*(?:no\b\.?|#))?",
                re.IGNORECASE), ("US",)),
    (re.compile(r"\bCNPJ\b(?:\s*/\s*CPF\b)?", re.IGNORECASE), ("BR", "BR-CPF")),
    (re.compile(r"\bR\.?F\.?C\.?(?![^\W\d_])", re.IGNORECASE), ("MX",)),
    (re.compile(r"\b(?:org(?:anisasjons|anisations)?\.?\s*-?\s*nr\b\.?|organisa(?:sjon|tion)snummer|"
                r"foretaksregisteret|org\.?\s*nummer)", re.IGNORECASE), ("NO", "NO-ORG", "SE-ORG")),
    (re.compile(r"\bCVR(?:[\s.-]*(?:nr\b\.?|nummer|no\b\.?))?", re.IGNORECASE), ("DK",)),
    (re.compile(r"\b(?:Y-tunnus|FO-nummer)\b", re.IGNORECASE), ("FI",)),
    (re.compile(r"\b(?:NIPC|NIF|contribuinte)\b(?:\s*n\.?[°º])?", re.IGNORECASE), ("PT",)),
    (re.compile(r"\bOIB\b", re.IGNORECASE), ("HR",)),
    (re.compile(r"(?<![^\W\d_])ИНН(?![^\W\d_])"), ("RU",)),
    (re.compile(r"纳\s?税\s?人\s?识\s?别(?:\s?[^\W\d_])?"), ("CN",)),  # 号, or what OCR made of it
    # A generic label: the number's prefix, or the seller's country, tells its scheme.
    (re.compile(r"\b(?:tax\s*(?:id(?:entification)?|reg(?:istration)?)\b\.?(?:\s*(?:no\b\.?|number|#))?|"
                r"tax\s*(?:no\b\.?|number)|TIN\b|TRN\b|taxpayer\s+id(?:entification)?(?:\s+number)?|"
                r"moms(?:reg(?:istrerings)?)?[\s.-]*(?:nr\b\.?|nummer))", re.IGNORECASE), ()),
    (re.compile(r"\b(?:UID|MWST|TVA|IVA)(?:[\s.-]*(?:nr\b\.?|nummer|no\b\.?|n[°º]))?(?=\s*:?\s*CHE)", re.IGNORECASE),
     ("CH",)),
    (re.compile(r"\b(?:business\s+number|BN)\b(?:\s*(?:no\b\.?|#))?", re.IGNORECASE), ("CA",)),
    (re.compile(r"\bN\.?I\.?T\.?(?![^\W\d_])", re.IGNORECASE), ("CO",)),
    (re.compile(r"\bR\.?U\.?T\.?(?![^\W\d_])", re.IGNORECASE), ("CL", "UY")),
    (re.compile(r"\bR\.?U\.?C\.?(?![^\W\d_])", re.IGNORECASE), ("PE", "EC")),
    (re.compile(r"\bUEN\b", re.IGNORECASE), ("SG",)),
    (re.compile(r"\bIRD\s*(?:no\b\.?|number)?", re.IGNORECASE), ("NZ",)),
    (re.compile(r"(?<![^\W\d_])(?:St\.?\s*-?\s*Nr\.?|Steuer\s*-?\s*(?:nummer|nr\b\.?))(?![^\W\d_])", re.IGNORECASE),
     ("DE-STNR",)),
    (re.compile(r"(?<![^\W\d_])DI[ČC](?![^\W\d_])"), ("CZ", "SK")),
    (re.compile(r"\b(?:EU\s+)?OSS\s+VAT\b", re.IGNORECASE), ("EU-OSS",)),
]
ANY_WORLD_LABEL = re.compile("|".join(f"(?:{label.pattern})" for label, _schemes in WORLD_LABELS), re.IGNORECASE)

# Shapes only one scheme prints, found anywhere (like an EU VAT id with its prefix): the check
# digits of each make a chance match rare.
SHAPES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?<![\w/.])\d{2}\.\d{3}\.\d{3}/\d{4}-\d{2}(?![\w/])"), "BR"),  # CNPJ
    (re.compile(r"(?<![\w-])(?:20|23|24|27|30|33|34)-\d{8}-\d(?![\w-])"), "AR"),  # CUIT
    (re.compile(r"(?<![A-Z0-9])\d{2}[A-Z]{5}\d{4}[A-Z][1-9A-Z]Z[0-9A-Z](?![A-Z0-9])"), "IN"),  # GSTIN
    (re.compile(r"(?<![A-Z0-9])NO ?\d{3} ?\d{3} ?\d{3} ?MVA(?![A-Za-z])"), "NO"),
    (re.compile(r"(?<![A-Z0-9])CHE[-. ]?\d{3}[. ]?\d{3}[. ]?\d{3}(?: ?(?:MWST|TVA|IVA|VAT)(?![A-Za-z]))?(?![0-9])"),
     "CH"),
    (re.compile(r"(?<![A-Z0-9])EU ?\d{9}(?![0-9])"), "EU-OSS"),
]

# The shapes in one pattern, each a named group ("s0", "s1"...): one pass over a column finds them all.
ANY_SHAPE = re.compile("|".join(f"(?P<s{index}>{shape.pattern})" for index, (shape, _key) in enumerate(SHAPES)))


def shapes_in(text: str) -> list[tuple[re.Match[str], str]]:
    """The tax ids' shapes in ``text``, each with its scheme's key (unchecked)."""
    return [(match, SHAPES[int(str(match.lastgroup)[1:])][1]) for match in ANY_SHAPE.finditer(text)]


# A tax id's printed token: letters, digits and the separators schemes print inside them.
_TOKEN = re.compile(r"[A-Z0-9](?:[A-Z0-9]|[ .\-/](?=[A-Z0-9])){5,24}", re.IGNORECASE)
# Schemes whose normal form carries the country prefix (the EU VAT ids' way).
_PREFIXED = frozenset({"CZ", "SK", "PL", "GB"})
# A Swiss VAT number is the UID with the tax's name after it.
_SWISS_TAX = re.compile(r"\s*(?:MWST|TVA|IVA|VAT)$")
_SHORTEST = 8  # characters (letters and digits) of the shortest tax id read
# A run of one digit is a sample's placeholder ("30-00000000-7"), not a company's number.
_PLACEHOLDER = re.compile(r"(\d)\1{6}")


# National tax or register numbers an invoice may print beside its VAT id: the VAT id is the one read. A
# Swedish organisationsnummer, a Danish CVR and a Finnish Y-tunnus are the digits of the VAT id
# ("Org.nr 556251-6806 · Momsregnr SE556251680601"): read alone when no VAT id is printed.
SECONDARY = frozenset({"DE-STNR", "NO-ORG", "BR-CPF", "SE-ORG", "DK", "FI"})


@dataclass(frozen=True)
class TaxId:
    """A tax id as printed, with its country and the normal form its scheme's check gives."""

    printed: str
    country: str
    normalized: str
    scheme: str
    checked: bool  # False: only the format could be checked (no check digits)


def parse_token(text: str) -> tuple[str, int, int] | None:
    """The number at the start of a label's value as printed, whatever its scheme says of it (to report it)."""
    match = _TOKEN.match(text)
    if match is None:
        return None
    words = []
    for word in match.group().split(" "):  # the words with digits: "12 345 678", not the word after it
        if not re.search(r"\d", word):
            break
        words.append(word)
    token = " ".join(words)
    compact = re.sub(r"[\s.\-/]", "", token)
    if len(compact) < _SHORTEST or sum(c.isdigit() for c in compact) < _SHORTEST // 2:
        return None
    return token, 0, len(token)


def placeholder(printed: str) -> bool:
    """Whether a number is a sample's placeholder (a run of one digit), not a company's."""
    return bool(_PLACEHOLDER.search(re.sub(r"[\s.\-/]", "", printed)))


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


def validate(printed: str, key: str) -> TaxId | None:
    """The printed number as a tax id of scheme ``key``, or None when it is not one."""
    scheme = _SCHEMES[key]
    compact = re.sub(r"[\s.\-/]", "", printed).upper()
    if len(compact) < _SHORTEST or placeholder(compact):
        return None
    if scheme.module is None:
        assert scheme.pattern is not None  # noqa: S101  a format-only scheme has its pattern
        if not scheme.pattern.fullmatch(printed.replace(" ", "")):
            return None
        return TaxId(printed, scheme.country, compact, scheme.name, checked=False)
    module = _module(scheme.module)
    text = _SWISS_TAX.sub("", printed) if key == "CH" else printed  # "CHE-123.456.788 MWST": the UID
    try:
        if not module.is_valid(text):
            return None
        normal = module.compact(text)
    except Exception:  # noqa: BLE001  a scheme's parser refusing odd text is "not this scheme"
        return None
    if key in _PREFIXED and not normal.startswith(key):  # a VAT id's normal form carries its country
        normal = key + normal
    return TaxId(printed, scheme.country, normal, scheme.name, checked=True)


def parse_labelled(text: str, keys: tuple[str, ...], *, ocr: bool = False) -> tuple[TaxId, int, int] | None:
    """The tax id at the start of ``text`` (a label's value) in one of the schemes ``keys``: the
    longest run of its words that passes a scheme's check. Read by OCR (``ocr``), one character
    OCR confuses with another ("2" for "Z", "0" for "O") may be read back, if the check digits then pass."""
    match = _TOKEN.match(text)
    if match is None:
        return None
    words = match.group().split(" ")
    for count in range(len(words), 0, -1):
        candidate = " ".join(words[:count]).rstrip(" .-/")
        for key in keys:
            found = validate(candidate, key) or (_repaired(candidate, key) if ocr else None)
            if found is not None:
                return found, match.start(), match.start() + len(candidate)
    return None


# Characters OCR reads for one another.
_CONFUSED = {"0": "O", "O": "0", "1": "IL", "I": "1", "L": "1", "2": "Z", "Z": "2", "5": "S", "S": "5", "8": "B",
             "B": "8", "6": "G", "G": "6"}
_MAX_REPAIRED = 20  # characters of a token tried character by character


def _repaired(printed: str, key: str) -> TaxId | None:
    """The tax id with one OCR confusion undone, when exactly one such reading passes the scheme's check."""
    if len(printed) > _MAX_REPAIRED or _SCHEMES[key].module is None:
        return None
    found: list[TaxId] = []
    for index, char in enumerate(printed):
        for other in _CONFUSED.get(char.upper(), ""):
            tax = validate(printed[:index] + other + printed[index + 1:], key)
            if tax is not None:
                found.append(tax)
    return found[0] if len(found) == 1 else None  # two readings that pass: neither is sure


def eu_vat(printed: str, country: str | None = None) -> TaxId | None:
    """An EU (or UK, Swiss) VAT id, with its prefix or the ``country`` the page gives it."""
    from stdnum.eu import vat as eu

    compact = re.sub(r"[\s.\-/]", "", printed).upper()
    if compact.startswith("CHE"):
            return validate(printed, "CH")
    if compact.startswith("EU"):
        return validate(printed, "EU-OSS")
    if not compact[:2].isalpha() and country:
        compact = ("EL" if country.upper() == "GR" else country.upper()) + compact
    if compact.startswith(("GB", "XI")):
        found = validate(compact[2:], "GB")
        return TaxId(printed, "GB", compact[:2] + found.normalized[2:], found.scheme, True) if found else None
    try:
        if not eu.is_valid(compact):
            return None
        normal = eu.compact(compact)
    except Exception:  # noqa: BLE001
        return None
    cc = normal[:2]
    return TaxId(printed, "GR" if cc == "EL" else cc, normal, EU_VAT.name, checked=True)


def identify(printed: str, *, country: str | None = None, keys: tuple[str, ...] = ()) -> TaxId | None:
    """The scheme a printed tax id belongs to: the label's schemes first, then the EU VAT id (with its
    prefix or ``country``), then the scheme of ``country``."""
    for key in keys:
        found = validate(printed, key)
        if found is not None:
            return found
    found = eu_vat(printed, country)
    if found is not None:
        return found
    if country:
        national = next((k for k, s in _SCHEMES.items() if s.country == country.upper() and s.module), None)
        if national is not None:
            return validate(printed, national)
    return None


def outside_eu_vat(printed: str, country: str | None = None) -> TaxId | None:
    """A tax id given on its own (typed, or a model's suggestion) that is no EU VAT id: the scheme of
    ``country``, else of the one shape that matches it whole (a CUIT, a CNPJ, a GSTIN, a Swiss UID...)."""
    keys = tuple(key for shape, key in SHAPES if shape.fullmatch(printed.strip()))
    return identify(printed.strip(), country=country, keys=keys)
