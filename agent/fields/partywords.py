"""Party headings beyond ``agent.labels``' seven languages: who sells and who buys, as invoices of
other countries print it (Chinese 销售方/购买方, printed down the block's side so that one character
starts each of its lines, Czech and Slovak, Portuguese, the Nordic languages, Estonian, the
Spanish "Sr.(s):" before a customer's name, the American "Payable to" / "Remit to" naming the seller)."""

from __future__ import annotations

SELLER = (r"\b(?:(?:make\s+(?:checks?|cheques?)\s+)?payable\s+to|remit(?:tance)?\s+to|pay\s+to|"
          r"销\s?售\s?方|销(?!\w)|dodavatel|dod[áa]vate[lľ]|prod[áa]vaj[íi]c[íi]|prestador(?:\s+de\s+servi[çc]os)?|"
          r"selger|s[äa]ljare|s[æa]lger|leverand[øo]r|leverant[öo]r|avs[äa]ndare|myyj[äa])\b")
BUYER = (r"\b(?:购\s?买\s?方|购(?!\w)|"
         r"odb[ěe]ratel|odberate[lľ]|kupuj[íi]c[íi]|p[řr][íi]jemce|tomador(?:\s+de\s+servi[çc]os)?|"
         r"destinat[áa]rio|kj[øo]per|k[öo]pare|k[øo]ber|mottaker|mottagare|modtager|fakturaadresse|"
         r"leveringsadresse|maksja|ostja|se[ñn]or(?:es)?|sr(?:es)?\.?\s?\(s\)|sr(?:es)?\.(?=\s*:)|"
         r"messrs\.?|firma(?=\s*$)|herrn)(?![^\W\d_])")
# Legal forms of other countries that end a company's name (the seven languages' are in ``agent.labels``); a
# form of three dotted letters may lose its last dot to a comma or to OCR ("S.A.S,").
LEGAL_FORM = (r"(?:A/S|ApS|ASA|AS|AB|Oyj|Oy|OÜ|O[UÜ]|s\.\s?r\.\s?o\.|S\.\s?R\.\s?O\.|spol\.\s?s\s?r\.\s?o\.|a\.\s?s\.|"
              r"k\.\s?s\.|d\.\s?o\.\s?o\.|Kft\.?|Zrt\.?|Nyrt\.?|EOOD|OOD|S\.\s?R\.\s?L\.|S\.\s?A\.\s?S\.?|"
              r"S\.\s?A\.\s?de\s?C\.\s?V\.|Ltda\.?|LTDA\.?|Pty\.?\s?Ltd\.?|PTY\.?\s?LTD\.?|Sdn\.?\s?Bhd\.?|SDN\.?\s?BHD\.?|"
              r"Bhd\.?|BHD\.?|Pvt\.?\s?Ltd\.?|PVT\.?\s?LTD\.?|Private\s+Limited|Pte\.?\s?Ltd\.?|PTE\.?\s?LTD\.?|"
              r"Corporation|CORPORATION|Company|COMPANY|Co\.|CO\.|Incorporated|eG|e\.G\.|SE|S\.E\.|Lda\.?|ehf\.?|hf\.?|"
              r"K\.K\.|b\.\s?v\.|n\.\s?v\.|株式会社|有限公司|公司)")
GLUED_LEGAL_FORM = r"株式会社|有限公司|公司"
# Words saying a number on the page is a third party's: the bank, a payment or collection service, an
# agent acting for the seller, a carrier, an insurer.
THIRD_PARTY = (r"(?<![^\W\d_])(?:on\s+behalf\s+of|acting\s+for|agent|im\s+auftrag|in\s+vertretung|"
               r"au\s+nom\s+(?:et\s+pour\s+le\s+compte\s+)?de|pour\s+le\s+compte\s+de|per\s+conto\s+di|namens|en\s+nombre\s+de|por\s+cuenta\s+de|w\s+imieniu|"
               r"payment\s+(?:processor|provider|service)|processed\s+by|collected\s+by|collection\s+agency|"
               r"zahlungsdienst(?:leister)?|inkasso(?:stelle|b[üu]ro)?|factoring|treuhand|abgewickelt\s+(?:durch|über)|"
               r"encaissement|recouvrement|carrier|spediteur|transporteur|frachtf[üu]hrer|insurer|versicherer|assureur)"
               r"(?![^\W\d_])")
