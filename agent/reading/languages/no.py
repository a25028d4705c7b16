"""Norwegian (bokmål): faktura, fakturanr., fakturadato, forfallsdato, sum eks. mva, mva, å betale."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 8

INVOICE_NUMBER = [r"\bfaktura[\s.-]*(?:nr\b\.?|nummer\b|no\b\.?)"]
RECEIPT_NUMBER = [r"\bkvitterings?[\s.-]*(?:nr\b\.?|nummer\b)"]
INVOICE_DATE = [r"\bfaktura[\s-]*dato\b", r"\butstedt\b"]
DUE_DATE = [r"\bforfalls?dato\b", r"\bbetalingsfrist\b"]
OTHER_DATE = ["forfall", "ordre", "levert", "leveranse", "uttak", "neste"]
INVOICE_TITLE = ["kreditnota"]
TOTAL_GROSS = [r"\b(?:totalt|sum)\s*(?:inkl|med)\b", r"\btotalbel[øo]p\b", r"\bfakturabel[øo]p\b"]
TOTAL_DUE = [r"\b(?:bel[øo]p\s+)?[åa]\s+betale\b"]
TOTAL_PLAIN = [r"\btotalt\b", r"\bsum\b"]
NOT_TOTAL = [r"\bmva\b", r"ekskl", r"\buten\b", r"\bbetalt\b", r"mellomsum"]
GROSS_MARK = [r"\bmed\s+mva\b", r"[åa]\s+betale"]
NET = [r"\b(?:sum|totalt|bel[øo]p)\s*(?:eks(?:kl)?|ex|uten)\b\.?\s*(?:mva)?", r"\bnettobel[øo]p\b", r"\bnettosum\b"]
VAT_AMOUNT = [r"\b(?:total\s*|sum\s*)?(?:mva|merverdiavgift)(?:[\s-]*bel[øo]p)?\b"]
DEPOSIT = [r"\b(?:betalt|forskudd|innbetalt)\b"]

# A receipt's own number, a payment's ids, and its lines that are no total (the change, cash, card, tip).
RECEIPT_NUMBER += [r"\b(?:kvitt|bong|salgskvittering)[\s.-]*(?:nr\b\.?|nummer\b)"]
TRANSACTION_NUMBER = [r"\b(?:transaksjon|terminal|kasse)[\s.-]*(?:id\b|nr\b\.?|nummer\b)"]
NOT_TOTAL += [r"\bveksel", r"\bkontant", r"bankkort", r"\bkort\b", r"\bdriks\b"]

MONTHS = {1: "januar", 2: "februar", 3: "mars", 4: "april", 5: "mai", 6: "juni", 7: "juli", 8: "august",
          9: "september", 10: "oktober", 11: "november", 12: "desember"}

DOCUMENT_REFERENCE = ["referanse"]
# Who is who: the seller's and the buyer's block headings.
SELLER = ["selger", r"leverand[øo]r"]
BUYER_HEADING = [r"kj[øo]per", "mottaker", "fakturaadresse", "leveringsadresse"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
CURRENCY_NAME = {"kroner": "kr", "norske kroner": "NOK"}
VAT_ID_TAX = ["mva"]
RECEIPT_TITLE = ["kvittering"]
RECEIPT_WORD = ["kvittering"]
CONNECTOR = ["og"]
PHONE = ["tlf"]
# A till slip's title and its greeting over the shop's name (Danish prints them alike): never the shop's name.
SLIP_TITLE = ["kvittering", "salgskvittering"]
GREETING = ["velkommen"]
# A till slip's copy mark and its thanks: never the shop's name.
NOT_A_PARTY = [r"kundens\s+kopi", "kopi", "takk"]
