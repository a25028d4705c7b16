"""Where a form may send the browser back to: an address of this site under one path, checked
once it is normalised the way the browser will read it."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from django.utils.http import url_has_allowed_host_and_scheme


def back_under(address: str, prefix: str) -> str | None:
    """``address`` when it is on this site, printable and, normalised, stays at ``prefix`` or below it; else None.

    Normalised as a browser does before it follows it: backslashes are slashes, and dot segments
    (also percent-escaped, ``%2e%2e``) are resolved, so ``/jobs/../admin`` is ``/admin``. An
    address with dot segments is refused rather than rewritten: the form never writes one.
    """
    if not address or not address.isprintable() or not url_has_allowed_host_and_scheme(address, allowed_hosts=None):
        return None
    parts = urlsplit(address)
    if parts.scheme or parts.netloc:
        return None
    path = unquote(parts.path).replace("\\", "/")
    segments = path.split("/")
    if any(segment in (".", "..") for segment in segments) or not path.isprintable() or not path.startswith("/") \
            or path.startswith("//"):
        return None
    if path.rstrip("/") != prefix and not path.startswith(prefix.rstrip("/") + "/"):
        return None
    return address
