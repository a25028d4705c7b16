"""Portuguese: fatura n.º, fatura-recibo, nota fiscal (NF-e), data de emissão, data de vencimento, total sem IVA, IVA,
total a pagar."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 11

INVOICE_NUMBER = [r"\bfatura(?:[\s-]*recibo)?\s*(?:n\.?\s?[°º]\.?|n[úu]m(?:ero|\.)?|no\b\.?)",
                  r"\bn[úu]mero\s+d[ao]\s+(?:fatura|documento)\b",
                  r"\bn[úu]mero\s+d[ao]\s+(?:nfs?-?e|nota(?:\s+fiscal)?|recibo)\b"]
INVOICE_TITLE = [r"fatura\s+simplificada", r"fatura(?:[\s-]*recibo)?",
                 r"nota\s+fiscal(?:\s+(?:eletr[ôo]nica|de\s+servi[çc]os?))?(?![^\W\d_])",
                 r"danfse?(?![^\W\d_])", r"nfs?-e(?![^\W\d_])"]
# "NOTA FISCAL Nº 05 - SÉRIE 457", "Fatura nº 2024/118": the title before the number's sign.
TITLE_BEFORE_NUMBER = ["fatura", r"nota\s+fiscal(?:\s+eletr[ôo]nica)?", r"nfs?-e"]
INVOICE_DATE = [r"\bdata\s*(?:d[ae]\s+)?(?:fatura|emiss[ãa]o)\b"]
DUE_DATE = [r"\bdata\s+(?:de\s+)?vencimento\b", r"\bvencimento\b"]
OTHER_DATE = ["vencimento"]
TOTAL_GROSS = [r"\bvalor\s+total\b", r"\btotal\s*(?:com\s+iva|da\s+fatura|do\s+documento)\b"]
TOTAL_DUE = [r"\b(?:total|valor)\s+a\s+pagar\b"]
NOT_TOTAL = [r"\bsem\b", r"\bpre[çc]o\b", r"\bpago\b"]
GROSS_MARK = [r"\bcom\s+iva\b"]
NET = [r"\b(?:total\s+)?(?:sem|s/)\s*iva\b", r"\bvalor\s+(?:l[íi]quido|sem\s+iva)\b", r"\bincid[êe]ncia\b"]
VAT_AMOUNT = [r"\b(?:valor\s+(?:do\s+)?|total\s+)?iva\b"]
DEPOSIT = [r"\b(?:j[áa]\s+)?pago\b"]
CURRENCY = [r"moeda"]

# A receipt's own number, a payment's ids, and its lines that are no total (the change, cash, card, tip).
RECEIPT_NUMBER = [r"\b(?:cupom(?:\s+fiscal)?|tal[ãa]o|tal[ãa]o\s+de\s+venda)\s*"
                  r"(?:n\.?\s?[°º]\.?|n[úu]m(?:ero|\.)?|no\b\.?|nr\b\.?)",
                  r"\bn[úu]mero\s+do\s+(?:cupom|tal[ãa]o)\b",
                  # a simplified invoice with its number on the same line ("Fatura simplificada FS 1/42")
                  r"\bfatura\s+simplificada\b\s*(?:n\.?\s?[°º]\.?|n[úu]m\b\.?)?(?=\s*:?\s*[A-Z]{0,4}\s?[\d-])",
                  # "Doc. nº 42", a consumer's electronic invoice ("NFC-e nº 42"), a SAT slip ("Extrato Nº 42")
                  r"\bdoc\.\s*n\.?\s?[°º]", r"\b(?:nfc-?e|extrato)\s*(?:n\.?\s?[°º]\.?|n[úu]m(?:ero|\.)?|no\b\.?)"]
# A till slip's title and its greeting over the shop's name: never the shop's name.
SLIP_TITLE = [r"fatura\s+simplificada", r"cupom\s+fiscal", r"tal[ãa]o\s+de\s+venda"]
GREETING = [r"bem[\s-]vind[oa]s?"]
TRANSACTION_NUMBER = [r"\b(?:transa[çc][ãa]o|terminal|caixa)\s*(?:n\.?\s?[°º]\.?|n[úu]m(?:ero|\.)?|id\b)"]
NOT_TOTAL += [r"\btroco\b", r"dinheiro", r"cart[ãa]o", r"gorjeta"]

MONTHS = {1: "janeiro", 2: "fevereiro fev", 3: "março marco", 4: "abril", 5: "maio", 6: "junho", 7: "julho",
          8: "agosto", 9: "setembro", 10: "outubro out", 11: "novembro", 12: "dezembro"}

DOCUMENT_REFERENCE = [r"refer[êe]ncia"]
# Who is who: the seller's and the buyer's block headings.
SELLER = ["emitente", r"prestador(?:\s+de\s+servi[çc]os)?"]
BUYER_HEADING = [r"tomador(?:\s+de\s+servi[çc]os)?", r"destinat[áa]rio"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
DAY_OF = ["de"]
YEAR_OF = ["de"]
CURRENCY_NAME = {"reais": "BRL"}
COUNTRY_NAME = {"portugal": "PT"}
VAT_ID_TAX = ["iva"]
RECEIPT_TITLE = [r"cupom\s+fiscal"]
RECEIPT_WORD = [r"cupom\s+fiscal"]
NAME_HEADING = [r"nome(?:\s+empresarial)?", r"raz[ãa]o\s+social"]
BANK_WORD = ["banco"]
NOT_A_PARTY = ["duplicata", "pagamento"]
PLACE_WORD = ["pra[çc]a", "largo"]
# A street's kind before its name ("Rua Jorge de Figueiredo Correa", "Av. Barbacena, 1200"): an address line.
STREET_TYPE = ["rua", "avenida", "av", "travessa", "rodovia", "estrada", "alameda", "pra[çc]a"]
STREET_BEFORE_NAME = ["rua", "avenida", "travessa", "rodovia", "alameda"]
CONNECTOR = ["e", "da", "do", "dos", "das"]
PHONE = ["telefone"]
