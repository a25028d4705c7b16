"""Email: a member's digest (her batches finished, her documents needing her action), and triage
staff's alert when jobs start needing a human.

Both are sent by jobs in the queue, so a crash loses nothing and a retry sends nothing twice:

- ``notify.digest`` (one per member and time slot: its operation key names both, so scheduling it
  again is a no-op) runs when the member's window allows: at most one email per her
  ``every_minutes``. It reads what finished since its watermark (``covered_until``), moves the
  watermark with the external-start marker in one transaction, then sends. A failure before the
  marker retries and reads the same; after it, the job is ``unknown`` and is never sent again.
  A review schedules one when it starts; a digest schedules the next while the member still has
  jobs under way, so a batch whose last document fails is told too. A batch that ends without
  its last job completing (cancelled, dead or unknown, none of it ever started perhaps) schedules
  one for its submitters (``jobs.queue.batch_finished``). A batch is told once: when the last
  of its jobs left ``queued``/``leased`` falls within the digest's window (a staff decision on
  an ``unknown`` job later does not finish it again).
- ``notify.triage``: the queue signals every move into or out of ``dead``/``unknown``
  (``jobs.queue.needs_human_changed``) inside the transaction of the move; ``TriageAlert`` is
  raised only from lowered, so one rise from zero enqueues one email, and lowered when the
  count is zero again.

Both signals are heard inside the transition's transaction, and the email jobs are accepted
there with operation keys that name what they tell (the member and slot; the rise): the
transition and the job that will tell of it commit together, so a process that dies right
after the commit loses no email, a rolled-back transition sends none, and a retry of either
sends nothing twice.

Emails name documents, counts and links (``SITE_URL``), never a document's text.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Max, Min, Q
from django.urls import reverse

from accounts.models import User
from agent.models import NotificationPreference, TriageAlert
from documents.models import of as document_of
from jobs import queue, tasks_backend
from jobs.context import JobContext
from jobs.kinds import FailureCause, Kind
from jobs.models import Job, JobEvent
from web import status, wording

log = logging.getLogger("agent.notifications")

DIGEST = "notify.digest"
TRIAGE = "notify.triage"
MAX_LISTED = 50  # documents named in one email; the rest are counted
LIVE = (Job.State.QUEUED, Job.State.LEASED)
# A notification waits out a short outage of the workers rather than going dead (and alerting staff).
DEADLINE = timedelta(hours=1)


def link(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


# --- The member's preference -------------------------------------------------------------


def preference(user_id: int, *, now: datetime) -> NotificationPreference:
    """Her preference; made with the defaults when she has none, covering from ``now`` on (what
    finished before she was ever scheduled a digest is not news)."""
    pref, _ = NotificationPreference.objects.get_or_create(
        user_id=user_id, defaults={"every_minutes": settings.NOTIFY["DIGEST_MINUTES"], "covered_until": now})
    return pref


def preference_update(*, user_id: int, enabled: bool, every_minutes: int, now: datetime) -> NotificationPreference:
    """Save her choices (the settings page); what was already sent or covered stays as it was."""
    pref = preference(user_id, now=now)
    pref.enabled, pref.every_minutes = enabled, every_minutes
    pref.save(update_fields=["enabled", "every_minutes"])
    return pref


# --- Scheduling the digest -----------------------------------------------------------------


def next_slot(pref: NotificationPreference, now: datetime) -> datetime:
    """When her next digest may run: the next whole ``SETTLE_SECONDS`` (so every event within one
    slot schedules the same job), and not before her window since the last email is over."""
    settle = max(1, settings.NOTIFY["SETTLE_SECONDS"])
    slot = datetime.fromtimestamp((math.floor(now.timestamp() / settle) + 1) * settle, tz=UTC)
    if pref.last_sent_at is not None:
        slot = max(slot, pref.last_sent_at + timedelta(minutes=pref.every_minutes))
    return slot


def schedule(*, user_id: int, now: datetime, covering_from: datetime | None = None) -> Job | None:
    """Make sure a digest is queued for her next slot (none if she turned them off or has no email
    address). Idempotent: the operation key is the member and the slot. ``covering_from``: what
    finished since then is news, if she has no preference yet (else from ``now``)."""
    if not User.objects.filter(pk=user_id, is_active=True).exclude(email="").exists():
        return None
    pref = preference(user_id, now=min(covering_from or now, now))
    if not pref.enabled:
        return None
    at = next_slot(pref, now)
    return queue.accept(
        scope_id=tasks_backend.scope_id(tasks_backend.SYSTEM_SCOPE), user_id=tasks_backend.system_user_id(),
        kind=DIGEST, payload={"user": user_id}, operation_key=f"{DIGEST}:{user_id}:{at.isoformat()}",
        now=now, offered_only=False, available_at=at,
    ).job


def review_started(ctx: JobContext) -> None:
    """A review of hers started: a digest will look at what it (and her others) came to. Telling
    her is not the review's work: a failure here is logged, never the review's."""
    try:
        submitter = Job.objects.filter(pk=ctx.job_id).values_list("submitted_by_id", flat=True).first()
        if submitter is not None:
            schedule(user_id=submitter, now=ctx.now())
    except Exception:  # the review goes on; her next review or digest schedules again
        log.warning("job %s: could not schedule its submitter's email digest", ctx.job_id, exc_info=True)


# --- What a digest tells -------------------------------------------------------------------


@dataclass(frozen=True)
class FinishedBatch:
    name: str
    total: int
    completed: int
    needs_action: int
    failed: int
    cancelled: int = 0
    summary: str = ""  # as the batch's page says it ("Finished: 3 OK, 1 to correct, 1 not found")


@dataclass(frozen=True)
class Digest:
    documents: list[Job]  # completed, needing her action
    batches: list[FinishedBatch]
    failed: list[Job] = field(default_factory=list)  # failed on their document: hers to send again

    def __bool__(self) -> bool:
        return bool(self.documents or self.batches or self.failed)


def pending(user: User, *, since: datetime | None, now: datetime) -> Digest:
    """What finished for her in (since, now]: her documents that need her action, and her batches
    whose every job is now finished. Only her own jobs, of her own tenant."""
    mine = Job.objects.for_scope(user.tenant_id).filter(submitted_by_id=user.pk)
    recent = mine.filter(finished_at__lte=now)
    if since is not None:
        recent = recent.filter(finished_at__gt=since)
    documents = list(recent.filter(state=Job.State.COMPLETED, needs_action=True)
                     .select_related("document").only("pk", "document__original_name", "outcome_text", "batch")
                     .order_by("finished_at", "pk"))
    failed = [job for job in recent.filter(state=Job.State.DEAD)
              .select_related("document").only("pk", "kind", "document__original_name", "failure_code", "last_error",
                                                "batch").order_by("finished_at", "pk")
              if wording.failure_cause(job.kind, job.failure_code) == FailureCause.DOCUMENT]  # hers to fix
    batches = []
    for name in sorted(set(recent.exclude(batch="").values_list("batch", flat=True))):
        jobs = Job.objects.for_scope(user.tenant_id).filter(batch=name)
        if jobs.filter(state__in=LIVE).exists():
            continue  # still under way
        ended = batch_ended(jobs)
        if ended is None or ended > now or (since is not None and ended <= since):
            continue  # finished after this digest's moment (the next one tells it), or told before
        states = list(jobs.values_list("state", "needs_action"))
        batches.append(FinishedBatch(
            name=name, total=len(states),
            completed=sum(1 for s, _ in states if s == Job.State.COMPLETED),
            needs_action=sum(1 for s, a in states if s == Job.State.COMPLETED and a),
            failed=sum(1 for s, _ in states if s in (Job.State.DEAD, Job.State.UNKNOWN)),
            cancelled=sum(1 for s, _ in states if s == Job.State.CANCELLED),
            summary=status.batch_status(tenant_id=user.tenant_id, batch=name).summary,
        ))
    return Digest(documents, batches, failed)


def batch_ended(jobs: Any) -> datetime | None:
    """When the last of a finished batch's jobs left ``queued``/``leased`` (its events say), not
    when one was last touched: a staff decision on an ``unknown`` job moves its ``finished_at``
    but does not finish the batch again (it told as failed already)."""
    left = JobEvent.objects.filter(job__in=jobs, from_state__in=LIVE, to_state__in=queue.FINISHED)
    last: datetime | None = left.aggregate(last=Max("at"))["last"] or jobs.aggregate(last=Max("finished_at"))["last"]
    return last


def document_name(job: Job) -> str:
    document = document_of(job)
    return (document.original_name if document is not None else "") or f"pasted text (job {job.pk})"


def compose(user: User, digest: Digest) -> EmailMessage:
    """The email: names, counts and links; no document's text."""
    parts = []
    if digest.batches:
        parts.append(f"{len(digest.batches)} batch{'es' if len(digest.batches) != 1 else ''} finished")
    if digest.documents:
        n = len(digest.documents)
        parts.append(f"{n} document{'s' if n != 1 else ''} need{'s' if n == 1 else ''} your action")
    if digest.failed:
        parts.append(f"{len(digest.failed)} failed")
    lines = [f"Hello {user.get_username()},", ""]
    for batch in digest.batches:
        cancelled = f", {batch.cancelled} cancelled" if batch.cancelled else ""
        if batch.summary:  # the words of the batch's page
            lines.append(f"Batch {batch.name} of {batch.total} document(s): {batch.summary}.")
        else:
            lines.append(f"Batch {batch.name} finished: {batch.total} document(s), {batch.completed} reviewed"
                         f" ({batch.needs_action} needing your action), {batch.failed} failed{cancelled}.")
        lines.append(f"  {link(reverse('batch_detail', args=[batch.name]))}")
    if digest.batches:
        lines.append("")
    if digest.documents:
        lines.append("Needing your action:")
        for job in digest.documents[:MAX_LISTED]:
            lines.append(f"- {document_name(job)}: {job.outcome_text or 'to check'}")
            lines.append(f"  {link(reverse('job_detail', args=[job.pk]))}")
        if len(digest.documents) > MAX_LISTED:
            lines.append(f"... and {len(digest.documents) - MAX_LISTED} more: "
                         f"{link(reverse('jobs'))}")
        lines.append("")
    if digest.failed:  # in the words of the document's page (web.wording's table)
        lines.append("Failed:")
        for job in digest.failed[:MAX_LISTED]:
            told = wording.failure(job)
            lines.append(f"- {document_name(job)}: {wording.sentence(told.why)} What to do: "
                         f"{wording.sentence(told.advice)}")
            lines.append(f"  {link(reverse('job_detail', args=[job.pk]))}")
        lines.append("")
    lines.append(f"Change how often you get these emails, or turn them off: "
                 f"{link(reverse('notification_settings'))}")
    return EmailMessage(subject=f"Docket: {', '.join(parts)}", body="\n".join(lines), to=[user.email])


# --- The jobs ------------------------------------------------------------------------------


def send_digest(ctx: JobContext) -> dict[str, Any]:
    """The ``notify.digest`` handler: tell her what finished since the last digest, if her window
    allows (else wait for it), and keep watching while she has jobs under way."""
    user_id, now = int(ctx.payload["user"]), ctx.now()
    user = User.objects.filter(pk=user_id, is_active=True).exclude(email="").first()
    if user is None:
        return {"sent": False, "why": "no active member with an email address"}
    pref = preference(user_id, now=now)
    if not pref.enabled:
        return {"sent": False, "why": "turned off"}
    under_way = Job.objects.for_scope(user.tenant_id).filter(submitted_by_id=user_id, state__in=LIVE).exists()
    if pref.last_sent_at is not None and now < pref.last_sent_at + timedelta(minutes=pref.every_minutes):
        schedule(user_id=user_id, now=now)  # another digest sent within her window: the window's end
        return {"sent": False, "why": "within the window of the last email"}
    digest = pending(user, since=pref.covered_until, now=now)
    if not digest:
        if under_way:
            schedule(user_id=user_id, now=now)
        return {"sent": False, "why": "nothing new"}
    message = compose(user, digest)

    def covered() -> None:  # with the marker: a retry after it can never tell the same again
        NotificationPreference.objects.filter(pk=user_id).update(last_sent_at=now, covered_until=now)

    ctx.mark_external_start("email digest", also=covered)
    message.send()
    ctx.clear_external_start("email digest")
    if under_way:
        schedule(user_id=user_id, now=now)
    return {"sent": True, "documents": len(digest.documents), "batches": len(digest.batches)}


def triage_recipients() -> list[str]:
    """Staff who may see jobs in the admin (the view permission, or superusers), with an address."""
    staff = User.objects.with_perm("jobs.view_job", include_superusers=True,
                                   backend="django.contrib.auth.backends.ModelBackend")
    staff = staff.filter(is_staff=True, is_active=True)
    return sorted(set(staff.exclude(email="").values_list("email", flat=True)))


def send_triage(ctx: JobContext) -> dict[str, Any]:
    """The ``notify.triage`` handler: one email to triage staff for one rise from zero, or for one
    time the queue was found late (``delay``)."""
    if "delay" in ctx.payload:
        return send_delay(ctx)
    count = Job.objects.needs_human().count()
    if count == 0:
        return {"sent": False, "why": "no job needs a human any more"}
    recipients = triage_recipients()
    if not recipients:
        return {"sent": False, "why": "no staff with an email address"}
    where = link(reverse("admin:jobs_job_changelist") + "?state=needs_human")
    message = EmailMessage(
        subject=f"Docket: {count} job{'s' if count != 1 else ''} need{'s' if count == 1 else ''} a human",
        body=(f"Jobs needing a human (dead or unknown): {count}.\n\nTriage them: {where}\n\n"
              "You get this email once each time the count rises from zero."),
        bcc=recipients,
    )
    ctx.mark_external_start("triage email")
    message.send()
    ctx.clear_external_start("triage email")
    return {"sent": True, "recipients": len(recipients), "count": count}


def send_delay(ctx: JobContext) -> dict[str, Any]:
    """Tell triage staff that jobs wait longer than expected (the workers stopped, or too few)."""
    found = queue.queue_wait(now=ctx.now())
    if not found.delayed:
        return {"sent": False, "why": "the queue is on time again"}
    recipients = triage_recipients()
    if not recipients:
        return {"sent": False, "why": "no staff with an email address"}
    minutes = max(1, int(found.waited(ctx.now()).total_seconds() // 60))
    message = EmailMessage(
        subject=f"Docket: {found.late} job{'s' if found.late != 1 else ''} waiting longer than expected",
        body=(f"{found.late} job(s) could run and have waited more than {found.expected.total_seconds():g} s; the "
              f"longest for {minutes} min. Running now: {found.running}.\n\nCheck that the workers run "
              f"(manage.py runworkers) and that there are enough of them: {link(reverse('admin:index'))}\n\n"
              "You get this email once each time the queue falls behind."),
        bcc=recipients,
    )
    ctx.mark_external_start("triage email")
    message.send()
    ctx.clear_external_start("triage email")
    return {"sent": True, "recipients": len(recipients), "late": found.late}


def queue_delayed(sender: Any, *, wait: Any, now: datetime, **kwargs: Any) -> None:
    """The queue's ``queue_delayed`` (a page found jobs waiting longer than expected, or staff's
    landing looked): set or clear ``TriageAlert.delayed_since`` with a guarded update
    (read first: pages notice it often, and a delay already raised writes nothing), and on each
    new delay accept one ``notify.triage`` email job with it (``delays`` counts them). The email
    goes out when a worker runs it: with every worker stopped, the admin's index and the
    submitters' pages say it meanwhile."""
    since = TriageAlert.objects.filter(pk=1).values_list("delayed_since", flat=True).first()
    if not wait.delayed:
        if since is not None:
            TriageAlert.objects.filter(pk=1, delayed_since__isnull=False).update(delayed_since=None)
        return
    # A new delay: none noticed yet, or every job late then has been taken since (the longest
    # waiting now became claimable after it was noticed), whether or not a page saw it on time.
    if since is not None and (wait.since is None or wait.since <= since):
        return
    TriageAlert.objects.get_or_create(pk=1)
    new_delay = Q(delayed_since__isnull=True) | Q(delayed_since__lt=wait.since)
    with transaction.atomic():
        if not TriageAlert.objects.filter(new_delay, pk=1).update(delayed_since=now, delays=F("delays") + 1):
            return  # another page noticed it first
        delay = TriageAlert.objects.values_list("delays", flat=True).get(pk=1)
        if triage_recipients():
            queue.accept(
                scope_id=tasks_backend.scope_id(tasks_backend.SYSTEM_SCOPE),
                user_id=tasks_backend.system_user_id(), kind=TRIAGE, payload={"delay": delay},
                operation_key=f"{TRIAGE}:delay:{delay}", now=now, offered_only=False, priority=10,
            )


def needs_human_changed(sender: Any, *, now: datetime, **kwargs: Any) -> None:
    """The queue's signal, inside the transaction of a move into or out of dead/unknown: raise the
    alert and accept its email job when the count rose from zero (with the move, or not at all);
    lower it when the count is zero.

    The count is read in the move's own transaction, after the alert's row: on SQLite the write
    lock orders every move; on PostgreSQL the guarded update waits for a concurrent raise and
    then finds it raised, so two first failures at once still make one rise."""
    TriageAlert.objects.get_or_create(pk=1)
    if not Job.objects.needs_human().exists():
        TriageAlert.objects.filter(pk=1, raised=True).update(raised=False, changed_at=now)
        return
    if not TriageAlert.objects.filter(pk=1, raised=False).update(raised=True, rises=F("rises") + 1, changed_at=now):
        return  # already told since the count was last zero
    rise = TriageAlert.objects.values_list("rises", flat=True).get(pk=1)
    if not triage_recipients():
        return  # nobody to tell: raised all the same, so one rise stays one rise
    queue.accept(
        scope_id=tasks_backend.scope_id(tasks_backend.SYSTEM_SCOPE), user_id=tasks_backend.system_user_id(),
        kind=TRIAGE, payload={"rise": rise}, operation_key=f"{TRIAGE}:{rise}", now=now, offered_only=False,
    )


def batch_finished(sender: Any, *, scope_id: int, batch: str, now: datetime, **kwargs: Any) -> None:
    """The queue's signal, inside the transaction in which a batch's last live job ended without
    completing: schedule each of its submitters' digest, covering from the batch's submission (a
    batch none of whose reviews started has scheduled none)."""
    submitters = (Job.objects.for_scope(scope_id).filter(batch=batch, submitted_by__isnull=False)
                  .values("submitted_by_id").annotate(first=Min("created_at")).values_list("submitted_by_id", "first"))
    for user_id, first in submitters:  # from just before: a job can end the moment it was submitted
        schedule(user_id=user_id, now=now, covering_from=first - timedelta(microseconds=1))


DIGEST_KIND = Kind(
    name=DIGEST,
    handler=send_digest,
    payload_schema={"type": "object", "properties": {"user": {"type": "integer"}}, "required": ["user"],
                    "additionalProperties": False},
    internal=True,
    deadline=DEADLINE,
    description="Email a member what finished for her since her last digest.",
)
TRIAGE_KIND = Kind(
    name=TRIAGE,
    handler=send_triage,
    payload_schema={"type": "object", "properties": {"rise": {"type": "integer"}, "delay": {"type": "integer"}},
                    "minProperties": 1, "maxProperties": 1, "additionalProperties": False},
    internal=True,
    deadline=DEADLINE,
    description="Email triage staff that jobs need a human, or that jobs wait longer than expected.",
)
