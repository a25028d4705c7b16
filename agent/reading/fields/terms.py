"""The fields accounts payable needs next (``fields.ALSO_READ``): the due date, the net amount and the VAT amount.

Read like the required fields (a label in any language, its value beside or under it) and never asked of the
supplier. Net plus VAT must make the total within rounding: the pair that does is chosen among the printed
ones (a totals row "Sum 100,00 25,00 125,00", a subtotal and a VAT line, per-rate VAT lines added up); a pair
that does not is to check.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from .. import labels
from ..layout import Layout
from .amounts import labelled_amounts
from .checks import ROUNDING, Field
from .page import Column, Found, Page, find_labelled
from .patterns import DUE_DATE, NET, VAT_AMOUNT
from .values import amounts_in

# A VAT label that names the VAT id, not an amount ("VAT Reg No", "MwSt-Nr.", "TVA intracommunautaire").
_VAT_ID_LABEL = re.compile(labels.VAT_ID_LABEL, re.IGNORECASE)


def read_terms(page: Page, layout: Layout, found: dict[str, Found | None]) -> dict[str, dict[str, Any]]:
    """The due date, net amount and VAT amount, each as ``{status, value, detail, evidence}``."""
    results: dict[str, dict[str, Any]] = {}
    due = find_labelled(page, DUE_DATE, page.parse_date)
    results["due_date"] = _with_evidence(_check_due_date(due, found.get("invoice_date")), due, layout)
    total = found.get("total_amount")
    net, vat, agree, detail = _net_and_vat(page, total)
    for name, item in (("net_amount", net), ("vat_amount", vat)):
        checked = _check_amount(item.value if item else None, name.split("_")[0])
        if checked.status == "present" and detail:
            checked = Field("present" if agree else "to_check", checked.value, detail)
        results[name] = _with_evidence(checked, item, layout)
    return results


def _with_evidence(checked: Field, item: Found | None, layout: Layout) -> dict[str, Any]:
    result = checked.as_dict()
    result["evidence"] = item.evidence(layout) if item is not None and result["value"] is not None else None
    return result


def _check_due_date(item: Found | None, invoice_date: Found | None) -> Field:
    """A full date; one before the invoice's own date is to check."""
    if item is None:
        return Field("missing", None, "no due date found")
    try:
        due = date.fromisoformat(item.value)
    except ValueError:
        return Field("malformed", item.value, "not a date")
    if invoice_date is not None:
        try:
            issued = date.fromisoformat(invoice_date.value)
        except ValueError:
            issued = None
        if issued is not None and due < issued:
            return Field("to_check", due.isoformat(), "the due date is before the invoice date")
    return Field("present", due.isoformat(), "")


def _check_amount(value: str | None, what: str) -> Field:
    if value is None:
        return Field("missing", None, f"no {'net' if what == 'net' else 'VAT'} amount found")
    try:
        amount = Decimal(value)
    except InvalidOperation:
        return Field("malformed", value, "not an amount")
    return Field("present", str(amount.quantize(Decimal("0.01"))), "")


def _net_and_vat(page: Page, total: Found | None) -> tuple[Found | None, Found | None, bool, str]:
    """The net amount and the VAT amount, chosen so that they make the total; whether they do, and a detail."""
    gross = _decimal(total.value) if total is not None else None
    # Parts of the total are no larger than it and not negative; the VAT is smaller than it ("VAT Total 10.20").
    nets = [n for n in labelled_amounts(page, NET, near=True) if _part(n, gross)]
    vats = [v for v in labelled_amounts(page, VAT_AMOUNT, near=True)
            if not _VAT_ID_LABEL.search(page.layout.lines[v.column.line].text) and _part(v, gross, whole=False)]
    if gross is not None and total is not None:
        row = _row_parts(page, total, gross)
        if row is not None:
            return row[0], row[1], True, "net + VAT = the total"
        # A VAT line may print the net too ("20% VAT Net 8.50", "MwSt-Basis"): of two VAT-labelled amounts that
        # make the total, the larger is the net, since no VAT rate reaches a hundred per cent.
        pairs = [*((net, vat) for net in nets for vat in vats),
                 *((net, vat) for net in vats for vat in vats if Decimal(vat.value) < Decimal(net.value))]
        for net, vat in pairs:
            if abs(Decimal(net.value) + Decimal(vat.value) - gross) <= ROUNDING:
                return net, vat, True, "net + VAT = the total"
        rates = list({Decimal(v.value): v for v in vats}.values())
        added = sum((Decimal(v.value) for v in rates), Decimal(0))
        if nets and len(rates) > 1 and abs(Decimal(nets[0].value) + added - gross) <= ROUNDING:
            first = rates[0]
            return (nets[0], Found(str(added), first.column, first.start, first.end), True,
                    "the VAT amounts of each rate added up; net + VAT = the total")
        rest = _rest_printed(page, total, gross, nets, vats)
        if rest is not None:
            return rest
    first_net = nets[0] if nets else None
    first_vat = vats[0] if vats else None
    if gross is not None and first_net is not None and first_vat is not None:
        made = Decimal(first_net.value) + Decimal(first_vat.value)
        return (first_net, first_vat, False,
                f"net {first_net.value} + VAT {first_vat.value} = {made}, not the total {gross}")
    return first_net, first_vat, True, ""


def _row_parts(page: Page, total: Found, gross: Decimal) -> tuple[Found, Found] | None:
    """A totals row that prints net, VAT and gross side by side ("Sum  35 311,41  8 827,85  44 139,26"): the
    total's own line first, then any line that prints the total (a summary table under its headers)."""
    whole = not re.search(r"\d[.,]\d", total.column.text[total.start:total.end])  # "ATT BETALA 38290"
    lines = [total.column.line, *(line for line, columns in enumerate(page.by_line[:_MAX_ROW_LINES])
                                  if line != total.column.line
                                  and any(total.value in _row_values(c, whole) for c in columns))]
    for line in lines[:_MAX_ROWS]:
        row = [found for column in page.by_line[line] for found in _row_amounts(column, whole)]
        values = [Decimal(f.value) for f in row]
        # The net and the VAT among the few cells before the gross, the nearest it first; a column between
        # them ("Percepciones 0,00") may part them. The VAT is the smaller.
        for at in [k for k, value in enumerate(values) if value == gross][:_ROW_REACH]:
            for vat_at in range(at - 1, max(at - _ROW_REACH, 0), -1):
                for net_at in range(vat_at - 1, max(at - _ROW_REACH, 0) - 1, -1):
                    net, vat = values[net_at], values[vat_at]
                    if vat < net and abs(net + vat - gross) <= ROUNDING:
                        return row[net_at], row[vat_at]
    return None


# Lines looked at for a row that prints the total, and such rows tried; the cells before a row's gross (and its
# copies) looked at for its net and VAT: a summary row has a handful, a hostile one thousands.
_MAX_ROW_LINES = 2000
_MAX_ROWS = 10
_ROW_REACH = 6


def _row_amounts(column: Column, whole: bool = False) -> list[Found]:
    """The amounts in a column, with decimals (or without, ``whole``, on a page that prints its total so)."""
    return [Found(str(amount), column, match.start(), match.end())
            for match, amount in amounts_in(column.text[:200]) if match.group("dec") or whole]


def _row_values(column: Column, whole: bool = False) -> list[str]:
    return [found.value for found in _row_amounts(column, whole)] if whole or re.search(r"\d[.,]\d", column.text) \
        else []


def _part(item: Found, gross: Decimal | None, *, whole: bool = True) -> bool:
    """Whether ``item`` can be a part of the total: not negative, no larger than it (and smaller unless ``whole``)."""
    amount = Decimal(item.value)
    return amount >= 0 and (gross is None or (amount <= gross and (whole or amount < gross or not amount)))


def _rest_printed(page: Page, total: Found, gross: Decimal, nets: list[Found],
                  vats: list[Found]) -> tuple[Found, Found, bool, str] | None:
    """The net as the total less a VAT amount, or the VAT as the total less a net, when the page prints that
    rest: "Umsatz 2,77 / MwSt 19% 0,53 / Total 3,30" labels no net, "Sales tax 0.00" under a total is all net,
    "Subtotal 27.60 / Sales tax A=9.625% 1.93" puts its VAT behind a rate. A VAT so found stands on a VAT line."""
    for vat in vats:
        rest = _printed_amount(page, gross - Decimal(vat.value), near=vat.column.line, total=total)
        if rest is not None:
            return rest, vat, True, "net + VAT = the total"
    tax_lines = [line for line, text in enumerate(line.text for line in page.layout.lines[:_MAX_ROW_LINES])
                 if VAT_AMOUNT.search(text) and not _VAT_ID_LABEL.search(text)] if nets else []
    for net in nets:
        rest = _printed_amount(page, gross - Decimal(net.value), near=net.column.line, total=total,
                               lines=[line for line in tax_lines if line != net.column.line])
        if rest is not None:
            return net, rest, True, "net + VAT = the total"
    return None


def _printed_amount(page: Page, amount: Decimal, *, near: int, total: Found,
                    lines: list[int] | None = None) -> Found | None:
    """``amount`` as printed on the line nearest line ``near`` (of ``lines``), the total's own line last."""
    allowed = set(lines) if lines is not None else None
    printed = [f for f in _amounts_printed(page).get(amount, ()) if allowed is None or f.column.line in allowed]
    if not printed:
        return None

    def rank(found: Found) -> tuple[bool, int, int]:
        line = found.column.line
        return line == total.column.line, abs(line - near), -line if line < near else line

    return min(printed, key=rank)


def _amounts_printed(page: Page) -> dict[Decimal, list[Found]]:
    """Every amount with decimals the page prints, by value (read once per page)."""
    if "amounts_printed" not in page.memo:
        found: dict[Decimal, list[Found]] = {}
        for columns in page.by_line[:_MAX_ROW_LINES]:
            for column in columns:
                for item in _row_amounts(column):
                    found.setdefault(Decimal(item.value), []).append(item)
        page.memo["amounts_printed"] = found
    printed: dict[Decimal, list[Found]] = page.memo["amounts_printed"]
    return printed


def _decimal(value: str) -> Decimal | None:
    try:
        return Decimal(value)
    except InvalidOperation:
        return None
