"""``enqueue()``: what the backend checks, and the job it commits (or does not)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from accounts.models import Tenant, User
from jobs import kinds, queue
from jobs.models import Job
from jobs.tasks_backend import (
    SYSTEM_SCOPE,
    SYSTEM_USER,
    InvalidTaskArguments,
    QueueBackend,
    for_scope,
    queue_options,
)
from jobs.tasks_backend.framework import InvalidTask, task, task_backends, task_enqueued
from jobs.tasks_backend.kind import KIND, MAX_PAYLOAD_BYTES
from tests.tasks import sample_tasks
from tests.tasks.conftest import job_of
from tests.tasks.sample_tasks import add, patient, send_payment, urgent, whenever


def test_the_project_default_task_backend_is_the_queue(db):
    backend = task_backends["default"]
    assert isinstance(backend, QueueBackend)
    assert (backend.supports_defer, backend.supports_priority, backend.supports_get_result,
            backend.supports_async_task) == (True, True, True, True)


def test_enqueue_commits_a_queued_task_job_naming_the_function_and_its_arguments(backend, clock):
    result = add.enqueue(2, b=3)

    job = job_of(result)
    assert (job.kind, job.state, job.epoch, job.attempts) == (KIND, "queued", 0, 0)
    assert job.payload["function"] == "tests.tasks.sample_tasks.add"
    assert (job.payload["args"], job.payload["kwargs"]) == ([2], {"b": 3})
    assert job.available_at == job.created_at == clock.now()
    assert (result.id, result.status, result.enqueued_at) == (str(job.pk), "READY", clock.now())
    assert (result.args, result.kwargs, result.worker_ids, result.errors) == ([2], {"b": 3}, [], [])


def test_tasks_without_a_scope_belong_to_a_system_scope_and_user_made_once(backend):
    first, second = job_of(add.enqueue(1, 2)), job_of(add.enqueue(3, 4))

    assert first.scope.slug == second.scope.slug == SYSTEM_SCOPE
    assert Tenant.objects.filter(slug=SYSTEM_SCOPE).count() == 1
    user = User.objects.get(username=SYSTEM_USER)
    assert first.submitted_by == second.submitted_by == user
    assert not user.is_active and not user.has_usable_password()  # nobody logs in as it


def test_a_task_may_be_given_an_existing_scope(backend, alice):
    with for_scope("acme"):
        job = job_of(add.enqueue(1, 2))
    assert job.scope.slug == "acme"
    with for_scope(alice.tenant):
        assert job_of(add.enqueue(1, 2)).scope_id == alice.tenant_id
    with for_scope("no-such-tenant"), pytest.raises(InvalidTask, match="no scope 'no-such-tenant'"):
        add.enqueue(1, 2)
    assert Job.objects.count() == 2


def test_the_backend_option_scope_names_the_scope_of_its_tasks(task_options, bob):
    task_options(SCOPE="globex")
    assert job_of(add.enqueue(1, 2)).scope.slug == "globex"


@pytest.mark.parametrize(("args", "kwargs", "where"), [
    ((object(), 1), {}, r"args\[0\] is a builtins.object"),
    ((1,), {"b": datetime(2026, 1, 1)}, r"kwargs\['b'\] is a datetime.datetime"),
    (([1, {"nested": {2, 3}}], 1), {}, r"args\[0\]\[1\]\['nested'\] is a builtins.set"),
    (({1: "one"}, 1), {}, r"args\[0\] is an object with a key of type int"),
    ((float("nan"), 1), {}, r"args\[0\] is nan \(JSON has no NaN"),
    ((b"\xff\xfe", 1), {}, r"args\[0\] is bytes that are not UTF-8"),
    (("a\x00b", 1), {}, r"args\[0\] is text with a NUL character"),
    ((1,), {"b": ["\ud800"]}, r"kwargs\['b'\]\[0\] is text with a lone surrogate, which is not UTF-8"),
    (({"k\x00": 1}, 1), {}, r"args\[0\] key 'k\\x00' is text with a NUL character"),
    ((b"a\x00", 1), {}, r"args\[0\] is text with a NUL character"),
], ids=["object", "datetime", "set-inside", "int-key", "nan", "binary", "nul", "surrogate", "nul-key", "nul-bytes"])
def test_an_argument_json_cannot_hold_is_refused_at_enqueue_and_nothing_is_written(backend, args, kwargs, where):
    with pytest.raises(InvalidTaskArguments, match=f"must be JSON-serialisable: {where}"):
        add.enqueue(*args, **kwargs)
    assert Job.objects.count() == 0


def test_arguments_travel_as_json(backend):
    job = job_of(add.enqueue((1, 2), b=b"text"))
    assert job.payload["args"] == [[1, 2]] and job.payload["kwargs"] == {"b": "text"}


def test_arguments_too_large_for_a_job_are_refused(backend):
    with pytest.raises(InvalidTaskArguments, match=r"too large .* pass an id"):
        add.enqueue("x" * MAX_PAYLOAD_BYTES, 1)
    assert Job.objects.count() == 0


def test_the_frameworks_rules_are_checked(backend, clock):
    def local():  # not at module level: a worker could not import it
        return 1

    with pytest.raises(InvalidTask, match="module level"):
        task(local)
    with pytest.raises(InvalidTask, match="Queue 'elsewhere' is not valid"):
        add.using(queue_name="elsewhere")
    with pytest.raises(InvalidTask, match="priority must be a whole number between -100 and 100"):
        add.using(priority=101)
    with pytest.raises(InvalidTask, match="aware datetime"):
        add.using(run_after=datetime(2026, 7, 1, 12, 0))
    assert Job.objects.count() == 0


def test_a_task_whose_module_path_does_not_lead_back_to_it_is_refused(backend, monkeypatch):
    monkeypatch.setattr(sample_tasks, "add", None)  # the name now means something else
    with pytest.raises(InvalidTask, match="does not lead to this task's function"):
        add.enqueue(1, 2)
    assert Job.objects.count() == 0


def test_priority_is_stored_on_the_job(backend):
    assert job_of(urgent.enqueue()).priority == 10
    assert job_of(whenever.enqueue()).priority == -10
    assert job_of(add.using(priority=7).enqueue(1, 2)).priority == 7


def test_a_higher_priority_task_is_claimed_first(backend, clock):
    low = job_of(whenever.enqueue())
    high = job_of(urgent.enqueue())

    assert queue.claim(now=clock.now(), worker="w1").job_id == high.pk
    assert queue.claim(now=clock.now(), worker="w1").job_id == low.pk


def test_per_task_options_set_attempts_deadline_and_outside_effects(backend, clock):
    job = job_of(patient.enqueue())
    assert job.max_attempts == 5 and job.deadline == clock.now() + timedelta(seconds=120)
    assert job_of(send_payment.enqueue(0)).payload["outside_effects"] is True
    default = job_of(add.enqueue(1, 2))
    assert (default.max_attempts, default.payload["outside_effects"]) == (3, False)
    assert default.deadline == clock.now() + kinds.get(KIND).deadline


def test_backend_options_are_the_defaults_of_its_tasks(task_options, clock):
    task_options(MAX_ATTEMPTS=7, DEADLINE=60, OUTSIDE_EFFECTS=True)
    job = job_of(add.enqueue(1, 2))
    assert (job.max_attempts, job.deadline, job.payload["outside_effects"]) == (
        7, clock.now() + timedelta(seconds=60), True)
    assert job_of(patient.enqueue()).max_attempts == 5  # the task's own option wins


def test_bad_options_are_refused_where_they_are_written(task_options):
    with pytest.raises(ValueError, match="max_attempts must be a whole number"):
        queue_options(max_attempts=0)
    with pytest.raises(ValueError, match="deadline must be a positive"):
        queue_options(deadline=-1)
    with pytest.raises(ImproperlyConfigured, match=r"unknown option\(s\) \['RETRIES'\]"):
        task_options(RETRIES=3)


def test_the_task_kind_is_never_offered_to_users(db, alice, client):
    assert kinds.offered(KIND) is None and KIND not in {k.name for k in kinds.offered_kinds()}
    client.force_login(alice)
    response = client.post("/jobs", {"kind": KIND, "payload": {"function": "os.system", "args": ["true"],
                                                                "kwargs": {}}},
                           content_type="application/json", headers={"Idempotency-Key": "k1"})
    assert response.status_code == 400 and response.json()["error"] == "unknown_kind"
    assert Job.objects.count() == 0


# --- Transactions: a real commit and a real rollback -------------------------------------------


@pytest.fixture
def enqueued_signals():
    sent = []

    def receiver(sender, task_result, **kwargs):
        sent.append(task_result.id)

    task_enqueued.connect(receiver)
    yield sent
    task_enqueued.disconnect(receiver)


def test_a_task_enqueued_in_a_rolled_back_transaction_makes_no_job(transactional_db, enqueued_signals):
    class Abandon(Exception):
        pass

    with pytest.raises(Abandon), transaction.atomic():
        add.enqueue(1, 2)
        assert Job.objects.count() == 1  # inside the caller's transaction
        raise Abandon

    assert Job.objects.count() == 0
    assert enqueued_signals == []  # task_enqueued waits for the commit


def test_a_task_enqueued_in_a_committed_transaction_is_sent_once_committed(transactional_db, enqueued_signals):
    with transaction.atomic():
        result = add.enqueue(1, 2)
        assert enqueued_signals == []
    assert enqueued_signals == [result.id]
    assert Job.objects.filter(pk=int(result.id), state="queued").exists()


def test_outside_a_transaction_enqueue_commits_at_once(transactional_db, enqueued_signals):
    result = add.enqueue(1, 2)
    assert enqueued_signals == [result.id] and Job.objects.filter(pk=int(result.id)).exists()
