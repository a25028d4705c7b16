"""``seedtriage``: the demo's failed and unknown jobs, made through the queue's operations, once."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agent.management.commands import seedtriage
from agent.models import ProviderCall
from jobs import queue
from jobs.clock import queue_clock
from jobs.models import Job, JobEvent

TOO_LONG = "too_large: the document has more than 60,000 characters, over 20 pages"


def seed(username: str = "alice") -> str:
    out = StringIO()
    call_command("seedtriage", username, stdout=out)
    return out.getvalue()


def transitions(job: Job) -> list[tuple[str, str]]:
    return [(e.from_state, e.to_state) for e in JobEvent.objects.filter(job=job).order_by("id")]


def test_it_makes_one_failed_and_one_unknown_job_of_alices_tenant_only(alice, bob):
    out = seed()
    jobs = Job.objects.filter(scope=alice.tenant)
    assert sorted(jobs.values_list("state", flat=True)) == ["dead", "unknown"]
    assert not Job.objects.filter(scope=bob.tenant).exists()
    assert set(Job.objects.needs_human()) == set(jobs)

    failed = jobs.get(state="dead")
    assert (failed.operation_key, failed.document.original_name, failed.attempts) == (
        "triage-failed", "invoice-too-long.docx", 1)
    assert failed.last_error.startswith(TOO_LONG)  # the review's own verdict on the document
    assert transitions(failed) == [("", "queued"), ("queued", "leased"), ("leased", "dead")]

    unknown = jobs.get(state="unknown")
    assert unknown.external_started_at is not None and unknown.last_error == seedtriage.PROVIDER_LOST
    assert transitions(unknown) == [("", "queued"), ("queued", "leased"), ("leased", "leased"), ("leased", "unknown")]
    assert JobEvent.objects.filter(job=unknown, reason=f"external start: {seedtriage.PROVIDER_CALL}").exists()
    call = ProviderCall.objects.get(job_id=unknown.pk)  # as the review records a call: staff see its evidence
    assert (call.idempotency_key, call.started_at, call.answered_at) == (
        f"job-{unknown.pk}-epoch-1-step-0", unknown.external_started_at, None)
    assert f"job {failed.pk} dead (new): {TOO_LONG}" in out and f"job {unknown.pk} unknown (new)" in out
    assert "/admin/jobs/job/?state=needs_human" in out


def test_a_second_run_finds_the_same_jobs_and_moves_nothing(alice):
    seed()
    events = JobEvent.objects.count()
    out = seed()
    assert Job.objects.count() == 2 and JobEvent.objects.count() == events
    assert out.count("(existing)") == 2 and "(new)" not in out


def test_it_claims_its_own_jobs_before_the_waiting_samples(alice):
    call_command("submitsamples", "alice", stdout=StringIO())
    waiting = set(Job.objects.filter(state="queued"))
    seed()
    assert set(Job.objects.filter(state="queued")) == waiting  # none of them claimed, none given back
    assert not JobEvent.objects.filter(job__in=waiting).exclude(to_state="queued").exists()
    assert Job.objects.filter(operation_key__startswith="triage-", state__in=["dead", "unknown"]).count() == 2


def test_a_failed_job_staff_retried_fails_again_on_the_next_run(alice):
    seed()
    failed = Job.objects.get(state="dead")
    assert queue.requeue(job_id=failed.pk, expected_state="dead", expected_epoch=failed.epoch,
                         actor="staff:staff", reason="try again", now=queue_clock.now())
    seed()
    failed.refresh_from_db()
    assert (failed.state, Job.objects.count()) == ("dead", 2)


def test_an_unknown_member_is_refused(db):
    with pytest.raises(CommandError, match="no member named 'nobody'"):
        seed("nobody")
