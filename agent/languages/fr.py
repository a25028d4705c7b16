"""French: date de facture, échéance, total TTC, net à payer, total HT, TVA, acompte."""

INVOICE_DATE = [r"\bdate\s*(?:de\s+(?:la\s+)?)?(?:facture|facturation|l'avoir|d'[ée]mission|[ée]mission)\b"]
DUE_DATE = [r"\b(?:date\s+d'\s?)?[ée]ch[ée]ance\b", r"\b[àa]\s+payer\s+avant\s+le\b"]
OTHER_DATE = [
    "[ée]ch[ée]ance", "livraison", "commande", "p[ée]riode", "paiement", r"du\b", "prestation", "expiration",
    "relev[ée]", "compteur", "prochain",
]
TOTAL_GROSS = [r"\b(?:total|montant)\s*t\.?t\.?c\b", r"\bmontant\s*total\b", r"\btotal\s*(?:de\s+la\s+)?facture\b"]
TOTAL_DUE = [r"\bnet\s*[àa]\s*payer\b", r"\b(?:solde|reste|montant|total)\s*[àa]\s*payer\b", r"\b[àa]\s*payer\b"]
TOTAL_PLAIN = [r"\bmontant\b"]
NOT_TOTAL = [
    r"\bh\.?t\.?\b", r"\bhors\b", r"\bsans\b", "remise", "acompte", "pay[ée]", "report", r"\btva\b", r"\btaxe",
    r"\bbase\b", "marchandises", r"\bavant\b", r"\bprix\b",
]
NET = [r"\b(?:total|montant)\s*\(?\s*h\.?t\b", r"\bsous[\s-]*total\b"]
VAT_AMOUNT = [r"\b(?:total\s*|montant\s*)?(?:de\s+la\s+)?tva\b", r"\btotal\s*taxes\b"]
DEPOSIT = [r"\bacompte\b", r"\bd[ée]j[àa]\s+(?:pay[ée]|r[ée]gl[ée])\b", r"^\W{0,3}(?:montant\s+)?pay[ée]\b"]
# Its invoice titles ("<title> 2041" numbers the invoice), spliced into one pattern with every language's.
INVOICE_TITLE = [r"note\s+d'honoraires", "facture", "avoir"]
CURRENCY = ["devise", "monnaie"]
MONTHS = {1: "janvier janv", 2: "février févr fevrier fevr", 3: "mars", 4: "avril avr", 5: "mai", 6: "juin",
          7: "juillet juil", 8: "août aout", 9: "septembre", 10: "octobre", 11: "novembre", 12: "décembre decembre"}
