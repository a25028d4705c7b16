"""A tenant's inbox: made at first use, its allowed senders changed by the tenant's admin."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from email.utils import parseaddr

from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import Count

from accounts.models import Tenant, User

from .models import InboundMessage, Inbox

MAX_SENDERS = 100


class SendersRefused(ValueError):
    """The list of senders cannot be saved: ``message`` says why, in the admin's words."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def inbox_for(tenant_id: int, *, now: datetime) -> Inbox:
    """The tenant's inbox, made with its submitting user the first time it is asked for."""
    found = Inbox.objects.filter(tenant_id=tenant_id).select_related("tenant").first()
    if found is not None:
        return found
    tenant = Tenant.objects.get(pk=tenant_id)
    try:
        with transaction.atomic():
            user = User.objects.create(username=_free_username(f"inbound-mail.{tenant.slug}"), tenant=tenant,
                                       is_active=False, password=make_password(None))
            return Inbox.objects.create(tenant=tenant, user=user, updated_at=now)
    except IntegrityError:  # made by another request meanwhile: theirs
        return Inbox.objects.select_related("tenant").get(tenant_id=tenant_id)


def _free_username(wanted: str) -> str:
    name, n = wanted[:140], 1
    while User.objects.filter(username=name).exists():
        n += 1
        name = f"{wanted[:140]}-{n}"
    return name


def parse_senders(text: str) -> list[str]:
    """One address a line (or separated by commas or semicolons; ``Name <address>`` as a mail
    program copies it), lowercase, each once, in order."""
    found: list[str] = []
    for line in text.replace(";", "\n").replace(",", "\n").splitlines():
        entry = line.strip()
        if not entry:
            continue
        address = parseaddr(entry)[1].lower()
        try:
            validate_email(address)
        except ValidationError:
            raise SendersRefused(f"“{entry[:80]}” is not an e-mail address.") from None
        if address not in found:
            found.append(address)
    if len(found) > MAX_SENDERS:
        raise SendersRefused(f"At most {MAX_SENDERS} senders; you listed {len(found)}.")
    return found


def senders_update(*, tenant_id: int, text: str, by: User, seen_at: datetime, now: datetime) -> Inbox:
    """Save the allowed senders, only if nobody changed them since ``seen_at`` (the form's)."""
    senders = parse_senders(text)
    inbox = inbox_for(tenant_id, now=now)
    changed = Inbox.objects.filter(tenant_id=tenant_id, updated_at=seen_at).update(
        senders=senders, updated_at=now, updated_by=by)
    if not changed:
        raise SendersRefused("Someone else changed the list meanwhile: here it is as it is now.")
    inbox.refresh_from_db()
    return inbox


def token_rotate(*, tenant_id: int, by: User, seen_at: datetime, now: datetime) -> Inbox:
    """A new address: the old one is refused from now on (its mail lands in the rejected folder)."""
    from .models import new_token

    inbox = inbox_for(tenant_id, now=now)
    if not Inbox.objects.filter(tenant_id=tenant_id, updated_at=seen_at).update(
            token=new_token(), updated_at=now, updated_by=by):
        raise SendersRefused("Someone else changed the address meanwhile: here it is as it is now.")
    inbox.refresh_from_db()
    return inbox


@dataclass(frozen=True)
class Counts:
    accepted: int
    refused: int  # messages of allowed senders with nothing accepted
    unknown_sender: int
    last_unknown: list[InboundMessage]


def counts(tenant_id: int) -> Counts:
    """What the tenant's address received, for its settings page."""
    rows = dict(InboundMessage.objects.filter(tenant_id=tenant_id).values_list("outcome").annotate(n=Count("pk"))
                .order_by())
    unknown = InboundMessage.Outcome.UNKNOWN_SENDER
    return Counts(
        accepted=rows.get(InboundMessage.Outcome.ACCEPTED, 0),
        refused=sum(n for outcome, n in rows.items() if outcome not in (InboundMessage.Outcome.ACCEPTED, unknown)),
        unknown_sender=rows.get(unknown, 0),
        last_unknown=list(InboundMessage.objects.filter(tenant_id=tenant_id, outcome=unknown)
                          .order_by("-received_at")[:5]),
    )
