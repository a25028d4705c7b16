"""The budget's one setting: ``PROVIDER_SLOTS``, the calls to the model provider in flight at
once across all workers and hosts (4 unless the project says otherwise).

It was the queue's ``JOBS["PROVIDER_SLOTS"]`` (environment ``JOBS_PROVIDER_SLOTS``) before the
budget left the queue; this repository's project still reads it from that variable too
(``jobsite/settings.py``).
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

DEFAULT_SLOTS = 4


def slots() -> int:
    """``settings.PROVIDER_SLOTS``, a whole number above 0; read on each call, so a test's
    ``settings`` fixture changes it at once."""
    value = getattr(settings, "PROVIDER_SLOTS", DEFAULT_SLOTS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ImproperlyConfigured(f"PROVIDER_SLOTS (PROVIDER_SLOTS, JOBS_PROVIDER_SLOTS) must be a whole number "
                                   f"above 0, not {value!r}")
    return value
