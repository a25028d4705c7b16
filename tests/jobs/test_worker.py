"""The worker loop, driven in-process: what it writes after each way a handler can end."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

import pytest
from django.db import connection  # noqa: F401  read by the skipif condition below

from jobs import queue
from jobs.context import JobContext
from jobs.kinds import JobDeferred, JobFailed, Kind
from jobs.logs import JsonFormatter, KeyValueFormatter, fields_of
from jobs.models import Job, JobEvent
from jobs.worker import Worker
from jobs.worker.backoff import IdleBackoff
from jobs.worker.heartbeat import Beat
from tests.conftest import wait_for

LEASE = timedelta(seconds=10)


@pytest.fixture
def scripted(accept, register_kind):
    """Accept one job of a kind whose handler is ``fn``."""

    def make(fn, payload: dict | None = None):
        register_kind(Kind(name="test.scripted", handler=fn, diagnostic=True, deadline=timedelta(minutes=5)))
        return accept("test.scripted", payload or {})

    return make


def logged(caplog, name: str) -> list[dict]:
    """The fields of each ``name`` event the worker logged."""
    return [f for f in map(fields_of, caplog.records) if f["event"] == name]


def worker(clock, **kwargs) -> Worker:
    return Worker(name="w1", lease=kwargs.pop("lease", LEASE), clock=clock, listen=False, **kwargs)


def events(job) -> list[tuple[str, str, int]]:
    return list(JobEvent.objects.filter(job_id=job.pk).values_list("from_state", "to_state", "epoch"))




# --- run_one ------------------------------------------------------------------------------


def test_run_one_returns_false_when_no_job_is_eligible(clock, db):
    w = worker(clock)
    assert w.run_one() is False
    assert w.stats.empty_polls == 1


def test_run_one_claims_runs_and_completes_the_job_with_its_epoch(clock, accept):
    job = accept("diagnostic.noop")
    w = worker(clock)
    assert w.run_one() is True
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.epoch, row.result) == ("completed", 1, {"ok": True})
    assert events(job) == [("", "queued", 0), ("queued", "leased", 1), ("leased", "completed", 1)]
    assert (w.stats.claimed, w.stats.completed) == (1, 1)


def test_the_handler_gets_the_remaining_deadline_as_its_budget(clock, scripted):
    seen = {}
    job = scripted(lambda ctx: seen.setdefault("budget", ctx.remaining()) and {})
    clock.advance(60)
    worker(clock).run_one()
    assert seen["budget"] == Job.objects.get(pk=job.pk).deadline - clock.now()


def test_a_handler_exception_is_a_safe_retryable_failure(clock, scripted):
    job = scripted(lambda ctx: 1 / 0)
    w = worker(clock)
    w.run_one()
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.attempts) == ("queued", 1)
    assert row.last_error.startswith("ZeroDivisionError")
    assert w.stats.failed == 1


def test_a_handler_that_says_not_retryable_sends_the_job_to_dead(clock, scripted):
    def refuse(ctx):
        raise JobFailed("the document is not an invoice", retryable=False, code="not_invoice")

    job = scripted(refuse)
    worker(clock).run_one()
    assert Job.objects.get(pk=job.pk).state == "dead"


def test_a_handler_exception_after_the_external_start_marker_makes_the_job_unknown(clock, scripted):
    def reach_out_then_crash(ctx):
        ctx.mark_external_start("provider call")
        raise ConnectionResetError("provider hung up")

    job = scripted(reach_out_then_crash)
    worker(clock).run_one()
    assert Job.objects.get(pk=job.pk).state == "unknown"


def test_a_deferred_job_returns_to_queued_without_spending_an_attempt(clock, scripted):
    def rate_limited(ctx):
        raise JobDeferred(ctx.now() + timedelta(seconds=30), "provider said 429")

    job = scripted(rate_limited)
    w = worker(clock)
    w.run_one()
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.attempts, row.available_at) == ("queued", 0, clock.now() + timedelta(seconds=30))
    assert w.stats.deferred == 1


def test_a_result_that_is_not_a_dict_is_a_failure_that_is_not_retried(clock, scripted):
    job = scripted(lambda ctx: "done")
    worker(clock).run_one()
    assert Job.objects.get(pk=job.pk).state == "dead"


def test_a_stale_completion_is_logged_and_counted_and_never_retried(clock, scripted, caplog):
    def pause_past_the_lease(ctx):
        clock.advance(LEASE.total_seconds() + 1)  # the worker "paused"; another took over
        queue.recover(now=clock.now())
        assert queue.claim(now=clock.now(), worker="w2", lease=LEASE).epoch == 2
        return {"by": "w1"}

    job = scripted(pause_past_the_lease)
    w = worker(clock)
    with caplog.at_level(logging.INFO, logger="jobs.worker"):
        w.run_one()
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.epoch, row.leased_by, row.result) == ("leased", 2, "w2", None)
    assert w.stats.rejected == 1 and w.stats.completed == 0
    rejected = JobEvent.objects.filter(job_id=job.pk, to_state="", reason__startswith="stale completion")
    assert rejected.count() == 1  # one attempt, not retried
    [line] = logged(caplog, "stale_rejected")
    assert isinstance(line.pop("duration_ms"), int)
    assert line == {"event": "stale_rejected", "job": job.pk, "kind": "test.scripted", "epoch": 1, "attempt": 1,
                    "write": "complete", "reason": "epoch 1 superseded by 2", "worker": "w1"}


def test_a_fenced_write_refused_inside_the_handler_is_a_rejection_not_a_failure(clock, scripted):
    def lose_the_claim_then_write(ctx):
        clock.advance(LEASE.total_seconds() + 1)
        queue.recover(now=clock.now())
        ctx.mark_external_start()  # raises StaleEpoch: the job is no longer ours
        return {}

    job = scripted(lose_the_claim_then_write)
    w = worker(clock)
    w.run_one()
    assert Job.objects.get(pk=job.pk).state == "queued"  # as recovery left it
    assert (w.stats.rejected, w.stats.failed) == (1, 0)


def test_every_log_line_names_the_job_but_never_its_payload(clock, accept, caplog):
    secret = "IBAN DE89370400440532013000"
    accept("diagnostic.sleep", {"seconds": 0, "external": True})
    job = accept("diagnostic.sleep", {"seconds": 0, "fail_attempts": 1})
    Job.objects.filter(pk=job.pk).update(payload={"seconds": 0, "fail_attempts": 1, "note": secret})
    w = worker(clock)
    with caplog.at_level(logging.INFO, logger="jobs.worker"):
        w.run_one(), w.run_one()
    assert any(f["job"] == job.pk for f in logged(caplog, "claimed"))
    assert all(isinstance(f["duration_ms"], int) for f in logged(caplog, "completed"))
    assert [f["error"] for f in logged(caplog, "failed")] == ["handler_failed"]
    written = [formatter.format(r) for r in caplog.records for formatter in (KeyValueFormatter(), JsonFormatter())]
    assert written and not any("DE89" in line or "seconds" in line for line in written)


# --- recovery -----------------------------------------------------------------------------


def test_the_recovery_sweep_runs_at_a_bounded_rate_not_before_every_claim(clock, db, monkeypatch):
    sweeps = []
    real = queue.recover
    monkeypatch.setattr(queue, "recover", lambda now: sweeps.append(now) or real(now=now))
    w = worker(clock, recover_every=timedelta(seconds=5))
    for _ in range(5):
        w.run_one()
    assert len(sweeps) == 1
    clock.advance(5)
    w.run_one(), w.run_one()
    assert len(sweeps) == 2


def test_a_recovered_job_is_logged_and_counted(clock, accept, caplog):
    job = accept("diagnostic.noop")
    queue.claim(now=clock.now(), worker="crashed", lease=LEASE)
    clock.advance(11)
    w = worker(clock)
    with caplog.at_level(logging.INFO, logger="jobs.worker"):
        assert w.run_one()  # sweeps, then claims the recovered job on epoch 2
    assert {"event": "recovered", "job": job.pk, "to": "queued", "worker": "w1"} in logged(caplog, "recovered")
    assert w.stats.recovered == 1
    assert Job.objects.get(pk=job.pk).epoch == 2


# --- the heartbeat's policy, on a logical clock -----------------------------------------------


def heartbeat_for(clock, job_pk, lease=LEASE):
    claim = queue.claim(now=clock.now(), worker="w1", lease=lease)
    assert claim.job_id == job_pk
    ctx = JobContext(claim, clock=clock, stop=threading.Event())
    return Beat(claim, ctx, lease=lease, first_interval=lease / 3, claimed_at=clock.now()), ctx


def test_the_heartbeat_renews_the_lease_and_never_past_the_deadline(clock, accept):
    job = accept()
    clock.advance(seconds=(job.deadline - clock.now()).total_seconds() - 20)
    beat, ctx = heartbeat_for(clock, job.pk)
    for _ in range(2):
        clock.advance(4)
        assert beat.beat(clock.now())
        assert Job.objects.get(pk=job.pk).lease_expires_at == clock.now() + LEASE
    clock.advance(4)
    assert beat.beat(clock.now())
    assert Job.objects.get(pk=job.pk).lease_expires_at == job.deadline  # capped, not now + lease
    clock.advance(4)
    assert beat.beat(clock.now()) and beat.renewals == 3  # nothing left to renew for
    assert not ctx.stop.is_set()


def test_the_heartbeat_stops_and_tells_the_handler_when_the_budget_is_spent(clock, accept):
    job = accept()
    beat, ctx = heartbeat_for(clock, job.pk)
    clock.advance(seconds=(job.deadline - clock.now()).total_seconds())
    assert not beat.beat(clock.now())
    assert beat.budget_spent and ctx.stop.is_set()


def test_the_number_of_renewals_is_bounded_by_the_budget(clock, accept):
    job = accept()  # a ten-minute deadline, a ten-second lease: at most 180 renewals
    beat, _ = heartbeat_for(clock, job.pk)
    while beat.beat(clock.now()):
        clock.advance(LEASE.total_seconds() / 3)
    assert beat.max_renewals == 180 and 170 < beat.renewals <= 180
    assert clock.now() >= job.deadline


def test_a_rejected_renewal_marks_the_claim_lost_and_stops_the_handler(clock, accept):
    job = accept()
    beat, ctx = heartbeat_for(clock, job.pk)
    clock.advance(11)
    queue.recover(now=clock.now())
    assert not beat.beat(clock.now())
    assert beat.lost == "job is queued" and ctx.stop.is_set()


def test_no_renewal_runs_once_the_handler_has_returned(clock, accept):
    job = accept()
    beat, _ = heartbeat_for(clock, job.pk)
    beat.end()
    assert not beat.beat(clock.now())
    assert not JobEvent.objects.filter(job_id=job.pk, reason__startswith="renewal").exists()


def test_idle_backoff_doubles_up_to_the_cap_and_resets():
    idle = IdleBackoff(cap=1.0, start=0.1)
    assert [idle.next_delay() for _ in range(6)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    idle.reset()
    assert idle.next_delay() == 0.1


# --- real time: heartbeat thread, shutdown, wake-ups (committed rows, threads) -------------------


@pytest.fixture
def accept_committed(transactional_db, accept):
    return accept


@pytest.fixture
def running():
    """Run a worker's loop in a thread; stop it at the end of the test whatever happens."""
    started: list[tuple[Worker, threading.Thread]] = []

    def start(w: Worker) -> Worker:
        t = threading.Thread(target=w.run, daemon=True)
        t.start()
        started.append((w, t))
        return w

    yield start
    for w, t in started:
        w.stop(grace=0)
        t.join(timeout=10)


def leased(job) -> bool:
    return Job.objects.filter(pk=job.pk, state="leased").exists()


def test_a_job_longer_than_its_lease_completes_because_the_heartbeat_renews_it(accept_committed):
    from jobs.clock import system_clock

    job = accept_committed("diagnostic.sleep", {"seconds": 1.5}, now=system_clock.now())
    w = Worker(name="w1", lease=timedelta(seconds=0.6), listen=False)
    try:
        assert w.run_one()
    finally:
        w.close()
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.epoch) == ("completed", 1)
    assert w.stats.rejected == 0


def test_stop_lets_the_running_job_finish_within_the_grace_period(accept_committed, running):
    from jobs.clock import system_clock

    job = accept_committed("diagnostic.sleep", {"seconds": 0.5}, now=system_clock.now())
    w = running(Worker(name="w1", lease=timedelta(seconds=5), listen=False, poll_interval=0.05))
    wait_for(lambda: leased(job))
    w.stop(grace=10)
    wait_for(lambda: Job.objects.get(pk=job.pk).state == "completed")
    assert w.stats.given_back == 0


def test_stop_gives_back_a_job_that_outlasts_the_grace_period_without_spending_an_attempt(accept_committed, running):
    from jobs.clock import system_clock

    job = accept_committed("diagnostic.sleep", {"seconds": 30}, now=system_clock.now())
    w = running(Worker(name="w1", lease=timedelta(seconds=5), listen=False, poll_interval=0.05))
    wait_for(lambda: leased(job))
    w.stop(grace=0.2)
    wait_for(lambda: Job.objects.get(pk=job.pk).state == "queued")
    row = Job.objects.get(pk=job.pk)
    assert (row.attempts, row.epoch) == (0, 1)
    assert JobEvent.objects.filter(job_id=job.pk, reason="deferred: worker shutting down").exists()
    wait_for(lambda: w.stats.given_back == 1)


def test_stop_leaves_a_job_with_an_external_start_to_its_lease(accept_committed, running):
    from jobs.clock import system_clock

    job = accept_committed("diagnostic.sleep", {"seconds": 30, "external": True}, now=system_clock.now())
    w = running(Worker(name="w1", lease=timedelta(seconds=5), listen=False, poll_interval=0.05))
    wait_for(lambda: Job.objects.filter(pk=job.pk, external_started_at__isnull=False).exists())
    w.stop(grace=0.2)
    wait_for(lambda: w.stats.left_to_lease == 1)
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.epoch) == ("leased", 1)  # recovery will make it unknown, not a re-run
    assert w.stats.given_back == 0 and w.stats.failed == 0


def stopping_as_it_claims(monkeypatch, w: Worker, grace: float) -> None:
    """``w.stop(grace)`` arrives just after the claim commits, before the job starts; a grace
    of 0 has also run out by the time the worker gets to the job."""
    claim_many = queue.claim_many

    def claim_then_stop(**kwargs):
        claims = claim_many(**kwargs)
        w.stop(grace=grace)
        if grace == 0:
            w._grace_timer.join()
        return claims

    monkeypatch.setattr(queue, "claim_many", claim_then_stop)


def test_a_job_claimed_just_before_stop_runs_within_the_grace_period(clock, accept, monkeypatch):
    job = accept("diagnostic.noop")
    w = worker(clock)
    stopping_as_it_claims(monkeypatch, w, grace=60)
    try:
        assert w.run_one()
    finally:
        w._grace_timer.cancel()
    assert Job.objects.get(pk=job.pk).state == "completed"
    assert (w.stats.completed, w.stats.given_back) == (1, 0)


def test_a_job_whose_grace_period_ended_before_it_started_is_handed_back_unstarted(clock, accept, monkeypatch):
    job = accept("diagnostic.noop")
    w = worker(clock)
    stopping_as_it_claims(monkeypatch, w, grace=0)
    monkeypatch.setattr(Worker, "_handle", lambda *a: pytest.fail("a job past its grace period was started"))
    assert w.run_one()
    row = Job.objects.get(pk=job.pk)
    assert (row.state, row.epoch, row.attempts) == ("queued", 1, 0)
    assert w.stats.given_back == 1


def test_burst_drains_the_eligible_jobs_and_returns(accept_committed):
    from jobs.clock import system_clock

    jobs = [accept_committed("diagnostic.noop", now=system_clock.now()) for _ in range(5)]
    later = accept_committed("diagnostic.noop", now=system_clock.now())
    Job.objects.filter(pk=later.pk).update(available_at=system_clock.now() + timedelta(hours=1))
    stats = Worker(name="w1", burst=True, listen=False).run()
    assert stats.completed == 5
    assert set(Job.objects.filter(pk__in=[j.pk for j in jobs]).values_list("state", flat=True)) == {"completed"}
    assert Job.objects.get(pk=later.pk).state == "queued"  # not eligible yet: left for later


def test_an_idle_worker_picks_up_a_new_job_within_one_poll_interval(accept_committed, running):
    from jobs.clock import system_clock

    poll = 0.5
    w = Worker(name="w1", listen=False, poll_interval=poll)
    w.idle = IdleBackoff(cap=poll, start=poll)  # as if it had been idle long enough to reach the cap
    running(w)
    wait_for(lambda: w.stats.empty_polls >= 1)
    job = accept_committed("diagnostic.noop", now=system_clock.now())
    polls_before = w.stats.empty_polls
    wait_for(lambda: Job.objects.get(pk=job.pk).state == "completed", timeout=poll + 10)
    # Claimed at the first poll after acceptance (one more empty poll may have been under way).
    assert w.stats.empty_polls - polls_before <= 1


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="LISTEN/NOTIFY is PostgreSQL's")
def test_on_postgresql_notify_wakes_an_idle_worker_long_before_its_poll_interval(accept_committed, running):
    from jobs.clock import system_clock

    w = Worker(name="w1", poll_interval=30)
    w.idle = IdleBackoff(cap=30, start=30)
    running(w)
    wait_for(lambda: w.stats.empty_polls >= 1)  # now waiting 30 s before the next poll
    job = accept_committed("diagnostic.noop", now=system_clock.now())
    wait_for(lambda: Job.objects.get(pk=job.pk).state == "completed", timeout=5)


# --- self-fencing: renewals failing, the handler stops before the lease ends --------------------


@pytest.fixture
def renewals_fail(monkeypatch):
    from django.db import OperationalError

    def unreachable(**kwargs):
        raise OperationalError("could not connect to server: Connection timed out")

    monkeypatch.setattr(queue, "renew", unreachable)


def test_a_worker_that_cannot_renew_stops_its_handler_before_the_lease_ends(accept_committed, renewals_fail,
                                                                            register_kind, caplog):
    from jobs.clock import system_clock

    seen = {}

    def work_until_told(ctx):
        if ctx.stop.wait(10):
            seen["stopped_at"] = system_clock.now()
        return {"done": True}

    register_kind(Kind(name="test.long", handler=work_until_told, diagnostic=True))
    job = accept_committed("test.long", {}, now=system_clock.now())
    w = Worker(name="w1", lease=timedelta(seconds=0.9), listen=False)
    try:
        with caplog.at_level(logging.INFO, logger="jobs.worker"):
            assert w.run_one()
    finally:
        w.close()
    row = Job.objects.get(pk=job.pk)
    assert seen["stopped_at"] < row.lease_expires_at  # told to stop while the lease still held
    assert (row.state, row.result) == ("leased", None)  # and wrote nothing: recovery decides
    assert w.stats.rejected == 1 and w.stats.completed == 0
    assert logged(caplog, "self_fenced") and logged(caplog, "stale_rejected")[0]["reason"].startswith("self-fenced")
