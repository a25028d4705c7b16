"""Polish: data wystawienia, termin płatności, razem brutto, do zapłaty, razem netto, kwota VAT, zaliczka."""

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
