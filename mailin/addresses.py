"""A tenant's inbound address, and the tenant a message was sent to.

One mailbox serves every tenant: ``invoices@example.com`` receives
``invoices+acme.k3m9x2bq7t@example.com`` (sub-addressing, which the common mail servers and
providers deliver to the mailbox itself). The tag names the tenant and carries its token, so
an address cannot be guessed from a tenant's name, and a changed token retires the old one.
"""

from __future__ import annotations

import re
from email.message import Message
from email.utils import getaddresses

from .conf import MailinSettings
from .models import Inbox

# Headers a delivered message names its recipient in: what the receiving server added first
# (it knows the envelope's recipient even for a Bcc), then the message's own.
RECIPIENT_HEADERS = ("Delivered-To", "X-Original-To", "Envelope-To", "To", "Cc")
TAG = re.compile(r"^(?P<slug>[a-z0-9-]+)\.(?P<token>[a-z0-9]+)$")


def address_of(inbox: Inbox, conf: MailinSettings) -> str:
    return f"{conf.local_part}+{inbox.tenant.slug}.{inbox.token}@{conf.domain}"


def addresses(message: Message, header: str) -> list[str]:
    """The addresses in a header, lowercase; none for a header that cannot be read."""
    try:
        values = [str(value) for value in message.get_all(header, [])]
        return [address.strip().lower() for _, address in getaddresses(values) if "@" in address]
    except (TypeError, ValueError, IndexError):  # a header the parser leaves in pieces
        return []


def sender(message: Message) -> str:
    """The one From address, lowercase; empty when there is none or more than one."""
    found = addresses(message, "From")
    return found[0] if len(found) == 1 else ""


def recipient_inbox(message: Message, conf: MailinSettings) -> Inbox | None:
    """The inbox of the first tagged recipient of this mailbox whose slug and token match."""
    for header in RECIPIENT_HEADERS:
        for address in addresses(message, header):
            local, _, domain = address.rpartition("@")
            base, plus, tag = local.partition("+")
            if not plus or base != conf.local_part or domain != conf.domain:
                continue
            match = TAG.match(tag)
            if match is None:
                continue
            inbox = Inbox.objects.filter(token=match["token"], tenant__slug=match["slug"]).select_related(
                "tenant").first()
            if inbox is not None:
                return inbox
    return None
