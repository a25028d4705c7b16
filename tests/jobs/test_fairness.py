"""Tenants share the queue: turns in proportion to weight, running and waiting limits, priority.

On a logical clock, with the real claim; real worker processes are in test_sharing.py.
"""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection

from accounts.models import Tenant
from jobs import queue
from jobs.errors import ScopeQueueFull
from jobs.models import Job

LEASE = timedelta(seconds=30)


@pytest.fixture
def tenant(make_member):
    """A member of a new tenant, optionally with a weight and limits."""

    def make(slug: str, **limits):
        member = make_member(slug)
        if limits:
            Tenant.objects.filter(pk=member.tenant_id).update(**limits)
        return member

    return make


@pytest.fixture
def submit(accept):
    def submit_(member, n: int = 1, **kwargs) -> list[Job]:
        return [accept("diagnostic.noop", user=member, **kwargs) for _ in range(n)]
    return submit_


def claims(clock, n: int) -> list[queue.Claim]:
    got = []
    for _ in range(n):
        c = queue.claim(now=clock.now(), worker="w", lease=LEASE)
        if c is None:
            break
        got.append(c)
    return got


def tenant_of(c: queue.Claim) -> int:
    return Job.objects.values_list("scope_id", flat=True).get(pk=c.job_id)


def test_a_tenant_with_one_job_is_served_within_two_claims_while_another_has_300_waiting(clock, tenant, submit):
    acme, globex = tenant("acme"), tenant("globex")
    submit(acme, 300)
    claims(clock, 5)  # acme's queue is being worked through
    [theirs] = submit(globex)
    got = claims(clock, 2)
    assert theirs.pk in [c.job_id for c in got]


def test_turns_follow_the_weights_within_ten_percent_over_300_claims(clock, tenant, submit):
    light, heavy = tenant("light"), tenant("heavy", weight=2)
    submit(light, 300)
    submit(heavy, 300)
    served = Counter(tenant_of(c) for c in claims(clock, 300))
    assert served[heavy.tenant_id] + served[light.tenant_id] == 300
    assert abs(served[heavy.tenant_id] / served[light.tenant_id] - 2) <= 0.2


def test_equal_tenants_alternate(clock, tenant, submit):
    a, b = tenant("a"), tenant("b")
    submit(a, 20)
    submit(b, 20)
    order = [tenant_of(c) for c in claims(clock, 10)]
    assert Counter(order) == {a.tenant_id: 5, b.tenant_id: 5}
    assert all(x != y for x, y in itertools.pairwise(order))


def test_backlogs_submitted_tenant_after_tenant_are_served_one_job_of_each_in_turn(clock, tenant, submit):
    members = [tenant(f"t{n}") for n in range(10)]
    for member in members:
        submit(member, 4)
    with connection.cursor() as cursor:  # with statistics, a small table may be joined in any order
        cursor.execute("ANALYZE")
    batch = queue.claim_many(now=clock.now(), worker="w", lease=LEASE, limit=10)
    assert [tenant_of(c) for c in batch] == [m.tenant_id for m in members]
    assert [tenant_of(c) for c in claims(clock, 10)] == [m.tenant_id for m in members]


def test_a_tenant_at_its_running_limit_is_passed_over_until_one_of_its_jobs_ends(clock, tenant, submit):
    limited, other = tenant("limited", max_running=2), tenant("other")
    submit(limited, 10)
    submit(other, 1)
    first = claims(clock, 4)
    assert [tenant_of(c) for c in first].count(limited.tenant_id) == 2  # never a third at once
    assert other.tenant_id in [tenant_of(c) for c in first]
    assert claims(clock, 1) == []  # only the limited tenant has work, and it is at its limit
    assert Tenant.objects.get(pk=limited.tenant_id).running == 2

    done = next(c for c in first if tenant_of(c) == limited.tenant_id)
    assert queue.complete(job_id=done.job_id, epoch=done.epoch, result={}, now=clock.now())
    assert Tenant.objects.get(pk=limited.tenant_id).running == 1
    [again] = claims(clock, 1)
    assert tenant_of(again) == limited.tenant_id


@pytest.mark.parametrize("ending", ["fail", "defer", "recover", "cancel"])
def test_every_way_a_limited_tenants_job_stops_running_frees_its_place(clock, tenant, submit, ending):
    limited = tenant("limited", max_running=1)
    submit(limited, 2)
    [c] = claims(clock, 1)
    assert claims(clock, 1) == []
    if ending == "fail":
        queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom", code="handler_failed", retryable=False,
                   now=clock.now())
    elif ending == "defer":
        queue.defer(job_id=c.job_id, epoch=c.epoch, until=clock.now() + timedelta(hours=1), now=clock.now(),
                    reason="later")
    elif ending == "recover":
        clock.advance(LEASE.total_seconds() + 1)
        queue.recover(now=clock.now())
    else:
        queue.cancel(job_id=c.job_id, actor="user:1", reason="", now=clock.now())
        queue.acknowledge_cancel(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    assert Tenant.objects.get(pk=limited.tenant_id).running == 0
    assert len(claims(clock, 1)) == 1


def test_a_tenant_at_its_waiting_limit_is_refused_and_nothing_is_written(clock, tenant, submit, accept):
    full = tenant("full", max_waiting=3)
    submit(full, 3)
    with pytest.raises(ScopeQueueFull) as refused:
        accept("diagnostic.noop", user=full, key="one-too-many")
    assert refused.value.status == 429 and refused.value.code == "scope_queue_full" and refused.value.retry_after
    assert Job.objects.filter(scope_id=full.tenant_id).count() == 3
    claims(clock, 1)  # one starts: a place frees up
    assert accept("diagnostic.noop", user=full, key="one-too-many").state == "queued"


def test_a_retry_of_an_accepted_request_gets_its_job_even_when_the_tenant_is_full(tenant, submit, accept):
    full = tenant("full", max_waiting=2)
    [first] = submit(full, 1, key="same-key")
    submit(full, 1)
    assert accept("diagnostic.noop", user=full, key="same-key").pk == first.pk


def test_higher_priority_is_claimed_first(clock, tenant, submit):
    member = tenant("acme")
    submit(member, 3)
    [urgent] = submit(member, 1, priority=10)
    assert claims(clock, 1)[0].job_id == urgent.pk


def test_a_job_held_back_gets_its_turn_when_its_time_comes(clock, tenant, submit):
    member = tenant("acme")
    [later] = submit(member, 1, available_at=clock.now() + timedelta(minutes=5))
    assert Job.objects.get(pk=later.pk).turn is None
    assert claims(clock, 1) == []
    clock.advance(minutes=5)
    assert claims(clock, 1)[0].job_id == later.pk


def test_a_retried_job_waits_out_its_backoff_then_takes_a_new_turn(clock, tenant, submit):
    a, b = tenant("a"), tenant("b")
    [retried] = submit(a, 1)
    [c] = claims(clock, 1)
    queue.fail(job_id=c.job_id, epoch=c.epoch, error="flaky", code="handler_failed", now=clock.now())
    submit(b, 3)
    assert all(tenant_of(x) == b.tenant_id for x in claims(clock, 1))  # a is in its backoff
    clock.advance(minutes=5)
    assert retried.pk in [x.job_id for x in claims(clock, 2)]
