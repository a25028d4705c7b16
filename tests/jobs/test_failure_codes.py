"""Every way a job's run ends without a result keeps its reason as a code beside the words
(``Job.failure_code``), in the same write; a completion clears it."""

from __future__ import annotations

import importlib
import logging
from datetime import timedelta

import pytest
from django.apps import apps

from jobs import queue
from jobs.kinds import JobFailed, Kind
from jobs.logs import fields_of
from jobs.models import Job, JobEvent
from jobs.worker import Worker
from tests.conftest import claim_first

LEASE = timedelta(seconds=10)


def written(job) -> tuple[str, str, str]:
    """The job's state, its failure code and its error, as stored."""
    return Job.objects.values_list("state", "failure_code", "last_error").get(pk=job.pk)


def started(job, clock):
    """A claim of ``job`` whose handler was started (its attempt is spent when the lease runs out)."""
    c = claim_first(job, now=clock.now(), lease=LEASE)
    assert queue.start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    return c


# --- Failures the handler reported ------------------------------------------------------------------


def test_a_failure_keeps_its_code_in_every_state_it_leaves(clock, accept):
    retried, dead, unknown = accept(), accept(), accept()
    c = started(retried, clock)
    assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="planner_error: HTTP 502", code="planner_error",
                      now=clock.now()).state == "queued"
    c = started(dead, clock)
    assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="not_invoice: a menu", code="not_invoice",
                      now=clock.now(), retryable=False).state == "dead"
    c = started(unknown, clock)
    assert queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="model_timeout: no answer", code="model_timeout",
                      now=clock.now()).state == "unknown"
    assert written(retried) == ("queued", "planner_error", "planner_error: HTTP 502")
    assert written(dead) == ("dead", "not_invoice", "not_invoice: a menu")
    assert written(unknown) == ("unknown", "model_timeout", "model_timeout: no answer")


def test_a_retry_that_completes_clears_the_code(clock, accept):
    """Alone (one statement) and in a batch (the batch statement), on either database."""
    alone, first, second = accept(), accept(), accept()
    for job in (alone, first, second):
        c = started(job, clock)
        queue.fail(job_id=c.job_id, epoch=c.epoch, error="planner_error: HTTP 502", code="planner_error",
                   now=clock.now())
    clock.advance(minutes=2)  # past every backoff
    c = started(alone, clock)
    assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={}, now=clock.now())
    batch = [started(first, clock), started(second, clock)]
    outcomes = queue.complete_many(completions=[queue.Completion(c.job_id, c.epoch, {}) for c in batch],
                                   now=clock.now())
    assert all(outcomes)
    assert [written(job) for job in (alone, first, second)] == [("completed", "", "")] * 3


def test_a_code_longer_than_the_column_is_cut_not_refused(clock, accept):
    job = accept()
    c = started(job, clock)
    assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="x", code="c" * 100, now=clock.now(), retryable=False)
    assert written(job)[1] == "c" * queue.MAX_FAILURE_CODE


# --- The worker: a kind's own code, the queue's codes, and what the logs count -----------------------


@pytest.fixture
def scripted(accept, register_kind):
    def make(fn):
        register_kind(Kind(name="test.codes", handler=fn, diagnostic=True, deadline=timedelta(minutes=5)))
        return accept("test.codes", {})

    return make


def run_one(clock) -> None:
    assert Worker(name="w1", lease=LEASE, clock=clock, listen=False).run_one()


def test_a_kinds_own_code_is_kept_as_the_kind_gave_it(clock, scripted):
    def refuse(ctx):
        raise JobFailed("the document is not an invoice", retryable=False, code="not_invoice")

    job = scripted(refuse)
    run_one(clock)
    assert written(job) == ("dead", "not_invoice", "not_invoice: the document is not an invoice")


def test_memory_exhaustion_is_memory_limit(clock, scripted):
    def hog(ctx):
        raise MemoryError

    job = scripted(hog)
    run_one(clock)
    assert written(job)[:2] == ("dead", "memory_limit")


def test_an_uncaught_exception_is_handler_error_and_the_log_still_names_its_class(clock, scripted, caplog):
    job = scripted(lambda ctx: 1 / 0)
    with caplog.at_level(logging.INFO, logger="jobs.worker"):
        run_one(clock)
    state, code, error = written(job)
    assert (state, code) == ("queued", "handler_error") and error.startswith("ZeroDivisionError: ")
    assert [f["error"] for f in map(fields_of, caplog.records) if f["event"] == "failed"] == ["ZeroDivisionError"]


def test_a_handler_that_names_no_code_is_handler_failed(clock, scripted):
    def fail(ctx):
        raise JobFailed("gave up", retryable=False)

    job = scripted(fail)
    run_one(clock)
    assert written(job)[:2] == ("dead", queue.FailureCode.HANDLER_FAILED)


# --- Recovery: lease expiry and the deadline ------------------------------------------------------


def test_an_expired_lease_is_lease_expired_then_attempts_spent_on_the_last_attempt(clock, accept):
    job = accept(max_attempts=2)
    started(job, clock)
    clock.advance(seconds=11)
    assert queue.recover(now=clock.now()).requeued == [job.pk]
    assert written(job) == ("queued", "lease_expired", "lease expired")
    started(job, clock)
    clock.advance(seconds=11)
    assert queue.recover(now=clock.now()).dead == [job.pk]
    assert written(job) == ("dead", "attempts_spent", "lease expired; attempts spent")


def test_a_claim_returned_unstarted_keeps_the_code_it_had(clock, accept):
    job = accept()
    c = started(job, clock)
    queue.fail(job_id=c.job_id, epoch=c.epoch, error="planner_error: HTTP 502", code="planner_error",
               now=clock.now())
    clock.advance(minutes=2)
    claim_first(job, now=clock.now(), lease=LEASE)  # held, never started
    clock.advance(seconds=11)
    assert queue.recover(now=clock.now()).requeued == [job.pk]
    assert written(job)[:2] == ("queued", "planner_error")


def test_an_expired_lease_after_the_external_start_is_unknown_with_lease_expired(clock, accept):
    job = accept()
    c = started(job, clock)
    assert queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    clock.advance(seconds=11)
    assert queue.recover(now=clock.now()).unknown == [job.pk]
    assert written(job)[:2] == ("unknown", "lease_expired")


@pytest.mark.parametrize("state", ["queued", "leased"])
def test_the_deadline_sweep_writes_deadline_passed(clock, accept, state):
    job = accept()
    if state == "leased":  # a lease past the deadline (renewals never grant one): the deadline sweep's alone
        started(job, clock)
        Job.objects.filter(pk=job.pk).update(lease_expires_at=job.deadline + timedelta(hours=1))
    clock.advance(seconds=(job.deadline - clock.now()).total_seconds())
    assert queue.recover(now=clock.now()).dead == [job.pk]
    assert written(job) == ("dead", "deadline_passed", "deadline passed")


def test_an_expired_lease_past_the_deadline_is_deadline_passed(clock, accept):
    job = accept()
    started(job, clock)
    clock.advance(seconds=(job.deadline - clock.now()).total_seconds())
    assert queue.recover(now=clock.now()).dead == [job.pk]
    assert written(job)[:2] == ("dead", "deadline_passed")


def test_a_deferral_past_the_deadline_is_no_time_left(clock, accept):
    job = accept()
    c = started(job, clock)
    assert queue.defer(job_id=c.job_id, epoch=c.epoch, until=job.deadline, now=clock.now(),
                       reason="provider 429").state == "dead"
    assert written(job) == ("dead", "no_time_left", "provider 429; no time left before the deadline")


# --- Cancellation and staff ----------------------------------------------------------------------


def test_every_way_of_cancelling_writes_cancelled(clock, accept):
    waiting, running, deaf, outside = accept(), accept(), accept(), accept()
    assert queue.cancel(job_id=waiting.pk, actor="user:1", reason="", now=clock.now()).state == "cancelled"
    for job in (running, deaf, outside):
        c = started(job, clock)
        if job is outside:
            assert queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
        assert queue.cancel(job_id=job.pk, actor="user:1", reason="", now=clock.now()).state == "leased"
    assert queue.acknowledge_cancel(job_id=running.pk, epoch=Job.objects.get(pk=running.pk).epoch,
                                    now=clock.now()).state == "cancelled"
    assert queue.acknowledge_cancel(job_id=outside.pk, epoch=Job.objects.get(pk=outside.pk).epoch,
                                    now=clock.now()).state == "unknown"
    clock.advance(seconds=11)  # the deaf one's worker never answers
    assert queue.recover(now=clock.now()).cancelled == [deaf.pk]
    assert [written(job)[:2] for job in (waiting, running, deaf, outside)] == [
        ("cancelled", "cancelled"), ("cancelled", "cancelled"), ("cancelled", "cancelled"), ("unknown", "cancelled")]


def test_staff_settling_an_unknown_job_replace_its_code_with_their_decision(clock, accept):
    discarded, done = accept(), accept()
    for job in (discarded, done):
        c = started(job, clock)
        assert queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
        clock.advance(seconds=11)
        queue.recover(now=clock.now())
    for job, to_state in ((discarded, "dead"), (done, "completed")):
        assert queue.resolve(job_id=job.pk, expected_state="unknown", expected_epoch=Job.objects.get(pk=job.pk).epoch,
                             to_state=to_state, actor="staff:sam", reason="checked", now=clock.now())
    assert written(discarded) == ("dead", "discarded", "lease expired after the external-start marker")
    assert written(done)[:2] == ("completed", "")


# --- Rows written before the code was kept --------------------------------------------------------


MIGRATION = importlib.import_module("jobs.migrations.0008_job_failure_code")


@pytest.mark.parametrize("state, last_error, dead_by, code", [
    ("dead", "damaged_document: the DOCX is damaged", "worker", "damaged_document"),
    ("dead", "deadline: the job ran out of time", "worker", "deadline"),
    ("dead", "deadline passed", "recovery", "deadline_passed"),
    ("dead", "lease expired; attempts spent", "recovery", "attempts_spent"),
    ("queued", "lease expired", None, "lease_expired"),
    ("unknown", "lease expired after the external-start marker", None, "lease_expired"),
    ("unknown", "cancelled while an outside call was in flight; its outcome is unknown", None, "cancelled"),
    ("cancelled", "cancelled; its worker did not answer", None, "cancelled"),
    ("cancelled", "", None, "cancelled"),
    ("dead", "provider 429; no time left before the deadline", "worker", "no_time_left"),
    ("dead", "ConnectionError: connection reset", "worker", "handler_error"),
    ("dead", "lease expired after the external-start marker", "staff:sam", "discarded"),
    ("dead", "something nobody wrote down", "worker", ""),
    ("completed", "lease expired after the external-start marker", None, ""),
])
def test_old_rows_are_read_as_the_code_they_would_have_had(state, last_error, dead_by, code):
    assert MIGRATION.code_of(state, last_error, dead_by) == code


def test_the_migration_fills_the_codes_of_existing_rows(clock, accept):
    rows = {
        "dead": ("dead", "memory_limit: the job needed more memory than it is allowed"),
        "spent": ("dead", "lease expired; attempts spent"),
        "cancelled": ("cancelled", ""),
        "discarded": ("dead", "lease expired after the external-start marker"),
        "done": ("completed", ""),
        "waiting": ("queued", ""),
    }
    jobs = {name: accept() for name in rows}
    for name, (state, last_error) in rows.items():
        Job.objects.filter(pk=jobs[name].pk).update(state=state, last_error=last_error, failure_code="")
    JobEvent.objects.create(job=jobs["discarded"], from_state="unknown", to_state="dead", epoch=1,
                            actor="staff:sam", reason="gave up", at=clock.now())
    MIGRATION.fill_failure_codes(apps, None)
    assert {name: written(job)[1] for name, job in jobs.items()} == {
        "dead": "memory_limit", "spent": "attempts_spent", "cancelled": "cancelled", "discarded": "discarded",
        "done": "", "waiting": ""}
