"""Task jobs run by a worker in-process on the logical clock, and read back with ``get_result``."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from jobs import queue
from jobs.kinds import JobFailed
from jobs.models import Job, JobEvent
from jobs.tasks_backend.framework import TaskResultDoesNotExist, task_finished, task_started
from jobs.tasks_backend.kind import (
    CANCELLED,
    KIND,
    OutcomeUnknown,
    ReturnValueNotJSON,
    TaskCall,
    TaskCancelled,
    TaskNotFound,
    build_result,
    missing_function,
)
from tests.tasks.conftest import job_of
from tests.tasks.sample_tasks import (
    add,
    add_later,
    charge_then_fail,
    fail_with,
    give_up,
    unstorable,
    which_attempt,
)

SECRET = "Initech invoice 4711, IBAN DE89370400440532013000"


@pytest.fixture
def signals():
    """What task_started and task_finished carried, in order: (signal, id, status)."""
    seen: list[tuple[str, str, str]] = []

    def on(name):
        def receiver(sender, task_result, **kwargs):
            seen.append((name, task_result.id, task_result.status))
        return receiver

    started, finished = on("started"), on("finished")
    task_started.connect(started)
    task_finished.connect(finished)
    yield seen
    task_started.disconnect(started)
    task_finished.disconnect(finished)


def test_a_completed_task_reads_as_successful_with_its_return_value(backend, worker, clock, signals):
    enqueued = add.enqueue(2, b=3)
    clock.advance(2)

    assert worker.run_one()

    result = add.get_result(enqueued.id)
    assert (result.status, result.return_value, result.state) == ("SUCCESSFUL", 5, "completed")
    assert result.worker_ids == ["w1"] and result.attempts == 1
    assert result.enqueued_at == clock.now() - timedelta(seconds=2)
    assert result.started_at == result.last_attempted_at == result.finished_at == clock.now()
    assert result.errors == []
    assert signals == [("started", enqueued.id, "RUNNING"), ("finished", enqueued.id, "SUCCESSFUL")]
    enqueued.refresh()
    assert (enqueued.status, enqueued.return_value, enqueued.state) == ("SUCCESSFUL", 5, "completed")


def test_queued_and_leased_read_as_ready_and_running(backend, clock):
    enqueued = add.enqueue(2, 3)
    assert backend.get_result(enqueued.id).status == "READY"

    claim = queue.claim(now=clock.now(), worker="host:42")

    running = backend.get_result(enqueued.id)
    assert (running.status, running.worker_ids, running.started_at) == ("RUNNING", ["host:42"], clock.now())
    with pytest.raises(ValueError, match="not finished"):
        _ = running.return_value
    assert claim.job_id == int(enqueued.id)


def test_run_after_holds_the_task_back_until_then_on_the_logical_clock(backend, worker, clock):
    start = clock.now() + timedelta(minutes=5)
    enqueued = add.using(run_after=start).enqueue(2, 3)
    job = job_of(enqueued)
    assert job.available_at == start
    assert job.deadline == start + timedelta(minutes=5)  # the kind's budget counts from then

    clock.advance(minutes=5, seconds=-1)
    assert not worker.run_one()
    assert backend.get_result(enqueued.id).status == "READY"

    clock.advance(seconds=1)
    assert worker.run_one()
    result = backend.get_result(enqueued.id)
    assert (result.status, result.return_value, result.started_at) == ("SUCCESSFUL", 5, start)


def test_a_raising_task_is_retried_with_backoff_then_failed_with_its_error(backend, worker, clock, signals,
                                                                           caplog):
    caplog.set_level(logging.DEBUG)
    enqueued = fail_with.enqueue(SECRET)

    assert worker.run_one()
    job = job_of(enqueued)
    assert (job.state, job.attempts) == ("queued", 1)
    retry_in = job.available_at - clock.now()
    assert timedelta(seconds=1) <= retry_in <= timedelta(seconds=2)  # base 2 s, 50-100 % jitter
    ready = backend.get_result(enqueued.id)
    assert ready.status == "READY" and [e.exception_class_path for e in ready.errors] == ["builtins.ValueError"]

    assert not worker.run_one()  # not before the backoff has passed
    for _ in range(2):
        clock.advance(seconds=10)  # past the longest backoff (4 s)
        assert worker.run_one()

    result = backend.get_result(enqueued.id)
    assert (result.status, result.state, result.worker_ids) == ("FAILED", "dead", ["w1", "w1", "w1"])
    [error] = result.errors
    assert error.exception_class is ValueError
    assert "in fail_with" in error.traceback and 'raise ValueError(f"could not read {text}")' in error.traceback
    with pytest.raises(ValueError, match="Task failed"):
        _ = result.return_value
    assert [s[0] for s in signals] == ["started", "started", "started", "finished"] and signals[-1][2] == "FAILED"
    # The caller's data is in the payload only: not in the error, the timeline or the logs.
    job.refresh_from_db()
    assert "Initech" not in job.last_error and "DE89" not in job.last_error
    assert not JobEvent.objects.filter(job=job, reason__contains="Initech").exists()
    assert "Initech" not in caplog.text and "DE89" not in caplog.text


def test_a_task_that_fails_its_job_itself_is_not_retried(backend, worker):
    enqueued = give_up.enqueue("the supplier closed its account")
    worker.run_one()
    result = backend.get_result(enqueued.id)
    assert (result.status, job_of(enqueued).attempts) == ("FAILED", 1)
    assert result.errors[0].exception_class is JobFailed
    assert result.errors[0].traceback.endswith("jobs.kinds.JobFailed: the supplier closed its account")


def test_a_task_whose_function_cannot_be_imported_is_dead_with_a_clear_reason(backend, worker, clock, alice):
    for function in ("tests.tasks.sample_tasks.vanished", "no_such_package.tasks.run"):
        job = queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind=KIND, operation_key=function,
                           payload=TaskCall(function=function, args=[], kwargs={}).payload(), now=clock.now(),
                           offered_only=False).job

        assert worker.run_one()

        job.refresh_from_db()
        assert (job.state, job.attempts) == ("dead", 1)  # not retried: no attempt would find it
        assert job.last_error.startswith(f"task_not_found: cannot import the task function {function!r}")
        result = backend.get_result(str(job.pk))
        assert (result.status, result.function, result.task.func) == ("FAILED", function, missing_function)
        assert result.errors[0].exception_class is TaskNotFound


@pytest.mark.parametrize("function", ["subprocess.getoutput", "os.path.join", "tests.tasks.sample_tasks.plain",
                                      "jobs.queue.cancel"])
def test_a_job_row_naming_a_function_that_is_no_task_runs_nothing_and_is_dead_at_once(backend, worker, clock,
                                                                                     alice, tmp_path, function):
    """Anything that can write a job row (SQL, a restored backup) must not get code execution on the workers."""
    witness = tmp_path / "ran"
    job = queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind=KIND, operation_key=function,
                       payload=TaskCall(function=function, args=[f"touch {witness}"], kwargs={}).payload(),
                       now=clock.now(), offered_only=False).job

    assert worker.run_one()

    job.refresh_from_db()
    assert (job.state, job.attempts) == ("dead", 1)  # not retried
    assert job.last_error.startswith(f"task_not_found: {function!r} is not a registered task")
    assert not witness.exists()
    assert backend.get_result(str(job.pk)).errors[0].exception_class is TaskNotFound


def test_a_tasks_function_bound_to_its_name_undecorated_still_runs(backend, worker, clock, alice):
    """``also_plain = task(plain_twin)`` keeps the function at its name: it is registered, so it runs."""
    function = "tests.tasks.sample_tasks.plain_twin"
    job = queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind=KIND, operation_key=function,
                       payload=TaskCall(function=function, args=[2], kwargs={}).payload(), now=clock.now(),
                       offered_only=False).job
    assert worker.run_one()
    job.refresh_from_db()
    assert (job.state, job.result) == ("completed", {"return_value": 4}), job.last_error


def test_a_return_value_json_cannot_hold_fails_the_task_for_good(backend, worker):
    enqueued = unstorable.enqueue()
    worker.run_one()
    job = job_of(enqueued)
    assert (job.state, job.attempts) == ("dead", 1)
    assert "the return value['when'] is a builtins.object" in job.last_error
    assert backend.get_result(enqueued.id).errors[0].exception_class is ReturnValueNotJSON


def test_tasks_taking_the_context_and_coroutine_tasks_run(backend, worker, clock):
    flaky = which_attempt.enqueue(fail_before=2)
    later = add_later.enqueue(4, 5)

    worker.run_one()  # which_attempt, attempt 1: fails on purpose
    worker.run_one()  # add_later
    clock.advance(seconds=10)
    worker.run_one()  # which_attempt, attempt 2

    assert backend.get_result(later.id).return_value == 9
    assert backend.get_result(flaky.id).return_value == {"attempt": 2, "id": flaky.id}


def test_a_task_with_outside_effects_that_fails_is_unknown_not_retried(backend, worker):
    enqueued = charge_then_fail.enqueue()
    worker.run_one()

    job = job_of(enqueued)
    assert (job.state, job.attempts) == ("unknown", 1)
    assert job.external_started_at is not None
    result = backend.get_result(enqueued.id)
    assert (result.status, result.outcome_unknown, result.cancelled) == ("FAILED", True, False)
    assert result.errors[0].exception_class is ConnectionError


def test_an_unknown_outcome_from_a_lost_lease_names_the_outcome_unknown(backend, clock):
    enqueued = add.enqueue(1, 2)
    claim = queue.claim(now=clock.now(), worker="w1", lease=timedelta(seconds=10))
    assert queue.mark_external_start(job_id=claim.job_id, epoch=claim.epoch, now=clock.now())
    clock.advance(seconds=11)
    queue.recover(now=clock.now())

    result = backend.get_result(enqueued.id)
    assert (result.status, result.outcome_unknown) == ("FAILED", True)
    assert result.errors[0].exception_class is OutcomeUnknown
    assert result.errors[0].traceback == "lease expired after the external-start marker"


def test_a_cancelled_job_reads_as_failed_and_cancelled(backend):
    call = TaskCall(function="tests.tasks.sample_tasks.add", args=[1, 2], kwargs={})
    result = build_result(job_id=1, task=add, call=call, state=CANCELLED, events=[],
                          last_error="cancelled by staff:ops")
    assert (result.status, result.cancelled, result.outcome_unknown) == ("FAILED", True, False)
    assert result.errors[0].exception_class is TaskCancelled


@pytest.mark.parametrize("result_id", ["nope", "0", "-3", "99999", "1" * 30])
def test_an_id_that_names_no_task_does_not_exist(backend, result_id):
    with pytest.raises(TaskResultDoesNotExist):
        backend.get_result(result_id)


def test_another_kinds_job_is_no_task_result(backend, accept):
    job = accept("diagnostic.noop")
    with pytest.raises(TaskResultDoesNotExist):
        backend.get_result(str(job.pk))
    assert Job.objects.get(pk=job.pk).kind == "diagnostic.noop"


def test_a_signal_receiver_that_raises_never_fails_a_task_that_ran(backend, worker):
    def broken(sender, task_result, **kwargs):
        raise RuntimeError("a monitoring hook is down")

    task_finished.connect(broken)
    try:
        enqueued = add.enqueue(2, 3)
        worker.run_one()
    finally:
        task_finished.disconnect(broken)
    assert (job_of(enqueued).state, job_of(enqueued).attempts) == ("completed", 1)
