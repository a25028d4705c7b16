"""What the register says about a reviewed invoice: findings for Alice, never for the supplier.

- ``new_supplier``: the register does not know the supplier (by its tax id, else its name).
- ``bank_details_changed``: an IBAN the supplier has never been paid on: the most common invoice
  fraud. Never OK; the words say to phone the supplier on a number already known.
- ``tax_id_other_supplier``: the tax id printed belongs to another supplier of the register.
- ``total_unusual``: a total far outside the supplier's usual range (``FAR`` times over or under).
- ``addressed_elsewhere``: the invoice carries a buyer's tax id that is none of the tenant's own.

``findings`` is pure (a ``Register`` in, dicts out) so the review and the fraud bench run the
same rules; ``snapshot`` reads the few rows one invoice needs from the tenant's register.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from stdnum import iban as iban_numbers
from stdnum.eu import vat as eu_vat
from stdnum.gb import vat as gb_vat

from . import keys
from .models import RegisterSettings, Supplier

# A total this many times over the usual highest (or under the usual lowest) is far outside.
FAR = Decimal(3)
# Handled documents the usual totals are learnt from before a total is judged by them.
MIN_INVOICES = 3
# Tax ids looked at in one document's text (bounds a hostile one).
MAX_TAX_IDS = 50
MAX_TEXT_CHARS = 200_000
MAX_STARTS = 2_000  # places a tax id could start at, tried per document
_TAX_START = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}(?:[ .-]?[0-9A-Z]){2,14}")
_SHORTEST_VAT, _LONGEST_VAT = 8, 14  # letters and digits of an EU or UK VAT id, its prefix included
_IBAN_SHAPE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ -]?[0-9A-Z]{4}){2,7}(?:[ -]?[0-9A-Z]{1,3})?")
PHONE_ADVICE = ("Confirm it by phone with the supplier, on a number you already know, never one from this "
                "invoice or its email, before paying.")


@dataclass(frozen=True)
class Known:
    """A supplier as the register knows it."""

    id: int
    name: str
    name_key: str
    tax_ids: frozenset[str] = frozenset()
    ibans: frozenset[str] = frozenset()
    usual_min: Decimal | None = None
    usual_max: Decimal | None = None
    range_known: bool = True  # set by a member or an import, or learnt from MIN_INVOICES handled ones


@dataclass
class Register:
    """The part of a tenant's register one invoice is checked against (or a whole small one)."""

    suppliers: list[Known] = field(default_factory=list)
    own_tax_ids: frozenset[str] = frozenset()
    empty: bool = False  # the tenant keeps no register (yet): no supplier is "new" to it

    def by_tax_id(self, key: str) -> Known | None:
        return next((s for s in self.suppliers if key and key in s.tax_ids), None)

    def by_name(self, key: str) -> Known | None:
        return next((s for s in self.suppliers if key and s.name_key == key), None)


@dataclass(frozen=True)
class Read:
    """What an invoice says of its supplier, as compared."""

    name: str
    name_key: str
    tax_id: str
    iban: str
    total: Decimal | None


def finding(code: str, field_: str | None, words: str, *, blocks: bool) -> dict[str, Any]:
    return {"code": code, "field": field_, "words": words, "blocks": blocks}


def _value(fields: dict[str, Any], name: str) -> str:
    found = fields.get(name) if isinstance(fields, dict) else None
    value = found.get("value") if isinstance(found, dict) else None
    return value.strip() if isinstance(value, str) else ""


def read_of(fields: dict[str, Any]) -> Read:
    """The supplier's name, tax id (its normal form when the review has one), IBAN and total as read."""
    vat = fields.get("vat_id") if isinstance(fields, dict) else None
    normalized = vat.get("normalized") if isinstance(vat, dict) else None
    tax_id = keys.identifier(normalized if isinstance(normalized, str) and normalized else _value(fields, "vat_id"))
    try:
        total: Decimal | None = Decimal(_value(fields, "total_amount")) if _value(fields, "total_amount") else None
    except InvalidOperation:
        total = None
    name = _value(fields, "supplier_name")
    return Read(name=name, name_key=keys.name(name), tax_id=tax_id,
                iban=keys.identifier(_value(fields, "iban")), total=total)


def match(register: Register, read: Read) -> Known | None:
    """The register's supplier of this invoice: by its tax id, else by its name."""
    return register.by_tax_id(read.tax_id) or register.by_name(read.name_key)


def findings(register: Register, fields: dict[str, Any], text: str = "") -> list[dict[str, Any]]:
    """The register's findings on one reviewed invoice (its ``fields`` and visible ``text``)."""
    read = read_of(fields)
    found: list[dict[str, Any]] = []
    if read.tax_id or read.name_key:
        found += _supplier_findings(register, read)
    known = match(register, read) if read.tax_id or read.name_key else None
    theirs = {read.tax_id} | (set(known.tax_ids) if known else set())  # a supplier may print several of its own
    elsewhere = addressed_elsewhere(register.own_tax_ids, text, supplier_tax_ids=theirs)
    if elsewhere:
        found.append(elsewhere)
    return found


def _supplier_findings(register: Register, read: Read) -> list[dict[str, Any]]:
    owner = register.by_tax_id(read.tax_id)
    named = register.by_name(read.name_key)
    shown = read.name or read.tax_id
    if owner is None and named is None:
        if register.empty:
            return []
        return [finding("new_supplier", None, f"{shown} is not in your supplier register yet: a first invoice "
                        "from it. Check who it is before paying.", blocks=False)]
    found = []
    if owner is not None and read.name_key and owner.name_key != read.name_key and not (
            owner.name_key in read.name_key or read.name_key in owner.name_key):
        found.append(finding("tax_id_other_supplier", "vat_id", f"the tax id {read.tax_id} is registered to "
                             f"another supplier in your register, {owner.name}, not to {shown}", blocks=True))
    supplier = owner or named
    if supplier is None:
        return found
    if read.iban and read.iban not in supplier.ibans:
        known = ", ".join(keys.grouped(i) for i in sorted(supplier.ibans)[:3])
        before = f"it has been paid on {known}" if known else "the register has no account of it yet"
        found.append(finding("bank_details_changed", "iban", "bank details changed: the IBAN "
                             f"{keys.grouped(read.iban)} is one {supplier.name} has never been paid on ({before}). "
                             f"{PHONE_ADVICE}", blocks=True))
    unusual = _unusual(supplier, read.total)
    if unusual:
        found.append(unusual)
    return found


def _unusual(supplier: Known, total: Decimal | None) -> dict[str, Any] | None:
    low, high = supplier.usual_min, supplier.usual_max
    if total is None or low is None or high is None or not supplier.range_known:
        return None
    if total > high * FAR or (low > 0 and total * FAR < low):
        return finding("total_unusual", "total_amount", f"the total {total:,.2f} is far outside what "
                       f"{supplier.name} usually invoices ({low:,.2f} to {high:,.2f})", blocks=True)
    return None


def tax_ids_in(text: str) -> list[str]:
    """The valid VAT ids printed in ``text`` (as compared), in order, without repeats; IBANs left out."""
    text = text[:MAX_TEXT_CHARS]
    ibans = [m.span() for m in _IBAN_SHAPE.finditer(text) if iban_numbers.is_valid(m.group())]
    found: list[str] = []
    starts = 0
    for start in range(len(text) - 1):
        if not (text[start].isupper() and text[start + 1].isupper()) or (start and text[start - 1].isalnum()):
            continue
        starts += 1
        if starts > MAX_STARTS or len(found) >= MAX_TAX_IDS:
            break
        run = _TAX_START.match(text, start)
        if run is None or any(begin <= start < end for begin, end in ibans):
            continue
        compact = keys.identifier(run.group())
        # The longest valid prefix: a word after the id ("DE811907980 Hamburg") is no part of it.
        for length in range(min(len(compact), _LONGEST_VAT), _SHORTEST_VAT - 1, -1):
            if _valid_vat(compact[:length]):
                if compact[:length] not in found:
                    found.append(compact[:length])
                break
    return found


def _valid_vat(compact: str) -> bool:
    return bool(eu_vat.is_valid(compact) or (compact.startswith("GB") and gb_vat.is_valid(compact)))


def addressed_elsewhere(own: Iterable[str], text: str, *, supplier_tax_ids: Iterable[str]) -> dict[str, Any] | None:
    """A finding when the text carries a tax id that is neither the supplier's nor one of the tenant's
    own, and none of the tenant's own: the invoice is another company's. None without own ids set."""
    own = frozenset(own)
    if not own or not text:
        return None
    theirs = set(supplier_tax_ids)
    printed = [t for t in tax_ids_in(text) if t not in theirs]
    if not printed or own & set(printed):
        return None
    return finding("addressed_elsewhere", None, f"the invoice is addressed to someone else: the buyer's tax id "
                   f"{printed[0]} is not one of yours ({', '.join(sorted(own))})", blocks=True)


def snapshot(tenant_id: int, read: Read) -> Register:
    """The tenant's suppliers this invoice could be (by tax id or name), and its own tax ids."""
    rows = Supplier.objects.filter(tenant_id=tenant_id, name_key=read.name_key or None)
    if read.tax_id:
        rows = rows | Supplier.objects.filter(tenant_id=tenant_id, tax_ids__value=read.tax_id)
    suppliers = [known(s) for s in rows.distinct().prefetch_related("tax_ids", "ibans")[:5]]
    own = RegisterSettings.objects.filter(tenant_id=tenant_id).values_list("own_tax_ids", flat=True).first() or ""
    empty = not suppliers and not Supplier.objects.filter(tenant_id=tenant_id).exists()
    return Register(suppliers=suppliers, own_tax_ids=frozenset(own.split()), empty=empty)


def known(supplier: Supplier) -> Known:
    return Known(id=supplier.pk, name=supplier.name, name_key=supplier.name_key,
                 tax_ids=frozenset(t.value for t in supplier.tax_ids.all()),
                 ibans=frozenset(i.iban for i in supplier.ibans.all()),
                 usual_min=supplier.usual_min, usual_max=supplier.usual_max,
                 range_known=supplier.range_fixed or supplier.invoices >= MIN_INVOICES)


def review(*, tenant_id: int, fields: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """The register's findings on one of the tenant's invoices (the review's validate step)."""
    return findings(snapshot(tenant_id, read_of(fields)), fields, text)


def supplier_id(*, tenant_id: int, fields: dict[str, Any]) -> int | None:
    """The register's supplier of an invoice of this tenant, for matching duplicates; None when unknown."""
    read = read_of(fields)
    if not (read.tax_id or read.name_key):
        return None
    found = match(snapshot(tenant_id, read), read)
    return found.id if found else None
