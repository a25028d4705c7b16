"""English: invoice date, due date, grand total, amount due, subtotal, VAT, deposit."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 1

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
DEPOSIT = [r"\b(?:deposit|prepaid|prepayment|advance\s+payment|amount\s+paid|paid|(?:amount\s+)?received)\b",
           r"\btotal\s+payments?\b"]
# Its invoice titles ("<title> 2041" numbers the invoice), spliced into one pattern with every language's.
INVOICE_TITLE = [r"tax\s+invoice", "invoice", r"credit\s+note"]
CURRENCY = ["currency"]
MONTHS = {1: "january jan", 2: "february feb", 3: "march mar", 4: "april apr", 5: "may", 6: "june jun", 7: "july jul",
          8: "august aug", 9: "september sep sept", 10: "october oct", 11: "november nov", 12: "december dec"}

# The invoice number: what says "number" after a title, the titles and references that take one, and labels
# ("<number>" in a label stands for any language's number sign).
NUMBER_SIGN = [r"\bno\b\.?", r"\bnumber\b"]
NUMBERED_TITLE = ["invoice", "inv"]
REFERENCE = ["reference"]
INVOICE_OF = ["invoice"]
TITLE_BEFORE_NUMBER = ["invoice"]
DOCUMENT_REFERENCE = ["reference", r"ref\."]
INVOICE_NUMBER = [
    r"\binvoicereferen(?:z|tie|ce)\b",
    r"\binvoice\s*(?:number|num\.?|no\b\.?|nr\b\.?|n[°º]\.?|#|id\b|ref(?:erence)?\b\.?)",
    r"\binv\.?\s*(?:no\b\.?|#|nr\b\.?)",
    r"\b(?:bill|document|doc)\s*(?:number|no\b\.?|nr\b\.?|#)",
    r"\bdocument\s*<number>",
]
DATE_WORD = ["date", "dated"]

# Who is who: the seller's and the buyer's block headings, and what makes a number the buyer's.
SELLER = ["seller", "supplier", "vendor", r"sold\s+by", r"issued\s+by", r"bill\s+from", r"invoice\s+from", "from",
          r"service\s+provider", "provider",
          r"(?:make\s+(?:checks?|cheques?)\s+)?payable\s+to", r"remit(?:tance)?\s+to", r"pay\s+to"]
BUYER = ["to", r"(?:billing|delivery|shipping|invoice|invoicing|customer)\s+address",
         r"bill(?:ed)?\s+to", r"invoice(?:d)?\s+to", r"sold\s+to", r"ship(?:ped)?\s+to", r"deliver(?:y|ed)?\s+to",
         "customer", "client", "buyer", "recipient", "attn", "attention", "c/o"]
BUYER_HEADING = [r"messrs\.?"]
BUYER_MARK = ["client", "customer", "buyer", "your", r"bill\s+to"]
# VAT id labels, each with the country whose number it names when the number has no prefix (None: any).
VAT_ID = [(r"\bvat\s*(?:id\b|no\b\.?|nr\b\.?|number|reg(?:istration)?\b\.?(?:\s*(?:no\b\.?|number))?|#|code\b)?", None)]

# Receipts (shop tills' slips): the receipt's own number, a payment's ids, a payment's lines (no total).
RECEIPT = ["receipt", "ticket", "rcpt", r"cash\s+memo"]
RECEIPT_SIGN = ["number", r"no\b\.?", r"num\b\.?"]
# "Receipt: 4471", "Ticket: 4471": the word and a colon before the number.
RECEIPT_NUMBER = [r"\b(?:receipt|ticket)(?:nummer|nr\b\.?|no\b\.?)", r"\b(?:receipt|ticket)\s*:(?=\s*#?\d)"]
# A till slip's title and its greeting over the shop's name: never the shop's name.
SLIP_TITLE = [r"cash\s+(?:memo|bill)", r"sales\s+receipt"]
GREETING = ["welcome"]
TRANSACTION = ["transaction", "trans", "txn", "terminal", "term", "till", "register", "pos", "card", "auth"]
RECEIPT_PAYMENT = [r"\bchange\b", r"\bcash\b", "tendered", r"\bcard\b", r"\bvisa\b", "mastercard", "maestro",
                   r"\btips?\b", "gratuity"]

# The total: its word before a bracketed "(incl. VAT)", the VAT's name, what says "included", a bare "Gross".
TOTAL_WORD = ["total"]
VAT_WORD = ["vat"]
INCLUDED = ["incl"]
INCLUDED_ENDING = ["uding", "usive"]
VAT_INCLUDED = ["included"]
GROSS_WORD = ["gross"]

# The bank account, and who it belongs to (the payee); words that make a number a third party's.
ACCOUNT = [r"\bbank\s+account(?:\s*(?:number|no\b\.?|nr\b\.?|#))?"]
PAYEE = [r"account\s+(?:holder|name)", "beneficiary", "payee"]
THIRD_PARTY = [r"on\s+behalf\s+of", r"acting\s+for", "agent", r"payment\s+(?:processor|provider|service)",
               r"processed\s+by", r"collected\s+by", r"collection\s+agency", "factoring", "carrier", "insurer"]

# Words the field readers look for beside the labels: a heading's second word ("Billing address"), a name's label,
# a period of days (a term of payment, not an amount), a letter's own invoice ("Your invoice"), the word before a
# document's date ("dated"), and the second line of a label split over two ("Invoice" / "number").
HEADING_END = ["address", "details", "information", "info", "data"]
NAME_LABEL = ["name"]
PARTY_NAME = ["name"]
PERIOD = ["days?", "weeks?", "months?"]
YOUR_INVOICE = [r"your\s+invoice"]
DATE_BEFORE = ["of", "dated"]
SPLIT_NUMBER = ["number"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
DAY_ORDINAL = ["st", "nd", "rd", "th"]
MONTH_DAY_ORDINAL = ["st", "nd", "rd", "th"]
DAY_OF = ["of"]
CURRENCY_NAME = {"euro": "EUR", "us dollar": "USD", "u.s. dollar": "USD", "dollar": "$", "pound sterling": "GBP",
                 "pound": "GBP", "sterling": "GBP", "canadian dollar": "CAD", "australian dollar": "AUD",
                 "new zealand dollar": "NZD", "singapore dollar": "SGD", "hong kong dollar": "HKD", "forint": "HUF",
                 "yuan": "CNY", "renminbi": "CNY", "yen": "JPY", "rupee": "INR"}
CURRENCY_COUNTRY = {"canadian": "CAD", "australian": "AUD", "american": "USD", "u.s.": "USD", "us": "USD",
                    "argentine": "ARS", "mexican": "MXN", "new zealand": "NZD", "singapore": "SGD", "norwegian": "NOK",
                    "swedish": "SEK", "danish": "DKK", "chinese": "CNY", "japanese": "JPY"}
CURRENCY_NOUN = ["currency", "dollars?", "pesos?", "kron(?:er|or|a|e)", "yuan", "yen"]
COUNTRY_NAME = {"united kingdom": "GB", "great britain": "GB", "england": "GB", "scotland": "GB", "wales": "GB",
                "germany": "DE", "austria": "AT", "spain": "ES", "italy": "IT", "poland": "PL", "netherlands": "NL",
                "belgium": "BE", "ireland": "IE"}
VAT_ID_TAX = ["vat", "tax"]
VAT_ID_WORD = ["number", "reg", "registration", "identification", r"code\b"]
RECEIPT_TITLE = [r"(?:refund\s+|payment\s+)?receipt", "refund", "ticket"]
RECEIPT_WORD = ["receipt", "ticket"]
APPENDED_INVOICE = [r"tax\s+invoice", "invoice", r"credit\s+note"]
APPENDED_OTHER = [r"work\s+order", r"job\s+sheet", r"service\s+report", r"delivery\s+note", r"packing\s+(?:slip|list)",
                  r"order\s+confirmation", "quotation", "quote", "estimate"]
NAMES_A_NUMBER = ["number", "num", "ref", "code", "p/o", "po", "order", "account", "acct"]
NOT_A_BUYER = [r"mr\.?", r"mrs\.?", r"ms\.?", r"keep\s+this", "original", "copy"]
BANK_WORD = ["bank", r"bank\s+name"]
NAME_HEADING = [r"company(?:\s+name)?", r"business\s+name", "name"]
NOT_A_PARTY = ["original", "copy", "duplicate", r"(?:monthly\s+|account\s+)?statement", "receipt", "ticket", "bill",
               "note", r"thank\s+you", "thanks", r"take\s*away", r"eat\s+in", r"dine\s+in", r"to\s+go", "welcome",
               "summary", "place", "display", "keep", "retain", "detach", "return", "please", "description", "payment",
               "card", "cash", "change", "tip", r"sub[\s-]?total"]
PUBLIC_BODY = ["city", "county", "state", "town", "borough", "district", "municipality", "council"]
PUBLIC_BODY_OF = ["of"]
POSTAL = [r"postage\s+paid", "priority"]
PLACE_WORD = ["place", "square", r"sq\.", "road", r"rd\.", "street", r"st\.", "avenue", r"ave\.", "lane"]
CONNECTOR = ["and", "of", "the"]
FORM_WORD = ["name", "company", "title", "date"]
SIGNATURE = ["signature"]
SIGNER_ROLE = ["buyer", "customer", "client", "seller", "vendor", "supplier", "dealer", "driver", "cardholder",
               r"card\s+holder", "recipient", "receiver", "authori[sz]ed", "your", "print", "employee", "technician",
               "witness", "manager", "agent"]
PHONE = ["tel", "phone", "ph"]
STREET_KIND = ["ave", "st", "rd", "blvd", "dr", "ln", "hwy", "pkwy", "way", "road", "street", "avenue", "drive", "lane"]
ITEM_HEADER = ["description", "descr", "qty", "quantity", r"unit\s+price", "price"]
CONTACT = ["tel", "fax", "phone", "page"]
NUMBER_NAME = ["number"]
