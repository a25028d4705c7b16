"""Dutch: factuurdatum, vervaldatum, totaalbedrag, te betalen, subtotaal, btw, voorschot."""

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
