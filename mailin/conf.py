"""Inbound e-mail's settings as one value, read from ``settings.MAILIN`` and checked at use."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

SECURITY = ("ssl", "starttls", "plain")
MIN_EVERY_SECONDS = 5  # a shorter interval only makes fetches wait for one another


@dataclass(frozen=True, kw_only=True)
class MailinSettings:
    address: str  # the mailbox's own address; each tenant's is a tagged form of it
    host: str  # empty: inbound e-mail is off
    port: int
    security: str  # ssl (IMAPS), starttls, or plain (loopback and tests only)
    user: str
    password: str
    folder: str  # where new messages arrive
    processed_folder: str  # messages whose attachments were accepted or refused
    rejected_folder: str  # messages from senders not allowed, to no tenant, or unreadable
    every_seconds: float  # how often runmailin queues a fetch
    batch: int  # messages one fetch job reads at most
    max_message_bytes: int  # larger messages are refused from their size, never downloaded
    timeout_seconds: float  # one IMAP command
    kind: str  # the job kind an attachment becomes

    @property
    def enabled(self) -> bool:
        return bool(self.host)

    @property
    def local_part(self) -> str:
        return self.address.partition("@")[0]

    @property
    def domain(self) -> str:
        return self.address.partition("@")[2]


@lru_cache(maxsize=1)
def mailin_settings() -> MailinSettings:
    return build(getattr(settings, "MAILIN", {}))


def build(raw: dict[str, Any]) -> MailinSettings:
    """The settings from the ``MAILIN`` dict; ImproperlyConfigured names what is wrong."""
    values = {**DEFAULTS, **raw}
    unknown = set(values) - set(DEFAULTS)
    if unknown:
        raise ImproperlyConfigured(f"MAILIN has unknown keys: {', '.join(sorted(unknown))}")
    built = MailinSettings(
        address=str(values["ADDRESS"]).strip().lower(), host=str(values["IMAP_HOST"]).strip(),
        port=int(values["IMAP_PORT"]), security=str(values["IMAP_SECURITY"]).lower(),
        user=str(values["IMAP_USER"]), password=str(values["IMAP_PASSWORD"]), folder=str(values["FOLDER"]),
        processed_folder=str(values["PROCESSED_FOLDER"]), rejected_folder=str(values["REJECTED_FOLDER"]),
        every_seconds=float(values["EVERY_SECONDS"]), batch=int(values["BATCH"]),
        max_message_bytes=int(values["MAX_MESSAGE_BYTES"]), timeout_seconds=float(values["TIMEOUT_SECONDS"]),
        kind=str(values["KIND"]),
    )
    if built.security not in SECURITY:
        raise ImproperlyConfigured(f"MAILIN_IMAP_SECURITY must be one of {', '.join(SECURITY)}")
    if built.address.count("@") != 1 or "+" in built.local_part or not built.local_part or not built.domain:
        raise ImproperlyConfigured("MAILIN_ADDRESS must be one address without a +tag, e.g. invoices@example.com")
    if built.enabled and not built.user:
        raise ImproperlyConfigured("MAILIN_IMAP_USER is required when MAILIN_IMAP_HOST is set")
    if (built.every_seconds < MIN_EVERY_SECONDS or built.batch < 1 or built.max_message_bytes < 1
            or built.timeout_seconds <= 0):
        raise ImproperlyConfigured(f"MAILIN_EVERY_SECONDS must be at least {MIN_EVERY_SECONDS}; the batch, size "
                                   "and timeout positive")
    folders = (built.folder, built.processed_folder, built.rejected_folder)
    if len(set(folders)) != len(folders):
        raise ImproperlyConfigured("MAILIN's folder, processed folder and rejected folder must differ")
    return built


DEFAULTS: dict[str, Any] = {
    "ADDRESS": "invoices@docket.invalid",
    "IMAP_HOST": "",
    "IMAP_PORT": 993,
    "IMAP_SECURITY": "ssl",
    "IMAP_USER": "",
    "IMAP_PASSWORD": "",
    "FOLDER": "INBOX",
    "PROCESSED_FOLDER": "Processed",
    "REJECTED_FOLDER": "Rejected",
    "EVERY_SECONDS": 60,
    "BATCH": 50,
    "MAX_MESSAGE_BYTES": 32 * 1024 * 1024,
    "TIMEOUT_SECONDS": 30,
    "KIND": "document_review",
}
