"""Give the demo's staff two jobs to triage: one failed (``dead``) and one ``unknown``.

Both go through the queue's own operations, as a worker's would: accepted, claimed, started,
then the failed one is reviewed by the ``document_review`` handler (here, in this process)
and fails for a reason of its document; the other records the external-start marker of a
model-provider call (with the call's record as the review writes it: its step and idempotency
key, for the staff page's evidence) and then fails, which the queue makes ``unknown`` (nobody
can say whether the call happened). Nothing outside is called. Fixed operation keys make it
idempotent: a second run finds the same jobs, and only re-runs one staff sent back to the queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from accounts.models import User
from agent import samples
from agent.review import provider_calls
from documents import acceptance
from documents.store import Upload
from jobs import kinds, queue
from jobs.clock import queue_clock
from jobs.context import JobContext
from jobs.models import Job
from jobs.verdicts import Failed, judge

KIND = "document_review"
WORKER = "seedtriage"
LEASE = timedelta(minutes=2)
# Claims take the highest priority first: these jobs come before any other waiting job, so
# this command claims its own job, not someone else's (one it does get anyway, it gives back).
FIRST = 32767
PROVIDER_CALL = "model provider (the demo's stand-in: nothing is sent)"
PROVIDER_LOST = ("model_error: the connection to the model provider broke after the call was sent; "
                 "nobody knows whether it answered (a demo job made by seedtriage)")


@dataclass(frozen=True)
class Case:
    label: str
    key: str
    document: Path


FAILED = Case("failed", "triage-failed", samples.TOO_LONG_DOCX)
UNKNOWN = Case("unknown", "triage-unknown", samples.MISSING_FIELDS_PDF)


class Command(BaseCommand):
    help = ("For the demo: make one failed and one unknown document_review job of USERNAME's tenant, for staff "
            "to triage; idempotent (fixed operation keys).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        user = User.objects.filter(username=username).first()
        if user is None or user.tenant_id is None:
            raise CommandError(f"no member named {username!r}")
        for case in (FAILED, UNKNOWN):
            accepted = acceptance.accept(
                scope_id=user.tenant_id, user_id=user.pk, kind=KIND, payload={}, operation_key=case.key,
                now=queue_clock.now(), priority=FIRST,
                document=Upload(case.document.read_bytes(), case.document.name, "application/octet-stream"),
            )
            job = accepted.job
            if job.state == Job.State.QUEUED:  # new, or sent back to the queue by staff since the last run
                self.run(job, case)
                job.refresh_from_db()
            error = f": {job.last_error}" if job.last_error and job.state != Job.State.COMPLETED else ""
            self.stdout.write(f"  {case.label:<8} {case.document.name:<28} job {job.pk} {job.state}"
                              f" ({'new' if accepted.created else 'existing'}){error}")
        self.stdout.write(f"  staff triage them at {reverse('admin:jobs_job_changelist')}?state=needs_human")

    def run(self, job: Job, case: Case) -> None:
        claim = queue.claim(now=queue_clock.now(), worker=WORKER, lease=LEASE)
        if claim is None:
            raise CommandError(f"job {job.pk} could not be claimed (its tenant may be at its running limit)")
        if claim.job_id != job.pk:
            queue.give_back_unstarted(claims=[claim], now=queue_clock.now(), actor=f"worker:{WORKER}")
            raise CommandError(f"job {claim.job_id} was claimed before job {job.pk} and given back; "
                               "run seedtriage again")
        started = queue.start(job_id=claim.job_id, epoch=claim.epoch, now=queue_clock.now())
        if not started:
            raise CommandError(f"job {job.pk} could not be started: {started.reason}")
        if case is UNKNOWN:
            now = queue_clock.now()
            call = provider_calls.started(  # the planner's first call, as agent.review.planner records it
                job_id=claim.job_id, epoch=claim.epoch, now=now, step=provider_calls.step_words(0),
                call="which step comes next (the demo's stand-in: nothing is sent)",
                key=f"job-{claim.job_id}-epoch-{claim.epoch}-step-0")
            marked = queue.mark_external_start(job_id=claim.job_id, epoch=claim.epoch, now=now, what=PROVIDER_CALL,
                                               also=call)
            if not marked:
                raise CommandError(f"job {job.pk}: {marked.reason}")
            outcome = queue.fail(job_id=claim.job_id, epoch=claim.epoch, error=PROVIDER_LOST, code="model_error",
                                 now=queue_clock.now())
        else:
            kind = kinds.get(KIND)
            if kind is None:  # the agent app registers it
                raise CommandError(f"no {KIND} kind in this process")
            verdict = judge(kind.handler, JobContext(claim, clock=queue_clock))
            if not isinstance(verdict, Failed):  # its lease runs out and a worker reviews it again
                raise CommandError(f"job {job.pk}: the review of {case.document.name} did not fail "
                                   f"({type(verdict).__name__})")
            outcome = queue.fail(job_id=claim.job_id, epoch=claim.epoch, error=verdict.error, code=verdict.code,
                                 retryable=verdict.retryable, now=queue_clock.now())
        if not outcome:
            raise CommandError(f"job {job.pk}: {outcome.reason}")
