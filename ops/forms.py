"""The instruments' controls, validated the same way for the page and the command."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms

from . import capacity, lab, units


class LabForm(forms.Form):
    lease = forms.IntegerField(min_value=lab.LEASES[0], max_value=lab.LEASES[-1], initial=10,
                               help_text="Logical seconds, 5 to 30.")
    crash = forms.ChoiceField(
        choices=[("none", "none (healthy)"), ("before-effect", "before the external effect"),
                 ("after-marker", "after the external-start marker")],
        initial="none",
    )


class CapacityForm(forms.Form):
    """The initial values are an example workload that is easy to check by hand.

    6 jobs a minute at 20 s each on 3 workers with a 90 s deadline: 2 jobs in flight, 67 %
    busy, a burst of 12 finishing in four waves at 20-80 s (10 s to spare), and 100 pollers
    that outnumber the state writes, so the page opens with two warnings to read. Blank
    optional fields are ``None``: ``capacity.workload`` gives them the ``Workload`` defaults.
    """

    rate = forms.CharField(initial="6/min", required=False, help_text="Arrivals, e.g. 6/min, 0.1/s, 360/h.")
    service = forms.FloatField(initial=20, min_value=0.001, max_value=capacity.MAX_SECONDS, required=False,
                               help_text="Seconds per job.")
    observed = forms.CharField(required=False, help_text="Or take rate and service time from the job table over "
                                                          "this window, e.g. 1h, 30min, 7d.")
    workers = forms.IntegerField(initial=3, min_value=1, max_value=10_000)
    deadline = forms.FloatField(initial=90, min_value=0.001, max_value=capacity.MAX_SECONDS, help_text="Seconds.")
    burst = forms.IntegerField(initial=12, min_value=0, max_value=1_000_000, required=False)
    pollers = forms.IntegerField(initial=100, min_value=0, max_value=10_000_000, required=False)
    poll_interval = forms.FloatField(initial=1, min_value=0.001, max_value=capacity.MAX_SECONDS, required=False,
                                     help_text="Seconds.")
    writes_per_job = forms.FloatField(initial=5, min_value=0, max_value=capacity.MAX_RATE, required=False)

    @classmethod
    def example(cls) -> dict[str, object]:
        """The initial values as submitted data: the page computes the example without a query."""
        return {name: f.initial for name, f in cls.base_fields.items() if f.initial is not None}

    def clean_rate(self) -> float | None:
        value = self.cleaned_data["rate"].strip()
        if not value:
            return None
        try:
            return units.parse_rate(value)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_observed(self) -> timedelta | None:
        value = self.cleaned_data["observed"].strip()
        if not value:
            return None
        try:
            return units.parse_duration(value)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if not data.get("observed") and (data.get("rate") is None or data.get("service") is None) \
                and not self.errors:
            raise forms.ValidationError("Give a rate and a service time, or an observed window.")
        return data
