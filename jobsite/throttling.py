"""Login throttling that does not lock out an office.

django-axes counts failures per username *from an address* (``AXES_LOCKOUT_PARAMETERS``
``[["username", "ip_address"]]``): ten wrong passwords for bob lock bob out from that address,
not alice beside him behind the same NAT, and not bob from home. An address is also locked
across all usernames, but only at ``LOGIN_ADDRESS_FAILURE_LIMIT`` (ten times as many), which
stops one address spraying a common password over many accounts.

Axes compares one failure count against one limit, so the address's count is scaled onto it:
``AXES_FAILURE_LIMIT`` failures of a username from the address, or the address's
``LOGIN_ADDRESS_FAILURE_LIMIT``, both reach the limit.
"""

from __future__ import annotations

from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest


class OfficeFriendlyHandler(AxesDatabaseHandler):  # type: ignore[misc]  # axes ships no types: its class is Any
    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        per_username: int = super().get_failures(request, credentials)  # this username from this address
        per_address = address_failures(request)
        return max(per_username, per_address * settings.AXES_FAILURE_LIMIT // settings.LOGIN_ADDRESS_FAILURE_LIMIT)


def address_failures(request: HttpRequest) -> int:
    """Failures from the request's address, for any username, within the cool-off."""
    address = getattr(request, "axes_ip_address", None)
    if not address:
        return 0
    total = (AccessAttempt.objects.filter(ip_address=address, attempt_time__gte=get_cool_off_threshold(request))
             .aggregate(total=Sum("failures_since_start"))["total"])
    return total or 0
