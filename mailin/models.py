"""Inbound e-mail: each tenant's address and allowed senders, and a record of every message read.

A message is recorded once (``InboundMessage``, unique by its key) and each attachment once per
message (``InboundAttachment``, unique by the message and the attachment's SHA-256), next to the
job the attachment became or the code it was refused with. The jobs themselves are made through
the queue's acceptance, whose own unique constraint (tenant, submitter, operation key) is what
keeps a message read twice from making a second job.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models


def new_token() -> str:
    """The unguessable part of a tenant's address: 10 lowercase letters and digits."""
    alphabet = "abcdefghijkmnpqrstuvwxyz23456789"  # no l, o, 0, 1: read aloud or typed without doubt
    return "".join(secrets.choice(alphabet) for _ in range(10))


class Inbox(models.Model):
    """A tenant's inbound address and who may send to it.

    The address is the mailbox's own with a tag: ``invoices+<slug>.<token>@example.com``
    (``mailin.addresses``). The token makes it unguessable and can be changed, which retires
    the old address at once.
    """

    tenant = models.OneToOneField("accounts.Tenant", on_delete=models.CASCADE, primary_key=True, related_name="inbox")
    token = models.CharField(max_length=32, unique=True, default=new_token)
    senders = models.JSONField(default=list, blank=True,
                               help_text="Lowercase addresses whose attachments become documents; nobody else's do.")
    # Submits the jobs its messages make: inactive, no usable password, nobody logs in as it.
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="inbox")
    updated_at = models.DateTimeField()
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+", help_text="Who last changed the allowed senders.")

    class Meta:
        verbose_name = "inbound address"
        verbose_name_plural = "inbound addresses"
        permissions = [("manage_inbox", "Can change the team's allowed e-mail senders")]

    def __str__(self) -> str:
        return f"inbound address of {self.tenant_id}"


class InboundMessage(models.Model):
    """One message read from the mailbox, and what became of it."""

    class Outcome(models.TextChoices):
        ACCEPTED = "accepted", "accepted"  # every attachment a job (some may be refused: see them)
        NO_DOCUMENT = "no_document", "no document attached"
        TOO_LARGE = "too_large", "message too large"  # over MAILIN_MAX_MESSAGE_BYTES: never downloaded
        MALFORMED = "malformed", "malformed"  # no sender or addresses that can be read
        UNKNOWN_SENDER = "unknown_sender", "sender not allowed"
        NO_TENANT = "no_tenant", "no such inbound address"

    # The SHA-256 of the Message-ID header (of the message's bytes when it has none).
    key = models.CharField(max_length=64, unique=True)
    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    sender = models.CharField(max_length=254, blank=True, help_text="The From address, lowercase.")
    size = models.PositiveBigIntegerField(help_text="The message's size in the mailbox, bytes.")
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    folder = models.CharField(max_length=200, help_text="Where the message was moved.")
    received_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["tenant", "-received_at"], name="mailin_msg_tenant_idx")]

    def __str__(self) -> str:
        return f"message {self.key[:12]}: {self.outcome}"


class InboundAttachment(models.Model):
    """One attachment of a message: the job it became, or why it was refused."""

    message = models.ForeignKey(InboundMessage, on_delete=models.CASCADE, related_name="attachments")
    sha256 = models.CharField(max_length=64)
    name = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField()
    job = models.ForeignKey("jobs.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    refused = models.CharField(max_length=40, blank=True, help_text="The acceptance's code when it was refused.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["message", "sha256"], name="mailin_attachment_once")]

    def __str__(self) -> str:
        return self.name
