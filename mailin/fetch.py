"""The fetch: a queue job (kind ``mailin.fetch``) that reads the mailbox over IMAP.

For each message in the folder, oldest first: its headers route it (``intake.route``); a
message to accept is then read whole and its attachments accepted as jobs; the message is
recorded in a fenced transaction (only while this claim owns the fetch job), and only then
moved to the processed or rejected folder. A worker lost anywhere in between leaves the
message in the folder for the next fetch, which finds the jobs already made (by their
operation keys) and makes none twice. Nothing is ever sent back to a sender.

Connection and server errors fail the job like any handler's: the queue retries it with
backoff, then it is dead for staff. ``runmailin`` queues one fetch per interval.
"""

from __future__ import annotations

import contextlib
import email.errors
import hashlib
import imaplib
import logging
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from email.message import Message
from typing import Any

from django.db import IntegrityError
from imap_tools import BaseMailBox, MailBox, MailBoxStartTls, MailBoxUnencrypted
from imap_tools.errors import ImapToolsError, MailboxFetchError

from jobs import queue
from jobs.admin.kind_triage import GenericTriage
from jobs.context import JobContext
from jobs.kinds import JobFailed, Kind
from jobs.models import Job

from . import intake
from .conf import MailinSettings, mailin_settings
from .models import InboundAttachment, InboundMessage

log = logging.getLogger("mailin")

FETCH = "mailin.fetch"
UNREACHABLE = "imap_unreachable"  # the failure code of a fetch the IMAP server did not serve
# A fetch starts no message with less than this left before its deadline: one message's
# attachments take a few seconds of checks each.
LEAVE = timedelta(minutes=2)


@contextlib.contextmanager
def mailbox(conf: MailinSettings) -> Iterator[BaseMailBox]:
    """Logged in, in the folder new messages arrive in, with the two folders it moves to made."""
    box: BaseMailBox
    if conf.security == "ssl":
        box = MailBox(conf.host, conf.port, timeout=conf.timeout_seconds)
    elif conf.security == "starttls":
        box = MailBoxStartTls(conf.host, conf.port, timeout=conf.timeout_seconds)
    else:
        box = MailBoxUnencrypted(conf.host, conf.port, timeout=conf.timeout_seconds)
    with box.login(conf.user, conf.password, initial_folder=None) as logged_in:
        for folder in (conf.processed_folder, conf.rejected_folder):
            if not logged_in.folder.exists(folder):
                logged_in.folder.create(folder)
        logged_in.folder.set(conf.folder)
        yield logged_in


def run_fetch(ctx: JobContext) -> dict[str, Any]:
    """The handler of ``mailin.fetch``: read up to MAILIN_BATCH messages, settle each."""
    conf = mailin_settings()
    if not conf.enabled:
        return {"read": 0, "off": True}
    try:
        return _fetch(ctx, conf)
    except (OSError, imaplib.IMAP4.error, ImapToolsError) as exc:
        # Retried with the queue's backoff, then dead for staff; the messages wait in the mailbox.
        raise JobFailed(f"the mailbox {conf.user} at {conf.host}:{conf.port} could not be read: "
                        f"{type(exc).__name__}", code=UNREACHABLE) from None


def _fetch(ctx: JobContext, conf: MailinSettings) -> dict[str, Any]:
    counts = {"read": 0, "jobs": 0, "refused": 0, "rejected": 0, "later": 0}
    with mailbox(conf) as box:
        uids = box.uids("ALL")[:conf.batch]
        # Headers and sizes of the whole batch in one command; bodies one at a time, when wanted.
        heads = {m.uid: m for m in box.fetch(uid_list=uids, headers_only=True, mark_seen=False, bulk=True)}
        for uid in uids:
            if ctx.cancelled() or ctx.remaining() < LEAVE:
                break  # the rest waits for the next fetch
            head = heads.get(uid)
            if head is None:
                continue  # gone meanwhile (another client moved it)
            found = _routed(head.obj, size=head.size_rfc822, conf=conf)
            outcome = found.outcome
            taken: list[intake.Taken] = []
            if outcome is None:
                try:
                    read = _read(box, uid, found, conf=conf, now=ctx.now())
                except intake.Later as exc:
                    log.info("mailin: a message waits for the next fetch (%s)", exc)
                    counts["later"] += 1
                    continue
                if read is None:
                    continue  # gone meanwhile
                outcome, taken = read
            folder = conf.rejected_folder if outcome in intake.REJECTED else conf.processed_folder
            with ctx.fenced():  # raises StaleEpoch, moving nothing, when this claim lost the job
                record(found, outcome, taken, size=head.size_rfc822, folder=folder, now=ctx.now())
            box.move(uid, folder)
            counts["read"] += 1
            counts["jobs"] += sum(1 for t in taken if t.job_id)
            counts["refused"] += sum(1 for t in taken if t.refused) + (outcome == InboundMessage.Outcome.TOO_LARGE)
            counts["rejected"] += outcome in intake.REJECTED
    return counts


# What a message the parser cannot take apart raises: such a message is recorded as malformed and
# moved aside, so that it cannot stop every later fetch at the same place.
UNREADABLE = (ValueError, TypeError, LookupError, UnicodeError, email.errors.MessageError)


def _routed(headers: Message, *, size: int, conf: MailinSettings) -> intake.Route:
    try:
        header_bytes = headers.as_bytes()
    except UNREADABLE:
        header_bytes = str(headers.items()).encode("utf-8", "replace")
    try:
        return intake.route(header_bytes, size=size, conf=conf)
    except UNREADABLE:
        key = hashlib.sha256(b"headers:" + header_bytes).hexdigest()
        return intake.Route(key, None, "", InboundMessage.Outcome.MALFORMED)


def _read(box: BaseMailBox, uid: str, found: intake.Route, *, conf: MailinSettings,
          now: datetime) -> tuple[str, list[intake.Taken]] | None:
    """A routed message downloaded and its attachments accepted: its outcome and what each became
    (None when the message is gone). Raises ``intake.Later`` to leave it for the next fetch."""
    raw = _body(box, uid)
    if raw is None:
        return None
    if len(raw) > conf.max_message_bytes:  # a server that did not say its size
        return InboundMessage.Outcome.TOO_LARGE, []
    try:
        parts = intake.documents(raw)
    except UNREADABLE:
        return InboundMessage.Outcome.MALFORMED, []
    taken = intake.accept(found, parts, conf=conf, now=now) if parts else []
    return (InboundMessage.Outcome.ACCEPTED if taken else InboundMessage.Outcome.NO_DOCUMENT), taken


def _body(box: BaseMailBox, uid: str) -> bytes | None:
    """The message's bytes as stored (None when it is gone), leaving it unread."""
    status, data = box.client.uid("fetch", uid, "(BODY.PEEK[])")
    if status != "OK":
        raise MailboxFetchError(command_result=(status, data), expected="OK")
    for item in data:
        if isinstance(item, tuple) and isinstance(item[-1], bytes):  # (b'1 (UID 1 BODY[] {n}', bytes)
            return item[-1]
    return None


def record(found: intake.Route, outcome: str, taken: list[intake.Taken], *, size: int, folder: str,
           now: datetime) -> InboundMessage:
    """The message and its attachments, each once: a message read again keeps its first record."""
    try:
        message, _ = InboundMessage.objects.get_or_create(key=found.key, defaults={
            "tenant": found.inbox.tenant if found.inbox else None, "sender": found.sender[:254], "size": size,
            "outcome": outcome, "folder": folder[:200], "received_at": now})
    except IntegrityError:  # recorded by another fetch meanwhile
        message = InboundMessage.objects.get(key=found.key)
    InboundAttachment.objects.bulk_create([
        InboundAttachment(message=message, sha256=t.part.sha256, name=t.part.name[:255], size=len(t.part.content),
                          job_id=t.job_id, refused=t.refused[:40]) for t in taken
    ], ignore_conflicts=True)
    return message


# --- The schedule: one fetch per interval -------------------------------------------------------


def next_slot(now: datetime, every: timedelta) -> datetime:
    """The start of the interval ``now`` is in (slots counted from the epoch)."""
    start = datetime(1970, 1, 1, tzinfo=UTC)
    return start + ((now - start) // every) * every


def schedule(*, now: datetime) -> Job | None:
    """Queue the fetch of the current interval, unless one is waiting or running already.

    Idempotent: the operation key is the interval, so however many ``runmailin`` processes
    ask, there is one fetch per interval.
    """
    at = next_slot(now, timedelta(seconds=mailin_settings().every_seconds))
    return queue_fetch(now=now, key=at.isoformat())


def queue_fetch(*, now: datetime, key: str) -> Job | None:
    """Queue a fetch under ``key`` (one job per key), unless one is waiting or running already;
    None too while inbound e-mail is off."""
    if not mailin_settings().enabled:
        return None
    if Job.objects.filter(kind=FETCH, state__in=[Job.State.QUEUED, Job.State.LEASED]).exists():
        return None  # a fetch is in line or running: it reads what arrived meanwhile too
    from jobs import tasks_backend

    return queue.accept(
        scope_id=tasks_backend.scope_id(tasks_backend.SYSTEM_SCOPE), user_id=tasks_backend.system_user_id(),
        kind=FETCH, payload={}, operation_key=f"{FETCH}:{key}", now=now, offered_only=False,
    ).job


KIND = Kind(
    name=FETCH,
    handler=run_fetch,
    payload_schema={"type": "object", "additionalProperties": False},
    max_payload_bytes=64,
    deadline=timedelta(minutes=15),
    internal=True,
    max_running=1,  # one reader of the mailbox at a time, whatever the workers and hosts
    description="Read the inbound mailbox: each allowed sender's attachments become documents of their team.",
)


class FetchTriage(GenericTriage):
    """What staff's page of a fetch says beyond the queue's lines (``jobs.admin.kind_triage``)."""

    guidance: Mapping[str, Mapping[str, str]] = {"dead": {UNREACHABLE: (
        "The mail server did not serve the inbound mailbox (the last error names the mailbox and why): check "
        "MAILIN_IMAP_* and the server. No mail was lost: it waits in the mailbox, and the next fetch "
        "(runmailin queues one each interval) reads it; Retry only to read it sooner.")}}
