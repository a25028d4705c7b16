"""The job row is the queue entry: accepting a job commits this row and nothing else.

Every state write goes through ``jobs.queue``; the models here only describe the rows.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q


class Scope(models.Model):
    """What the queue shares the workers fairly between and keeps apart: the host project maps
    its own owners of work (customers, teams) to scopes, and every job belongs to one."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    # Fair claims (jobs.queue): a scope of weight 2 gets twice the turns of one of weight 1.
    weight = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="Turns this scope gets relative to others (1-100).")
    max_running = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)],
        help_text="At most this many of its jobs running at once, across all workers; empty: no limit.")
    max_waiting = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)],
        help_text="At most this many of its jobs waiting; past it submissions get 429. Empty: the default.")
    # Jobs of this scope leased right now, kept only while max_running is set (the claim
    # checks and raises it in one conditional write; leaving the lease lowers it).
    running = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        db_table = "jobs_tenant"  # the table it has always had
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class JobQuerySet(models.QuerySet["Job"]):
    def for_scope(self, scope_id: int | None) -> JobQuerySet:
        """A scope's jobs as the host project shows them to it; none at all for no scope (a user outside every one).
        The server's own jobs (internal kinds, such as webhook deliveries) are nobody's documents:
        not listed, counted or exported, and their pages are a 404; staff see them in the admin."""
        from .kinds import internal_names

        if scope_id is None:
            return self.none()
        return self.filter(scope_id=scope_id).exclude(kind__in=internal_names())

    def needs_human(self) -> JobQuerySet:
        return self.filter(state__in=[Job.State.DEAD, Job.State.UNKNOWN])

    def finished_before(self, cutoff: datetime) -> JobQuerySet:
        """Jobs retention may delete: finished (completed, dead or cancelled) and last changed
        before ``cutoff``. ``unknown`` jobs wait for staff however old; live jobs are never here."""
        finished = Q(finished_at__lt=cutoff) | Q(finished_at__isnull=True, updated_at__lt=cutoff)
        return self.filter(finished, state__in=[Job.State.COMPLETED, Job.State.DEAD, Job.State.CANCELLED])


class Job(models.Model):
    class State(models.TextChoices):
        QUEUED = "queued"
        LEASED = "leased"
        COMPLETED = "completed"
        DEAD = "dead"
        UNKNOWN = "unknown"
        CANCELLED = "cancelled"

    TERMINAL = frozenset({State.COMPLETED, State.DEAD, State.UNKNOWN, State.CANCELLED})

    # The scope the job is shared and kept apart by; its column keeps the name it has always had.
    scope = models.ForeignKey(Scope, on_delete=models.PROTECT, related_name="jobs", db_index=False,
                              db_column="tenant_id")
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="jobs")
    kind = models.CharField(max_length=64)

    # Immutable input: nothing writes it after acceptance. An input kept beside it is another app's
    # row, committed with this one (``jobs.queue.accept``'s ``attach``).
    payload = models.JSONField(default=dict, blank=True)

    operation_key = models.CharField(max_length=200)
    request_fingerprint = models.CharField(max_length=64)

    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    epoch = models.PositiveIntegerField(default=0, help_text="Ownership token; only ever grows.")
    attempts = models.PositiveIntegerField(default=0)
    max_attempts = models.PositiveIntegerField(default=3)
    available_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    leased_by = models.CharField(max_length=100, blank=True)
    deadline = models.DateTimeField()
    external_started_at = models.DateTimeField(null=True, blank=True)
    # When this epoch's handler was started (None: claimed, not started yet). Recovery spends
    # an attempt only for a claim whose handler started (jobs.queue.start, jobs.queue.recover).
    started_at = models.DateTimeField(null=True, blank=True)
    # Someone asked to cancel the job while it ran; its worker acknowledges (jobs.queue.cancel).
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    # The job's place in the fair order of claims, stamped when it becomes claimable
    # (jobs.queue); empty while it waits for its time.
    turn = models.BigIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    # Why the job last failed, stopped or was cancelled, as a code (jobs.queue.FailureCode, or
    # the kind's own JobFailed.code): written with last_error, cleared by a completion. The
    # pages choose their words by it; last_error is the staff's detail.
    failure_code = models.CharField(
        max_length=64, blank=True, default="",
        help_text="Why it last failed or stopped, as a code (e.g. deadline_passed, attempts_spent, "
                  "memory_limit); empty once it completes.")
    result = models.JSONField(null=True, blank=True)
    # The kind's reading of its result (kinds.Summary), written with the completion.
    outcome = models.CharField(max_length=32, blank=True)
    outcome_text = models.CharField(max_length=100, blank=True)
    needs_action = models.BooleanField(default=False)
    reference = models.CharField(max_length=200, blank=True, help_text="Words to find the job by.")

    # Submitted together (several documents in one go); empty for a job on its own.
    batch = models.CharField(max_length=64, blank=True)
    # Higher first, within the fairness rule (see jobs.queue.claim).
    priority = models.SmallIntegerField(default=0)

    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = JobQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        permissions = [
            ("triage_job", "Can retry, reconcile and discard jobs"),
            # The scope's content: granted on its own, never with triage by default (the host project grants it).
            ("view_document", "Can see a job's input: its document's pages, the original file, inline text"),
        ]
        constraints = [
            # Idempotent acceptance is the database's promise, not a check-then-insert.
            models.UniqueConstraint(
                fields=["scope", "submitted_by", "operation_key"], name="job_operation_key_unique"
            ),
            models.CheckConstraint(
                condition=Q(state__in=["queued", "leased", "completed", "dead", "unknown", "cancelled"]),
                name="job_state_valid",
            ),
        ]
        indexes = [
            # The claim: the highest priority, then the earliest turn, is the first entry.
            # (available_at is never null: naming it keeps PostgreSQL's planner off this index
            # for a scope's latest turn, which it would scan whole for one scope whenever its
            # statistics say few jobs have a turn; the claim's own filter on it implies it.)
            models.Index(fields=["-priority", "turn", "id"],
                         condition=Q(state="queued", turn__isnull=False, available_at__isnull=False),
                         name="job_claim_idx"),
            # A scope's waiting jobs: its latest turn (to stamp the next) and how many wait.
            models.Index(fields=["scope", "priority", "turn"], condition=Q(state="queued"), name="job_waiting_idx"),
            # Queued jobs not yet stamped with a turn (waiting for their time), soonest first.
            models.Index(fields=["available_at"], condition=Q(state="queued", turn__isnull=True),
                         name="job_due_idx"),
            # Recovery of expired leases reads only leased rows, oldest lease first.
            models.Index(fields=["lease_expires_at"], condition=Q(state="leased"), name="job_lease_idx"),
            # Deadline sweep over live jobs, one state at a time; also counts per state.
            models.Index(fields=["state", "deadline"], name="job_deadline_idx"),
            # The scope's list, newest first. Deliberately no index that holds the state
            # beyond the three above: every transition rewrites each of them.
            models.Index(fields=["scope", "-id"], name="job_tenant_idx"),
            # A batch's jobs, for its progress page.
            models.Index(fields=["scope", "batch"], condition=~Q(batch=""), name="job_batch_idx"),
        ]

    def __str__(self) -> str:
        return f"job {self.pk} ({self.kind}, {self.state})"

    @property
    def is_terminal(self) -> bool:
        return self.state in self.TERMINAL


class JobEvent(models.Model):
    """Append-only telemetry of transitions and rejections. Never payload or input text.

    ``to_state`` is empty for a rejected write (a stale completion, say): nothing moved,
    but the attempt is on record.
    """

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="events", db_index=False)
    from_state = models.CharField(max_length=16, blank=True)
    to_state = models.CharField(max_length=16, blank=True)
    epoch = models.PositiveIntegerField()
    actor = models.CharField(max_length=150)
    reason = models.CharField(max_length=300, blank=True)
    at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["job", "id"], name="jobevent_job_idx")]

    def __str__(self) -> str:
        return f"{self.job_id}: {self.from_state or '-'} -> {self.to_state or 'rejected'} @{self.epoch}"


class KindSlot(models.Model):
    """One of the places a kind with a running limit runs in, across all workers and hosts
    (``Kind.max_running``, ``JOBS_KIND_MAX_RUNNING``).

    The claim takes a free slot in the same write that leases the job and binds it to the
    job's new epoch (``jobs.sql``); the slot is free again when that job is no longer leased on
    that epoch (finished, recovered, cancelled, handed back), without anyone releasing it.
    Workers create and remove the rows to match the limits they are configured with
    (``jobs.queue.sync_kind_slots``).
    """

    kind = models.CharField(max_length=100)
    number = models.PositiveSmallIntegerField()
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    epoch = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "number"], name="kindslot_kind_number")]

    def __str__(self) -> str:
        return f"{self.kind} slot {self.number}" + (f" (job {self.job_id})" if self.job_id else "")
