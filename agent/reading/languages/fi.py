"""Finnish: lasku, laskun numero, laskun päivämäärä, eräpäivä, veroton summa, alv, maksettava, kuitti."""

# Where its labels stand among every language's (``agent.languages``): an earlier one's wins a tie.
ORDER = 16

INVOICE_NUMBER = [r"\blasku(?:n)?[\s.-]*(?:nro\b\.?|numero\b|nr\b\.?)", r"\blaskunumero\b",
                  r"\bhyvityslasku(?:n)?[\s.-]*(?:nro\b\.?|numero\b)"]
RECEIPT_NUMBER = [r"\bkuit(?:in|ti)[\s.-]*(?:nro\b\.?|numero\b)", r"\bkuittinro\b\.?"]
INVOICE_DATE = [r"\blasku(?:n|tus)?[\s-]*p[äa]iv[äa](?:m[äa][äa]r[äa])?\b", r"\bp[äa]iv[äa]ys\b"]
DUE_DATE = [r"\ber[äa]p[äa]iv[äa]\b", r"\ber[äa][äa]ntymisp[äa]iv[äa]\b"]
OTHER_DATE = ["er[äa]", "toimitus", "tilaus", "kausi", "jakso", "l[äa]hetys"]
INVOICE_TITLE = ["hyvityslasku"]
TOTAL_GROSS = [r"\bloppusumma\b", r"\blaskun\s+summa\b", r"\bkokonaissumma\b",
               r"\byhteens[äa]\s*(?:\(?\s*)?sis\b\.?\s*alv"]
TOTAL_DUE = [r"\bmaksettava(?:a)?(?:\s+yhteens[äa])?\b"]
TOTAL_PLAIN = [r"\byhteens[äa]\b", r"\bsumma\b"]
NOT_TOTAL = [r"\balv\b", r"\bveroton\b", r"\bilman\b", r"\bmaksettu\b", r"\bv[äa]lisumma\b"]
GROSS_MARK = [r"\bsis\b\.?\s*alv", r"\bverollinen\b", r"\bmaksettava"]
NET = [r"\bveroton\s+(?:summa|hinta|yhteens[äa]|osuus)\b", r"\byhteens[äa]\s+ilman\s+alv\b", r"\bv[äa]lisumma\b",
       r"\bveroton\b"]
VAT_AMOUNT = [r"\b(?:alv|arvonlis[äa]vero)(?:[\s:-]*(?:n\s+)?osuus|[\s-]*m[äa][äa]r[äa])?\b"]
DEPOSIT = [r"\b(?:ennakkomaksu|maksettu|ennakko)\b"]

# A receipt's own number, a payment's ids, and its lines that are no total (the change, cash, card, tip).
TRANSACTION_NUMBER = [r"\b(?:tapahtuma|p[äa][äa]te|kassa)[\s.-]*(?:id\b|nro\b\.?|numero\b)"]
NOT_TOTAL += [r"\bvaihtoraha", r"\bk[äa]teinen\b", r"\bkortti\b", r"\bkorttimaksu\b", r"\bjuomaraha\b"]

MONTHS = {1: "tammikuu tammikuuta", 2: "helmikuu helmikuuta", 3: "maaliskuu maaliskuuta",
          4: "huhtikuu huhtikuuta", 5: "toukokuu toukokuuta", 6: "kesäkuu kesäkuuta", 7: "heinäkuu heinäkuuta",
          8: "elokuu elokuuta", 9: "syyskuu syyskuuta", 10: "lokakuu lokakuuta", 11: "marraskuu marraskuuta",
          12: "joulukuu joulukuuta"}

# ("viitenumero" is the bank's payment reference: never the invoice's number)
DOCUMENT_REFERENCE = ["viite", "viitenumero"]
# Who is who: the seller's and the buyer's block headings.
SELLER = [r"myyj[äa]", "laskuttaja", "toimittaja"]
BUYER_HEADING = ["ostaja", "asiakas", "laskutusosoite", "toimitusosoite", "vastaanottaja"]

# Words the field readers match on their own, beside the labels (``agent.fields``): see ``agent.languages.ENTRIES``.
VAT_ID_TAX = ["alv"]
RECEIPT_TITLE = ["kuitti"]
RECEIPT_WORD = ["kuitti"]
CONNECTOR = ["ja"]
PHONE = ["puh"]
# The amount in words ("... euroa ja 40 senttiä").
CURRENCY_NAME = {"euroa": "EUR"}
# A till slip's title and its greeting over the shop's name: never the shop's name.
SLIP_TITLE = ["kuitti", "myyntikuitti"]
GREETING = ["tervetuloa"]
