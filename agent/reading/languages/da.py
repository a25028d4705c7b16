"""Danish: faktura, fakturanr., fakturadato, forfaldsdato, beløb ekskl. moms, moms, at betale, i alt."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 10

INVOICE_NUMBER = [r"\bfaktura[\s.-]*(?:nr\b\.?|nummer\b)"]
RECEIPT_NUMBER = [r"\bbilags?[\s.-]*(?:nr\b\.?|nummer\b)"]
INVOICE_DATE = [r"\bfaktura[\s-]*dato\b", r"\budstedt\b"]
DUE_DATE = [r"\bforfaldsdato\b", r"\bforfald\b"]
OTHER_DATE = ["forfald", "levering"]
TOTAL_GROSS = [r"\bi\s+alt\s*(?:inkl|med)\b"]
TOTAL_DUE = [r"\bat\s+betale\b"]
TOTAL_PLAIN = [r"\bi\s+alt\b"]
NOT_TOTAL = [r"\bmoms\b", r"ekskl", r"\buden\b", r"\bdelsum"]
GROSS_MARK = [r"\bmed\s+moms\b", r"at\s+betale"]
NET = [r"\b(?:i\s+alt|bel[øo]b)\s*(?:eks(?:kl)?|uden)\b\.?\s*(?:moms)?"]
VAT_AMOUNT = [r"\b(?:total\s*)?moms(?:[\s-]*bel[øo]b)?\b"]
DEPOSIT = [r"\b(?:betalt|forskud)\b"]

# A receipt's own number, a payment's ids, and its lines that are no total (the change, cash, card, tip).
RECEIPT_NUMBER += [r"\b(?:bon|kvittering)[\s.-]*(?:nr\b\.?|nummer\b)", r"\bbonnr\b\.?"]
TRANSACTION_NUMBER = [r"\b(?:transaktion|terminal|kasse)[\s.-]*(?:id\b|nr\b\.?|nummer\b)"]
NOT_TOTAL += [r"byttepenge", r"\bkontant", r"dankort", r"\bkort\b", r"drikkepenge"]

MONTHS = {1: "januar", 2: "februar", 3: "marts", 4: "april", 5: "maj", 6: "juni", 7: "juli", 8: "august",
          9: "september", 10: "oktober", 11: "november", 12: "december"}

# Who is who: the seller's and the buyer's block headings.
SELLER = [r"s[æa]lger"]
BUYER_HEADING = [r"k[øo]ber", "modtager"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
CURRENCY_NAME = {"danske kroner": "DKK"}
VAT_ID_TAX = ["moms"]
PHONE = ["tlf"]
# A till slip's title, greeting, copy mark and thanks over or under the shop's name: never the shop's name.
SLIP_TITLE = ["kvittering", "kassebon"]
GREETING = ["velkommen"]
NOT_A_PARTY = ["kopi", "tak"]
