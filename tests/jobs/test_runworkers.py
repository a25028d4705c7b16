"""``manage.py runworkers`` as operators run it: real processes, real signals, one database."""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.core.management import CommandError, call_command

from jobs.clock import system_clock
from jobs.models import Job, JobEvent
from tests.conftest import wait_for
from tests.workers import Workers

pytestmark = pytest.mark.slow


@pytest.fixture
def runworkers(tmp_path, transactional_db):
    started: list[Workers] = []

    def start(*args: str) -> Workers:
        w = Workers(tmp_path / f"runworkers-{len(started)}.log", *args)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill_all()


@pytest.fixture
def submit(accept):
    def submit_(kind: str = "diagnostic.sleep", payload: dict | None = None):
        return accept(kind, payload or {}, now=system_clock.now())

    return submit_


def row(job) -> Job:
    return Job.objects.get(pk=job.pk)


def worker_pid(job) -> int:
    """Workers are named ``host:pid``, so the lease holder is a process we can signal."""
    return int(row(job).leased_by.rsplit(":", 1)[1])


def test_burst_drains_the_eligible_jobs_and_exits_0(runworkers, submit):
    secret = "Initech IBAN DE89370400440532013000"
    jobs = [submit("diagnostic.noop") for _ in range(20)] + [submit(payload={"seconds": 0.05}) for _ in range(10)]
    Job.objects.filter(pk=jobs[0].pk).update(payload={"note": secret})  # payload text must never be logged

    workers = runworkers("--processes", "2", "--burst")

    assert workers.wait() == 0
    assert set(Job.objects.values_list("state", flat=True)) == {"completed"}
    log = workers.text()
    assert log.count("event=claimed ") == 30 and log.count("event=completed ") == 30
    assert "DE89" not in log and "Initech" not in log


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_lets_the_running_job_finish_then_exits_0(runworkers, submit, signum):
    job = submit(payload={"seconds": 1})
    workers = runworkers("--processes", "2", "--grace", "10")
    wait_for(lambda: row(job).state == "leased")

    workers.signal(signum)

    assert workers.wait() == 0
    assert (row(job).state, row(job).epoch) == ("completed", 1)


def test_no_job_is_claimed_after_the_signal(runworkers, submit):
    first = submit(payload={"seconds": 1})
    workers = runworkers("--processes", "1", "--grace", "10")
    wait_for(lambda: row(first).state == "leased")
    workers.signal(signal.SIGTERM)
    wait_for(lambda: "event=supervisor_stopping" in workers.text())
    second = submit("diagnostic.noop")

    assert workers.wait() == 0
    assert row(first).state == "completed" and (row(second).state, row(second).epoch) == ("queued", 0)


def test_sigterm_gives_back_a_job_that_outlasts_the_grace_period_and_exits_0(runworkers, submit):
    job = submit(payload={"seconds": 30})
    workers = runworkers("--processes", "1", "--grace", "0.5")
    wait_for(lambda: row(job).state == "leased")

    workers.signal(signal.SIGTERM)

    assert workers.wait() == 0
    assert (row(job).state, row(job).attempts) == ("queued", 0)  # handed back, attempt not spent
    assert JobEvent.objects.filter(job=job, reason="deferred: worker shutting down").count() == 1
    assert "event=given_back " in workers.text()


def test_sigterm_leaves_a_job_past_its_external_start_to_the_lease(runworkers, submit):
    job = submit(payload={"seconds": 30, "external": True})
    workers = runworkers("--processes", "1", "--grace", "0.5", "--lease", "2")
    wait_for(lambda: row(job).external_started_at is not None)

    workers.signal(signal.SIGTERM)

    assert workers.wait() == 0
    assert (row(job).state, row(job).epoch) == ("leased", 1)  # no re-run: recovery will say unknown
    assert "event=left_to_lease " in workers.text()


def test_a_second_signal_exits_at_once(runworkers, submit):
    job = submit(payload={"seconds": 30})
    workers = runworkers("--processes", "2", "--grace", "60")
    wait_for(lambda: row(job).state == "leased")
    workers.signal(signal.SIGTERM)
    wait_for(lambda: "event=supervisor_stopping" in workers.text())

    sent = time.monotonic()
    workers.signal(signal.SIGTERM)

    assert workers.wait(timeout=10) != 0
    assert time.monotonic() - sent < 5
    assert row(job).state == "leased"  # its lease will bring it back


def test_a_sigkilled_worker_is_replaced_and_its_job_recovered_on_a_later_epoch(runworkers, submit):
    job = submit(payload={"seconds": 2})
    workers = runworkers("--processes", "1", "--lease", "1", "--poll-interval", "0.2")
    wait_for(lambda: row(job).state == "leased" and row(job).started_at is not None)  # its handler runs
    killed = worker_pid(job)

    os.kill(killed, signal.SIGKILL)

    wait_for(lambda: row(job).state == "completed")
    assert row(job).epoch == 2 and worker_pid(job) != killed  # done by the replacement
    assert list(job.events.filter(actor="recovery").values_list("to_state", "reason")) == [
        ("queued", "lease expired")
    ]
    assert f"pid={killed} exitcode=-9 " in workers.text()
    workers.signal(signal.SIGTERM)
    assert workers.wait() == 0


def test_runworkers_refuses_fewer_than_one_process(db):
    with pytest.raises(CommandError, match="at least 1"):
        call_command("runworkers", processes=0)


def test_a_worker_killed_before_its_completion_batch_commits_leaves_the_job_to_be_redelivered(runworkers, submit,
                                                                                                  tmp_path):
    job = submit("diagnostic.noop")
    # The completer waits 1 s before each commit: long enough to look, and to kill it there.
    workers = Workers(tmp_path / "paused.log", "--processes", "1", "--lease", "3", "--poll-interval", "0.1",
                      "--completion-batch", "16", JOBS_COMPLETER_PAUSE="1")
    try:
        wait_for(lambda: f"event=completion_pending job={job.pk} epoch=1 " in workers.text())
        killed = worker_pid(job)
        # The handler has finished, its batch has not committed: nobody is shown a completion.
        assert (row(job).state, row(job).epoch) == ("leased", 1)
        assert not job.events.filter(to_state="completed").exists()
        assert "event=completed " not in workers.text()

        os.kill(killed, signal.SIGKILL)

        wait_for(lambda: row(job).state == "completed", timeout=30)
        assert row(job).epoch == 2 and worker_pid(job) != killed  # redelivered, done by the replacement
        assert row(job).external_started_at is None
        assert list(job.events.filter(to_state="completed").values_list("epoch", flat=True)) == [2]
        assert list(job.events.filter(actor="recovery").values_list("to_state", "reason")) == [
            ("queued", "lease expired")]
        workers.signal(signal.SIGTERM)
        assert workers.wait() == 0
    finally:
        workers.kill_all()


def test_a_stopping_worker_hands_back_its_unstarted_prefetched_jobs_at_once(runworkers, submit, tmp_path):
    # A handler of 0.2 s, then one of 30 s: the worker prefetches behind the first (it counts as
    # fast within a 1 s window) and is still in the long one when it is told to stop.
    first = submit(payload={"seconds": 0.2})
    long_job = submit(payload={"seconds": 30})
    waiting = [submit("diagnostic.noop") for _ in range(3)]
    w = Workers(tmp_path / "prefetch.log", "--processes", "1", "--prefetch", "4", "--grace", "20",
                JOBS_PREFETCH_WINDOW="1")
    try:
        wait_for(lambda: row(long_job).state == "leased" and row(first).state == "completed")
        held = [j for j in waiting if row(j).state == "leased"]
        assert held, "the worker should hold prefetched jobs behind the long one"

        w.signal(signal.SIGTERM)

        # Given back at once, not after the long job's 20 s of grace.
        wait_for(lambda: all(row(j).state == "queued" for j in held), timeout=5)
        for j in held:
            assert (row(j).epoch, row(j).attempts) == (1, 0)
            assert j.events.filter(from_state="leased", to_state="queued",
                                   reason="handed back unstarted: worker stopping").count() == 1
        assert row(long_job).state == "leased"
        assert w.text().count("event=given_back ") == len(held)
    finally:
        w.kill_all()
