"""Who may use the instruments: staff sessions; for ``/metrics`` also a scrape token.

One rule for "staff" (signed in, active, ``is_staff``), applied two ways: the pages send
anonymous visitors to the login page, while ``/metrics`` answers a scraper in plain text,
which cannot follow a login redirect.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser

    from accounts.models import User

View = Callable[..., HttpResponse]
SCRAPE_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="metrics"'}


def is_staff(user: User | AnonymousUser) -> bool:
    return bool(user.is_authenticated and user.is_active and user.is_staff)


def staff_only(view: View) -> View:
    """Anonymous: to the login page. Signed in but not staff: 403, not a login loop."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_staff(request.user):
            raise PermissionDenied("staff only")
        return view(request, *args, **kwargs)

    return wrapper


def staff_or_scrape_token(view: View) -> View:
    """A staff session, or ``Authorization: Bearer $METRICS_TOKEN``; refusals in plain text.

    A request that sends an ``Authorization`` header is judged by it alone: a wrong token
    is ``401`` even if the same client also holds a staff session. Without the header:
    anonymous ``401`` (with the Bearer challenge), signed in but not staff ``403``.
    """

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        header = request.headers.get("Authorization", "")
        if header:
            if not scrape_token_matches(header):
                return _refused(401, "invalid metrics token", SCRAPE_CHALLENGE)
        elif not request.user.is_authenticated:
            return _refused(401, "log in as staff or send 'Authorization: Bearer <METRICS_TOKEN>'", SCRAPE_CHALLENGE)
        elif not is_staff(request.user):
            return _refused(403, "staff only")
        return view(request, *args, **kwargs)

    return wrapper


def scrape_token_matches(header: str) -> bool:
    """``Bearer <METRICS_TOKEN>``, compared in constant time; no token is valid while it is unset."""
    expected = getattr(settings, "METRICS_TOKEN", None) or os.environ.get("METRICS_TOKEN", "")
    scheme, _, given = header.partition(" ")
    # Bytes, not str: compare_digest refuses str with characters outside ASCII, and a header may carry any.
    return bool(expected) and scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(),
                                                                                 expected.encode())


def _refused(status: int, message: str, headers: dict[str, str] | None = None) -> HttpResponse:
    return HttpResponse(f"{message}\n", status=status, content_type="text/plain", headers=headers)
