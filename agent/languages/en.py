"""English: invoice date, due date, grand total, amount due, subtotal, VAT, deposit."""

INVOICE_DATE = [
    r"\binvoice\s*date\b", r"\bdate\s*of\s*(?:the\s+)?(?:invoice|issue)\b", r"\bissue\s*date\b",
    r"\bdate\s*issued\b", r"\bbilling\s*date\b", r"\binvoiced\s+on\b",
]
DUE_DATE = [
    r"\b(?:payment\s+)?due\s*(?:date|on|by)\b", r"\bdate\s+due\b", r"\bpay(?:able)?\s+by\b", r"\bpayment\s+date\b",
]
OTHER_DATE = [
    "due", "deliver", "order", "period", "payment", "valid", "start", "until", r"from\b", "service", "birth",
    "contract", "expir", "autori[sz]", "reading", "meter", "registration", "next",
]
TOTAL_GROSS = [
    r"\bgrand\s*total\b", r"\binvoice\s*total\b", r"\btotal\s*(?:amount\s*)?(?:\(?\s*)?incl(?:\.|uding|usive)?\b",
    r"\btotal\s*gross\b", r"\bgross\s*(?:total|amount)\b", r"\btotal\s*(?:invoice\s*)?amount\b",
]
TOTAL_DUE = [
    r"\b(?:total\s*)?amount\s*(?:due|payable)\b", r"\bbalance\s*due\b", r"\btotal\s*(?:due|payable)\b",
    r"\bplease\s+pay\b", r"\bto\s+pay\b", r"\bdue\s*(?:payable|amount)\b", r"\bpayable\s*amount\b",
    r"\binvoice\s*amount\b",
]
TOTAL_PLAIN = [r"\btotal\b"]
NOT_TOTAL = [
    r"\bsub", r"\bnet(?:to)?\b", r"\bnett\b", r"\bexcl", "discount", "deposit", "prepaid", r"\bpaid\b", "carried",
    r"\bvat\b", r"\btax", r"\bline\b", r"items?\b", "quantit", "qty", "weight", "hours", r"pages?\b", "goods",
    r"\bbefore\b", r"\bprice\b", r"\bunit",
]
NET = [r"\bsub\s*-?\s*total\b", r"\bnet\s*(?:total|amount)\b", r"\btotal\s*(?:net|excl)"]
VAT_AMOUNT = [r"\b(?:total\s*)?(?:vat|tax)(?:\s*amount)?\b"]
DEPOSIT = [r"\b(?:deposit|prepaid|prepayment|advance\s+payment|amount\s+paid|paid)\b", r"\btotal\s+payments?\b"]
# Its invoice titles ("<title> 2041" numbers the invoice), spliced into one pattern with every language's.
INVOICE_TITLE = [r"tax\s+invoice", "invoice", r"credit\s+note"]
CURRENCY = ["currency"]
MONTHS = {1: "january jan", 2: "february feb", 3: "march mar", 4: "april apr", 5: "may", 6: "june jun", 7: "july jul",
          8: "august aug", 9: "september sep sept", 10: "october oct", 11: "november nov", 12: "december dec"}
