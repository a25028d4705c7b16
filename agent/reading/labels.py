"""The patterns the reader finds labels with: every language's words (``agent.reading.languages``, one module each)
assembled into one pattern per kind. This module holds no language's words, only the structure languages
share (a title, then a number sign; a total, then a bracketed "incl. VAT") and the signs every language
prints (currency codes, "IBAN", "#"); a test keeps it so.

Each entry is a regular expression source matched case-insensitively with ``re.search``
inside one column of a line (never across lines). Every pattern is a set of literal
alternatives with optional parts; none repeats a group over characters another part of it
can also take, so a search is linear in the text, whatever the text.
"""

from __future__ import annotations

import re

from . import languages


def _any(name: str) -> str:
    """Every language's words for ``name`` as one alternation."""
    return "|".join(languages.gather(name))


def _numbered(name: str) -> list[str]:
    """Every language's labels for ``name``, their number sign (``languages.NUMBER``) made any language's."""
    return [source.replace(languages.NUMBER, _NO) for source in languages.gather(name)]


# --- receipts (shop tills' slips) ------------------------------------------------------------
# A receipt's own number ("Bon-Nr.", "N° de ticket", "Nr paragonu", "Scontrino n."): below an invoice-number label.
# "n." and "#" are every language's number signs.
RECEIPT_NUMBER_WORDS = [
    rf"\b(?:{_any('RECEIPT')})[\s.-]*(?:{_any('RECEIPT_SIGN')}|#|n\.(?!\w))",
    rf"(?:{_any('RECEIPT_BEFORE_SIGN')}|\bn\.(?!\w))\s*(?:{_any('RECEIPT_OF')})?(?:{_any('RECEIPT_AFTER_SIGN')})\b",
]
# A payment's ids on a receipt: never the receipt's number while anything else is printed.
TRANSACTION_NUMBER_WORDS = [rf"\b(?:{_any('TRANSACTION')})[\s.-]*(?:id\b|{_any('RECEIPT_SIGN')}|#)"]
# Lines of a receipt that are no total: what was handed over, the change, a card's payment line, a tip, the
# VAT table's rows ("Rückgeld", "Geg. Bar", "Importe tarjeta", "Suma PTU").
RECEIPT_NOT_TOTAL = languages.alternatives("RECEIPT_PAYMENT")
# A receipt's total: "SUMME EUR", "SUMA PLN", "TOTAL EUR" (the sum followed by its currency).
# A receipt's title ("PARAGON FISKALNY", "Scontrino fiscale") and a greeting over the shop's name ("Welcome"):
# neither is ever the shop's name.
SLIP_TITLE = _any("SLIP_TITLE")
GREETING = _any("GREETING")
RECEIPT_TOTAL = [rf"\b(?:{_any('RECEIPT_SUM')})\s*(?:eur|pln|z[łl]|chf|gbp|usd|€)(?![^\W\d_])"]

# --- invoice number ----------------------------------------------------------------------
# What follows a title to say "number", in any language ("n°", "nr.", "no.", "núm.", "nummer"), or "n.", "#".
_NO = "(?:" + "|".join(languages.gather("NUMBER_SIGN")) + r"|\bn\.(?!\w)|#)"
NUMBER_SIGN = _NO
INVOICE_NUMBER = [
    # a title or its abbreviation and a number sign: "Invoice No.", "Rechnung Nr.", "Fact. n°", "Fv nr"
    rf"\b(?:{_any('NUMBERED_TITLE')})\.?[\s-]*{_NO}",
    # a reference to the invoice: "Référence de la facture", "Referenz der Rechnung"
    rf"\b(?:{_any('REFERENCE')})\s*(?:{_any('OF')})?(?:{_any('INVOICE_OF')})\b",
    *_numbered("INVOICE_NUMBER"),
]
# A document title followed straight by its number ("Facture FA-2017-0010", "Invoice 2041").
INVOICE_TITLE = r"\b(?:" + "|".join(languages.gather("INVOICE_TITLE")) + r")\s*[:#]?\s*"

# A receipt's or ticket's number: the invoice number of a receipt, read only when no invoice label is printed
# (a card slip's "Trans #" beside an invoice's own number is not it).
RECEIPT_NUMBER = [
    *RECEIPT_NUMBER_WORDS,
    *languages.gather("RECEIPT_NUMBER"),
]
# The ids of a payment printed on a receipt (a transaction's, a terminal's, a till's, a card's): its number only
# when nothing else on the page is one.
TRANSACTION_NUMBER = [*TRANSACTION_NUMBER_WORDS, *languages.gather("TRANSACTION_NUMBER")]
# A document's bare "Reference" at the start of a label: its number when nothing names the invoice number (never
# "Your reference", "Customer ref.", "Payment reference": those do not start the label).
DOCUMENT_REFERENCE = rf"^\W{{0,3}}(?:{_any('DOCUMENT_REFERENCE')})(?![^\W\d_])\s*(?:no\b\.?|nr\b\.?|#)?\s*:?"
# A document-type word that is a title only when it stands alone ("NOTA" over its number).
INVOICE_TITLE_ALONE = (INVOICE_TITLE[:-len(r"\s*[:#]?\s*")].replace(r"\b(?:", rf"\b(?:{_any('TITLE_ALONE')}|", 1)
                       + r"\s*:?")
# A label "<word>-Nr." ("Folio-Nr."), unless the word names another number.
WORD_NR = r"(?P<word>[^\W\d_]{3,20})-nr\.?\s*:?"
OTHER_NUMBER = re.compile(_any("OTHER_NUMBER"), re.IGNORECASE)

# A title, a few words, then a number sign: "Rechnung des Versicherers Nr. 01.234", "Gutschrift (...) Nr. 4711".
INVOICE_TITLE_NUMBER = rf"\b(?:{_any('TITLE_BEFORE_NUMBER')})[^\d:\n]{{0,40}}?(?:{_NO}|{_any('NUMBER_WORD')})"

# --- invoice date ------------------------------------------------------------------------
# The place and date of a letter: weaker than a date's label, which wins wherever it is printed.
LETTER_DATE = rf"[^\W\d_]{{3}},\s*(?:{_any('LETTER_DATE')})\b"
INVOICE_DATE = [
    *languages.gather("INVOICE_DATE"),
    # the place and date of a letter: "München, den 01.11.2024", "Paris, le 3 mars 2020", "Kraków, dnia 5 maja 2020"
    LETTER_DATE,
]
# A bare "Date" label, read only when no specific one is printed.
DATE_GENERIC = rf"^\W{{0,3}}(?:{_any('DATE_WORD')})\b"
# The date the invoice is due: when the money must be paid.
DUE_DATE = languages.gather("DUE_DATE")

# Other dates on an invoice, never its date.
OTHER_DATE = re.compile("|".join(languages.gather("OTHER_DATE")), re.IGNORECASE)

# --- total ---------------------------------------------------------------------------------
# Three strengths: the grand total including VAT, the amount due, and a bare "Total".
TOTAL_GROSS = [
    *languages.gather("TOTAL_GROSS"),
    *RECEIPT_TOTAL,
    # a bracketed qualifier: "TOTAL (IVA INCL.)", "Total (TTC)", "Totaal (incl. btw)"
    rf"\b(?:{_any('TOTAL_WORD')})\s*\(\s*(?:(?:{_any('VAT_WORD')})\s*)?(?:{_any('INCLUDED')}|{_any('INCLUDED_TOTAL')})",
    # "Brutto 104,00 €", "Gross: 55.00": the word alone, its amount right after it
    rf"^\W{{0,3}}(?:{_any('GROSS_WORD')})\b(?=\s*:?\s*(?:[€$£]|[A-Z]{{3}}\b)?\s*\d)",
]
TOTAL_DUE = languages.gather("TOTAL_DUE")
TOTAL_PLAIN = languages.gather("TOTAL_PLAIN")
# A total label that names a part of the total, not the total due.
NOT_TOTAL = re.compile("|".join(languages.gather("NOT_TOTAL")) + RECEIPT_NOT_TOTAL, re.IGNORECASE)
# Amounts already paid: the total less these is what is left to pay.
DEPOSIT = languages.gather("DEPOSIT")
# What makes a label name the amount including VAT, whatever else it says.
_INCLUDED_ABBREVIATED = "|".join(rf"{word}\.?" for word in languages.gather("INCLUDED"))
GROSS_MARK = re.compile(rf"\b(?:{_any('INCLUDED')})(?:\.|{_any('INCLUDED_ENDING')})?\s*(?:[^\W\d_]+\.?)?|"
                        rf"\b(?:{_any('VAT_WORD')})\s*(?:{_any('VAT_INCLUDED')}|{_INCLUDED_ABBREVIATED})|"
                        rf"\b(?:{_any('GROSS_WORD')})\b" + languages.alternatives("GROSS_MARK"), re.IGNORECASE)
# The net total and the VAT amount: their sum confirms a total.
NET = languages.gather("NET")
VAT_AMOUNT = languages.gather("VAT_AMOUNT")

# --- VAT id -------------------------------------------------------------------------------
# Each label with the country whose number it names when the number has no prefix.
VAT_ID = languages.pairs("VAT_ID")

# --- IBAN and bank account -------------------------------------------------------------------
IBAN = r"\biban\b"
ACCOUNT = _any("ACCOUNT")
# Who the money goes to: the supplier, named by its bank account.
PAYEE = rf"\b(?:{_any('PAYEE')})\b"

# --- currency -------------------------------------------------------------------------------
CURRENCY = r"\b(?:" + "|".join(languages.gather("CURRENCY")) + r")\b"

# --- who is who: the blocks of the page ---------------------------------------------------------
SELLER = rf"\b(?:{_any('SELLER')})\b"
BUYER = rf"\b(?:{_any('BUYER')})\b"
# Headings of the buyer's block read up to the next letter: they may end in a dot or a bracket ("Sr.(s):").
BUYER_HEADING = rf"\b(?:{_any('BUYER_HEADING')})(?![^\W\d_])"
# A label that says a number is the buyer's ("N° TVA client", "Your VAT id", "Kunden-USt-IdNr").
BUYER_MARK = re.compile(rf"\b(?:{_any('BUYER_MARK')})\b|{_any('BUYER_MARK_INSIDE')}", re.IGNORECASE)
# Words saying a number on the page is a third party's: the bank, a payment or collection service, an
# agent acting for the seller, a carrier, an insurer.
THIRD_PARTY = rf"(?<![^\W\d_])(?:{_any('THIRD_PARTY')})(?![^\W\d_])"
# Legal forms that end a company's name.
LEGAL_FORM = (r"(?:GmbH\s*&\s*Co\.?\s*KG(?:aA)?|GmbH|GMBH|gGmbH|AG|KGaA|KG|OHG|oHG|e\.\s?K\.|e\.\s?V\.|a\.\s?G\.|UG|"
              r"mbH|B\.\s?V\.|BV|N\.\s?V\.|NV|V\.O\.F\.|VOF|SASU|SAS|S\.A\.S\.|SARL|S\.A\.R\.L\.|EURL|SNC|SCOP|"
              r"S\.\s?A\.|SA|S\.\s?L\.(?:U\.)?|SL|SLU|S\.\s?r\.\s?l\.(?:s\.)?|SRLS|SRL|Srl|S\.\s?p\.\s?A\.|SpA|S\.p\.a\.|S\.n\.c\.|"
              r"S\.a\.s\.|Ltd\.?|LTD\.?|Limited|LIMITED|LLP|PLC|plc|Inc\.?|INC\.?|LLC|L\.L\.C\.|Corp\.?|"
              r"sp\.\s?z\s?o\.\s?o\.|Sp\.\s?z\s?o\.\s?o\.|SP\.\s?Z\s?O\.\s?O\.|sp\.\s?j\.|sp\.\s?k\.|S\.\s?C\.)")

# --- words the field readers look for beside the labels ---------------------------------------
# A heading's second word: "Billing address", "Käufer/Leistungsempfänger:", "Dane nabywcy".
HEADING_END = _any("HEADING_END")
# A name's label: "Name:", "Nazwa:", "Raison sociale :"; a word that makes a line a party's label ("Name").
PARTY_NAME = rf"\b(?:{_any('PARTY_NAME')})\b"
# A name's label: "Name:", "Nazwa:", "Raison sociale :".
NAME_LABEL = _any("NAME_LABEL")
# A count of days, weeks or months ("within 30 days", "zahlbar in 14 Tagen", "à 45 jours"): a term of payment.
PERIOD = _any("PERIOD")
# A letter's reference to the invoice it sends ("Votre facture", "Ihre Rechnung").
YOUR_INVOICE = rf"\b(?:{_any('YOUR_INVOICE')})\b"
# The word before the date of a document: "du", "vom", "del", "of", "dated", "z dnia".
DATE_BEFORE = rf"(?<![^\W\d_])(?:{_any('DATE_BEFORE')})\s+"
# The second line of a label split over two ("Invoice" over "number: 7").
SPLIT_NUMBER = rf"\W*(?:{_any('SPLIT_NUMBER')})\b"
# The point of sale an invoice number is counted at, printed apart from it ("Punto de Venta: 00003").
POINT_OF_SALE = _any("POINT_OF_SALE")

# --- months ----------------------------------------------------------------------------------
MONTHS = {name: number for number, names in languages.months().items() for name in names.split()}

# --- words the field readers match beside the labels, in a value or a line of their own ---------------------
# A written date's day ("5.", "1er", "3rd", "5 de mayo de 2020"), and a month written before its day ("March 3rd").
DAY_MONTH = (rf"(?<!\d)(?P<d>\d{{1,2}})(?:\.|{_any('DAY_ORDINAL')}|º|°)?[ \t\u00a0\-/]{{0,3}}"
             rf"(?:(?:{_any('DAY_OF')}) )?"
             rf"(?P<m>[^\W\d_]{{3,12}})\.?[ \t\u00a0\-/,]{{0,3}}(?:(?:{_any('YEAR_OF')}) )?(?P<y>\d{{4}})(?!\d)")
MONTH_DAY = (rf"(?<![^\W\d_])(?P<m>[^\W\d_]{{3,12}})\.?[ \t\u00a0]{{1,3}}(?P<d>\d{{1,2}})"
             rf"(?:{_any('MONTH_DAY_ORDINAL')})?[ \t\u00a0]{{0,3}},?[ \t\u00a0]{{0,3}}(?P<y>\d{{4}})(?!\d)")
# Lines that are never a name: a register entry, a bank's label, a street with its house number.
_STREET_ENDING = rf"(?:{_any('STREET_ENDING')})\s?\d"
NOT_A_NAME = (rf"^\W{{0,3}}(?:{_any('REGISTER')}|iban|bic|swift)\b|"
              rf"^\W{{0,3}}(?:{_any('STREET_MARK')}|(?:{_any('STREET_TYPE')})\b\.?)\D*+\d|{_STREET_ENDING}")
# A street: its kind before its name ("Via Roma"), or glued to its end before the house number ("Hauptstraße 5").
STREET = rf"(?<![^\W\d_])(?:{_any('STREET_BEFORE_NAME')})\s|{_STREET_ENDING}"
# Currencies and countries written out, each with its code ("Schweizer Franken": CHF, "Deutschland": DE), and a
# currency said by its country's adjective ("Canadian dollars").
CURRENCY_NAMES = languages.named("CURRENCY_NAME")
COUNTRY_NAMES = languages.named("COUNTRY_NAME")
CURRENCY_COUNTRY_WORDS = languages.named("CURRENCY_COUNTRY")
CURRENCY_COUNTRY = (r"(?<![^\W\d_])(" + "|".join(re.escape(word) for word in CURRENCY_COUNTRY_WORDS) + r")\s+"
                    rf"(?:{_any('CURRENCY_NOUN')})(?![^\W\d_])")
# A VAT label that names the VAT id, not an amount ("VAT Reg No", "MwSt-Nr.", "TVA intracommunautaire").
VAT_ID_LABEL = rf"\b(?:{_any('VAT_ID_TAX')})\W{{0,3}}(?:id\b|no\b|nr\b|{_any('VAT_ID_WORD')}|n[°º]|#)"
# A receipt's or a refund's title alone on its line ("Receipt", "Kassenbon", "Paragon fiskalny"); and the words only
# a receipt prints, anywhere on it.
RECEIPT_TITLE = rf"\W{{0,3}}(?:{_any('RECEIPT_TITLE')})\W{{0,3}}"
RECEIPT_WORD = languages.gather("RECEIPT_WORD")
# The titles that start another document appended to an invoice: another invoice's, or another kind's.
APPENDED_INVOICE = _any("APPENDED_INVOICE")
APPENDED_OTHER = _any("APPENDED_OTHER")
# A number sign after such a title: "n°", "no.", "nr.", "#" or the word ("Nummer").
APPENDED_NUMBER_SIGN = rf"(?:n[°º]\.?|no\b\.?|nr\b\.?|{_any('NUMBER_NAME')}|#)"
# A contact's or a page's line ("Tel.", "Fax", "Seite 2"), never a name.
CONTACT = rf"@|www\.|https?:|\+\d|\b(?:{_any('CONTACT')})\b|:"
# Words of a line-items table's header ("No.  Description  Qty  Price").
ITEM_HEADER = rf"(?<![^\W\d_])(?:{_any('ITEM_HEADER')})(?![^\W\d_])"

# --- the parties' words (``agent.reading.fields.parties``) ----------------------------------------------------------
# A label naming a number rather than a name ("Order", "Ref", "Nummer").
NAMES_A_NUMBER = rf"(?<![^\W\d_])(?:{_any('NAMES_A_NUMBER')}|no|nr|n[°º]|id)(?![^\W\d_])|#"
# Words before a recipient's name that are no name: a salutation, a department.
NOT_A_BUYER = rf"^\W{{0,3}}(?:{_any('NOT_A_BUYER')})\W*$"
# A bank, or a bank's label.
BANK_WORD = rf"(?<![^\W\d_])(?:{_any('BANK_WORD')})(?![^\W\d_])"
# A label over a company's name ("Nome / Nome Empresarial", "Company name", "Raison sociale").
_NAME_WORDS = f"(?:{_any('NAME_HEADING')})"
NAME_HEADING = rf"^\W{{0,3}}{_NAME_WORDS}(?:\s*/\s*{_NAME_WORDS})*\s*:?\s*$"
# A document's own words, copy marks and greetings, how a meal is served, a receipt's lines: never a name.
NOT_A_PARTY = rf"^\W{{0,3}}(?:{_any('NOT_A_PARTY')})\b"
# A public body's name: as good as a legal form ("City of Palo Alto", "Stadt Linz", "Comune di Roma").
PUBLIC_BODY = rf"^\W{{0,3}}(?:{_any('PUBLIC_BODY')})\s+(?:{_any('PUBLIC_BODY_OF')})?\b"
# Postal indicia and envelope marks ("P.P.", "Port payé", "Entgelt bezahlt"): never a sender's name.
POSTAL = rf"^\W{{0,3}}(?:P\.?\s?P\.?|{_any('POSTAL')})\b"
# Words of an address that STREET leaves out (it wants a house number after some of them).
PLACE_WORD = rf"(?<![^\W\d_])(?:{_any('PLACE_WORD')})(?![^\W\d_])"
# Small words inside company names ("Rør og Rygg", "Marlow & Finch", "Banco de Chile").
CONNECTORS = frozenset({"&", *languages.gather("CONNECTOR")})
# Fields a form asks for, joined by slashes: "Name/Company", "Firma / Name", "Nom/Date".
_FORM_WORD = f"(?:{_any('FORM_WORD')})"
FORM_FIELDS = rf"(?<![^\W\d_]){_FORM_WORD}\s*/\s*{_FORM_WORD}(?![^\W\d_])"
# A signature line: "<who> Signature", "Signature <who>", "Unterschrift <who>".
SIGNATURE = (rf"^\W{{0,3}}(?P<before>[^\W\d_][^\d:]{{0,40}}?)\s+(?:{_any('SIGNATURE')})\W{{0,3}}$|"
             rf"^\W{{0,3}}(?:{_any('SIGNATURE')})\s+(?P<after>[^\W\d_][^\d:]{{0,40}}?)\W{{0,3}}$")
# Who signs that is no company: a party's role, the person's own ("Buyer Signature", "Authorised Signature").
SIGNER_ROLE = rf"(?<![^\W\d_])(?:{_any('SIGNER_ROLE')})(?![^\W\d_])"
# A phone's label, or a phone number's shape.
PHONE = (rf"(?<![^\W\d_])(?:{_any('PHONE')})\b\.?|"
         r"\+\s?\d{2}|\(\d{3}\)\s?\d{3}-\d{4}|\b\d{3}[-.\s]\d{3}[-.\s]\d{4}\b")
# A house number and a street's abbreviated kind ("191 E 3RD AVE", "55 Main St"): STREET wants more.
STREET_ABBREVIATED = rf"\d+[a-z]?\s+(?:[NSEW]\.?\s+)?(?:[^\W_]+\s+){{0,3}}?(?:{_any('STREET_KIND')})\b\.?"
