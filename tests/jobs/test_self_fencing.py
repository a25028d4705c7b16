"""Self-fencing when the renewal call itself hangs, as it does on a dead network path.

A connect or a statement to an unreachable database returns only when the driver's
timeouts say so (``connect_timeout``, ``tcp_user_timeout``), and those need not fit in a
short lease. The claim must be given up at two thirds of the lease all the same: here the
renewal blocks for far longer than the lease, and the handler, in-process or isolated,
must have stopped before the lease ended. (tests/partition shows the same across a real
network cut.)
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta

import pytest
from django.db import OperationalError

from jobs import queue
from jobs.clock import system_clock
from jobs.kinds import Kind
from jobs.logs import fields_of
from jobs.models import Job
from jobs.worker import Worker, sandbox

LEASE = timedelta(seconds=1.5)
HANG = 8.0  # seconds the renewal call blocks: far past the lease


@pytest.fixture
def renewals_hang(monkeypatch):
    """Every renewal blocks for HANG seconds (or until released), then fails."""
    released = threading.Event()

    def hang(**kwargs):
        released.wait(HANG)
        raise OperationalError("could not receive data from server: Connection timed out")

    monkeypatch.setattr(queue, "renew", hang)
    yield released
    released.set()


def work_until_told(seen):
    def handler(ctx):
        if ctx.stop.wait(20):
            seen["stopped_at"] = system_clock.now()
        return {"done": True}

    return handler


def deaf(ctx):
    time.sleep(20)  # deaf to ctx.stop: only the sandbox's kill ends it
    return {}


def test_an_in_process_handler_is_stopped_before_its_lease_ends_while_the_renewal_hangs(
        transactional_db, accept, register_kind, renewals_hang, caplog):
    seen = {}
    register_kind(Kind(name="test.long", handler=work_until_told(seen), diagnostic=True))
    job = accept("test.long", {}, now=system_clock.now())
    w = Worker(name="w1", lease=LEASE, listen=False)
    try:
        with caplog.at_level(logging.INFO, logger="jobs.worker"):
            started = time.monotonic()
            assert w.run_one()
            took = time.monotonic() - started
    finally:
        renewals_hang.set()  # let the hung call end, so closing the worker does not wait for it
        w.close()
    row = Job.objects.get(pk=job.pk)
    assert seen["stopped_at"] < row.lease_expires_at  # told to stop while the lease still held
    assert (row.state, row.result) == ("leased", None) and w.stats.rejected == 1
    assert took < HANG / 2  # the worker did not wait for the hung call either
    fenced = [f for f in map(fields_of, caplog.records) if f["event"] == "self_fenced"]
    assert fenced and "has not answered" in fenced[0]["why"]


def test_an_isolated_handler_deaf_to_stop_is_killed_at_its_lease_end_while_the_renewal_hangs(
        settings, transactional_db, accept, register_kind, renewals_hang, monkeypatch):
    settings.JOBS = {**settings.JOBS, "ISOLATE_HANDLERS": True}
    # A stop grace far longer than the lease: the kill at the lease's end and the one at the
    # grace's end are tens of seconds apart, however busy the machine.
    monkeypatch.setattr(sandbox, "STOP_GRACE", 30.0)
    register_kind(Kind(name="test.deaf", handler=deaf, isolated=True, diagnostic=True,
                       deadline=timedelta(minutes=1)))
    job = accept("test.deaf", {}, now=system_clock.now())
    w = Worker(name="w1", lease=LEASE, listen=False)
    try:
        assert w.run_one()
        ended = system_clock.now()
    finally:
        renewals_hang.set()  # let the hung call end, so closing the worker does not wait for it
        w.close()
    row = Job.objects.get(pk=job.pk)
    assert row.state == "leased" and w.stats.rejected == 1
    assert ended - row.lease_expires_at < timedelta(seconds=10)  # at the lease's end, not the grace's


def test_prefetched_claims_are_given_up_with_the_running_one_when_their_renewal_hangs(
        transactional_db, accept, register_kind, monkeypatch):
    released = threading.Event()

    def hang(**kwargs):
        released.wait(HANG)
        raise OperationalError("could not receive data from server: Connection timed out")

    monkeypatch.setattr(queue, "renew_many", hang)  # the held claims are renewed with the running one
    seen = {}
    register_kind(Kind(name="test.long", handler=work_until_told(seen), diagnostic=True))
    long_job = accept("test.long", {}, now=system_clock.now())
    held = [accept("diagnostic.noop", {}, now=system_clock.now()) for _ in range(3)]
    w = Worker(name="w1", lease=LEASE, listen=False, prefetch=4)
    w._job_seconds = 0.001  # recent jobs were fast: claim four at once
    try:
        assert w.run_one()
    finally:
        released.set()
        w.close()
    assert Job.objects.get(pk=long_job.pk).state == "leased" and seen["stopped_at"]
    rows = list(Job.objects.filter(pk__in=[j.pk for j in held]).values_list("state", "epoch", "result"))
    assert rows == [("leased", 1, None)] * 3  # claimed with it, never started, left to their leases
    assert w.stats.claimed == 4 and w.stats.rejected == 4 and w.stats.completed == 0
