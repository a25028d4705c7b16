"""Party headings beyond ``agent.labels``' seven languages: who sells and who buys, as invoices of
other countries print it (Chinese 销售方/购买方, printed down the block's side so that one character
starts each of its lines, Czech and Slovak, Portuguese, the Nordic languages, Estonian, the
Spanish "Sr.(s):" before a customer's name, the American "Payable to" / "Remit to" naming the seller)."""

from __future__ import annotations

# Finnish, which has no language module yet (``agent.languages``): the seller's heading.
SELLER = r"\b(?:myyj[äa])\b"
# Legal forms of other countries that end a company's name (the seven languages' are in ``agent.labels``); a
# form of three dotted letters may lose its last dot to a comma or to OCR ("S.A.S,").
LEGAL_FORM = (r"(?:A/S|ApS|ASA|AS|AB|Oyj|Oy|OÜ|O[UÜ]|s\.\s?r\.\s?o\.|S\.\s?R\.\s?O\.|spol\.\s?s\s?r\.\s?o\.|a\.\s?s\.|"
              r"k\.\s?s\.|d\.\s?o\.\s?o\.|Kft\.?|Zrt\.?|Nyrt\.?|EOOD|OOD|S\.\s?R\.\s?L\.|S\.\s?A\.\s?S\.?|"
              r"S\.\s?A\.\s?de\s?C\.\s?V\.|Ltda\.?|LTDA\.?|Pty\.?\s?Ltd\.?|PTY\.?\s?LTD\.?|Sdn\.?\s?Bhd\.?|SDN\.?\s?BHD\.?|"
              r"Bhd\.?|BHD\.?|Pvt\.?\s?Ltd\.?|PVT\.?\s?LTD\.?|Private\s+Limited|Pte\.?\s?Ltd\.?|PTE\.?\s?LTD\.?|"
              r"Corporation|CORPORATION|Company|COMPANY|Co\.|CO\.|Incorporated|eG|e\.G\.|SE|S\.E\.|Lda\.?|ehf\.?|hf\.?|"
              r"K\.K\.|b\.\s?v\.|n\.\s?v\.|株式会社|有限公司|公司)")
GLUED_LEGAL_FORM = r"株式会社|有限公司|公司"
