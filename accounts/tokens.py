"""API bearer tokens: shown once at creation, stored only as a SHA-256 digest.

Tokens are 32 random bytes, so a fast unsalted digest is enough: there is nothing to
guess that a slow hash would protect. A token may expire; staff revoke it by stamping
``revoked_at`` (the row stays, for audit). Expired, revoked and unknown tokens are all
simply invalid: the caller cannot tell which, and gets the same 401.
"""

from __future__ import annotations

import functools
import hashlib
import re
import secrets
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Q, QuerySet

from jobs.clock import queue_clock

from .models import ApiToken, User

PREFIX = "jq_"
# last_used_at is written at most this often per token: enough to answer "is this token
# still in use?", without turning every API read into a write.
LAST_USED_EVERY = timedelta(seconds=60)

_LIFETIME = re.compile(r"^(\d+)([dh])$")


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def lifetime(text: str) -> timedelta:
    """``90d`` or ``12h`` -> a positive timedelta (what ``createtoken --expires`` takes)."""
    match = _LIFETIME.match(text.strip().lower())
    if not match or int(match.group(1)) == 0:
        raise ValueError(f"{text!r} is not a token lifetime: write a positive number of days or hours, e.g. 90d or 12h")
    amount, unit = int(match.group(1)), match.group(2)
    return timedelta(days=amount) if unit == "d" else timedelta(hours=amount)


def issue(user: User, *, expires_at: datetime | None = None, row: ApiToken | None = None) -> str:
    """Mint a token for ``user`` and store its digest; return the token (shown once, never stored).

    ``row`` is an unsaved ``ApiToken`` to fill and save (the admin's add form builds one);
    without it a new row is made.
    """
    token = PREFIX + secrets.token_urlsafe(32)
    row = row or ApiToken()
    row.user, row.expires_at = user, expires_at
    row.prefix, row.digest = token[:10], digest(token)
    row.save(force_insert=True)
    return token


def user_for(token: str, *, now: datetime | None = None) -> User | None:
    """The active user a presented, live token belongs to, or None (unknown, expired or revoked)."""
    if not token.startswith(PREFIX):
        return None
    now = now or queue_clock.now()
    adapt = connection.ops.adapt_datetimefield_value
    found = next(iter(User.objects.raw(_user_sql(), [adapt(now - LAST_USED_EVERY), digest(token), True, adapt(now)])),
                 None)
    if found is None:
        return None
    token_row = vars(found)  # the statement's two columns beside the user's
    if token_row["token_unused"]:  # no use recorded in the last minute: record this one
        touch(token_row["token_id"], now=now)
    return found


@functools.cache
def _user_sql() -> str:
    """The user of a live token, with the token's id and whether its last use is over a minute old.

    Written out once, not built by the ORM on each call: every API request reads it, and building
    the query cost several times what the database spends answering it (the digest is unique)."""
    q = connection.ops.quote_name
    columns = ", ".join(f"u.{q(field.column)}" for field in User._meta.concrete_fields)
    token, user, last_used = q(ApiToken._meta.db_table), q(User._meta.db_table), q("last_used_at")
    return (f"SELECT {columns}, t.{q('id')} AS token_id, "  # noqa: S608  our models' names, quoted; values bound
            f"CASE WHEN t.{last_used} IS NULL OR t.{last_used} < %s THEN 1 ELSE 0 END AS token_unused "
            f"FROM {token} t INNER JOIN {user} u ON u.{q('id')} = t.{q('user_id')} "
            f"WHERE t.{q('digest')} = %s AND u.{q('is_active')} = %s AND t.{q('revoked_at')} IS NULL "
            f"AND (t.{q('expires_at')} IS NULL OR t.{q('expires_at')} > %s)")


def touch(token_id: int, *, now: datetime) -> bool:
    """Record a use, unless one was recorded in the last minute; True if this call wrote.

    The condition is in the UPDATE, so of many requests racing with the same token only
    the first writes; the others match no row.
    """
    return bool(
        ApiToken.objects.filter(pk=token_id)
        .filter(Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_EVERY))
        .update(last_used_at=now)
    )


def revoke(tokens: QuerySet[ApiToken], *, now: datetime) -> list[int]:
    """Revoke the tokens still live among ``tokens``; return the ids this call revoked.

    Already revoked tokens keep their first ``revoked_at``: the write is conditional.
    """
    live = list(tokens.filter(revoked_at__isnull=True).values_list("pk", flat=True))
    revoked = []
    for pk in live:  # one conditional write each, so a concurrent revoke is not counted twice
        if ApiToken.objects.filter(pk=pk, revoked_at__isnull=True).update(revoked_at=now):
            revoked.append(pk)
    return revoked
