"""Estonian: arve nr, arve kuupäev, maksetähtaeg, summa käibemaksuta, käibemaks, tasuda, ettemaks."""

# Where its labels stand among every language's (``agent.reading.languages``): an earlier one's wins a tie.
ORDER = 13

INVOICE_NUMBER = [r"\barve\s*(?:nr\b\.?|number\b|no\b\.?)", r"\bkreeditarve\s*(?:nr\b\.?|number\b)"]
INVOICE_TITLE = ["kreeditarve"]
INVOICE_DATE = [r"\barve\s*kuup[äa]ev\b", r"\bv[äa]ljastamise\s+kuup[äa]ev\b", r"^\W{0,3}kuup[äa]ev\b"]
DUE_DATE = [r"\bmakset[äa]htaeg\b", r"\btasumise\s+t[äa]htaeg\b", r"\bt[äa]htaeg\b"]
OTHER_DATE = ["t[äa]htaeg", "periood", "laekumise", "tarne", "tellimuse"]
TOTAL_GROSS = [r"\bsumma\s+kokku\b", r"\barve\s+summa\b", r"\bkokku\s+(?:koos\s+)?k[äa]ibemaksuga\b"]
TOTAL_DUE = [r"\btasuda\b", r"\btasumisele\s+kuulub\b", r"\bmaksmisele\s+kuulub\b"]
TOTAL_PLAIN = [r"\bsumma\b", r"\bkokku\b"]
NOT_TOTAL = [r"k[äa]ibemaks", r"\bilma\b", r"k[äa]ive\b", r"\bettemaks", r"\btasutud\b",
             r"s[õo]nadega", r"\bvahesumma\b"]
GROSS_MARK = [r"k[äa]ibemaksuga\b", r"\bkoos\s+km\b"]
# (never "maksustatav käive" alone: the taxable part, beside the tax-free one, is not the whole net)
NET = [r"\bsumma\s+(?:ilma\s+)?(?:k[äa]ibemaksuta|km-?ta)\b", r"\bvahesumma\b"]
# (never "KM" alone: it is as often a distance, "km 34.5")
VAT_AMOUNT = [r"\bk[äa]ibemaks(?:\s+\d{1,2}\s*%)?(?![^\W\d_])(?!\s*kokku)"]
DEPOSIT = [r"\b(?:ettemaks|tasutud|makstud)\b"]
CURRENCY = ["valuuta"]

# A receipt's own number, a payment's ids, and its lines that are no total (the change, cash, card, tip).
RECEIPT_NUMBER = [r"\b(?:kviitung|t[šs]ekk)[\s.-]*(?:nr\b\.?|number\b)"]
TRANSACTION_NUMBER = [r"\b(?:tehing|terminal|kassa)[\s.-]*(?:id\b|nr\b\.?)"]
NOT_TOTAL += [r"\bsularaha\b", r"\bkaart\b", r"\btagastus\b", r"\bjootraha\b"]

MONTHS = {1: "jaanuar jaanuari", 2: "veebruar veebruari", 3: "märts märtsi marts", 4: "aprill aprilli",
          5: "mai", 6: "juuni", 7: "juuli", 8: "august augusti", 9: "september septembri",
          10: "oktoober oktoobri", 11: "november novembri", 12: "detsember detsembri"}

# Who is who: the buyer's block headings.
BUYER_HEADING = ["maksja", "ostja"]

# Words the field readers match on their own, beside the labels (``agent.reading.fields``): see ``languages.ENTRIES``.
BANK_WORD = ["pank"]
# The amount in words ("... kaheksa eurot ja 79 senti").
CURRENCY_NAME = {"eurot": "EUR"}
