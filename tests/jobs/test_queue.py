"""The queue's promises, on a logical clock: leases, crashes and stale writes without sleeping."""

from __future__ import annotations

import json
import random
from datetime import timedelta

import pytest

from jobs import queue
from jobs.errors import InvalidOperationKey, InvalidPayload, OperationKeyConflict, PayloadTooLarge, UnknownKind
from jobs.models import Job, JobEvent

LEASE = timedelta(seconds=10)


def state(job) -> str:
    return Job.objects.get(pk=job.pk).state


def claim(clock, worker="w1", lease=LEASE):
    return queue.claim(now=clock.now(), worker=worker, lease=lease)


# --- accept -----------------------------------------------------------------------------


def test_accept_commits_a_queued_row_with_an_accepted_event(accept):
    job = accept(payload={"seconds": 1})
    assert job.state == "queued" and job.epoch == 0 and job.attempts == 0
    assert list(job.events.values_list("from_state", "to_state")) == [("", "queued")]


def test_same_key_and_same_request_returns_the_same_job(accept, alice):
    first = accept(payload={"seconds": 1}, key="k-1")
    again = accept(payload={"seconds": 1}, key="k-1")
    assert again.pk == first.pk
    assert Job.objects.count() == 1


def test_same_key_with_a_different_request_is_a_conflict(accept):
    accept(payload={"seconds": 1}, key="k-1")
    with pytest.raises(OperationKeyConflict):
        accept(payload={"seconds": 2}, key="k-1")
    assert Job.objects.count() == 1


def test_the_same_key_from_another_tenant_is_another_job(accept, bob):
    mine = accept(payload={"seconds": 1}, key="k-1")
    theirs = accept(payload={"seconds": 1}, key="k-1", user=bob)
    assert mine.pk != theirs.pk and theirs.scope_id == bob.tenant_id


@pytest.mark.parametrize(
    "kind, payload, key, error",
    [
        ("no.such.kind", {}, "k", UnknownKind),
        ("diagnostic.sleep", {"seconds": "soon"}, "k", InvalidPayload),
        ("diagnostic.sleep", {"owner": "mallory"}, "k", InvalidPayload),
        ("diagnostic.sleep", ["not", "an", "object"], "k", InvalidPayload),
        ("diagnostic.sleep", {"seconds": 1}, "", InvalidOperationKey),
        ("diagnostic.sleep", {"seconds": 1}, "x" * 201, InvalidOperationKey),
        ("diagnostic.noop", {"pad": "x" * 1000}, "k", PayloadTooLarge),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(clock, alice, kind, payload, key, error):
    with pytest.raises(error):
        queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind=kind, payload=payload,
                     operation_key=key, now=clock.now(), offered_only=False)
    assert Job.objects.count() == 0 and JobEvent.objects.count() == 0


def test_diagnostic_kinds_are_not_offered_to_users_unless_enabled(clock, alice, settings):
    with pytest.raises(UnknownKind):
        queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="diagnostic.noop", payload={},
                     operation_key="k", now=clock.now())
    settings.JOBS = {**settings.JOBS, "DIAGNOSTIC_KINDS": True}
    assert queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="diagnostic.noop", payload={},
                        operation_key="k", now=clock.now()).created


# --- claim, lease, epoch ------------------------------------------------------------------


def test_claim_increments_epoch_and_attempts_and_sets_the_lease(clock, accept):
    job = accept()
    c = claim(clock)
    assert (c.job_id, c.epoch, c.attempt) == (job.pk, 1, 1)
    assert c.lease_expires_at == clock.now() + LEASE
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.epoch, row.attempts, row.leased_by) == ("leased", 1, 1, "w1")


def test_claim_takes_the_oldest_eligible_job_first(clock, accept):
    first = accept()
    clock.advance(1)
    accept()
    assert claim(clock).job_id == first.pk


def test_claim_returns_nothing_when_no_job_is_eligible(clock, accept):
    assert claim(clock) is None
    accept()
    claim(clock)
    assert claim(clock, "w2") is None


def test_the_lease_never_reaches_past_the_deadline(clock, accept):
    job = accept()
    clock.advance(seconds=(job.deadline - clock.now()).total_seconds() - 3)
    c = claim(clock)
    assert c.lease_expires_at == job.deadline


def test_a_job_past_its_deadline_is_never_claimed_and_recovery_makes_it_dead(clock, accept):
    job = accept()
    clock.advance(seconds=(job.deadline - clock.now()).total_seconds())
    assert claim(clock) is None
    assert queue.recover(now=clock.now()).dead == [job.pk]
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.attempts, row.last_error) == ("dead", 0, "deadline passed")


def test_a_lease_expires_and_a_second_worker_claims_epoch_2(clock, accept):
    accept()
    first = claim(clock, "w1")
    assert claim(clock, "w2") is None  # the lease still holds
    clock.advance(11)
    queue.recover(now=clock.now())
    second = claim(clock, "w2")
    assert second.job_id == first.job_id and second.epoch == 2


def test_the_epoch_1_completion_is_then_rejected_and_changes_nothing(clock, accept):
    accept()
    first = claim(clock, "w1")
    clock.advance(11)
    queue.recover(now=clock.now())
    second = claim(clock, "w2")
    before = Job.objects.values().get(pk=first.job_id)

    outcome = queue.complete(job_id=first.job_id, epoch=first.epoch, result={"by": "w1"}, now=clock.now())

    assert not outcome and outcome.reason == "epoch 1 superseded by 2"
    assert Job.objects.values().get(pk=first.job_id) | {"updated_at": None} == before | {"updated_at": None}
    assert queue.complete(job_id=second.job_id, epoch=2, result={"by": "w2"}, now=clock.now())
    assert Job.objects.get(pk=first.job_id).result == {"by": "w2"}


def test_completion_with_an_expired_lease_is_rejected_even_before_recovery(clock, accept):
    accept()
    c = claim(clock)
    clock.advance(10)
    outcome = queue.complete(job_id=c.job_id, epoch=c.epoch, result={}, now=clock.now())
    assert not outcome and outcome.reason == "lease expired"
    assert Job.objects.get(pk=c.job_id).state == "leased"


def test_completion_after_the_deadline_is_rejected(clock, accept):
    job = accept()
    c = claim(clock)
    clock.advance(5)
    assert queue.renew(job_id=c.job_id, epoch=c.epoch, now=clock.now(), lease=timedelta(days=1))
    assert Job.objects.get(pk=job.pk).lease_expires_at == job.deadline  # the lease reaches the deadline
    clock.advance(seconds=(job.deadline - clock.now()).total_seconds())
    outcome = queue.complete(job_id=c.job_id, epoch=c.epoch, result={}, now=clock.now())
    assert not outcome and outcome.reason == "deadline passed"
    assert Job.objects.get(pk=c.job_id).result is None


@pytest.mark.parametrize("write", ["fail", "defer"])
def test_a_failure_or_deferral_after_the_lease_expired_is_rejected_like_a_completion(clock, accept, write):
    accept()
    c = claim(clock)
    clock.advance(10)
    if write == "fail":
        outcome = queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom", code="handler_failed", now=clock.now())
    else:
        outcome = queue.defer(job_id=c.job_id, epoch=c.epoch, until=clock.now(), now=clock.now(), reason="429")
    assert not outcome and outcome.reason == "lease expired"
    assert Job.objects.get(pk=c.job_id).state == "leased"  # recovery, not the stale worker, decides
    assert queue.recover(now=clock.now()).requeued == [c.job_id]


def test_completion_saves_the_result_and_clears_the_lease(clock, accept):
    accept()
    c = claim(clock)
    assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={"answer": 42}, now=clock.now())
    row = Job.objects.get(pk=c.job_id)
    assert (row.state, row.result, row.lease_expires_at) == ("completed", {"answer": 42}, None)
    assert not queue.complete(job_id=c.job_id, epoch=c.epoch, result={"answer": 0}, now=clock.now())
    assert Job.objects.get(pk=c.job_id).result == {"answer": 42}


# --- renew and the external-start marker ------------------------------------------------------


@pytest.mark.parametrize("write, recorded", [
    ("renew", "renewal rejected: epoch 1 superseded by 2"),
    ("mark_external_start", "external start rejected: epoch 1 superseded by 2"),
    ("clear_external_start", "external settle rejected: epoch 1 superseded by 2"),
    ("fenced", "fenced write rejected: epoch 1 superseded by 2"),
])
def test_every_write_of_a_running_claim_records_its_rejection(clock, accept, write, recorded):
    job = accept()
    stale = claim(clock)
    clock.advance(11)
    queue.recover(now=clock.now())
    claim(clock, "w2")
    args = dict(job_id=job.pk, epoch=stale.epoch, now=clock.now())
    if write == "renew":
        assert not queue.renew(**args, lease=LEASE)
    elif write == "fenced":
        with pytest.raises(queue.StaleEpoch), queue.fenced(**args):
            pytest.fail("the block of a stale fenced write must not run")
    else:
        assert not getattr(queue, write)(**args)
    assert list(JobEvent.objects.filter(job=job, to_state="").values_list("reason", flat=True)) == [recorded]


def test_renew_extends_the_lease_but_never_past_the_deadline(clock, accept):
    job = accept()
    c = claim(clock)
    clock.advance(5)
    assert queue.renew(job_id=c.job_id, epoch=c.epoch, now=clock.now(), lease=LEASE)
    assert Job.objects.get(pk=job.pk).lease_expires_at == clock.now() + LEASE
    assert queue.renew(job_id=c.job_id, epoch=c.epoch, now=clock.now(), lease=timedelta(days=1))
    assert Job.objects.get(pk=job.pk).lease_expires_at == job.deadline


def test_renew_is_rejected_for_a_stale_epoch(clock, accept):
    accept()
    first = claim(clock)
    clock.advance(11)
    queue.recover(now=clock.now())
    claim(clock, "w2")
    outcome = queue.renew(job_id=first.job_id, epoch=first.epoch, now=clock.now(), lease=LEASE)
    assert not outcome and "superseded" in outcome.reason


def test_external_start_then_lease_expiry_is_unknown_and_never_claimed_again(clock, accept):
    job = accept()
    c = claim(clock)
    assert queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    clock.advance(11)
    recovered = queue.recover(now=clock.now())
    assert recovered.unknown == [job.pk]
    assert state(job) == "unknown"
    clock.advance(3600)
    queue.recover(now=clock.now())
    assert claim(clock, "w2") is None
    assert state(job) == "unknown"


def test_a_crash_before_the_external_start_redelivers(clock, accept):
    job = accept()
    claim(clock)
    clock.advance(11)
    assert queue.recover(now=clock.now()).requeued == [job.pk]
    assert state(job) == "queued"


# --- fail -------------------------------------------------------------------------------


def test_a_safe_failure_requeues_with_backoff(clock, accept):
    job = accept()
    c = claim(clock)
    outcome = queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom", code="handler_failed", now=clock.now(),
                         rng=random.Random(1))
    assert outcome.state == "queued"
    row = Job.objects.get(pk=job.pk)
    assert clock.now() + timedelta(seconds=1) <= row.available_at <= clock.now() + timedelta(seconds=2)
    assert claim(clock, "w2") is None  # not before the backoff
    clock.advance(2)
    assert claim(clock, "w2").epoch == 2


def test_backoff_grows_exponentially_with_jitter_and_a_cap():
    rng = random.Random(7)
    delays = [queue.backoff(n, rng=rng).total_seconds() for n in (1, 2, 3, 4, 10)]
    assert 1 <= delays[0] <= 2 and 2 <= delays[1] <= 4 and 4 <= delays[2] <= 8 and 8 <= delays[3] <= 16
    assert 30 <= delays[4] <= 60


def test_three_safe_failures_make_the_job_dead(clock, accept):
    job = accept()
    outcomes = []
    for _ in range(3):
        c = claim(clock)
        outcomes.append(queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom", code="handler_failed",
                                   now=clock.now()).state)
        clock.advance(60)
    assert outcomes == ["queued", "queued", "dead"]
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.attempts, row.last_error) == ("dead", 3, "boom")
    assert claim(clock) is None


def test_a_failure_that_is_not_retryable_is_dead_at_once(clock, accept):
    job = accept()
    c = claim(clock)
    assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="bad", code="handler_failed", now=clock.now(),
                      retryable=False).state == "dead"
    assert state(job) == "dead"


def test_a_failure_whose_retry_would_start_after_the_deadline_is_dead(clock, accept):
    job = accept()
    clock.advance(seconds=(job.deadline - clock.now()).total_seconds() - 1)
    c = claim(clock)
    assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom", code="handler_failed",
                      now=clock.now()).state == "dead"


def test_a_failure_after_the_external_start_is_unknown(clock, accept):
    job = accept()
    c = claim(clock)
    queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="timeout", code="handler_failed",
                      now=clock.now()).state == "unknown"
    assert state(job) == "unknown"


def test_a_stale_failure_report_changes_nothing(clock, accept):
    job = accept()
    first = claim(clock)
    clock.advance(11)
    queue.recover(now=clock.now())
    claim(clock, "w2")
    assert not queue.fail(job_id=first.job_id, epoch=first.epoch, error="late", code="handler_failed", now=clock.now())
    assert (state(job), Job.objects.get(pk=job.pk).epoch) == ("leased", 2)


def test_defer_hands_the_job_back_without_spending_the_attempt(clock, accept):
    job = accept()
    c = claim(clock)
    queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    outcome = queue.defer(job_id=c.job_id, epoch=c.epoch, until=clock.now() + timedelta(seconds=30),
                          now=clock.now(), reason="provider 429")
    row = Job.objects.get(pk=job.pk)
    assert outcome.state == "queued" and row.attempts == 0 and row.external_started_at is None
    clock.advance(30)
    assert claim(clock).attempt == 1


def test_defer_past_the_deadline_is_dead(clock, accept):
    job = accept()
    c = claim(clock)
    assert queue.defer(job_id=c.job_id, epoch=c.epoch, until=job.deadline, now=clock.now(),
                       reason="provider 429").state == "dead"


# --- recover -----------------------------------------------------------------------------


def test_the_deadline_makes_a_job_dead_with_attempts_left(clock, accept):
    job = accept()
    c = claim(clock)
    queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom", code="handler_failed", now=clock.now())
    clock.advance(seconds=(job.deadline - clock.now()).total_seconds())
    assert queue.recover(now=clock.now()).dead == [job.pk]
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.attempts) == ("dead", 1)


def test_a_leased_job_past_its_deadline_is_recovered_as_dead(clock, accept):
    job = accept()
    c = claim(clock, lease=timedelta(days=1))
    clock.advance(seconds=(job.deadline - clock.now()).total_seconds() + 1)
    assert queue.recover(now=clock.now()).dead == [job.pk]
    assert not queue.complete(job_id=c.job_id, epoch=c.epoch, result={}, now=clock.now())


def test_an_expired_lease_on_the_last_attempt_is_dead(clock, accept):
    job = accept()
    for _ in range(3):
        c = claim(clock)
        assert queue.start(job_id=c.job_id, epoch=c.epoch, now=clock.now())  # its handler ran
        clock.advance(11)
        queue.recover(now=clock.now())
    assert state(job) == "dead"
    assert Job.objects.get(pk=job.pk).attempts == 3


def test_recovery_never_overwrites_a_job_completed_a_moment_earlier(clock, accept):
    job = accept()
    c = claim(clock)
    clock.advance(9.999)
    assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={"ok": 1}, now=clock.now())
    clock.advance(1)
    assert queue.recover(now=clock.now()).total == 0
    assert state(job) == "completed"


def test_recovery_is_bounded_per_sweep(clock, accept):
    for _ in range(5):
        accept()
    for n in range(5):
        claim(clock, f"w{n}")
    clock.advance(11)
    assert len(queue.recover(now=clock.now(), limit=2).requeued) == 2
    assert len(queue.recover(now=clock.now(), limit=10).requeued) == 3


# --- staff and the epoch ---------------------------------------------------------------------


def test_a_staff_requeue_never_lowers_the_epoch(clock, accept):
    job = accept()
    c = claim(clock)
    queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    clock.advance(11)
    queue.recover(now=clock.now())
    assert queue.requeue(job_id=job.pk, expected_state="unknown", expected_epoch=c.epoch, actor="staff:sam",
                         reason="checked", now=clock.now())
    again = claim(clock, "w2")
    assert again.epoch == c.epoch + 1 and again.attempt == 1
    assert not queue.complete(job_id=c.job_id, epoch=c.epoch, result={}, now=clock.now())


def test_a_staff_action_applies_only_in_the_state_the_staff_member_saw(clock, accept):
    job = accept()
    assert not queue.requeue(job_id=job.pk, expected_state="dead", expected_epoch=job.epoch, actor="staff:sam",
                             reason="x", now=clock.now())
    assert not queue.resolve(job_id=job.pk, expected_state="unknown", expected_epoch=job.epoch, to_state="completed",
                             actor="staff:sam", reason="x", now=clock.now())
    assert state(job) == "queued"


def test_a_staff_action_applies_only_in_the_epoch_the_staff_member_saw(clock, accept):
    """Dead at epoch 1, retried and dead again at epoch 2: a page showing epoch 1 moves nothing."""
    job = accept()
    c = claim(clock)
    queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom", code="handler_failed", retryable=False, now=clock.now())
    assert queue.requeue(job_id=job.pk, expected_state="dead", expected_epoch=c.epoch, actor="staff:sam",
                         reason="first look", now=clock.now())
    again = claim(clock, "w2")
    queue.fail(job_id=again.job_id, epoch=again.epoch, error="boom", code="handler_failed", retryable=False,
               now=clock.now())

    stale = queue.requeue(job_id=job.pk, expected_state="dead", expected_epoch=c.epoch, actor="staff:sam",
                          reason="from an old page", now=clock.now())

    assert not stale and stale.reason == f"epoch {c.epoch} superseded by {again.epoch}"
    assert state(job) == "dead"


# --- the event log -----------------------------------------------------------------------------


def test_the_event_log_records_every_transition_and_no_payload_text(clock, accept):
    secret = "Invoice from Initech, IBAN DE89370400440532013000"
    job = accept("diagnostic.sleep", {"seconds": 1}, key=secret)  # a key is input too
    c = claim(clock)
    queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom", code="handler_failed", now=clock.now())
    clock.advance(60)
    c = claim(clock)
    clock.advance(11)
    queue.recover(now=clock.now())
    c = claim(clock)
    queue.complete(job_id=c.job_id, epoch=c.epoch, result={"text": secret}, now=clock.now())
    queue.complete(job_id=c.job_id, epoch=c.epoch - 1, result={}, now=clock.now())

    events = list(JobEvent.objects.filter(job=job).values_list("from_state", "to_state", "epoch"))
    assert events == [
        ("", "queued", 0), ("queued", "leased", 1), ("leased", "queued", 1), ("queued", "leased", 2),
        ("leased", "queued", 2), ("queued", "leased", 3), ("leased", "completed", 3), ("leased", "", 2),
    ]
    dumped = json.dumps(list(JobEvent.objects.values()), default=str)
    assert "Initech" not in dumped and "DE89" not in dumped


def test_no_external_start_on_a_lease_about_to_lapse(clock, accept):
    job = accept()
    c = claim(clock)
    clock.advance(LEASE.total_seconds() - 2)  # no renewal came: 2 s of the lease left
    outcome = queue.mark_external_start(job_id=job.pk, epoch=c.epoch, now=clock.now(), min_left=LEASE / 3)
    assert not outcome and outcome.reason == f"less than {LEASE.total_seconds() / 3:g} s of lease left"
    assert Job.objects.get(pk=job.pk).external_started_at is None
    assert JobEvent.objects.filter(job=job, reason__startswith="external start rejected: less than").exists()
    assert queue.mark_external_start(job_id=job.pk, epoch=c.epoch, now=clock.now(), min_left=timedelta(seconds=1))
