"""Spanish: fecha de factura, vencimiento, importe total, total a pagar, base imponible, IVA, anticipo."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 5

INVOICE_DATE = [r"\bfecha\s*(?:de\s+)?(?:la\s+)?(?:factura|emisi[óo]n|expedici[óo]n)\b"]
DUE_DATE = [r"\b(?:fecha\s+(?:de\s+)?)?vencimiento(?:\s+del?\s+pago)?\b"]
OTHER_DATE = ["vencimiento", "entrega", "pedido", "periodo", "pago", r"al\b", "pr[óo]xim"]
TOTAL_GROSS = [r"\bimporte\s*total\b", r"\btotal\s*(?:de\s+la\s+)?factura\b", r"\btotal\s*(?:con\s+)?iva\s*incl"]
TOTAL_DUE = [r"\b(?:total|importe)\s*a\s*pagar\b"]
TOTAL_PLAIN = [r"\bimporte\b"]
NOT_TOTAL = [r"\bsin\b", "descuento", r"\biva\b", "imponible", "mercanc", r"\bantes\b", r"\bprecio\b"]
NET = [r"\bbase\s*imponible\b", r"\b(?:importe\s+)?neto\s+gravado\b", r"\bimporte\s+neto\b"]
VAT_AMOUNT = [r"\b(?:total\s*|importe\s*|cuota\s*)?iva\b"]
DEPOSIT = [r"\banticipo\b"]
# Its invoice titles ("<title> 2041" numbers the invoice), spliced into one pattern with every language's.
# (a shop's simplified invoice, "Factura simplificada", over its number)
INVOICE_TITLE = [r"factura\s+simplificada", "factura"]
CURRENCY = ["moneda", "divisa"]
MONTHS = {1: "enero ene", 2: "febrero", 3: "marzo", 4: "abril", 5: "mayo", 6: "junio", 7: "julio", 8: "agosto ago",
          9: "septiembre setiembre", 10: "octubre", 11: "noviembre", 12: "diciembre dic"}

# The invoice number: what says "number" after a title, the titles and references that take one, and labels
# ("<number>" in a label stands for any language's number sign).
NUMBER_SIGN = [r"\bn[úu]m\b\.?"]
NUMBERED_TITLE = ["factura", "fra"]
REFERENCE = ["referencia"]
INVOICE_OF = ["factura"]
TITLE_BEFORE_NUMBER = ["factura"]
DOCUMENT_REFERENCE = ["referencia"]
INVOICE_NUMBER = [
    r"\bfactura\s+(?:electr[óo]nica\s+)?de\s+venta\b(?:\s*(?:n[°º.]|no\b\.?|#))?",
    r"\bdocumento\s*<number>",
    r"(?:\bn[úu]mero|\bn[°º]\.?|\bn[úu]m\.?|\bno\b\.?)\s*(?:de\s+)?(?:la\s+)?factura\b",
    r"\bfactura\s*(?:n[°º]\.?|n[úu]m(?:ero|\.)?|no\b\.?|#)",
    r"\bcomp(?:robante)?\.?\s*(?:n[°º]\.?|nro\b\.?|n[úu]mero)",
]
DATE_WORD = ["fecha"]
LETTER_DATE = ["el"]

# Who is who: the seller's and the buyer's block headings, and what makes a number the buyer's.
SELLER = ["proveedor", "emisor", r"emitid[ao]\s+por", r"facturad[ao]\s+por", "vendedor"]
BUYER = ["cliente", "comprador", "destinatario", r"facturar\s+a", r"enviar\s+a",
         r"direcci[óo]n\s+de\s+(?:entrega|facturaci[óo]n)"]
# "Sr.(s):", "Señores" before a customer's name.
BUYER_HEADING = [r"se[ñn]or(?:es)?", r"sr(?:es)?\.?\s?\(s\)", r"sr(?:es)?\.(?=\s*:)"]
BUYER_MARK = ["cliente", "comprador", "destinatario"]
VAT_ID = [
    (r"\bnif\s*/\s*cif\b|\bcif\s*/\s*nif\b|\bn\.?i\.?f\b\.?|\bc\.?i\.?f\b\.?", "ES"),
    (r"\bn[úu]mero\s*(?:de\s+)?iva\b", "ES"),
]

# Receipts (shop tills' slips): the receipt's own number, a payment's ids, a payment's lines (no total).
RECEIPT = ["recibo", "tique"]
RECEIPT_SIGN = [r"n[úu]m(?:ero)?\b\.?"]
RECEIPT_BEFORE_SIGN = [r"\bn[úu]m(?:ero)?\b\.?"]
RECEIPT_OF = [r"del\s+"]
RECEIPT_AFTER_SIGN = ["recibo"]
TRANSACTION = ["caja", "tarjeta", r"transacci[óo]n", r"autorizaci[óo]n"]
TRANSACTION_NUMBER = [r"\bn[°º]\s*(?:de\s+)?(?:transacci[óo]n|terminal|caja)\b"]
RECEIPT_PAYMENT = [r"\bcambio\b", "efectivo", "entregado", "tarjeta", "propina"]
# A slip's word and a colon before its number ("Tique: 0042"), a shop's simplified invoice, its number on the same
# line ("Factura simplificada: T-0042", "Fra. simplificada 0042"); its title and a greeting: never the shop's name.
RECEIPT_NUMBER = [r"\b(?:tique|recibo)\s*:(?=\s*#?\d)",
                  r"\b(?:factura|fra\.?)\s+simplificada\b\s*(?:n[°º]\.?|n[úu]m\b\.?|#)?(?=\s*:?\s*[A-Z]{0,4}\s?[\d-])"]
SLIP_TITLE = [r"factura\s+simplificada", "tique"]
GREETING = [r"bienvenid[oa]s?"]

# The total: the VAT's name, what says "included"; the words that make a label the gross amount.
VAT_WORD = ["iva"]
VAT_INCLUDED = ["incluida"]
GROSS_MARK = [r"\bcon\s+iva", r"a\s*pagar"]

# Who the bank account belongs to; words that make a number a third party's.
PAYEE = [r"titular(?:\s+de\s+la\s+cuenta)?", "beneficiario"]
THIRD_PARTY = [r"en\s+nombre\s+de", r"por\s+cuenta\s+de"]

# Words the field readers look for beside the labels: a heading's second word ("Dirección de entrega"), a name's
# label, a period of days, a letter's own invoice ("Su factura"), the word before a date ("del").
HEADING_END = [r"direcci[óo]n", "datos"]
NAME_LABEL = ["nombre", r"raz[óo]n\s+social"]
# An Argentine invoice counts its numbers per point of sale: "Punto de Venta: 00003  Comp. Nro: 00001360" is
# invoice 00003-00001360, as its "Número: 00003 - 00001360" prints it.
POINT_OF_SALE = [r"punto\s+de\s+venta"]
PERIOD = [r"d[ií]as", "semanas", "meses"]
YOUR_INVOICE = [r"su\s+factura"]
DATE_BEFORE = ["del"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
DAY_OF = ["de"]
YEAR_OF = ["de", "del"]
REGISTER = [r"registro\s+mercantil"]
STREET_MARK = ["c/"]
STREET_TYPE = ["calle", "avda", "avenida", "plaza", "carrer"]
STREET_BEFORE_NAME = ["calle"]
CURRENCY_NAME = {"pesos": "$", "pesos argentinos": "ARS", "peso argentino": "ARS", "peso mexicano": "MXN",
                 "pesos mexicanos": "MXN", "peso chileno": "CLP", "pesos chilenos": "CLP", "rupia": "INR"}
COUNTRY_NAME = {"españa": "ES", "espana": "ES"}
VAT_ID_TAX = ["iva"]
RECEIPT_TITLE = ["recibo"]
RECEIPT_WORD = ["recibo"]
APPENDED_INVOICE = ["factura"]
APPENDED_OTHER = ["albar[áa]n", r"orden\s+de\s+trabajo", r"parte\s+de\s+trabajo", "presupuesto"]
NAMES_A_NUMBER = ["n[úu]mero"]
NOT_A_BUYER = [r"sr\.?", r"sra\.?"]
BANK_WORD = ["banco"]
NAME_HEADING = ["nombre", r"denominaci[óo]n(?:\s+social)?"]
# A seller's VAT standing printed beside its name ("Condición frente al IVA: IVA Responsable Inscripto"): no name.
NOT_A_PARTY = ["duplicado", "triplicado", "gracias", r"para\s+llevar", "descripci[óo]n", "pago", "tarjeta",
               r"(?:iva\s+)?responsable\s+(?:inscripto|monotributo)", r"(?:iva\s+)?exento", r"consumidor\s+final",
               "monotributista"]
PUBLIC_BODY = ["ayuntamiento", "municipio"]
PUBLIC_BODY_OF = ["de", "del"]
PLACE_WORD = ["plaza"]
CONNECTOR = ["y", "de", "del"]
FORM_WORD = ["empresa", "nombre"]
SIGNER_ROLE = ["cliente", "comprador", "vendedor"]
PHONE = ["tel[ée]fono"]
ITEM_HEADER = ["descripci[óo]n", "concepto", "cantidad", "precio"]
NUMBER_NAME = ["n[úu]mero"]
