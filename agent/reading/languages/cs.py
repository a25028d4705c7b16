"""Czech: faktura č., daňový doklad, datum vystavení, datum splatnosti, celkem bez DPH, DPH, celkem k úhradě."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 12

INVOICE_NUMBER = [r"\bfaktur[ay]\s*(?:č\.|číslo\b|cislo\b)", r"(?<!\w)(?:č[íi]slo|č\.)\s*(?:faktury|dokladu)\b"]
INVOICE_TITLE = [r"daňový\s+doklad"]
INVOICE_DATE = [r"\bdatum\s*vystaven[íi]\b", r"\bdatum\s*vyhotoven[íi]\b"]
DUE_DATE = [r"\bdatum\s+splatnosti\b", r"\bsplatnost\b"]
OTHER_DATE = ["splatnost", "plněn[íi]"]
TOTAL_GROSS = [r"\bcelkem\s*(?:s\s+dph|vč)", r"\bcelková\s+částka\b"]
TOTAL_DUE = [r"\b(?:celkem\s+)?k\s+(?:úhradě|uhrade|zaplacen[íi])\b"]
TOTAL_PLAIN = [r"\bcelkem\b"]
NOT_TOTAL = [r"\bdph\b", r"\bbez\b", r"\bz[áa]klad", r"zaplaceno"]
GROSS_MARK = [r"\bs\s+dph\b", r"k\s+úhradě"]
NET = [r"\bcelkem\s+bez\s+dph\b", r"\bz[áa]klad\s+(?:dan[ěe]|dph)\b"]
VAT_AMOUNT = [r"\b(?:celkem\s+)?dph\b(?!\s*(?:celkem|z[áa]klad))"]
DEPOSIT = [r"\b(?:zaplaceno|z[áa]loha)\b"]
CURRENCY = [r"m[ěe]na"]

# A receipt's own number, a payment's ids, and its lines that are no total (the change, cash, card, tip).
RECEIPT_NUMBER = [r"\bú[čc]tenk[ay]\s*(?:č\.|č[íi]slo\b)", r"(?<!\w)(?:č[íi]slo|č\.)\s*ú[čc]tenky\b"]
TRANSACTION_NUMBER = [r"\b(?:transakce|termin[áa]l|pokladna)\s*(?:č\.|č[íi]slo\b|id\b)"]
# "Doklad č. 42", "Pokladní doklad č. 42"; a receipt's title and greeting: never the shop's name.
RECEIPT_NUMBER += [r"\b(?:pokladn[íi]\s+)?doklad\s*(?:č\.|č[íi]slo\b)"]
SLIP_TITLE = [r"[úu][čc]tenka", r"pokladn[íi]\s+doklad"]
GREETING = [r"v[íi]tejte"]
NOT_TOTAL += [r"vr[áa]ceno", r"hotov", r"\bkarta\b", r"\bkartou\b", r"spropitn"]

MONTHS = {1: "leden ledna", 2: "únor února unor unora", 3: "březen března brezen brezna", 4: "duben dubna",
          5: "květen května kveten kvetna", 6: "červen června cerven cervna",
          7: "červenec července cervenec cervence", 8: "srpen srpna", 9: "září zari", 10: "říjen října rijen rijna",
          11: "listopad listopadu", 12: "prosinec prosince"}

# Who is who: the seller's and the buyer's block headings (Slovak spellings too).
SELLER = ["dodavatel", r"dod[áa]vate[lľ]", r"prod[áa]vaj[íi]c[íi]"]
BUYER_HEADING = [r"odb[ěe]ratel", r"odberate[lľ]", r"kupuj[íi]c[íi]", r"p[řr][íi]jemce"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
CURRENCY_NAME = {"koruna": "CZK", "korun": "CZK", "korun českých": "CZK"}
VAT_ID_TAX = ["dph"]
RECEIPT_TITLE = ["[úu][čc]tenka"]
RECEIPT_WORD = ["[úu][čc]tenka"]
BANK_WORD = ["banka", r"n[áa]zev\s+banky"]
