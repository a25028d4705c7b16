"""Dutch: factuurdatum, vervaldatum, totaalbedrag, te betalen, subtotaal, btw, voorschot."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 4

INVOICE_DATE = [r"\bfactuur[\s-]*datum\b", r"\bdatum\s*(?:van\s+(?:de\s+)?)?factuur\b"]
DUE_DATE = [r"\bverval(?:datum|dag)\b", r"\b(?:uiterste\s+)?betaaldatum\b", r"\bte\s+betalen\s+v[óo]{1,2}r\b"]
OTHER_DATE = ["verval", "levering", "bestel", "betaling", "volgende"]
TOTAL_GROSS = [
    r"\btotaal\s*(?:bedrag\s*)?(?:incl|inclusief)\b", r"\btotaalbedrag\b", r"\bfactuurbedrag\b",
    r"\btotaal\s*factuur\b",
]
TOTAL_DUE = [r"\b(?:totaal\s*)?te\s*betalen\b", r"\bverschuldigd\s+bedrag\b", r"\b(?:totaal\s*)?te\s*voldoen\b"]
TOTAL_PLAIN = [r"\btotaal\b"]
# "subtotaal", and the Italian "subtotale" with it
NOT_TOTAL = [r"\bzonder\b", "korting", r"\bbtw\b", r"\bvoor\b", "goederen", r"\bprijs\b"]
NET = [r"\bsubtota(?:a|le)l?\b", r"\btotaal\s*excl"]
VAT_AMOUNT = [r"\b(?:totaal\s*)?btw(?:[\s-]*bedrag)?\b"]
DEPOSIT = [r"\bvoorschot\b", r"\baanbetaling\b", r"\breeds\s+betaald\b"]
# Its invoice titles ("<title> 2041" numbers the invoice), spliced into one pattern with every language's.
INVOICE_TITLE = ["factuur", "creditnota"]
CURRENCY = ["valuta", "munteenheid"]
MONTHS = {1: "januari", 2: "februari", 3: "maart", 4: "april", 5: "mei", 6: "juni", 7: "juli", 8: "augustus",
          9: "september", 10: "oktober", 11: "november", 12: "december"}

# The invoice number: the titles and references that take a number sign, and labels.
NUMBERED_TITLE = ["factuur", "fact"]
REFERENCE = ["referentie"]
INVOICE_OF = ["factuur"]
TITLE_BEFORE_NUMBER = ["factuur", "creditnota"]
DOCUMENT_REFERENCE = ["referentie"]
INVOICE_NUMBER = [r"\bfactuurreferen(?:z|tie|ce)\b", r"fa[ck]tuur[\s.-]*(?:nummer|nr\b\.?|no\b\.?)"]

# Who is who: the seller's and the buyer's block headings, and what makes a number the buyer's.
SELLER = ["leverancier", "verkoper", "afzender"]
BUYER = ["klant", "afnemer", "koper", "factuuradres", "afleveradres", r"t\.a\.v\.?"]
BUYER_MARK = ["klant", "uw"]
VAT_ID = [(r"\bbtw[\s.-]*(?:nummer|nr\b\.?|id\b|identificatienummer)?", "NL")]

# Receipts (shop tills' slips): the receipt's own number, a payment's ids, a payment's lines (no total).
RECEIPT = ["kassabon"]
TRANSACTION = ["kassa", "transactie"]
RECEIPT_PAYMENT = ["wisselgeld", r"\bcontant\b", r"\bpin\b", "fooi"]

# The total: its word before a bracketed "(incl. btw)", the VAT's name, what says "included".
TOTAL_WORD = ["totaal"]
VAT_WORD = ["btw"]
INCLUDED_ENDING = ["usief"]
VAT_INCLUDED = ["inclusief"]
GROSS_MARK = [r"te\s*betalen"]

# Who the bank account belongs to; words that make a number a third party's.
PAYEE = ["rekeninghouder", r"ten\s+name\s+van", "begunstigde"]
THIRD_PARTY = ["namens"]

# Words the field readers look for beside the labels: a heading's second word, a name's label, a period of days,
# a letter's own invoice ("Uw factuur"), the word before a date ("van").
HEADING_END = ["adres", "gegevens"]
NAME_LABEL = ["naam"]
PERIOD = ["dagen", "weken", "maanden"]
YOUR_INVOICE = [r"uw\s+factuur"]
DATE_BEFORE = ["van"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
REGISTER = ["kvk"]
STREET_ENDING = ["straat", "weg"]
COUNTRY_NAME = {"nederland": "NL", "belgië": "BE"}
VAT_ID_TAX = ["btw"]
VAT_ID_WORD = ["nummer"]
RECEIPT_TITLE = ["kassabon"]
RECEIPT_WORD = ["kassabon"]
APPENDED_INVOICE = ["factuur", "creditnota"]
APPENDED_OTHER = ["pakbon", "werkbon", "offerte", "orderbevestiging"]
NOT_A_BUYER = [r"dhr\.?", r"mevr\.?"]
NAME_HEADING = ["naam"]
NOT_A_PARTY = [r"dank\s+u", r"hier\s+opeten", "afhalen", "omschrijving", "betaling"]
PUBLIC_BODY = ["gemeente", "provincie"]
PUBLIC_BODY_OF = ["van", "der"]
PLACE_WORD = ["kade", "plein"]
CONNECTOR = ["en", "van"]
FORM_WORD = ["naam", "datum"]
SIGNER_ROLE = ["klant", "koper", "verkoper"]
ITEM_HEADER = ["omschrijving", "aantal", "prijs"]
