"""The words invoices print for their fields: each language's (``agent.languages``, one module each)
assembled into one pattern per kind; and the labels English, German, French, Dutch, Spanish, Italian and
Polish still share here (numbers, parties, VAT ids), with their common abbreviations.

Each entry is a regular expression source matched case-insensitively with ``re.search``
inside one column of a line (never across lines). Every pattern is a set of literal
alternatives with optional parts; none repeats a group over characters another part of it
can also take, so a search is linear in the text, whatever the text.
"""

from __future__ import annotations

import re

from . import languages

# --- receipts (shop tills' slips): en de fr es it nl pl ------------------------------------------
# A receipt's own number ("Bon-Nr.", "N° de ticket", "Nr paragonu", "Scontrino n."): below an invoice-number label.
RECEIPT_NUMBER_WORDS = [
    r"\b(?:receipt|ticket|bon|kassenbon|kassabon|quittung|re[çc]u|recibo|scontrino|paragon(?:u)?|paragon\s+fiskalny)"
    r"[\s.-]*(?:number|nummer\b|no\b\.?|nr\b\.?|#|n[°º]\.?|n\.(?!\w)|num\b\.?|n[úu]m(?:ero)?\b\.?|numero\b|numer\b)",
    r"\b(?:bon|receipt|ticket)(?:nummer|nr\b\.?|no\b\.?)",
    r"(?:\bn[°º]\.?|\bn\.(?!\w)|\bn[úu]m(?:ero)?\b\.?|\bnumero\b|\bnr\b\.?|\bnumer\b)\s*(?:de\s+|del\s+|du\s+)?"
    r"(?:ticket|re[çc]u|recibo|scontrino|paragonu)\b",
]
# A payment's ids on a receipt: never the receipt's number while anything else is printed.
TRANSACTION_NUMBER_WORDS = [
    r"\b(?:transaction|trans|txn|terminal|term|till|register|pos|kasse|caisse|caja|cassa|kassa|kasa|card|karte|"
    r"carte|tarjeta|auth|transaktion|transakcji|transazione|transacci[óo]n|transactie|autorisation|autorizaci[óo]n)"
    r"[\s.-]*(?:id\b|number|nummer\b|no\b\.?|nr\b\.?|#|n[°º]\.?|num\b\.?|n[úu]m(?:ero)?\b\.?|numero\b|numer\b)",
    r"\bn[°º]\s*(?:de\s+)?(?:transaction|transacci[óo]n|terminal|caisse|caja)\b",
]
# Lines of a receipt that are no total: what was handed over, the change, a card's payment line, a tip, the
# VAT table's rows ("Rückgeld", "Geg. Bar", "Importe tarjeta", "Suma PTU").
RECEIPT_NOT_TOTAL = (r"|\bchange\b|\bcash\b|tendered|\bcard\b|\bvisa\b|mastercard|maestro|\btips?\b|gratuity|"
                     r"r[üu]ckgeld|wechselgeld|gegeben|\bgeg\b|\bbar\b|ec-?karte|karten|\bkarte\b|trinkgeld|"
                     r"\brendu|esp[èe]ces|\bcb\b|\bcarte\b|pourboire|\bcambio\b|efectivo|entregado|tarjeta|propina|"
                     r"\bresto\b|contant[ei]\b|elettronico|mancia|wisselgeld|\bcontant\b|\bpin\b|fooi|"
                     r"reszta|got[óo]wk|\bkarta\b|napiwek|\bptu\b|opodatkowan")
# A receipt's total: "SUMME EUR", "SUMA PLN", "TOTAL EUR" (the sum followed by its currency).
RECEIPT_TOTAL = [r"\b(?:summe|suma|totale|razem)\s*(?:eur|pln|z[łl]|chf|gbp|usd|€)(?![^\W\d_])"]

# --- invoice number ----------------------------------------------------------------------
# "n°", "nº", "n.º", "no.", "nr.", "núm.", "num.", "#": what follows a title to say "number".
_NO = r"(?:n\.?\s?[°º]|\bn\.(?!\w)|\bnr\b\.?|\bno\b\.?|\bn[úu]m\b\.?|\bn[úu]m[ée]ro\b|\bnummer\b|\bnumber\b|#)"
NUMBER_SIGN = _NO
INVOICE_NUMBER = [
    rf"\b(?:invoice|inv|rechnung|rechn|rg|re|facture|fact|factuur|fact|factura|fra|fattura|fatt|faktura|fv)\.?[\s-]*{_NO}",
    r"\b(?:r[ée]f(?:[ée]rence)?\.?|referen(?:ce|z|tie|cia)|riferimento|rif\.)\s*(?:de\s+(?:la\s+)?|der\s+)?"
    r"(?:facture|rechnung|invoice|factuur|factura|fattura|faktury)\b",
    r"\b(?:rechnungs|factuur|invoice)referen(?:z|tie|ce)\b",
    r"\binvoice\s*(?:number|num\.?|no\b\.?|nr\b\.?|n[°º]\.?|#|id\b|ref(?:erence)?\b\.?)",
    r"\binv\.?\s*(?:no\b\.?|#|nr\b\.?)",
    r"\b(?:bill|document|doc)\s*(?:number|no\b\.?|nr\b\.?|#)",
    r"\bfactura\s+(?:electr[óo]nica\s+)?de\s+venta\b(?:\s*(?:n[°º.]|no\b\.?|#))?",
    r"rechnungs?[\s.-]*(?:nummer|nr\b\.?|no\b\.?|n[°º]\.?)",
    r"\b(?:re|rg|rech|rechn)\.?[\s-]*nr\b\.?",
    r"\bbeleg[\s.-]*(?:nummer|nr\b\.?)",
    r"\bgutschrifts?[\s.-]*(?:nummer|nr\b\.?)",
    r"(?:\bnum[ée]ro|\bn[°º]\.?|\bno\b\.?)\s*(?:de\s+)?(?:la\s+)?(?:facture|l'avoir|avoir)\b",
    r"\b(?:facture|avoir)\s*(?:n[°º]\.?|num[ée]ro|no\b\.?|#)",
    r"fa[ck]tuur[\s.-]*(?:nummer|nr\b\.?|no\b\.?)",
    rf"\b(?:documento|document|pi[èe]ce|beleg)\s*{_NO}", rf"{_NO}\s*(?:de\s+(?:la\s+)?)?pi[èe]ce\b",
    r"(?:\bn[úu]mero|\bn[°º]\.?|\bn[úu]m\.?|\bno\b\.?)\s*(?:de\s+)?(?:la\s+)?factura\b",
    r"\bfactura\s*(?:n[°º]\.?|n[úu]m(?:ero|\.)?|no\b\.?|#)",
    r"(?:\bnumero|\bnum\.|\bn[°º]?\.|\bnr\.)\s*(?:della\s+)?(?:fattura|documento)\b",
    r"\bfattura\s*(?:n[°º]?\.?|nr\b\.?|numero|num\.?)",
    r"\b(?:nr\b\.?|numer)\s*(?:faktury|dokumentu)\b",
    r"\bfaktur[ay]\s*(?:vat\s*)?(?:nr\b\.?|numer|no\b\.?)",
    *languages.gather("INVOICE_NUMBER"),
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
DOCUMENT_REFERENCE = (r"^\W{0,3}(?:reference|ref\.|r[ée]f[ée]rence|r[ée]f\.|referenz|referentie|referencia|riferimento|"
                      r"refer[êe]ncia|referanse|referens)(?![^\W\d_])\s*(?:no\b\.?|nr\b\.?|#)?\s*:?")
# A document-type word that is a title only when it stands alone ("NOTA" over its number).
INVOICE_TITLE_ALONE = INVOICE_TITLE[:-len(r"\s*[:#]?\s*")].replace(r"\b(?:", r"\b(?:nota|", 1) + r"\s*:?"
# A label "<word>-Nr." ("Folio-Nr."), unless the word names another number.
WORD_NR = r"(?P<word>[^\W\d_]{3,20})-nr\.?\s*:?"
OTHER_NUMBER = re.compile(
    r"kunden|kd|auftrag|bestell|steuer|konto|ust|mwst|tel|fax|artikel|art|liefer|lief|pos|kred|debit|mitglied|"
    r"versicherten|vers|kassen|bank|blz|projekt|vertrag|personal|referenz|ref|seiten|lager|sach|akten|reg|hr",
    re.IGNORECASE)

# A title, a few words, then a number sign: "Rechnung des Versicherers Nr. 01.234", "Gutschrift (...) Nr. 4711".
INVOICE_TITLE_NUMBER = (r"\b(?:invoice|rechnung|gutschrift|rechnungskorrektur|facture|avoir|factuur|creditnota|factura|"
                        rf"fattura|faktura)[^\d:\n]{{0,40}}?(?:{_NO}|\bnumer\b)")

# --- invoice date ------------------------------------------------------------------------
# The place and date of a letter: weaker than a date's label, which wins wherever it is printed.
LETTER_DATE = r"[^\W\d_]{3},\s*(?:den|le|el|il|dnia)\b"
INVOICE_DATE = [
    *languages.gather("INVOICE_DATE"),
    # the place and date of a letter: "München, den 01.11.2024", "Paris, le 3 mars 2020", "Kraków, dnia 5 maja 2020"
    LETTER_DATE,
]
# A bare "Date" label, read only when no specific one is printed.
DATE_GENERIC = r"^\W{0,3}(?:date|datum|fecha|data|dated|le)\b"
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
    r"\btota(?:l|al|le)\s*\(\s*(?:(?:iva|tva|btw|vat|mwst|ust)\s*)?(?:incl|inkl|ttc\b|t\.t\.c)",
    # "Brutto 104,00 €", "Gross: 55.00": the word alone, its amount right after it
    r"^\W{0,3}(?:brutto|gross)\b(?=\s*:?\s*(?:[€$£]|[A-Z]{3}\b)?\s*\d)",
]
TOTAL_DUE = languages.gather("TOTAL_DUE")
TOTAL_PLAIN = languages.gather("TOTAL_PLAIN")
# A total label that names a part of the total, not the total due.
NOT_TOTAL = re.compile("|".join(languages.gather("NOT_TOTAL")) + RECEIPT_NOT_TOTAL, re.IGNORECASE)
# Amounts already paid: the total less these is what is left to pay.
DEPOSIT = languages.gather("DEPOSIT")
# What makes a label name the amount including VAT, whatever else it says.
GROSS_MARK = re.compile(r"\b(?:incl|inkl)(?:\.|uding|usive|usief|usive)?\s*(?:[^\W\d_]+\.?)?|"
                        r"\b(?:tva|iva|btw|vat|mwst|ust)\s*(?:incluse|comprise|incluida|inclusa|inclusief|included|incl\.?|inkl\.?)|\bbrutto\b|\bgross\b|t\.?t\.?c\b|ivato|\bcon\s+iva|\bz\s+vat|"
                        r"\bnet\s*[àa]\s*payer|\bnetto\s*a\s*pagare|[àa]\s*payer|a\s*pagar|a\s*pagare|"
                        r"te\s*betalen|zap[łl]aty|zu\s*zahlen" + languages.alternatives("GROSS_MARK"), re.IGNORECASE)
# The net total and the VAT amount: their sum confirms a total.
NET = languages.gather("NET")
VAT_AMOUNT = languages.gather("VAT_AMOUNT")

# --- VAT id -------------------------------------------------------------------------------
# Each label with the country whose number it names when the number has no prefix.
VAT_ID = [
    (r"\bu(?:st|mst)[\s.-]*id(?:ent)?[\s.-]*(?:nr\b\.?|nummer|no\b\.?)?", "DE"),
    (r"\bumsatzsteuer[\s.-]*id(?:entifikations)?[\s.-]*(?:nummer|nr\b\.?)?", "DE"),
    (r"\bust[\s.-]*nr\b\.?", "DE"),
    (r"\buid[\s.-]*(?:nr\b\.?|nummer)?", "AT"),
    (r"\bvat\s*(?:id\b|no\b\.?|nr\b\.?|number|reg(?:istration)?\b\.?(?:\s*(?:no\b\.?|number))?|#|code\b)?", None),
    (r"\bn[°º]\s*(?:de\s+)?tva(?:\s*intra(?:communautaire)?)?", "FR"),
    (r"\b(?:identifiant\s*|num[ée]ro\s*(?:de\s+)?)?tva(?:\s*intra(?:communautaire|-?com)?\b\.?)?", "FR"),
    (r"\bbtw[\s.-]*(?:nummer|nr\b\.?|id\b|identificatienummer)?", "NL"),
    (r"\bnif\s*/\s*cif\b|\bcif\s*/\s*nif\b|\bn\.?i\.?f\b\.?|\bc\.?i\.?f\b\.?", "ES"),
    (r"\bn[úu]mero\s*(?:de\s+)?iva\b", "ES"),
    (r"\bpartita\s*iva\b|\bpart\.\s*iva\b|\bp\.\s*iva\b|\bp\.?iva\b", "IT"),
    (r"\bnip\b", "PL"),
]

# --- IBAN and bank account -------------------------------------------------------------------
IBAN = r"\biban\b"
ACCOUNT = r"\bbank\s+account(?:\s*(?:number|no\b\.?|nr\b\.?|#))?"
# Who the money goes to: the supplier, named by its bank account.
PAYEE = (r"\b(?:account\s+(?:holder|name)|beneficiary|payee|kontoinhaber|kontoname|empf[äa]nger\s+der\s+zahlung|"
         r"titulaire\s+du\s+compte|b[ée]n[ée]ficiaire|rekeninghouder|ten\s+name\s+van|begunstigde|"
         r"titular(?:\s+de\s+la\s+cuenta)?|beneficiario|intestatario(?:\s+del\s+conto)?|w[łl]a[śs]ciciel\s+rachunku)\b")

# --- currency -------------------------------------------------------------------------------
CURRENCY = r"\b(?:" + "|".join(languages.gather("CURRENCY")) + r")\b"

# --- who is who: the blocks of the page ---------------------------------------------------------
SELLER = (r"\b(?:seller|supplier|vendor|sold\s+by|issued\s+by|bill\s+from|invoice\s+from|from|"
          r"service\s+provider|provider|"
          r"verk[äa]ufer|lieferant|leistungserbringer|rechnungssteller|absender|auftragnehmer|"
          r"fournisseur|vendeur|[ée]metteur|prestataire|leverancier|verkoper|afzender|"
          r"proveedor|emisor|emitid[ao]\s+por|facturad[ao]\s+por|ausgestellt\s+von|emitente|vendedor|fornitore|cedente|prestatore|venditore|emittente|"
          r"sprzedawca|wystawca|dostawca)\b")
BUYER = (r"\b(?:to|(?:billing|delivery|shipping|invoice|invoicing|customer)\s+address|"
         r"bill(?:ed)?\s+to|invoice(?:d)?\s+to|sold\s+to|ship(?:ped)?\s+to|deliver(?:y|ed)?\s+to|customer|client|"
         r"buyer|recipient|k[äa]ufer|kunde|rechnungsempf[äa]nger|leistungsempf[äa]nger|empf[äa]nger|auftraggeber|"
         r"warenempf[äa]nger|rechnungsadresse|lieferadresse|lieferanschrift|acheteur|destinataire|"
         r"adresse\s+de\s+(?:livraison|facturation)|factur[ée]\s+[àa]|livr[ée]\s+[àa]|klant|afnemer|koper|"
         r"factuuradres|afleveradres|cliente|comprador|destinatario|facturar\s+a|enviar\s+a|"
         r"direcci[óo]n\s+de\s+(?:entrega|facturaci[óo]n)|committente|cessionario|intestatario|spett(?:\.\s?le|abile|\.)|"
         r"nabywca|odbiorca|kupuj[ąa]cy|p[łl]atnik|attn|attention|z\.\s?hd\.?|t\.a\.v\.?|c/o|[àa]\s+l'attention\s+de)\b")
# A label that says a number is the buyer's ("N° TVA client", "Your VAT id", "Kunden-USt-IdNr").
BUYER_MARK = re.compile(
    r"\b(?:client|customer|buyer|your|ihre?|kunden?|k[äa]ufer|acheteur|votre|klant|uw|cliente|comprador|"
    r"destinatario|vostr[ao]|nabywc[ya]|odbiorc[ya]|empf[äa]nger|bill\s+to)\b|kunden", re.IGNORECASE)
# Legal forms that end a company's name.
LEGAL_FORM = (r"(?:GmbH\s*&\s*Co\.?\s*KG(?:aA)?|GmbH|GMBH|gGmbH|AG|KGaA|KG|OHG|oHG|e\.\s?K\.|e\.\s?V\.|a\.\s?G\.|UG|"
              r"mbH|B\.\s?V\.|BV|N\.\s?V\.|NV|V\.O\.F\.|VOF|SASU|SAS|S\.A\.S\.|SARL|S\.A\.R\.L\.|EURL|SNC|SCOP|"
              r"S\.\s?A\.|SA|S\.\s?L\.(?:U\.)?|SL|SLU|S\.\s?r\.\s?l\.(?:s\.)?|SRLS|SRL|Srl|S\.\s?p\.\s?A\.|SpA|S\.p\.a\.|S\.n\.c\.|"
              r"S\.a\.s\.|Ltd\.?|LTD\.?|Limited|LIMITED|LLP|PLC|plc|Inc\.?|INC\.?|LLC|L\.L\.C\.|Corp\.?|"
              r"sp\.\s?z\s?o\.\s?o\.|Sp\.\s?z\s?o\.\s?o\.|SP\.\s?Z\s?O\.\s?O\.|sp\.\s?j\.|sp\.\s?k\.|S\.\s?C\.)")

# --- months ----------------------------------------------------------------------------------
MONTHS = {name: number for number, names in languages.months().items() for name in names.split()}
