"""The provider budget: at most ``PROVIDER_SLOTS`` calls in flight at once, a dead worker's slot
free again once its lease runs out, and a 429 holding every worker off. On a logical clock, with
the real claim; real worker processes keep it in tests/jobs/test_sharing.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from jobs import queue
from jobs.conf import build
from jobs.context import JobContext
from jobs.kinds import JobDeferred
from providers import budget, conf
from providers.models import ProviderSlot

LEASE = timedelta(seconds=30)


@pytest.fixture
def claims(clock, accept, make_member):
    """``n`` claims of new jobs of one tenant."""

    def claims_(n: int) -> list[queue.Claim]:
        member = make_member("acme")
        for _ in range(n):
            accept("diagnostic.noop", user=member)
        return [queue.claim(now=clock.now(), worker="w", lease=LEASE) for _ in range(n)]

    return claims_


def test_no_more_provider_slots_than_allowed_are_held_at_once(clock, claims, settings):
    settings.PROVIDER_SLOTS = 2
    held = claims(3)
    slots = [budget.take_slot(job_id=c.job_id, epoch=c.epoch, now=clock.now()) for c in held]
    assert [bool(s) for s in slots] == [True, True, False]
    assert slots[2].retry_at > clock.now()
    budget.release_slot(job_id=held[0].job_id, epoch=held[0].epoch, number=slots[0].number)
    assert budget.take_slot(job_id=held[2].job_id, epoch=held[2].epoch, now=clock.now())


def test_a_dead_workers_slot_is_free_once_its_lease_has_run_out(clock, claims, settings):
    settings.PROVIDER_SLOTS = 1
    crashed, waiting = claims(2)
    assert budget.take_slot(job_id=crashed.job_id, epoch=crashed.epoch, now=clock.now())
    assert not budget.take_slot(job_id=waiting.job_id, epoch=waiting.epoch, now=clock.now())
    queue.renew(job_id=waiting.job_id, epoch=waiting.epoch, now=clock.now() + timedelta(seconds=20), lease=LEASE)
    clock.advance(LEASE.total_seconds() + 1)  # the crashed worker's lease ran out; nobody released
    assert budget.take_slot(job_id=waiting.job_id, epoch=waiting.epoch, now=clock.now())


def test_a_providers_429_holds_every_worker_off_until_its_retry_after(clock, claims):
    [c] = claims(1)
    until = clock.now() + timedelta(seconds=30)
    budget.hold_off(until=until)
    budget.hold_off(until=clock.now() + timedelta(seconds=5))  # an earlier answer does not shorten it
    refused = budget.take_slot(job_id=c.job_id, epoch=c.epoch, now=clock.now())
    assert not refused and refused.retry_at == until
    assert budget.take_slot(job_id=c.job_id, epoch=c.epoch, now=until)


def test_a_handler_holds_a_slot_for_its_call_or_is_handed_back(clock, claims, settings):
    settings.PROVIDER_SLOTS = 1
    first, second = (JobContext(c, clock=clock) for c in claims(2))
    with budget.slot(first):
        assert ProviderSlot.objects.get(number=0).job_id == first.job_id
        with pytest.raises(JobDeferred) as deferred, budget.slot(second):
            pytest.fail("a second call while the only slot is held")
        assert deferred.value.until > clock.now() and "waiting for a provider slot" in str(deferred.value)
    assert ProviderSlot.objects.get(number=0).job_id is None  # given back as soon as the call is over


def test_the_setting_defaults_to_four_and_a_bad_one_stops_start_up(settings):
    del settings.PROVIDER_SLOTS
    assert conf.slots() == conf.DEFAULT_SLOTS == 4
    settings.PROVIDER_SLOTS = 0
    with pytest.raises(ImproperlyConfigured, match=r"PROVIDER_SLOTS .* must be a whole number above 0, not 0"):
        apps.get_app_config("providers").ready()


def test_the_queue_has_no_provider_setting_of_its_own():
    with pytest.raises(ImproperlyConfigured, match=r"JOBS has unknown keys \['PROVIDER_SLOTS'\]"):
        build({"PROVIDER_SLOTS": 2})
