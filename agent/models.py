"""The agent's durable memory of a job: one checkpoint row, written after every step.

A restarted worker reads this row, not a model's conversation, to know where to resume.
It is written only inside ``JobContext.fenced()``, the transaction that holds while the
worker's epoch still owns the job, so a stale worker cannot write one.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Checkpoint(models.Model):
    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, primary_key=True, related_name="checkpoint")
    step_index = models.PositiveSmallIntegerField(default=0, help_text="Tool steps finished.")
    next_step = models.CharField(max_length=32, blank=True, help_text="The tool the workflow expects next.")
    latest_output = models.JSONField(default=dict, blank=True, help_text="The last step's checked output.")
    steps = models.JSONField(default=list, blank=True, help_text="Finished steps: tool, time, epoch.")
    proposal = models.JSONField(null=True, blank=True, help_text="A provider's saved proposal not yet run.")
    rejected = models.JSONField(null=True, blank=True, help_text="The proposal the policy refused, and why.")
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"checkpoint of job {self.job_id}: step {self.step_index}, next {self.next_step or '-'}"


class ReviewSettings(models.Model):
    """A tenant's choices for its reviews. Without a row, every choice is its default (off)."""

    tenant = models.OneToOneField("accounts.Tenant", on_delete=models.CASCADE, primary_key=True,
                                  related_name="review_settings")
    provider_may_read = models.BooleanField(
        default=False, verbose_name="the model provider may read our documents",
        help_text="The model provider may read our documents: with the provider configured, each document's text "
                  "is sent to it to read the fields our own reading missed. Off: it is told only the review's "
                  "progress and field statuses.")
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   editable=False, related_name="+", help_text="Who last changed these settings.")

    class Meta:
        verbose_name = "review settings"
        verbose_name_plural = "review settings"

    def __str__(self) -> str:
        return f"review settings of {self.tenant}"


class ModelReading(models.Model):
    """The model provider's answer for a job's fields, saved (fenced) before the external-start
    marker is cleared: a resumed worker uses it instead of asking the provider again."""

    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, primary_key=True, related_name="model_reading")
    epoch = models.PositiveIntegerField(help_text="The claim that asked.")
    answer = models.JSONField(help_text="The seven suggested values, or why there are none.")
    saved_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"model reading of job {self.job_id}"


class DocumentFingerprint(models.Model):
    """What identifies a reviewed invoice, to notice the same one sent again: its bytes; its
    supplier (tax id, else name; its name alone; the register's supplier) with its invoice
    number; its invoice number with its total and date. Written once a review has read its
    document and again after a correction (``agent.review.duplicates.record``), with the earliest
    earlier job of the same tenant it matches and by which key."""

    class Match(models.TextChoices):
        SAME_FILE = "same file", "same file"
        SAME_INVOICE = "same supplier and invoice number", "same supplier and invoice number"
        SAME_NAME = "same supplier name and invoice number", "same supplier name and invoice number"
        SAME_REGISTERED = ("same registered supplier and invoice number",
                           "same registered supplier and invoice number")
        SAME_AMOUNT = "same invoice number, total and date", "same invoice number, total and date"

    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, primary_key=True, related_name="fingerprint")
    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="+", db_index=False)
    sha256 = models.CharField(max_length=64, blank=True, help_text="The document's SHA-256; empty for pasted text.")
    supplier_key = models.CharField(
        max_length=255, blank=True,
        help_text='The supplier: "vat:" and its VAT id, else "name:" and its name in lower case; empty if not read.')
    name_key = models.CharField(max_length=200, blank=True,
                                help_text="The supplier's name as compared (suppliers.keys.name); empty if not read.")
    register_supplier = models.ForeignKey("suppliers.Supplier", on_delete=models.SET_NULL, null=True, blank=True,
                                          related_name="+", db_index=False,
                                          help_text="The register's supplier of the invoice, when it knows it.")
    invoice_number = models.CharField(max_length=100, blank=True, help_text="In lower case; empty if not read.")
    total = models.CharField(max_length=32, blank=True, help_text="The total, two decimals; empty if not read.")
    invoice_date = models.CharField(max_length=10, blank=True, help_text="ISO date; empty if not read.")
    duplicate_of = models.ForeignKey("jobs.Job", on_delete=models.SET_NULL, null=True, blank=True,
                                     related_name="+", help_text="The earliest earlier job it matches.")
    match = models.CharField(max_length=60, choices=Match.choices, blank=True)
    recorded_at = models.DateTimeField()

    class Meta:
        indexes = [
            # The look-ups at completion: the tenant's earliest job with these bytes, or with this
            # supplier (by each of its keys) and invoice number, or this number, total and date.
            models.Index(fields=["tenant", "sha256", "job"], name="fingerprint_file_idx"),
            models.Index(fields=["tenant", "supplier_key", "invoice_number", "job"], name="fingerprint_invoice_idx"),
            models.Index(fields=["tenant", "name_key", "invoice_number", "job"], name="fingerprint_name_idx"),
            models.Index(fields=["tenant", "register_supplier", "invoice_number", "job"],
                         name="fingerprint_register_idx"),
            models.Index(fields=["tenant", "invoice_number", "total", "invoice_date", "job"],
                         name="fingerprint_amount_idx"),
            # The list's "possible duplicates" filter.
            models.Index(fields=["tenant", "job"], condition=Q(duplicate_of__isnull=False),
                         name="fingerprint_duplicate_idx"),
        ]

    def __str__(self) -> str:
        return f"fingerprint of job {self.job_id}"


class FieldCorrection(models.Model):
    """A member's correction of one field of a finished review, or their confirmation of its
    value as seen: written only by ``agent.inbox.corrections.correct``, never changed afterwards. The
    latest per field is what the field now says; the review's own result stays as it completed."""

    job = models.ForeignKey("jobs.Job", on_delete=models.CASCADE, related_name="field_corrections")
    field = models.CharField(max_length=32, help_text="One of the review's required fields (agent.fields.REQUIRED).")
    previous_value = models.TextField(blank=True, help_text="The field's value before: the review's, or an earlier "
                                                            "correction's (empty: it had none).")
    value = models.TextField(help_text="As the member typed it; the same value as before for a confirmation.")
    checked_value = models.TextField(blank=True, help_text="As the field's check keeps it (an IBAN grouped in fours, "
                                                           "an ISO date).")
    status = models.CharField(max_length=16, help_text="The field's check on the value: present, malformed...")
    detail = models.CharField(max_length=300, blank=True, help_text="The check's words about it.")
    confirmed = models.BooleanField(default=False, help_text="Confirmed as seen, not typed anew.")
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                           related_name="+")
    by_name = models.CharField(max_length=150, help_text="The member's username when they corrected it.")
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["job", "id"], name="fieldcorrection_job_idx")]

    def __str__(self) -> str:
        return f"{'confirmation' if self.confirmed else 'correction'} of {self.field} on job {self.job_id}"


class FindingAcceptance(models.Model):
    """A member's acceptance of one finding of a finished review, with the reason: written only
    by ``agent.inbox.acceptances.accept``, never changed afterwards. The finding then no longer keeps
    the document from reading OK, from being marked handled or approved."""

    job = models.ForeignKey("jobs.Job", on_delete=models.CASCADE, related_name="+", db_index=False)
    key = models.CharField(max_length=120, help_text="The finding's key (agent.findings.key): code, field, words.")
    code = models.CharField(max_length=40)
    field = models.CharField(max_length=32, blank=True)
    words = models.CharField(max_length=400, help_text="The finding as the member read it.")
    reason = models.CharField(max_length=300, help_text="Why the member accepted it.")
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                           related_name="+")
    by_name = models.CharField(max_length=150, help_text="The member's username when they accepted it.")
    at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "key"], name="findingacceptance_once")]

    def __str__(self) -> str:
        return f"acceptance of {self.code} on job {self.job_id}"


class DocumentWork(models.Model):
    """Where the tenant's members are with a reviewed document, apart from the job's state: to do,
    waiting for the supplier, handled or ignored; who it is assigned to; a short note. Without a
    row, a document whose outcome needs action is to do, for nobody in particular. Written only
    by ``agent.inbox.work.change``, which also writes the history line (``DocumentWorkChange``)."""

    class State(models.TextChoices):
        TODO = "todo", "To do"
        WAITING = "waiting", "Waiting for the supplier"
        HANDLED = "handled", "Handled"
        IGNORED = "ignored", "Ignored"

    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, primary_key=True, related_name="work")
    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="+", db_index=False)
    state = models.CharField(max_length=10, choices=State.choices, blank=True)
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="+", help_text="A member of the job's tenant; empty: nobody.")
    note = models.CharField(max_length=200, blank=True)
    version = models.PositiveIntegerField(default=1, help_text="Raised by every change: the conditional write's guard.")
    updated_at = models.DateTimeField()
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")

    class Meta:
        verbose_name = "document work state"
        indexes = [
            # "Needs my action": the tenant's rows off the list (not to do, or another member's).
            models.Index(fields=["tenant", "state", "assignee"], name="documentwork_tenant_idx"),
        ]

    def __str__(self) -> str:
        return f"work on job {self.job_id}: {self.state or '-'}"


class DocumentWorkChange(models.Model):
    """One change of a document's work state, for its page's history: who, when, from -> to, the note."""

    job = models.ForeignKey("jobs.Job", on_delete=models.CASCADE, related_name="+", db_index=False)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    at = models.DateTimeField()
    from_state = models.CharField(max_length=10, blank=True)
    to_state = models.CharField(max_length=10, blank=True)
    from_assignee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                      related_name="+")
    to_assignee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="+")
    note = models.CharField(max_length=200, blank=True, help_text="The note as this change set it.")

    class Meta:
        indexes = [models.Index(fields=["job", "id"], name="documentworkchange_job_idx")]

    def __str__(self) -> str:
        return f"job {self.job_id}: {self.from_state or '-'} -> {self.to_state or '-'}"


class ProviderCall(models.Model):
    """One call to the model provider: what was asked (in words), for which step, under which
    idempotency key, when the external-start marker was committed (with it, in one transaction),
    and the provider's request id once an answer is saved. Never what was sent: the request
    carries the document's text or the job's progress, and the prompt; neither is kept here.

    Staff read it to settle an ``unknown`` job: with the provider's own records, the key and
    the request id tell whether the call reached it (``agent.review.provider_calls.evidence``)."""

    job = models.ForeignKey("jobs.Job", on_delete=models.CASCADE, related_name="+", db_index=False)
    epoch = models.PositiveIntegerField(help_text="The claim that called.")
    call = models.CharField(max_length=100, help_text='What was asked, in words ("which step comes next").')
    step = models.CharField(max_length=60, help_text='The review\'s step it was for ("2 of 3: validate").')
    idempotency_key = models.CharField(max_length=200, help_text="Sent as the request's Idempotency-Key.")
    started_at = models.DateTimeField(help_text="When the external-start marker was committed.")
    request_id = models.CharField(max_length=200, blank=True, help_text="The provider's id of its answer.")
    answered_at = models.DateTimeField(null=True, blank=True, help_text="When its answer was saved.")

    class Meta:
        constraints = [
            # One row per call: the same owner repeating the same call repeats its key (and row).
            models.UniqueConstraint(fields=["job", "idempotency_key"], name="provider_call_key_unique"),
        ]

    def __str__(self) -> str:
        return f"provider call {self.idempotency_key}"


class NotificationPreference(models.Model):
    """A member's email digest: whether she gets one, at most one per how many minutes, and what
    the last one covered. Without a row: on, every ``NOTIFY["DIGEST_MINUTES"]``, nothing sent yet.

    ``covered_until`` is the digest's watermark: what finished after it is still to tell. It moves
    in the same transaction as the digest job's external-start marker, so a retried digest never
    tells the same documents twice (a crash after the marker leaves the job ``unknown``)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True,
                                related_name="notification_preference")
    enabled = models.BooleanField(default=True, help_text="Email me when a batch finishes or a document needs me.")
    every_minutes = models.PositiveIntegerField(default=15, help_text="At most one email per this many minutes.")
    last_sent_at = models.DateTimeField(null=True, blank=True)
    covered_until = models.DateTimeField(null=True, blank=True, help_text="What finished later is still to tell.")

    def __str__(self) -> str:
        return f"email digest of user {self.user_id}: {'on' if self.enabled else 'off'}, {self.every_minutes} min"


class TriageAlert(models.Model):
    """One row: whether staff were told that jobs need a human since the count last was zero.

    Raised by a guarded update (only from lowered), so one rise sends one email however many
    jobs fail at once; lowered when the count is seen at zero again."""

    raised = models.BooleanField(default=False)
    rises = models.PositiveIntegerField(default=0, help_text="How many times the count rose from zero.")
    changed_at = models.DateTimeField(null=True, blank=True)
    # The queue found late (jobs.queue.waiting): set by the first page that noticed, by a guarded
    # update (one delay, one email), cleared when a page finds the queue on time again.
    delayed_since = models.DateTimeField(null=True, blank=True,
                                         help_text="Since when jobs have waited longer than expected (empty: on time).")
    delays = models.PositiveIntegerField(default=0, help_text="How many times the queue was found late.")

    def __str__(self) -> str:
        return f"triage alert: {'raised' if self.raised else 'lowered'} ({self.rises} rises)"


class WebhookEndpoint(models.Model):
    """Where a tenant wants its reviews' events POSTed, signed with its secret (``agent.inbox.webhooks``).

    Set by staff in the admin for the tenant. Each event is delivered by a ``webhook.deliver``
    job of its own in the queue, so a delivery is retried, fenced and triaged like any job."""

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="+")
    url = models.URLField(max_length=500, help_text="http(s) only; private and loopback addresses are refused unless "
                                                    "the WEBHOOKS_ALLOW_PRIVATE setting allows them.")
    secret = models.CharField(max_length=200, help_text="Signs each delivery: X-Docket-Signature: sha256=HMAC-SHA256"
                                                        "(secret, f\"{timestamp}.{body}\").")
    document_finished = models.BooleanField(default=True, verbose_name="document.finished",
                                            help_text="Every review that completes.")
    document_needs_action = models.BooleanField(default=True, verbose_name="document.needs_action",
                                                help_text="A completed review that needs the user's action.")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "webhook endpoint"

    def __str__(self) -> str:
        return f"webhook {self.pk} of {self.tenant_id}: {self.url}"
