"""The watchdog: an in-process handler past its job's deadline is ended the way the sandbox ends a child.

Kinds that do not run in the sandbox (``webhook.deliver``, the diagnostic ones) run their
handler in the worker process, where a stuck call (a receiver that drips a byte every few
seconds, a C call that never returns) cannot be interrupted. One real worker process runs a
handler that sleeps without heeding its stop request, on a job whose deadline is 3 s away,
with a second job waiting behind it. At the deadline the job is ``dead`` with the sandbox's
deadline failure (``deadline``: "the job ran out of time"), the worker process is ended and
replaced, and the replacement runs the waiting job: no job held longer than its deadline, none
lost, none completed twice.
"""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta

import pytest

from jobs.clock import system_clock
from jobs.models import Job, JobEvent
from jobs.queue import FailureCode
from tests.conftest import wait_for
from tests.workers import Workers, children

pytestmark = pytest.mark.slow

DEADLINE = 3.0  # seconds


def stuck_and_behind(workers: Workers, accept) -> tuple[Job, Job]:
    """Once the worker is up: a job whose handler sleeps 60 s heeding nothing, on a deadline
    ``DEADLINE`` s away, and a quick job behind it."""
    wait_for(lambda: "event=worker_started" in workers.text(), timeout=30)
    stuck = accept("diagnostic.sleep", {"seconds": 60, "ignore_stop": True}, now=system_clock.now(),
                   deadline=timedelta(seconds=DEADLINE))
    return stuck, accept("diagnostic.sleep", {"seconds": 0.05}, now=system_clock.now())


def test_an_in_process_handler_past_its_deadline_is_ended_and_its_worker_replaced(
        tmp_path, transactional_db, accept):
    w = Workers(tmp_path / "workers.log", "--processes", "1", "--lease", "30", "--poll-interval", "0.05")
    try:
        stuck, behind = stuck_and_behind(w, accept)
        started = time.monotonic()
        wait_for(lambda: Job.objects.get(pk=behind.pk).state == "completed", timeout=DEADLINE + 20)
        took = time.monotonic() - started
        w.signal(signal.SIGTERM)
        assert w.wait(timeout=30) == 0
    finally:
        w.kill_all()
    job = Job.objects.get(pk=stuck.pk)
    print(f"\nstuck handler's job: {job.state} ({job.failure_code}: {job.last_error}); the job behind it "
          f"completed {took:.1f} s after both were queued (deadline {DEADLINE} s)")
    assert (job.state, job.failure_code) == ("dead", FailureCode.DEADLINE)
    assert "ran out of time" in job.last_error
    assert took < DEADLINE + 5
    assert JobEvent.objects.filter(job=stuck, to_state="completed").count() == 0
    log = w.text()
    assert "event=handler_killed" in log and "event=worker_died" in log


def test_a_worker_that_cannot_run_its_watchdog_is_killed_by_the_supervisor_past_the_deadline(
        tmp_path, transactional_db, accept):
    """A worker stopped whole (SIGSTOP: no thread of it runs, as with a C call holding the GIL)
    is killed by the supervisor 5 s past its handler's deadline; recovery ends the job. It is
    stopped as early as it can be: the instant it is about to write the job's start, before
    its handler or its watchdog runs, which the supervisor must already know of."""
    trace = tmp_path / "starts"
    w = Workers(tmp_path / "workers.log", "--processes", "1", "--lease", "30", "--poll-interval", "0.05",
                JOBS_START_TRACE=str(trace))
    try:
        stuck, behind = stuck_and_behind(w, accept)
        wait_for(lambda: trace.exists() and trace.read_text().startswith(f"{stuck.pk} "), timeout=20, every=0.001)
        [pid] = children(w.proc.pid)
        os.kill(pid, signal.SIGSTOP)
        wait_for(lambda: Job.objects.get(pk=behind.pk).state == "completed", timeout=DEADLINE + 5 + 30)
        w.signal(signal.SIGTERM)
        assert w.wait(timeout=30) == 0
    finally:
        w.kill_all()
    job = Job.objects.get(pk=stuck.pk)
    assert (job.state, job.failure_code) == ("dead", FailureCode.DEADLINE_PASSED)
    assert JobEvent.objects.filter(job=stuck, to_state="completed").count() == 0
    assert "event=watchdog_killed" in w.text()


def test_the_watchdog_calls_back_only_for_a_run_still_armed_at_its_time():
    from jobs.worker.watchdog import Watchdog

    fired: list[str] = []
    dog = Watchdog(fired.append)
    try:
        dog.arm("finished in time", 0.2)
        dog.disarm()
        dog.arm("later", 5.0)  # later than the thread's wake-up: it is not woken for it
        dog.disarm()
        dog.arm("stuck", 0.1)  # sooner: it is
        wait_for(lambda: fired, timeout=5)
        time.sleep(0.3)
    finally:
        dog.close()
    assert fired == ["stuck"]


def test_fast_runs_one_after_another_do_not_wake_the_watchdog_each():
    """A no-op job is disarmed before the thread wakes for it; the next one's time is later."""
    from jobs.worker.watchdog import Watchdog

    fired: list[str] = []
    dog = Watchdog(fired.append)
    try:
        for n in range(200):
            dog.arm(f"fast {n}", 30.0 + n / 1000)
            dog.disarm()
            time.sleep(0.0005)  # the thread may run between two jobs, as it does in a worker
        woken = dog.wakes
        dog.arm("stuck", 0.05)  # sooner than the thread's wake-up: it is woken for it
        wait_for(lambda: fired, timeout=5)
    finally:
        dog.close()
    assert woken <= 2 and fired == ["stuck"]
