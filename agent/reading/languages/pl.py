"""Polish: data wystawienia, termin płatności, razem brutto, do zapłaty, razem netto, kwota VAT, zaliczka."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 7

INVOICE_DATE = [r"\bdata\s*(?:wystawienia|faktury)\b"]
DUE_DATE = [r"\btermin\s+(?:p[łl]atno[śs]ci|zap[łl]aty)\b"]
OTHER_DATE = ["termin", "dostaw", "zam[óo]wieni", "okres", "płatno", "sprzeda", r"do\b", "odczyt", "następn"]
TOTAL_GROSS = [r"\b(?:razem|warto[śs][ćc]|kwota|suma)\s*brutto\b", r"\bog[óo]łem\s*brutto\b"]
TOTAL_DUE = [r"\bdo\s*zap[łl]aty\b", r"\bnale[żz]no[śs](?:[ćc]|ci)(?:\s+og[óo][łl]em)?\b"]
TOTAL_PLAIN = [r"\brazem\b", r"\bsuma\b"]
NOT_TOTAL = [r"\bbez\b", r"\bpodatek", "towar", r"\bprzed\b", r"\bcena\b"]
NET = [r"\b(?:razem|warto[śs][ćc]|suma)\s*netto\b"]
VAT_AMOUNT = [r"\b(?:kwota|podatek|razem)\s*vat\b"]
DEPOSIT = [r"\bzaliczka\b", r"\bzap[łl]acono\b"]
# Its invoice titles ("<title> 2041" numbers the invoice), spliced into one pattern with every language's.
INVOICE_TITLE = [r"faktura(?:\s+vat)?", r"faktura\s+korygująca"]
CURRENCY = ["waluta", r"kod\s+waluty"]
MONTHS = {1: "styczeń stycznia sty", 2: "luty lutego lut", 3: "marzec marca", 4: "kwiecień kwietnia kwi",
          5: "maj maja", 6: "czerwiec czerwca cze", 7: "lipiec lipca lip", 8: "sierpień sierpnia sie",
          9: "wrzesień września wrz", 10: "październik października paź", 11: "listopad listopada lis",
          12: "grudzień grudnia gru"}

# The invoice number: the titles and references that take a number sign, and labels.
NUMBERED_TITLE = ["faktura", "fv"]
INVOICE_OF = ["faktury"]
TITLE_BEFORE_NUMBER = ["faktura"]
# "Numer" after a title, a few words on ("Faktura VAT numer ...").
NUMBER_WORD = [r"\bnumer\b"]
INVOICE_NUMBER = [
    r"\b(?:nr\b\.?|numer)\s*(?:faktury|dokumentu)\b",
    r"\bfaktur[ay]\s*(?:vat\s*)?(?:nr\b\.?|numer|no\b\.?)",
]
LETTER_DATE = ["dnia"]

# Who is who: the seller's and the buyer's block headings, and what makes a number the buyer's.
SELLER = ["sprzedawca", "wystawca", "dostawca"]
BUYER = ["nabywca", "odbiorca", r"kupuj[ąa]cy", r"p[łl]atnik"]
BUYER_MARK = [r"nabywc[ya]", r"odbiorc[ya]"]
VAT_ID = [(r"\bnip\b", "PL")]

# Receipts (shop tills' slips): the receipt's own number, a payment's ids, a payment's lines (no total).
RECEIPT = [r"paragon(?:u)?", r"paragon\s+fiskalny"]
RECEIPT_SIGN = [r"numer\b"]
RECEIPT_BEFORE_SIGN = [r"\bnumer\b"]
RECEIPT_AFTER_SIGN = ["paragonu"]
TRANSACTION = ["kasa", "transakcji"]
RECEIPT_PAYMENT = ["reszta", r"got[óo]wk", r"\bkarta\b", "napiwek", r"\bptu\b", "opodatkowan"]
RECEIPT_SUM = ["suma", "razem"]
# "Nr par. 0815"; a receipt's title ("PARAGON FISKALNY", "NIEFISKALNY") and greeting: never the shop's name.
RECEIPT_NUMBER = [r"\bnr\b\.?\s*par\.(?=\s*:?\s*\d)"]
SLIP_TITLE = [r"paragon\s+fiskalny", r"paragon(?=\s*$)", "niefiskalny"]
GREETING = ["witamy", "zapraszamy"]

# The words that make a label the gross amount.
GROSS_MARK = [r"\bz\s+vat", r"zap[łl]aty"]

# Who the bank account belongs to; words that make a number a third party's.
PAYEE = [r"w[łl]a[śs]ciciel\s+rachunku"]
THIRD_PARTY = [r"w\s+imieniu"]

# Words the field readers look for beside the labels: a heading's second word ("Dane nabywcy"), a name's label
# ("Nazwa:"), a period of days ("14 dni"), a letter's own invoice, the word before a date ("z dnia").
HEADING_END = ["adres", "dane"]
NAME_LABEL = ["nazwa"]
PERIOD = ["dni", "tygodni", r"miesi[ęe]c[ya]?"]
YOUR_INVOICE = [r"pa[ńn]stwa\s+faktura"]
DATE_BEFORE = [r"z\s+dnia", "z"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
REGISTER = ["krs", "regon"]
STREET_TYPE = ["ul"]
STREET_BEFORE_NAME = [r"ul\."]
CURRENCY_NAME = {"złoty": "PLN", "zloty": "PLN", "złotych": "PLN", "zlotych": "PLN"}
COUNTRY_NAME = {"polska": "PL"}
RECEIPT_TITLE = [r"paragon(?:\s+fiskalny)?"]
RECEIPT_WORD = [r"paragon\s+fiskalny"]
APPENDED_INVOICE = [r"faktura(?:\s+vat)?", r"faktura\s+korygująca"]
APPENDED_OTHER = ["oferta", "protok[óo][łl]"]
NAMES_A_NUMBER = ["numer"]
NOT_A_BUYER = ["pan", "pani"]
NAME_HEADING = ["nazwa"]
NOT_A_PARTY = [r"na\s+miejscu", r"na\s+wynos", "opis", "p[łl]atno[śs][ćc]"]
PUBLIC_BODY = ["urz[ąa]d", "gmina", "miasto"]
CONNECTOR = ["i"]
FORM_WORD = ["nazwa"]
SIGNER_ROLE = ["klient", "kupuj[ąa]cy", "sprzedawca"]
ITEM_HEADER = ["opis", r"nazwa\s+towaru", "ilo[śs][ćc]", "cena"]
NUMBER_NAME = ["numer"]
