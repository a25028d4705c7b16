"""Romanian: factura nr., data emiterii, data scadenței, total de plată, total fără TVA, TVA, bon fiscal."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 15

INVOICE_NUMBER = [r"\bfactur[aă]\s*(?:nr\b\.?|num[aă]r(?:ul)?\b)",
                  r"\b(?:nr\b\.?|num[aă]r(?:ul)?)\s*factur(?:ii|a|ă)(?![^\W\d_])"]
INVOICE_TITLE = [r"factur[ăa]\s+fiscal[ăa]"]
INVOICE_DATE = [r"\bdata\s*(?:emiterii|emitere|factur(?:ii|[aă]rii))(?![^\W\d_])"]
DUE_DATE = [r"\bdata\s*scaden[tț](?:ei|[aă])(?![^\W\d_])", r"\btermen\s+de\s+plat[aă](?![^\W\d_])"]
OTHER_DATE = ["scaden", "livr", "perioad", "citir"]
TOTAL_GROSS = [r"\btotal\s+(?:general|cu\s+tva)\b", r"\bvaloare\s+total[aă](?![^\W\d_])"]
TOTAL_DUE = [r"\b(?:total|sum[aă])\s+de\s+plat[aă](?![^\W\d_])", r"\brest\s+de\s+plat[aă](?![^\W\d_])"]
NOT_TOTAL = [r"\bf[aă]r[aă](?![^\W\d_])", r"\bbaz[aă](?![^\W\d_])", r"\breducere\b"]
NET = [r"\b(?:total|valoare)\s+f[aă]r[aă]\s+tva\b", r"\bbaz[aă]\s+(?:de\s+)?impozitare\b"]
VAT_AMOUNT = [r"\bvaloare\s+tva\b"]
DEPOSIT = [r"\bavans\b", r"\bachitat\b"]
MONTHS = {1: "ianuarie ian", 2: "februarie", 3: "martie", 4: "aprilie", 5: "mai", 6: "iunie", 7: "iulie",
          8: "august", 9: "septembrie", 10: "octombrie", 11: "noiembrie", 12: "decembrie"}

# Who is who: the seller's and the buyer's block headings; its tax id's labels ("CUI", "Cod fiscal").
SELLER = ["furnizor", r"v[âa]nz[ăa]tor"]
BUYER_HEADING = [r"cump[ăa]r[ăa]tor", "beneficiar"]
VAT_ID = [(r"\bcod\s+(?:de\s+)?(?:identificare\s+)?fiscal[ăa]?\b|\bc\.?u\.?i\b\.?", "RO")]

# A receipt ("bon fiscal"): its own number ("Bon fiscal nr. 0231", "Nr. bon 0231"), a till's and a cashier's ids,
# its lines that are no total (cash handed over, the change), its title and its greeting.
RECEIPT_NUMBER = [r"\bbon(?:ul)?\s+fiscal\s*(?:nr\b\.?|num[aă]r(?:ul)?\b)",
                  r"\b(?:nr\b\.?|num[aă]r(?:ul)?)\s*bon(?:ului|ul)?(?:\s+fiscal)?\b"]
TRANSACTION = ["casa", "casier", r"tranzac[tț]i[ea]"]
RECEIPT_PAYMENT = ["numerar", r"\brest\b(?!\s+de\s+plat)"]
SLIP_TITLE = [r"bon\s+(?:ne)?fiscal"]
GREETING = [r"bine\s+a[tț]i\s+venit"]
