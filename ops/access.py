"""Who may use the instruments: staff sessions; for ``/metrics`` also a scrape token."""

from __future__ import annotations

from functools import wraps
from typing import Callable

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse


def staff_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous: to the login page. Signed in but not staff: 403, not a login loop."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (request.user.is_active and request.user.is_staff):
            raise PermissionDenied("staff only")
        return view(request, *args, **kwargs)

    return wrapper
