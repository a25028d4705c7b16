"""The forms of the register's pages: a supplier's edit and the tenant's own tax ids.

Each value is checked as the CSV import checks it (``imports``), so a typed IBAN with wrong
check digits is refused the same way a file's is.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms

from . import imports

MAX_LINES = imports.MAX_VALUES
CENT = Decimal("0.01")


def _lines(value: str, check: Any, what: str) -> list[str]:
    values = [v.strip() for v in value.replace(",", "\n").splitlines() if v.strip()]
    if len(values) > MAX_LINES:
        raise forms.ValidationError(f"at most {MAX_LINES} {what}")
    try:
        return list(dict.fromkeys(check(v) for v in values))
    except ValueError as exc:
        raise forms.ValidationError(str(exc)) from None


class SupplierForm(forms.Form):
    name = forms.CharField(max_length=imports.MAX_NAME)
    tax_ids = forms.CharField(required=False, label="Tax ids", widget=forms.Textarea(attrs={"rows": 2}),
                              help_text="One per line.")
    ibans = forms.CharField(required=False, label="IBANs", widget=forms.Textarea(attrs={"rows": 3}),
                            help_text="One per line. An IBAN removed here is one the supplier is no longer paid on.")
    currency = forms.CharField(required=False, max_length=3, help_text="Three letters: EUR, GBP...")
    usual_min = forms.DecimalField(required=False, min_value=Decimal(0), max_digits=16, decimal_places=2,
                                   label="Lowest usual total", widget=forms.TextInput(attrs={"inputmode": "decimal"}))
    usual_max = forms.DecimalField(required=False, min_value=Decimal(0), max_digits=16, decimal_places=2,
                                   label="Highest usual total", help_text="A total far outside these is flagged at "
                                   "review. Empty: learnt from the documents you mark handled.",
                                   widget=forms.TextInput(attrs={"inputmode": "decimal"}))
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if not name:
            raise forms.ValidationError("the supplier's name is empty")
        return name

    def clean_tax_ids(self) -> list[str]:
        return _lines(self.cleaned_data["tax_ids"], imports.tax_id_of, "tax ids")

    def clean_ibans(self) -> list[str]:
        return _lines(self.cleaned_data["ibans"], imports.iban_of, "IBANs")

    def clean_currency(self) -> str:
        currency: str = self.cleaned_data["currency"].strip().upper()
        if currency and not imports.CURRENCY.fullmatch(currency):
            raise forms.ValidationError("a three-letter ISO code (EUR, GBP...)")
        return currency

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        low, high = data.get("usual_min"), data.get("usual_max")
        if (low is None) != (high is None) and not self.errors:
            raise forms.ValidationError("give both usual totals, or neither")
        if low is not None and high is not None and low > high:
            self.add_error("usual_max", "the highest usual total is less than the lowest")
        for name in ("usual_min", "usual_max"):
            if data.get(name) is not None:
                data[name] = data[name].quantize(CENT)
        return data


MAX_CURRENCIES = 40


def currency_of(value: str) -> str:
    """A currency the tenant pays in, as stored; ValueError in words when it is no ISO code's shape."""
    code = value.strip().upper()
    if not imports.CURRENCY.fullmatch(code):
        raise ValueError(f"{value.strip()!r} is not a three-letter ISO currency code (EUR, GBP...)")
    return code


class OwnTaxIdsForm(forms.Form):
    own_tax_ids = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                                  help_text="Your company's own VAT and tax ids, one per line.")
    currencies = forms.CharField(required=False, max_length=MAX_CURRENCIES * 4, label="Currencies you pay in",
                                 widget=forms.TextInput(attrs={"aria-describedby": "currencies-hint",
                                                               "autocomplete": "off"}),
                                 help_text="Three-letter codes separated by spaces (EUR GBP). An invoice in another "
                                           "currency is your finding to accept, never a question to the supplier. "
                                           "Empty: the review's default list.")

    def clean_currencies(self) -> list[str]:
        values = [v for v in self.cleaned_data["currencies"].replace(",", " ").split() if v]
        if len(values) > MAX_CURRENCIES:
            raise forms.ValidationError(f"at most {MAX_CURRENCIES} currencies")
        try:
            return list(dict.fromkeys(currency_of(v) for v in values))
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_own_tax_ids(self) -> list[str]:
        return _lines(self.cleaned_data["own_tax_ids"], imports.tax_id_of, "tax ids")
