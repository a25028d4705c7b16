"""German: Rechnungsdatum, fällig am, Gesamtbetrag, zu zahlen, Nettobetrag, MwSt., Anzahlung."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 2

INVOICE_DATE = [r"rechnungs?[\s.-]*datum", r"\bbelegdatum", r"\bausstellungsdatum", r"\bausgestellt\s+am\b"]
DUE_DATE = [r"\bf[äa]llig(?:keit(?:sdatum)?|\s+am|\s+bis)\b", r"\bzahlbar\s+bis\b", r"\bzahlungsziel\b"]
OTHER_DATE = [
    "f[äa]llig", "liefer", "leistung", "bestell", "zeitraum", "zahlung", "zahlbar", "g[üu]ltig", "skonto", r"ende?\b",
    r"bis\b", r"vom\b", "geboren", "mandat", "vertrag", "ablauf", "ablesung", "z[äa]hler", "n[äa]chste",
]
TOTAL_GROSS = [
    r"\bbrutto(?:summe|betrag|gesamt|rechnungsbetrag)\b", r"\b(?:summe|betrag)\s+brutto\b",
    r"\bgesamt(?:betrag|summe)\b",
    r"\brechnungs(?:betrag|summe|endbetrag)\b", r"\bend(?:betrag|summe)\b", r"\bschlussbetrag\b",
    r"\bgesamt\s*(?:brutto|inkl)",
    r"\bsumme\s*(?:brutto|inkl)", r"\bbetrag\s*inkl",
]
TOTAL_DUE = [r"\bzu\s*zahlen(?:der\s*betrag)?\b", r"\bzahlbetrag\b", r"\bzahlungsbetrag\b", r"\bf[äa]lliger\s+betrag\b"]
TOTAL_PLAIN = [r"\bsumme\b", r"\bgesamt\b", r"\bbetrag\b"]
NOT_TOTAL = [
    "zwischen", "netto", r"\bohne\b", r"\bexkl", "zuschl", "abschl", "rabat", "skonto", "anzahlung", "bezahlt",
    "vorauszahlung", "voraus", "erhalten", "[üu]bertrag", "steuer", "mwst", r"\bust\b", "positions", "warenwert",
    "basis", "grundlage", r"\bposition\b", "menge", "gewicht", "stunden", "seite", r"waren\b", r"\bvor\b", r"preis\b",
    "einzel",
]
NET = [r"\bnetto(?:betrag|summe)?\b", r"\bsumme\s*netto\b", r"\bzwischensumme\b", r"\bohne\s*(?:ust|mwst)",
       r"\bwarenwert\b"]
VAT_AMOUNT = [r"\b(?:mwst|ust|umsatzsteuer|mehrwertsteuer)(?:[\s.-]*betrag)?\b", r"\bsteuerbetrag\b"]
DEPOSIT = [r"\b(?:erhaltene\s+)?anzahlung(?:en)?\b", r"\bvorauszahlung\b", r"\bbereits\s+(?:bezahlt|gezahlt)\b"]
# Its invoice titles ("<title> 2041" numbers the invoice), spliced into one pattern with every language's.
INVOICE_TITLE = ["rechnung", "gutschrift", "rechnungskorrektur", "honorarnote"]
CURRENCY = [r"rechnungsw[äa]hrung", r"w[äa]hrung"]
MONTHS = {1: "januar jän jänner", 2: "februar", 3: "märz maerz mrz", 4: "april", 5: "mai", 6: "juni", 7: "juli",
          8: "august", 9: "september", 10: "oktober okt", 11: "november", 12: "dezember dez"}

# The invoice number: what says "number" after a title, the titles and references that take one, and labels
# ("<number>" in a label stands for any language's number sign).
NUMBER_SIGN = [r"\bnr\b\.?", r"\bnummer\b"]
NUMBERED_TITLE = ["rechnung", "rechn", "rg", "re"]
REFERENCE = ["referenz"]
OF = [r"der\s+"]
INVOICE_OF = ["rechnung"]
TITLE_BEFORE_NUMBER = ["rechnung", "gutschrift", "rechnungskorrektur"]
DOCUMENT_REFERENCE = ["referenz"]
INVOICE_NUMBER = [
    r"\brechnungsreferen(?:z|tie|ce)\b",
    r"rechnungs?[\s.-]*(?:nummer|nr\b\.?|no\b\.?|n[°º]\.?)",
    r"\b(?:re|rg|rech|rechn)\.?[\s-]*nr\b\.?",
    r"\bbeleg[\s.-]*(?:nummer|nr\b\.?)",
    r"\bgutschrifts?[\s.-]*(?:nummer|nr\b\.?)",
    r"\bbeleg\s*<number>",
]
DATE_WORD = ["datum"]
LETTER_DATE = ["den"]

# Who is who: the seller's and the buyer's block headings, and what makes a number the buyer's.
SELLER = [r"verk[äa]ufer", "lieferant", "leistungserbringer", "rechnungssteller", "absender", "auftragnehmer",
          r"ausgestellt\s+von"]
BUYER = [r"k[äa]ufer", "kunde", r"rechnungsempf[äa]nger", r"leistungsempf[äa]nger", r"empf[äa]nger", "auftraggeber",
         r"warenempf[äa]nger", "rechnungsadresse", "lieferadresse", "lieferanschrift", r"z\.\s?hd\.?"]
BUYER_HEADING = [r"firma(?=\s*$)", "herrn"]
BUYER_MARK = ["ihre?", "kunden?", r"k[äa]ufer", r"empf[äa]nger"]
BUYER_MARK_INSIDE = ["kunden"]
# Its VAT id labels are tried before every other language's: on a head "VAT / USt-IdNr.: 136695976" the number,
# printed without its prefix, is German's, and the English "VAT" names only the tax.
VAT_ID_ORDER = 0
VAT_ID = [
    (r"\bu(?:st|mst)[\s.-]*id(?:ent)?[\s.-]*(?:nr\b\.?|nummer|no\b\.?)?", "DE"),
    (r"\bumsatzsteuer[\s.-]*id(?:entifikations)?[\s.-]*(?:nummer|nr\b\.?)?", "DE"),
    (r"\bust[\s.-]*nr\b\.?", "DE"),
    (r"\buid[\s.-]*(?:nr\b\.?|nummer)?", "AT"),
]

# Receipts (shop tills' slips): the receipt's own number, a payment's ids, a payment's lines (no total).
RECEIPT = ["bon", "kassenbon", "quittung"]
RECEIPT_SIGN = [r"nummer\b", r"nr\b\.?"]
RECEIPT_BEFORE_SIGN = [r"\bnr\b\.?"]
# "Bon: 4711", "Beleg: 4711": the word and a colon before the number.
RECEIPT_NUMBER = [r"\bbon(?:nummer|nr\b\.?|no\b\.?)", r"\b(?:bon|beleg)\s*:(?=\s*\d)"]
# A till slip's title and its greeting over the shop's name: never the shop's name.
SLIP_TITLE = ["kassenbon", "kassenbeleg", "quittung"]
GREETING = [r"(?:herzlich\s+)?willkommen"]
TRANSACTION = ["kasse", "karte", "transaktion"]
RECEIPT_PAYMENT = [r"r[üu]ckgeld", "wechselgeld", "gegeben", r"\bgeg\b", r"\bbar\b", "ec-?karte", "karten",
                   r"\bkarte\b", "trinkgeld"]
RECEIPT_SUM = ["summe"]
# "<word>-Nr." labels another number than the invoice's ("Kunden-Nr.", "Auftrags-Nr.").
OTHER_NUMBER = ["kunden", "kd", "auftrag", "bestell", "steuer", "konto", "ust", "mwst", "tel", "fax", "artikel", "art",
                "liefer", "lief", "pos", "kred", "debit", "mitglied", "versicherten", "vers", "kassen", "bank", "blz",
                "projekt", "vertrag", "personal", "referenz", "ref", "seiten", "lager", "sach", "akten", "reg", "hr"]

# The total: the VAT's names, what says "included", a bare "Brutto"; the words that make a label the gross amount.
VAT_WORD = ["mwst", "ust"]
INCLUDED = ["inkl"]
INCLUDED_ENDING = ["usive"]
GROSS_WORD = ["brutto"]
GROSS_MARK = [r"zu\s*zahlen"]

# Who the bank account belongs to; words that make a number a third party's.
PAYEE = ["kontoinhaber", "kontoname", r"empf[äa]nger\s+der\s+zahlung"]
THIRD_PARTY = [r"im\s+auftrag", r"in\s+vertretung", r"zahlungsdienst(?:leister)?", r"inkasso(?:stelle|b[üu]ro)?",
               "treuhand", r"abgewickelt\s+(?:durch|über)", "spediteur", r"frachtf[üu]hrer", "versicherer"]

# Words the field readers look for beside the labels: a heading's second word ("Rechnungsanschrift"), a name's
# label ("Firma:"), a period of days, a letter's own invoice ("Ihre Rechnung"), the word before a date ("vom").
HEADING_END = ["adresse", "anschrift", "angaben"]
NAME_LABEL = ["firma"]
PERIOD = ["tage?n?", "wochen", "monate?n?"]
YOUR_INVOICE = [r"ihre\s+rechnung"]
DATE_BEFORE = ["vom"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
REGISTER = ["hrb", "hra", "handelsregister", "registergericht", "amtsgericht"]
STREET_ENDING = ["straße", "strasse", r"str\."]
CURRENCY_NAME = {"schweizer franken": "CHF", "franken": "CHF"}
COUNTRY_NAME = {"deutschland": "DE", "österreich": "AT"}
VAT_ID_TAX = ["mwst", "ust"]
VAT_ID_WORD = ["nummer"]
RECEIPT_TITLE = ["kassenbon", "quittung"]
RECEIPT_WORD = ["kassenbon", "quittung"]
APPENDED_INVOICE = ["rechnung", "gutschrift", "rechnungskorrektur"]
APPENDED_OTHER = ["lieferschein", "auftragsbest[äa]tigung", "arbeitsauftrag", "arbeitsschein", "arbeitsbericht",
                  "regiebericht", "angebot", "kostenvoranschlag"]
NAMES_A_NUMBER = ["nummer"]
NOT_A_BUYER = ["firma", "herrn?", "frau"]
BANK_WORD = ["sparkasse", "volksbank", "raiffeisen", "kreditinstitut", "bankverbindung", r"name\s+der\s+bank"]
NAME_HEADING = ["firma"]
NOT_A_PARTY = ["kopie", "quittung", "kassenbon", "bon", r"vielen\s+dank", r"zum\s+mitnehmen", "willkommen",
               "zusammenfassung", "bitte", "beschreibung", "bezeichnung", "zahlung", "karte",
               "uhrzeit", "filiale", "kasse",  # a till slip's labels over its numbers ("Uhrzeit Filiale Kasse Bon")
               r"bar(?=\s*(?:$|[\d:€]))"]  # a cash line's "BAR 20,00", never a café's "Bar Centrale"
PUBLIC_BODY = ["stadt", "gemeinde", "landkreis", "kreis"]
POSTAL = [r"entgelt\s+bezahlt", r"deutsche\s+post", "premiumadress", "a-post", "b-post", "dialogpost", "infopost"]
PLACE_WORD = ["platz", "gasse", "allee", "weg", "straße", "strasse"]
CONNECTOR = ["und", "der", "den", "von", "für"]
FORM_WORD = ["firma", "datum"]
SIGNATURE = ["unterschrift"]
SIGNER_ROLE = ["kunde", "k[äa]ufer", "verk[äa]ufer", "fahrer", "empf[äa]nger"]
PHONE = ["fon", "telefon"]
ITEM_HEADER = ["menge", "beschreibung", "bezeichnung", "einzelpreis", "preis"]
CONTACT = ["seite"]
NUMBER_NAME = ["nummer"]
