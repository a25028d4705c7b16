"""Sharing the queue with real worker processes: turns, limits, the provider budget, cancels.

Each test starts ``runworkers`` on this test's database and asserts from the job and event
rows what the workers did.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from accounts.models import Tenant
from jobs import queue
from jobs.clock import system_clock
from jobs.models import Job, JobEvent
from tests.conftest import wait_for
from tests.workers import Workers, children

pytestmark = pytest.mark.slow


@pytest.fixture
def workers(tmp_path, transactional_db):
    started: list[Workers] = []

    def start(*args: str, **env: str) -> Workers:
        w = Workers(tmp_path / f"workers-{len(started)}.log", *args, **env)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill_all()


@pytest.fixture
def submit(accept):
    def submit_(member, n: int = 1, kind: str = "diagnostic.sleep", **payload) -> list[Job]:
        return [accept(kind, payload, user=member, now=system_clock.now()) for _ in range(n)]
    return submit_


def intervals(jobs: list[Job], start: str, end: str) -> list[tuple[int, int]]:
    """For each job, from its first event whose reason starts with ``start`` to the next with ``end``,
    as event ids: the order the writes took effect in. Not their ``at``: a worker reads the
    time before it waits for the write lock, so on a busy machine a claim written after a
    completion can carry the earlier time."""
    spans = []
    for job in jobs:
        events = list(JobEvent.objects.filter(job=job).order_by("id").values_list("reason", "id"))
        opened = None
        for reason, event_id in events:
            if opened is None and reason.startswith(start):
                opened = event_id
            elif opened is not None and reason.startswith(end):
                spans.append((opened, event_id))
                opened = None
    return spans


def most_at_once(spans: list[tuple[int, int]]) -> int:
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans], key=lambda e: (e[0], e[1]))
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def test_a_tenant_with_one_job_is_served_within_two_claims_while_another_has_300_waiting(
        workers, submit, make_member):
    acme, globex = make_member("acme"), make_member("globex")
    backlog = submit(acme, 300, seconds=0.01)
    w = workers("--processes", "1", "--lease", "30", "--poll-interval", "0.05")
    wait_for(lambda: Job.objects.filter(pk__in=[j.pk for j in backlog], state="completed").count() >= 20)
    [theirs] = submit(globex, 1, seconds=0.01)
    wait_for(lambda: Job.objects.get(pk=theirs.pk).state == "completed", timeout=30)
    accepted = JobEvent.objects.get(job=theirs, to_state="queued").id
    claimed = JobEvent.objects.get(job=theirs, to_state="leased").id
    # Claims of any job between the acceptance and its own claim, its own included.
    between = JobEvent.objects.filter(to_state="leased", id__gt=accepted, id__lte=claimed).count()
    assert between <= 2
    assert Job.objects.filter(pk__in=[j.pk for j in backlog], state="queued").exists()  # acme still waiting
    w.signal(signal.SIGTERM)
    assert w.wait() == 0


def test_a_tenants_running_limit_holds_across_four_workers(workers, submit, make_member):
    limited, other = make_member("limited"), make_member("other")
    Tenant.objects.filter(pk=limited.tenant_id).update(max_running=2)
    theirs = submit(limited, 12, seconds=0.3)
    others = submit(other, 12, seconds=0.3)
    w = workers("--processes", "4", "--burst", "--lease", "30", "--poll-interval", "0.05")
    assert w.wait(timeout=90) == 0
    assert Job.objects.filter(state="completed").count() == 24
    assert most_at_once(intervals(theirs, "claimed", "completed")) <= 2
    assert most_at_once(intervals(others, "claimed", "completed")) >= 2  # the others were not held back
    assert Tenant.objects.get(pk=limited.tenant_id).running == 0


def test_four_workers_never_hold_more_provider_slots_than_allowed_and_a_killed_ones_comes_back(
        workers, submit, make_member):
    member = make_member("acme")
    calls = submit(member, 16, kind="diagnostic.provider_call", seconds=0.4)
    # The setting by its name from when the queue kept the budget: it still sets the slots.
    w = workers("--processes", "4", "--lease", "2", "--poll-interval", "0.05", JOBS_PROVIDER_SLOTS="2")
    # Kill a worker while it holds a slot: its slot is free again once its lease has run out.
    wait_for(lambda: Job.objects.filter(external_started_at__isnull=False, state="leased").exists(), timeout=30)
    holder = Job.objects.filter(external_started_at__isnull=False, state="leased").values_list(
        "leased_by", flat=True).first()
    pid = int(holder.rsplit(":", 1)[1])
    assert pid in children(w.proc.pid)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not Job.objects.filter(pk__in=[j.pk for j in calls], state__in=["queued", "leased"]).exists(),
             timeout=90)
    w.signal(signal.SIGTERM)
    assert w.wait() == 0
    assert most_at_once(intervals(calls, "external start", "external call settled")) <= 2
    done = Job.objects.filter(pk__in=[j.pk for j in calls], state="completed").count()
    assert done >= 15  # all but the killed worker's call, which is unknown
    assert Job.objects.filter(pk__in=[j.pk for j in calls], state="unknown").count() == 16 - done


def test_a_running_job_is_cancelled_by_its_worker_at_its_next_renewal(workers, submit, make_member):
    member = make_member("acme")
    [job] = submit(member, 1, seconds=30)
    w = workers("--processes", "1", "--lease", "1.5", "--poll-interval", "0.05")
    wait_for(lambda: Job.objects.get(pk=job.pk).state == "leased")
    asked = time.monotonic()
    assert queue.cancel(job_id=job.pk, actor="user:1", reason="", now=system_clock.now()).reason == "cancel requested"
    wait_for(lambda: Job.objects.get(pk=job.pk).state == "cancelled", timeout=10)
    assert time.monotonic() - asked < 3  # a renewal every 0.5 s carried the request
    w.signal(signal.SIGTERM)
    assert w.wait() == 0


def test_cancels_racing_completions_each_job_ends_one_way_on_record(workers, submit, make_member):
    member = make_member("acme")
    jobs = submit(member, 120, seconds=0.02)
    w = workers("--processes", "3", "--burst", "--lease", "30", "--poll-interval", "0.05")
    for job in jobs[::2]:
        queue.cancel(job_id=job.pk, actor="user:1", reason="", now=system_clock.now())
    assert w.wait(timeout=90) == 0
    for job in jobs:
        ends = list(JobEvent.objects.filter(job=job, to_state__in=["completed", "cancelled"]).values_list(
            "to_state", flat=True))
        assert ends == [Job.objects.get(pk=job.pk).state]  # exactly one end, and it is the job's state
    states = set(Job.objects.filter(pk__in=[j.pk for j in jobs[::2]]).values_list("state", flat=True))
    assert states <= {"completed", "cancelled"} and "cancelled" in states
