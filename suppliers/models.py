"""The tenant's supplier register: who its suppliers are, their tax ids, the bank accounts they
have been paid on, their currency and usual totals, and every change with who made it.

Written only by ``suppliers.services`` (from documents marked handled, a CSV import, a member's
edit); read at review by ``suppliers.review``. Every row names its tenant, and every look-up
starts with it.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Supplier(models.Model):
    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="+", db_index=False)
    name = models.CharField(max_length=200)
    name_key = models.CharField(max_length=200, help_text="The name as compared (suppliers.keys.name).")
    currency = models.CharField(max_length=3, blank=True, help_text="ISO 4217; empty: not known yet.")
    usual_min = models.DecimalField(max_digits=16, decimal_places=2, null=True, blank=True,
                                    help_text="The lowest total usually invoiced; empty: not known yet.")
    usual_max = models.DecimalField(max_digits=16, decimal_places=2, null=True, blank=True,
                                    help_text="The highest total usually invoiced; empty: not known yet.")
    range_fixed = models.BooleanField(default=False, help_text="The usual totals were set by a member or an import "
                                                               "(else learnt from handled documents).")
    invoices = models.PositiveIntegerField(default=0, help_text="Handled documents recorded.")
    first_seen = models.DateField(null=True, blank=True)
    last_seen = models.DateField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1, help_text="Raised by every change: the conditional write's guard.")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "name_key"], name="supplier_tenant_name_unique")]
        indexes = [models.Index(fields=["tenant", "name"], name="supplier_tenant_list_idx")]

    def __str__(self) -> str:
        return self.name


class SupplierTaxId(models.Model):
    """A tax id (VAT id or a national one) and the one supplier of the tenant it belongs to."""

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="+", db_index=False)
    supplier = models.ForeignKey(Supplier, on_delete=models.CASCADE, related_name="tax_ids")
    value = models.CharField(max_length=40, help_text="As compared: letters and digits, upper case.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "value"], name="suppliertaxid_tenant_unique")]

    def __str__(self) -> str:
        return self.value


class SupplierIban(models.Model):
    """A bank account a supplier has been paid on (or the books say it uses), with when it was seen."""

    class Source(models.TextChoices):
        DOCUMENT = "document", "a handled document"
        IMPORT = "import", "the accounting system's import"
        EDIT = "edit", "entered by a member"

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="+", db_index=False)
    supplier = models.ForeignKey(Supplier, on_delete=models.CASCADE, related_name="ibans")
    iban = models.CharField(max_length=34, help_text="As compared: letters and digits, upper case.")
    first_seen = models.DateField()
    last_seen = models.DateField()
    times = models.PositiveIntegerField(default=0, help_text="Handled documents that paid into it.")
    source = models.CharField(max_length=10, choices=Source.choices)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["supplier", "iban"], name="supplieriban_unique")]
        indexes = [models.Index(fields=["tenant", "iban"], name="supplieriban_tenant_idx")]

    def __str__(self) -> str:
        return self.iban


class SupplierChange(models.Model):
    """One change of the register: which supplier, what (a field, from -> to), who or which document."""

    class Action(models.TextChoices):
        CREATED = "created", "created"
        CHANGED = "changed", "changed"
        IMPORTED = "imported", "imported"
        DOCUMENT = "document", "from a handled document"

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="+", db_index=False)
    supplier = models.ForeignKey(Supplier, on_delete=models.CASCADE, related_name="changes", db_index=False)
    at = models.DateTimeField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                           related_name="+")
    by_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=10, choices=Action.choices)
    field = models.CharField(max_length=20, blank=True)
    before = models.CharField(max_length=300, blank=True)
    after = models.CharField(max_length=300, blank=True)
    job = models.ForeignKey("jobs.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                            help_text="The handled document it was learnt from.")

    class Meta:
        indexes = [models.Index(fields=["supplier", "id"], name="supplierchange_supplier_idx")]

    def __str__(self) -> str:
        return f"{self.action} {self.field or ''} of supplier {self.supplier_id}"


class RegisterSettings(models.Model):
    """The tenant's own tax ids (an invoice whose buyer's tax id is none of them is addressed to someone
    else) and the currencies it pays in (an invoice in another is Alice's finding, never the supplier's)."""

    tenant = models.OneToOneField("accounts.Tenant", on_delete=models.CASCADE, primary_key=True,
                                  related_name="register_settings")
    own_tax_ids = models.CharField(max_length=500, blank=True,
                                   help_text="Our own VAT and tax ids, as compared, separated by spaces.")
    currencies = models.CharField(max_length=200, blank=True,
                                  help_text="The currencies we pay in, ISO 4217 codes separated by spaces; "
                                            "empty: the review's default list.")
    updated_at = models.DateTimeField()
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")

    class Meta:
        verbose_name = "register settings"
        verbose_name_plural = "register settings"

    def __str__(self) -> str:
        return f"register settings of {self.tenant_id}"


class SettingsChange(models.Model):
    """One change of the tenant's register settings: which setting, from -> to, who."""

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="+", db_index=False)
    at = models.DateTimeField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                           related_name="+")
    by_name = models.CharField(max_length=150, blank=True)
    field = models.CharField(max_length=20)
    before = models.CharField(max_length=500, blank=True)
    after = models.CharField(max_length=500, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "id"], name="settingschange_tenant_idx")]

    def __str__(self) -> str:
        return f"{self.field} of tenant {self.tenant_id}"
