"""Concurrency claims, proven with real OS processes on the real test database."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db import connection

from accounts.models import Tenant
from jobs.clock import system_clock
from jobs.models import Job, JobEvent
from tests.conftest import processes_together

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def run_children(*argvs: list[str]) -> list[str]:
    return processes_together(*argvs)


def test_two_claimers_in_two_processes_never_get_the_same_job_and_epoch(accept, tmp_path):
    jobs = [accept("diagnostic.noop", now=system_clock.now()).pk for _ in range(300)]
    barrier = str(tmp_path)  # both children start claiming once both are connected

    outputs = run_children(["claim_all", "w1", barrier, "2"], ["claim_all", "w2", barrier, "2"])

    claims = [tuple(map(int, line.split())) for out in outputs for line in out.splitlines()]
    assert sorted(job for job, _ in claims) == sorted(jobs)  # each job claimed exactly once
    assert Counter(epoch for _, epoch in claims) == {1: len(jobs)}
    counts = [len(out.splitlines()) for out in outputs]
    print("claims per process:", counts)
    assert min(counts) > 0, "both processes should have claimed work"
    assert Job.objects.filter(state="completed").count() == len(jobs)


def test_two_processes_claiming_and_completing_in_batches_never_share_a_job(accept, tmp_path, make_member):
    limited = make_member("limited")
    Tenant.objects.filter(pk=limited.tenant_id).update(max_running=3)
    jobs = [accept("diagnostic.noop", now=system_clock.now()).pk for _ in range(200)]
    jobs += [accept("diagnostic.noop", user=limited, now=system_clock.now()).pk for _ in range(100)]

    outputs = run_children(["claim_batches", "w1", str(tmp_path), "2", "8"],
                           ["claim_batches", "w2", str(tmp_path), "2", "8"])

    claims = [tuple(map(int, line.split())) for out in outputs for line in out.splitlines()]
    assert sorted(job for job, _ in claims) == sorted(jobs)  # each job claimed exactly once
    assert Counter(epoch for _, epoch in claims) == {1: len(jobs)}
    assert min(len(out.splitlines()) for out in outputs) > 0, "both processes should have claimed work"
    assert Job.objects.filter(state="completed").count() == len(jobs)
    assert Counter(JobEvent.objects.values_list("to_state", flat=True)) == {
        "queued": len(jobs), "leased": len(jobs), "completed": len(jobs)}
    assert Tenant.objects.get(pk=limited.tenant_id).running == 0


def test_two_processes_accepting_with_one_key_make_one_row(alice, tmp_path):
    argv = ["accept_once", "same-key", str(tmp_path), "2", str(alice.tenant_id), str(alice.pk)]

    outputs = run_children(argv, argv)

    results = sorted(out.split()[1] for out in outputs)
    assert results == ["False", "True"]
    assert len({out.split()[0] for out in outputs}) == 1
    assert Job.objects.filter(operation_key="same-key").count() == 1


def test_an_accepted_job_survives_its_store_being_recreated(accept):
    """A store opened afresh: a new process on the same database finds the job."""
    job = accept("diagnostic.noop", now=system_clock.now())
    connection.close()  # this process's store is gone

    (out,) = run_children(["claim_all", "fresh"])

    assert out.split() == [str(job.pk), "1"]
    assert Job.objects.get(pk=job.pk).state == "completed"
