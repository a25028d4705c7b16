"""What labels and values look like on a page, in every language (``agent.reading.labels``)."""

from __future__ import annotations

import re

from .. import labels
from . import partywords
from .checks import PRINTED_CURRENCIES


def _compile(patterns: list[str] | str) -> re.Pattern[str]:
    """One pattern for a list of labels; a label may be glued to its value's digits ("ZAPŁATY65,00")."""
    sources = [patterns] if isinstance(patterns, str) else patterns
    glued = [source[:-2] + r"(?![^\W\d_])" if source.endswith(r"\b") else source for source in sources]
    return re.compile("|".join(f"(?:{source})" for source in glued), re.IGNORECASE)


INVOICE_NUMBER = _compile(labels.INVOICE_NUMBER)
RECEIPT_NUMBER = _compile(labels.RECEIPT_NUMBER)
TRANSACTION_NUMBER = _compile(labels.TRANSACTION_NUMBER)
DOCUMENT_REFERENCE = re.compile(labels.DOCUMENT_REFERENCE, re.IGNORECASE)
INVOICE_TITLE = _compile(labels.INVOICE_TITLE)
INVOICE_TITLE_NUMBER = _compile(labels.INVOICE_TITLE_NUMBER)
INVOICE_DATE = _compile(labels.INVOICE_DATE)
LABELLED_DATE = _compile([source for source in labels.INVOICE_DATE if source != labels.LETTER_DATE])
LETTER_DATE = _compile(labels.LETTER_DATE)
BARE_NUMBER = _compile(rf"{labels.NUMBER_SIGN}(?:\s?/\s?{labels.NUMBER_SIGN})?\s*:?")  # "NR / NO.:"
# "Invoice" over "number: 7": one label split over two lines, not a title over a bare label.
SPLIT_LABEL = re.compile(labels.SPLIT_NUMBER, re.IGNORECASE)
POINT_OF_SALE = re.compile(rf"\b(?:{labels.POINT_OF_SALE})\s*:?\s*(?P<number>\d{{1,5}})\b", re.IGNORECASE)
TITLE_ALONE = re.compile(labels.INVOICE_TITLE_ALONE, re.IGNORECASE)
WORD_NR = re.compile(labels.WORD_NR, re.IGNORECASE)
NUMBER_SIGN_FIRST = re.compile(rf"\W{{0,2}}{labels.NUMBER_SIGN}\s*:?\s*", re.IGNORECASE)
DATE_GENERIC = _compile(labels.DATE_GENERIC)
DUE_DATE = _compile(labels.DUE_DATE)
TOTAL_GROSS = _compile(labels.TOTAL_GROSS)
TOTAL_DUE = _compile(labels.TOTAL_DUE)
TOTAL_PLAIN = _compile(labels.TOTAL_PLAIN)
NET = _compile(labels.NET)
DEPOSIT = _compile(labels.DEPOSIT)
VAT_AMOUNT = _compile(labels.VAT_AMOUNT)
VAT_LABELS = [(_compile(source), country) for source, country in labels.VAT_ID]
ANY_VAT_LABEL = _compile([source for source, _country in labels.VAT_ID])
IBAN_LABEL = _compile(labels.IBAN)
ACCOUNT_LABEL = _compile(labels.ACCOUNT)
PAYEE_LABEL = _compile(labels.PAYEE)
CURRENCY_LABEL = _compile(labels.CURRENCY)
# "Käufer/Leistungsempfänger:", "Bill to address:"
_HEADING_END = rf"(?:\s*[/&]\s*[^\W\d_]+)?(?:\s+(?:{labels.HEADING_END}))?\s*(?P<colon>[:\uff1a])?"
_SELLER_WORDS = labels.SELLER
_BUYER_WORDS = f"{labels.BUYER}|{labels.BUYER_HEADING}"
SELLER_HEADING = re.compile(rf"^\W{{0,3}}(?:{_SELLER_WORDS}){_HEADING_END}", re.IGNORECASE)
# A buyer heading may start with a word or two: "Abweichender Warenempfänger:", "Delivery address".
# (never a greeting: "Welcome to" over a shop's name)
BUYER_HEADING = re.compile(rf"^(?!\W{{0,3}}(?:{labels.GREETING}))\W{{0,3}}(?:[^\W\d_]+ ){{0,2}}?(?:{_BUYER_WORDS})"
                           rf"{_HEADING_END}", re.IGNORECASE)
POSTCODE = re.compile(r"(?:[A-Z]{1,2}[- ]?)?\d{4,5}(?:[- ]\d{3})? [^\W\d_]")
SENDER_SEPARATOR = re.compile(r" [|·•–-] |, ")
# Columns looked at for a return-address line (it is near the top of the first page).
SENDER_SCAN = 80
NAME_LABEL = re.compile(rf"\s*(?:{labels.NAME_LABEL})\s*[:\uff1a]\s*", re.IGNORECASE)
PARTY_WORD = re.compile(rf"{_SELLER_WORDS}|{_BUYER_WORDS}|{labels.PARTY_NAME}", re.IGNORECASE)
# A Chinese or Japanese form ends the name it is written onto, with no space ("…有限公司").
LEGAL_NAME = re.compile(rf"(?<![^\W\d_])(?:{partywords.LEGAL_FORM}|{labels.LEGAL_FORM})(?![^\W\d_])|"
                         rf"(?:{partywords.GLUED_LEGAL_FORM})(?![^\W\d_])")

# Amounts: 1.234,56 / 1,234.56 / 1 234,56 / 1'234.56 / 1234.5 / 1234; never a percentage.
AMOUNT = re.compile(r"(?<![\d.,])(?P<sign>[-\u2212]\s?)?(?P<int>\d{1,3}(?:[.,'’\u00a0\u202f ]\d{3})++|\d++)"
                     r"(?:(?P<sep>[.,])(?P<dec>\d{1,2}))?(?![\d%])(?!\s?%)")
_CODES = "|".join(sorted(PRINTED_CURRENCIES))
CURRENCY_CODE = re.compile(rf"(?<![A-Za-z])(?:{_CODES})(?![A-Za-z])")
# A currency written out after its label ("Devise : Euro", "Währung: Schweizer Franken"), each language's.
CURRENCY_NAMES = labels.CURRENCY_NAMES
# A currency's name as a whole word: "Euro", "euros", never the start of "Euroline" (a card's brand).
CURRENCY_NAME = re.compile("(?:" + "|".join(sorted((re.escape(n) + "s?" for n in CURRENCY_NAMES), key=len,
                                                   reverse=True)) + r")(?![^\W\d_])", re.IGNORECASE)
CURRENCY_SIGN = re.compile(r"(?<![A-Za-z])(?:US|AU|CA|NZ|HK|MX|[RACS])\$|€|\$|£|¥|₹|zł|元|円|"
                            r"(?<![A-Za-z])(?:Fr\.|CHF|kr|Kr|KR|Rs\.?|Kč|Ft|RMB)(?![A-Za-z])")
# Dates: numeric day-first (or ISO), and with a month name in any of the seven languages.
# ISO, day-first with one separator, and the Chinese and Japanese "2018年03月23日".
# A date stands on its own: not the middle of a longer number of groups ("NIP 526-03-09-174" holds
# "03-09-17"), so no digit, or digit and separator, on either side.
NUMERIC_DATE = re.compile(r"(?<!\d)(?<!\d[-./])(?:(?P<y>\d{4})(?:-|\s?年\s?)(?P<m>\d{1,2})(?:-|\s?月\s?)"
                          r"(?P<d>\d{1,2})|"
                          r"(?P<d2>\d{1,2})(?P<s>[./-]|\. )(?P<m2>\d{1,2})(?P=s)(?P<y2>\d{4}|\d{2}))"
                          r"(?!\d|[.,]\d|-\d)")
DAY_MONTH = re.compile(labels.DAY_MONTH)
MONTH_DAY = re.compile(labels.MONTH_DAY)
# A series in capitals, a space, then the number: "FS 616/2025".
SERIES_ID = re.compile(r"[A-Z]{1,5} \d[A-Za-z0-9\-/._]{0,30}")
ID_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-/._]{0,39}")
VAT_SHAPE = re.compile(r"(?<![A-Za-z0-9])(?P<cc>AT|BE|BG|CY|CZ|DE|DK|EE|EL|ES|FI|FR|GB|HR|HU|IE|IT|LT|LU|LV|MT|NL|PL|"
                        r"PT|RO|SE|SI|SK|XI|CHE)[ .\-]?(?P<body>[0-9A-Z][0-9A-Z .\-]{5,20})")
# A Swiss UID printed as a VAT number ends with its tax's name: "CHE-123.456.788 MWST".
SWISS_VAT = re.compile(r"CHE[ .\-]?\d{3}[ .]?\d{3}[ .]?\d{3}(?: ?(?:MWST|TVA|IVA|VAT))?")
# A count of days, weeks or months ("within 30 days", "zahlbar in 14 Tagen", "à 45 jours") is a
# term of payment, not an amount.
PERIOD = re.compile(rf"(?<![\d.,])\d{{1,3}}[ \t\u00a0]*(?:{labels.PERIOD})\b", re.IGNORECASE)
IBAN_SHAPE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ \u00a0]?[A-Z0-9]){10,32}")
# A VAT id printed without its country: digits, maybe a letter first ("A31491566") or last ("77029976-D").
IBAN_HEAD = re.compile(r"[A-Z]{2}\d{2}(?:[ \u00a0]?[A-Z0-9]){4,9}(?![A-Za-z0-9])")
NUMBER_SHAPE = re.compile(r"(?:[A-Z](?=\d{7}))?\d[\d .\-/]{6,18}(?:-?[A-Z](?![A-Za-z0-9]))?")

# Lines that are never a name: a register entry, a bank label, a street.
NOT_A_NAME = re.compile(labels.NOT_A_NAME, re.IGNORECASE)
STREET = re.compile(labels.STREET, re.IGNORECASE)
# A contact's or a page's line ("Tel.", "www.", "Seite 2"): never a name.
CONTACT = re.compile(labels.CONTACT, re.IGNORECASE)
STRIP_PARTS = re.compile(r" [·|•] ")
