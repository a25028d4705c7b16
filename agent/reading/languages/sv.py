"""Swedish: faktura, fakturanummer, fakturadatum, förfallodatum, summa exkl. moms, moms, att betala."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 9

INVOICE_NUMBER = [r"\bfaktura[\s.-]*(?:nr\b\.?|nummer\b)"]
RECEIPT_NUMBER = [r"\bkvitto[\s.-]*(?:nr\b\.?|nummer\b)"]
INVOICE_DATE = [r"\bfaktura[\s-]*datum\b", r"\butf[äa]rdad\b"]
DUE_DATE = [r"\bf[öo]rfallo(?:datum|dag)\b", r"\bsista\s+betalningsdag(?:en)?\b"]
OTHER_DATE = ["f[öo]rfall", "leverans", "order"]
TOTAL_GROSS = [r"\b(?:totalt|summa)\s*(?:inkl|med)\b"]
TOTAL_DUE = [r"\b(?:belopp\s+)?att\s+betala\b"]
TOTAL_PLAIN = [r"\btotalt\b", r"\bsumma\b"]
NOT_TOTAL = [r"\bmoms\b", r"\butan\b"]
GROSS_MARK = [r"\bmed\s+moms\b", r"att\s+betala"]
NET = [r"\b(?:summa|totalt|belopp)\s*(?:exkl|ex|utan)\b\.?\s*(?:moms)?", r"\bnettobelopp\b"]
VAT_AMOUNT = [r"\b(?:total\s*)?moms(?:[\s-]*belopp)?\b"]
DEPOSIT = [r"\b(?:betalt|f[öo]rskott)\b"]

# A receipt's own number, a payment's ids, and its lines that are no total (the change, cash, card, tip).
RECEIPT_NUMBER += [r"\bkvittonr\b\.?", r"\bkvitto\s*:(?=\s*\d)"]
TRANSACTION_NUMBER = [r"\b(?:transaktion|terminal|kassa)[\s.-]*(?:id\b|nr\b\.?|nummer\b)"]
NOT_TOTAL += [r"v[äa]xel", r"\bkontant", r"\bkort\b", r"kortbetalning", r"\bdricks\b"]

MONTHS = {1: "januari", 2: "februari", 3: "mars", 4: "april", 5: "maj", 6: "juni", 7: "juli", 8: "augusti",
          9: "september", 10: "oktober", 11: "november", 12: "december"}

DOCUMENT_REFERENCE = ["referens"]
# Who is who: the seller's and the buyer's block headings.
SELLER = [r"s[äa]ljare", r"leverant[öo]r", r"avs[äa]ndare"]
BUYER_HEADING = [r"k[öo]pare", "mottagare"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
CURRENCY_NAME = {"kronor": "kr", "svenska kronor": "SEK"}
VAT_ID_TAX = ["moms"]
RECEIPT_TITLE = ["kvitto"]
RECEIPT_WORD = ["kvitto"]
CONNECTOR = ["och"]
PHONE = ["tfn"]
# A till slip's title and its greeting over the shop's name: never the shop's name.
SLIP_TITLE = ["kvitto", "kassakvitto"]
GREETING = [r"v[äa]lkommen"]
# A till slip's copy mark and its "keep the receipt" line: never the shop's name.
NOT_A_PARTY = ["spara", r"kundens\s+exemplar", "kopia", "tack"]
