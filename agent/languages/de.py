"""German: Rechnungsdatum, fällig am, Gesamtbetrag, zu zahlen, Nettobetrag, MwSt., Anzahlung."""

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
