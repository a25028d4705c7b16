"""Italian: data fattura, scadenza, totale documento, netto a pagare, imponibile, imposta, acconto."""

INVOICE_DATE = [r"\bdata\s*(?:della\s+)?(?:fattura|documento|emissione)\b"]
DUE_DATE = [r"\bdata\s+(?:di\s+)?scadenza\b", r"\bscadenza\b"]
OTHER_DATE = ["scadenza", "consegna", "ordine", "pagamento", "lettura", "prossim"]
TOTAL_GROSS = [
    r"\btotale\s*(?:documento|fattura|complessivo|ivato|generale)\b", r"\bimporto\s*totale\b",
    r"\btotale\s*(?:iva\s*)?incl",
]
TOTAL_DUE = [r"\bnetto\s*a\s*pagare\b", r"\b(?:totale\s*)?da\s*pagare\b", r"\btotale\s*a\s*pagare\b"]
TOTAL_PLAIN = [r"\btotale\b"]
NOT_TOTAL = [r"\bsenza\b", "sconto", r"\bimposta\b", "imponibile", "merce", r"\bprima\b", r"\bprezzo\b"]
NET = [r"\bimponibile\b"]
VAT_AMOUNT = [r"\bimposta\b"]
DEPOSIT = [r"\bacconto\b"]
# Its invoice titles ("<title> 2041" numbers the invoice), spliced into one pattern with every language's.
INVOICE_TITLE = ["fattura", r"nota\s+di\s+credito"]
CURRENCY = ["valuta", "divisa"]
MONTHS = {1: "gennaio gen", 2: "febbraio", 3: "marzo", 4: "aprile", 5: "maggio mag", 6: "giugno giu",
          7: "luglio lug", 8: "agosto", 9: "settembre set", 10: "ottobre ott", 11: "novembre", 12: "dicembre"}
