"""French: date de facture, échéance, total TTC, net à payer, total HT, TVA, acompte."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 3

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

# The invoice number: what says "number" after a title, the titles and references that take one, and labels
# ("<number>" in a label stands for any language's number sign).
NUMBER_SIGN = [r"n\.?\s?[°º]", r"\bn[úu]m[ée]ro\b"]
NUMBERED_TITLE = ["facture", "fact"]
REFERENCE = [r"r[ée]f(?:[ée]rence)?\.?"]
OF = [r"de\s+(?:la\s+)?"]
INVOICE_OF = ["facture"]
TITLE_BEFORE_NUMBER = ["facture", "avoir"]
DOCUMENT_REFERENCE = [r"r[ée]f[ée]rence", r"r[ée]f\."]
INVOICE_NUMBER = [
    r"(?:\bnum[ée]ro|\bn[°º]\.?|\bno\b\.?)\s*(?:de\s+)?(?:la\s+)?(?:facture|l'avoir|avoir)\b",
    r"\b(?:facture|avoir)\s*(?:n[°º]\.?|num[ée]ro|no\b\.?|#)",
    r"\bpi[èe]ce\s*<number>", r"<number>\s*(?:de\s+(?:la\s+)?)?pi[èe]ce\b",
]
DATE_WORD = ["le"]
LETTER_DATE = ["le"]

# Who is who: the seller's and the buyer's block headings, and what makes a number the buyer's.
SELLER = ["fournisseur", "vendeur", r"[ée]metteur", "prestataire"]
BUYER = ["acheteur", "destinataire", r"adresse\s+de\s+(?:livraison|facturation)", r"factur[ée]\s+[àa]",
         r"livr[ée]\s+[àa]", r"[àa]\s+l'attention\s+de"]
BUYER_MARK = ["acheteur", "votre"]
VAT_ID = [
    (r"\bn[°º]\s*(?:de\s+)?tva(?:\s*intra(?:communautaire)?)?", "FR"),
    (r"\b(?:identifiant\s*|num[ée]ro\s*(?:de\s+)?)?tva(?:\s*intra(?:communautaire|-?com)?\b\.?)?", "FR"),
]

# Receipts (shop tills' slips): the receipt's own number, a payment's ids, a payment's lines (no total).
RECEIPT = [r"re[çc]u"]
RECEIPT_SIGN = [r"n[°º]\.?"]
RECEIPT_BEFORE_SIGN = [r"\bn[°º]\.?"]
RECEIPT_OF = [r"de\s+", r"du\s+"]
RECEIPT_AFTER_SIGN = ["ticket", r"re[çc]u"]
TRANSACTION = ["caisse", "carte", "autorisation"]
TRANSACTION_NUMBER = [r"\bn[°º]\s*(?:de\s+)?(?:transaction|terminal|caisse)\b"]
RECEIPT_PAYMENT = [r"\brendu", r"esp[èe]ces", r"\bcb\b", r"\bcarte\b", "pourboire"]

# The total: the VAT's name, what says "included"; the words that make a label the gross amount.
VAT_WORD = ["tva"]
VAT_INCLUDED = ["incluse", "comprise"]
GROSS_MARK = [r"t\.?t\.?c\b", r"\bnet\s*[àa]\s*payer", r"[àa]\s*payer"]
INCLUDED_TOTAL = [r"ttc\b", r"t\.t\.c"]

# Who the bank account belongs to; words that make a number a third party's.
PAYEE = [r"titulaire\s+du\s+compte", r"b[ée]n[ée]ficiaire"]
THIRD_PARTY = [r"au\s+nom\s+(?:et\s+pour\s+le\s+compte\s+)?de", r"pour\s+le\s+compte\s+de", "encaissement",
               "recouvrement", "transporteur", "assureur"]

# Words the field readers look for beside the labels: a heading's second word, a name's label ("Raison sociale"),
# a period of days ("à 45 jours"), a letter's own invoice ("Votre facture"), the word before a date ("du").
HEADING_END = ["adresse"]
NAME_LABEL = ["nom", r"raison\s+sociale"]
PERIOD = ["jours?", "semaines?", "mois"]
YOUR_INVOICE = [r"votre\s+facture"]
DATE_BEFORE = ["du", "de"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
DAY_ORDINAL = ["er"]
REGISTER = ["siret", "siren", "rcs"]
STREET_TYPE = ["rue", "avenue", "bd", "boulevard"]
STREET_BEFORE_NAME = ["rue", "avenue"]
CURRENCY_NAME = {"franc suisse": "CHF"}
COUNTRY_NAME = {"france": "FR", "belgique": "BE", "luxembourg": "LU"}
VAT_ID_TAX = ["tva"]
VAT_ID_WORD = ["intra"]
RECEIPT_TITLE = ["ticket", "re[çc]u"]
RECEIPT_WORD = ["ticket", "re[çc]u"]
APPENDED_INVOICE = ["facture", "avoir"]
APPENDED_OTHER = [r"bon\s+de\s+livraison", r"bon\s+d'intervention", r"ordre\s+de\s+travail", "devis"]
NAMES_A_NUMBER = ["num[ée]ro"]
NOT_A_BUYER = [r"m\.", "mme", "madame", "monsieur", r"[àa]\s+conserver", "copie"]
BANK_WORD = ["banque"]
NAME_HEADING = [r"raison\s+sociale", "nom"]
NOT_A_PARTY = ["copie", "re[çc]u", "recu", "merci", r"sur\s+place", r"[àa]\s+emporter", "bienvenue",
               "r[ée]capitulatif", "veuillez", "d[ée]signation", "paiement", "carte", "esp[èe]ces"]
PUBLIC_BODY = ["ville", "commune", "d[ée]partement", "r[ée]gion"]
PUBLIC_BODY_OF = ["de", "du", "des"]
POSTAL = [r"port\s+pay[ée]", "prioritaire"]
PLACE_WORD = ["rue", "chemin", "quai"]
CONNECTOR = ["et", "de", "du", "des", "la", "le", "pour"]
FORM_WORD = ["nom", "soci[ée]t[ée]"]
SIGNER_ROLE = ["client", "acheteur", "vendeur", "du", "de"]
PHONE = ["t[ée]l"]
ITEM_HEADER = ["d[ée]signation", "quantit[ée]", "qt[ée]", "prix"]
NUMBER_NAME = ["num[ée]ro"]
