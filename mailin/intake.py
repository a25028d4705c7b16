"""One message: whose it is, which of its parts are documents, and those accepted as jobs.

Routing reads the headers alone, so a stranger's message, or one over the size limit, is
never downloaded whole. Each attachment goes through the queue's own acceptance
(``jobs.queue.accept``: the kind's size limit and the hostile-file checks in a bounded child
process), as a job of the recipient tenant submitted by the member who sent it (or the
inbox's own user), under an operation
key made of the message's key and the attachment's SHA-256: a message read again finds the
jobs it made, by the queue's unique constraint, and makes none twice.
"""

from __future__ import annotations

import email
import hashlib
import mimetypes
import os
from dataclasses import dataclass
from datetime import datetime
from email.message import Message

from accounts.models import User
from documents import acceptance, rules
from documents import store as document_store
from documents.errors import DocumentNotChecked, DocumentStoreUnavailable
from jobs import kinds
from jobs.errors import AcceptanceError, ScopeQueueFull
from jobs.models import Job

from . import addresses
from .conf import MailinSettings
from .models import InboundMessage, Inbox

Outcome = InboundMessage.Outcome

# Outcomes whose message goes to the rejected folder; every other one to the processed folder.
REJECTED = {Outcome.MALFORMED, Outcome.NO_TENANT, Outcome.UNKNOWN_SENDER}
# Parts taken as documents even without a file name: what the kinds read.
DOCUMENT_TYPES = {
    "application/pdf", "application/xml", "text/xml", "image/png", "image/jpeg", "image/tiff",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}
# Archives are refused, not unpacked: sent on their own, the documents inside are each checked
# as any upload is, and no archive's own risks (bombs, nesting, names) are taken on.
ARCHIVE_TYPES = {"application/zip", "application/x-zip-compressed", "application/x-zip", "application/gzip",
                 "application/x-7z-compressed", "application/x-rar-compressed", "application/vnd.rar",
                 "application/x-tar"}
ARCHIVE_SUFFIXES = (".zip", ".7z", ".rar", ".tar", ".gz", ".tgz")
ARCHIVE = "archive"  # the refusal code of an archive
# Acceptance's refusals that say "not now" rather than "not this": the message stays where it
# is, unrecorded, and the next fetch tries it again.
LATER = (ScopeQueueFull, DocumentStoreUnavailable, DocumentNotChecked)


class Later(Exception):
    """An attachment could not be accepted now (the tenant's queue is full, the store is away)."""


@dataclass(frozen=True)
class Route:
    """What the headers say about a message: its key, tenant, sender, and its outcome when it is
    settled without reading the body (None: read its attachments)."""

    key: str
    inbox: Inbox | None
    sender: str
    outcome: str | None


@dataclass(frozen=True)
class Part:
    name: str
    content: bytes
    content_type: str
    sha256: str


@dataclass(frozen=True)
class Taken:
    """One attachment as acceptance settled it: a job, or a refusal's code."""

    part: Part
    job_id: int | None
    refused: str = ""


def message_key(headers: Message, header_bytes: bytes) -> str:
    """The SHA-256 of the Message-ID (with the From address: a stranger who copies a message's id
    shares no key with it); of the header block for a message without one (the same stored
    message gives the same header bytes each time it is read)."""
    message_id = " ".join(str(headers.get("Message-ID", "") or "").split())
    if message_id:
        named = f"{message_id}\n{addresses.sender(headers)}"
        return hashlib.sha256(b"message-id:" + named.encode("utf-8", "surrogateescape")).hexdigest()
    return hashlib.sha256(b"headers:" + header_bytes).hexdigest()


def route(header_bytes: bytes, *, size: int, conf: MailinSettings) -> Route:
    """Whose message it is, from its header block alone."""
    headers = email.message_from_bytes(header_bytes)
    key = message_key(headers, header_bytes)
    sender = addresses.sender(headers)
    if not sender:
        return Route(key, None, "", Outcome.MALFORMED)
    inbox = addresses.recipient_inbox(headers, conf)
    if inbox is None:
        return Route(key, None, sender, Outcome.NO_TENANT)
    if sender not in inbox.senders:
        return Route(key, inbox, sender, Outcome.UNKNOWN_SENDER)
    if size > conf.max_message_bytes:
        return Route(key, inbox, sender, Outcome.TOO_LARGE)
    return Route(key, inbox, sender, None)


def documents(raw: bytes) -> list[Part]:
    """The message's attachments (not its text, nor images its HTML shows inline), decoded."""
    parts = []
    for part in email.message_from_bytes(raw).walk():
        if part.is_multipart() or part.get_content_type() == "message/rfc822":
            continue  # containers: walk() visits what they hold (a forwarded message's attachments too)
        content_type = part.get_content_type()
        name = _filename(part)
        disposition = (part.get_content_disposition() or "").lower()
        if part.get("Content-ID") and disposition != "attachment":
            continue  # a picture the HTML body shows (a signature's logo), not a document
        if not name and content_type not in DOCUMENT_TYPES:
            continue  # the message's own text
        content = part.get_payload(decode=True)
        if not isinstance(content, bytes):
            continue
        name = name or f"attachment{mimetypes.guess_extension(content_type) or ''}"
        parts.append(Part(name, content, content_type, hashlib.sha256(content).hexdigest()))
    return parts


def _filename(part: Message) -> str:
    try:
        name = part.get_filename() or ""
    except (TypeError, ValueError, LookupError):  # a parameter the parser cannot decode
        name = ""
    return os.path.basename(str(name).replace("\\", "/")).strip()[:255]


def accept(found: Route, parts: list[Part], *, conf: MailinSettings, now: datetime) -> list[Taken]:
    """Each part accepted as a job of the route's tenant, or refused by the queue's own checks.

    Raises ``Later`` when one cannot be accepted now: the parts before it are jobs already, and
    the next reading of the message finds them again.
    """
    inbox = found.inbox
    if inbox is None:
        raise ValueError("only a routed message's parts are accepted")
    kind = kinds.get(conf.kind)
    if kind is None:
        raise LookupError(f"MAILIN_KIND names no registered kind: {conf.kind!r}")
    batch = f"m{found.key[:23]}" if len(parts) > 1 else ""
    submitter = submitter_id(inbox, found.sender)
    taken = []
    for part in parts:
        if _is_archive(part):
            taken.append(Taken(part, None, ARCHIVE))
            continue
        limit = rules.max_bytes(kind.name)
        if limit and len(part.content) > limit:
            taken.append(Taken(part, None, "too_large"))  # the queue's own code for it, not read further
            continue
        key = f"mail:{found.key[:64]}:{part.sha256}"
        # The unique key (tenant, submitter, key) is what keeps a message read twice from making a
        # second job. This look-up covers only a submitter that changed in between (a member's
        # e-mail address edited between two readings of the message).
        made = Job.objects.filter(scope_id=inbox.tenant_id, operation_key=key).values_list("pk", flat=True).first()
        if made is not None:
            taken.append(Taken(part, made))
            continue
        upload = document_store.Upload(content=part.content, name=part.name, content_type=part.content_type)
        try:
            accepted = acceptance.accept(
                scope_id=inbox.tenant_id, user_id=submitter, kind=kind.name, payload={}, operation_key=key,
                document=upload, batch=batch, now=now,
            )
        except LATER as exc:
            raise Later(exc.code) from None
        except AcceptanceError as exc:
            taken.append(Taken(part, None, exc.code))
            continue
        taken.append(Taken(part, accepted.job.pk))
    return taken


def submitter_id(inbox: Inbox, sender: str) -> int:
    """Who the jobs are sent by: the team's one active member with the sender's address, so they
    are on her list and in her notifications; the inbox's own user otherwise (a supplier
    sending directly, or an address two accounts share)."""
    members = list(User.objects.filter(tenant_id=inbox.tenant_id, is_active=True, email__iexact=sender)
                   .values_list("pk", flat=True)[:2])
    return members[0] if len(members) == 1 else inbox.user_id


def _is_archive(part: Part) -> bool:
    return part.content_type in ARCHIVE_TYPES or part.name.lower().endswith(ARCHIVE_SUFFIXES)
