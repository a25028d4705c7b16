"""The total due, told apart from its parts, and the currency printed with it."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

from .. import labels
from .checks import SHARED_SYMBOLS, SYMBOLS
from .numbers import ITEM_HEADER
from .page import Column, Found, Page, find_labelled, labelled_value, parse_at
from .patterns import (
    CURRENCY_CODE,
    CURRENCY_LABEL,
    CURRENCY_NAME,
    CURRENCY_SIGN,
    DEPOSIT,
    NET,
    TOTAL_DUE,
    TOTAL_GROSS,
    TOTAL_PLAIN,
    VAT_AMOUNT,
)
from .values import amounts_in, currency_name, currency_near, parse_amount, parse_currency

# Total lines weighed (an invoice prints a handful; a page of them is not an invoice's).
_MAX_TOTALS = 60
# Rows of a column of amounts read under a total's header.
_MAX_COLUMN_ROWS = 12


# Kinds of total label, strongest first; a candidate's rank is ``_KIND * kind`` plus how it was read.
_GROSS, _DUE, _BARE = 0, 1, 2
_KIND = 10
# A total read inside a running sentence ranks below every labelled one.
_IN_SENTENCE = 30
# Characters a total's label may carry before its value in the next column ("Totaal gemaakte kosten (incl. btw)").
_MAX_TOTAL_LABEL = 50


def _kind(found: Found) -> int:
    return (found.rank % _IN_SENTENCE) // _KIND


def find_total(page: Page) -> tuple[Found | None, str, list[Found]]:
    """The invoice's gross total: a grand total first, then a bare total or an amount due (the larger, unless
    net plus VAT makes the other); a zero or negative balance never wins over a positive total, and what is
    still to pay, when it differs, is noted beside the total."""
    candidates = _total_candidates(page)
    if not candidates:
        found = _net_vat_total(page)
        if found is not None:
            return found, "no total printed: read as the amount net plus VAT make", []
        received = _paid(page)
        return (received, "no total printed: read as the amount paid", []) if received else (None, "", [])
    # A balance of zero (a paid invoice) or below is what is left to pay, never the invoice's total.
    pool = [c for c in candidates if _kind(c) != _DUE or Decimal(c.value) > 0] or candidates
    best = min(c.rank for c in pool)
    strongest = [c for c in pool if c.rank == best]
    values = list(dict.fromkeys(Decimal(c.value) for c in strongest))
    if len(values) == 1:
        found, note, others = strongest[0], "", list[Found]()
    else:
        found, note, others = _settle_totals(page, strongest, values, best)
    if _kind(found) == _DUE and not others:
        found = _gross_over_due(page, found, pool)
    if not note and _kind(found) != _DUE:
        due = [c for c in candidates if _kind(c) == _DUE and c.rank < _IN_SENTENCE
               and Decimal(c.value) != Decimal(found.value)]
        if due:
            left = Decimal(due[0].value)
            paid = Decimal(found.value) - left
            note = f"the amount still to pay is {left:.2f}"
            if paid > 0 and paid in _deposits(page):
                note += f" after a payment of {paid:.2f}"
    return found, note, others


def _gross_over_due(page: Page, due: Found, pool: list[Found]) -> Found:
    """Between an amount due and a bare "Total" on its page: the larger (the gross before what was paid), unless
    net plus VAT make the smaller and not the larger (the "Total" was the net). A "Total" on another page (of a
    document appended to the invoice, say) never replaces the amount due."""
    bare = [c for c in pool if _kind(c) == _BARE and c.rank < _IN_SENTENCE and c.column.page == due.column.page]
    if not bare:
        return due
    total = min(bare, key=lambda c: c.rank)
    due_value, total_value = Decimal(due.value), Decimal(total.value)
    if due_value == total_value:
        return due
    sums = _net_plus_vat(page) | {total_value + vat for vat in _vat_amounts(page)}
    if due_value in sums and total_value not in sums:
        return due
    if total_value in sums and due_value not in sums:
        return total
    return total if total_value > due_value else due


def _total_candidates(page: Page) -> list[Found]:
    """Every labelled total on the page, ranked: lower is stronger (``_total_rank``, then how it was read)."""
    candidates: list[Found] = []
    for column in page.columns:
        if len(candidates) >= _MAX_TOTALS:
            break
        rank = _total_rank(column.head)
        if rank is None:
            continue
        match = (TOTAL_GROSS.search(column.head) or TOTAL_DUE.search(column.head)
                 or TOTAL_PLAIN.search(column.head))
        assert match is not None  # noqa: S101  _total_rank matched one of them
        end = match.end()
        rest = column.text[end:]
        if len(column.text) <= _MAX_TOTAL_LABEL and not re.search(r"\d", rest):
            end = len(column.text)  # a longer label with its value in the next column
        stacked = _stacked_value(page, column)
        value = (stacked, "stack") if stacked is not None else labelled_value(page, column, end, parse_amount)
        if value is None:
            continue
        found, how = value
        # A label inside a running sentence ("... le montant restant à payer est de 128,00 €") is prose, not the
        # total's line: it ranks below every labelled total.
        sentence = _SENTENCE.search(column.text[:match.start()][-80:]) is not None
        if how == "below":
            if _items_header(page, column) and _items_under(page, found):
                continue  # an items table's "Total" column: each item's amount, none of them the invoice's
            found, sure = _column_total(page, found)
            if not sure and _rate_row(page, found):
                continue  # a VAT breakdown's gross column ("A = 19%  26,25  4,99  31,24"): a rate's, not the invoice's
            found.rank = _KIND * rank + (1 if sure else 2)
        elif how == "stack":
            found.rank = _KIND * rank
        else:
            found = _largest_on_row(page, found)
            found.rank = _KIND * rank
        if sentence:
            found.rank += _IN_SENTENCE
        candidates.append(found)
    return candidates


# A label line of a totals block: words (a rate at most), no amount.
_LABEL_ONLY = re.compile(r"[^\W\d_][^\d]*(?:\d{1,2}(?:[.,]\d{1,2})?\s?%[^\d]*)?")


def _stacked_value(page: Page, column: Column) -> Found | None:
    """A totals block laid out in rows of labels, then the rows of their amounts ("Subtotal / VAT / Total" over
    "100.00 / 20.00 / 120.00"): the amount in the same row of the amounts as the label's in the labels."""
    if column.text[len(column.head):] or not _LABEL_ONLY.fullmatch(column.text) or page.right_of(column):
        return None
    stack = [*_aligned(page, column, -1)[::-1], column, *_aligned(page, column, +1)]
    if len(stack) < 2 or any(page.right_of(c) for c in stack):
        return None
    position = stack.index(column)
    amounts: list[Found] = []
    line = stack[-1].line + 1
    while line < len(page.by_line) and len(amounts) <= len(stack):
        row = [c for c in page.by_line[line] if c.page == column.page]
        if len(row) != 1 or row[0].x1 < column.x0 - 4 * column.height:
            break
        parsed = parse_at(row[0], 0, parse_amount)
        if parsed is None or parsed.end < len(_TRAILING_CODE.sub("", row[0].text)):
            break
        amounts.append(parsed)
        line += 1
    if len(amounts) != len(stack):
        return None
    return amounts[position]


# A currency after an amount ("120,00 EUR", "9,50 €").
_TRAILING_CODE = re.compile(r"[\s€$£A-Za-z]+$")


def _aligned(page: Page, column: Column, step: int) -> list[Column]:
    """The label-only lines right above (step -1) or under (+1) a label, starting at its left edge."""
    found: list[Column] = []
    line = column.line + step
    while 0 <= line < len(page.by_line) and len(found) < _MAX_COLUMN_ROWS:
        row = page.by_line[line]
        if len(row) != 1 or abs(row[0].x0 - column.x0) > 2 * column.height or row[0].page != column.page:
            break
        if not _LABEL_ONLY.fullmatch(row[0].text) or len(row[0].text) > _MAX_TOTAL_LABEL:
            break
        found.append(row[0])
        line += step
    return found


def _net_vat_total(page: Page) -> Found | None:
    """An amount printed without a label, after a net total and its VAT, that is their sum."""
    sums = _net_plus_vat(page)
    if not sums:
        return None
    for column in page.columns:
        for match, amount in amounts_in(column.text[:200]):
            if match.group("dec") and amount in sums:
                return Found(str(amount), column, match.start(), match.end(), rank=_KIND * _BARE + 5)
    return None


def _settle_totals(page: Page, strongest: list[Found], values: list[Decimal],
                   best: int) -> tuple[Found, str, list[Found]]:
    """The total among equally strong ones that disagree: the one net plus VAT makes, the gross before a
    deposit, the largest of bare totals; else the first, with the others to check."""
    sums = _net_plus_vat(page)
    confirmed = [c for c in strongest if Decimal(c.value) in sums]
    if len({Decimal(c.value) for c in confirmed}) == 1:
        return confirmed[0], "", []
    if len(values) == 2:  # a total and what is left to pay after a printed deposit
        gross, due_amount = max(values), min(values)
        if gross - due_amount in _deposits(page):
            found = next(c for c in strongest if Decimal(c.value) == gross)
            return found, f"the amount still to pay is {due_amount} after a payment of {gross - due_amount}", []
    if _kind(strongest[0]) == _BARE:  # several bare "Total" lines: the grand total is the largest
        largest = max(strongest, key=lambda c: Decimal(c.value))
        return largest, "the largest of several totals printed", []
    first: dict[Decimal, Found] = {}
    for c in strongest:
        first.setdefault(Decimal(c.value), c)
    return strongest[0], "two totals are printed that disagree: check which one is due", list(first.values())


# Three lower-case words in a row before a label: a sentence, not a form's label.
_SENTENCE = re.compile(r"(?<![^\W\d_])[a-zà-ÿ]++\s[a-zà-ÿ']++\s[a-zà-ÿ']++\s")


def _items_header(page: Page, column: Column) -> bool:
    """Whether a total's label heads a column of an items table: its line is labels only, one of them naming
    what items have ("Description   Total", "Qty  Price  Total")."""
    line = page.by_line[column.line]
    return (len(line) >= 2 and not any(re.search(r"\d", c.text) for c in line)
            and any(ITEM_HEADER.search(c.text) for c in line if c is not column))


def _items_under(page: Page, first: Found) -> bool:
    """Whether the amount under a column's header is the first of several items' rows: each beside its item's
    words, in the same column (a single row, or a column whose last row sums the others, is a total)."""
    rows = [first]
    while len(rows) < _MAX_COLUMN_ROWS:
        under = [c for c in page.below(rows[-1].column)[:1] if c.x1 > first.column.x0 and c.x0 < first.column.x1]
        parsed = parse_at(under[0], 0, parse_amount) if under else None
        if parsed is None:
            break
        rows.append(parsed)
    amounts = [Decimal(r.value) for r in rows]
    return len(rows) > 1 and not any(amounts[i] == sum(amounts[:i]) for i in range(2, len(amounts)))


def _paid(page: Page) -> Found | None:
    """The one amount a receipt without a total prints as paid ("Payé 9,50 €", "Amount paid 5.00")."""
    found: list[Found] = []
    for column in page.columns:
        match = DEPOSIT.search(column.head)
        value = labelled_value(page, column, match.end(), parse_amount, below=False) if match is not None else None
        if value is not None and Decimal(value[0].value) > 0:
            found.append(value[0])
    return found[0] if len({Decimal(f.value) for f in found}) == 1 else None


def _deposits(page: Page) -> set[Decimal]:
    """Amounts printed as already paid (a deposit, a prepayment), as positive amounts."""
    paid: set[Decimal] = set()
    for column in page.columns:
        match = DEPOSIT.search(column.head)
        if match is not None:
            value = labelled_value(page, column, match.end(), parse_amount, below=False)
            if value is not None:
                paid.add(abs(Decimal(value[0].value)))
    return paid


def _column_total(page: Page, first: Found) -> tuple[Found, bool]:
    """Under a total's header: one amount, or a column whose last row sums the rows above it (sure),
    else the first of several amounts (line or per-rate amounts: not sure)."""
    rows = [first]
    while len(rows) < _MAX_COLUMN_ROWS:
        under = [c for c in page.below(rows[-1].column)[:1] if c.x1 > first.column.x0 and c.x0 < first.column.x1]
        if under and any(re.search(r"[^\W\d_]{3}", CURRENCY_CODE.sub("", c.text))
                         for c in page.by_line[under[0].line] if c.x1 <= under[0].x0):
            break  # a labelled line ("Acompte : 10,00"), not the next row of the column ("5,99 EUR" is one)
        parsed = parse_at(under[0], 0, parse_amount) if under else None
        if parsed is None:
            break
        rows.append(parsed)
    if len(rows) == 1:
        return first, True
    amounts = [Decimal(r.value) for r in rows]
    if amounts[-1] == sum(amounts[:-1]):
        return rows[-1], True
    return first, False


# A VAT rate printed as a cell of its own, or after a rate's letter ("19%", "A = 19 %", "7,0%").
_RATE_CELL = re.compile(r"(?<![\d.,])\d{1,2}(?:[.,]\d{1,2})?\s?%")


def _rate_row(page: Page, found: Found) -> bool:
    """Whether an amount's row starts with a VAT rate: a row of a breakdown by rate."""
    left = [c for c in page.by_line[found.column.line] if c.x1 <= found.column.x0]
    return bool(left) and _RATE_CELL.search(left[0].text) is not None


def _largest_on_row(page: Page, found: Found) -> Found:
    """A total row may print net, VAT and gross side by side ("Total  100,00  19,00  119,00"): the gross."""
    best = found
    for column in [found.column, *page.right_of(found.column)[:4]]:
        start = found.end if column is found.column else 0
        for match, amount in amounts_in(column.text[start:start + 200]):
            if match.group("dec") and amount > Decimal(best.value):
                best = Found(str(amount), column, start + match.start(), start + match.end())
    return best


def _total_rank(text: str) -> int | None:
    """0 for a grand total, 1 for an amount due, 2 for a bare total; None for a part of it."""
    gross = TOTAL_GROSS.search(text)
    due = TOTAL_DUE.search(text)
    if gross is None and due is None and TOTAL_PLAIN.search(text) is None:
        return None
    if labels.NOT_TOTAL.search(labels.GROSS_MARK.sub(" ", text)):
        return None
    if gross is None and due is None and labels.GROSS_MARK.search(text):
        return _GROSS  # "Totaal gemaakte kosten (incl. btw)": a bare total said to include the VAT
    return _GROSS if gross is not None else _DUE if due is not None else _BARE


def _net_plus_vat(page: Page) -> set[Decimal]:
    """Every sum of a printed net total and a printed VAT amount."""
    nets = [Decimal(f.value) for f in labelled_amounts(page, NET)]
    return {n + v for n in nets for v in _vat_amounts(page)}


def _vat_amounts(page: Page) -> list[Decimal]:
    return [Decimal(f.value) for f in labelled_amounts(page, VAT_AMOUNT)]


# A rate after a VAT label ("DPH 21 %", "MVA (25%)"), after a till's tax class too ("MWST A 19%", "TAX B=8.875%"),
# and the currency sign its amount's column starts with ("IVA 10.5%: $   0,00").
_RATE = re.compile(r"\s*(?:[A-Z]\s*=?\s*(?=\d))?\(?\s*\d{1,2}(?:[.,]\d{1,3})?\s?%\s*\)?\s*:?(?:\s*[$€£])?")


def labelled_amounts(page: Page, pattern: re.Pattern[str], *, near: bool = False) -> list[Found]:
    """The amounts printed beside a label (at most 20): a net total's, a VAT amount's (``near``: only an
    amount right after the label, not one further along its line)."""
    found: list[Found] = []
    for column in page.columns:
        match = pattern.search(column.head)
        if match is not None and not labels.GROSS_MARK.search(column.head):
            if pattern is VAT_AMOUNT and NET.search(column.head):
                continue  # "Celkem bez DPH", "Total excl. VAT": the net, not the VAT
            end = match.end()
            rate = _RATE.match(column.text, end)
            if rate is not None and rate.end() == len(column.text):
                end = rate.end()  # "VAT 21 %" with its amount in the next column
            elif near and len(column.text) <= _MAX_TOTAL_LABEL and not re.search(r"\d", column.text[end:]):
                end = len(column.text)  # "Subtotaal gemaakte kosten (excl. btw)" and its amount beside it
            stacked = _stacked_value(page, column) if near else None
            value = (stacked, "stack") if stacked is not None else labelled_value(page, column, end, parse_amount,
                                                                          below=False)
            if value is None:
                continue
            item, how = value
            if how == "stack":
                found.append(item)
                continue
            if near and item.start > (end + _NEAR_CHARS if how == "same" else _NEAR_NEXT_COLUMN):
                continue  # "VAT Reg No 980 7806 84": another number further on, not the amount
            found.append(item)
            if len(found) >= 20:
                break
    return found


# How far after its label (or into the next column: a currency code at most) a net or VAT amount starts.
_NEAR_CHARS = 12
_NEAR_NEXT_COLUMN = 5


def find_currency(page: Page, total: Found | None,
                   country: Callable[[], str | None] = lambda: None) -> Found | None:
    """A labelled currency, else the total's code or symbol, else the one printed most, else one written out;
    a symbol several countries use ("$", "kr", "¥") is made a code by a code or name printed on the page,
    else by the supplier's country (``country``), else it stays the symbol (to check)."""
    found = _currency_clue(page, total)
    if found is None or found.value not in SHARED_SYMBOLS:
        return found
    options = SHARED_SYMBOLS[found.value]
    printed = _printed_code(page, set(options.values()))
    if printed is not None:
        found.value, found.role = printed, "printed"
        return found
    where = country() or _country_hint(page)
    if where in options:
        found.value, found.role = options[where], where
    return found


def _currency_clue(page: Page, total: Found | None) -> Found | None:
    labelled = find_labelled(page, CURRENCY_LABEL, parse_currency)
    if labelled is not None:
        return labelled
    if total is not None:
        text = total.column.text
        code = currency_near(text, total.start, total.end)
        if code is None:
            line = page.layout.lines[total.column.line].text
            codes = [m.group() for pattern in (CURRENCY_CODE, CURRENCY_SIGN) for m in pattern.finditer(line)]
            code = SYMBOLS.get(codes[0], codes[0]) if codes else None
        if code is not None:
            return Found(code, total.column, total.start, total.end, rank=1)
    counts: dict[str, int] = {}
    first: dict[str, Found] = {}
    for column in page.columns:
        for pattern in (CURRENCY_CODE, CURRENCY_SIGN):
            for match in pattern.finditer(column.text):
                code = SYMBOLS.get(match.group(), match.group())
                counts[code] = counts.get(code, 0) + 1
                first.setdefault(code, Found(code, column, match.start(), match.end(), rank=2))
    if counts:
        return first[max(counts, key=lambda c: counts[c])]
    for column in page.columns[:_MAX_WORD_COLUMNS]:  # "... mil pesos", "Beløpet i norske kroner"
        named = _CURRENCY_WORD.search(column.text)
        if named is not None:
            return Found(currency_name(named.group()), column, named.start(), named.end(), rank=3)
    return None


# Columns searched for a currency written out as a word.
_MAX_WORD_COLUMNS = 400
_CURRENCY_WORD = re.compile(r"(?<![^\W\d_])(?:" + CURRENCY_NAME.pattern + ")", re.IGNORECASE)


def _printed_code(page: Page, codes: set[str]) -> str | None:
    """The one code among ``codes`` the page prints ("All amounts in CAD", "Canadian dollars")."""
    seen: set[str] = set()
    for column in page.columns[:_MAX_WORD_COLUMNS]:
        for match in CURRENCY_CODE.finditer(column.text):
            if match.group() in codes:
                seen.add(match.group())
        for match in _CURRENCY_WORD.finditer(column.text):
            code = currency_name(match.group())
            if code in codes:
                seen.add(code)
        for match in _CURRENCY_COUNTRY.finditer(column.text):
            code = _COUNTRY_CURRENCY_WORDS[match.group(1).lower()]
            if code in codes:
                seen.add(code)
    return seen.pop() if len(seen) == 1 else None


# "Canadian currency", "in Australian dollars" are said outright (each language's words).
_COUNTRY_CURRENCY_WORDS = labels.CURRENCY_COUNTRY_WORDS
_CURRENCY_COUNTRY = re.compile(labels.CURRENCY_COUNTRY, re.IGNORECASE)

# Signs of the supplier's country on the page. Strong: the name of a country's tax id or tax. Weak (the first one
# outside the buyer's block wins): a postcode with its state or province, a country's name, the domain of an
# e-mail or web address, a telephone's country prefix, a North American telephone number.
_STRONG_SIGNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bC\.?U\.?I\.?T\b|\bIVA\s+Responsable\s+Inscripto\b|\bAFIP\b", re.IGNORECASE), "AR"),
    (re.compile(r"\bA\.?B\.?N\b\.?:?\s*\d{2}\s?\d{3}\s?\d{3}\s?\d{3}\b"), "AU"),
    (re.compile(r"\bR\.?F\.?C\b\.?:?\s*[A-Z&Ñ]{3,4}\d{6}"), "MX"),
    (re.compile(r"\b(?:HST|QST|GST/HST|TPS/TVQ|TVQ|TPS|T\.P\.S\.)(?![^\W\d_])"), "CA"),
    (re.compile(r"\bMVA\b|\bForetaksregisteret\b"), "NO"),
    (re.compile(r"\bCVR\b"), "DK"),
    (re.compile(r"\b(?:Momsreg|Bankgiro|Plusgiro|F-skatt)", re.IGNORECASE), "SE"),
    (re.compile(r"[\u3040-\u30ff]"), "JP"),  # kana: Japanese
    (re.compile(r"[\u4e00-\u9fff]"), "CN"),  # ideographs without kana: Chinese
]
_WEAK_SIGNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:NSW|VIC|QLD|TAS|ACT)\s+\d{4}\b"), "AU"),
    (re.compile(r"\b(?:AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT)\s+[A-Z]\d[A-Z]\s?\d[A-Z]\d\b"), "CA"),
    (re.compile(r"\b(?:AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|"
                r"NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY),?\s+\d{5}(?:-\d{4})?\b"), "US"),
    (re.compile(r"(?<![^\W\d_])(?:(USA|U\.S\.A\.?|United\s+States)|(Canada)|(Australia)|(Argentina)|(M[ée]xico)|"
                r"(New\s+Zealand)|(Norge|Norway)|(Sverige|Sweden)|(Danmark|Denmark))(?![^\W\d_])"), "*"),
    (re.compile(r"(?:@|www\.|://)[\w.-]*?\.(?:com?\.)?(ar|au|ca|mx|nz|cl|sg|hk|se|no|dk|is|jp|cn)\b(?![.\w])",
                re.IGNORECASE), ""),
    (re.compile(r"(?<![\w+])\+\s?(54|61|52|64|56|65|852|46|47|45|354|81|86)[\s(-]"), ""),
    # a North American telephone number ("(317) 861-1102", "317-861-1102") with no sign of Canada before it
    (re.compile(r"(?<![\d+\-.])(?:\([2-9]\d{2}\)\s?|[2-9]\d{2}[-.])[2-9]\d{2}[-.]\d{4}(?![\d\-.])"), "US"),
]
_NAMED = ("US", "CA", "AU", "AR", "MX", "NZ", "NO", "SE", "DK")
_PHONE_COUNTRIES = {"54": "AR", "61": "AU", "52": "MX", "64": "NZ", "56": "CL", "65": "SG", "852": "HK", "46": "SE",
                    "47": "NO", "45": "DK", "354": "IS", "81": "JP", "86": "CN"}
# Columns looked at for country signs (the letterhead and the footer are on the first page).
_MAX_SIGN_COLUMNS = 600


def _country_hint(page: Page) -> str | None:
    """The supplier's country by a strong sign anywhere, else by the first weak one outside the buyer's block."""
    columns = page.columns[:_MAX_SIGN_COLUMNS]
    for pattern, country in _STRONG_SIGNS:
        if any(pattern.search(column.text) for column in columns):
            return country
    buyers: list[str] = []
    for column in columns:
        for pattern, country in _WEAK_SIGNS:
            match = pattern.search(column.text)
            if match is None:
                continue
            if country == "*":
                named = next(code for code, group in zip(_NAMED, match.groups(), strict=True) if group)
            elif not country:
                group = match.group(1).lower()
                named = _PHONE_COUNTRIES.get(group) or group.upper()
            else:
                named = country
            if page.role(column) != "buyer":
                return named
            buyers.append(named)
    # Only the buyer's country is printed: most invoices are domestic.
    return buyers[0] if buyers else None
