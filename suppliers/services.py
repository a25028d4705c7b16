"""Every write of the supplier register, each with its history line in the same transaction.

- ``remember``: what a document marked handled says of its supplier (called by the document's
  work state change, inside its transaction).
- ``import_rows``: the accounting system's suppliers (``imports.parse``), all rows or none.
- ``edit``: a member's change of one supplier, over the version she read.
- ``set_own_tax_ids``, ``set_currencies``: the tenant's own tax ids, the currencies it pays in,
  each change with its line in the settings' history.

A supplier's row changes only by a guarded update over the version read (``Busy`` when another
write came between); a tax id belongs to one supplier of a tenant (a unique constraint).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F

from . import imports, keys
from .models import RegisterSettings, SettingsChange, Supplier, SupplierChange, SupplierIban, SupplierTaxId
from .review import read_of

Action = SupplierChange.Action
SETTING_NAMES = {"own_tax_ids": "own tax ids", "currencies": "currencies"}  # as the history names them
TRIES = 3


class RegisterRefused(Exception):
    """A change refused, in the member's words (``code`` for API clients); nothing was written."""

    def __init__(self, code: str, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.field = code, message, field


class Busy(RegisterRefused):
    def __init__(self) -> None:
        super().__init__("busy", "someone changed this supplier at the same moment: look again, then try again")


@dataclass(frozen=True)
class By:
    """Who changes the register: a member (id and name), or a handled document (its job)."""

    user_id: int | None = None
    name: str = ""
    job_id: int | None = None


def _log(supplier: Supplier, by: By, now: datetime, action: str, field: str = "", *, before: Any = "",
         after: Any = "") -> None:
    SupplierChange.objects.create(tenant_id=supplier.tenant_id, supplier=supplier, at=now, by_id=by.user_id,
                                  by_name=by.name[:150], action=action, field=field, before=_shown(before)[:300],
                                  after=_shown(after)[:300], job_id=by.job_id)


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (set, frozenset, list, tuple)):
        return ", ".join(sorted(str(v) for v in value))
    return str(value)


def _update(supplier: Supplier, now: datetime, **values: Any) -> None:
    """The guarded write: only over the version read; ``Busy`` when another write came between."""
    if not Supplier.objects.filter(pk=supplier.pk, tenant_id=supplier.tenant_id, version=supplier.version).update(
            version=F("version") + 1, updated_at=now, **values):
        raise Busy()
    supplier.version += 1
    for name, value in values.items():
        setattr(supplier, name, value)


def _create(tenant_id: int, name: str, *, by: By, now: datetime, **values: Any) -> Supplier:
    try:
        with transaction.atomic():  # a savepoint: another write made it meanwhile is no error
            supplier = Supplier.objects.create(tenant_id=tenant_id, name=name[:200], name_key=keys.name(name),
                                               created_at=now, updated_at=now, **values)
    except IntegrityError:
        raise Busy() from None
    _log(supplier, by, now, Action.CREATED, "name", after=name)
    if supplier.currency:
        _log(supplier, by, now, Action.DOCUMENT if by.job_id else Action.CREATED, "currency", after=supplier.currency)
    return supplier


def _add_tax_id(supplier: Supplier, value: str, by: By, now: datetime, action: str) -> bool:
    """The tax id added to this supplier, unless another supplier of the tenant has it (False)."""
    owner = SupplierTaxId.objects.filter(tenant_id=supplier.tenant_id, value=value).values_list(
        "supplier_id", flat=True).first()
    if owner is not None:
        return owner == supplier.pk
    try:
        with transaction.atomic():
            SupplierTaxId.objects.create(tenant_id=supplier.tenant_id, supplier=supplier, value=value)
    except IntegrityError:
        return False
    _log(supplier, by, now, action, "tax id", after=value)
    return True


def _add_iban(supplier: Supplier, iban: str, *, by: By, now: datetime, action: str, source: str,
              on: date, paid: bool) -> None:
    """The IBAN recorded (first seen ``on``), or its last use moved on when it is known."""
    known = SupplierIban.objects.filter(supplier=supplier, iban=iban)
    if known.update(times=F("times") + 1 if paid else F("times")):
        known.filter(last_seen__lt=on).update(last_seen=on)  # an older invoice handled later moves neither
        known.filter(first_seen__gt=on).update(first_seen=on)  # date the wrong way
        return
    try:
        with transaction.atomic():
            SupplierIban.objects.create(tenant_id=supplier.tenant_id, supplier=supplier, iban=iban, first_seen=on,
                                        last_seen=on, times=1 if paid else 0, source=source)
    except IntegrityError:
        raise Busy() from None
    _log(supplier, by, now, action, "IBAN", after=keys.grouped(iban))


# --- From a handled document ------------------------------------------------------------------


def remember(*, tenant_id: int, job_id: int, fields: dict[str, Any], on: date, now: datetime,
             by: By | None = None) -> Supplier | None:
    """What a handled document says of its supplier, into the register: the supplier (new, or
    found by its tax id, else its name), its tax id when no other supplier has it, the IBAN it was
    paid on with the date, its currency, the usual totals. None when it names no supplier."""
    read = read_of(fields)
    if not (read.name_key or read.tax_id):
        return None
    by = By(user_id=by.user_id if by else None, name=by.name if by else "", job_id=job_id)
    for _ in range(TRIES):
        try:
            with transaction.atomic():
                return _remember(tenant_id, read, fields, on=on, now=now, by=by)
        except Busy:
            continue
    raise Busy()


def _remember(tenant_id: int, read: Any, fields: dict[str, Any], *, on: date, now: datetime, by: By) -> Supplier:
    found = None
    if read.tax_id:
        found = Supplier.objects.filter(tenant_id=tenant_id, tax_ids__value=read.tax_id).first()
    if found is None and read.name_key:
        found = Supplier.objects.filter(tenant_id=tenant_id, name_key=read.name_key).first()
    currency = _currency(fields)
    if found is None:
        found = _create(tenant_id, read.name or read.tax_id, by=by, now=now, currency=currency)
    values: dict[str, Any] = {"invoices": found.invoices + 1, "last_seen": max(filter(None, (found.last_seen, on))),
                              "first_seen": min(filter(None, (found.first_seen, on)))}
    if currency and not found.currency:
        values["currency"] = currency
        _log(found, by, now, Action.DOCUMENT, "currency", after=currency)
    if read.total is not None and not found.range_fixed:
        low = read.total if found.usual_min is None else min(found.usual_min, read.total)
        high = read.total if found.usual_max is None else max(found.usual_max, read.total)
        if (low, high) != (found.usual_min, found.usual_max):
            values.update(usual_min=low, usual_max=high)
    _update(found, now, **values)
    if read.tax_id:
        _add_tax_id(found, read.tax_id, by, now, Action.DOCUMENT)
    if read.iban:
        _add_iban(found, read.iban, by=by, now=now, action=Action.DOCUMENT, source=SupplierIban.Source.DOCUMENT, on=on,
                  paid=True)
    return found


def _currency(fields: dict[str, Any]) -> str:
    currency = fields.get("currency") if isinstance(fields, dict) else None
    value = currency.get("value") if isinstance(currency, dict) and currency.get("status") == "present" else ""
    return value.upper() if isinstance(value, str) and re.fullmatch(r"[A-Za-z]{3}", value) else ""


# --- From the accounting system ---------------------------------------------------------------


@dataclass(frozen=True)
class Imported:
    created: int
    updated: int


def import_rows(*, tenant_id: int, rows: list[imports.Row], by: By, now: datetime) -> Imported:
    """The rows into the tenant's register: a row's supplier is the one with one of its tax ids, else
    its name, else a new one; its tax ids, IBANs, currency and usual totals added. All or nothing:
    ``imports.ImportRefused`` with each line's error (a tax id of another supplier) changes nothing."""
    created = updated = 0
    with transaction.atomic():
        errors = []
        plan: list[tuple[imports.Row, Supplier | None]] = []
        for row in rows:
            owners = {s for s in Supplier.objects.filter(tenant_id=tenant_id, tax_ids__value__in=row.tax_ids)}
            named = Supplier.objects.filter(tenant_id=tenant_id, name_key=row.name_key).first()
            target = named or (next(iter(owners)) if len(owners) == 1 else None)
            others = sorted(o.name for o in owners if target is None or o.pk != target.pk)
            if others:
                errors.append(f"line {row.line}: a tax id of {row.name} is registered to another supplier, "
                              f"{others[0]}")
            plan.append((row, target))
        if errors:
            raise imports.ImportRefused(errors[: imports.MAX_ERRORS])
        for row, matched in plan:
            target = matched or _create(tenant_id, row.name, by=by, now=now)
            created += matched is None
            updated += matched is not None
            values: dict[str, Any] = {}
            if row.currency and row.currency != target.currency:
                _log(target, by, now, Action.IMPORTED, "currency", before=target.currency, after=row.currency)
                values["currency"] = row.currency
            if row.usual_min is not None and (row.usual_min, row.usual_max) != (target.usual_min, target.usual_max):
                _log(target, by, now, Action.IMPORTED, "usual totals",
                     before=_range(target.usual_min, target.usual_max), after=_range(row.usual_min, row.usual_max))
                values.update(usual_min=row.usual_min, usual_max=row.usual_max, range_fixed=True)
            if values:
                _update(target, now, **values)
            for tax in row.tax_ids:
                _add_tax_id(target, tax, by, now, Action.IMPORTED)
            for iban in row.ibans:
                _add_iban(target, iban, by=by, now=now, action=Action.IMPORTED, source=SupplierIban.Source.IMPORT,
                          on=now.date(), paid=False)
    return Imported(created=created, updated=updated)


def _range(low: Decimal | None, high: Decimal | None) -> str:
    return "" if low is None or high is None else f"{low} to {high}"


# --- A member's edit ----------------------------------------------------------------------------


def edit(*, tenant_id: int, supplier_id: int, version: int, by: By, now: datetime, name: str, tax_ids: list[str],
         ibans: list[str], currency: str, usual_min: Decimal | None, usual_max: Decimal | None) -> int:
    """Set one supplier's name, tax ids, IBANs, currency and usual totals as the member typed them
    (already checked: ``forms.SupplierForm``), over the ``version`` she read. Returns how many
    history lines were written. ``RegisterRefused``: another tenant's supplier (not_found), a tax
    id of another supplier, a stale version (busy)."""
    with transaction.atomic():
        supplier = Supplier.objects.filter(pk=supplier_id, tenant_id=tenant_id).first()
        if supplier is None:
            raise RegisterRefused("not_found", "no such supplier")
        if supplier.version != version:
            raise Busy()
        lines = SupplierChange.objects.filter(supplier=supplier).count()
        taken = (SupplierTaxId.objects.filter(tenant_id=tenant_id, value__in=tax_ids).exclude(supplier=supplier)
                 .select_related("supplier").first())
        if taken is not None:
            raise RegisterRefused("tax_id_taken", f"the tax id {taken.value} is registered to another supplier, "
                                  f"{taken.supplier.name}", field="tax_ids")
        values: dict[str, Any] = {}
        if name != supplier.name:
            if Supplier.objects.filter(tenant_id=tenant_id, name_key=keys.name(name)).exclude(pk=supplier.pk).exists():
                raise RegisterRefused("name_taken", f"another supplier is already called {name}", field="name")
            _log(supplier, by, now, Action.CHANGED, "name", before=supplier.name, after=name)
            values.update(name=name, name_key=keys.name(name))
        if currency != supplier.currency:
            _log(supplier, by, now, Action.CHANGED, "currency", before=supplier.currency, after=currency)
            values["currency"] = currency
        if (usual_min, usual_max) != (supplier.usual_min, supplier.usual_max):
            _log(supplier, by, now, Action.CHANGED, "usual totals",
                 before=_range(supplier.usual_min, supplier.usual_max), after=_range(usual_min, usual_max))
            values.update(usual_min=usual_min, usual_max=usual_max, range_fixed=usual_min is not None)
        try:
            _update(supplier, now, **values)
        except IntegrityError:
            raise Busy() from None
        current_tax = set(supplier.tax_ids.values_list("value", flat=True))
        for gone in sorted(current_tax - set(tax_ids)):
            SupplierTaxId.objects.filter(supplier=supplier, value=gone).delete()
            _log(supplier, by, now, Action.CHANGED, "tax id", before=gone)
        for new in tax_ids:
            if new not in current_tax and not _add_tax_id(supplier, new, by, now, Action.CHANGED):
                raise Busy()
        current_ibans = set(supplier.ibans.values_list("iban", flat=True))
        for gone in sorted(current_ibans - set(ibans)):
            SupplierIban.objects.filter(supplier=supplier, iban=gone).delete()
            _log(supplier, by, now, Action.CHANGED, "IBAN", before=keys.grouped(gone))
        for new in ibans:
            if new not in current_ibans:
                _add_iban(supplier, new, by=by, now=now, action=Action.CHANGED, source=SupplierIban.Source.EDIT,
                          on=now.date(), paid=False)
        return SupplierChange.objects.filter(supplier=supplier).count() - lines


def set_own_tax_ids(*, tenant_id: int, values: list[str], by: By, now: datetime) -> None:
    """The tenant's own tax ids (as compared), replacing those set before."""
    _set(tenant_id, "own_tax_ids", " ".join(dict.fromkeys(values))[:500], by=by, now=now)


def set_currencies(*, tenant_id: int, values: list[str], by: By, now: datetime) -> None:
    """The currencies the tenant pays in (ISO codes), replacing those set before; none: the review's default."""
    _set(tenant_id, "currencies", " ".join(dict.fromkeys(values))[:200], by=by, now=now)


def _set(tenant_id: int, name: str, value: str, *, by: By, now: datetime) -> None:
    """One setting, with its history line when it changes (in one transaction)."""
    with transaction.atomic():
        current = RegisterSettings.objects.select_for_update().filter(tenant_id=tenant_id).first()
        before = getattr(current, name) if current is not None else ""
        if current is not None and before == value:
            return
        RegisterSettings.objects.update_or_create(
            tenant_id=tenant_id, defaults={name: value, "updated_at": now, "updated_by_id": by.user_id})
        SettingsChange.objects.create(tenant_id=tenant_id, at=now, by_id=by.user_id, by_name=by.name[:150],
                                      field=SETTING_NAMES[name], before=before, after=value)


def settings_history(tenant_id: int, limit: int = 100) -> list[SettingsChange]:
    return list(SettingsChange.objects.filter(tenant_id=tenant_id).order_by("-id")[:limit])


def currencies(tenant_id: int) -> list[str]:
    found = RegisterSettings.objects.filter(tenant_id=tenant_id).values_list("currencies", flat=True).first()
    return (found or "").split()


def own_tax_ids(tenant_id: int) -> list[str]:
    found = RegisterSettings.objects.filter(tenant_id=tenant_id).values_list("own_tax_ids", flat=True).first()
    return (found or "").split()
