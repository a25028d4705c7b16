"""Tasks enqueued through the framework and run by real ``runworkers`` processes, on either store."""

from __future__ import annotations

import os
import signal

import pytest

from jobs import queue
from jobs.clock import system_clock
from jobs.models import Job
from jobs.tasks_backend.kind import KIND, OutcomeUnknown, TaskCall
from tests.conftest import wait_for
from tests.tasks.sample_tasks import add, add_later, fail_with, nap, send_payment, which_attempt
from tests.workers import Workers

pytestmark = pytest.mark.slow

SECRET = "Initech invoice 4711, IBAN DE89370400440532013000"


@pytest.fixture
def runworkers(tmp_path, transactional_db, monkeypatch):
    """Start ``runworkers`` processes that record the framework's signals in a file."""
    monkeypatch.setenv("TASK_SIGNAL_LOG", str(tmp_path / "signals.log"))
    started: list[Workers] = []

    def start(*args: str) -> Workers:
        w = Workers(tmp_path / f"runworkers-{len(started)}.log", *args)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill_all()


def signals_sent(tmp_path) -> list[list[str]]:
    path = tmp_path / "signals.log"
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def job_of(result) -> Job:
    return Job.objects.get(pk=int(result.id))


def test_tasks_enqueued_here_are_run_by_runworkers_burst_and_read_back(runworkers, tmp_path):
    summed, awaited, contextual = add.enqueue(2, b=3), add_later.enqueue(4, 5), which_attempt.enqueue()
    failing = fail_with.enqueue(SECRET)

    workers = runworkers("--processes", "2", "--burst")

    assert workers.wait() == 0
    result = add.get_result(summed.id)
    assert (result.status, result.return_value) == ("SUCCESSFUL", 5)
    [worker_id] = result.worker_ids
    assert worker_id.rsplit(":", 1)[1].isdigit()  # host:pid of the process that ran it
    assert add_later.get_result(awaited.id).return_value == 9
    assert which_attempt.get_result(contextual.id).return_value == {"attempt": 1, "id": contextual.id}
    retrying = fail_with.get_result(failing.id)  # its retry waits for the backoff: burst left it queued
    assert (retrying.status, retrying.errors[0].exception_class_path) == ("READY", "builtins.ValueError")
    # The framework's signals were sent by the worker process that ran each task, not here.
    pid = worker_id.rsplit(":", 1)[1]
    sent = signals_sent(tmp_path)
    assert [s for s in sent if s[1] == summed.id] == [["started", summed.id, "RUNNING", pid],
                                                       ["finished", summed.id, "SUCCESSFUL", pid]]
    assert [s[0] for s in sent if s[1] == failing.id] == ["started"]  # not finished: a retry follows
    assert str(os.getpid()) not in {s[3] for s in sent}
    log = workers.text()
    assert "Initech" not in log and "DE89" not in log


def test_a_task_whose_function_is_gone_is_dead_once_and_the_workers_carry_on(runworkers, alice):
    gone = queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind=KIND, operation_key="gone",
                        payload=TaskCall(function="tests.tasks.sample_tasks.renamed_long_ago", args=[], kwargs={}
                                         ).payload(), now=system_clock.now(), offered_only=False).job
    after = add.enqueue(1, 1)

    workers = runworkers("--processes", "1", "--burst")

    assert workers.wait() == 0
    gone.refresh_from_db()
    assert (gone.state, gone.attempts, gone.epoch) == ("dead", 1, 1)
    assert "cannot import the task function 'tests.tasks.sample_tasks.renamed_long_ago'" in gone.last_error
    assert add.get_result(after.id).return_value == 2
    assert "error=task_not_found" in workers.text()


def test_a_sigkilled_workers_task_is_redelivered_on_a_new_epoch(runworkers):
    enqueued = nap.enqueue(2)
    workers = runworkers("--processes", "1", "--lease", "1", "--poll-interval", "0.2")
    wait_for(lambda: job_of(enqueued).state == "leased")
    killed = job_of(enqueued).leased_by

    os.kill(int(killed.rsplit(":", 1)[1]), signal.SIGKILL)

    wait_for(lambda: job_of(enqueued).state == "completed")
    result = nap.get_result(enqueued.id)
    assert (result.status, result.return_value, job_of(enqueued).epoch) == ("SUCCESSFUL", 2, 2)
    assert result.worker_ids[0] == killed and result.worker_ids[1] != killed
    workers.signal(signal.SIGTERM)
    assert workers.wait() == 0


def test_a_task_with_outside_effects_whose_worker_is_killed_is_unknown_and_not_run_again(runworkers):
    enqueued = send_payment.enqueue(30)
    workers = runworkers("--processes", "1", "--lease", "1", "--poll-interval", "0.2")
    wait_for(lambda: job_of(enqueued).external_started_at is not None)

    os.kill(int(job_of(enqueued).leased_by.rsplit(":", 1)[1]), signal.SIGKILL)

    wait_for(lambda: job_of(enqueued).state == "unknown")
    result = send_payment.get_result(enqueued.id)
    assert (result.status, result.outcome_unknown) == ("FAILED", True)
    assert result.errors[0].exception_class is OutcomeUnknown
    assert len(result.worker_ids) == 1 and job_of(enqueued).epoch == 1  # nobody ran it again
    workers.signal(signal.SIGTERM)
    assert workers.wait() == 0
