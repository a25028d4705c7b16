"""Per-kind running limits across the fleet: no kind can take every worker.

A kind declares at most N of its jobs running at once across all worker processes and hosts
(``Kind.max_running``; ``JOBS["KIND_MAX_RUNNING"]`` overrides it), counted in the claim: a claim
takes one of the kind's slots in the same write that leases the job, and passes over a kind
whose slots are all held. ``webhook.deliver`` is limited to 1 by default, so a slow receiver
holds one worker, not all of them.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.db import connection

from jobs import kinds, queue
from jobs.clock import system_clock
from jobs.models import Job, JobEvent, KindSlot
from jobs.worker import Worker
from tests.jobs.test_sharing import intervals, most_at_once
from tests.workers import Workers

LEASE = timedelta(seconds=30)


@pytest.fixture
def limited(register_kind, settings):
    """A kind ``test.limited`` with a limit of 2, and ``test.free`` without one."""
    register_kind(kinds.Kind(name="test.limited", handler=lambda ctx: {}, diagnostic=True, max_running=2))
    register_kind(kinds.Kind(name="test.free", handler=lambda ctx: {}, diagnostic=True))
    queue.sync_kind_slots()


def kinds_claimed(clock, n: int) -> list[str]:
    return [c.kind for c in queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=n)]


def test_a_claim_passes_over_a_kind_at_its_limit_and_takes_the_next_kind(clock, accept, limited):
    for _ in range(4):
        accept("test.limited")
    accept("test.free")
    assert kinds_claimed(clock, 5) == ["test.limited", "test.limited", "test.free"]
    assert kinds_claimed(clock, 5) == []  # the other two wait for a slot


def test_a_slot_is_free_again_when_its_job_leaves_its_lease_whichever_way(clock, accept, limited):
    jobs = [accept("test.limited") for _ in range(4)]
    a, _b = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=4)
    assert queue.complete(job_id=a.job_id, epoch=a.epoch, result={}, now=clock.now())
    [c] = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=4)  # a's slot
    # b's worker dies: its slot comes back when recovery moves the job, not before.
    clock.advance(LEASE.total_seconds() - 1)
    assert kinds_claimed(clock, 4) == []
    clock.advance(2)
    queue.recover(now=clock.now())
    again = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=4)
    assert len(again) == 2  # b's and c's slots: both expired and recovered
    assert {j.pk for j in jobs} >= {x.job_id for x in again}
    assert c.kind == "test.limited"


def test_settings_override_a_kinds_declared_limit_and_lift_it(clock, accept, limited, settings):
    settings.JOBS = {**settings.JOBS, "KIND_MAX_RUNNING": {"test.limited": 1, "test.free": 3}}
    queue.sync_kind_slots()
    assert KindSlot.objects.filter(kind="test.limited").count() == 1
    for _ in range(2):
        accept("test.limited")
    for _ in range(5):
        accept("test.free")
    assert sorted(kinds_claimed(clock, 10)) == ["test.free"] * 3 + ["test.limited"]
    settings.JOBS = {**settings.JOBS, "KIND_MAX_RUNNING": {"test.limited": None}}
    queue.sync_kind_slots()
    assert not KindSlot.objects.filter(kind="test.limited").exists()
    assert kinds_claimed(clock, 10) == ["test.limited", "test.free", "test.free"]


def test_webhook_deliveries_are_limited_to_one_at_a_time_by_default(settings):
    assert kinds.max_running(kinds.get("webhook.deliver")) == 1
    assert kinds.max_running(kinds.get("diagnostic.sleep")) is None


def test_a_worker_sets_up_the_slots_of_the_kinds_it_knows(clock, accept, register_kind, settings):
    register_kind(kinds.Kind(name="test.limited", handler=lambda ctx: {}, diagnostic=True, max_running=3))
    w = Worker(name="w", lease=LEASE, clock=clock, listen=False, isolate=False)
    w.run_one()
    assert sorted(KindSlot.objects.filter(kind="test.limited").values_list("number", flat=True)) == [0, 1, 2]
    assert KindSlot.objects.filter(kind="webhook.deliver").count() == 1
    w.close()


@pytest.mark.slow
def test_a_kinds_limit_holds_across_four_worker_processes(tmp_path, transactional_db, accept):
    from agent.inbox import webhooks
    from agent.models import WebhookEndpoint
    from tests.webhook_receiver import Receiver

    receiver = Receiver(delay=0.3)
    try:
        reviews = [accept("diagnostic.noop", {}, now=system_clock.now()) for _ in range(6)]
        WebhookEndpoint.objects.create(tenant_id=reviews[0].scope_id, url=receiver.url, secret="limit-test")
        for review in reviews:
            got = queue.claim(now=system_clock.now(), worker="setup")
            assert got is not None and got.job_id == review.pk
            assert queue.complete(job_id=got.job_id, epoch=got.epoch, result={}, now=system_clock.now(),
                                  summary=kinds.Summary("ok", "OK", False))
        deliveries = [Job.objects.get(pk=pk) for review in reviews for pk in webhooks.enqueue(review.pk)]
        sleeps = [accept("diagnostic.sleep", {"seconds": 0.3}, now=system_clock.now()) for _ in range(12)]
        w = Workers(tmp_path / "workers.log", "--processes", "4", "--burst", "--lease", "30", "--poll-interval",
                    "0.05", WEBHOOKS_ALLOW_PRIVATE="1",
                    JOBS_KIND_MAX_RUNNING=json.dumps({"diagnostic.sleep": 2}))
        try:
            assert w.wait(timeout=120) == 0
        finally:
            w.kill_all()
    finally:
        receiver.close()
    assert Job.objects.filter(pk__in=[j.pk for j in deliveries + sleeps], state="completed").count() == 18
    webhook_peak = most_at_once(intervals(deliveries, "claimed", "completed"))
    sleep_peak = most_at_once(intervals(sleeps, "claimed", "completed"))
    both = most_at_once(intervals(deliveries + sleeps, "claimed", "completed"))
    print(f"\nat once, counted from the events in the order they took effect: webhook.deliver={webhook_peak} "
          f"(limit 1), diagnostic.sleep={sleep_peak} (limit 2), both={both}")
    assert webhook_peak == 1
    assert sleep_peak == 2  # limited, and not held back below it
    assert both <= 3
    assert JobEvent.objects.filter(job__in=deliveries, from_state="queued", to_state="leased").count() == 6  # once each


def test_a_job_behind_more_than_64_of_a_kind_at_its_limit_is_claimed(clock, accept, register_kind):
    register_kind(kinds.Kind(name="test.one", handler=lambda ctx: {}, diagnostic=True, max_running=1))
    register_kind(kinds.Kind(name="test.free", handler=lambda ctx: {}, diagnostic=True))
    queue.sync_kind_slots()
    for _ in range(100):  # more than a claim's 64 candidates
        accept("test.one")
    accept("test.free")
    assert kinds_claimed(clock, 3) == ["test.one", "test.free"]


def test_the_claim_stays_an_index_seek_past_a_kind_at_its_limit_on_postgresql(clock, accept):
    """The kinds at their limits are a set the plan computes once (a hashed subplan), checked
    against each job the seek passes: no scan of the queue however many wait."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's plan")
    from jobs import sql
    from jobs.sql import postgresql

    first = accept("diagnostic.noop")
    Job.objects.bulk_create(
        Job(scope_id=first.scope_id, submitted_by_id=first.submitted_by_id, kind=kind, payload={}, state="queued",
            operation_key=f"k{n}", deadline=first.deadline, available_at=first.available_at, turn=n - 5000,
            created_at=first.created_at, updated_at=first.updated_at)
        for n, kind in enumerate(["webhook.deliver"] * 3000 + ["diagnostic.noop"] * 1000))
    queue.sync_kind_slots()
    assert queue.claim(now=clock.now(), worker="w").kind == "webhook.deliver"  # its one slot is taken
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE jobs_job")
        params = sql.ClaimParams(now=clock.now(), expires=clock.now() + LEASE, worker="w", actor="w")
        cursor.execute("EXPLAIN " + postgresql.claim(True), params.binding(lambda v: v))
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Index Scan using job_claim_idx on jobs_job" in plan, plan
    assert "Seq Scan on jobs_job" not in plan, plan
    generic = generic_plan(params)  # the plan the prepared claim runs on (``postgresql.GENERIC_PLAN``)
    assert "Index Scan using job_claim_idx on jobs_job" in generic, generic
    assert "Seq Scan on jobs_job" not in generic, generic
    assert queue.claim(now=clock.now(), worker="w").kind == "diagnostic.noop"


def generic_plan(params: object) -> str:
    """PostgreSQL's generic plan of the prepared claim (prepared by a claim on this connection)."""
    from psycopg import ClientCursor

    from jobs.conf import queue_settings
    from jobs.sql import postgresql

    _name, _prepare, execute = postgresql.prepare_claim(queue_settings().fair_claims)
    explain = "EXPLAIN " + ClientCursor(connection.connection).mogrify(execute, params.binding(lambda v: v))
    with connection.cursor() as cursor:
        cursor.execute(postgresql.GENERIC_PLAN)  # to the end of the test's transaction
        cursor.execute(explain)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_a_claim_is_planned_once_per_connection_whatever_kinds_have_slots_on_postgresql(clock, accept, limited):
    """A slot row (any limited kind's, ``webhook.deliver``'s by default) tipped PostgreSQL into
    planning the whole claim afresh for every pick, a custom plan each time: ~5 ms, five times
    the pick's own work, so a claim batch of unlimited jobs ran 5x slower. Each pick now runs
    the one generic plan of the connection's prepared claim, and the limit holds as before."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's prepared claim")
    from jobs.conf import queue_settings
    from jobs.sql import postgresql

    def plans() -> tuple[int, int]:  # the connection's so far, generic and custom (it may outlive a test)
        name, _, _ = postgresql.prepare_claim(queue_settings().fair_claims)
        with connection.cursor() as cursor:
            cursor.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = %s", [name])
            return cursor.fetchone() or (0, 0)

    for kind in ["test.limited"] * 3 + ["test.free"] * 7:
        accept(kind)
    generic, custom = plans()
    assert kinds_claimed(clock, 3) == ["test.limited", "test.limited", "test.free"]
    assert [kinds_claimed(clock, 3) for _ in range(3)] == [["test.free"] * 3, ["test.free"] * 3, []]
    assert plans() == (generic + 12, custom)  # every pick of the four batches, none planned on its own


@pytest.mark.slow
def test_slow_webhook_receivers_hold_one_worker_and_another_tenants_job_runs_meanwhile(
        tmp_path, transactional_db, accept, make_member):
    """The finding: a slow receiver's deliveries held both worker processes, and another tenant's
    review waited for them. With ``webhook.deliver`` limited to 1, the other process serves it."""
    from agent.inbox import webhooks
    from agent.models import WebhookEndpoint
    from tests.conftest import wait_for
    from tests.webhook_receiver import Receiver

    receiver = Receiver(delay=6)
    w = None
    try:
        reviews = [accept("diagnostic.noop", {}, now=system_clock.now()) for _ in range(4)]
        WebhookEndpoint.objects.create(tenant_id=reviews[0].scope_id, url=receiver.url, secret="slow")
        for review in reviews:
            got = queue.claim(now=system_clock.now(), worker="setup")
            assert got is not None and got.job_id == review.pk
            assert queue.complete(job_id=got.job_id, epoch=got.epoch, result={}, now=system_clock.now(),
                                  summary=kinds.Summary("ok", "OK", False))
            webhooks.enqueue(review.pk)
        w = Workers(tmp_path / "workers.log", "--processes", "2", "--lease", "30", "--poll-interval", "0.05",
                    WEBHOOKS_ALLOW_PRIVATE="1", WEBHOOKS_TIMEOUT_SECONDS="20")
        assert receiver.got.wait(30)  # a delivery is in flight
        time.sleep(0.5)  # the other process has had time to take a second one, if it may
        theirs = accept("diagnostic.sleep", {"seconds": 0.1}, user=make_member("globex"), now=system_clock.now())
        queued = time.monotonic()
        wait_for(lambda: Job.objects.get(pk=theirs.pk).state == "completed", timeout=30)
        took = time.monotonic() - queued
        print(f"\nanother tenant's job completed {took:.2f} s after it was queued, "
              f"deliveries in flight meanwhile: {len(receiver.in_flight())}")
        assert took < 3  # not behind a 6 s delivery
        assert len(receiver.requests) == 1
    finally:
        receiver.release.set()
        receiver.close()
        if w is not None:
            w.kill_all()
