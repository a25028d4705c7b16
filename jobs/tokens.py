"""API bearer tokens: shown once at creation, stored only as a SHA-256 digest.

Tokens are 32 random bytes, so a fast unsalted digest is enough: there is nothing to
guess that a slow hash would protect.
"""

from __future__ import annotations

import hashlib
import secrets

from .models import ApiToken, User

PREFIX = "jq_"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue(user: User) -> str:
    token = PREFIX + secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, prefix=token[:10], digest=digest(token))
    return token


def user_for(token: str) -> User | None:
    """The active user a presented token belongs to, or None."""
    if not token.startswith(PREFIX):
        return None
    found = ApiToken.objects.select_related("user").filter(digest=digest(token), user__is_active=True).first()
    return found.user if found else None
