"""Cancellation: at once while a job waits, acknowledged by its worker while it runs."""

from __future__ import annotations

import signal
import subprocess
import threading
from datetime import timedelta

import pytest
from django.db import connection

from jobs import queue
from jobs.clock import system_clock
from jobs.context import JobContext
from jobs.kinds import JobCancelled, Kind
from jobs.models import Job, JobEvent
from jobs.worker import Worker
from jobs.worker.heartbeat import Beat
from tests.conftest import PYTHON, ROOT, child_env, wait_for

LEASE = timedelta(seconds=30)


def cancel(job, now, actor="user:1"):
    return queue.cancel(job_id=job.pk, actor=actor, reason="", now=now)


def state(job) -> str:
    return Job.objects.values_list("state", flat=True).get(pk=job.pk)


def test_a_waiting_job_is_cancelled_at_once_and_never_claimed(clock, accept):
    job = accept("diagnostic.noop")
    outcome = cancel(job, clock.now())
    assert outcome and outcome.state == "cancelled"
    assert queue.claim(now=clock.now(), worker="w", lease=LEASE) is None
    assert JobEvent.objects.filter(job=job, from_state="queued", to_state="cancelled", actor="user:1").exists()


def test_cancelling_twice_is_harmless(clock, accept):
    job = accept("diagnostic.noop")
    cancel(job, clock.now())
    again = cancel(job, clock.now())
    assert again and again.state == "cancelled" and again.reason == "already cancelled"
    assert JobEvent.objects.filter(job=job, to_state="cancelled").count() == 1


@pytest.mark.parametrize("finished", ["completed", "dead", "unknown"])
def test_a_finished_job_is_not_cancellable(clock, accept, finished):
    from tests.conftest import drive_to

    job = drive_to(accept("diagnostic.noop"), finished, now=clock.now())
    outcome = cancel(job, clock.now())
    assert not outcome and outcome.state == finished
    assert state(job) == finished


def test_a_running_job_gets_a_request_its_worker_acknowledges_between_steps(clock, accept, register_kind):
    steps = []

    def two_steps(ctx):
        for step in (1, 2):
            if ctx.cancelled():
                raise JobCancelled()
            steps.append(step)
            if step == 1:  # someone cancels while step 1 runs
                assert cancel(Job.objects.get(pk=ctx.job_id), ctx.now()).reason == "cancel requested"
        return {"steps": steps}

    register_kind(Kind(name="test.steps", handler=two_steps, diagnostic=True))
    job = accept("test.steps")
    w = Worker(name="w1", lease=LEASE, clock=clock, listen=False)
    assert w.run_one()
    assert steps == [1] and state(job) == "cancelled" and w.stats.cancelled == 1
    reasons = list(JobEvent.objects.filter(job=job).values_list("to_state", "reason"))
    assert ("leased", "cancel requested") in reasons and ("cancelled", "cancelled") in reasons


@pytest.mark.parametrize("settled, ends", [(True, "cancelled"), (False, "unknown")])
def test_a_call_in_flight_is_not_recalled_it_settles_then_the_job_is_cancelled(clock, accept, register_kind,
                                                                              settled, ends):
    def outside_call(ctx):
        ctx.mark_external_start("provider call")
        cancel(Job.objects.get(pk=ctx.job_id), ctx.now())  # asked while the call is in flight
        if not settled:
            raise ConnectionResetError("no answer: the outcome is unknown")
        ctx.clear_external_start("provider answered; answer saved")
        if ctx.cancelled():
            raise JobCancelled()
        return {}

    register_kind(Kind(name="test.call", handler=outside_call, diagnostic=True))
    job = accept("test.call")
    Worker(name="w1", lease=LEASE, clock=clock, listen=False).run_one()
    assert state(job) == ends
    reasons = list(JobEvent.objects.filter(job=job).order_by("id").values_list("reason", flat=True))
    if settled:  # what came back is on record before the cancellation
        assert reasons.index("external call settled: provider answered; answer saved") < reasons.index("cancelled")


def test_a_renewal_tells_the_worker_and_the_handler_of_the_request(clock, accept):
    job = accept("diagnostic.noop")
    c = queue.claim(now=clock.now(), worker="w1", lease=LEASE)
    ctx = JobContext(c, clock=clock, stop=threading.Event())
    beat = Beat(c, ctx, lease=LEASE, first_interval=LEASE / 3, claimed_at=clock.now())
    cancel(job, clock.now())
    clock.advance(10)
    assert beat.beat(clock.now())  # still renews: the lease holds while the handler settles
    assert beat.cancel_requested and ctx.stop.is_set()


def test_a_completion_racing_a_cancel_request_wins_and_both_are_on_record(clock, accept):
    job = accept("diagnostic.noop")
    c = queue.claim(now=clock.now(), worker="w1", lease=LEASE)
    cancel(job, clock.now())
    assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={"ok": True}, now=clock.now())
    late = queue.acknowledge_cancel(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    assert not late and late.reason == "job is completed"
    assert state(job) == "completed"
    assert JobEvent.objects.filter(job=job, reason__startswith="cancellation rejected").exists()


def test_a_claim_racing_a_cancel_of_a_waiting_job_exactly_one_wins(clock, accept):
    job = accept("diagnostic.noop")
    c = queue.claim(now=clock.now(), worker="w1", lease=LEASE)  # the claim got there first
    outcome = cancel(job, clock.now())
    assert (outcome.state, outcome.reason) == ("leased", "cancel requested")
    assert state(job) == "leased" and c is not None


@pytest.mark.parametrize("marker, ends", [(False, "cancelled"), (True, "unknown")])
def test_when_the_worker_is_gone_recovery_cancels_never_reruns(clock, accept, marker, ends):
    job = accept("diagnostic.noop")
    c = queue.claim(now=clock.now(), worker="w1", lease=LEASE)
    if marker:
        queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    cancel(job, clock.now())
    clock.advance(LEASE.total_seconds() + 1)  # the worker died
    swept = queue.recover(now=clock.now())
    assert state(job) == ends and job.pk not in swept.requeued
    assert queue.claim(now=clock.now(), worker="w2", lease=LEASE) is None


@pytest.mark.slow
def test_a_running_handler_hears_of_its_cancellation_within_a_second(transactional_db, accept, tmp_path):
    """A real worker (PostgreSQL: NOTIFY to its listener; SQLite: its look twice a second),
    with the default 30 s lease, so no renewal tells it within the 3 s its jobs take."""
    trace = tmp_path / "started"
    jobs = [accept("diagnostic.sleep", {"seconds": 3}, now=system_clock.now()) for _ in range(3)]
    worker = subprocess.Popen([PYTHON, "manage.py", "runworkers", "--processes", "1", "--prefetch", "1"], cwd=ROOT,
                              env=child_env(JOBS_DIAGNOSTIC_TRACE=str(trace)), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    asked = {}
    try:
        for job in jobs:  # one after another, each while its handler runs
            wait_for(lambda job=job: trace.exists() and f"{job.pk} " in trace.read_text(), timeout=30)
            asked[job.pk] = system_clock.now()
            assert cancel(job, asked[job.pk]).reason == "cancel requested"
        wait_for(lambda: not Job.objects.filter(pk__in=asked, state="leased").exists(), timeout=15)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)

    assert {state(job) for job in jobs} == {"cancelled"}
    latency = {e.job_id: (e.at - asked[e.job_id]).total_seconds()
               for e in JobEvent.objects.filter(job_id__in=asked, to_state="cancelled")}
    print(f"\n{connection.vendor}: cancel request to cancelled, seconds: "
          f"{', '.join(f'{s:.2f}' for s in latency.values())}")
    assert len(latency) == 3 and max(latency.values()) < 2.5, latency
