"""The register's pages: the tenant's suppliers, one supplier with its IBANs and history (and its
edit), the CSV import, and the tenant's own tax ids and the currencies it pays in.

Every member of the tenant reads them; only members with ``suppliers.change_supplier`` change
anything (a superuser grants it to the tenant's administrator). Another tenant's supplier is
the same 404 as an unknown one. Writes go through ``suppliers.services``.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpResponse
from django.urls import reverse

from jobs.clock import queue_clock
from web.edge import EdgeRequest, HttpError, endpoint
from web.views import see_other

from . import forms, imports, keys, services
from .models import Supplier, SupplierChange

PERMISSION = "suppliers.change_supplier"
MAX_LISTED = 500
MAX_HISTORY = 200


def _tenant(asked: EdgeRequest) -> int:
    if asked.tenant_id is None:
        raise HttpError(404, "not_found", "no supplier register: your account belongs to no team")
    return asked.tenant_id


def _editor(asked: EdgeRequest) -> services.By:
    """The member changing the register, if she may (``PERMISSION``)."""
    _tenant(asked)
    user = asked.identity.user
    if not user.has_perm(PERMISSION):
        raise HttpError(403, "forbidden", "only members allowed to change the supplier register can: ask your "
                                          "team's administrator for the permission")
    return services.By(user_id=user.pk, name=user.get_username())


@endpoint("GET")
def supplier_list(asked: EdgeRequest) -> HttpResponse:
    tenant_id = _tenant(asked)
    suppliers = (Supplier.objects.filter(tenant_id=tenant_id).order_by("name", "id")
                 .prefetch_related("tax_ids", "ibans")[:MAX_LISTED])
    return asked.page("suppliers/supplier_list.html", {
        "nav": "suppliers", "suppliers": [_row(s) for s in suppliers], "may_change": asked.identity.user.has_perm(
            PERMISSION), "total": Supplier.objects.filter(tenant_id=tenant_id).count(), "max_listed": MAX_LISTED,
    })


def _row(supplier: Supplier) -> dict[str, Any]:
    ibans = sorted(supplier.ibans.all(), key=lambda i: i.last_seen, reverse=True)
    return {"supplier": supplier, "tax_ids": [t.value for t in supplier.tax_ids.all()],
            "ibans": [keys.grouped(i.iban) for i in ibans]}


@endpoint("GET", "POST")
def supplier_detail(asked: EdgeRequest, supplier_id: int) -> HttpResponse:
    tenant_id = _tenant(asked)
    supplier = Supplier.objects.filter(pk=supplier_id, tenant_id=tenant_id).first()
    if supplier is None:
        raise HttpError(404, "not_found", "no such supplier")
    form = None
    if asked.request.method == "POST":
        by = _editor(asked)
        form = forms.SupplierForm(asked.request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                lines = services.edit(tenant_id=tenant_id, supplier_id=supplier.pk, version=data["version"], by=by,
                                      now=queue_clock.now(), name=data["name"], tax_ids=data["tax_ids"],
                                      ibans=data["ibans"], currency=data["currency"], usual_min=data["usual_min"],
                                      usual_max=data["usual_max"])
            except services.RegisterRefused as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                messages.success(asked.request, "Saved." if lines else "Nothing changed.")
                return see_other(reverse("supplier_detail", args=[supplier.pk]))
    return _detail(asked, supplier, form)


def _detail(asked: EdgeRequest, supplier: Supplier, form: forms.SupplierForm | None) -> HttpResponse:
    ibans = list(supplier.ibans.order_by("-last_seen", "iban"))
    tax_ids = [t.value for t in supplier.tax_ids.order_by("value")]
    may_change = asked.identity.user.has_perm(PERMISSION)
    if form is None and may_change:
        form = forms.SupplierForm(initial={
            "name": supplier.name, "tax_ids": "\n".join(tax_ids),
            "ibans": "\n".join(keys.grouped(i.iban) for i in ibans), "currency": supplier.currency,
            "usual_min": supplier.usual_min, "usual_max": supplier.usual_max,
            "version": supplier.version})
    history = (SupplierChange.objects.filter(supplier=supplier).select_related("job").order_by("-id")[:MAX_HISTORY])
    return asked.page("suppliers/supplier_detail.html", {
        "nav": "suppliers", "supplier": supplier, "tax_ids": tax_ids,
        "ibans": [{"iban": keys.grouped(i.iban), "row": i} for i in ibans], "history": history,
        "form": form, "may_change": may_change,
    }, status=400 if form is not None and form.is_bound and form.errors else 200)


@endpoint("GET", "POST")
def supplier_import(asked: EdgeRequest) -> HttpResponse:
    by = _editor(asked)
    errors: list[str] = []
    if asked.request.method == "POST":
        upload = asked.request.FILES.get("file")
        if upload is None:
            errors = ["choose the CSV file exported from your accounting system"]
        elif upload.size and upload.size > imports.MAX_BYTES:
            errors = [f"the file is larger than {imports.MAX_BYTES // 1_000_000} MB"]
        else:
            try:
                rows = imports.parse(upload.read(imports.MAX_BYTES + 1))
                done = services.import_rows(tenant_id=_tenant(asked), rows=rows, by=by, now=queue_clock.now())
            except imports.ImportRefused as exc:
                errors = exc.errors
            else:
                messages.success(asked.request, f"Imported {len(rows)} supplier{'s' if len(rows) != 1 else ''}: "
                                               f"{done.created} new, {done.updated} updated.")
                return see_other(reverse("supplier_list"))
    return asked.page("suppliers/supplier_import.html", {"nav": "suppliers", "errors": errors,
                                                        "columns": imports.COLUMNS},
                     status=400 if errors else 200)


@endpoint("GET", "POST")
def register_settings(asked: EdgeRequest) -> HttpResponse:
    by = _editor(asked)
    tenant_id = _tenant(asked)
    if asked.request.method == "POST":
        form = forms.OwnTaxIdsForm(asked.request.POST)
        if form.is_valid():
            now = queue_clock.now()
            with transaction.atomic():
                services.set_own_tax_ids(tenant_id=tenant_id, values=form.cleaned_data["own_tax_ids"], by=by, now=now)
                services.set_currencies(tenant_id=tenant_id, values=form.cleaned_data["currencies"], by=by, now=now)
            messages.success(asked.request, "Saved.")
            return see_other(reverse("register_settings"))
    else:
        form = forms.OwnTaxIdsForm(initial={"own_tax_ids": "\n".join(services.own_tax_ids(tenant_id)),
                                            "currencies": " ".join(services.currencies(tenant_id))})
    return asked.page("suppliers/register_settings.html", {"nav": "suppliers", "form": form,
                                                          "history": services.settings_history(tenant_id)},
                     status=400 if form.is_bound and form.errors else 200)
