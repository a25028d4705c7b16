"""What ends a company's name: the legal forms of countries beyond ``labels``' (``LEGAL_FORM``), which are a
country's, written as registered, not a language's words. The party headings are their language modules'
(``SELLER``, ``BUYER``)."""

from __future__ import annotations

# Legal forms of other countries that end a company's name (the seven languages' are in ``agent.reading.labels``); a
# form of three dotted letters may lose its last dot to a comma or to OCR ("S.A.S,").
LEGAL_FORM = (r"(?:A/S|ApS|ASA|AS|AB|Oyj|Oy|OÜ|O[UÜ]|s\.\s?r\.\s?o\.|S\.\s?R\.\s?O\.|spol\.\s?s\s?r\.\s?o\.|a\.\s?s\.|"
              r"k\.\s?s\.|d\.\s?o\.\s?o\.|Kft\.?|Zrt\.?|Nyrt\.?|EOOD|OOD|S\.\s?R\.\s?L\.|S\.\s?A\.\s?S\.?|"
              r"S\.\s?A\.\s?de\s?C\.\s?V\.|Ltda\.?|LTDA\.?|Pty\.?\s?Ltd\.?|PTY\.?\s?LTD\.?|Sdn\.?\s?Bhd\.?|SDN\.?\s?BHD\.?|"
              r"Bhd\.?|BHD\.?|Pvt\.?\s?Ltd\.?|PVT\.?\s?LTD\.?|Private\s+Limited|Pte\.?\s?Ltd\.?|PTE\.?\s?LTD\.?|"
              r"Corporation|CORPORATION|Company|COMPANY|Co\.|CO\.|Incorporated|eG|e\.G\.|SE|S\.E\.|Lda\.?|ehf\.?|hf\.?|"
              r"K\.K\.|b\.\s?v\.|n\.\s?v\.|株式会社|有限公司|公司)")
GLUED_LEGAL_FORM = r"株式会社|有限公司|公司"
