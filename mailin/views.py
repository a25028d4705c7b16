"""The team's inbound address: shown to every member, its allowed senders set by the team's admin.

Thin, like the other pages (``web.edge.endpoint``); every write goes through ``mailin.inboxes``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.urls import reverse

from jobs import kinds
from jobs.clock import queue_clock
from web.edge import EdgeRequest, HttpError, endpoint
from web.refusals import in_words, size_words
from web.views import see_other

from . import inboxes
from .addresses import address_of
from .conf import mailin_settings
from .intake import ARCHIVE
from .models import InboundMessage

PERMISSION = "mailin.manage_inbox"

# What became of a message, in the team's words.
OUTCOME_WORDS: dict[str, str] = {
    InboundMessage.Outcome.ACCEPTED: "Read",
    InboundMessage.Outcome.NO_DOCUMENT: "No document attached",
    InboundMessage.Outcome.TOO_LARGE: "Too large: not read",
    InboundMessage.Outcome.UNKNOWN_SENDER: "Ignored: the sender is not on the list",
}


@endpoint("GET", "POST")
def inbound_settings(asked: EdgeRequest) -> HttpResponse:
    """The address and the allowed senders; a POST (the team's admin only) saves the senders or
    makes a new address."""
    if asked.tenant_id is None:
        raise HttpError(403, "no_tenant", "your account belongs to no team, so it has no inbound address")
    now = queue_clock.now()
    inbox = inboxes.inbox_for(asked.tenant_id, now=now)
    can_manage = asked.identity.user.has_perm(PERMISSION)
    error, typed = "", None
    if asked.request.method == "POST":
        if not can_manage:
            raise HttpError(403, "forbidden", "only your team's administrator can change the allowed senders")
        form = asked.request.POST
        try:
            seen_at = datetime.fromisoformat(form.get("seen", ""))
        except ValueError:
            raise HttpError(400, "bad_form", "the form is incomplete: reload the page", field="seen") from None
        try:
            if form.get("action") == "new_address":
                inboxes.token_rotate(tenant_id=asked.tenant_id, by=asked.identity.user, seen_at=seen_at, now=now)
                messages.success(asked.request, "Your team has a new address; the old one no longer works.")
            else:
                inboxes.senders_update(tenant_id=asked.tenant_id, text=form.get("senders", ""),
                                       by=asked.identity.user, seen_at=seen_at, now=now)
                messages.success(asked.request, "Saved.")
            return see_other(reverse("inbound_settings"))
        except inboxes.SendersRefused as exc:
            if asked.wants_json:
                raise HttpError(400, "bad_senders", exc.message, field="senders") from None
            error, typed = exc.message, form.get("senders", "")
            inbox.refresh_from_db()
    conf = mailin_settings()
    context: dict[str, Any] = {
        "address": address_of(inbox, conf), "enabled": conf.enabled, "inbox": inbox, "can_manage": can_manage,
        "senders_text": "\n".join(inbox.senders) if typed is None else typed, "error": error,
        "counts": inboxes.counts(asked.tenant_id) if can_manage else None,
        "recent": recent(asked.tenant_id), "max_bytes": size_words(conf.max_message_bytes),
    }
    return asked.page("mailin/inbound_settings.html", context, status=400 if error else 200)


def recent(tenant_id: int) -> list[dict[str, Any]]:
    """The team's last messages from allowed senders, each attachment with its job or why not."""
    kind = kinds.get(mailin_settings().kind)
    rows = (InboundMessage.objects.filter(tenant_id=tenant_id).exclude(outcome=InboundMessage.Outcome.UNKNOWN_SENDER)
            .prefetch_related("attachments").order_by("-received_at")[:10])
    return [{
        "at": message.received_at, "sender": message.sender, "words": OUTCOME_WORDS.get(message.outcome, ""),
        "attachments": [{"name": a.name, "job_id": a.job_id, "refused": refusal_words(a.refused, a.size, kind)}
                        for a in message.attachments.all()],
    } for message in rows]


def refusal_words(code: str, size: int, kind: kinds.Kind | None) -> str:
    if not code:
        return ""
    if code == ARCHIVE:
        return "Archives are not unpacked: send the documents themselves, attached one by one."
    return in_words(code, "", "document", kind=kind, size=size)
