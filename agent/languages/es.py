"""Spanish: fecha de factura, vencimiento, importe total, total a pagar, base imponible, IVA, anticipo."""

INVOICE_DATE = [r"\bfecha\s*(?:de\s+)?(?:la\s+)?(?:factura|emisi[óo]n|expedici[óo]n)\b"]
DUE_DATE = [r"\b(?:fecha\s+(?:de\s+)?)?vencimiento(?:\s+del?\s+pago)?\b"]
OTHER_DATE = ["vencimiento", "entrega", "pedido", "periodo", "pago", r"al\b", "pr[óo]xim"]
TOTAL_GROSS = [r"\bimporte\s*total\b", r"\btotal\s*(?:de\s+la\s+)?factura\b", r"\btotal\s*(?:con\s+)?iva\s*incl"]
TOTAL_DUE = [r"\b(?:total|importe)\s*a\s*pagar\b"]
TOTAL_PLAIN = [r"\bimporte\b"]
NOT_TOTAL = [r"\bsin\b", "descuento", r"\biva\b", "imponible", "mercanc", r"\bantes\b", r"\bprecio\b"]
NET = [r"\bbase\s*imponible\b"]
VAT_AMOUNT = [r"\b(?:total\s*|importe\s*|cuota\s*)?iva\b"]
DEPOSIT = [r"\banticipo\b"]
# Its invoice titles ("<title> 2041" numbers the invoice), spliced into one pattern with every language's.
INVOICE_TITLE = ["factura"]
CURRENCY = ["moneda", "divisa"]
MONTHS = {1: "enero ene", 2: "febrero", 3: "marzo", 4: "abril", 5: "mayo", 6: "junio", 7: "julio", 8: "agosto ago",
          9: "septiembre setiembre", 10: "octubre", 11: "noviembre", 12: "diciembre dic"}
