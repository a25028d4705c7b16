"""Italian: data fattura, scadenza, totale documento, netto a pagare, imponibile, imposta, acconto."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 6

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
# A title only when it stands alone ("NOTA" over its number).
TITLE_ALONE = ["nota"]
CURRENCY = ["valuta", "divisa"]
MONTHS = {1: "gennaio gen", 2: "febbraio", 3: "marzo", 4: "aprile", 5: "maggio mag", 6: "giugno giu",
          7: "luglio lug", 8: "agosto", 9: "settembre set", 10: "ottobre ott", 11: "novembre", 12: "dicembre"}

# The invoice number: the titles and references that take a number sign, and labels.
NUMBERED_TITLE = ["fattura", "fatt"]
REFERENCE = ["riferimento", r"rif\."]
INVOICE_OF = ["fattura"]
TITLE_BEFORE_NUMBER = ["fattura"]
DOCUMENT_REFERENCE = ["riferimento"]
INVOICE_NUMBER = [
    r"(?:\bnumero|\bnum\.|\bn[°º]?\.|\bnr\.)\s*(?:della\s+)?(?:fattura|documento)\b",
    r"\bfattura\s*(?:n[°º]?\.?|nr\b\.?|numero|num\.?)",
]
DATE_WORD = ["data"]
LETTER_DATE = ["il"]

# Who is who: the seller's and the buyer's block headings, and what makes a number the buyer's.
SELLER = ["fornitore", "cedente", "prestatore", "venditore", "emittente"]
BUYER = ["committente", "cessionario", "intestatario", r"spett(?:\.\s?le|abile|\.)"]
BUYER_MARK = [r"vostr[ao]"]
VAT_ID = [(r"\bpartita\s*iva\b|\bpart\.\s*iva\b|\bp\.\s*iva\b|\bp\.?iva\b", "IT")]

# Receipts (shop tills' slips): the receipt's own number, a payment's ids, a payment's lines (no total).
RECEIPT = [r"scontrino(?:\s+fiscale)?", r"documento\s+commerciale"]
RECEIPT_SIGN = [r"numero\b"]
RECEIPT_BEFORE_SIGN = [r"\bnumero\b"]
RECEIPT_AFTER_SIGN = ["scontrino"]
TRANSACTION = ["cassa", "transazione"]
RECEIPT_PAYMENT = [r"\bresto\b", r"contant[ei]\b", "elettronico", "mancia"]
RECEIPT_SUM = ["totale"]
# "N. DOC. 0042", "Doc. n. 0042", a fiscal slip's "SF. 402" (scontrino fiscale) after its date; a receipt's
# title and greeting: never the shop's name.
RECEIPT_NUMBER = [r"\bn\.\s*doc\b\.?", r"\bdoc\.\s*n\.", r"\bscontrino\s*:(?=\s*\d)",
                  r"(?<![^\W\d_])S\.?\s?F\.(?=\s*\d|\s*$)"]
SLIP_TITLE = [r"scontrino(?:\s+fiscale)?", r"documento\s+commerciale", r"ricevuta(?:\s+fiscale)?"]
GREETING = [r"benvenut[io]"]

# The total: its word before a bracketed "(IVA incl.)", what says "included"; the words that make a label gross.
TOTAL_WORD = ["totale"]
VAT_INCLUDED = ["inclusa"]
GROSS_MARK = ["ivato", r"\bnetto\s*a\s*pagare", r"a\s*pagare"]

# Who the bank account belongs to; words that make a number a third party's.
PAYEE = [r"intestatario(?:\s+del\s+conto)?"]
THIRD_PARTY = [r"per\s+conto\s+di"]

# Words the field readers look for beside the labels: a heading's second word, a name's label, a period of days,
# a letter's own invoice ("La vostra fattura"), the word before a date ("dell'").
HEADING_END = ["indirizzo", "dati"]
NAME_LABEL = ["nome"]
PERIOD = ["giorni", "settimane", "mesi"]
YOUR_INVOICE = [r"la\s+vostra\s+fattura"]
DATE_BEFORE = ["dell'"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
REGISTER = ["rea"]
STREET_TYPE = ["via", "viale", "piazza", "corso"]
STREET_BEFORE_NAME = ["via", "viale", "piazza"]
COUNTRY_NAME = {"italia": "IT"}
VAT_ID_TAX = ["iva"]
RECEIPT_TITLE = ["scontrino"]
RECEIPT_WORD = ["scontrino", r"documento\s+commerciale"]
APPENDED_INVOICE = ["fattura", r"nota\s+di\s+credito"]
APPENDED_OTHER = ["bolla", r"documento\s+di\s+trasporto", "preventivo", r"rapporto\s+di\s+intervento"]
BANK_WORD = ["banca"]
NAME_HEADING = [r"ragione\s+sociale"]
NOT_A_PARTY = ["copia", "grazie", r"da\s+asporto", "descrizione"]
PUBLIC_BODY = ["comune", "provincia", "regione"]
PUBLIC_BODY_OF = ["di", "del"]
PLACE_WORD = ["strada", "largo"]
CONNECTOR = ["e", "di", "del", "da"]
PHONE = ["telefono"]
ITEM_HEADER = ["descrizione", "quantit[àa]", r"q\.t[àa]", "prezzo"]
