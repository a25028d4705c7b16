"""The total due, told apart from its parts, and the currency printed with it."""

from __future__ import annotations

import re
from decimal import Decimal

from .. import labels
from .checks import SYMBOLS
from .page import _find_labelled, _Found, _Page, _parse_at, _values
from .patterns import (
    _CURRENCY_CODE,
    _CURRENCY_LABEL,
    _CURRENCY_SIGN,
    _DEPOSIT,
    _NET,
    _TOTAL_DUE,
    _TOTAL_GROSS,
    _TOTAL_PLAIN,
    _VAT_AMOUNT,
)
from .values import _amounts, _currency_near, _parse_amount, _parse_currency

# Total lines weighed (an invoice prints a handful; a page of them is not an invoice's).
_MAX_TOTALS = 60
# Rows of a column of amounts read under a total's header.
_MAX_COLUMN_ROWS = 12


def _find_total(page: _Page) -> tuple[_Found | None, str, list[_Found]]:
    """The total due: the strongest labels first; disagreeing totals of the same strength are to check."""
    candidates = _total_candidates(page)
    if not candidates:
        return None, "", []
    best = min(c.rank for c in candidates)
    strongest = [c for c in candidates if c.rank == best]
    values = list(dict.fromkeys(Decimal(c.value) for c in strongest))
    if len(values) == 1:
        found = strongest[0]
        due = [c for c in candidates if c.rank > best and Decimal(c.value) != values[0] and c.rank < 3]
        due = [c for c in due if c.rank == 1]
        note = f"the amount still to pay is {due[0].value}" if due and best == 0 else ""
        return found, note, []
    return _settle_totals(page, strongest, values, best)


def _total_candidates(page: _Page) -> list[_Found]:
    """Every labelled total on the page, ranked: lower is stronger (``_total_rank``, then how it was read)."""
    candidates: list[_Found] = []
    for column in page.columns:
        if len(candidates) >= _MAX_TOTALS:
            break
        rank = _total_rank(column.head)
        if rank is None:
            continue
        match = (_TOTAL_GROSS.search(column.head) or _TOTAL_DUE.search(column.head)
                 or _TOTAL_PLAIN.search(column.head))
        assert match is not None  # noqa: S101  _total_rank matched one of them
        value = _values(page, column, match.end(), _parse_amount)
        if value is None:
            continue
        found, how = value
        # A label inside a running sentence ("... le montant restant à payer est de 128,00 €") is prose, not the
        # total's line: it ranks below every labelled total.
        sentence = _SENTENCE.search(column.text[:match.start()][-80:]) is not None
        if how == "below":
            found, sure = _column_total(page, found)
            found.rank = rank + (1 if sure else 2)
        else:
            found = _largest_on_row(page, found)
            found.rank = rank
        if sentence:
            found.rank += 3
        candidates.append(found)
    return candidates


def _settle_totals(page: _Page, strongest: list[_Found], values: list[Decimal],
                   best: int) -> tuple[_Found, str, list[_Found]]:
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
    if best >= 2:  # several bare "Total" lines: the grand total is the largest
        largest = max(strongest, key=lambda c: Decimal(c.value))
        return largest, "the largest of several totals printed", []
    first: dict[Decimal, _Found] = {}
    for c in strongest:
        first.setdefault(Decimal(c.value), c)
    return strongest[0], "two totals are printed that disagree: check which one is due", list(first.values())


# Three lower-case words in a row before a label: a sentence, not a form's label.
_SENTENCE = re.compile(r"(?<![^\W\d_])[a-zà-ÿ]++\s[a-zà-ÿ']++\s[a-zà-ÿ']++\s")


def _deposits(page: _Page) -> set[Decimal]:
    """Amounts printed as already paid (a deposit, a prepayment), as positive amounts."""
    paid: set[Decimal] = set()
    for column in page.columns:
        match = _DEPOSIT.search(column.head)
        if match is not None:
            value = _values(page, column, match.end(), _parse_amount, below=False)
            if value is not None:
                paid.add(abs(Decimal(value[0].value)))
    return paid


def _column_total(page: _Page, first: _Found) -> tuple[_Found, bool]:
    """Under a total's header: one amount, or a column whose last row sums the rows above it (sure),
    else the first of several amounts (line or per-rate amounts: not sure)."""
    rows = [first]
    while len(rows) < _MAX_COLUMN_ROWS:
        under = [c for c in page.below(rows[-1].column)[:1] if c.x1 > first.column.x0 and c.x0 < first.column.x1]
        if under and any(re.search(r"[^\W\d_]{3}", c.text) and not _CURRENCY_CODE.fullmatch(c.text)
                         for c in page.by_line[under[0].line] if c.x1 <= under[0].x0):
            break  # a labelled line ("Acompte : 10,00"), not the next row of the column
        parsed = _parse_at(under[0], 0, _parse_amount) if under else None
        if parsed is None:
            break
        rows.append(parsed)
    if len(rows) == 1:
        return first, True
    amounts = [Decimal(r.value) for r in rows]
    if amounts[-1] == sum(amounts[:-1]):
        return rows[-1], True
    return first, False


def _largest_on_row(page: _Page, found: _Found) -> _Found:
    """A total row may print net, VAT and gross side by side ("Total  100,00  19,00  119,00"): the gross."""
    best = found
    for column in [found.column, *page.right_of(found.column)[:4]]:
        start = found.end if column is found.column else 0
        for match, amount in _amounts(column.text[start:start + 200]):
            if match.group("dec") and amount > Decimal(best.value):
                best = _Found(str(amount), column, start + match.start(), start + match.end())
    return best


def _total_rank(text: str) -> int | None:
    """0 for a grand total, 1 for an amount due, 2 for a bare total; None for a part of it."""
    gross = _TOTAL_GROSS.search(text)
    due = _TOTAL_DUE.search(text)
    if gross is None and due is None and _TOTAL_PLAIN.search(text) is None:
        return None
    if labels.NOT_TOTAL.search(labels.GROSS_MARK.sub(" ", text)):
        return None
    return 0 if gross is not None else 1 if due is not None else 2


def _net_plus_vat(page: _Page) -> set[Decimal]:
    """Every sum of a printed net total and a printed VAT amount."""
    nets: list[Decimal] = []
    vats: list[Decimal] = []
    for column in page.columns:
        for pattern, into in ((_NET, nets), (_VAT_AMOUNT, vats)):
            match = pattern.search(column.head)
            if match is not None and not labels.GROSS_MARK.search(column.head):
                value = _values(page, column, match.end(), _parse_amount, below=False)
                if value is not None:
                    into.append(Decimal(value[0].value))
    return {n + v for n in nets[:20] for v in vats[:20]}


def _find_currency(page: _Page, total: _Found | None) -> _Found | None:
    """A labelled currency, else the total's code or symbol, else the one printed most."""
    labelled = _find_labelled(page, _CURRENCY_LABEL, _parse_currency)
    if labelled is not None:
        return labelled
    if total is not None:
        text = total.column.text
        code = _currency_near(text, total.start, total.end)
        if code is None:
            line = page.layout.lines[total.column.line].text
            codes = [m.group() for pattern in (_CURRENCY_CODE, _CURRENCY_SIGN) for m in pattern.finditer(line)]
            code = SYMBOLS.get(codes[0], codes[0]) if codes else None
        if code is not None:
            return _Found(code, total.column, total.start, total.end, rank=1)
    counts: dict[str, int] = {}
    first: dict[str, _Found] = {}
    for column in page.columns:
        for pattern in (_CURRENCY_CODE, _CURRENCY_SIGN):
            for match in pattern.finditer(column.text):
                code = SYMBOLS.get(match.group(), match.group())
                counts[code] = counts.get(code, 0) + 1
                first.setdefault(code, _Found(code, column, match.start(), match.end(), rank=2))
    if not counts:
        return None
    return first[max(counts, key=lambda c: counts[c])]
